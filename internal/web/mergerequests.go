package web

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"quarry/internal/approvals"
	"quarry/internal/auth"
	"quarry/internal/ci"
	"quarry/internal/mergerequests"
	"quarry/internal/model"
	"quarry/internal/projects"
)

// The merge request pages: /-/merge_requests (the list, by state),
// /-/merge_requests/<iid> (the overview: status, approvals and their
// rules, pipeline, and the actions the viewer may take), its commits and
// its changes. Actions are POST forms that call the services the API
// calls, then send the browser back to the overview (POST-redirect-GET)
// with a flash message, or show the service's refusal with the API's
// status.

// mrPerPage is the length of the merge request list's pages.
const mrPerPage = 20

// flashCookie carries the message of an action to the page the browser
// is sent back to: a key of flashMessages, never text of the request.
const flashCookie = "_quarry_flash"

var flashMessages = map[string]string{
	"approved":   "You approved this merge request.",
	"unapproved": "You revoked your approval.",
	"merged":     "The merge request was merged.",
	"closed":     "The merge request was closed.",
	"reopened":   "The merge request was reopened.",
	"rebased":    "The source branch was rebased onto the target branch.",
}

// pipelineBadge is a pipeline's status with a link to its page.
type pipelineBadge struct {
	ID     int64
	Status string
	URL    string
}

func pipelineOf(v mergerequests.View) *pipelineBadge {
	pl := v.HeadPipeline
	if pl == nil {
		return nil
	}
	return &pipelineBadge{ID: pl.ID, Status: string(pl.Status),
		URL: "/" + v.Source.FullPath() + "/-/pipelines/" + strconv.FormatInt(pl.ID, 10)}
}

// userLink is a person a page names, linked to their profile.
type userLink struct {
	Name, Username, URL string
}

func userOf(users map[int64]model.User, id int64) *userLink {
	u, ok := users[id]
	if !ok {
		return nil
	}
	return &userLink{Name: u.Name, Username: u.Username, URL: "/" + url.PathEscape(u.Username)}
}

func usersOf(users map[int64]model.User, ids []int64) []userLink {
	var out []userLink
	for _, id := range ids {
		if u := userOf(users, id); u != nil {
			out = append(out, *u)
		}
	}
	return out
}

// mrItem is a merge request as the list shows it.
type mrItem struct {
	IID                 int64
	URL, Title, State   string
	Draft               bool
	Author              *userLink
	Source, Target      string
	SourceURL           string
	Created, CreatedAgo string
	Labels              []string
	Pipeline            *pipelineBadge
	Approvals, Required int
}

// stateTab is one of the list's state filters.
type stateTab struct {
	Name, Label, URL string
	Current          bool
}

// mrListBody is the data of the merge request list.
type mrListBody struct {
	projectHead
	State      string
	Tabs       []stateTab
	Items      []mrItem
	Page       int
	Prev, Next string
}

// mrURL is a merge request's overview path.
func mrURL(p model.Project, iid int64) string {
	return "/" + p.FullPath() + "/-/merge_requests/" + strconv.FormatInt(iid, 10)
}

// mergeRequests routes /-/merge_requests/…: the list, a merge request's
// overview, commits and changes.
func (h *Handler) mergeRequests(w http.ResponseWriter, r *http.Request, a auth.Actor, full, rest string) {
	if rest == "" {
		h.mrList(w, r, a, full)
		return
	}
	num, page, _ := strings.Cut(rest, "/")
	iid, ok := parseIID(num)
	if !ok {
		h.notFound(w, r, a)
		return
	}
	switch page {
	case "":
		h.mrOverview(w, r, a, full, iid)
	case "commits":
		h.mrCommits(w, r, a, full, iid)
	case "diffs":
		h.mrDiffs(w, r, a, full, iid)
	default:
		h.notFound(w, r, a)
	}
}

// parseIID reads a merge request's iid from a path segment.
func parseIID(s string) (int64, bool) {
	if s == "" || len(s) > 18 || s[0] == '0' {
		return 0, false
	}
	var n int64
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
		n = n*10 + int64(s[i]-'0')
	}
	return n, true
}

// mrList is /-/merge_requests: a project's merge requests in one state
// (?state=opened, merged, closed or all), newest first, a page at a time.
func (h *Handler) mrList(w http.ResponseWriter, r *http.Request, a auth.Actor, full string) {
	v, n, ok := h.projectListPage(w, r, a, full)
	if !ok {
		return
	}
	p := v.Project
	state := r.URL.Query().Get("state")
	switch state {
	case "":
		state = "opened"
	case "opened", "merged", "closed", "all":
	default:
		h.errorPage(w, r, a, http.StatusBadRequest, "400: Bad request", "state should be opened, merged, closed or all")
		return
	}
	var in mergerequests.ListInput
	in.State = state
	list, info, err := h.MRs.List(r.Context(), a, full, "", in, model.Page{Number: n, PerPage: mrPerPage})
	if err != nil {
		h.fail(w, r, a, err)
		return
	}
	// The page's head pipelines and approvals, each in one read.
	heads := make([]ci.HeadRef, len(list))
	mrs := make([]model.MergeRequest, len(list))
	for i, m := range list {
		heads[i] = ci.HeadRef{ProjectID: m.SourceProjectID, Branch: m.SourceBranch, SHA: m.HeadSHA}
		mrs[i] = m.MergeRequest
	}
	if h.CI != nil {
		found, err := h.CI.HeadPipelines(r.Context(), heads)
		if err != nil {
			h.failIn(w, r, a, err)
			return
		}
		for i := range list {
			if pl, ok := found[heads[i]]; ok {
				list[i].HeadPipeline = &pl
			}
		}
	}
	approved, err := h.Approvals.Summaries(r.Context(), a, full, mrs)
	if err != nil {
		h.failIn(w, r, a, err)
		return
	}
	base := "/" + p.FullPath() + "/-/merge_requests"
	body := mrListBody{projectHead: head(v), State: state, Page: n}
	for _, t := range [][2]string{{"opened", "Open"}, {"merged", "Merged"}, {"closed", "Closed"}, {"all", "All"}} {
		body.Tabs = append(body.Tabs, stateTab{Name: t[0], Label: t[1], URL: base + "?state=" + t[0], Current: t[0] == state})
	}
	for _, m := range list {
		it := mrItem{IID: m.IID, URL: mrURL(p, m.IID), Title: m.Title, State: m.State, Draft: m.Draft(),
			Author: userOf(m.Users, m.AuthorID), Source: m.SourceBranch, Target: m.TargetBranch,
			Created: m.CreatedAt.UTC().Format("Jan 2, 2006"), CreatedAgo: ago(m.CreatedAt), Labels: m.Labels,
			Pipeline: pipelineOf(m)}
		if m.Source.ID != 0 {
			it.SourceURL = "/" + m.Source.FullPath() + "/-/tree/" + escapePath(m.SourceBranch)
		}
		sum := approved[m.ID]
		it.Approvals, it.Required = sum.Approvals, sum.Required
		body.Items = append(body.Items, it)
	}
	body.Prev, body.Next = pager(r, n, info.HasMore)
	h.render(w, r, a, http.StatusOK, "mr_list", view{Title: "Merge requests · " + p.FullName(),
		Crumbs: refPageCrumbs(p, "Merge requests"), Body: body})
}

// mrHeader is what every page of a merge request shows above its own
// part: title, state, people, branches and the tabs.
type mrHeader struct {
	IID                  int64
	Title, State         string
	Draft                bool
	Author               *userLink
	Created, CreatedAgo  string
	Source, Target       string
	SourceURL, TargetURL string
	URL                  string // the overview
	CommitsURL, DiffsURL string
	ChangesCount         string
	Tab                  string // overview, commits, diffs
	MergedBy, ClosedBy   *userLink
	MergedAgo, ClosedAgo string
	MergeCommit          string
	MergeCommitURL       string
	Assignees, Reviewers []userLink
	SourceGone, Forked   bool
	SourceProject        string
	HeadSHA              string
	MergeLabel           string
	DetailedStatus       string
	StatusText           string
	Blocked, Mergeable   bool
	Squash, RemoveBranch bool
	SquashLocked         bool
	Pipeline             *pipelineBadge
	DescriptionHTML      template.HTML
}

func mrHeaderOf(v mergerequests.View, tab string) mrHeader {
	p := v.Target
	u := mrURL(p, v.IID)
	hd := mrHeader{IID: v.IID, Title: v.Title, State: v.State, Draft: v.Draft(), Author: userOf(v.Users, v.AuthorID),
		Created: v.CreatedAt.UTC().Format("Jan 2, 2006 15:04 UTC"), CreatedAgo: ago(v.CreatedAt),
		Source: v.SourceBranch, Target: v.TargetBranch,
		TargetURL: "/" + p.FullPath() + "/-/tree/" + escapePath(v.TargetBranch),
		URL:       u, CommitsURL: u + "/commits", DiffsURL: u + "/diffs", ChangesCount: v.ChangesCount, Tab: tab,
		MergedBy: userOf(v.Users, v.MergedByID), ClosedBy: userOf(v.Users, v.ClosedByID),
		Assignees: usersOf(v.Users, v.AssigneeIDs), Reviewers: usersOf(v.Users, v.ReviewerIDs), HeadSHA: v.HeadSHA,
		Pipeline: pipelineOf(v)}
	if v.Source.ID == 0 {
		hd.SourceGone = true
	} else {
		hd.SourceURL = "/" + v.Source.FullPath() + "/-/tree/" + escapePath(v.SourceBranch)
		if v.Source.ID != p.ID {
			hd.Forked, hd.SourceProject = true, v.Source.FullPath()
		}
	}
	if v.MergedAt != nil {
		hd.MergedAgo = ago(*v.MergedAt)
	}
	if v.ClosedAt != nil {
		hd.ClosedAgo = ago(*v.ClosedAt)
	}
	if c := v.MergeCommitSHA; c != "" {
		hd.MergeCommit, hd.MergeCommitURL = c[:min(8, len(c))], "/"+p.FullPath()+"/-/commit/"+url.PathEscape(c)
	}
	return hd
}

// mergeMethodLabel is how the merge button names the project's method.
func mergeMethodLabel(method string) string {
	switch method {
	case "ff":
		return "Fast-forward merge"
	case "rebase_merge":
		return "Merge (semi-linear history)"
	}
	return "Merge"
}

// statusText is GitLab's merge check message of a detailed merge status.
func statusText(status string) string {
	switch status {
	case "mergeable":
		return "Ready to merge!"
	case "unchecked":
		return "Checking whether this merge request can be merged…"
	case "draft_status":
		return "Merge blocked: merge request must be marked as ready. It's still marked as draft."
	case "broken_status":
		return "Merge blocked: merge conflicts must be resolved."
	case "not_approved":
		return "Merge blocked: all required approvals must be given."
	case "ci_must_pass":
		return "Merge blocked: pipeline must succeed. Push a commit that fixes the failure or learn about other solutions."
	case "need_rebase":
		return "Merge blocked: the source branch must be rebased onto the target branch."
	}
	return ""
}

// ruleRow is one approval rule as the overview shows it.
type ruleRow struct {
	Name, Type          string
	Required, Left      int
	Approved            bool
	Overridden          bool
	Approvers           []userLink // eligible
	ApprovedBy          []userLink
	Groups              []string
	AnyApproverRequired bool
}

// approvalBox is the approvals part of the overview.
type approvalBox struct {
	ApprovedBy            []userLink
	Required, Left, Given int
	Approved, Overwritten bool
	Rules                 []ruleRow
	CanApprove            bool
	CanUnapprove          bool
	RequirePassword       bool
}

func approvalBoxOf(av approvals.View) approvalBox {
	st := av.State
	box := approvalBox{ApprovedBy: usersOf(av.Users, st.ApprovedBy), Required: st.ApprovalsRequired, Left: st.ApprovalsLeft,
		Given: len(st.ApprovedBy), Approved: st.Approved, Overwritten: st.Overwritten,
		CanApprove: av.UserCanApprove && !av.UserHasApproved, CanUnapprove: av.UserHasApproved && av.MR.State == model.MRStateOpened,
		RequirePassword: av.RequirePassword}
	for _, rs := range st.Rules {
		row := ruleRow{Name: rs.Name, Type: rs.RuleType, Required: rs.ApprovalsRequired, Left: rs.ApprovalsLeft, Approved: rs.Approved,
			Overridden: rs.Overridden, Approvers: usersOf(av.Users, rs.Eligible), ApprovedBy: usersOf(av.Users, rs.ApprovedBy)}
		if row.Name == "" && rs.RuleType == model.RuleAnyApprover {
			row.Name = "All eligible users"
		}
		for _, gid := range rs.GroupIDs {
			if g, ok := av.Groups[gid]; ok {
				row.Groups = append(row.Groups, g.FullPath)
			}
		}
		box.Rules = append(box.Rules, row)
	}
	return box
}

// mrBody is the data of a merge request's overview.
type mrBody struct {
	projectHead
	MR          mrHeader
	Approvals   approvalBox
	Flash       string
	Alert       string
	ActionURL   string // the overview's path: actions are ActionURL + "/<action>"
	SignedIn    bool
	CanMerge    bool // the viewer may merge (the button shows, enabled when Mergeable)
	CanRebase   bool
	CanClose    bool
	CanReopen   bool
	ShowActions bool
}

// mrOverview is /-/merge_requests/<iid>.
func (h *Handler) mrOverview(w http.ResponseWriter, r *http.Request, a auth.Actor, full string, iid int64) {
	flash := ""
	if c, err := r.Cookie(flashCookie); err == nil {
		flash = flashMessages[c.Value]
		h.clearFlash(w)
	}
	h.renderMR(w, r, a, full, iid, http.StatusOK, flash, "")
}

// mrPage resolves the project and the merge request of a merge
// request's page, or answers the failure (ok false).
func (h *Handler) mrPage(w http.ResponseWriter, r *http.Request, a auth.Actor, full string, iid int64) (projects.View, mergerequests.View, bool) {
	pv, err := h.resolveProject(r, a, full)
	if err != nil {
		h.fail(w, r, a, err)
		return projects.View{}, mergerequests.View{}, false
	}
	mv, err := h.MRs.Get(r.Context(), a, full, iid)
	if err != nil {
		h.fail(w, r, a, err)
		return projects.View{}, mergerequests.View{}, false
	}
	return pv, mv, true
}

// renderMR shows a merge request's overview with status, and a flash
// message or an alert (a refused action).
func (h *Handler) renderMR(w http.ResponseWriter, r *http.Request, a auth.Actor, full string, iid int64, status int, flash, alert string) {
	pv, mv, ok := h.mrPage(w, r, a, full, iid)
	if !ok {
		return
	}
	av, err := h.Approvals.State(r.Context(), a, full, iid)
	if err != nil {
		h.fail(w, r, a, err)
		return
	}
	p := pv.Project
	hd := mrHeaderOf(mv, "overview")
	if strings.TrimSpace(mv.Description) != "" {
		hd.DescriptionHTML = renderMarkdown([]byte(mv.Description), p.FullPath(), mv.TargetBranch, "")
	}
	hd.MergeLabel = mergeMethodLabel(p.Settings.MergeMethod)
	hd.DetailedStatus = mv.DetailedMergeStatus()
	hd.StatusText = statusText(hd.DetailedStatus)
	hd.Mergeable = hd.DetailedStatus == "mergeable"
	hd.Blocked = mv.State == model.MRStateOpened && !hd.Mergeable
	hd.Squash = mv.Squash || p.Settings.SquashOption == "always"
	hd.SquashLocked = p.Settings.SquashOption == "always" || p.Settings.SquashOption == "never"
	hd.RemoveBranch = mv.RemoveSourceBranch
	body := mrBody{projectHead: head(pv), MR: hd, Approvals: approvalBoxOf(av), Flash: flash, Alert: alert,
		ActionURL: hd.URL, SignedIn: a.SignedIn(), CanMerge: mv.CanMerge}
	if a.SignedIn() {
		res := auth.Resource{Project: &p, Access: pv.Access, User: &model.User{ID: mv.AuthorID}}
		mayUpdate := auth.Can(a, auth.UpdateMergeRequest, res)
		body.CanClose = mayUpdate && mv.State == model.MRStateOpened
		body.CanReopen = mayUpdate && mv.State == model.MRStateClosed
		if mv.State == model.MRStateOpened && mv.Source.ID != 0 {
			if body.CanRebase, err = h.mayPushSource(r.Context(), a, mv); err != nil {
				h.failIn(w, r, a, err)
				return
			}
		}
	}
	body.ShowActions = body.CanMerge || body.CanRebase || body.CanClose || body.CanReopen ||
		body.Approvals.CanApprove || body.Approvals.CanUnapprove
	h.render(w, r, a, status, "mr_show", view{Title: mv.Title + " (!" + strconv.FormatInt(iid, 10) + ") · " + p.FullName(),
		Crumbs: mrCrumbs(p, iid), Body: body})
}

// mayPushSource is whether the actor may push to the merge request's
// source branch (who may rebase it, as the service decides).
func (h *Handler) mayPushSource(ctx context.Context, a auth.Actor, mv mergerequests.View) (bool, error) {
	src := mv.Source
	acc, err := h.Projects.Access(ctx, a, src.ID)
	if err != nil {
		return false, err
	}
	rules, err := h.Projects.ProtectedRules(ctx, src.ID)
	if err != nil && !errors.Is(err, model.ErrNotFound) {
		return false, err
	}
	return auth.Can(a, auth.PushCode, auth.Resource{Project: &src, Access: acc,
		Branch: &auth.Branch{Name: mv.SourceBranch, Rules: rules}}), nil
}

// mrCrumbs are the project's crumbs, its merge requests and this one.
func mrCrumbs(p model.Project, iid int64) []crumb {
	return append(projectCrumbs(p), crumb{Name: "Merge requests", URL: "/" + p.FullPath() + "/-/merge_requests"},
		crumb{Name: "!" + strconv.FormatInt(iid, 10)})
}

// mrCommitsBody is the data of a merge request's commits page.
type mrCommitsBody struct {
	projectHead
	MR         mrHeader
	Commits    []commitItem
	Page       int
	Prev, Next string
}

// mrCommits is /-/merge_requests/<iid>/commits: its commits, newest
// first, a page at a time.
func (h *Handler) mrCommits(w http.ResponseWriter, r *http.Request, a auth.Actor, full string, iid int64) {
	pv, mv, ok := h.mrPage(w, r, a, full, iid)
	if !ok {
		return
	}
	n, ok := h.pageNumber(w, r, a)
	if !ok {
		return
	}
	p, cs, info, err := h.MRs.Commits(r.Context(), a, full, iid, model.Page{Number: n, PerPage: commitsPerPage})
	if err != nil {
		h.failIn(w, r, a, err)
		return
	}
	body := mrCommitsBody{projectHead: head(pv), MR: mrHeaderOf(mv, "commits"), Page: n}
	for _, c := range cs {
		body.Commits = append(body.Commits, commitItemOf(p, c))
	}
	body.Prev, body.Next = pager(r, n, info.HasMore)
	h.render(w, r, a, http.StatusOK, "mr_commits", view{Title: "Commits · " + mv.Title + " (!" + strconv.FormatInt(iid, 10) + ") · " + p.FullName(),
		Crumbs: mrCrumbs(p, iid), Body: body})
}

// mrDiffsBody is the data of a merge request's changes page.
type mrDiffsBody struct {
	projectHead
	MR                     mrHeader
	Diff                   diffView // the toggle's state
	DiffHTML               template.HTML
	Overflow               bool
	InlineURL, ParallelURL string
}

// renderedDiff is a merge request's diff rendered once: the diff of two
// commits never changes.
type renderedDiff struct {
	HTML     template.HTML
	Overflow bool
}

// The rendered diffs of merge requests are cached (pageCache) by target
// project, base and head, and view, each at most maxCachedDiff bytes.
const maxCachedDiff = 1 << 20

// mrDiffs is /-/merge_requests/<iid>/diffs: the changes between the
// merge base and the head, inline or (?view=parallel) side by side, as
// bounded as a commit's diff. The rendered diff is kept for the next
// reader: its commits' diff does not change.
func (h *Handler) mrDiffs(w http.ResponseWriter, r *http.Request, a auth.Actor, full string, iid int64) {
	pv, mv, ok := h.mrPage(w, r, a, full, iid)
	if !ok {
		return
	}
	p := pv.Project
	parallel := r.URL.Query().Get("view") == "parallel"
	key := fmt.Sprintf("%d\x00%s\x00%s\x00%t", mv.Target.ID, mv.BaseSHA, mv.HeadSHA, parallel)
	rd, ok := cacheGet[renderedDiff](h.cache, kindDiff, key)
	if !ok {
		ch, err := h.MRs.Changes(r.Context(), a, full, iid)
		if err != nil {
			h.failIn(w, r, a, err)
			return
		}
		files := ch.Diffs
		dv := buildDiff(files[:min(len(files), maxDiffFiles)], parallel)
		dv.Truncated = len(files) > maxDiffFiles
		var b bytes.Buffer
		if err := h.pages.byName["mr_diffs"].ExecuteTemplate(&b, "diff", dv); err != nil {
			h.failIn(w, r, a, err)
			return
		}
		// The "diff" template escaped everything the repository names.
		rd = renderedDiff{HTML: template.HTML(b.String()), Overflow: ch.Overflow} //nolint:gosec
		key = fmt.Sprintf("%d\x00%s\x00%s\x00%t", ch.Target.ID, ch.BaseSHA, ch.HeadSHA, parallel)
		if b.Len() <= maxCachedDiff {
			cachePut(h.cache, kindDiff, key, rd, b.Len())
		}
	}
	u := mrURL(p, iid) + "/diffs"
	body := mrDiffsBody{projectHead: head(pv), MR: mrHeaderOf(mv, "diffs"), Diff: diffView{Parallel: parallel},
		DiffHTML: rd.HTML, Overflow: rd.Overflow, InlineURL: u + "?view=inline", ParallelURL: u + "?view=parallel"}
	h.render(w, r, a, http.StatusOK, "mr_diffs", view{Title: "Changes · " + mv.Title + " (!" + strconv.FormatInt(iid, 10) + ") · " + p.FullName(),
		Crumbs: mrCrumbs(p, iid), Body: body})
}

// mrAction is POST /-/merge_requests/<iid>/<action>: approve,
// unapprove, merge, close, reopen, rebase. An anonymous visitor signs in
// first; a refusal shows the overview with the service's message and the
// API's status.
func (h *Handler) mrAction(w http.ResponseWriter, r *http.Request, a auth.Actor, path string) {
	full, rest, _ := strings.Cut(strings.Trim(path, "/"), "/-/merge_requests/")
	num, action, _ := strings.Cut(rest, "/")
	iid, ok := parseIID(num)
	if !ok || full == "" || strings.Contains(full, "//") || !strings.Contains(full, "/") {
		h.notFound(w, r, a)
		return
	}
	flash, known := map[string]string{"approve": "approved", "unapprove": "unapproved", "merge": "merged",
		"close": "closed", "reopen": "reopened", "rebase": "rebased"}[action]
	if !known {
		h.notFound(w, r, a)
		return
	}
	if !a.SignedIn() {
		http.Redirect(w, r, "/users/sign_in?redirect_to="+url.QueryEscape("/"+full+"/-/merge_requests/"+num), http.StatusFound)
		return
	}
	if !h.readForm(w, r, a, maxFormBytes) {
		return
	}
	// The merge request must be one the actor sees: else 404, as a page.
	if _, err := h.resolveProject(r, a, full); err != nil {
		h.fail(w, r, a, err)
		return
	}
	ctx, f := r.Context(), r.PostForm
	var err error
	switch action {
	case "approve":
		_, err = h.Approvals.Approve(ctx, a, full, iid, f.Get("sha"), f.Get("approval_password"))
	case "unapprove":
		_, err = h.Approvals.Unapprove(ctx, a, full, iid)
	case "merge":
		in := mergerequests.MergeInput{SHA: f.Get("sha")}
		if f.Get("merge_options") == "1" {
			squash, remove := f.Get("squash") == "true", f.Get("should_remove_source_branch") == "true"
			in.Squash, in.ShouldRemoveSourceBranch = &squash, &remove
		}
		_, err = h.MRs.Merge(ctx, a, full, iid, in)
	case "close", "reopen":
		ev := action
		_, err = h.MRs.Update(ctx, a, full, iid, mergerequests.UpdateInput{StateEvent: &ev})
	case "rebase":
		err = h.MRs.Rebase(ctx, a, full, iid)
	}
	if err != nil {
		var me *model.Error
		if !errors.As(err, &me) {
			h.fail(w, r, a, err)
			return
		}
		h.renderMR(w, r, a, full, iid, actionStatus(me.Kind), "", actionMessage(action, me))
		return
	}
	http.SetCookie(w, &http.Cookie{Name: flashCookie, Value: flash, Path: "/", MaxAge: 60,
		HttpOnly: true, Secure: h.secure, SameSite: http.SameSiteLaxMode})
	http.Redirect(w, r, "/"+full+"/-/merge_requests/"+num, http.StatusSeeOther)
}

func (h *Handler) clearFlash(w http.ResponseWriter) {
	http.SetCookie(w, &http.Cookie{Name: flashCookie, Value: "", Path: "/", MaxAge: -1,
		HttpOnly: true, Secure: h.secure, SameSite: http.SameSiteLaxMode})
}

// actionStatus is the status the API answers for a refusal of kind k
// (a page answers no 304: anything below 400 is a bad request).
func actionStatus(k model.Kind) int {
	if s := k.Status(); s >= 400 {
		return s
	}
	return http.StatusBadRequest
}

// actionMessage is what the overview says of a refused action: the
// service's own message when it has one (GitLab's), else GitLab's words
// for the refusal.
func actionMessage(action string, me *model.Error) string {
	msg := strings.TrimSpace(me.Message)
	switch me.Kind {
	case model.KindUnauthorized, model.KindForbidden:
		if msg == "" || strings.HasPrefix(msg, "40") {
			return "You are not allowed to " + action + " this merge request."
		}
	case model.KindMethodNotAllowed:
		if action == "merge" {
			return "This merge request cannot be merged: it is not open, is a draft, waits for approvals or for its pipeline."
		}
		return "This merge request is not open."
	case model.KindNotFound:
		if action == "unapprove" {
			return "You have not approved this merge request."
		}
	}
	if msg == "" {
		return "The merge request could not be updated."
	}
	return msg
}
