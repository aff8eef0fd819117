package store

import (
	"bytes"
	"compress/flate"
	"context"
	"database/sql"
	"fmt"
	"io"
	"sync"

	"quarry/internal/model"
)

// Event payloads are stored DEFLATE-compressed; the writers are pooled
// so that compression costs no allocation per event.
var payloadWriters = sync.Pool{New: func() any {
	w, _ := flate.NewWriter(nil, flate.BestSpeed)
	return w
}}

func compressPayload(p []byte) []byte {
	var buf bytes.Buffer
	buf.Grow(len(p)/3 + 64)
	w := payloadWriters.Get().(*flate.Writer)
	w.Reset(&buf)
	_, _ = w.Write(p)
	_ = w.Close()
	payloadWriters.Put(w)
	return buf.Bytes()
}

// maxPayload bounds a stored payload once inflated (the collector
// stores none larger than 1 MiB).
const maxPayload = 16 << 20

func inflatePayload(z []byte) ([]byte, error) {
	r := flate.NewReader(bytes.NewReader(z))
	defer r.Close()
	p, err := io.ReadAll(io.LimitReader(r, maxPayload+1))
	if err == nil && len(p) > maxPayload {
		err = fmt.Errorf("event payload over %d bytes", maxPayload)
	}
	return p, err
}

const errorTrackingSettingColumns = "project_id, enabled, integrated, api_url, project_name, created_at, updated_at"

// ErrorTrackingSetting is a project's settings row, model.ErrNotFound
// before any.
func (tx *Tx) ErrorTrackingSetting(ctx context.Context, projectID int64) (model.ErrorTrackingSetting, error) {
	var s model.ErrorTrackingSetting
	err := tx.row(ctx, []any{&s.ProjectID, &s.Enabled, &s.Integrated, &s.APIURL, &s.ProjectName, tsScan{&s.CreatedAt}, tsScan{&s.UpdatedAt}},
		"SELECT "+errorTrackingSettingColumns+" FROM error_tracking_settings WHERE project_id = ?", projectID)
	return s, err
}

// PutErrorTrackingSetting creates the project's settings row or sets its
// flags, and returns it as stored.
func (tx *Tx) PutErrorTrackingSetting(ctx context.Context, projectID int64, enabled, integrated bool) (model.ErrorTrackingSetting, error) {
	now := micros(tx.Now())
	if _, err := tx.exec(ctx, `INSERT INTO error_tracking_settings (project_id, enabled, integrated, created_at, updated_at)
		VALUES (?, ?, ?, ?, ?) ON CONFLICT (project_id) DO UPDATE SET enabled = excluded.enabled,
		integrated = excluded.integrated, updated_at = excluded.updated_at`, projectID, enabled, integrated, now, now); err != nil {
		return model.ErrorTrackingSetting{}, err
	}
	return tx.ErrorTrackingSetting(ctx, projectID)
}

// UpdateErrorTrackingSetting sets enabled (and integrated when given) on
// an existing row; model.ErrNotFound when the project has none.
func (tx *Tx) UpdateErrorTrackingSetting(ctx context.Context, projectID int64, enabled bool, integrated *bool) (model.ErrorTrackingSetting, error) {
	n, err := tx.execN(ctx, `UPDATE error_tracking_settings SET enabled = ?, integrated = COALESCE(?, integrated), updated_at = ?
		WHERE project_id = ?`, enabled, integrated, micros(tx.Now()), projectID)
	if err == nil && n == 0 {
		err = model.ErrNotFound
	}
	if err != nil {
		return model.ErrorTrackingSetting{}, err
	}
	return tx.ErrorTrackingSetting(ctx, projectID)
}

const clientKeyColumns = "id, project_id, active, public_key, created_at"

func scanClientKey(r *sql.Rows) (model.ErrorTrackingClientKey, error) {
	var k model.ErrorTrackingClientKey
	err := r.Scan(&k.ID, &k.ProjectID, &k.Active, &k.PublicKey, tsScan{&k.CreatedAt})
	return k, err
}

// CreateClientKey inserts an active key with the given public key.
func (tx *Tx) CreateClientKey(ctx context.Context, projectID int64, publicKey string) (model.ErrorTrackingClientKey, error) {
	now := tx.Now()
	k := model.ErrorTrackingClientKey{ProjectID: projectID, Active: true, PublicKey: publicKey, CreatedAt: now}
	var err error
	k.ID, err = tx.insert(ctx, `INSERT INTO error_tracking_client_keys (project_id, active, public_key, created_at, updated_at)
		VALUES (?, ?, ?, ?, ?)`, projectID, true, publicKey, micros(now), micros(now))
	return k, err
}

// ListClientKeys returns one page of a project's keys, oldest first.
func (tx *Tx) ListClientKeys(ctx context.Context, projectID int64, page model.Page) ([]model.ErrorTrackingClientKey, model.PageInfo, error) {
	var w where
	w.add("project_id = ?", projectID)
	return list(ctx, tx, listSpec[model.ErrorTrackingClientKey]{
		columns: clientKeyColumns, from: "error_tracking_client_keys", idCol: "id", where: w,
		scan:  scanClientKey,
		keyOf: func(k model.ErrorTrackingClientKey) (any, int64) { return k.ID, k.ID },
	}, page)
}

// DeleteClientKey removes a project's key and returns it;
// model.ErrNotFound when the project has no such key.
func (tx *Tx) DeleteClientKey(ctx context.Context, projectID, id int64) (model.ErrorTrackingClientKey, error) {
	var out []model.ErrorTrackingClientKey
	err := tx.each(ctx, "DELETE FROM error_tracking_client_keys WHERE project_id = ? AND id = ? RETURNING "+clientKeyColumns,
		[]any{projectID, id}, func(r *sql.Rows) error {
			k, err := scanClientKey(r)
			out = append(out, k)
			return err
		})
	if err == nil && len(out) == 0 {
		err = model.ErrNotFound
	}
	if err != nil {
		return model.ErrorTrackingClientKey{}, err
	}
	return out[0], nil
}

// CollectorKey is what the collector needs to know of a public key: the
// key, and whether its project takes integrated error tracking now (on,
// and the project not being deleted).
type CollectorKey struct {
	ID        int64
	ProjectID int64
	Enabled   bool
}

// ActiveClientKey finds an active key by its public key with its
// project's settings, in one probe of the unique index;
// model.ErrNotFound when there is none.
func (tx *Tx) ActiveClientKey(ctx context.Context, publicKey string) (CollectorKey, error) {
	var k CollectorKey
	var enabled, integrated sql.NullBool
	var deleting bool
	err := tx.row(ctx, []any{&k.ID, &k.ProjectID, &enabled, &integrated, &deleting}, `SELECT k.id, k.project_id, s.enabled, s.integrated, p.pending_delete
		FROM error_tracking_client_keys k JOIN projects p ON p.id = k.project_id
		LEFT JOIN error_tracking_settings s ON s.project_id = k.project_id
		WHERE k.public_key = ? AND k.active = ?`, publicKey, true)
	k.Enabled = enabled.Bool && integrated.Bool && !deleting
	return k, err
}

// ErrorReport is one event as the collector groups and keeps it.
type ErrorReport struct {
	ProjectID   int64
	Name        string
	Description string
	Actor       string
	Platform    string
	Environment *string
	Level       *string
	OccurredAt  int64 // microseconds
	Payload     []byte
	packed      []byte
}

// Pack compresses the payload ahead of ReportError, so that the work is
// done outside the write transaction.
func (r *ErrorReport) Pack() { r.packed = compressPayload(r.Payload) }

// ReportError adds one event: the error of its group is created or has
// its count incremented, its description replaced and its first and last
// seen times widened, in one statement; then the event is inserted, its
// payload compressed. It
// returns the error's id and the event's.
func (tx *Tx) ReportError(ctx context.Context, r ErrorReport) (errorID, eventID int64, err error) {
	if r.packed == nil {
		r.Pack()
	}
	now := micros(tx.Now())
	err = tx.row(ctx, []any{&errorID}, `INSERT INTO error_tracking_errors (project_id, name, description, actor, platform, status,
		events_count, first_seen_at, last_seen_at, created_at, updated_at) VALUES (?, ?, ?, ?, ?, 'unresolved', 1, ?, ?, ?, ?)
		ON CONFLICT (project_id, name, actor, platform) DO UPDATE SET description = excluded.description,
		events_count = error_tracking_errors.events_count + 1,
		first_seen_at = CASE WHEN excluded.first_seen_at < error_tracking_errors.first_seen_at THEN excluded.first_seen_at ELSE error_tracking_errors.first_seen_at END,
		last_seen_at = CASE WHEN excluded.last_seen_at > error_tracking_errors.last_seen_at THEN excluded.last_seen_at ELSE error_tracking_errors.last_seen_at END,
		updated_at = excluded.updated_at
		RETURNING id`, r.ProjectID, r.Name, r.Description, r.Actor, r.Platform, r.OccurredAt, r.OccurredAt, now, now)
	if err != nil {
		return 0, 0, err
	}
	eventID, err = tx.insert(ctx, `INSERT INTO error_tracking_error_events (error_id, description, environment, level, occurred_at, payload, created_at)
		VALUES (?, ?, ?, ?, ?, ?, ?)`, errorID, r.Description, r.Environment, r.Level, r.OccurredAt, r.packed, now)
	return errorID, eventID, err
}

const trackedErrorColumns = "e.id, e.project_id, e.name, e.description, e.actor, e.platform, e.status, e.events_count, e.first_seen_at, e.last_seen_at, e.created_at, e.updated_at"

func scanTrackedError(r *sql.Rows) (model.TrackedError, error) {
	var e model.TrackedError
	err := r.Scan(&e.ID, &e.ProjectID, &e.Name, &e.Description, &e.Actor, &e.Platform, &e.Status, &e.EventsCount,
		tsScan{&e.FirstSeenAt}, tsScan{&e.LastSeenAt}, tsScan{&e.CreatedAt}, tsScan{&e.UpdatedAt})
	return e, err
}

// ErrorFilter picks and orders a project's errors. Sort is "" (newest
// first by id), "last_seen", "first_seen" or "frequency" (each
// descending, as GitLab's sort_by_attribute).
type ErrorFilter struct {
	ProjectID int64
	Status    model.ErrorStatus
	Query     string
	Sort      string
}

// ListErrors returns one page of a project's errors.
func (tx *Tx) ListErrors(ctx context.Context, f ErrorFilter, page model.Page) ([]model.TrackedError, model.PageInfo, error) {
	var w where
	w.add("e.project_id = ?", f.ProjectID)
	if f.Status != "" {
		w.add("e.status = ?", string(f.Status))
	}
	if f.Query != "" {
		p := likePattern(f.Query)
		w.add("("+tx.ilike("e.name")+" OR "+tx.ilike("e.description")+")", p, p)
	}
	o := order{column: "e.id", desc: true}
	key := func(e model.TrackedError) any { return e.ID }
	switch f.Sort {
	case "last_seen":
		o.column, key = "e.last_seen_at", func(e model.TrackedError) any { return micros(e.LastSeenAt) }
	case "first_seen":
		o.column, key = "e.first_seen_at", func(e model.TrackedError) any { return micros(e.FirstSeenAt) }
	case "frequency":
		o.column, key = "e.events_count", func(e model.TrackedError) any { return e.EventsCount }
	}
	return list(ctx, tx, listSpec[model.TrackedError]{
		columns: trackedErrorColumns, from: "error_tracking_errors e", idCol: "e.id", where: w, order: o,
		scan:  scanTrackedError,
		keyOf: func(e model.TrackedError) (any, int64) { return key(e), e.ID },
	}, page)
}

// TrackedError returns a project's error; model.ErrNotFound when the
// project has no such error.
func (tx *Tx) TrackedError(ctx context.Context, projectID, id int64) (model.TrackedError, error) {
	var out []model.TrackedError
	err := tx.each(ctx, "SELECT "+trackedErrorColumns+" FROM error_tracking_errors e WHERE e.project_id = ? AND e.id = ?",
		[]any{projectID, id}, func(r *sql.Rows) error {
			e, err := scanTrackedError(r)
			out = append(out, e)
			return err
		})
	if err == nil && len(out) == 0 {
		err = model.ErrNotFound
	}
	if err != nil {
		return model.TrackedError{}, err
	}
	return out[0], nil
}

// SetErrorStatus moves an error from one status to another if it still
// has the first; false when another writer moved it first.
func (tx *Tx) SetErrorStatus(ctx context.Context, id int64, from, to model.ErrorStatus) (bool, error) {
	n, err := tx.execN(ctx, "UPDATE error_tracking_errors SET status = ?, updated_at = ? WHERE id = ? AND status = ?",
		string(to), micros(tx.Now()), id, string(from))
	return n == 1, err
}

// ListErrorEvents returns one page of an error's events, newest first.
func (tx *Tx) ListErrorEvents(ctx context.Context, errorID int64, page model.Page) ([]model.TrackedErrorEvent, model.PageInfo, error) {
	var w where
	w.add("v.error_id = ?", errorID)
	return list(ctx, tx, listSpec[model.TrackedErrorEvent]{
		columns: "v.id, v.error_id, v.description, v.environment, v.level, v.occurred_at, v.payload, v.created_at",
		from:    "error_tracking_error_events v", idCol: "v.id", where: w, order: order{column: "v.id", desc: true},
		scan: func(r *sql.Rows) (model.TrackedErrorEvent, error) {
			var v model.TrackedErrorEvent
			var payload []byte
			err := r.Scan(&v.ID, &v.ErrorID, &v.Description, &v.Environment, &v.Level, tsScan{&v.OccurredAt}, &payload, tsScan{&v.CreatedAt})
			if err == nil {
				v.Payload, err = inflatePayload(payload)
			}
			return v, err
		},
		keyOf: func(v model.TrackedErrorEvent) (any, int64) { return v.ID, v.ID },
	}, page)
}
