package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"quarry/internal/model"
)

// IIDAlerts is the internal id usage of alerts, per project.
const IIDAlerts = "alerts"

const alertIntegrationColumns = `i.id, i.project_id, i.name, i.kind, i.active, i.endpoint_identifier, i.token_digest,
	i.payload_attribute_mappings, i.created_at, i.updated_at`

func alertIntegrationDest(i *model.AlertIntegration, mappings *string) []any {
	return []any{&i.ID, &i.ProjectID, &i.Name, &i.Kind, &i.Active, &i.EndpointIdentifier, &i.TokenDigest,
		nullString{mappings}, tsScan{&i.CreatedAt}, tsScan{&i.UpdatedAt}}
}

func decodeMappings(i *model.AlertIntegration, text string) error {
	i.Mappings = nil
	if text == "" {
		return nil
	}
	if err := json.Unmarshal([]byte(text), &i.Mappings); err != nil {
		return fmt.Errorf("alert integration %d mappings: %w", i.ID, err)
	}
	return nil
}

func encodeMappings(m []model.AlertMapping) (any, error) {
	if len(m) == 0 {
		return nil, nil
	}
	b, err := json.Marshal(m)
	return string(b), err
}

// CreateAlertIntegration stores i and sets its ID and times. A second
// Prometheus integration of a project, or a repeated identifier, is a
// *UniqueError.
func (tx *Tx) CreateAlertIntegration(ctx context.Context, i *model.AlertIntegration) error {
	m, err := encodeMappings(i.Mappings)
	if err != nil {
		return err
	}
	now := tx.Now()
	i.CreatedAt, i.UpdatedAt = now, now
	i.ID, err = tx.insert(ctx, `INSERT INTO alert_integrations (project_id, name, kind, active, endpoint_identifier, token_digest,
		payload_attribute_mappings, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		i.ProjectID, i.Name, i.Kind, i.Active, i.EndpointIdentifier, i.TokenDigest, m, micros(now), micros(now))
	return err
}

// UpdateAlertIntegration saves i's name, active flag, mappings and key
// digest.
func (tx *Tx) UpdateAlertIntegration(ctx context.Context, i *model.AlertIntegration) error {
	m, err := encodeMappings(i.Mappings)
	if err != nil {
		return err
	}
	i.UpdatedAt = tx.Now()
	n, err := tx.execN(ctx, `UPDATE alert_integrations SET name = ?, active = ?, payload_attribute_mappings = ?, token_digest = ?,
		updated_at = ? WHERE id = ? AND project_id = ?`, i.Name, i.Active, m, i.TokenDigest, micros(i.UpdatedAt), i.ID, i.ProjectID)
	if err == nil && n == 0 {
		err = model.ErrNotFound
	}
	return err
}

// DeleteAlertIntegration deletes integration id of a project; its alerts
// stay.
func (tx *Tx) DeleteAlertIntegration(ctx context.Context, projectID, id int64) error {
	n, err := tx.execN(ctx, "DELETE FROM alert_integrations WHERE id = ? AND project_id = ?", id, projectID)
	if err == nil && n == 0 {
		err = model.ErrNotFound
	}
	return err
}

// AlertIntegration returns integration id of a project.
func (tx *Tx) AlertIntegration(ctx context.Context, projectID, id int64) (model.AlertIntegration, error) {
	var i model.AlertIntegration
	var m string
	err := tx.row(ctx, alertIntegrationDest(&i, &m), "SELECT "+alertIntegrationColumns+" FROM alert_integrations i WHERE i.id = ? AND i.project_id = ?", id, projectID)
	if err == nil {
		err = decodeMappings(&i, m)
	}
	return i, err
}

// AlertIntegrations lists a project's integrations by id (at most limit).
func (tx *Tx) AlertIntegrations(ctx context.Context, projectID int64, limit int) ([]model.AlertIntegration, error) {
	var out []model.AlertIntegration
	err := tx.each(ctx, "SELECT "+alertIntegrationColumns+" FROM alert_integrations i WHERE i.project_id = ? ORDER BY i.id LIMIT ?",
		[]any{projectID, limit}, func(r *sql.Rows) error {
			var i model.AlertIntegration
			var m string
			if err := r.Scan(alertIntegrationDest(&i, &m)...); err != nil {
				return err
			}
			if err := decodeMappings(&i, m); err != nil {
				return err
			}
			out = append(out, i)
			return nil
		})
	return out, err
}

// CountAlertIntegrations is how many integrations a project has.
func (tx *Tx) CountAlertIntegrations(ctx context.Context, projectID int64) (int, error) {
	var n int
	err := tx.row(ctx, []any{&n}, "SELECT COUNT(*) FROM alert_integrations WHERE project_id = ?", projectID)
	return n, err
}

// IntakeRoute says which integration of a project an intake URL names.
type IntakeRoute int

// The intake URLs.
const (
	// IntakeIdentifier names an HTTP integration by its identifier.
	IntakeIdentifier IntakeRoute = iota
	// IntakeLegacy is the project's default HTTP integration (its oldest).
	IntakeLegacy
	// IntakePrometheus is the project's Prometheus integration.
	IntakePrometheus
)

// The intake's lookups: the project by its full path, and beside it the
// integration the URL names (NULL columns when there is none). One query.
var intakeQueries = [...]string{
	IntakeIdentifier: "i.kind = 'http' AND i.endpoint_identifier = ?",
	IntakeLegacy:     "i.id = (SELECT MIN(l.id) FROM alert_integrations l WHERE l.project_id = p.id AND l.kind = 'http') AND ? = ''",
	IntakePrometheus: "i.kind = 'prometheus' AND ? = ''",
}

func intakeQuery(route IntakeRoute) string {
	return `SELECT p.id, i.id, i.active, i.kind, i.token_digest, i.payload_attribute_mappings, i.name
		FROM projects p JOIN namespaces n ON n.id = p.namespace_id
		LEFT JOIN alert_integrations i ON i.project_id = p.id AND ` + intakeQueries[route] + `
		WHERE lower(n.full_path) = ? AND lower(p.path) = ?`
}

// IntakeTarget resolves an intake URL: the project's id (model.ErrNotFound
// when there is no such project) and the integration it names (ok false
// when the project has none such).
func (tx *Tx) IntakeTarget(ctx context.Context, projectPath string, route IntakeRoute, identifier string) (projectID int64, in model.AlertIntegration, ok bool, err error) {
	i := strings.LastIndex(projectPath, "/")
	if i <= 0 || route < 0 || int(route) >= len(intakeQueries) {
		return 0, in, false, model.ErrNotFound
	}
	var id sql.NullInt64
	var active sql.NullBool
	var kind, digest, m, name sql.NullString
	err = tx.row(ctx, []any{&projectID, &id, &active, &kind, &digest, &m, &name}, intakeQuery(route),
		identifier, strings.ToLower(projectPath[:i]), strings.ToLower(projectPath[i+1:]))
	if err != nil || !id.Valid {
		return projectID, in, false, err
	}
	in = model.AlertIntegration{ID: id.Int64, ProjectID: projectID, Active: active.Bool, Kind: kind.String,
		TokenDigest: digest.String, Name: name.String}
	return projectID, in, true, decodeMappings(&in, m.String)
}

const alertColumns = `a.id, a.project_id, a.iid, a.integration_id, a.fingerprint, a.status, a.severity, a.title, a.description,
	a.service, a.monitoring_tool, a.hosts, a.environment, a.runbook, a.started_at, a.ended_at, a.events, a.payload,
	a.created_at, a.updated_at, a.version`

type alertScan struct {
	a       *model.Alert
	hosts   string
	payload string
}

func (s *alertScan) dest() []any {
	a := s.a
	return []any{&a.ID, &a.ProjectID, &a.IID, nullInt64{&a.IntegrationID}, nullString{&a.Fingerprint}, &a.Status, &a.Severity,
		&a.Title, nullString{&a.Description}, nullString{&a.Service}, nullString{&a.MonitoringTool}, &s.hosts,
		nullString{&a.Environment}, nullString{&a.Runbook}, tsScan{&a.StartedAt}, nullTSScan{&a.EndedAt}, &a.Events, &s.payload,
		tsScan{&a.CreatedAt}, tsScan{&a.UpdatedAt}, &a.Version}
}

func (s *alertScan) finish() error {
	s.a.Payload = json.RawMessage(s.payload)
	s.a.Hosts = nil
	if s.hosts != "" && s.hosts != "[]" {
		return json.Unmarshal([]byte(s.hosts), &s.a.Hosts)
	}
	return nil
}

func hostsText(h []string) string {
	if len(h) == 0 {
		return "[]"
	}
	b, _ := json.Marshal(h)
	return string(b)
}

// alertInsert stores a new alert; on PostgreSQL and SQLite alike a racing
// open alert of the same fingerprint turns it into one more event of that
// alert.
const alertInsert = `INSERT INTO alerts (project_id, iid, integration_id, fingerprint, status, severity, title, description, service,
	monitoring_tool, hosts, environment, runbook, started_at, ended_at, events, payload, created_at, updated_at)
	VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 1, ?, ?, ?)`

const alertOnConflict = ` ON CONFLICT (project_id, fingerprint) WHERE status <> 2 AND fingerprint IS NOT NULL
	DO UPDATE SET events = alerts.events + 1, updated_at = excluded.updated_at`

// FireAlert records one occurrence of a: one more event of the project's
// open alert with a's fingerprint, or a new alert (triggered, events 1,
// the project's next iid). It sets a's ID, IID, Title and Events from the
// alert recorded; created tells which. Concurrent calls with one
// fingerprint leave one open alert: the partial unique index on open
// alerts settles the race inside the INSERT, and an iid drawn for the
// loser is given back while its transaction still holds the counter.
func (tx *Tx) FireAlert(ctx context.Context, a *model.Alert) (created bool, err error) {
	now := tx.Now()
	if a.Fingerprint != "" {
		err := tx.row(ctx, []any{&a.ID, &a.IID, &a.Title, &a.Events},
			`UPDATE alerts SET events = events + 1, updated_at = ? WHERE project_id = ? AND fingerprint = ? AND status <> 2
			RETURNING id, iid, title, events`, micros(now), a.ProjectID, a.Fingerprint)
		if err == nil {
			return false, nil
		}
		if !errors.Is(err, model.ErrNotFound) {
			return false, err
		}
	}
	iid, err := tx.NextIID(ctx, a.ProjectID, IIDAlerts)
	if err != nil {
		return false, err
	}
	q := alertInsert
	if a.Fingerprint != "" {
		q += alertOnConflict
	}
	a.Status, a.CreatedAt, a.UpdatedAt = model.AlertTriggered, now, now
	err = tx.row(ctx, []any{&a.ID, &a.IID, &a.Title, &a.Events}, q+" RETURNING id, iid, title, events",
		a.ProjectID, iid, zeroNull(a.IntegrationID), emptyNull(a.Fingerprint), a.Status, a.Severity, a.Title,
		emptyNull(a.Description), emptyNull(a.Service), emptyNull(a.MonitoringTool), hostsText(a.Hosts), emptyNull(a.Environment),
		emptyNull(a.Runbook), micros(a.StartedAt), nullMicros(a.EndedAt), string(a.Payload), micros(now), micros(now))
	if err != nil {
		return false, err
	}
	if a.IID != iid {
		_, err = tx.exec(ctx, "UPDATE internal_ids SET last_value = last_value - 1 WHERE project_id = ? AND usage = ? AND last_value = ?",
			a.ProjectID, IIDAlerts, iid)
		return false, err
	}
	return true, nil
}

// ResolveOpenAlert resolves the project's open alert with fingerprint at
// endedAt; ok is false when there is none. It sets ID, IID and Title.
func (tx *Tx) ResolveOpenAlert(ctx context.Context, a *model.Alert, endedAt time.Time) (ok bool, err error) {
	if a.Fingerprint == "" {
		return false, nil
	}
	err = tx.row(ctx, []any{&a.ID, &a.IID, &a.Title, &a.Events},
		`UPDATE alerts SET status = 2, ended_at = ?, updated_at = ?, version = version + 1
		WHERE project_id = ? AND fingerprint = ? AND status <> 2 RETURNING id, iid, title, events`,
		micros(endedAt), micros(tx.Now()), a.ProjectID, a.Fingerprint)
	if errors.Is(err, model.ErrNotFound) {
		return false, nil
	}
	return err == nil, err
}

// AlertByIID returns alert iid of a project with its assignees.
func (tx *Tx) AlertByIID(ctx context.Context, projectID, iid int64) (model.Alert, error) {
	var a model.Alert
	s := alertScan{a: &a}
	if err := tx.row(ctx, s.dest(), "SELECT "+alertColumns+" FROM alerts a WHERE a.project_id = ? AND a.iid = ?", projectID, iid); err != nil {
		return a, err
	}
	if err := s.finish(); err != nil {
		return a, err
	}
	as := []model.Alert{a}
	err := tx.loadAssignees(ctx, as)
	return as[0], err
}

func (tx *Tx) loadAssignees(ctx context.Context, as []model.Alert) error {
	if len(as) == 0 {
		return nil
	}
	idx := make(map[int64]int, len(as))
	ids := make([]int64, len(as))
	for i := range as {
		idx[as[i].ID], ids[i] = i, as[i].ID
	}
	return tx.each(ctx, "SELECT alert_id, user_id FROM alert_assignees WHERE alert_id IN ("+placeholders(len(ids))+") ORDER BY alert_id, user_id",
		int64Args(ids), func(r *sql.Rows) error {
			var a, u int64
			if err := r.Scan(&a, &u); err != nil {
				return err
			}
			as[idx[a]].AssigneeIDs = append(as[idx[a]].AssigneeIDs, u)
			return nil
		})
}

// AlertFilter filters a project's alerts; zero values do not filter.
type AlertFilter struct {
	ProjectID  int64
	Statuses   []model.AlertStatus
	Severities []model.AlertSeverity
	Search     string
	// Sort is one of AlertSorts ("" for created_desc).
	Sort string
}

// AlertSorts are the orders of an alert list: GitLab's sort names and
// the column each sorts by. Severity and status sort by rank, GitLab's
// way: descending puts critical and triggered first.
var AlertSorts = map[string]order{
	"created_asc":   {column: "a.created_at"},
	"created_desc":  {column: "a.created_at", desc: true},
	"updated_asc":   {column: "a.updated_at"},
	"updated_desc":  {column: "a.updated_at", desc: true},
	"started_asc":   {column: "a.started_at"},
	"started_desc":  {column: "a.started_at", desc: true},
	"ended_asc":     {column: "COALESCE(a.ended_at, 0)"},
	"ended_desc":    {column: "COALESCE(a.ended_at, 0)", desc: true},
	"events_asc":    {column: "a.events"},
	"events_desc":   {column: "a.events", desc: true},
	"severity_asc":  {column: "-a.severity"},
	"severity_desc": {column: "-a.severity", desc: true},
	"status_asc":    {column: "-a.status"},
	"status_desc":   {column: "-a.status", desc: true},
}

// ListAlerts lists a project's alerts with their assignees.
func (tx *Tx) ListAlerts(ctx context.Context, f AlertFilter, page model.Page) ([]model.Alert, model.PageInfo, error) {
	o, ok := AlertSorts[f.Sort]
	if !ok {
		o = AlertSorts["created_desc"]
	}
	var w where
	w.add("a.project_id = ?", f.ProjectID)
	if len(f.Statuses) > 0 {
		args := make([]any, len(f.Statuses))
		for i, s := range f.Statuses {
			args[i] = int(s)
		}
		w.add("a.status IN ("+placeholders(len(args))+")", args...)
	}
	if len(f.Severities) > 0 {
		args := make([]any, len(f.Severities))
		for i, s := range f.Severities {
			args[i] = int(s)
		}
		w.add("a.severity IN ("+placeholders(len(args))+")", args...)
	}
	if f.Search != "" {
		p := likePattern(f.Search)
		w.add("("+tx.ilike("a.title")+" OR "+tx.ilike("a.description")+" OR "+tx.ilike("a.service")+" OR "+tx.ilike("a.monitoring_tool")+" OR "+tx.ilike("a.hosts")+")",
			p, p, p, p, p)
	}
	keys := map[int64]any{}
	as, info, err := list(ctx, tx, listSpec[model.Alert]{
		columns: alertColumns + ", " + o.column, from: "alerts a", idCol: "a.id", where: w, order: o,
		scan: func(r *sql.Rows) (model.Alert, error) {
			var a model.Alert
			var key int64
			s := alertScan{a: &a}
			if err := r.Scan(append(s.dest(), &key)...); err != nil {
				return a, err
			}
			keys[a.ID] = key
			return a, s.finish()
		},
		keyOf: func(a model.Alert) (any, int64) { return keys[a.ID], a.ID },
	}, page)
	if err != nil {
		return nil, info, err
	}
	return as, info, tx.loadAssignees(ctx, as)
}

// SetAlertStatus moves alert id from one state to another (compare and
// set on the state); ok is false when the alert is no longer in from. A
// resolved alert gets endedAt unless it has an end already; leaving
// resolved clears it. Reopening an alert whose fingerprint has another
// open alert is a *UniqueError.
func (tx *Tx) SetAlertStatus(ctx context.Context, id int64, from, to model.AlertStatus, endedAt time.Time) (bool, error) {
	q := "UPDATE alerts SET status = ?, updated_at = ?, version = version + 1"
	args := []any{int(to), micros(tx.Now())}
	switch {
	case to == model.AlertResolved:
		q += ", ended_at = COALESCE(ended_at, ?)"
		args = append(args, micros(endedAt))
	case from == model.AlertResolved:
		q += ", ended_at = NULL"
	}
	n, err := tx.execN(ctx, q+" WHERE id = ? AND status = ?", append(args, id, int(from))...)
	return n == 1, err
}

// SetAlertAssignees replaces alert id's assignees.
func (tx *Tx) SetAlertAssignees(ctx context.Context, id int64, userIDs []int64) error {
	if _, err := tx.exec(ctx, "DELETE FROM alert_assignees WHERE alert_id = ?", id); err != nil {
		return err
	}
	for _, u := range userIDs {
		if _, err := tx.exec(ctx, "INSERT INTO alert_assignees (alert_id, user_id) VALUES (?, ?)", id, u); err != nil {
			return err
		}
	}
	_, err := tx.exec(ctx, "UPDATE alerts SET updated_at = ?, version = version + 1 WHERE id = ?", micros(tx.Now()), id)
	return err
}

const metricImageColumns = "id, alert_id, filename, file_path, url, url_text, created_at"

func metricImageDest(m *model.AlertMetricImage) []any {
	return []any{&m.ID, &m.AlertID, &m.Filename, &m.FilePath, nullString{&m.URL}, nullString{&m.URLText}, tsScan{&m.CreatedAt}}
}

// CreateAlertMetricImage stores m and sets its ID and time.
func (tx *Tx) CreateAlertMetricImage(ctx context.Context, m *model.AlertMetricImage) error {
	m.CreatedAt = tx.Now()
	var err error
	m.ID, err = tx.insert(ctx, "INSERT INTO alert_metric_images (alert_id, filename, file_path, url, url_text, created_at) VALUES (?, ?, ?, ?, ?, ?)",
		m.AlertID, m.Filename, m.FilePath, emptyNull(m.URL), emptyNull(m.URLText), micros(m.CreatedAt))
	return err
}

// AlertMetricImages lists an alert's images by id (at most limit).
func (tx *Tx) AlertMetricImages(ctx context.Context, alertID int64, limit int) ([]model.AlertMetricImage, error) {
	var out []model.AlertMetricImage
	err := tx.each(ctx, "SELECT "+metricImageColumns+" FROM alert_metric_images WHERE alert_id = ? ORDER BY id LIMIT ?", []any{alertID, limit},
		func(r *sql.Rows) error {
			var m model.AlertMetricImage
			if err := r.Scan(metricImageDest(&m)...); err != nil {
				return err
			}
			out = append(out, m)
			return nil
		})
	return out, err
}

// AlertMetricImage returns image id of an alert.
func (tx *Tx) AlertMetricImage(ctx context.Context, alertID, id int64) (model.AlertMetricImage, error) {
	var m model.AlertMetricImage
	err := tx.row(ctx, metricImageDest(&m), "SELECT "+metricImageColumns+" FROM alert_metric_images WHERE alert_id = ? AND id = ?", alertID, id)
	return m, err
}

// UpdateAlertMetricImage saves m's url and url_text.
func (tx *Tx) UpdateAlertMetricImage(ctx context.Context, m *model.AlertMetricImage) error {
	n, err := tx.execN(ctx, "UPDATE alert_metric_images SET url = ?, url_text = ? WHERE id = ? AND alert_id = ?",
		emptyNull(m.URL), emptyNull(m.URLText), m.ID, m.AlertID)
	if err == nil && n == 0 {
		err = model.ErrNotFound
	}
	return err
}

// DeleteAlertMetricImage deletes image id of an alert.
func (tx *Tx) DeleteAlertMetricImage(ctx context.Context, alertID, id int64) error {
	n, err := tx.execN(ctx, "DELETE FROM alert_metric_images WHERE alert_id = ? AND id = ?", alertID, id)
	if err == nil && n == 0 {
		err = model.ErrNotFound
	}
	return err
}

// CountAlertMetricImages is how many images an alert has.
func (tx *Tx) CountAlertMetricImages(ctx context.Context, alertID int64) (int, error) {
	var n int
	err := tx.row(ctx, []any{&n}, "SELECT COUNT(*) FROM alert_metric_images WHERE alert_id = ?", alertID)
	return n, err
}

// SetAlertMetricImagePath records where image id's file is stored.
func (tx *Tx) SetAlertMetricImagePath(ctx context.Context, id int64, rel string) error {
	_, err := tx.exec(ctx, "UPDATE alert_metric_images SET file_path = ? WHERE id = ?", rel, id)
	return err
}

// ProjectAlertImagePaths lists the files of every metric image of a
// project's alerts (to remove with the project).
func (tx *Tx) ProjectAlertImagePaths(ctx context.Context, projectID int64) ([]string, error) {
	var out []string
	err := tx.each(ctx, `SELECT i.file_path FROM alert_metric_images i JOIN alerts a ON a.id = i.alert_id
		WHERE a.project_id = ? AND i.file_path <> ''`, []any{projectID}, func(r *sql.Rows) error {
		var p string
		err := r.Scan(&p)
		out = append(out, p)
		return err
	})
	return out, err
}
