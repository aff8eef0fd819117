// Package errortracking is GitLab's integrated error tracking: a
// project's settings and client keys, the collector Sentry SDKs send
// events to (grouped into errors), and the errors and events read back.
package errortracking

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strconv"
	"strings"

	"quarry/internal/auth"
	"quarry/internal/model"
	"quarry/internal/store"
)

// Projects resolves projects with the caller's access (the projects
// service).
type Projects interface {
	Resolve(ctx context.Context, a auth.Actor, ref string) (model.Project, model.AccessLevel, error)
}

// Limits bound what the collector reads of one request.
type Limits struct {
	// Body is the most a request body may hold after decompression (the
	// API row bounds it before).
	Body int64
	// Event is the most one event's payload may hold.
	Event int64
}

// DefaultLimits: Sentry's own limits for one event (1 MiB) and a little
// room for an envelope's other items.
var DefaultLimits = Limits{Body: 4 << 20, Event: 1 << 20}

// Service answers every error-tracking question.
type Service struct {
	db       *store.DB
	projects Projects
	// dsnBase is "<scheme>://", dsnHost "@<host>[:port]<root>".
	dsnScheme, dsnHost string
	limits             Limits
}

// New returns the service; externalURL gives the DSNs' address.
func New(db *store.DB, projects Projects, externalURL string, limits Limits) *Service {
	s := &Service{db: db, projects: projects, limits: limits}
	if u, err := url.Parse(strings.TrimRight(externalURL, "/")); err == nil {
		host := u.Host
		if (u.Scheme == "http" && u.Port() == "80") || (u.Scheme == "https" && u.Port() == "443") {
			host = u.Hostname()
			if strings.Contains(host, ":") {
				host = "[" + host + "]"
			}
		}
		s.dsnScheme, s.dsnHost = u.Scheme+"://", "@"+host+u.EscapedPath()
	}
	return s
}

// DSN is a key's Sentry DSN:
// <scheme>://<public_key>@<host>[:port][root]/api/v4/error_tracking/collector/<project_id>.
func (s *Service) DSN(k model.ErrorTrackingClientKey) string {
	return s.dsnScheme + k.PublicKey + s.dsnHost + "/api/v4/error_tracking/collector/" + strconv.FormatInt(k.ProjectID, 10)
}

// open resolves the project (404 when the caller may not see it) and
// checks action on it (403). Every endpoint but the collector wants a
// signed-in caller (GitLab's authenticate!).
func (s *Service) open(ctx context.Context, a auth.Actor, ref string, action auth.Action) (model.Project, error) {
	if !a.SignedIn() {
		return model.Project{}, model.Unauthorized("")
	}
	p, acc, err := s.projects.Resolve(ctx, a, ref)
	if err != nil {
		return p, err
	}
	if !auth.Can(a, action, auth.Resource{Project: &p, Access: acc}) {
		return p, model.Forbidden("")
	}
	return p, nil
}

var errNoSetting = model.NotFound("Error Tracking Setting")

// Settings returns the project's settings; 404 before any.
func (s *Service) Settings(ctx context.Context, a auth.Actor, ref string) (model.ErrorTrackingSetting, error) {
	p, err := s.open(ctx, a, ref, auth.AdminOperations)
	if err != nil {
		return model.ErrorTrackingSetting{}, err
	}
	st, err := s.db.ErrorTrackingSetting(ctx, p.ID)
	return st, model.NotFoundAs(err, "Error Tracking Setting")
}

// PutSettings creates or replaces the project's settings (GitLab's PUT).
func (s *Service) PutSettings(ctx context.Context, a auth.Actor, ref string, active, integrated bool) (model.ErrorTrackingSetting, error) {
	p, err := s.open(ctx, a, ref, auth.AdminOperations)
	if err != nil {
		return model.ErrorTrackingSetting{}, err
	}
	var st model.ErrorTrackingSetting
	err = s.db.InTx(ctx, func(tx *store.Tx) error {
		st, err = tx.PutErrorTrackingSetting(ctx, p.ID, active, integrated)
		return err
	})
	return st, err
}

// PatchSettings changes existing settings (GitLab's PATCH): 404 when the
// project has none yet.
func (s *Service) PatchSettings(ctx context.Context, a auth.Actor, ref string, active bool, integrated *bool) (model.ErrorTrackingSetting, error) {
	p, err := s.open(ctx, a, ref, auth.AdminOperations)
	if err != nil {
		return model.ErrorTrackingSetting{}, err
	}
	var st model.ErrorTrackingSetting
	err = s.db.InTx(ctx, func(tx *store.Tx) error {
		st, err = tx.UpdateErrorTrackingSetting(ctx, p.ID, active, integrated)
		return err
	})
	if errors.Is(err, model.ErrNotFound) {
		return st, errNoSetting
	}
	return st, err
}

// Keys lists the project's client keys, oldest first.
func (s *Service) Keys(ctx context.Context, a auth.Actor, ref string, pg model.Page) ([]model.ErrorTrackingClientKey, model.PageInfo, error) {
	p, err := s.open(ctx, a, ref, auth.AdminOperations)
	if err != nil {
		return nil, model.PageInfo{}, err
	}
	return s.db.ListClientKeys(ctx, p.ID, pg)
}

// CreateKey makes a new active key: "glet_" and 32 random hexadecimal
// digits. Public keys are public (GitLab lists them), so they are stored
// as they are, uniquely indexed for the collector.
func (s *Service) CreateKey(ctx context.Context, a auth.Actor, ref string) (model.ErrorTrackingClientKey, error) {
	p, err := s.open(ctx, a, ref, auth.AdminOperations)
	if err != nil {
		return model.ErrorTrackingClientKey{}, err
	}
	var raw [16]byte
	if _, err := rand.Read(raw[:]); err != nil {
		return model.ErrorTrackingClientKey{}, fmt.Errorf("client key: %w", err)
	}
	var k model.ErrorTrackingClientKey
	err = s.db.InTx(ctx, func(tx *store.Tx) error {
		k, err = tx.CreateClientKey(ctx, p.ID, model.ErrorTrackingClientKeyPrefix+hex.EncodeToString(raw[:]))
		return err
	})
	return k, err
}

// DeleteKey removes a key and returns it; the collector refuses it from
// the next request on.
func (s *Service) DeleteKey(ctx context.Context, a auth.Actor, ref string, id int64) (model.ErrorTrackingClientKey, error) {
	p, err := s.open(ctx, a, ref, auth.AdminOperations)
	if err != nil {
		return model.ErrorTrackingClientKey{}, err
	}
	var k model.ErrorTrackingClientKey
	err = s.db.InTx(ctx, func(tx *store.Tx) error {
		k, err = tx.DeleteClientKey(ctx, p.ID, id)
		return err
	})
	return k, model.NotFoundAs(err, "")
}

// IntegrationKind names error-tracking client keys in auth.IntegrationActor.
const IntegrationKind = "error_tracking"

// Authenticate turns a client key into the collector's actor: one probe
// of the keys' unique index, joined with the project's settings. An
// unknown or inactive key is GitLab's 404.
func (s *Service) Authenticate(ctx context.Context, secret string) (auth.Actor, error) {
	if !strings.HasPrefix(secret, model.ErrorTrackingClientKeyPrefix) || len(secret) > 255 {
		return auth.Anonymous, model.NotFound("")
	}
	k, err := s.db.ActiveClientKey(ctx, secret)
	if err != nil {
		return auth.Anonymous, model.NotFoundAs(err, "")
	}
	return auth.Actor{Integration: &auth.IntegrationActor{Kind: IntegrationKind, KeyID: k.ID, ProjectID: k.ProjectID, Enabled: k.Enabled}}, nil
}

// Format is how a collector request carries events.
type Format int

// The collector's formats.
const (
	// Envelope is a Sentry envelope (…/envelope).
	Envelope Format = iota + 1
	// Store is one JSON event (…/store, the legacy endpoint).
	Store
)

// Item types an envelope may carry besides events, accepted and dropped
// (GitLab keeps events only; SDKs send these alongside).
var dropped = map[string]bool{
	"transaction": true, "session": true, "sessions": true, "client_report": true, "attachment": true,
	"user_report": true, "profile": true, "profile_chunk": true, "replay_event": true, "replay_recording": true,
	"check_in": true, "statsd": true, "metric_meta": true, "span": true, "log": true, "otel_log": true,
}

// Collect keeps the events of one collector request for the project
// named by projectRef (the DSN's project id): 404 unless the caller's
// key belongs to that project and the project has integrated error
// tracking on; 400 for a body that is no envelope or event, an item type
// GitLab does not take, or an event that is neither an exception nor a
// message. Each event is one transaction: its error created or counted,
// the event stored whole.
func (s *Service) Collect(ctx context.Context, a auth.Actor, projectRef string, f Format, body io.Reader) error {
	in := a.Integration
	if in == nil || in.Kind != IntegrationKind {
		return model.NotFound("")
	}
	if strconv.FormatInt(in.ProjectID, 10) != projectRef {
		// The key is another project's: GitLab looks the project up first.
		if _, err := s.db.ProjectByRef(ctx, projectRef); err != nil {
			return model.NotFoundAs(err, "Project")
		}
		return model.NotFound("")
	}
	if !in.Enabled {
		return model.NotFound("")
	}
	data, err := io.ReadAll(io.LimitReader(body, s.limits.Body+1))
	if err != nil {
		return err
	}
	if int64(len(data)) > s.limits.Body {
		return model.TooLarge()
	}
	var events [][]byte
	switch f {
	case Store:
		events = append(events, data)
	case Envelope:
		items, err := ParseEnvelope(data)
		if err != nil {
			return model.BadRequest("Failed to parse sentry request")
		}
		for _, it := range items {
			switch {
			case it.Type == "event":
				events = append(events, it.Payload)
			case !dropped[it.Type]:
				return model.BadRequestRaw("400 Bad Request")
			}
		}
	}
	reports := make([]store.ErrorReport, 0, len(events))
	for _, ev := range events {
		if int64(len(ev)) > s.limits.Event {
			return model.TooLarge()
		}
		r, err := report(in.ProjectID, ev, s.db.Now())
		switch {
		case errors.Is(err, errParse):
			return model.BadRequest("Failed to parse sentry request")
		case errors.Is(err, errUnsupported):
			return model.BadRequest("Unsupported sentry payload")
		}
		r.Pack()
		reports = append(reports, r)
	}
	for _, r := range reports {
		if err := s.db.InTx(ctx, func(tx *store.Tx) error {
			_, _, err := tx.ReportError(ctx, r)
			return err
		}); err != nil {
			return fmt.Errorf("report error: %w", err)
		}
	}
	return nil
}

// ErrorQuery picks and orders a project's errors.
type ErrorQuery struct {
	Status model.ErrorStatus
	Query  string
	Sort   string
}

// Errors lists a project's errors (Reporters up), with the project.
func (s *Service) Errors(ctx context.Context, a auth.Actor, ref string, q ErrorQuery, pg model.Page) ([]model.TrackedError, model.PageInfo, model.Project, error) {
	p, err := s.open(ctx, a, ref, auth.ReadErrors)
	if err != nil {
		return nil, model.PageInfo{}, p, err
	}
	list, info, err := s.db.ListErrors(ctx, store.ErrorFilter{ProjectID: p.ID, Status: q.Status, Query: q.Query, Sort: q.Sort}, pg)
	return list, info, p, err
}

// Error returns one of a project's errors with the project.
func (s *Service) Error(ctx context.Context, a auth.Actor, ref string, id int64) (model.TrackedError, model.Project, error) {
	p, err := s.open(ctx, a, ref, auth.ReadErrors)
	if err != nil {
		return model.TrackedError{}, p, err
	}
	e, err := s.db.TrackedError(ctx, p.ID, id)
	return e, p, model.NotFoundAs(err, "Error")
}

// Events lists an error's events, newest first.
func (s *Service) Events(ctx context.Context, a auth.Actor, ref string, id int64, pg model.Page) ([]model.TrackedErrorEvent, model.PageInfo, error) {
	e, _, err := s.Error(ctx, a, ref, id)
	if err != nil {
		return nil, model.PageInfo{}, err
	}
	return s.db.ListErrorEvents(ctx, e.ID, pg)
}

// SetStatus moves an error to status (Developers up) by compare-and-set
// against the declared transitions: the same status is no change; a
// writer that moved it first is 409.
func (s *Service) SetStatus(ctx context.Context, a auth.Actor, ref string, id int64, to model.ErrorStatus) (model.TrackedError, model.Project, error) {
	p, err := s.open(ctx, a, ref, auth.UpdateErrors)
	if err != nil {
		return model.TrackedError{}, p, err
	}
	var e model.TrackedError
	err = s.db.InTx(ctx, func(tx *store.Tx) error {
		e, err = tx.TrackedError(ctx, p.ID, id)
		if err != nil {
			return model.NotFoundAs(err, "Error")
		}
		if e.Status == to {
			return nil
		}
		if !e.Status.CanMoveTo(to) {
			return model.BadRequest(fmt.Sprintf("cannot move from %s to %s", e.Status, to))
		}
		moved, err := tx.SetErrorStatus(ctx, e.ID, e.Status, to)
		if err != nil {
			return err
		}
		if !moved {
			return model.Conflict("error status changed by another request")
		}
		e, err = tx.TrackedError(ctx, p.ID, id)
		return err
	})
	return e, p, err
}
