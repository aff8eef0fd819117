package agents

import (
	"context"
	"errors"
	"strings"

	"quarry/internal/auth"
	"quarry/internal/git"
	"quarry/internal/git/gitrepo"
	"quarry/internal/model"
)

// ConfigPaths are where an agent's configuration file may lie in its
// configuration project, first match wins: Quarry's own folder, then
// GitLab's.
func ConfigPaths(agent string) []string {
	return []string{".service/agents/" + agent + "/config.yaml", ".gitlab/agents/" + agent + "/config.yaml"}
}

// Authorizing lists, by id, the agents that authorize CI jobs of project
// p: every agent registered in p itself, and every agent whose
// configuration (at its project's default branch) lists p, or a group p
// lies under, in ci_access. As in GitLab, only agents configured within
// p's root namespace count, and groups only when that root is a group.
//
// Each configuration is read once per commit of its project's default
// branch (parsed configurations are cached by project, commit and agent),
// so a call costs one query, one ref lookup per configuration project,
// and file reads only for configurations not seen at that commit.
func (s *Service) Authorizing(ctx context.Context, p model.Project) ([]Agent, error) {
	candidates, err := s.db.ClusterAgentsUnder(ctx, rootTraversal(p.Namespace.Traversal))
	if err != nil {
		return nil, err
	}
	fullPath := strings.ToLower(p.FullPath())
	var groupPaths []string
	if p.Namespace.Kind == model.NamespaceGroup {
		groupPaths = ancestorPaths(strings.ToLower(p.Namespace.FullPath))
	}
	heads := map[int64]git.ObjectID{} // configuration project → default branch commit ("" when none)
	var out []Agent
	for _, c := range candidates {
		ok := c.ProjectID == p.ID
		if !ok {
			head, seen := heads[c.ProjectID]
			if !seen {
				head = s.defaultHead(ctx, c.Project)
				heads[c.ProjectID] = head
			}
			if head != "" {
				access, err := s.config(ctx, c.Project, head, c.Name)
				if err != nil {
					return nil, err
				}
				ok = access.authorizes(fullPath, groupPaths)
			}
		}
		if ok {
			out = append(out, Agent{ClusterAgent: c.ClusterAgent, ConfigProject: c.Project})
		}
	}
	return out, ctx.Err()
}

// rootTraversal is the traversal of a namespace's root ("7/" of "7/12/").
func rootTraversal(traversal string) string {
	if i := strings.Index(traversal, "/"); i >= 0 {
		return traversal[:i+1]
	}
	return traversal
}

// ancestorPaths are the full paths of a group and its ancestors: "a",
// "a/b", "a/b/c" for "a/b/c".
func ancestorPaths(fullPath string) []string {
	var out []string
	for i, c := range fullPath {
		if c == '/' {
			out = append(out, fullPath[:i])
		}
	}
	return append(out, fullPath)
}

// defaultHead is the commit at a project's default branch, "" when it has
// none (an empty repository) or the repository cannot be read (logged:
// its agents then authorize their own project only).
func (s *Service) defaultHead(ctx context.Context, p model.Project) git.ObjectID {
	if p.DefaultBranch == "" {
		return ""
	}
	repo, err := s.storages.Open(p.RepositoryStorage, p.DiskPath)
	if err == nil {
		var id git.ObjectID
		id, err = repo.CommitID(ctx, "refs/heads/"+p.DefaultBranch)
		if err == nil {
			return id
		}
	}
	if !errors.Is(err, gitrepo.ErrRefNotFound) && ctx.Err() == nil {
		s.log.Warn("agents: read the default branch of a configuration project", "project_id", p.ID, "err", err)
	}
	return ""
}

// config returns an agent's parsed configuration at a commit of its
// project, from the cache when it was read at that commit before. A
// missing file authorizes nothing, as does one that cannot be read
// (logged).
func (s *Service) config(ctx context.Context, p model.Project, commit git.ObjectID, agent string) (CIAccess, error) {
	key := configKey{projectID: p.ID, commit: string(commit), agent: agent}
	if c, ok := s.configs.Get(key); ok {
		return c, nil
	}
	data, err := s.readConfig(ctx, p, commit, agent)
	if err != nil {
		if ctx.Err() != nil {
			return CIAccess{}, ctx.Err()
		}
		// Not cached: the next call tries again.
		s.log.Warn("agents: read an agent's configuration", "project_id", p.ID, "agent", agent, "err", err)
		return CIAccess{}, nil
	}
	c := ParseConfig(data)
	s.configs.Add(key, c)
	return c, nil
}

// readConfig reads the first configuration file of ConfigPaths that is a
// blob at commit; nil when there is none or it is larger than
// MaxConfigBytes (which authorizes nothing).
func (s *Service) readConfig(ctx context.Context, p model.Project, commit git.ObjectID, agent string) ([]byte, error) {
	repo, err := s.storages.Open(p.RepositoryStorage, p.DiskPath)
	if err != nil {
		return nil, err
	}
	for _, path := range ConfigPaths(agent) {
		info, err := repo.ObjectAt(ctx, commit, path)
		if errors.Is(err, gitrepo.ErrPathNotFound) || (err == nil && info.Type != "blob") {
			continue
		}
		if err != nil {
			return nil, err
		}
		if info.Size > MaxConfigBytes {
			return nil, nil
		}
		_, data, err := repo.ReadObject(ctx, string(info.OID))
		return data, err
	}
	return nil, nil
}

// Allowed is what GET /job/allowed_agents answers: the agents that
// authorize the job's project, the job, its pipeline and project, and the
// user it runs as.
type Allowed struct {
	Agents   []Agent
	Job      model.Job
	Pipeline model.Pipeline
	Project  model.Project
	User     *model.User
}

// AllowedAgents answers a request authenticated by a CI job token
// (a.Job): the agents that authorize the job's project, with the job, its
// pipeline and project, and the user. Without a job (another credential),
// or for a job that is gone, it is 404 Job Not Found.
func (s *Service) AllowedAgents(ctx context.Context, a auth.Actor) (Allowed, error) {
	if a.Job == nil {
		return Allowed{}, model.NotFound("Job")
	}
	job, err := s.db.Job(ctx, a.Job.ID)
	if errors.Is(err, model.ErrNotFound) {
		return Allowed{}, model.NotFound("Job")
	}
	if err != nil {
		return Allowed{}, err
	}
	pl, err := s.db.Pipeline(ctx, job.PipelineID)
	if err != nil {
		return Allowed{}, model.NotFoundAs(err, "Job")
	}
	p, err := s.db.ProjectByID(ctx, job.ProjectID)
	if errors.Is(err, model.ErrNotFound) || (err == nil && p.PendingDelete) {
		return Allowed{}, model.NotFound("Job")
	}
	if err != nil {
		return Allowed{}, err
	}
	list, err := s.Authorizing(ctx, p)
	if err != nil {
		return Allowed{}, err
	}
	return Allowed{Agents: list, Job: job, Pipeline: pl, Project: p, User: a.User}, nil
}
