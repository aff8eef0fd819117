package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"quarry/internal/model"
)

// containerTable says where the containers of one kind live: their table
// (with its repository_storage and repository_read_only columns) and the
// condition that picks that kind's rows in it.
type containerTable struct {
	table string
	cond  string // " AND …", or ""
}

// containerTables are the kinds of repository containers: each table has
// repository_storage and repository_read_only.
var containerTables = map[model.ContainerKind]containerTable{
	model.ContainerProject: {table: "projects"},
	model.ContainerGroup:   {table: "namespaces", cond: " AND kind = 'group'"},
	model.ContainerSnippet: {table: "snippets"},
}

func tableOf(kind model.ContainerKind) (containerTable, error) {
	t, ok := containerTables[kind]
	if !ok {
		return t, fmt.Errorf("no repository container kind %q", kind)
	}
	return t, nil
}

// ContainerStorage returns the storage of a container's repositories and
// whether a storage move holds them read-only.
func (tx *Tx) ContainerStorage(ctx context.Context, kind model.ContainerKind, id int64) (storage string, readOnly bool, err error) {
	t, err := tableOf(kind)
	if err != nil {
		return "", false, err
	}
	err = tx.row(ctx, []any{&storage, &readOnly}, "SELECT repository_storage, repository_read_only FROM "+t.table+" WHERE id = ?"+t.cond, id)
	return storage, readOnly, err
}

// SetContainerReadOnly sets a container's read-only flag to readOnly if
// it is not so already (compare-and-set): changed is false when it was,
// or when there is no such container.
func (tx *Tx) SetContainerReadOnly(ctx context.Context, kind model.ContainerKind, id int64, readOnly bool) (changed bool, err error) {
	t, err := tableOf(kind)
	if err != nil {
		return false, err
	}
	n, err := tx.execN(ctx, "UPDATE "+t.table+" SET repository_read_only = ? WHERE id = ? AND repository_read_only = ?"+t.cond,
		readOnly, id, !readOnly)
	return n == 1, err
}

// SwitchContainerStorage puts a read-only container on storage to,
// writable again, if it is still on from (compare-and-set): false when it
// is not there or not read-only (someone else moved it).
func (tx *Tx) SwitchContainerStorage(ctx context.Context, kind model.ContainerKind, id int64, from, to string) (bool, error) {
	t, err := tableOf(kind)
	if err != nil {
		return false, err
	}
	n, err := tx.execN(ctx, "UPDATE "+t.table+` SET repository_storage = ?, repository_read_only = FALSE
		WHERE id = ? AND repository_storage = ? AND repository_read_only`+t.cond, to, id, from)
	return n == 1, err
}

// ContainersOnStorage returns up to limit ids of the containers of kind
// on storage after afterID, in order (a keyset batch of a bulk move).
func (tx *Tx) ContainersOnStorage(ctx context.Context, kind model.ContainerKind, storage string, afterID int64, limit int) ([]int64, error) {
	t, err := tableOf(kind)
	if err != nil {
		return nil, err
	}
	cond := t.cond
	if kind == model.ContainerProject {
		cond += " AND NOT pending_delete"
	}
	var ids []int64
	err = tx.each(ctx, "SELECT id FROM "+t.table+" WHERE repository_storage = ? AND id > ?"+cond+" ORDER BY id LIMIT ?",
		[]any{storage, afterID, limit}, func(r *sql.Rows) error {
			var id int64
			err := r.Scan(&id)
			ids = append(ids, id)
			return err
		})
	return ids, err
}

const storageMoveColumns = `m.id, m.container_type, m.container_id, m.state, m.source_storage_name, m.destination_storage_name,
	m.error_message, m.created_at, m.updated_at`

func storageMoveDest(m *model.RepositoryStorageMove) []any {
	return []any{&m.ID, &m.Kind, &m.ContainerID, &m.State, &m.SourceStorageName, &m.DestinationStorageName,
		nullString{&m.ErrorMessage}, tsScan{&m.CreatedAt}, tsScan{&m.UpdatedAt}}
}

// CreateStorageMove inserts a move in its state (initial, or scheduled
// when the caller schedules it in the same transaction) and sets its id
// and times.
func (tx *Tx) CreateStorageMove(ctx context.Context, m *model.RepositoryStorageMove) error {
	if _, err := tableOf(m.Kind); err != nil {
		return err
	}
	now := tx.Now().UTC()
	id, err := tx.insert(ctx, `INSERT INTO repository_storage_moves (container_type, container_id, state, source_storage_name,
		destination_storage_name, error_message, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
		string(m.Kind), m.ContainerID, int(m.State), m.SourceStorageName, m.DestinationStorageName, emptyNull(m.ErrorMessage),
		micros(now), micros(now))
	if err != nil {
		return err
	}
	m.ID, m.CreatedAt, m.UpdatedAt = id, now, now
	return nil
}

// StorageMove returns one move of any kind.
func (tx *Tx) StorageMove(ctx context.Context, id int64) (model.RepositoryStorageMove, error) {
	var m model.RepositoryStorageMove
	err := tx.row(ctx, storageMoveDest(&m), "SELECT "+storageMoveColumns+" FROM repository_storage_moves m WHERE m.id = ?", id)
	return m, err
}

// MoveStorageMove applies event e to m by compare-and-set: the table of
// model.MoveState decides the next state (model.ErrTransition when it
// allows none), and the row changes only if it is still in m's state —
// moved is false when another writer moved it first, and then nothing is
// written. A non-empty errorMessage is recorded with the move. On success
// m holds the new state.
func (tx *Tx) MoveStorageMove(ctx context.Context, m *model.RepositoryStorageMove, e model.MoveEvent, errorMessage string) (moved bool, err error) {
	next, ok := m.State.On(e)
	if !ok {
		return false, fmt.Errorf("storage move %d %s in state %s: %w", m.ID, e, m.State, model.ErrTransition)
	}
	now := tx.Now().UTC()
	n, err := tx.execN(ctx, `UPDATE repository_storage_moves SET state = ?, error_message = COALESCE(?, error_message), updated_at = ?
		WHERE id = ? AND state = ?`, int(next), emptyNull(model.MoveErrorMessage(errorMessage)), micros(now), m.ID, int(m.State))
	if err != nil || n == 0 {
		return false, err
	}
	m.State, m.UpdatedAt = next, now
	if errorMessage != "" {
		m.ErrorMessage = model.MoveErrorMessage(errorMessage)
	}
	return true, nil
}

// ListStorageMoves returns a page of the moves of kind (of one container
// when containerID is not 0), newest first.
func (tx *Tx) ListStorageMoves(ctx context.Context, kind model.ContainerKind, containerID int64, page model.Page) ([]model.RepositoryStorageMove, model.PageInfo, error) {
	var w where
	w.add("m.container_type = ?", string(kind))
	if containerID != 0 {
		w.add("m.container_id = ?", containerID)
	}
	spec := listSpec[model.RepositoryStorageMove]{columns: storageMoveColumns, from: "repository_storage_moves m", idCol: "m.id",
		where: w, order: order{desc: true},
		scan: func(r *sql.Rows) (model.RepositoryStorageMove, error) {
			var m model.RepositoryStorageMove
			err := r.Scan(storageMoveDest(&m)...)
			return m, err
		},
		keyOf: func(m model.RepositoryStorageMove) (any, int64) { return m.ID, m.ID }}
	return list(ctx, tx, spec, page)
}

// CountHoldingStorageMoves counts the moves of kind that hold their
// container (scheduled or started).
func (tx *Tx) CountHoldingStorageMoves(ctx context.Context, kind model.ContainerKind) (int, error) {
	var n int
	err := tx.row(ctx, []any{&n}, "SELECT COUNT(*) FROM repository_storage_moves WHERE container_type = ? AND state IN (?, ?)",
		string(kind), int(model.MoveScheduled), int(model.MoveStarted))
	return n, err
}

// UnfinishedStorageMove returns the newest move of a container that is
// scheduled, started or replicated (its source copies not yet removed);
// ok is false when there is none.
func (tx *Tx) UnfinishedStorageMove(ctx context.Context, kind model.ContainerKind, containerID int64) (m model.RepositoryStorageMove, ok bool, err error) {
	err = tx.row(ctx, storageMoveDest(&m), "SELECT "+storageMoveColumns+` FROM repository_storage_moves m
		WHERE m.container_type = ? AND m.container_id = ? AND m.state IN (?, ?, ?) ORDER BY m.id DESC LIMIT 1`,
		string(kind), containerID, int(model.MoveScheduled), int(model.MoveStarted), int(model.MoveReplicated))
	if err == nil {
		return m, true, nil
	}
	if errors.Is(err, model.ErrNotFound) {
		return m, false, nil
	}
	return m, false, err
}

// deleteContainerMoves removes the moves and write leases of containers
// being deleted (ids from the subquery or list in q's argument).
func (tx *Tx) deleteContainerMoves(ctx context.Context, kind model.ContainerKind, idsCond string, args ...any) error {
	for _, table := range []string{"repository_storage_moves", "repository_write_leases"} {
		if _, err := tx.exec(ctx, "DELETE FROM "+table+" WHERE container_type = '"+string(kind)+"' AND container_id "+idsCond, args...); err != nil {
			return err
		}
	}
	return nil
}

// AcquireWriteLease registers a write in flight to a container's
// repositories, until until, unless the container is read-only
// (model.ErrRepositoryReadOnly) or gone (model.ErrNotFound). It returns
// the lease and the storage the container is on now, where the write
// must go.
//
// The check and the registration are one: on PostgreSQL the container's
// row is locked for share while the lease is added, so a move that makes
// the container read-only (an UPDATE of that row) either commits first —
// and the write is refused — or waits for this transaction, and then
// finds the lease; on SQLite the one writer serializes both.
func (tx *Tx) AcquireWriteLease(ctx context.Context, kind model.ContainerKind, id int64, holder string, until time.Time) (lease int64, storage string, err error) {
	t, err := tableOf(kind)
	if err != nil {
		return 0, "", err
	}
	q := "SELECT repository_storage, repository_read_only FROM " + t.table + " WHERE id = ?" + t.cond
	if tx.dialect == Postgres {
		q += " FOR SHARE"
	}
	var readOnly bool
	if err := tx.row(ctx, []any{&storage, &readOnly}, q, id); err != nil {
		return 0, "", err
	}
	if readOnly {
		return 0, storage, model.ErrRepositoryReadOnly
	}
	lease, err = tx.insert(ctx, "INSERT INTO repository_write_leases (container_type, container_id, holder, expires_at) VALUES (?, ?, ?, ?)",
		string(kind), id, holder, micros(until))
	return lease, storage, err
}

// RenewWriteLease moves a lease's expiry to until; false when the lease
// is gone (released, or removed once expired).
func (tx *Tx) RenewWriteLease(ctx context.Context, lease int64, until time.Time) (bool, error) {
	n, err := tx.execN(ctx, "UPDATE repository_write_leases SET expires_at = ? WHERE id = ?", micros(until), lease)
	return n == 1, err
}

// ReleaseWriteLease ends a write's lease.
func (tx *Tx) ReleaseWriteLease(ctx context.Context, lease int64) error {
	_, err := tx.exec(ctx, "DELETE FROM repository_write_leases WHERE id = ?", lease)
	return err
}

// LiveWriteLeases counts the leases of a container that have not expired
// at now, and removes those that have (their holders died).
func (tx *Tx) LiveWriteLeases(ctx context.Context, kind model.ContainerKind, id int64, now time.Time) (int, error) {
	if _, err := tx.exec(ctx, "DELETE FROM repository_write_leases WHERE container_type = ? AND container_id = ? AND expires_at <= ?",
		string(kind), id, micros(now)); err != nil {
		return 0, err
	}
	var n int
	err := tx.row(ctx, []any{&n}, "SELECT COUNT(*) FROM repository_write_leases WHERE container_type = ? AND container_id = ?",
		string(kind), id)
	return n, err
}
