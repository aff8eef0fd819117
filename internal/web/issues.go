package web

import (
	"errors"
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"quarry/internal/auth"
	"quarry/internal/issues"
	"quarry/internal/model"
	"quarry/internal/notes"
	"quarry/internal/projects"
)

// The issue pages at GitLab's paths: /-/issues (the list: tabs by state
// with their counts, GitLab's query filters, release_tag among them),
// /-/issues/<iid> (an issue), /-/issues/new and /-/issues/<iid>/edit
// (the forms). Forms post to /-/issues (open), /-/issues/<iid> (edit)
// and /-/issues/<iid>/close|reopen, call the issues service the API
// calls, and send the browser to the issue (303) with a flash message;
// a refusal shows the form or the issue again with the service's
// message and the API's status.

// issuesPerPage is the length of the issue list's pages.
const issuesPerPage = 20

// maxIssueFormBytes bounds an issue's form: a description of GitLab's
// 1,048,576 characters, form-encoded, with room for the other fields.
const maxIssueFormBytes = 4 << 20

// maxIssueFilterBytes bounds each text filter of the list.
const maxIssueFilterBytes = 1024

// issueFlash are the messages the issue page shows after a form (the
// flash cookie names one).
var issueFlash = map[string]string{
	"issue_created":  "The issue was created.",
	"issue_updated":  "The issue was updated.",
	"issue_closed":   "The issue was closed.",
	"issue_reopened": "The issue was reopened.",
}

// issuesTab reports whether the project's issues are open to the viewer
// of v (the Issues tab): auth.ReadIssue's rule for a project the viewer
// sees.
func issuesTab(v projects.View) bool {
	switch v.Project.IssuesAccessLevel {
	case "disabled":
		return false
	case "private":
		return v.Access >= model.Guest || v.CanAdmin
	}
	return true
}

// openIssues is the count of open issues the Issues tab shows: the
// project's own, without the confidential ones for those below reporter
// (as the API's open_issues_count).
func openIssues(v projects.View) int {
	n := v.Project.OpenIssuesCount
	if v.Access < model.Reporter && !v.CanAdmin {
		n -= v.Project.OpenConfidentialIssuesCount
	}
	return max(n, 0)
}

// issueURL is an issue's page.
func issueURL(p model.Project, iid int64) string {
	return "/" + p.FullPath() + "/-/issues/" + strconv.FormatInt(iid, 10)
}

func issuesURL(p model.Project) string { return "/" + p.FullPath() + "/-/issues" }

// issueCrumbs are the project's crumbs, its issues and the last step.
func issueCrumbs(p model.Project, last string) []crumb {
	return append(projectCrumbs(p), crumb{Name: "Issues", URL: issuesURL(p)}, crumb{Name: last})
}

// issues routes GET /-/issues/…: the list, the new issue form, an issue
// and its edit form.
func (h *Handler) issues(w http.ResponseWriter, r *http.Request, a auth.Actor, full, rest string) {
	if rest == "" {
		h.issueList(w, r, a, full)
		return
	}
	if rest == "new" {
		h.issueNew(w, r, a, full)
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
		flash := ""
		if c, err := r.Cookie(flashCookie); err == nil {
			flash = issueFlash[c.Value]
			h.clearFlash(w)
		}
		h.renderIssue(w, r, a, full, iid, http.StatusOK, flash, "")
	case "edit":
		h.issueEdit(w, r, a, full, iid)
	default:
		h.notFound(w, r, a)
	}
}

// issueItem is an issue as the list shows it.
type issueItem struct {
	IID                 int64
	URL, Title, State   string
	Confidential        bool
	Labels              []string
	Milestone           string
	Assignees           []userLink
	Author              *userLink
	Created, CreatedAgo string
	Closed, ClosedAgo   string
	DueDate             string
}

func issueItemOf(v issues.View) issueItem {
	it := issueItem{IID: v.IID, URL: issueURL(v.Project, v.IID), Title: v.Title, State: v.State, Confidential: v.Confidential,
		Labels: v.Labels, Assignees: usersOf(v.Users, v.AssigneeIDs), Author: userOf(v.Users, v.AuthorID),
		Created: v.CreatedAt.UTC().Format("Jan 2, 2006 15:04 UTC"), CreatedAgo: ago(v.CreatedAt), DueDate: v.DueDate}
	if v.Milestone != nil {
		it.Milestone = v.Milestone.Title
	}
	if v.ClosedAt != nil {
		it.Closed, it.ClosedAgo = v.ClosedAt.UTC().Format("Jan 2, 2006 15:04 UTC"), ago(*v.ClosedAt)
	}
	return it
}

// issueTab is one of the list's state tabs with its count.
type issueTab struct {
	Name, Label, URL string
	Count            int
	Current          bool
}

// issueSortOption is one of the list's orders.
type issueSortOption struct {
	Value, Label string
}

// issueSorts are the orders the list offers (GitLab's sort values).
var issueSorts = []issueSortOption{{"created_date", "Created date"}, {"created_asc", "Oldest created"},
	{"updated_desc", "Updated date"}, {"updated_asc", "Oldest updated"}, {"due_date", "Due date"},
	{"due_date_desc", "Due date, later first"}, {"title_asc", "Title"}, {"title_desc", "Title, descending"}}

// issueListBody is the data of the issue list.
type issueListBody struct {
	projectHead
	State      string
	Tabs       []issueTab
	Items      []issueItem
	Page       int
	Prev, Next string
	// The filters as asked (the form shows them again).
	Scope, Search, Author, Assignee, Milestone, Label, Sort, ReleaseTag string
	Sorts                                                               []issueSortOption
	Filtered                                                            bool
	NewURL                                                              string
}

// issueFilter reads the list's query (GitLab's web parameters) into the
// service's filter; an error is a 400 with its message.
func issueFilter(q url.Values) (issues.Filter, string, error) {
	var f issues.Filter
	state := q.Get("state")
	switch state {
	case "":
		state = model.IssueOpened
	case model.IssueOpened, model.IssueClosed, "all":
	default:
		return f, "", model.Param("state should be opened, closed or all")
	}
	f.State = state
	for name, v := range q {
		if len(v) > issues.MaxLabels+1 {
			return f, "", model.Param(name + " has too many values")
		}
		for _, s := range v {
			if len(s) > maxIssueFilterBytes {
				return f, "", model.Param(name + " is too long")
			}
			if !utf8.ValidString(s) {
				return f, "", model.Param(name + " is invalid")
			}
		}
	}
	switch s := q.Get("scope"); s {
	case "", "all":
	case "created_by_me", "created-by-me", "assigned_to_me", "assigned-to-me":
		f.Scope = s
	case "authored": // GitLab's other name of created-by-me
		f.Scope = "created_by_me"
	default:
		return f, "", model.Param("scope should be all, created_by_me or assigned_to_me")
	}
	f.Labels = append(f.Labels, q["label_name[]"]...)
	for _, l := range q["label_name"] { // a string: comma-separated
		f.Labels = append(f.Labels, strings.Split(l, ",")...)
	}
	if l := q.Get("labels"); l != "" {
		f.Labels = append(f.Labels, strings.Split(l, ",")...)
	}
	if len(model.CleanList(f.Labels)) > issues.MaxLabels {
		return f, "", model.Param("labels has too many values")
	}
	f.Milestone = q.Get("milestone_title")
	f.AuthorUsername = q.Get("author_username")
	f.AssigneeUsername = q.Get("assignee_username")
	if f.AssigneeUsername == "" {
		f.AssigneeUsername = q.Get("assignee_username[]")
	}
	f.Search = strings.TrimSpace(q.Get("search"))
	f.ReleaseTag = q.Get("release_tag")
	switch q.Get("sort") {
	case "", "created_date", "created_desc":
	case "created_asc":
		f.Asc = true
	case "updated_desc":
		f.OrderBy = "updated_at"
	case "updated_asc":
		f.OrderBy, f.Asc = "updated_at", true
	case "due_date", "due_date_asc":
		f.OrderBy, f.Asc = "due_date", true
	case "due_date_desc":
		f.OrderBy = "due_date"
	case "title_asc":
		f.OrderBy, f.Asc = "title", true
	case "title_desc":
		f.OrderBy = "title"
	default:
		// GitLab keeps its default order for a sort it does not know.
	}
	return f, state, nil
}

// issueList is /-/issues: a project's issues in one state (tabs Open,
// Closed and All with their counts), filtered as GitLab's web list is,
// a page at a time; a fixed number of statements whatever the page's
// size.
func (h *Handler) issueList(w http.ResponseWriter, r *http.Request, a auth.Actor, full string) {
	v, n, ok := h.projectListPage(w, r, a, full)
	if !ok {
		return
	}
	q := r.URL.Query()
	f, state, err := issueFilter(q)
	if err != nil {
		h.fail(w, r, a, err)
		return
	}
	p, list, info, err := h.Issues.ProjectIssues(r.Context(), a, full, f, model.Page{Number: n, PerPage: issuesPerPage})
	if err != nil {
		h.fail(w, r, a, err)
		return
	}
	opened, closed, err := h.Issues.StateCounts(r.Context(), a, full, f)
	if err != nil {
		h.fail(w, r, a, err)
		return
	}
	body := issueListBody{projectHead: head(v), State: state, Page: n, Scope: q.Get("scope"), Search: f.Search,
		Author: f.AuthorUsername, Assignee: f.AssigneeUsername, Milestone: f.Milestone, Label: strings.Join(model.CleanList(f.Labels), ","),
		Sort: q.Get("sort"), ReleaseTag: f.ReleaseTag, Sorts: issueSorts}
	body.Filtered = body.Search != "" || body.Author != "" || body.Assignee != "" || body.Milestone != "" || body.Label != "" ||
		body.ReleaseTag != "" || f.Scope != ""
	if auth.Can(a, auth.CreateIssue, auth.Resource{Project: &p, Access: v.Access}) {
		body.NewURL = issuesURL(p) + "/new"
	}
	for _, t := range []struct {
		name, label string
		count       int
	}{{model.IssueOpened, "Open", opened}, {model.IssueClosed, "Closed", closed}, {"all", "All", opened + closed}} {
		tq := url.Values{}
		for k, vs := range q {
			if k != "state" && k != "page" {
				tq[k] = vs
			}
		}
		tq.Set("state", t.name)
		body.Tabs = append(body.Tabs, issueTab{Name: t.name, Label: t.label, Count: t.count, Current: t.name == state,
			URL: issuesURL(p) + "?" + tq.Encode()})
	}
	for _, i := range list {
		body.Items = append(body.Items, issueItemOf(i))
	}
	body.Prev, body.Next = pager(r, n, info.HasMore)
	h.render(w, r, a, http.StatusOK, "issue_list", view{Title: "Issues · " + p.FullName(),
		Crumbs: refPageCrumbs(p, "Issues"), Body: body})
}

// issueBody is the data of an issue's page.
type issueBody struct {
	projectHead
	Issue           issueItem
	DescriptionHTML template.HTML
	ClosedBy        *userLink
	Flash, Alert    string
	URL, EditURL    string
	CanUpdate       bool
	// Notes are a page of the issue's comments the viewer sees, oldest
	// first; CanComment shows the comment form.
	Notes                []noteItem
	NotesPrev, NotesNext string
	CanComment           bool
	// CanInternal shows the internal note box (reporters up).
	CanInternal        bool
	Upvotes, Downvotes int
}

// noteItem is a comment as the issue's page shows it.
type noteItem struct {
	ID                  int64
	Author              *userLink
	Created, CreatedAgo string
	Edited              bool
	Internal            bool
	BodyHTML            template.HTML
}

// notesPerPage is the issue page's page of comments.
const notesPerPage = 50

// maxNotesPage bounds the page number of the issue's comments.
const maxNotesPage = 10000

// renderIssue shows an issue with status, and a flash message or an
// alert (a refused form).
func (h *Handler) renderIssue(w http.ResponseWriter, r *http.Request, a auth.Actor, full string, iid int64, status int, flash, alert string) {
	pv, iv, ok := h.issuePage(w, r, a, full, iid)
	if !ok {
		return
	}
	p := pv.Project
	body := issueBody{projectHead: head(pv), Issue: issueItemOf(iv), ClosedBy: userOf(iv.Users, iv.ClosedByID), Flash: flash,
		Alert: alert, URL: issueURL(p, iid), EditURL: issueURL(p, iid) + "/edit", CanUpdate: mayUpdateIssue(a, pv, iv)}
	if strings.TrimSpace(iv.Description) != "" {
		ref := p.DefaultBranch
		if ref == "" {
			ref = "HEAD"
		}
		body.DescriptionHTML = renderMarkdown([]byte(iv.Description), p.FullPath(), ref, "")
	}
	if !h.issueNotes(w, r, a, full, iid, &body) {
		return
	}
	body.Upvotes, body.Downvotes = iv.Upvotes, iv.Downvotes
	h.render(w, r, a, status, "issue_show", view{Title: iv.Title + " (#" + strconv.FormatInt(iid, 10) + ") · Issues · " + p.FullName(),
		Crumbs: issueCrumbs(p, "#"+strconv.FormatInt(iid, 10)), Body: body})
}

// issueNotes fills the page's comments (its "page" parameter picks the
// page) and whether the viewer may comment; false when it answered a
// failure.
func (h *Handler) issueNotes(w http.ResponseWriter, r *http.Request, a auth.Actor, full string, iid int64, body *issueBody) bool {
	t, err := h.Notes.Target(r.Context(), a, full, iid)
	if err != nil {
		h.fail(w, r, a, err)
		return false
	}
	n := 1
	if v, err := strconv.Atoi(r.URL.Query().Get("page")); err == nil && v > 1 && v <= maxNotesPage {
		n = v
	}
	list, info, err := h.Notes.ListOf(r.Context(), t, notes.Listing{Asc: true}, model.Page{Number: n, PerPage: notesPerPage})
	if err != nil {
		h.fail(w, r, a, err)
		return false
	}
	ref := t.Project.DefaultBranch
	if ref == "" {
		ref = "HEAD"
	}
	for _, v := range list {
		item := noteItem{ID: v.ID, Created: v.CreatedAt.UTC().Format("Jan 2, 2006 15:04 UTC"), CreatedAgo: ago(v.CreatedAt),
			Edited: v.UpdatedAt.After(v.CreatedAt), Internal: v.Internal,
			BodyHTML: renderMarkdown([]byte(v.Body), t.Project.FullPath(), ref, "")}
		if v.Author != nil {
			item.Author = userOf(map[int64]model.User{v.Author.ID: *v.Author}, v.Author.ID)
		}
		body.Notes = append(body.Notes, item)
	}
	body.NotesPrev, body.NotesNext = pager(r, n, info.HasMore)
	body.CanComment, body.CanInternal = t.CanComment, t.SeeInternal
	return true
}

// issueComment answers the comment form: POST /-/issues/<iid>/notes,
// then back to the issue (303), or the issue with the refusal.
func (h *Handler) issueComment(w http.ResponseWriter, r *http.Request, a auth.Actor, full string, iid int64) {
	_, err := h.Notes.Create(r.Context(), a, full, iid, notes.CreateInput{Body: r.PostForm.Get("note"),
		Internal: r.PostForm.Get("internal") == "1"})
	if err != nil {
		var me *model.Error
		if !errors.As(err, &me) || me.Kind == model.KindNotFound {
			h.fail(w, r, a, err)
			return
		}
		msg := "Your comment could not be posted."
		switch {
		case me.Kind == model.KindForbidden || me.Kind == model.KindUnauthorized:
			msg = "You are not allowed to comment on this issue."
		case strings.Contains(me.Message, "can't be blank"):
			msg = "The comment is empty."
		case strings.Contains(me.Message, "too long"):
			msg = fmt.Sprintf("The comment is too long (at most %d characters).", model.NoteBodyMax)
		}
		h.renderIssue(w, r, a, full, iid, actionStatus(me.Kind), "", msg)
		return
	}
	http.Redirect(w, r, "/"+full+"/-/issues/"+strconv.FormatInt(iid, 10)+"#notes", http.StatusSeeOther)
}

// mayUpdateIssue is the service's rule for editing, closing and
// reopening an issue (reporters up, and its author).
func mayUpdateIssue(a auth.Actor, pv projects.View, iv issues.View) bool {
	p := pv.Project
	return auth.Can(a, auth.UpdateIssue, auth.Resource{Project: &p, Access: pv.Access, User: &model.User{ID: iv.AuthorID}})
}

// issuePage resolves the project and the issue of an issue's page, or
// answers the failure (ok false): what the viewer may not see is a 404,
// or a sign-in for the anonymous.
func (h *Handler) issuePage(w http.ResponseWriter, r *http.Request, a auth.Actor, full string, iid int64) (projects.View, issues.View, bool) {
	pv, err := h.resolveProject(r, a, full)
	if err != nil {
		h.fail(w, r, a, err)
		return pv, issues.View{}, false
	}
	iv, err := h.Issues.Get(r.Context(), a, full, iid)
	if err != nil {
		h.fail(w, r, a, err)
		return pv, iv, false
	}
	return pv, iv, true
}

// issueFormBody is the data of the new issue and edit forms.
type issueFormBody struct {
	projectHead
	Heading, Action, Cancel string
	Title, Description      string
	// What the viewer may set besides the title and the description, as
	// the service takes it (it drops the rest): labels, milestone and
	// assignees (Metadata: reporters up, and members when opening),
	// confidentiality and the due date (anyone opening; reporters up
	// editing).
	Metadata, Confidentiality, DueDates bool
	Labels                              string
	Milestone                           string // its title
	Assignees                           string // usernames, separated by commas
	Confidential                        bool
	DueDate                             string
	Alert                               string
	Submit                              string
}

// readMetadata reads the fields of a form besides the title and the
// description into body (what the viewer may not set is not used).
func (body *issueFormBody) readMetadata(f url.Values) {
	body.Labels, body.Confidential, body.DueDate = f.Get("labels"), f.Get("confidential") == "1", strings.TrimSpace(f.Get("due_date"))
	body.Milestone, body.Assignees = strings.TrimSpace(f.Get("milestone_title")), f.Get("assignee_usernames")
}

func (h *Handler) renderIssueForm(w http.ResponseWriter, r *http.Request, a auth.Actor, status int, p model.Project, last string, body issueFormBody) {
	h.render(w, r, a, status, "issue_form", view{Title: body.Heading + " · Issues · " + p.FullName(), Crumbs: issueCrumbs(p, last), Body: body})
}

// issueNew is /-/issues/new: the form for signed-in viewers who may open
// an issue.
func (h *Handler) issueNew(w http.ResponseWriter, r *http.Request, a auth.Actor, full string) {
	pv, ok := h.projectPage(w, r, a, full)
	if !ok {
		return
	}
	p := pv.Project
	res := auth.Resource{Project: &p, Access: pv.Access}
	if !auth.Can(a, auth.CreateIssue, res) {
		h.fail(w, r, a, model.NotFound(""))
		return
	}
	h.renderIssueForm(w, r, a, http.StatusOK, p, "New", newIssueBody(a, pv))
}

// newIssueBody is the empty new issue form for the viewer of pv: the
// issues service keeps a member's labels, milestone and assignees (and
// a reporter's), and anyone's confidentiality and due date.
func newIssueBody(a auth.Actor, pv projects.View) issueFormBody {
	p := pv.Project
	return issueFormBody{projectHead: head(pv), Heading: "New issue", Action: issuesURL(p), Cancel: issuesURL(p),
		Metadata:        auth.Can(a, auth.AdminIssue, auth.Resource{Project: &p, Access: pv.Access}) || pv.Access >= model.Guest,
		Confidentiality: true, DueDates: true, Submit: "Create issue"}
}

// issueEdit is /-/issues/<iid>/edit: the form for who may edit it.
func (h *Handler) issueEdit(w http.ResponseWriter, r *http.Request, a auth.Actor, full string, iid int64) {
	pv, iv, ok := h.issuePage(w, r, a, full, iid)
	if !ok {
		return
	}
	if !mayUpdateIssue(a, pv, iv) {
		h.fail(w, r, a, model.NotFound(""))
		return
	}
	h.renderIssueForm(w, r, a, http.StatusOK, pv.Project, "#"+strconv.FormatInt(iid, 10), h.issueEditBody(a, pv, iv))
}

func (h *Handler) issueEditBody(a auth.Actor, pv projects.View, iv issues.View) issueFormBody {
	p := pv.Project
	u := issueURL(p, iv.IID)
	body := issueFormBody{projectHead: head(pv), Heading: "Edit issue #" + strconv.FormatInt(iv.IID, 10), Action: u, Cancel: u,
		Title: iv.Title, Description: iv.Description, Labels: strings.Join(iv.Labels, ", "), Confidential: iv.Confidential,
		DueDate: iv.DueDate, Submit: "Save changes"}
	admin := auth.Can(a, auth.AdminIssue, auth.Resource{Project: &p, Access: pv.Access})
	body.Metadata, body.Confidentiality, body.DueDates = admin, admin, admin
	if iv.Milestone != nil {
		body.Milestone = iv.Milestone.Title
	}
	var names []string
	for _, u := range usersOf(iv.Users, iv.AssigneeIDs) {
		names = append(names, u.Username)
	}
	body.Assignees = strings.Join(names, ", ")
	return body
}

// issuePost answers the issue forms: POST /-/issues (open one),
// /-/issues/<iid> (edit), /-/issues/<iid>/close|reopen and
// /-/issues/<iid>/notes (comment). It reports
// whether the path was an issue form's.
func (h *Handler) issuePost(w http.ResponseWriter, r *http.Request, a auth.Actor) bool {
	full, action, ok := strings.Cut(strings.Trim(r.URL.Path, "/"), "/-/")
	if !ok {
		return false
	}
	rest, ok := strings.CutPrefix(action+"/", "issues/")
	if !ok {
		return false
	}
	rest = strings.TrimSuffix(rest, "/")
	if full == "" || strings.Contains(full, "//") || !strings.Contains(full, "/") {
		h.notFound(w, r, a)
		return true
	}
	var iid int64
	var verb string
	if rest != "" {
		num, v, _ := strings.Cut(rest, "/")
		if iid, ok = parseIID(num); !ok || (v != "" && v != "close" && v != "reopen" && v != "notes") {
			h.notFound(w, r, a)
			return true
		}
		verb = v
	}
	back := "/" + full + "/-/issues/new"
	if iid != 0 {
		back = "/" + full + "/-/issues/" + strconv.FormatInt(iid, 10)
	}
	if !a.SignedIn() {
		signInThen(w, r, back)
		return true
	}
	if !h.readForm(w, r, a, maxIssueFormBytes) {
		return true
	}
	pv, ok := h.projectPage(w, r, a, full)
	if !ok {
		return true
	}
	switch {
	case verb == "notes":
		h.issueComment(w, r, a, full, iid)
	case iid == 0:
		h.issueCreate(w, r, a, pv)
	case verb == "":
		h.issueUpdate(w, r, a, pv, iid)
	default:
		_, err := h.Issues.SetState(r.Context(), a, full, iid, verb == "close")
		if err != nil {
			var me *model.Error
			if !errors.As(err, &me) || me.Kind == model.KindNotFound {
				h.fail(w, r, a, err)
				return true
			}
			msg := strings.TrimSpace(me.Message)
			if me.Kind == model.KindForbidden || me.Kind == model.KindUnauthorized || msg == "" || strings.HasPrefix(msg, "40") {
				msg = "You are not allowed to " + verb + " this issue."
			}
			h.renderIssue(w, r, a, full, iid, actionStatus(me.Kind), "", msg)
			return true
		}
		flash := "issue_closed"
		if verb == "reopen" {
			flash = "issue_reopened"
		}
		h.issueDone(w, r, "/"+full+"/-/issues/"+strconv.FormatInt(iid, 10), flash)
	}
	return true
}

// issueDone sends the browser to the issue with a flash message.
func (h *Handler) issueDone(w http.ResponseWriter, r *http.Request, to, flash string) {
	http.SetCookie(w, &http.Cookie{Name: flashCookie, Value: flash, Path: "/", MaxAge: 60,
		HttpOnly: true, Secure: h.secure, SameSite: http.SameSiteLaxMode})
	http.Redirect(w, r, to, http.StatusSeeOther)
}

// issueLabels reads the form's comma-separated labels.
func issueLabels(s string) []string {
	return model.CleanList(strings.Split(s, ","))
}

// issueCreate opens an issue from the new issue form.
func (h *Handler) issueCreate(w http.ResponseWriter, r *http.Request, a auth.Actor, pv projects.View) {
	p := pv.Project
	f := r.PostForm
	res := auth.Resource{Project: &p, Access: pv.Access}
	if !auth.Can(a, auth.ReadIssue, res) || !auth.Can(a, auth.CreateIssue, res) {
		h.fail(w, r, a, model.NotFound(""))
		return
	}
	body := newIssueBody(a, pv)
	body.Title, body.Description = f.Get("title"), f.Get("description")
	body.readMetadata(f)
	in := issues.CreateInput{Title: body.Title, Description: body.Description, Confidential: body.Confidential, DueDate: body.DueDate}
	var err error
	if body.Metadata {
		in.Labels = issueLabels(body.Labels)
		in.MilestoneID, in.AssigneeIDs, err = h.Issues.FormRefs(r.Context(), p, body.Milestone, strings.Split(body.Assignees, ","))
	}
	var iv issues.View
	if err == nil {
		iv, err = h.Issues.Create(r.Context(), a, p.FullPath(), in)
	}
	if err != nil {
		h.issueRefused(w, r, a, p, "New", body, err)
		return
	}
	h.issueDone(w, r, issueURL(p, iv.IID), "issue_created")
}

// issueUpdate saves the edit form: the title and description, and for
// reporters up the labels, confidentiality and due date.
func (h *Handler) issueUpdate(w http.ResponseWriter, r *http.Request, a auth.Actor, pv projects.View, iid int64) {
	p := pv.Project
	iv, err := h.Issues.Get(r.Context(), a, p.FullPath(), iid)
	if err != nil {
		h.fail(w, r, a, err)
		return
	}
	if !mayUpdateIssue(a, pv, iv) {
		h.fail(w, r, a, model.NotFound(""))
		return
	}
	f := r.PostForm
	body := h.issueEditBody(a, pv, iv)
	var in issues.UpdateInput
	if f.Has("title") {
		body.Title = f.Get("title")
		t := body.Title
		in.Title = &t
	}
	if f.Has("description") {
		body.Description = f.Get("description")
		d := body.Description
		in.Description = &d
	}
	if body.Metadata && f.Has("metadata_shown") {
		body.readMetadata(f)
		labels, conf, due := issueLabels(body.Labels), body.Confidential, body.DueDate
		in.Labels, in.Confidential, in.DueDate = &labels, &conf, &due
		var milestone int64
		var assignees []int64
		milestone, assignees, err = h.Issues.FormRefs(r.Context(), p, body.Milestone, strings.Split(body.Assignees, ","))
		in.MilestoneID, in.AssigneeIDs = &milestone, &assignees
	}
	if err == nil {
		_, err = h.Issues.Update(r.Context(), a, p.FullPath(), iid, in)
	}
	if err != nil {
		h.issueRefused(w, r, a, p, "#"+strconv.FormatInt(iid, 10), body, err)
		return
	}
	h.issueDone(w, r, issueURL(p, iid), "issue_updated")
}

// issueRefused answers a form the service refused: what the viewer may
// not see is the page's 404, anything else the form again with GitLab's
// message and the API's status.
func (h *Handler) issueRefused(w http.ResponseWriter, r *http.Request, a auth.Actor, p model.Project, last string, body issueFormBody, err error) {
	var me *model.Error
	if !errors.As(err, &me) || me.Kind == model.KindForbidden || me.Kind == model.KindUnauthorized || me.Kind == model.KindNotFound {
		h.fail(w, r, a, err)
		return
	}
	body.Alert = formMessage(me)
	h.renderIssueForm(w, r, a, actionStatus(me.Kind), p, last, body)
}

// formMessage is GitLab's wording of a refused form: "Title can't be
// blank" for a field's validation, else the service's message.
func formMessage(me *model.Error) string {
	if len(me.Fields) > 0 {
		keys := make([]string, 0, len(me.Fields))
		for k := range me.Fields {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		var parts []string
		for _, k := range keys {
			name := strings.ReplaceAll(k, "_", " ")
			if name != "" {
				rs := []rune(name)
				rs[0] = unicode.ToUpper(rs[0])
				name = string(rs)
			}
			for _, m := range me.Fields[k] {
				parts = append(parts, name+" "+m)
			}
		}
		return strings.Join(parts, ", ")
	}
	if msg := strings.TrimSpace(me.Message); msg != "" {
		return msg
	}
	return "The issue could not be saved."
}
