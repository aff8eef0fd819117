// Package alerts holds alert management: a project's HTTP endpoint
// integrations (their keys stored hashed, shown once), the intake that
// turns what monitoring tools post into alerts grouped by fingerprint,
// and the alerts' state machine, assignees and metric images.
package alerts

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"quarry/internal/auth"
	"quarry/internal/model"
	"quarry/internal/store"
	"quarry/internal/uploads"
)

// Projects resolves projects with the caller's access (the projects
// service).
type Projects interface {
	Resolve(ctx context.Context, a auth.Actor, ref string) (model.Project, model.AccessLevel, error)
}

// Settings reads the instance's application settings (the attachment
// limit).
type Settings interface {
	Current(ctx context.Context) (model.ApplicationSettings, error)
}

// Service answers every alert question.
type Service struct {
	db       *store.DB
	projects Projects
	settings Settings
	files    *uploads.Store
	now      func() time.Time
	targets  targetCache
}

// New returns the alerts service; metric images are kept in files.
func New(db *store.DB, projects Projects, settings Settings, files *uploads.Store) *Service {
	return &Service{db: db, projects: projects, settings: settings, files: files, now: db.Now}
}

// Limits on what a caller keeps and sends.
const (
	MaxIntegrations = 50
	MaxName         = 255
	MaxPathSteps    = 20
	MaxPathStep     = 255
	MaxAssignees    = 100
)

// open resolves a project (404 when the caller does not see it) and
// checks action (403).
func (s *Service) open(ctx context.Context, a auth.Actor, ref string, action auth.Action) (model.Project, error) {
	p, acc, err := s.projects.Resolve(ctx, a, ref)
	if err != nil {
		return p, err
	}
	if !auth.Can(a, action, auth.Resource{Project: &p, Access: acc}) {
		return p, model.Forbidden("")
	}
	return p, nil
}

// randomHex is n random bytes as hex.
func randomHex(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic(fmt.Sprintf("alerts: no randomness: %v", err))
	}
	return hex.EncodeToString(b)
}

// newKey returns a fresh authorization key (32 hex characters, as
// GitLab's) and its digest.
func newKey() (key, digest string) {
	key = randomHex(16)
	return key, auth.Digest(key)
}

// IntegrationInput are an integration's attributes; nil means "not
// given".
type IntegrationInput struct {
	Name     *string
	Active   *bool
	Kind     string // create only: http (default) or prometheus
	Mappings *[]model.AlertMapping
}

func (in IntegrationInput) validate(create bool) error {
	var f model.FieldErrors
	if in.Name != nil {
		n := strings.TrimSpace(*in.Name)
		switch {
		case n == "":
			f.Add("name", "can't be blank")
		case len(n) > MaxName:
			f.Add("name", fmt.Sprintf("is too long (maximum is %d characters)", MaxName))
		}
	} else if create {
		f.Add("name", "can't be blank")
	}
	if in.Mappings != nil {
		if err := ValidateMappings(*in.Mappings); err != nil {
			f.Add("payload_attribute_mappings", err.Error())
		}
	}
	return f.Err()
}

// ValidateMappings checks a custom mapping: known fields, each at most
// once, paths of 1 to MaxPathSteps keys or indexes, known types.
func ValidateMappings(ms []model.AlertMapping) error {
	if len(ms) > len(model.AlertMappingFields) {
		return errors.New("has too many fields")
	}
	seen := map[string]bool{}
	for _, m := range ms {
		known := false
		for _, f := range model.AlertMappingFields {
			known = known || f == m.FieldName
		}
		if !known {
			return fmt.Errorf("field_name %q is not an alert field", m.FieldName)
		}
		if seen[m.FieldName] {
			return fmt.Errorf("field_name %q is mapped twice", m.FieldName)
		}
		seen[m.FieldName] = true
		if len(m.Path) == 0 || len(m.Path) > MaxPathSteps {
			return fmt.Errorf("path of %q must have 1 to %d steps", m.FieldName, MaxPathSteps)
		}
		for _, st := range m.Path {
			switch x := st.(type) {
			case string:
				if x == "" || len(x) > MaxPathStep {
					return fmt.Errorf("path of %q has an empty or too long key", m.FieldName)
				}
			default:
				if i, ok := index(x); !ok || i < 0 {
					return fmt.Errorf("path of %q has a step that is neither a key nor an index", m.FieldName)
				}
			}
		}
		typeOK := m.Type == ""
		for _, t := range model.AlertMappingTypes {
			typeOK = typeOK || t == m.Type
		}
		if !typeOK {
			return fmt.Errorf("type of %q must be string, array or datetime", m.FieldName)
		}
		if len(m.Label) > MaxName {
			return fmt.Errorf("label of %q is too long", m.FieldName)
		}
	}
	return nil
}

// normalizeMappings turns JSON numbers of paths into ints (stored form).
func normalizeMappings(ms []model.AlertMapping) []model.AlertMapping {
	out := make([]model.AlertMapping, len(ms))
	for i, m := range ms {
		out[i] = m
		if out[i].Type == "" {
			out[i].Type = "string"
		}
		out[i].Path = make([]any, len(m.Path))
		for j, st := range m.Path {
			if n, ok := index(st); ok {
				out[i].Path[j] = n
			} else {
				out[i].Path[j] = st
			}
		}
	}
	return out
}

// Integrations lists a project's integrations.
func (s *Service) Integrations(ctx context.Context, a auth.Actor, ref string) ([]model.AlertIntegration, model.Project, error) {
	p, err := s.open(ctx, a, ref, auth.AdminAlertIntegrations)
	if err != nil {
		return nil, p, err
	}
	is, err := s.db.AlertIntegrations(ctx, p.ID, MaxIntegrations)
	return is, p, err
}

// Integration returns one integration of a project.
func (s *Service) Integration(ctx context.Context, a auth.Actor, ref string, id int64) (model.AlertIntegration, model.Project, error) {
	p, err := s.open(ctx, a, ref, auth.AdminAlertIntegrations)
	if err != nil {
		return model.AlertIntegration{}, p, err
	}
	i, err := s.db.AlertIntegration(ctx, p.ID, id)
	return i, p, model.NotFoundAs(err, "Integration")
}

// CreateIntegration adds an integration; key is its authorization key,
// which is never shown again.
func (s *Service) CreateIntegration(ctx context.Context, a auth.Actor, ref string, in IntegrationInput) (i model.AlertIntegration, key string, p model.Project, err error) {
	p, err = s.open(ctx, a, ref, auth.AdminAlertIntegrations)
	if err != nil {
		return i, "", p, err
	}
	if err := in.validate(true); err != nil {
		return i, "", p, err
	}
	kind := in.Kind
	if kind == "" {
		kind = model.AlertIntegrationHTTP
	}
	key, digest := newKey()
	i = model.AlertIntegration{ProjectID: p.ID, Name: strings.TrimSpace(*in.Name), Kind: kind, Active: true,
		EndpointIdentifier: randomHex(8), TokenDigest: digest}
	if kind == model.AlertIntegrationPrometheus {
		i.EndpointIdentifier = "legacy-prometheus"
	}
	if in.Active != nil {
		i.Active = *in.Active
	}
	if in.Mappings != nil {
		i.Mappings = normalizeMappings(*in.Mappings)
	}
	defer s.targets.clear()
	err = s.db.InTx(ctx, func(tx *store.Tx) error {
		n, err := tx.CountAlertIntegrations(ctx, p.ID)
		if err != nil {
			return err
		}
		if n >= MaxIntegrations {
			return model.BadRequest(fmt.Sprintf("a project has at most %d alert integrations", MaxIntegrations))
		}
		return tx.CreateAlertIntegration(ctx, &i)
	})
	var ue *store.UniqueError
	if errors.As(err, &ue) {
		return i, "", p, model.Invalid("type", "a project has one Prometheus integration")
	}
	return i, key, p, err
}

// UpdateIntegration changes an integration's name, active flag or
// mapping.
func (s *Service) UpdateIntegration(ctx context.Context, a auth.Actor, ref string, id int64, in IntegrationInput) (model.AlertIntegration, model.Project, error) {
	p, err := s.open(ctx, a, ref, auth.AdminAlertIntegrations)
	if err != nil {
		return model.AlertIntegration{}, p, err
	}
	if err := in.validate(false); err != nil {
		return model.AlertIntegration{}, p, err
	}
	var i model.AlertIntegration
	defer s.targets.clear()
	err = s.db.InTx(ctx, func(tx *store.Tx) error {
		if i, err = tx.AlertIntegration(ctx, p.ID, id); err != nil {
			return err
		}
		if in.Name != nil {
			i.Name = strings.TrimSpace(*in.Name)
		}
		if in.Active != nil {
			i.Active = *in.Active
		}
		if in.Mappings != nil {
			i.Mappings = normalizeMappings(*in.Mappings)
		}
		return tx.UpdateAlertIntegration(ctx, &i)
	})
	return i, p, model.NotFoundAs(err, "Integration")
}

// ResetKey gives an integration a new authorization key (the old one
// stops working) and returns it, shown this once.
func (s *Service) ResetKey(ctx context.Context, a auth.Actor, ref string, id int64) (i model.AlertIntegration, key string, p model.Project, err error) {
	p, err = s.open(ctx, a, ref, auth.AdminAlertIntegrations)
	if err != nil {
		return i, "", p, err
	}
	key, digest := newKey()
	defer s.targets.clear()
	err = s.db.InTx(ctx, func(tx *store.Tx) error {
		if i, err = tx.AlertIntegration(ctx, p.ID, id); err != nil {
			return err
		}
		i.TokenDigest = digest
		return tx.UpdateAlertIntegration(ctx, &i)
	})
	return i, key, p, model.NotFoundAs(err, "Integration")
}

// DeleteIntegration removes an integration; its alerts stay.
func (s *Service) DeleteIntegration(ctx context.Context, a auth.Actor, ref string, id int64) error {
	p, err := s.open(ctx, a, ref, auth.AdminAlertIntegrations)
	if err != nil {
		return err
	}
	defer s.targets.clear()
	err = s.db.InTx(ctx, func(tx *store.Tx) error { return tx.DeleteAlertIntegration(ctx, p.ID, id) })
	return model.NotFoundAs(err, "Integration")
}

// keyMatches compares a presented key with a stored digest in constant
// time.
func keyMatches(key, digest string) bool {
	if !auth.PlausibleSecret(key) {
		return false
	}
	return subtle.ConstantTimeCompare([]byte(auth.Digest(key)), []byte(digest)) == 1
}

// Route says which integration of a project an intake URL names.
type Route = store.IntakeRoute

// The intake URLs.
const (
	ByIdentifier     = store.IntakeIdentifier
	Legacy           = store.IntakeLegacy
	PrometheusLegacy = store.IntakePrometheus
)

// IntakeRequest is one post to an intake URL.
type IntakeRequest struct {
	ProjectPath string
	Route       Route
	Identifier  string
	Key         string
	Body        []byte
}

// Recorded is an alert an intake post opened or counted.
type Recorded struct {
	IID   int64
	Title string
}

// IntakeResult is what an intake post did. Prometheus marks an
// Alertmanager notification (answered 201 without a body).
type IntakeResult struct {
	Prometheus bool
	Alerts     []Recorded
}

// Notify processes one post to an intake URL in GitLab's order: the
// payload's size and depth (400), the project (404), then for an
// Alertmanager notification its shape (422) and the key (401), else the
// integration being active (403) and the key (401); a payload that opens
// or counts no alert is a 400.
func (s *Service) Notify(ctx context.Context, req IntakeRequest) (IntakeResult, error) {
	payload, err := Decode(req.Body)
	if err != nil {
		return IntakeResult{}, err
	}
	projectID, in, found, err := s.target(ctx, req)
	if errors.Is(err, model.ErrNotFound) {
		return IntakeResult{}, model.NotFound("Project")
	}
	if err != nil {
		return IntakeResult{}, err
	}
	now := s.now()
	if req.Route == PrometheusLegacy || IsPrometheus(payload) {
		if !IsPrometheus(payload) {
			return IntakeResult{}, model.Unprocessable("not an Alertmanager notification")
		}
		if !found || !in.Active || !keyMatches(req.Key, in.TokenDigest) {
			return IntakeResult{}, model.Unauthorized("")
		}
		res := IntakeResult{Prometheus: true}
		for _, alert := range PrometheusAlerts(payload) {
			n, ok := Prometheus(alert, now)
			if !ok {
				continue
			}
			raw, err := json.Marshal(alert)
			if err != nil {
				return res, err
			}
			r, ok, err := s.record(ctx, projectID, in.ID, n, raw)
			if err != nil {
				return res, err
			}
			if ok {
				res.Alerts = append(res.Alerts, r)
			}
		}
		return res, nil
	}
	if !found || !in.Active {
		return IntakeResult{}, model.Forbidden("")
	}
	if !keyMatches(req.Key, in.TokenDigest) {
		return IntakeResult{}, model.Unauthorized("")
	}
	n := Generic(payload, in.Mappings, now)
	r, ok, err := s.record(ctx, projectID, in.ID, n, req.Body)
	if err != nil {
		return IntakeResult{}, err
	}
	if !ok {
		return IntakeResult{}, model.BadRequest("no open alert to resolve")
	}
	return IntakeResult{Alerts: []Recorded{r}}, nil
}

// target resolves the integration an intake URL names, from the cache
// when it was resolved within IntakeCacheTTL.
func (s *Service) target(ctx context.Context, req IntakeRequest) (int64, model.AlertIntegration, bool, error) {
	k := targetKey{path: strings.ToLower(req.ProjectPath), route: req.Route, identifier: req.Identifier}
	now := time.Now()
	if t, ok := s.targets.get(k, now); ok {
		return t.projectID, t.in, t.found, t.err
	}
	gen := s.targets.generation()
	projectID, in, found, err := s.db.IntakeTarget(ctx, req.ProjectPath, req.Route, req.Identifier)
	if err == nil || errors.Is(err, model.ErrNotFound) {
		s.targets.put(k, target{projectID: projectID, in: in, found: found, err: err, until: now.Add(IntakeCacheTTL)}, gen)
	}
	return projectID, in, found, err
}

// record applies one normalized payload in one transaction: a resolving
// payload resolves the open alert of its fingerprint (none: nothing
// happens, ok false); any other opens an alert or counts one more event
// of the open one.
func (s *Service) record(ctx context.Context, projectID, integrationID int64, n Normalized, payload []byte) (Recorded, bool, error) {
	a := model.Alert{ProjectID: projectID, IntegrationID: integrationID, Fingerprint: n.Fingerprint, Severity: n.Severity,
		Title: n.Title, Description: n.Description, Service: n.Service, MonitoringTool: n.MonitoringTool, Hosts: n.Hosts,
		Environment: n.Environment, Runbook: n.Runbook, StartedAt: n.StartedAt, Payload: payload}
	ok := true
	err := s.db.InTx(ctx, func(tx *store.Tx) error {
		if n.Resolving {
			end := tx.Now().UTC()
			if n.EndedAt != nil {
				end = *n.EndedAt
			}
			var err error
			ok, err = tx.ResolveOpenAlert(ctx, &a, end)
			return err
		}
		_, err := tx.FireAlert(ctx, &a)
		return err
	})
	if err != nil {
		return Recorded{}, false, fmt.Errorf("record alert: %w", err)
	}
	return Recorded{IID: a.IID, Title: a.Title}, ok, nil
}
