// Package issues serves issues: per project, per group tree, the
// caller's across projects and a milestone's; create, read, edit, close
// and reopen, and delete.
package issues

import (
	"net/http"
	"strconv"
	"strings"

	"quarry/internal/api/endpoint"
	"quarry/internal/api/entity"
	"quarry/internal/issues"
	"quarry/internal/model"
)

// Handlers answer the issues area.
type Handlers struct {
	issues *issues.Service
	r      *entity.Renderer
}

// New returns the area.
func New(s *issues.Service, r *entity.Renderer) *Handlers { return &Handlers{issues: s, r: r} }

// Routes are the area's rows.
func (h *Handlers) Routes() []endpoint.Route {
	row, parsed := endpoint.Row, endpoint.Parsed
	public, token, api := endpoint.Public, endpoint.Token, endpoint.ScopeAPI
	const (
		list  = "/projects/{id}/issues"
		issue = list + "/{issue_iid}"
	)
	return []endpoint.Route{
		row("GET", "/issues", public, api, parsed, h.listAll), // anonymous: scope=all only
		row("GET", "/groups/{id}/issues", public, api, parsed, h.listGroup),
		row("GET", list, public, api, parsed, h.listProject),
		row("POST", list, token, api, parsed, h.create),
		row("GET", issue, public, api, parsed, h.get),
		row("PUT", issue, token, api, parsed, h.update),
		row("DELETE", issue, token, api, parsed, h.delete),
		row("GET", issue+"/participants", public, api, parsed, h.participants),
		row("GET", "/issues_statistics", public, api, parsed, func(c *endpoint.Call) error { return h.statistics(c, "", "") }),
		row("GET", "/groups/{id}/issues_statistics", public, api, parsed, func(c *endpoint.Call) error {
			return h.statistics(c, "", c.Path("id"))
		}),
		row("GET", "/projects/{id}/issues_statistics", public, api, parsed, func(c *endpoint.Call) error {
			return h.statistics(c, c.Path("id"), "")
		}),
		row("GET", "/projects/{id}/milestones/{milestone_id}/issues", token, api, parsed, func(c *endpoint.Call) error {
			return h.milestone(c, model.OwnerRef{Ref: c.Path("id")})
		}),
		row("GET", "/groups/{id}/milestones/{milestone_id}/issues", token, api, parsed, func(c *endpoint.Call) error {
			return h.milestone(c, model.OwnerRef{Group: true, Ref: c.Path("id")})
		}),
	}
}

// iid reads the issue's iid (not a number: no route).
func iid(c *endpoint.Call) (int64, error) { return c.PathID("issue_iid") }

// person reads a user filter: an id, None or Any.
func person(p *endpoint.Params, key string) int64 {
	switch v, _ := p.String(key); strings.ToLower(v) {
	case "":
	case "none":
		return issues.NoOne
	case "any":
		return issues.AnyOne
	default:
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n <= 0 {
			p.Fail("%s is invalid", key)
			return 0
		}
		return n
	}
	return 0
}

// filter reads the list filters every list takes.
func filter(c *endpoint.Call) issues.Filter {
	p := c.P
	var f issues.Filter
	f.State, _ = p.Enum("state", "opened", "closed", "all")
	f.Scope, _ = p.Enum("scope", "created_by_me", "created-by-me", "assigned_to_me", "assigned-to-me", "all")
	if n, ok := p.Int("author_id"); ok {
		f.AuthorID = n
	}
	f.AuthorUsername, _ = p.String("author_username")
	f.AssigneeID = person(p, "assignee_id")
	if v, ok := p.Unique("assignee_username"); ok && len(v) > 0 {
		f.AssigneeUsername = v[0]
	}
	f.Labels, _ = p.Unique("labels")
	f.Milestone, _ = p.String("milestone")
	f.Search, _ = p.String("search")
	f.In, _ = p.String("in")
	f.IIDs, _ = p.IDs("iids")
	f.Confidential = p.BoolPtr("confidential")
	f.CreatedAfter, _ = p.Time("created_after")
	f.CreatedBefore, _ = p.Time("created_before")
	f.UpdatedAfter, _ = p.Time("updated_after")
	f.UpdatedBefore, _ = p.Time("updated_before")
	if n, ok := p.Int("closed_by_id"); ok {
		f.ClosedByID = n
	}
	f.DueDate, _ = p.String("due_date")
	f.IssueType, _ = p.String("issue_type")
	if b, ok := p.Bool("non_archived"); ok {
		f.IncludeArchived = !b
	}
	f.OrderBy, _ = p.Enum("order_by", "created_at", "updated_at", "due_date", "title")
	sort, _ := p.Enum("sort", "asc", "desc")
	f.Asc = sort == "asc"
	return f
}

func (h *Handlers) list(c *endpoint.Call, project, group string) error {
	f := filter(c)
	pg, err := c.Page()
	if err != nil {
		return err
	}
	if err := c.P.Err(); err != nil {
		return err
	}
	if project == "" && group == "" && f.Scope == "" {
		// GET /issues defaults to the caller's own.
		f.Scope = "created_by_me"
	}
	list, info, err := h.issues.List(c.Ctx(), c.Actor, project, group, f, pg)
	if err != nil {
		return err
	}
	return c.List(pg, info, h.r.Issues(list))
}

func (h *Handlers) listAll(c *endpoint.Call) error     { return h.list(c, "", "") }
func (h *Handlers) listGroup(c *endpoint.Call) error   { return h.list(c, "", c.Path("id")) }
func (h *Handlers) listProject(c *endpoint.Call) error { return h.list(c, c.Path("id"), "") }

func (h *Handlers) milestone(c *endpoint.Call, o model.OwnerRef) error {
	id, err := c.PathID("milestone_id")
	if err != nil {
		return err
	}
	pg, err := c.Page()
	if err != nil {
		return err
	}
	list, info, err := h.issues.MilestoneIssues(c.Ctx(), c.Actor, o, id, pg)
	if err != nil {
		return err
	}
	return c.List(pg, info, h.r.Issues(list))
}

// assignees reads assignee_ids, or the older assignee_id (0 or none:
// no one).
func assignees(p *endpoint.Params) ([]int64, bool) {
	if v, ok := p.IDs("assignee_ids"); ok {
		return v, true
	}
	if n, ok := p.Int("assignee_id"); ok {
		if n > 0 {
			return []int64{n}, true
		}
		return []int64{}, true
	}
	return nil, false
}

func (h *Handlers) create(c *endpoint.Call) error {
	p := c.P
	p.Require("title")
	in := issues.CreateInput{Title: p.Value("title"), Description: p.Value("description"), Confidential: p.Flag("confidential")}
	in.Labels, _ = p.Unique("labels")
	in.AssigneeIDs, _ = assignees(p)
	if n, ok := p.Int("milestone_id"); ok {
		in.MilestoneID = n
	}
	in.DueDate, _ = p.Date("due_date")
	in.CreatedAt, _ = p.Time("created_at")
	if err := p.Err(); err != nil {
		return err
	}
	v, err := h.issues.Create(c.Ctx(), c.Actor, c.Path("id"), in)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, h.r.IssueDetail(v, c.Actor))
}

func (h *Handlers) get(c *endpoint.Call) error {
	n, err := iid(c)
	if err != nil {
		return err
	}
	v, err := h.issues.Get(c.Ctx(), c.Actor, c.Path("id"), n)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, h.r.IssueDetail(v, c.Actor))
}

func (h *Handlers) update(c *endpoint.Call) error {
	n, err := iid(c)
	if err != nil {
		return err
	}
	p := c.P
	in := issues.UpdateInput{Title: p.StringPtr("title"), Description: p.StringPtr("description"),
		Confidential: p.BoolPtr("confidential"), DiscussionLocked: p.BoolPtr("discussion_locked")}
	if v, ok := p.Enum("state_event", "close", "reopen"); ok {
		in.StateEvent = &v
	}
	if v, ok := assignees(p); ok {
		in.AssigneeIDs = &v
	}
	if p.Has("milestone_id") {
		var id int64
		if v, ok := p.Int("milestone_id"); ok {
			id = v
		}
		in.MilestoneID = &id
	}
	if v, ok := p.Unique("labels"); ok {
		in.Labels = &v
	} else if p.Has("labels") {
		in.Labels = &[]string{}
	}
	in.AddLabels, _ = p.Unique("add_labels")
	in.RemoveLabels, _ = p.Unique("remove_labels")
	if p.Has("due_date") {
		d, _ := p.Date("due_date")
		in.DueDate = &d
	}
	if err := p.Err(); err != nil {
		return err
	}
	if in.Title == nil && in.Description == nil && in.StateEvent == nil && in.Labels == nil && len(in.AddLabels) == 0 &&
		len(in.RemoveLabels) == 0 && in.AssigneeIDs == nil && in.MilestoneID == nil && in.Confidential == nil &&
		in.DiscussionLocked == nil && in.DueDate == nil {
		return model.Param("assignee_id, assignee_ids, confidential, created_at, description, discussion_locked, due_date, " +
			"labels, add_labels, remove_labels, milestone_id, state_event, title, issue_type are missing, at least one parameter must be provided")
	}
	v, err := h.issues.Update(c.Ctx(), c.Actor, c.Path("id"), n, in)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, h.r.IssueDetail(v, c.Actor))
}

func (h *Handlers) delete(c *endpoint.Call) error {
	n, err := iid(c)
	if err != nil {
		return err
	}
	if err := h.issues.Delete(c.Ctx(), c.Actor, c.Path("id"), n); err != nil {
		return err
	}
	return c.NoContent()
}

// statistics answers GitLab's issues_statistics: the counts of the
// issues the list's filters keep.
func (h *Handlers) statistics(c *endpoint.Call, project, group string) error {
	f := filter(c)
	if err := c.P.Err(); err != nil {
		return err
	}
	if project == "" && group == "" && f.Scope == "" {
		f.Scope = "created_by_me"
	}
	opened, closed, err := h.issues.Statistics(c.Ctx(), c.Actor, project, group, f)
	if err != nil {
		return err
	}
	out := entity.IssuesStatistics(opened, closed)
	return c.JSON(http.StatusOK, out)
}

func (h *Handlers) participants(c *endpoint.Call) error {
	n, err := iid(c)
	if err != nil {
		return err
	}
	pg, err := c.Page()
	if err != nil {
		return err
	}
	users, err := h.issues.Participants(c.Ctx(), c.Actor, c.Path("id"), n)
	if err != nil {
		return err
	}
	page, info := model.PageOf(users, pg)
	out := make([]entity.UserBasic, len(page))
	for i := range page {
		out[i] = h.r.UserBasic(&page[i])
	}
	return c.List(pg, info, out)
}
