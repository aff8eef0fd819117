package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"quarry/internal/model"
)

const groupExportColumns = `e.group_id, e.user_id, e.generation, e.state, e.file_name, e.file_path, e.size, e.error_message,
	e.created_at, e.updated_at, e.expires_at`

func groupExportDest(e *model.GroupExport) []any {
	return []any{&e.GroupID, &e.UserID, &e.Generation, &e.State, nullString{&e.FileName}, nullString{&e.FilePath},
		nullInt64{&e.Size}, nullString{&e.ErrorMessage}, tsScan{&e.CreatedAt}, tsScan{&e.UpdatedAt}, zeroTSScan{&e.ExpiresAt}}
}

// zeroTSScan scans an optional stored timestamp into a time.Time (zero
// for NULL).
type zeroTSScan struct{ t *time.Time }

func (s zeroTSScan) Scan(v any) error {
	if v == nil {
		*s.t = time.Time{}
		return nil
	}
	return tsScan(s).Scan(v)
}

func zeroTimeNull(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return micros(t)
}

// GroupExport returns a group's export (model.ErrNotFound when it has
// none).
func (tx *Tx) GroupExport(ctx context.Context, groupID int64) (model.GroupExport, error) {
	var e model.GroupExport
	err := tx.row(ctx, groupExportDest(&e), "SELECT "+groupExportColumns+" FROM group_exports e WHERE e.group_id = ?", groupID)
	return e, err
}

// ScheduleGroupExport schedules a new export of e.GroupID by e.UserID:
// the group's first, or one replacing a finished or failed one (whose
// archive the caller removes once tx commits: it is returned as
// replaced). ok is false, and nothing is written, while an export of the
// group is scheduled or started. On success e holds the new row.
func (tx *Tx) ScheduleGroupExport(ctx context.Context, e *model.GroupExport) (replaced model.GroupExport, ok bool, err error) {
	now := tx.Now().UTC()
	old, err := tx.GroupExport(ctx, e.GroupID)
	switch {
	case errors.Is(err, model.ErrNotFound):
		_, err = tx.exec(ctx, `INSERT INTO group_exports (group_id, user_id, generation, state, created_at, updated_at)
			VALUES (?, ?, 1, ?, ?, ?)`, e.GroupID, e.UserID, string(model.TransferScheduled), micros(now), micros(now))
		if err != nil {
			return old, false, err
		}
		e.Generation, e.State, e.CreatedAt, e.UpdatedAt = 1, model.TransferScheduled, now, now
		return model.GroupExport{}, true, nil
	case err != nil:
		return old, false, err
	}
	if _, allowed := old.State.On(model.TransferRestart); !allowed {
		return old, false, nil
	}
	n, err := tx.execN(ctx, `UPDATE group_exports SET user_id = ?, generation = generation + 1, state = ?, file_name = NULL,
		file_path = NULL, size = NULL, error_message = NULL, created_at = ?, updated_at = ?, expires_at = NULL
		WHERE group_id = ? AND generation = ?`, e.UserID, string(model.TransferScheduled), micros(now), micros(now), e.GroupID, old.Generation)
	if err != nil || n == 0 {
		return old, false, err
	}
	e.Generation, e.State, e.CreatedAt, e.UpdatedAt = old.Generation+1, model.TransferScheduled, now, now
	return old, true, nil
}

// MoveGroupExport applies event e to x by compare-and-set on its
// generation and state (model.ErrTransition when the table allows
// nothing); moved is false when the row changed meanwhile (a newer
// export, or another worker). A non-empty errorMessage is recorded. On
// success x holds the new state.
func (tx *Tx) MoveGroupExport(ctx context.Context, x *model.GroupExport, e model.TransferEvent, errorMessage string) (moved bool, err error) {
	next, ok := x.State.On(e)
	if !ok {
		return false, fmt.Errorf("group export %d %s in state %s: %w", x.GroupID, e, x.State, model.ErrTransition)
	}
	now := tx.Now().UTC()
	n, err := tx.execN(ctx, `UPDATE group_exports SET state = ?, error_message = COALESCE(?, error_message), updated_at = ?
		WHERE group_id = ? AND generation = ? AND state = ?`, string(next), emptyNull(errorMessage), micros(now),
		x.GroupID, x.Generation, string(x.State))
	if err != nil || n == 0 {
		return false, err
	}
	x.State, x.UpdatedAt = next, now
	if errorMessage != "" {
		x.ErrorMessage = errorMessage
	}
	return true, nil
}

// FinishGroupExport moves a started export to finished with its archive
// (x's FileName, FilePath, Size and ExpiresAt), by compare-and-set like
// MoveGroupExport.
func (tx *Tx) FinishGroupExport(ctx context.Context, x *model.GroupExport) (moved bool, err error) {
	next, ok := x.State.On(model.TransferFinish)
	if !ok {
		return false, fmt.Errorf("group export %d finish in state %s: %w", x.GroupID, x.State, model.ErrTransition)
	}
	now := tx.Now().UTC()
	n, err := tx.execN(ctx, `UPDATE group_exports SET state = ?, file_name = ?, file_path = ?, size = ?, updated_at = ?, expires_at = ?
		WHERE group_id = ? AND generation = ? AND state = ?`, string(next), x.FileName, x.FilePath, x.Size, micros(now),
		zeroTimeNull(x.ExpiresAt), x.GroupID, x.Generation, string(x.State))
	if err != nil || n == 0 {
		return false, err
	}
	x.State, x.UpdatedAt = next, now
	return true, nil
}

// DeleteGroupExport removes a group's export row if it is still of
// generation (0: whatever its generation); ok is false when it is not.
func (tx *Tx) DeleteGroupExport(ctx context.Context, groupID, generation int64) (ok bool, err error) {
	q, args := "DELETE FROM group_exports WHERE group_id = ?", []any{groupID}
	if generation != 0 {
		q, args = q+" AND generation = ?", append(args, generation)
	}
	n, err := tx.execN(ctx, q, args...)
	return n > 0, err
}

const groupImportColumns = `i.id, i.group_id, i.user_id, i.state, i.dir, i.error_message, i.progress, i.version, i.created_at, i.updated_at`

func groupImportDest(i *model.GroupImport) []any {
	return []any{&i.ID, &i.GroupID, &i.UserID, &i.State, &i.Dir, nullString{&i.ErrorMessage}, jsonDoc{&i.Progress},
		&i.Version, tsScan{&i.CreatedAt}, tsScan{&i.UpdatedAt}}
}

// CreateGroupImport stores a scheduled import and sets its id, version
// and times.
func (tx *Tx) CreateGroupImport(ctx context.Context, i *model.GroupImport) error {
	now := tx.Now().UTC()
	i.State, i.Version, i.CreatedAt, i.UpdatedAt = model.TransferScheduled, 1, now, now
	id, err := tx.insert(ctx, `INSERT INTO group_imports (group_id, user_id, state, dir, progress, version, created_at, updated_at)
		VALUES (?, ?, ?, ?, ?, 1, ?, ?)`, i.GroupID, i.UserID, string(i.State), i.Dir, toJSON(i.Progress), micros(now), micros(now))
	i.ID = id
	return err
}

// GroupImport returns one import.
func (tx *Tx) GroupImport(ctx context.Context, id int64) (model.GroupImport, error) {
	var i model.GroupImport
	err := tx.row(ctx, groupImportDest(&i), "SELECT "+groupImportColumns+" FROM group_imports i WHERE i.id = ?", id)
	return i, err
}

// GroupImportOf returns the import that made a group (model.ErrNotFound
// for a group not imported).
func (tx *Tx) GroupImportOf(ctx context.Context, groupID int64) (model.GroupImport, error) {
	var i model.GroupImport
	err := tx.row(ctx, groupImportDest(&i), "SELECT "+groupImportColumns+" FROM group_imports i WHERE i.group_id = ?", groupID)
	return i, err
}

// SaveGroupImport writes i's state (moved by event e; "" keeps it),
// error message and progress if its version is still i.Version (and its
// state i.State): ok is false when another writer came first, and then
// nothing is written. On success i holds the new state and version.
func (tx *Tx) SaveGroupImport(ctx context.Context, i *model.GroupImport, e model.TransferEvent, errorMessage string) (ok bool, err error) {
	next := i.State
	if e != "" {
		var allowed bool
		if next, allowed = i.State.On(e); !allowed {
			return false, fmt.Errorf("group import %d %s in state %s: %w", i.ID, e, i.State, model.ErrTransition)
		}
	}
	now := tx.Now().UTC()
	n, err := tx.execN(ctx, `UPDATE group_imports SET state = ?, error_message = COALESCE(?, error_message), progress = ?,
		version = version + 1, updated_at = ? WHERE id = ? AND version = ? AND state = ?`, string(next), emptyNull(errorMessage),
		toJSON(i.Progress), micros(now), i.ID, i.Version, string(i.State))
	if err != nil || n == 0 {
		return false, err
	}
	i.State, i.Version, i.UpdatedAt = next, i.Version+1, now
	if errorMessage != "" {
		i.ErrorMessage = errorMessage
	}
	return true, nil
}

// GroupImportDirInUse reports whether an import not yet over holds dir.
func (tx *Tx) GroupImportDirInUse(ctx context.Context, dir string) (bool, error) {
	var n int
	err := tx.row(ctx, []any{&n}, "SELECT COUNT(*) FROM group_imports WHERE dir = ? AND state IN (?, ?)", dir,
		string(model.TransferScheduled), string(model.TransferStarted))
	return n > 0, err
}
