// Package errortracking serves integrated error tracking: a project's
// settings and client keys (maintainers), the collector Sentry SDKs send
// to (a client key), and the errors and their events (reporters read,
// developers change status).
package errortracking

import (
	"compress/gzip"
	"compress/zlib"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"

	"quarry/internal/api/endpoint"
	"quarry/internal/api/entity"
	"quarry/internal/errortracking"
	"quarry/internal/model"
)

// Handlers answer the error-tracking area.
type Handlers struct {
	svc *errortracking.Service
	r   *entity.Renderer
}

// New returns the area.
func New(s *errortracking.Service, r *entity.Renderer) *Handlers { return &Handlers{svc: s, r: r} }

// MaxCollectorBody bounds a collector request's body as sent (compressed
// or not); the service bounds it again once decompressed.
const MaxCollectorBody = 2 << 20

// Routes are the area's rows. The collector's rows take a client key
// (sentry_key, or X-Sentry-Auth) and stream their body: a Sentry SDK
// appends a slash to the path (Python) or sends chunked bodies without a
// length (Node), gzip-compressed or not.
func (h *Handlers) Routes() []endpoint.Route {
	row, parsed := endpoint.Row, endpoint.Parsed
	token, api := endpoint.Token, endpoint.ScopeAPI
	base := "/projects/{id}/error_tracking"
	collector := "/error_tracking/collector/api/{project_id}/"
	streamed := endpoint.Streamed(MaxCollectorBody)
	key := endpoint.IntegrationKey
	envelope := func(c *endpoint.Call) error { return h.collect(c, errortracking.Envelope) }
	store := func(c *endpoint.Call) error { return h.collect(c, errortracking.Store) }
	return []endpoint.Route{
		row("GET", base+"/settings", token, api, parsed, h.settings),
		row("PATCH", base+"/settings", token, api, parsed, h.patchSettings),
		row("PUT", base+"/settings", token, api, parsed, h.putSettings),
		row("GET", base+"/client_keys", token, api, parsed, h.keys),
		row("POST", base+"/client_keys", token, api, parsed, h.createKey),
		row("DELETE", base+"/client_keys/{key_id}", token, api, parsed, h.deleteKey),
		row("GET", base+"/errors", token, api, parsed, h.listErrors),
		row("GET", base+"/errors/{error_id}", token, api, parsed, h.error),
		row("PUT", base+"/errors/{error_id}", token, api, parsed, h.setStatus),
		row("GET", base+"/errors/{error_id}/events", token, api, parsed, h.events),
		row("POST", collector+"envelope", key, api, streamed, envelope),
		row("POST", collector+"envelope/{$}", key, api, streamed, envelope),
		row("POST", collector+"store", key, api, streamed, store),
		row("POST", collector+"store/{$}", key, api, streamed, store),
	}
}

// Setting is GitLab's ErrorTracking::ProjectSetting entity (with the
// spec's tracker_external_url beside sentry_external_url).
type Setting struct {
	Active             bool    `json:"active"`
	ProjectName        *string `json:"project_name"`
	SentryExternalURL  *string `json:"sentry_external_url"`
	TrackerExternalURL *string `json:"tracker_external_url"`
	APIURL             *string `json:"api_url"`
	Integrated         bool    `json:"integrated"`
}

func setting(s model.ErrorTrackingSetting) Setting {
	return Setting{Active: s.Enabled, ProjectName: s.ProjectName, APIURL: s.APIURL, Integrated: s.Integrated}
}

// ClientKey is GitLab's ErrorTracking::ClientKey entity (with the spec's
// tracker_dsn beside sentry_dsn).
type ClientKey struct {
	ID         int64  `json:"id"`
	Active     bool   `json:"active"`
	PublicKey  string `json:"public_key"`
	SentryDSN  string `json:"sentry_dsn"`
	TrackerDSN string `json:"tracker_dsn"`
}

func (h *Handlers) key(k model.ErrorTrackingClientKey) ClientKey {
	dsn := h.svc.DSN(k)
	return ClientKey{ID: k.ID, Active: k.Active, PublicKey: k.PublicKey, SentryDSN: dsn, TrackerDSN: dsn}
}

// Error is a tracked error, shaped as GitLab's Sentry-compatible error
// (Gitlab::ErrorTracking::Error).
type Error struct {
	ID          int64       `json:"id"`
	ProjectID   int64       `json:"project_id"`
	Title       string      `json:"title"`
	Type        string      `json:"type"`
	Name        string      `json:"name"`
	Message     string      `json:"message"`
	Culprit     string      `json:"culprit"`
	Platform    string      `json:"platform"`
	Status      string      `json:"status"`
	Count       int64       `json:"count"`
	UserCount   int64       `json:"user_count"`
	FirstSeen   entity.Time `json:"first_seen"`
	LastSeen    entity.Time `json:"last_seen"`
	ExternalURL string      `json:"external_url"`
	Integrated  bool        `json:"integrated"`
}

func (h *Handlers) errorEntity(e model.TrackedError, webURL string) Error {
	return Error{ID: e.ID, ProjectID: e.ProjectID, Title: e.Title(), Type: "error", Name: e.Name, Message: e.Description,
		Culprit: e.Actor, Platform: e.Platform, Status: string(e.Status), Count: e.EventsCount,
		FirstSeen: entity.Time(e.FirstSeenAt), LastSeen: entity.Time(e.LastSeenAt),
		ExternalURL: webURL + "/-/error_tracking/" + itoa(e.ID) + "/details", Integrated: true}
}

// Event is one event of an error, its payload as the SDK sent it.
type Event struct {
	ID          int64           `json:"id"`
	ErrorID     int64           `json:"error_id"`
	Description string          `json:"description"`
	Environment *string         `json:"environment"`
	Level       *string         `json:"level"`
	OccurredAt  entity.Time     `json:"occurred_at"`
	Payload     json.RawMessage `json:"payload"`
}

func (h *Handlers) settings(c *endpoint.Call) error {
	s, err := h.svc.Settings(c.Ctx(), c.Actor, c.Path("id"))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, setting(s))
}

func (h *Handlers) patchSettings(c *endpoint.Call) error {
	c.P.Require("active")
	active, _ := c.P.Bool("active")
	integrated := c.P.BoolPtr("integrated")
	if err := c.P.Err(); err != nil {
		return err
	}
	s, err := h.svc.PatchSettings(c.Ctx(), c.Actor, c.Path("id"), active, integrated)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, setting(s))
}

func (h *Handlers) putSettings(c *endpoint.Call) error {
	c.P.Require("active", "integrated")
	active, _ := c.P.Bool("active")
	integrated, _ := c.P.Bool("integrated")
	if err := c.P.Err(); err != nil {
		return err
	}
	s, err := h.svc.PutSettings(c.Ctx(), c.Actor, c.Path("id"), active, integrated)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, setting(s))
}

func (h *Handlers) keys(c *endpoint.Call) error {
	pg, err := c.Page()
	if err != nil {
		return err
	}
	list, info, err := h.svc.Keys(c.Ctx(), c.Actor, c.Path("id"), pg)
	if err != nil {
		return err
	}
	out := make([]ClientKey, len(list))
	for i := range list {
		out[i] = h.key(list[i])
	}
	return c.List(pg, info, out)
}

func (h *Handlers) createKey(c *endpoint.Call) error {
	k, err := h.svc.CreateKey(c.Ctx(), c.Actor, c.Path("id"))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, h.key(k))
}

func (h *Handlers) deleteKey(c *endpoint.Call) error {
	id, err := c.PathID("key_id")
	if err != nil {
		return err
	}
	k, err := h.svc.DeleteKey(c.Ctx(), c.Actor, c.Path("id"), id)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, h.key(k))
}

func (h *Handlers) listErrors(c *endpoint.Call) error {
	var q errortracking.ErrorQuery
	if v, ok := c.P.Enum("status", "unresolved", "resolved", "ignored"); ok {
		q.Status = model.ErrorStatus(v)
	}
	q.Query, _ = c.P.String("query")
	q.Sort, _ = c.P.Enum("sort", "last_seen", "first_seen", "frequency")
	pg, err := c.Page()
	if err != nil {
		return err
	}
	list, info, p, err := h.svc.Errors(c.Ctx(), c.Actor, c.Path("id"), q, pg)
	if err != nil {
		return err
	}
	out := make([]Error, len(list))
	for i := range list {
		out[i] = h.errorEntity(list[i], h.r.ProjectWebURL(&p))
	}
	return c.List(pg, info, out)
}

func (h *Handlers) error(c *endpoint.Call) error {
	id, err := c.PathID("error_id")
	if err != nil {
		return err
	}
	e, p, err := h.svc.Error(c.Ctx(), c.Actor, c.Path("id"), id)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, h.errorEntity(e, h.r.ProjectWebURL(&p)))
}

func (h *Handlers) setStatus(c *endpoint.Call) error {
	id, err := c.PathID("error_id")
	if err != nil {
		return err
	}
	c.P.Require("status")
	status, _ := c.P.Enum("status", "unresolved", "resolved", "ignored")
	if err := c.P.Err(); err != nil {
		return err
	}
	e, p, err := h.svc.SetStatus(c.Ctx(), c.Actor, c.Path("id"), id, model.ErrorStatus(status))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, h.errorEntity(e, h.r.ProjectWebURL(&p)))
}

func (h *Handlers) events(c *endpoint.Call) error {
	id, err := c.PathID("error_id")
	if err != nil {
		return err
	}
	pg, err := c.Page()
	if err != nil {
		return err
	}
	list, info, err := h.svc.Events(c.Ctx(), c.Actor, c.Path("id"), id, pg)
	if err != nil {
		return err
	}
	out := make([]Event, len(list))
	for i, v := range list {
		out[i] = Event{ID: v.ID, ErrorID: v.ErrorID, Description: v.Description, Environment: v.Environment, Level: v.Level,
			OccurredAt: entity.Time(v.OccurredAt), Payload: json.RawMessage(v.Payload)}
	}
	return c.List(pg, info, out)
}

// collect hands the body, decompressed as its Content-Encoding says, to
// the service, and answers 200 with an empty body: the collector tells a
// caller with a public key nothing.
func (h *Handlers) collect(c *endpoint.Call, f errortracking.Format) error {
	body := &classified{r: c.Body()}
	switch strings.ToLower(strings.TrimSpace(c.R.Header.Get("Content-Encoding"))) {
	case "gzip", "x-gzip":
		body.decoded = func(r io.Reader) (io.Reader, error) { return gzip.NewReader(r) }
	case "deflate":
		body.decoded = func(r io.Reader) (io.Reader, error) { return zlib.NewReader(r) }
	}
	if err := h.svc.Collect(c.Ctx(), c.Actor, c.Path("project_id"), f, body); err != nil {
		return err
	}
	c.W.WriteHeader(http.StatusOK)
	return nil
}

// classified reads a collector body, decoded on first read if it is
// compressed, with its errors classified: past the row's limit 413, a
// compressed stream that is corrupt GitLab's 400.
type classified struct {
	r       io.Reader
	decoded func(io.Reader) (io.Reader, error)
	started bool
}

var errBadBody = model.BadRequest("Failed to parse sentry request")

func (b *classified) Read(p []byte) (int, error) {
	if !b.started {
		b.started = true
		if b.decoded != nil {
			d, err := b.decoded(b.r)
			if err != nil {
				return 0, b.classify(err)
			}
			b.r = d
		}
	}
	n, err := b.r.Read(p)
	if err != nil && err != io.EOF {
		err = b.classify(err)
	}
	return n, err
}

func (b *classified) classify(err error) error {
	var mb *http.MaxBytesError
	var me *model.Error
	switch {
	case errors.As(err, &mb):
		return model.TooLarge()
	case errors.As(err, &me):
		return err
	case b.decoded != nil:
		return errBadBody
	}
	return err
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
