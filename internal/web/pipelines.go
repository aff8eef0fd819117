package web

import (
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"quarry/internal/auth"
	"quarry/internal/ci"
	"quarry/internal/model"
)

// The CI pages: a project's pipelines, one pipeline's stages and jobs,
// and the retry and cancel forms, through the CI service the API calls.

// pipelinesPerPage is the length of the pipelines list's pages.
const pipelinesPerPage = 20

// ciStatus is a pipeline's, stage's or job's status as the badge shows
// it.
type ciStatus string

// Label is the status as GitLab's badges name it.
func (s ciStatus) Label() string {
	switch model.CIStatus(s) {
	case model.StatusSuccess:
		return "passed"
	case model.StatusWaitingForResource:
		return "waiting"
	case "":
		return "unknown"
	}
	return string(s)
}

// pipelineItem is a pipeline as the list and its page show it.
type pipelineItem struct {
	ID, IID          int64
	URL              string
	Status           ciStatus
	Ref, RefURL      string
	Tag              bool
	SHA, Short       string
	CommitURL, Title string
	Source           string
	Duration         string
	User             string
	When, Ago        string
	Stages           []stageItem
	YAMLErrors       string
	Child            bool
}

// stageItem is a stage: its status and, on a pipeline's page, its jobs.
type stageItem struct {
	Name   string
	Status ciStatus
	Jobs   []jobItem
}

// jobItem is a job or bridge as a pipeline's page lists it.
type jobItem struct {
	ID           int64
	Name, URL    string
	Status       ciStatus
	Stage        string
	Duration     string
	AllowFailure bool
	Bridge       bool
	// Downstream is the pipeline a bridge started.
	DownstreamURL    string
	DownstreamID     int64
	DownstreamStatus ciStatus
}

// ciDuration is a duration as the pages show it ("1m 5s").
func ciDuration(start, end *time.Time, now time.Time) string {
	if start == nil {
		return ""
	}
	until := now
	if end != nil {
		until = *end
	}
	d := until.Sub(*start).Round(time.Second)
	if d < 0 {
		d = 0
	}
	switch {
	case d < time.Minute:
		return strconv.Itoa(int(d/time.Second)) + "s"
	case d < time.Hour:
		return strconv.Itoa(int(d/time.Minute)) + "m " + strconv.Itoa(int(d%time.Minute/time.Second)) + "s"
	}
	return strconv.Itoa(int(d/time.Hour)) + "h " + strconv.Itoa(int(d%time.Hour/time.Minute)) + "m"
}

func (h *Handler) pipelineItemOf(p model.Project, pl model.Pipeline, user *model.User) pipelineItem {
	base := "/" + p.FullPath() + "/-/"
	it := pipelineItem{ID: pl.ID, IID: pl.IID, URL: base + "pipelines/" + strconv.FormatInt(pl.ID, 10), Status: ciStatus(pl.Status),
		Ref: pl.Ref, Tag: pl.Tag, SHA: pl.SHA, Short: pl.SHA[:min(8, len(pl.SHA))], Source: pl.Source,
		Duration: ciDuration(pl.StartedAt, pl.FinishedAt, h.Now()), When: pl.CreatedAt.UTC().Format(time.RFC3339),
		Ago: ago(pl.CreatedAt), YAMLErrors: pl.YAMLErrors, Child: pl.ParentID != 0}
	if pl.Duration != nil && pl.FinishedAt != nil {
		// The pipeline's own duration (GitLab's: the time its jobs ran).
		start := pl.FinishedAt.Add(-time.Duration(*pl.Duration) * time.Second)
		it.Duration = ciDuration(&start, pl.FinishedAt, h.Now())
	}
	if pl.SHA != "" {
		it.CommitURL = base + "commit/" + url.PathEscape(pl.SHA)
	}
	if pl.Tag {
		it.RefURL = base + "tree/" + escapePath(pl.Ref)
	} else if pl.Ref != "" {
		it.RefURL = base + "commits/" + escapePath(pl.Ref)
	}
	if user != nil {
		it.User = user.Username
	}
	return it
}

// stagesOf groups jobs (of one pipeline) by stage, in the stages' order,
// each with its composite status.
func stagesOf(jobs []jobItem, idx map[int64]int, items []model.StatusItem) []stageItem {
	type stageAcc struct {
		idx   int
		name  string
		jobs  []jobItem
		items []model.StatusItem
	}
	byName := map[string]*stageAcc{}
	var order []*stageAcc
	for i, j := range jobs {
		s := byName[j.Stage]
		if s == nil {
			s = &stageAcc{idx: idx[j.ID], name: j.Stage}
			byName[j.Stage] = s
			order = append(order, s)
		}
		s.jobs = append(s.jobs, j)
		s.items = append(s.items, items[i])
	}
	sort.SliceStable(order, func(a, b int) bool { return order[a].idx < order[b].idx })
	out := make([]stageItem, len(order))
	for i, s := range order {
		st, ok := model.Composite(s.items, false)
		if !ok {
			st = model.StatusCreated
		}
		out[i] = stageItem{Name: s.name, Status: ciStatus(st), Jobs: s.jobs}
	}
	return out
}

// pipelinesBody is the data of the pipelines list.
type pipelinesBody struct {
	projectHead
	CITabs     []ciTab // Pipelines | Jobs
	Pipelines  []pipelineItem
	Scope      string
	Status     string
	Tabs       []ciTab
	Statuses   []string
	Page       int
	Prev, Next string
}

// ciTab is a scope of the pipelines list.
type ciTab struct {
	Name, URL string
	Current   bool
}

// pipelineScopes are the list's tabs, as GitLab's: all, finished, branches,
// tags, and the running and pending ones.
var pipelineScopes = []struct{ scope, name string }{
	{"", "All"}, {"running", "Running"}, {"pending", "Pending"}, {"finished", "Finished"}, {"branches", "Branches"}, {"tags", "Tags"},
}

// pipelines is /-/pipelines: a project's pipelines, newest first, by
// scope and status.
func (h *Handler) pipelines(w http.ResponseWriter, r *http.Request, a auth.Actor, full string) {
	v, n, ok := h.projectListPage(w, r, a, full)
	if !ok {
		return
	}
	p := v.Project
	q := r.URL.Query()
	var in ci.PipelinesInput
	in.Scope = q.Get("scope")
	if !slices.ContainsFunc(pipelineScopes, func(s struct{ scope, name string }) bool { return s.scope == in.Scope }) {
		h.errorPage(w, r, a, http.StatusBadRequest, "400: Bad request", "scope does not have a valid value")
		return
	}
	if st := q.Get("status"); st != "" {
		if !slices.Contains(model.PipelineStatuses, model.CIStatus(st)) {
			h.errorPage(w, r, a, http.StatusBadRequest, "400: Bad request", "status does not have a valid value")
			return
		}
		in.Status = model.CIStatus(st)
	}
	list, info, err := h.CI.Pipelines(r.Context(), a, full, in, model.Page{Number: n, PerPage: pipelinesPerPage})
	if err != nil {
		h.fail(w, r, a, err)
		return
	}
	body := pipelinesBody{projectHead: head(v), CITabs: ciTabs(p, "pipelines"), Scope: in.Scope, Status: string(in.Status), Page: n}
	for _, s := range model.PipelineStatuses {
		body.Statuses = append(body.Statuses, string(s))
	}
	for _, s := range pipelineScopes {
		u := "/" + p.FullPath() + "/-/pipelines"
		if s.scope != "" {
			u += "?scope=" + s.scope
		}
		body.Tabs = append(body.Tabs, ciTab{Name: s.name, URL: u, Current: s.scope == in.Scope})
	}
	ids := make([]int64, len(list))
	for i, pv := range list {
		ids[i] = pv.ID
	}
	jobs, err := h.CI.PipelinesJobs(r.Context(), a, full, ids)
	if err != nil {
		h.fail(w, r, a, err)
		return
	}
	byPipeline := map[int64][]model.Job{}
	for _, j := range jobs {
		byPipeline[j.PipelineID] = append(byPipeline[j.PipelineID], j)
	}
	titles := map[string]string{}
	for _, pv := range list {
		it := h.pipelineItemOf(p, pv.Pipeline, pv.User)
		if v.CanReadCode && pv.SHA != "" {
			t, seen := titles[pv.SHA]
			if !seen {
				if c, err := h.Files.Commit(r.Context(), a, full, pv.SHA, false); err == nil {
					t = c.Title()
				}
				titles[pv.SHA] = t
			}
			it.Title = t
		}
		js := byPipeline[pv.ID]
		sort.SliceStable(js, func(i, j int) bool { return js[i].ID < js[j].ID })
		items, statuses, idx := make([]jobItem, len(js)), make([]model.StatusItem, len(js)), map[int64]int{}
		for i, j := range js {
			items[i] = jobItem{ID: j.ID, Stage: j.Stage}
			statuses[i] = model.StatusItem{Status: j.Status, AllowFailure: j.AllowFailure}
			idx[j.ID] = j.StageIdx
		}
		it.Stages = stagesOf(items, idx, statuses)
		for i := range it.Stages {
			it.Stages[i].Jobs = nil
		}
		body.Pipelines = append(body.Pipelines, it)
	}
	body.Prev, body.Next = pager(r, n, info.HasMore)
	h.render(w, r, a, http.StatusOK, "pipelines", view{Title: "Pipelines · " + p.FullName(), Crumbs: refPageCrumbs(p, "Pipelines"), Body: body})
}

// pipelineBody is the data of a pipeline's page.
type pipelineBody struct {
	projectHead
	CITabs    []ciTab // Pipelines | Jobs
	Pipeline  pipelineItem
	ParentURL string
	ParentID  int64
	Stages    []stageItem
	// Downstream are the pipelines the bridges started.
	Downstream []jobItem
	MayRetry   bool
	MayCancel  bool
	RetryURL   string
	CancelURL  string
	// Following: the page polls JSONURL until the pipeline is done.
	Following bool
	JSONURL   string
}

// pathID reads a pipeline's or job's id from a path segment.
func pathID(s string) (int64, bool) {
	if s == "" || len(s) > 18 || s[0] == '0' {
		return 0, false
	}
	n, err := strconv.ParseInt(s, 10, 64)
	return n, err == nil && n > 0
}

// pipelinesRoute serves /-/pipelines and what is under it.
func (h *Handler) pipelinesRoute(w http.ResponseWriter, r *http.Request, a auth.Actor, full, rest string) {
	if rest == "" {
		h.pipelines(w, r, a, full)
		return
	}
	if num, ok := strings.CutSuffix(rest, ".json"); ok {
		id, ok := pathID(num)
		if !ok {
			h.notFound(w, r, a)
			return
		}
		h.pipelineJSON(w, r, a, full, id)
		return
	}
	id, ok := pathID(rest)
	if !ok {
		h.notFound(w, r, a)
		return
	}
	h.pipeline(w, r, a, full, id)
}

// following reports whether a pipeline's page follows its jobs: until it
// is done, or waits for a person (manual).
func following(st model.CIStatus) bool {
	return !st.Completed() && st != model.StatusManual
}

// pipelineAnswer is a pipeline's JSON view (/-/pipelines/<id>.json): its
// status, its stages' and its jobs' (as its page shows them), and
// whether it is done (the page stops following).
type pipelineAnswer struct {
	ID       int64        `json:"id"`
	Status   string       `json:"status"`
	Label    string       `json:"status_label"`
	Complete bool         `json:"complete"`
	Duration string       `json:"duration"`
	Stages   []statusJSON `json:"stages"`
	Jobs     []statusJSON `json:"jobs"`
}

// statusJSON is a stage's or job's status in pipelineAnswer.
type statusJSON struct {
	ID       int64  `json:"id,omitempty"`
	Name     string `json:"name"`
	Status   string `json:"status"`
	Label    string `json:"status_label"`
	Duration string `json:"duration,omitempty"`
}

// pipelineGraph reads a pipeline with its jobs grouped in stages, as its
// page and its JSON view show them.
func (h *Handler) pipelineGraph(r *http.Request, a auth.Actor, p model.Project, full string, id int64) (ci.PipelineGraph, []stageItem, error) {
	g, err := h.CI.PipelineWithJobs(r.Context(), a, full, id)
	if err != nil {
		return g, nil, err
	}
	items, statuses, idx := make([]jobItem, 0, len(g.Jobs)), make([]model.StatusItem, 0, len(g.Jobs)), map[int64]int{}
	for _, j := range g.Jobs {
		it := h.jobItemOf(p, j)
		if d := j.Downstream; d != nil && d.ProjectID != p.ID {
			// A multi-project pipeline: linked when the actor may see
			// its project.
			if dp, _, err := h.Projects.Resolve(r.Context(), a, strconv.FormatInt(d.ProjectID, 10)); err == nil {
				it.DownstreamURL = "/" + dp.FullPath() + "/-/pipelines/" + strconv.FormatInt(d.ID, 10)
			}
		}
		items = append(items, it)
		statuses = append(statuses, model.StatusItem{Status: j.Status, AllowFailure: j.AllowFailure})
		idx[j.ID] = j.StageIdx
	}
	return g, stagesOf(items, idx, statuses), nil
}

// pipelineJSON is /-/pipelines/<id>.json: what the pipeline's page polls
// while the pipeline runs, for whoever may see the page.
func (h *Handler) pipelineJSON(w http.ResponseWriter, r *http.Request, a auth.Actor, full string, id int64) {
	v, err := h.resolveProject(r, a, full)
	if err != nil {
		h.fail(w, r, a, err)
		return
	}
	g, stages, err := h.pipelineGraph(r, a, v.Project, full, id)
	if err != nil {
		h.fail(w, r, a, err)
		return
	}
	it := h.pipelineItemOf(v.Project, g.Pipeline, g.User)
	ans := pipelineAnswer{ID: g.ID, Status: string(g.Status), Label: it.Status.Label(), Complete: !following(g.Status),
		Duration: it.Duration, Stages: []statusJSON{}, Jobs: []statusJSON{}}
	for _, s := range stages {
		ans.Stages = append(ans.Stages, statusJSON{Name: s.Name, Status: string(s.Status), Label: s.Status.Label()})
		for _, j := range s.Jobs {
			ans.Jobs = append(ans.Jobs, statusJSON{ID: j.ID, Name: j.Name, Status: string(j.Status), Label: j.Status.Label(), Duration: j.Duration})
		}
	}
	writeJSON(w, http.StatusOK, ans)
}

// pipeline is /-/pipelines/<id>: the stages and their jobs, the
// downstream pipelines, and the forms to retry and cancel.
func (h *Handler) pipeline(w http.ResponseWriter, r *http.Request, a auth.Actor, full string, id int64) {
	v, err := h.resolveProject(r, a, full)
	if err != nil {
		h.fail(w, r, a, err)
		return
	}
	p := v.Project
	g, stages, err := h.pipelineGraph(r, a, p, full, id)
	if err != nil {
		h.fail(w, r, a, err)
		return
	}
	body := pipelineBody{projectHead: head(v), CITabs: ciTabs(p, "pipelines"), Pipeline: h.pipelineItemOf(p, g.Pipeline, g.User),
		Stages: stages, Following: following(g.Status), JSONURL: "/" + p.FullPath() + "/-/pipelines/" + strconv.FormatInt(g.ID, 10) + ".json"}
	if v.CanReadCode && g.SHA != "" {
		if c, err := h.Files.Commit(r.Context(), a, full, g.SHA, false); err == nil {
			body.Pipeline.Title = c.Title()
		}
	}
	if g.Parent != nil {
		body.ParentID = g.Parent.ID
		body.ParentURL = "/" + p.FullPath() + "/-/pipelines/" + strconv.FormatInt(g.Parent.ID, 10)
	}
	retryable := false
	for _, st := range stages {
		for _, it := range st.Jobs {
			if it.Bridge && it.DownstreamID != 0 {
				body.Downstream = append(body.Downstream, it)
			}
			if it.Status == ciStatus(model.StatusFailed) || it.Status == ciStatus(model.StatusCanceled) {
				retryable = true
			}
		}
	}
	base := body.Pipeline.URL
	body.MayRetry = g.MayRun && retryable
	body.MayCancel = g.MayRun && g.Status.Cancelable()
	body.RetryURL, body.CancelURL = base+"/retry", base+"/cancel"
	h.render(w, r, a, http.StatusOK, "pipeline", view{Title: "Pipeline #" + strconv.FormatInt(g.ID, 10) + " · " + p.FullName(),
		Crumbs: append(projectCrumbs(p), crumb{Name: "Pipelines", URL: "/" + p.FullPath() + "/-/pipelines"},
			crumb{Name: "#" + strconv.FormatInt(g.ID, 10)}), Body: body})
}

func (h *Handler) jobItemOf(p model.Project, j ci.JobView) jobItem {
	it := jobItem{ID: j.ID, Name: j.Name, Status: ciStatus(j.Status), Stage: j.Stage, AllowFailure: j.AllowFailure,
		Duration: ciDuration(j.StartedAt, j.FinishedAt, h.Now()), Bridge: j.Kind == model.JobBridge}
	if !it.Bridge {
		it.URL = "/" + p.FullPath() + "/-/jobs/" + strconv.FormatInt(j.ID, 10)
	}
	if d := j.Downstream; d != nil {
		it.DownstreamID, it.DownstreamStatus = d.ID, ciStatus(d.Status)
		if d.ProjectID == p.ID {
			it.DownstreamURL = "/" + p.FullPath() + "/-/pipelines/" + strconv.FormatInt(d.ID, 10)
		}
	}
	return it
}

// ciPost serves the CI pages' forms (POST): retry and cancel a pipeline;
// retry, cancel and play a job. It reports whether the path was one of
// them.
func (h *Handler) ciPost(w http.ResponseWriter, r *http.Request, a auth.Actor) bool {
	full, action, ok := strings.Cut(strings.Trim(r.URL.Path, "/"), "/-/")
	if !ok || full == "" {
		return false
	}
	parts := strings.Split(action, "/")
	if len(parts) != 3 {
		return false
	}
	id, ok := pathID(parts[1])
	if !ok {
		return false
	}
	kind, verb := parts[0], parts[2]
	switch {
	case kind == "pipelines" && (verb == "retry" || verb == "cancel"):
		h.pipelineAction(w, r, a, full, id, verb)
	case kind == "jobs" && (verb == "retry" || verb == "cancel" || verb == "play"):
		h.jobActionPost(w, r, a, full, id, verb)
	default:
		return false
	}
	return true
}

// refused answers an action the service refused: what the actor may not
// see is a 404 (or sign-in), what it may see but not do is the API's
// 403, and a bad request is a 400.
func (h *Handler) refused(w http.ResponseWriter, r *http.Request, a auth.Actor, err error) {
	var me *model.Error
	if asError(err, &me) && me.Kind == model.KindForbidden {
		if !a.SignedIn() && wantsHTML(r) {
			redirectToSignIn(w, r)
			return
		}
		msg := strings.TrimPrefix(me.Message, "403 Forbidden - ")
		if msg == "" || msg == "403 Forbidden" {
			msg = "You are not allowed to do this."
		}
		h.errorPage(w, r, a, http.StatusForbidden, "403: Forbidden", msg)
		return
	}
	h.fail(w, r, a, err)
}

// pipelineAction retries or cancels a pipeline (run_pipeline, as the
// API) and goes back to its page.
func (h *Handler) pipelineAction(w http.ResponseWriter, r *http.Request, a auth.Actor, full string, id int64, verb string) {
	page := "/" + full + "/-/pipelines/" + strconv.FormatInt(id, 10)
	if !a.SignedIn() {
		signInThen(w, r, page)
		return
	}
	// The pipeline must be one the actor may see: else a 404.
	if _, err := h.CI.Pipeline(r.Context(), a, full, id); err != nil {
		h.fail(w, r, a, err)
		return
	}
	var err error
	if verb == "retry" {
		_, err = h.CI.RetryPipeline(r.Context(), a, full, id)
	} else {
		_, err = h.CI.CancelPipeline(r.Context(), a, full, id)
	}
	if err != nil {
		h.refused(w, r, a, err)
		return
	}
	http.Redirect(w, r, page, http.StatusSeeOther)
}

// signInThen sends an anonymous visitor's form to sign in, and back to
// page after.
func signInThen(w http.ResponseWriter, r *http.Request, page string) {
	http.Redirect(w, r, "/users/sign_in?redirect_to="+url.QueryEscape(page), http.StatusSeeOther)
}
