// Package runners holds CI runners: registration (registration tokens and
// authentication tokens made by users), the runner's heartbeat, the job
// queue a runner long-polls and the assignment of pending builds, and the
// runners API users manage them with.
//
// Who calls what, in order (reference §1): a runner registers (POST
// /runners) or verifies a glrt- token (POST /runners/verify); then it
// asks for jobs (RequestJob), which parks until a build it may take
// becomes pending, claims it through the CI engine and returns its
// payload; the job's own calls (state, log, artifacts) go to the engine
// with the job token.
package runners

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"time"

	"quarry/internal/auth"
	"quarry/internal/ci"
	"quarry/internal/model"
	"quarry/internal/store"
)

// Projects resolves projects with the caller's access (the projects
// service).
type Projects interface {
	Resolve(ctx context.Context, a auth.Actor, ref string) (model.Project, model.AccessLevel, error)
}

// Groups resolves groups with the caller's access (the groups service).
type Groups interface {
	Resolve(ctx context.Context, a auth.Actor, ref string) (model.Group, model.AccessLevel, error)
}

// Config tunes the queue.
type Config struct {
	// LongPoll is how long a request for a job waits for one to become
	// pending before it answers 204 (default 50 s).
	LongPoll time.Duration
	// HeartbeatEvery bounds how often a runner's contact is written
	// (default one minute): a runner polling every second writes once a
	// minute.
	HeartbeatEvery time.Duration
}

// Service manages runners and hands them jobs.
type Service struct {
	db       *store.DB
	ci       *ci.Service
	projects Projects
	groups   Groups
	log      *slog.Logger
	cfg      Config
	wake     *waker
	stopped  chan struct{} // closed when Start's context ends
	settings TokenResetter

	// seen remembers each runner's last written contact, to write it at
	// most once per HeartbeatEvery.
	seenMu sync.Mutex
	seen   map[int64]contact
}

type contact struct {
	at   time.Time
	info model.RunnerInfo
}

// New returns the runners service. Call Start to hear of queued jobs from
// every process on the database.
func New(db *store.DB, engine *ci.Service, projects Projects, groups Groups, log *slog.Logger, cfg Config) *Service {
	if cfg.LongPoll <= 0 {
		cfg.LongPoll = 50 * time.Second
	}
	if cfg.HeartbeatEvery <= 0 {
		cfg.HeartbeatEvery = time.Minute
	}
	return &Service{db: db, ci: engine, projects: projects, groups: groups, log: log, cfg: cfg, wake: newWaker(),
		stopped: make(chan struct{}), seen: map[int64]contact{}}
}

func (s *Service) now() time.Time { return s.db.Now() }

// RegisterInput are a runner's attributes at registration.
type RegisterInput struct {
	Description     string
	MaintenanceNote string
	Paused          bool
	Locked          bool
	RunUntagged     *bool
	TagList         []string
	AccessLevel     string
	MaximumTimeout  int
	Info            model.RunnerInfo
}

// validate checks the attributes a runner is created or updated with.
func (in *RegisterInput) validate() error {
	var fe model.FieldErrors
	switch in.AccessLevel {
	case "":
		in.AccessLevel = model.RunnerNotProtected
	case model.RunnerNotProtected, model.RunnerRefProtected:
	default:
		return model.Param("access_level does not have a valid value")
	}
	if in.MaximumTimeout != 0 && in.MaximumTimeout < 600 {
		fe.Add("maximum_timeout", "needs to be at least 10 minutes")
	}
	in.TagList = model.CleanList(in.TagList)
	runUntagged := in.RunUntagged == nil || *in.RunUntagged
	if !runUntagged && len(in.TagList) == 0 {
		fe.Add("tags_list", "can not be empty when runner is not allowed to pick untagged jobs")
	}
	return fe.Err()
}

func newRunner(typ, registration string, in RegisterInput) model.Runner {
	return model.Runner{Type: typ, RegistrationType: registration, Description: in.Description, MaintenanceNote: in.MaintenanceNote,
		Paused: in.Paused, Locked: in.Locked, RunUntagged: in.RunUntagged == nil || *in.RunUntagged, TagList: in.TagList,
		AccessLevel: in.AccessLevel, MaximumTimeout: in.MaximumTimeout}
}

// issue gives r a fresh authentication token (returned once) and stores
// it.
func (s *Service) issue(ctx context.Context, r *model.Runner) (string, error) {
	secret, digest := auth.NewToken(model.RunnerTokenPrefix)
	if r.RegistrationType == model.RegisteredByToken {
		// Tokens of the legacy flow carry no prefix: the official runner
		// takes a glrt- token for one made by a user and verifies it
		// instead of using it.
		secret = strings.TrimPrefix(secret, model.RunnerTokenPrefix)
		digest = auth.Digest(secret)
	}
	r.TokenDigest = digest
	return secret, nil
}

// Register creates a runner with a registration token (the legacy flow,
// POST /runners): the instance's, a group's or a project's, each found by
// the token's digest. An unknown token is 403.
func (s *Service) Register(ctx context.Context, registrationToken string, in RegisterInput) (model.Runner, string, error) {
	if err := in.validate(); err != nil {
		return model.Runner{}, "", err
	}
	var r model.Runner
	if !auth.PlausibleSecret(registrationToken) {
		return r, "", model.Forbidden("")
	}
	instance, err := s.db.IsInstanceRunnersToken(ctx, registrationToken)
	if err != nil {
		return r, "", err
	}
	switch {
	case instance:
		r = newRunner(model.RunnerInstance, model.RegisteredByToken, in)
	default:
		if id, err := s.db.ProjectIDByRunnersToken(ctx, registrationToken); err == nil {
			r = newRunner(model.RunnerProject, model.RegisteredByToken, in)
			r.ProjectIDs = []int64{id}
		} else if !errors.Is(err, model.ErrNotFound) {
			return r, "", err
		} else if gid, err := s.db.GroupIDByRunnersToken(ctx, registrationToken); err == nil {
			r = newRunner(model.RunnerGroup, model.RegisteredByToken, in)
			r.GroupID = gid
		} else if errors.Is(err, model.ErrNotFound) {
			return r, "", model.Forbidden("")
		} else {
			return r, "", err
		}
	}
	secret, err := s.issue(ctx, &r)
	if err != nil {
		return r, "", err
	}
	now := s.now()
	r.ContactedAt = &now
	r.Info = in.Info
	err = s.db.InTx(ctx, func(tx *store.Tx) error {
		if err := tx.CreateRunner(ctx, &r); err != nil {
			return err
		}
		return tx.TouchRunner(ctx, r.ID, now, in.Info)
	})
	return r, secret, err
}

// CreateInput is POST /user/runners.
type CreateInput struct {
	RegisterInput
	RunnerType string
	GroupID    string // id or full path
	ProjectID  string
}

// Create makes a runner for a user (POST /user/runners): an instance
// runner for administrators, a group runner for the group's owners, a
// project runner for the project's maintainers. Its glrt- token is
// returned once.
func (s *Service) Create(ctx context.Context, a auth.Actor, in CreateInput) (model.Runner, string, error) {
	if err := in.validate(); err != nil {
		return model.Runner{}, "", err
	}
	var r model.Runner
	switch in.RunnerType {
	case model.RunnerInstance:
		if !a.Admin() {
			return r, "", model.Forbidden("")
		}
		r = newRunner(model.RunnerInstance, model.RegisteredByUser, in.RegisterInput)
	case model.RunnerGroup:
		if in.GroupID == "" {
			return r, "", model.BadRequest("group_id is missing")
		}
		g, access, err := s.groups.Resolve(ctx, a, in.GroupID)
		if err != nil {
			return r, "", err
		}
		if !a.Admin() && access < model.Owner {
			return r, "", model.Forbidden("")
		}
		r = newRunner(model.RunnerGroup, model.RegisteredByUser, in.RegisterInput)
		r.GroupID = g.ID
	case model.RunnerProject:
		if in.ProjectID == "" {
			return r, "", model.BadRequest("project_id is missing")
		}
		p, access, err := s.projects.Resolve(ctx, a, in.ProjectID)
		if err != nil {
			return r, "", err
		}
		if !a.Admin() && access < model.Maintainer {
			return r, "", model.Forbidden("")
		}
		r = newRunner(model.RunnerProject, model.RegisteredByUser, in.RegisterInput)
		r.ProjectIDs = []int64{p.ID}
	case "":
		return r, "", model.Param("runner_type is missing")
	default:
		return r, "", model.Param("runner_type does not have a valid value")
	}
	r.CreatorID = a.UserID()
	secret, err := s.issue(ctx, &r)
	if err != nil {
		return r, "", err
	}
	err = s.db.InTx(ctx, func(tx *store.Tx) error { return tx.CreateRunner(ctx, &r) })
	return r, secret, err
}

// Authenticate finds the runner a token belongs to: a missing or unknown
// (or expired) token is 403.
func (s *Service) Authenticate(ctx context.Context, token string) (auth.Actor, error) {
	if !auth.PlausibleSecret(token) {
		return auth.Anonymous, model.Forbidden("")
	}
	r, err := s.db.RunnerByTokenDigest(ctx, auth.Digest(token))
	if errors.Is(err, model.ErrNotFound) || (err == nil && r.TokenExpiresAt != nil && !r.TokenExpiresAt.After(s.now())) {
		return auth.Anonymous, model.Forbidden("")
	}
	if err != nil {
		return auth.Anonymous, err
	}
	return auth.Actor{Runner: &r}, nil
}

// Heartbeat records that runner r called, from ip, saying info of itself
// (and, with systemID, which of its machines called). The write is
// skipped when the last one is recent and said the same.
func (s *Service) Heartbeat(ctx context.Context, r *model.Runner, systemID string, info model.RunnerInfo) error {
	now := s.now()
	s.seenMu.Lock()
	last, ok := s.seen[r.ID]
	fresh := ok && now.Sub(last.at) < s.cfg.HeartbeatEvery && last.info == info
	if !fresh {
		s.seen[r.ID] = contact{at: now, info: info}
	}
	s.seenMu.Unlock()
	if fresh {
		return nil
	}
	r.ContactedAt, r.Info = &now, info
	return s.db.InTx(ctx, func(tx *store.Tx) error {
		if err := tx.TouchRunner(ctx, r.ID, now, info); err != nil {
			return err
		}
		if systemID != "" {
			return tx.TouchRunnerManager(ctx, r.ID, systemID, now, info)
		}
		return nil
	})
}

// Verify is POST /runners/verify: the runner exists (and, with systemID,
// its machine is recorded).
func (s *Service) Verify(ctx context.Context, r *model.Runner, systemID string, info model.RunnerInfo) error {
	s.forget(r.ID)
	return s.Heartbeat(ctx, r, systemID, info)
}

func (s *Service) forget(id int64) {
	s.seenMu.Lock()
	delete(s.seen, id)
	s.seenMu.Unlock()
}

// Unregister deletes the runner (DELETE /runners).
func (s *Service) Unregister(ctx context.Context, r model.Runner) error {
	s.forget(r.ID)
	return s.db.InTx(ctx, func(tx *store.Tx) error {
		_, err := tx.DeleteRunner(ctx, r.ID)
		return err
	})
}

// UnregisterManager forgets one machine of the runner (DELETE
// /runners/managers); an unknown one is 404.
func (s *Service) UnregisterManager(ctx context.Context, r model.Runner, systemID string) error {
	return s.db.InTx(ctx, func(tx *store.Tx) error {
		ok, err := tx.DeleteRunnerManager(ctx, r.ID, systemID)
		if err == nil && !ok {
			return model.NotFound("")
		}
		return err
	})
}

// ResetToken replaces the runner's token; the new one is returned once.
func (s *Service) ResetToken(ctx context.Context, r model.Runner) (string, error) {
	secret, err := s.issue(ctx, &r)
	if err != nil {
		return "", err
	}
	return secret, s.db.InTx(ctx, func(tx *store.Tx) error { return tx.SetRunnerToken(ctx, r.ID, r.TokenDigest, nil) })
}

// registrationPrefix starts every registration token (GitLab's).
const registrationPrefix = "GR1348941"

// ResetProjectRegistrationToken gives a project a new runners registration
// token (maintainers); the old one stops registering runners.
func (s *Service) ResetProjectRegistrationToken(ctx context.Context, a auth.Actor, ref string) (string, error) {
	p, access, err := s.projects.Resolve(ctx, a, ref)
	if err != nil {
		return "", err
	}
	if !a.Admin() && access < model.Maintainer {
		return "", model.Forbidden("")
	}
	token := auth.NewSecret(registrationPrefix, 20)
	return token, s.db.InTx(ctx, func(tx *store.Tx) error { return tx.SetProjectRunnersToken(ctx, p.ID, token) })
}

// ResetGroupRegistrationToken gives a group a new runners registration
// token (owners).
func (s *Service) ResetGroupRegistrationToken(ctx context.Context, a auth.Actor, ref string) (string, error) {
	g, access, err := s.groups.Resolve(ctx, a, ref)
	if err != nil {
		return "", err
	}
	if !a.Admin() && access < model.Owner {
		return "", model.Forbidden("")
	}
	token := auth.NewSecret(registrationPrefix, 20)
	return token, s.db.InTx(ctx, func(tx *store.Tx) error { return tx.SetGroupRunnersToken(ctx, g.ID, token) })
}

// TokenResetter renews the instance's registration token (the settings
// service keeps it).
type TokenResetter interface {
	ResetRegistrationToken(ctx context.Context, a auth.Actor) (string, error)
}

// SetSettings gives the service the keeper of the instance's registration
// token (before use).
func (s *Service) SetSettings(t TokenResetter) { s.settings = t }

// ResetInstanceRegistrationToken gives the instance a new runners
// registration token (administrators).
func (s *Service) ResetInstanceRegistrationToken(ctx context.Context, a auth.Actor) (string, error) {
	if !a.Admin() {
		return "", model.Forbidden("")
	}
	if s.settings == nil {
		return "", errors.New("reset registration token: no settings service")
	}
	return s.settings.ResetRegistrationToken(ctx, a)
}
