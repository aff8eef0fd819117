package store

import (
	"context"
	"time"
)

// CountRepositoryWrite adds one to the writes counted for repository (GitLab's
// pushes_since_gc) in one statement, so racing writers each count, and
// returns the new count.
func (tx *Tx) CountRepositoryWrite(ctx context.Context, repository string) (int64, error) {
	var n int64
	err := tx.row(ctx, []any{&n}, `INSERT INTO repository_housekeeping (repository, writes) VALUES (?, 1)
		ON CONFLICT (repository) DO UPDATE SET writes = repository_housekeeping.writes + 1
		RETURNING writes`, repository)
	return n, err
}

// ResetRepositoryWrites sets repository's write count back to zero (after
// the gc period was reached).
func (tx *Tx) ResetRepositoryWrites(ctx context.Context, repository string) error {
	_, err := tx.exec(ctx, "UPDATE repository_housekeeping SET writes = 0 WHERE repository = ?", repository)
	return err
}

// TakeHousekeepingLease takes repository's housekeeping lease until the
// given time if nobody holds it (a free lease, or one that ran out) and
// reports whether it did: a compare-and-set, so of racing takers one wins.
func (tx *Tx) TakeHousekeepingLease(ctx context.Context, repository string, until time.Time) (bool, error) {
	now := micros(tx.Now())
	if _, err := tx.exec(ctx, `INSERT INTO repository_housekeeping (repository) VALUES (?)
		ON CONFLICT (repository) DO NOTHING`, repository); err != nil {
		return false, err
	}
	n, err := tx.execN(ctx, `UPDATE repository_housekeeping SET lease_until = ?
		WHERE repository = ? AND lease_until <= ?`, micros(until), repository, now)
	return n == 1, err
}

// EndHousekeeping gives back repository's housekeeping lease and, when ran,
// records the time of the run.
func (tx *Tx) EndHousekeeping(ctx context.Context, repository string, ran bool) error {
	if ran {
		_, err := tx.exec(ctx, "UPDATE repository_housekeeping SET lease_until = 0, last_run_at = ? WHERE repository = ?",
			micros(tx.Now()), repository)
		return err
	}
	_, err := tx.exec(ctx, "UPDATE repository_housekeeping SET lease_until = 0 WHERE repository = ?", repository)
	return err
}

// ForgetRepositoryHousekeeping removes repository's row (the repository is
// gone).
func (tx *Tx) ForgetRepositoryHousekeeping(ctx context.Context, repository string) error {
	_, err := tx.exec(ctx, "DELETE FROM repository_housekeeping WHERE repository = ?", repository)
	return err
}

// RepositoryHousekeeping is what is recorded of a repository's
// housekeeping: its counted writes and its last run (zero: never).
func (tx *Tx) RepositoryHousekeeping(ctx context.Context, repository string) (writes int64, lastRun time.Time, err error) {
	var last int64
	err = tx.row(ctx, []any{&writes, &last}, "SELECT writes, last_run_at FROM repository_housekeeping WHERE repository = ?", repository)
	if err != nil {
		return 0, time.Time{}, err
	}
	if last != 0 {
		lastRun = fromMicros(last)
	}
	return writes, lastRun, nil
}
