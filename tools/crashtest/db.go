package main

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"path/filepath"
	"strings"
	"time"

	_ "modernc.org/sqlite" // the driver the server uses
)

// The tool reads the server's database for what the API does not show
// (the task queue) and to see every pipeline, job, fork and merge request
// at once, whoever made it. It only reads: SQLite opened read-only,
// PostgreSQL in read-only transactions.

// dbTimeout bounds each query.
const dbTimeout = 30 * time.Second

// openDB opens the server's database read-only: the SQLite file in
// dataDir, or databaseURL (with its search_path) on PostgreSQL.
func openDB(dataDir, databaseURL string) (*sql.DB, error) {
	if databaseURL == "" {
		dsn := "file:" + filepath.Join(dataDir, "quarry.db") + "?mode=ro&_pragma=busy_timeout(10000)"
		return sql.Open("sqlite", dsn)
	}
	u, err := url.Parse(databaseURL)
	if err != nil {
		return nil, err
	}
	q := u.Query()
	q.Set("default_transaction_read_only", "on")
	u.RawQuery = q.Encode()
	return sql.Open("pgx", u.String())
}

// micros is how the server stores a time: microseconds since the epoch.
func micros(t time.Time) int64 { return t.UnixMicro() }

// unmoved lists the work in the database that has not come to rest at
// now. With grace zero (settling) that is every task due or running,
// every fork still copying and every pipeline or job not final. With a
// grace (the final check) a task counts only when it has been due, or
// its lease expired, for longer than grace: such a task is stuck, as is
// everything else listed.
func unmoved(ctx context.Context, db *sql.DB, now time.Time, grace time.Duration) ([]finding, error) {
	ctx, cancel := context.WithTimeout(ctx, dbTimeout)
	defer cancel()
	cut := micros(now.Add(-grace))
	taskQuery := fmt.Sprintf(`SELECT id, kind, state, attempts, run_at, COALESCE(lease_until, 0) FROM tasks
		WHERE (state = 'pending' AND run_at <= %d) OR (state = 'running' AND lease_until < %d) ORDER BY id`, cut, cut)
	if grace == 0 {
		taskQuery = fmt.Sprintf(`SELECT id, kind, state, attempts, run_at, COALESCE(lease_until, 0) FROM tasks
			WHERE (state = 'pending' AND run_at <= %d) OR state = 'running' ORDER BY id`, cut)
	}
	var out []finding
	err := query(ctx, db, taskQuery, func(rows *sql.Rows) error {
		var id, attempts, runAt, lease int64
		var kind, state string
		if err := rows.Scan(&id, &kind, &state, &attempts, &runAt, &lease); err != nil {
			return err
		}
		since := time.UnixMicro(runAt)
		if state == "running" {
			since = time.UnixMicro(lease)
		}
		what := "due"
		if state == "running" {
			what = "lease ended"
		}
		out = append(out, finding{class: stuck, key: fmt.Sprintf("task %d", id),
			what: fmt.Sprintf("task %d (%s) %s after %d attempts, %s %s ago", id, kind, state, attempts, what, now.Sub(since).Round(time.Second))})
		return nil
	})
	if err != nil {
		return nil, err
	}
	err = query(ctx, db, `SELECT id, path, import_status FROM projects WHERE import_status IN ('scheduled', 'started') ORDER BY id`,
		func(rows *sql.Rows) error {
			var id int64
			var path, status string
			if err := rows.Scan(&id, &path, &status); err != nil {
				return err
			}
			out = append(out, finding{class: stuck, key: fmt.Sprintf("fork %d", id),
				what: fmt.Sprintf("fork %d %q: import_status still %s", id, path, status)})
			return nil
		})
	if err != nil {
		return nil, err
	}
	active := "'" + strings.Join(activeStatuses, "', '") + "'"
	err = query(ctx, db, `SELECT id, project_id, status FROM ci_pipelines WHERE status IN (`+active+`) ORDER BY id`,
		func(rows *sql.Rows) error {
			var id, project int64
			var status string
			if err := rows.Scan(&id, &project, &status); err != nil {
				return err
			}
			out = append(out, finding{class: stuck, key: fmt.Sprintf("pipeline %d", id),
				what: fmt.Sprintf("pipeline %d of project %d: still %s", id, project, status)})
			return nil
		})
	if err != nil {
		return nil, err
	}
	err = query(ctx, db, `SELECT id, pipeline_id, name, status FROM ci_jobs WHERE status IN (`+active+`) ORDER BY id`,
		func(rows *sql.Rows) error {
			var id, pipeline int64
			var name, status string
			if err := rows.Scan(&id, &pipeline, &name, &status); err != nil {
				return err
			}
			out = append(out, finding{class: stuck, key: fmt.Sprintf("job %d", id),
				what: fmt.Sprintf("job %d %q of pipeline %d: still %s", id, name, pipeline, status)})
			return nil
		})
	if err != nil {
		return nil, err
	}
	return out, err
}

// lockedMergeRequests lists the merge requests locked by a merge. A
// merge the kill cut short leaves its lock until the lock's lease ends
// and the server's recovery finishes or undoes the merge: settling waits
// for them, and one still locked after is stuck.
func lockedMergeRequests(ctx context.Context, db *sql.DB) ([]finding, error) {
	ctx, cancel := context.WithTimeout(ctx, dbTimeout)
	defer cancel()
	var out []finding
	err := query(ctx, db, `SELECT target_project_id, iid FROM merge_requests WHERE state = 'locked' ORDER BY id`,
		func(rows *sql.Rows) error {
			var project, iid int64
			if err := rows.Scan(&project, &iid); err != nil {
				return err
			}
			out = append(out, finding{class: stuck, key: fmt.Sprintf("merge_request %d!%d", project, iid),
				what: fmt.Sprintf("merge request !%d of project %d: still locked by a merge the crash cut short", iid, project)})
			return nil
		})
	return out, err
}

// failedTasks describes the tasks that failed for good: not stuck (their
// failure is recorded where it matters, as a fork's import_status), but
// worth a look.
func failedTasks(ctx context.Context, db *sql.DB) ([]string, error) {
	ctx, cancel := context.WithTimeout(ctx, dbTimeout)
	defer cancel()
	var out []string
	err := query(ctx, db, `SELECT id, kind, attempts, COALESCE(last_error, '') FROM tasks WHERE state = 'failed' ORDER BY id`,
		func(rows *sql.Rows) error {
			var id, attempts int64
			var kind, lastErr string
			if err := rows.Scan(&id, &kind, &attempts, &lastErr); err != nil {
				return err
			}
			out = append(out, fmt.Sprintf("task %d (%s) failed after %d attempts: %s", id, kind, attempts, lastErr))
			return nil
		})
	return out, err
}

// sqliteIntegrity runs SQLite's integrity check on the database file in
// dataDir; it returns what the check found wrong (nothing: ok).
func sqliteIntegrity(ctx context.Context, dataDir string) ([]string, error) {
	db, err := openDB(dataDir, "")
	if err != nil {
		return nil, err
	}
	defer db.Close()
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	var out []string
	err = query(ctx, db, "PRAGMA integrity_check", func(rows *sql.Rows) error {
		var s string
		if err := rows.Scan(&s); err != nil {
			return err
		}
		if s != "ok" {
			out = append(out, s)
		}
		return nil
	})
	return out, err
}

// query runs q and calls each for every row.
func query(ctx context.Context, db *sql.DB, q string, each func(*sql.Rows) error) error {
	rows, err := db.QueryContext(ctx, q)
	if err != nil {
		return fmt.Errorf("query %.40q…: %w", q, err)
	}
	defer rows.Close()
	for rows.Next() {
		if err := each(rows); err != nil {
			return err
		}
	}
	return rows.Err()
}

// projectRepo is a project row: where its repository lives.
type projectRepo struct {
	id           int64
	path         string
	storage      string
	disk         string // disk_path: the repository's folder in its storage
	importStatus string
}

// projectRepos lists the projects the database holds (those not being
// deleted), whoever made them and whether or not their creation was
// acknowledged: each must have its repository.
func projectRepos(ctx context.Context, db *sql.DB) ([]projectRepo, error) {
	ctx, cancel := context.WithTimeout(ctx, dbTimeout)
	defer cancel()
	var out []projectRepo
	err := query(ctx, db, `SELECT id, path, repository_storage, disk_path, import_status FROM projects WHERE pending_delete = FALSE ORDER BY id`,
		func(rows *sql.Rows) error {
			var p projectRepo
			if err := rows.Scan(&p.id, &p.path, &p.storage, &p.disk, &p.importStatus); err != nil {
				return err
			}
			out = append(out, p)
			return nil
		})
	return out, err
}
