// Package agents keeps the records of agents for Kubernetes (GitLab's
// cluster agents): an agent is registered in a project, its
// configuration project, whose default branch holds its configuration
// file. The file's ci_access section says which projects' CI jobs may
// use the agent; AllowedAgents answers a running job with the agents that
// authorize it.
package agents

import (
	"context"
	"errors"
	"fmt"
	lru "github.com/hashicorp/golang-lru/v2"
	"log/slog"
	"regexp"
	"strings"
	"unicode/utf8"

	"quarry/internal/auth"
	"quarry/internal/git/gitrepo"
	"quarry/internal/model"
	"quarry/internal/store"
)

// Projects resolves projects with the caller's access (the projects
// service).
type Projects interface {
	Resolve(ctx context.Context, a auth.Actor, ref string) (model.Project, model.AccessLevel, error)
}

// Service manages agents and answers which of them a job may use.
type Service struct {
	db       *store.DB
	projects Projects
	storages *gitrepo.Storages
	log      *slog.Logger
	configs  *lru.Cache[configKey, CIAccess]
}

// New returns the service.
func New(db *store.DB, projects Projects, storages *gitrepo.Storages, log *slog.Logger) *Service {
	cache, err := lru.New[configKey, CIAccess](4096)
	if err != nil {
		panic(err) // only a size <= 0 fails
	}
	return &Service{db: db, projects: projects, storages: storages, log: log, configs: cache}
}

// Agent is an agent with its configuration project.
type Agent struct {
	store.ClusterAgent
	ConfigProject model.Project
}

// Name rules of agents (GitLab's): lower-case letters, digits and '-',
// starting and ending with a letter or digit, at most 63 characters.
var nameRule = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)

const (
	maxNameLength = 63
	msgNameBlank  = "Name can't be blank"
	msgNameLong   = "Name is too long (maximum is 63 characters)"
	msgNameTaken  = "Name has already been taken"
	msgNameFormat = "Name can contain only lowercase letters, digits, and '-', but cannot start or end with '-'"
)

// mayRead: developers up read a project's agents.
func mayRead(a auth.Actor, acc model.AccessLevel) bool { return a.Admin() || acc >= model.Developer }

// mayAdmin: maintainers up register and remove agents.
func mayAdmin(a auth.Actor, p *model.Project, acc model.AccessLevel) bool {
	return auth.Can(a, auth.UpdateProject, auth.Resource{Project: p, Access: acc})
}

// List returns a page of a project's agents, by id (developers up; others
// who see the project get 404 ClusterAgents Not Found).
func (s *Service) List(ctx context.Context, a auth.Actor, projectRef string, page model.Page) ([]Agent, model.PageInfo, error) {
	p, acc, err := s.projects.Resolve(ctx, a, projectRef)
	if err != nil {
		return nil, model.PageInfo{}, err
	}
	if !mayRead(a, acc) {
		return nil, model.PageInfo{}, model.NotFound("ClusterAgents")
	}
	list, info, err := s.db.ClusterAgents(ctx, p.ID, page)
	if err != nil {
		return nil, info, err
	}
	out := make([]Agent, len(list))
	for i, ag := range list {
		out[i] = Agent{ClusterAgent: ag, ConfigProject: p}
	}
	return out, info, nil
}

// Get returns one agent of a project; an agent the caller may not read is
// GitLab's generic 404 Not found.
func (s *Service) Get(ctx context.Context, a auth.Actor, projectRef string, id int64) (Agent, error) {
	p, acc, err := s.projects.Resolve(ctx, a, projectRef)
	if err != nil {
		return Agent{}, err
	}
	if !mayRead(a, acc) {
		return Agent{}, model.RecordNotFound()
	}
	return s.agentIn(ctx, p, id)
}

func (s *Service) agentIn(ctx context.Context, p model.Project, id int64) (Agent, error) {
	ag, err := s.db.ClusterAgent(ctx, p.ID, id)
	if errors.Is(err, model.ErrNotFound) {
		return Agent{}, model.RecordNotFound()
	}
	if err != nil {
		return Agent{}, err
	}
	return Agent{ClusterAgent: ag, ConfigProject: p}, nil
}

// Create registers an agent in a project (maintainers up). A bad or taken
// name is a 400 listing every rule it breaks, as GitLab words them.
func (s *Service) Create(ctx context.Context, a auth.Actor, projectRef, name string) (Agent, error) {
	p, acc, err := s.projects.Resolve(ctx, a, projectRef)
	if err != nil {
		return Agent{}, err
	}
	if !mayAdmin(a, &p, acc) {
		return Agent{}, model.Forbidden("")
	}
	var msgs []string
	if name == "" {
		msgs = append(msgs, msgNameBlank)
	}
	if utf8.RuneCountInString(name) > maxNameLength {
		msgs = append(msgs, msgNameLong)
	}
	if name != "" {
		taken, err := s.db.ClusterAgentNamed(ctx, p.ID, name)
		if err != nil {
			return Agent{}, err
		}
		if taken {
			msgs = append(msgs, msgNameTaken)
		}
	}
	if !nameRule.MatchString(name) {
		msgs = append(msgs, msgNameFormat)
	}
	if len(msgs) > 0 {
		return Agent{}, nameError(msgs)
	}
	ag := store.ClusterAgent{ProjectID: p.ID, Name: name, CreatedByUserID: a.UserID()}
	err = s.db.InTx(ctx, func(tx *store.Tx) error { return tx.CreateClusterAgent(ctx, &ag) })
	if store.IsClusterAgentNameTaken(err) {
		return Agent{}, nameError([]string{msgNameTaken})
	}
	if err != nil {
		return Agent{}, err
	}
	return Agent{ClusterAgent: ag, ConfigProject: p}, nil
}

// nameError is GitLab's answer to an agent that fails validation: the
// model's messages, as a Ruby array, after "400 Bad request - ".
func nameError(msgs []string) error {
	quoted := make([]string, len(msgs))
	for i, m := range msgs {
		quoted[i] = fmt.Sprintf("%q", m)
	}
	return model.BadRequest("[" + strings.Join(quoted, ", ") + "]")
}

// Delete removes an agent's registration (maintainers up).
func (s *Service) Delete(ctx context.Context, a auth.Actor, projectRef string, id int64) error {
	p, acc, err := s.projects.Resolve(ctx, a, projectRef)
	if err != nil {
		return err
	}
	if !mayAdmin(a, &p, acc) {
		return model.Forbidden("")
	}
	ag, err := s.agentIn(ctx, p, id)
	if err != nil {
		return err
	}
	err = s.db.InTx(ctx, func(tx *store.Tx) error { return tx.DeleteClusterAgent(ctx, ag.ID) })
	if errors.Is(err, model.ErrNotFound) {
		return model.RecordNotFound()
	}
	return err
}
