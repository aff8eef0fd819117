package entity

import (
	"quarry/internal/auth"
	"quarry/internal/ci"
	"quarry/internal/model"
)

// Runner entities: a runner as lists show it (and as a job names the
// runner that ran it), a runner's details, and a runner's jobs.

// Runner is GitLab's Ci::Runner entity.
type Runner struct {
	ID          int64   `json:"id"`
	Description string  `json:"description"`
	IPAddress   *string `json:"ip_address"`
	Active      bool    `json:"active"`
	Paused      bool    `json:"paused"`
	IsShared    bool    `json:"is_shared"`
	RunnerType  string  `json:"runner_type"`
	Name        *string `json:"name"`
	Online      bool    `json:"online"`
	Status      string  `json:"status"`
	CreatedAt   Time    `json:"created_at"`
}

// RunnerProject is a project a runner serves (GitLab's
// BasicProjectDetails as the runner details show it).
type RunnerProject struct {
	ID                int64  `json:"id"`
	Name              string `json:"name"`
	NameWithNamespace string `json:"name_with_namespace"`
	Path              string `json:"path"`
	PathWithNamespace string `json:"path_with_namespace"`
}

// RunnerGroup is the group of a group runner.
type RunnerGroup struct {
	ID     int64  `json:"id"`
	WebURL string `json:"web_url"`
	Name   string `json:"name"`
}

// RunnerDetails is GitLab's Ci::RunnerDetails entity.
type RunnerDetails struct {
	Runner
	TagList         []string        `json:"tag_list"`
	RunUntagged     bool            `json:"run_untagged"`
	Locked          bool            `json:"locked"`
	MaximumTimeout  *int            `json:"maximum_timeout"`
	AccessLevel     string          `json:"access_level"`
	Version         *string         `json:"version"`
	Revision        *string         `json:"revision"`
	Platform        *string         `json:"platform"`
	Architecture    *string         `json:"architecture"`
	ContactedAt     *Time           `json:"contacted_at"`
	MaintenanceNote *string         `json:"maintenance_note"`
	Projects        []RunnerProject `json:"projects"`
	Groups          []RunnerGroup   `json:"groups"`
}

// runnerStatus is the status the REST API shows (GitLab's deprecated
// REST status): a paused runner that is neither stale nor new is
// "paused".
func runnerStatus(st string, paused bool) string {
	if paused && (st == model.RunnerOnline || st == model.RunnerOffline) {
		return "paused"
	}
	return st
}

// Runner renders a runner in list form. Its address is shown only to
// those who may change it (showIP).
func (r *Renderer) Runner(m *model.Runner, showIP bool) Runner {
	st := m.Status(r.Now())
	out := Runner{ID: m.ID, Description: m.Description, Active: !m.Paused, Paused: m.Paused, IsShared: m.Shared(),
		RunnerType: m.Type, Name: StrPtr(m.Info.Name), Online: st == model.RunnerOnline, Status: runnerStatus(st, m.Paused),
		CreatedAt: Time(m.CreatedAt)}
	if showIP {
		out.IPAddress = StrPtr(m.Info.IPAddress)
	}
	return out
}

// RunnerDetails renders a runner's details for a caller: canUpdate shows
// the maintenance note and address; projects and groups are those of the
// runner the caller may see.
func (r *Renderer) RunnerDetails(m *model.Runner, canUpdate bool, projects []model.Project, groups []model.Namespace) RunnerDetails {
	out := RunnerDetails{Runner: r.Runner(m, canUpdate), TagList: m.TagList, RunUntagged: m.RunUntagged, Locked: m.Locked,
		AccessLevel: m.AccessLevel, Version: StrPtr(m.Info.Version), Revision: StrPtr(m.Info.Revision),
		Platform: StrPtr(m.Info.Platform), Architecture: StrPtr(m.Info.Architecture), ContactedAt: TimePtr(m.ContactedAt),
		Projects: make([]RunnerProject, 0, len(projects)), Groups: make([]RunnerGroup, 0, len(groups))}
	if out.TagList == nil {
		out.TagList = []string{}
	}
	if m.MaximumTimeout > 0 {
		t := m.MaximumTimeout
		out.MaximumTimeout = &t
	}
	if canUpdate {
		note := m.MaintenanceNote
		out.MaintenanceNote = &note
	}
	for i := range projects {
		p := &projects[i]
		out.Projects = append(out.Projects, RunnerProject{ID: p.ID, Name: p.Name, NameWithNamespace: p.FullName(), Path: p.Path,
			PathWithNamespace: p.FullPath()})
	}
	for i := range groups {
		g := &groups[i]
		out.Groups = append(out.Groups, RunnerGroup{ID: g.ID, WebURL: r.NamespaceWebURL(g), Name: g.Name})
	}
	return out
}

// RunnerJob is a job in a runner's job list (GitLab's
// JobBasicWithProject): the project's identity replaces the short form's
// project.
type RunnerJob struct {
	JobBasic
	Project ProjectIdentity `json:"project"`
}

// RunnerJobs renders a runner's jobs.
func (r *Renderer) RunnerJobs(list []ci.ProjectJobView, viewer auth.Actor) []RunnerJob {
	out := make([]RunnerJob, len(list))
	for i := range list {
		out[i] = RunnerJob{JobBasic: r.JobBasic(list[i].JobView, viewer), Project: r.ProjectIdentity(&list[i].Project)}
	}
	return out
}
