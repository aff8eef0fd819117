package web

import (
	"net/http"
	"slices"
	"strconv"
	"time"

	"quarry/internal/auth"
	"quarry/internal/ci"
	"quarry/internal/model"
)

// The jobs list: /-/jobs, a project's jobs newest first (retried ones
// too, as GitLab lists them), by scope, with the forms the viewer may
// use on each, through the CI service's jobs list (read_build, as the
// API's GET /projects/:id/jobs).

// jobsPerPage is the length of the jobs list's pages (GitLab's).
const jobsPerPage = 30

// jobScope is a tab of the jobs list: the statuses it shows (nil: all).
type jobScope struct {
	scope, name string
	statuses    []model.CIStatus
}

// jobScopes are the list's tabs, as GitLab's project jobs page: all,
// pending, running and finished; a status narrows any of them.
var jobScopes = []jobScope{
	{"", "All", nil},
	{"pending", "Pending", []model.CIStatus{model.StatusPending}},
	{"running", "Running", []model.CIStatus{model.StatusRunning}},
	{"finished", "Finished", []model.CIStatus{model.StatusSuccess, model.StatusFailed, model.StatusCanceled}},
}

// jobRow is a job as the list shows it.
type jobRow struct {
	jobItem
	PipelineID, PipelineURL string
	Ref, RefURL             string
	Tag                     bool
	Short, CommitURL        string
	When, Ago               string
	Retried                 bool
	MayRetry, MayCancel     bool
	MayPlay                 bool
}

// jobsBody is the data of the jobs list.
type jobsBody struct {
	projectHead
	CITabs     []ciTab // Pipelines | Jobs
	Jobs       []jobRow
	Scope      string
	Status     string
	Tabs       []ciTab
	Statuses   []string
	Page       int
	Prev, Next string
}

// ciTabs are the tabs of the CI pages: the pipelines and the jobs lists.
func ciTabs(p model.Project, current string) []ciTab {
	base := "/" + p.FullPath() + "/-/"
	return []ciTab{{Name: "Pipelines", URL: base + "pipelines", Current: current == "pipelines"},
		{Name: "Jobs", URL: base + "jobs", Current: current == "jobs"}}
}

// jobsList is /-/jobs: a project's jobs, newest first, by scope and
// status.
func (h *Handler) jobsList(w http.ResponseWriter, r *http.Request, a auth.Actor, full string) {
	v, n, ok := h.projectListPage(w, r, a, full)
	if !ok {
		return
	}
	p := v.Project
	q := r.URL.Query()
	scope := q.Get("scope")
	i := slices.IndexFunc(jobScopes, func(s jobScope) bool { return s.scope == scope })
	if i < 0 {
		h.errorPage(w, r, a, http.StatusBadRequest, "400: Bad request", "scope does not have a valid value")
		return
	}
	in := ci.JobsInput{Scope: jobScopes[i].statuses}
	status := q.Get("status")
	if status != "" {
		st := model.CIStatus(status)
		if !slices.Contains(model.JobStatuses, st) || (in.Scope != nil && !slices.Contains(in.Scope, st)) {
			h.errorPage(w, r, a, http.StatusBadRequest, "400: Bad request", "status does not have a valid value")
			return
		}
		in.Scope = []model.CIStatus{st}
	}
	list, info, err := h.CI.Jobs(r.Context(), a, full, in, model.Page{Number: n, PerPage: jobsPerPage})
	if err != nil {
		h.fail(w, r, a, err)
		return
	}
	refs := make([]ci.RunRef, len(list))
	for i, j := range list {
		refs[i] = ci.RunRef{Ref: j.Ref, Tag: j.Tag}
	}
	may, err := h.CI.MayRunRefs(r.Context(), a, full, refs)
	if err != nil {
		h.fail(w, r, a, err)
		return
	}
	base := "/" + p.FullPath() + "/-/"
	body := jobsBody{projectHead: head(v), CITabs: ciTabs(p, "jobs"), Scope: scope, Status: status, Page: n}
	for _, s := range jobScopes {
		u := base + "jobs"
		if s.scope != "" {
			u += "?scope=" + s.scope
		}
		body.Tabs = append(body.Tabs, ciTab{Name: s.name, URL: u, Current: s.scope == scope})
	}
	for _, s := range model.JobStatuses {
		if jobScopes[i].statuses == nil || slices.Contains(jobScopes[i].statuses, s) {
			body.Statuses = append(body.Statuses, string(s))
		}
	}
	for _, j := range list {
		row := jobRow{jobItem: h.jobItemOf(p, j), PipelineID: strconv.FormatInt(j.PipelineID, 10), Ref: j.Ref, Tag: j.Tag,
			Short: j.SHA[:min(8, len(j.SHA))], When: j.CreatedAt.UTC().Format(time.RFC3339), Ago: ago(j.CreatedAt), Retried: j.Retried}
		row.PipelineURL = base + "pipelines/" + row.PipelineID
		if j.SHA != "" {
			row.CommitURL = base + "commit/" + j.SHA
		}
		if j.Tag {
			row.RefURL = base + "tree/" + escapePath(j.Ref)
		} else if j.Ref != "" {
			row.RefURL = base + "commits/" + escapePath(j.Ref)
		}
		row.MayRetry, row.MayCancel, row.MayPlay = jobActions(j.Job, may[ci.RunRef{Ref: j.Ref, Tag: j.Tag}])
		body.Jobs = append(body.Jobs, row)
	}
	body.Prev, body.Next = pager(r, n, info.HasMore)
	h.render(w, r, a, http.StatusOK, "jobs", view{Title: "Jobs · " + p.FullName(), Crumbs: refPageCrumbs(p, "Jobs"), Body: body})
}
