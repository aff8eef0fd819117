package entity

import (
	"strconv"
	"strings"

	"quarry/internal/agents"
	"quarry/internal/model"
)

// Agents for Kubernetes, the agents a CI job may use, and the CI job
// token scope.

// ProjectIdentity is a project's names and creation time.
type ProjectIdentity struct {
	ID                int64  `json:"id"`
	Description       string `json:"description"`
	Name              string `json:"name"`
	NameWithNamespace string `json:"name_with_namespace"`
	Path              string `json:"path"`
	PathWithNamespace string `json:"path_with_namespace"`
	CreatedAt         Time   `json:"created_at"`
}

func (r *Renderer) ProjectIdentity(p *model.Project) ProjectIdentity {
	return ProjectIdentity{ID: p.ID, Description: p.Description, Name: p.Name, NameWithNamespace: p.FullName(), Path: p.Path,
		PathWithNamespace: p.FullPath(), CreatedAt: Time(p.CreatedAt)}
}

type ClusterAgent struct {
	ID              int64           `json:"id"`
	Name            string          `json:"name"`
	ConfigProject   ProjectIdentity `json:"config_project"`
	CreatedAt       Time            `json:"created_at"`
	CreatedByUserID *int64          `json:"created_by_user_id"`
}

func (r *Renderer) ClusterAgent(a agents.Agent) ClusterAgent {
	j := ClusterAgent{ID: a.ID, Name: a.Name, ConfigProject: r.ProjectIdentity(&a.ConfigProject), CreatedAt: Time(a.CreatedAt)}
	if a.CreatedByUserID != 0 {
		id := a.CreatedByUserID
		j.CreatedByUserID = &id
	}
	return j
}

type AllowedAgent struct {
	ID            int64           `json:"id"`
	ConfigProject ProjectIdentity `json:"config_project"`
}

type AllowedAgentsJob struct {
	ID          int64  `json:"id"`
	Name        string `json:"name"`
	Stage       string `json:"stage"`
	ProjectID   int64  `json:"project_id"`
	ProjectName string `json:"project_name"`
}

type AllowedAgentsPipeline struct {
	ID        int64  `json:"id"`
	ProjectID int64  `json:"project_id"`
	SHA       string `json:"sha"`
	Ref       string `json:"ref"`
	Status    string `json:"status"`
	CreatedAt Time   `json:"created_at"`
	UpdatedAt Time   `json:"updated_at"`
	WebURL    string `json:"web_url"`
}

type GroupID struct {
	ID int64 `json:"id"`
}

// AllowedAgentsProject is the job's project; groups are the ids of the
// groups it lies under, top first.
type AllowedAgentsProject struct {
	ProjectIdentity
	Groups []GroupID `json:"groups"`
}

type AllowedAgents struct {
	AllowedAgents []AllowedAgent        `json:"allowed_agents"`
	Job           AllowedAgentsJob      `json:"job"`
	Pipeline      AllowedAgentsPipeline `json:"pipeline"`
	Project       AllowedAgentsProject  `json:"project"`
	User          *UserBasic            `json:"user"`
}

// AllowedAgents is the answer of GET /job/allowed_agents.
func (r *Renderer) AllowedAgents(v agents.Allowed) AllowedAgents {
	p, pl, job := &v.Project, v.Pipeline, v.Job
	j := AllowedAgents{AllowedAgents: make([]AllowedAgent, len(v.Agents)),
		Job: AllowedAgentsJob{ID: job.ID, Name: job.Name, Stage: job.Stage, ProjectID: job.ProjectID, ProjectName: p.Name},
		Pipeline: AllowedAgentsPipeline{ID: pl.ID, ProjectID: pl.ProjectID, SHA: pl.SHA, Ref: pl.Ref, Status: string(pl.Status),
			CreatedAt: Time(pl.CreatedAt), UpdatedAt: Time(pl.UpdatedAt), WebURL: r.pipelineURL(p.FullPath(), pl.ID)},
		Project: AllowedAgentsProject{ProjectIdentity: r.ProjectIdentity(p), Groups: []GroupID{}}}
	for i := range v.Agents {
		j.AllowedAgents[i] = AllowedAgent{ID: v.Agents[i].ID, ConfigProject: r.ProjectIdentity(&v.Agents[i].ConfigProject)}
	}
	if p.Namespace.Kind == model.NamespaceGroup {
		for _, s := range strings.Split(strings.TrimSuffix(p.Namespace.Traversal, "/"), "/") {
			if id, err := strconv.ParseInt(s, 10, 64); err == nil {
				j.Project.Groups = append(j.Project.Groups, GroupID{ID: id})
			}
		}
	}
	if v.User != nil {
		u := r.UserBasic(v.User)
		j.User = &u
	}
	return j
}

type JobTokenScope struct {
	InboundEnabled  bool `json:"inbound_enabled"`
	OutboundEnabled bool `json:"outbound_enabled"`
}

type ProjectScopeLink struct {
	SourceProjectID int64 `json:"source_project_id"`
	TargetProjectID int64 `json:"target_project_id"`
}

type GroupScopeLink struct {
	SourceProjectID int64 `json:"source_project_id"`
	TargetGroupID   int64 `json:"target_group_id"`
}

// BasicGroupDetails is a group as the job token groups allowlist shows it.
type BasicGroupDetails struct {
	ID     int64  `json:"id"`
	WebURL string `json:"web_url"`
	Name   string `json:"name"`
}

func (r *Renderer) BasicGroupDetails(n *model.Namespace) BasicGroupDetails {
	return BasicGroupDetails{ID: n.ID, WebURL: r.NamespaceWebURL(n), Name: n.Name}
}
