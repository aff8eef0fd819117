// Package mergerequests serves merge requests: per project, per group and
// the caller's across projects; create, read, edit, close and reopen,
// commits, changes and diffs, participants, merge, rebase and delete.
package mergerequests

import (
	"net/http"
	"strconv"
	"strings"

	"quarry/internal/api/endpoint"
	"quarry/internal/api/entity"
	"quarry/internal/mergerequests"
	"quarry/internal/model"
)

// Handlers answer the merge requests area.
type Handlers struct {
	mr *mergerequests.Service
	r  *entity.Renderer
}

// New returns the area.
func New(s *mergerequests.Service, r *entity.Renderer) *Handlers { return &Handlers{mr: s, r: r} }

// Routes are the area's rows.
func (h *Handlers) Routes() []endpoint.Route {
	row, parsed := endpoint.Row, endpoint.Parsed
	public, token, api := endpoint.Public, endpoint.Token, endpoint.ScopeAPI
	const (
		list = "/projects/{id}/merge_requests"
		mr   = list + "/{merge_request_iid}"
	)
	return []endpoint.Route{
		row("GET", "/merge_requests", token, api, parsed, h.listAll),
		row("GET", "/groups/{id}/merge_requests", public, api, parsed, h.listGroup),
		row("GET", list, public, api, parsed, h.listProject),
		row("POST", list, token, api, parsed, h.create),
		row("GET", mr, public, api, parsed, h.get),
		row("PUT", mr, token, api, parsed, h.update),
		row("DELETE", mr, token, api, parsed, h.delete),
		row("GET", mr+"/commits", public, api, parsed, h.commits),
		row("GET", mr+"/changes", public, api, parsed, h.changes),
		row("GET", mr+"/diffs", public, api, parsed, h.diffs),
		row("GET", mr+"/participants", public, api, parsed, h.participants),
		row("PUT", mr+"/merge", token, api, parsed, h.merge),
		row("PUT", mr+"/rebase", token, api, parsed, h.rebase),
	}
}

// iid reads the merge request's iid (not a number: no route).
func iid(c *endpoint.Call) (int64, error) { return c.PathID("merge_request_iid") }

// filter reads the list filters every list takes.
func filter(c *endpoint.Call) mergerequests.ListInput {
	p := c.P
	var in mergerequests.ListInput
	in.State, _ = p.Enum("state", "opened", "closed", "locked", "merged", "all")
	in.Scope, _ = p.Enum("scope", "created_by_me", "created-by-me", "assigned_to_me", "assigned-to-me", "reviews_for_me", "all")
	if n, ok := p.Int("author_id"); ok {
		in.AuthorID = n
	}
	switch v, _ := p.String("assignee_id"); strings.ToLower(v) {
	case "":
	case "none":
		in.AssigneeID = mergerequests.NoOne
	case "any":
		in.AssigneeID = mergerequests.AnyOne
	default:
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			p.Fail("assignee_id is invalid")
		}
		in.AssigneeID = n
	}
	switch v, _ := p.String("reviewer_id"); strings.ToLower(v) {
	case "":
	case "none":
		in.ReviewerID = mergerequests.NoOne
	case "any":
		in.ReviewerID = mergerequests.AnyOne
	default:
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			p.Fail("reviewer_id is invalid")
		}
		in.ReviewerID = n
	}
	in.SourceBranch, _ = p.String("source_branch")
	in.TargetBranch, _ = p.String("target_branch")
	in.Search, _ = p.String("search")
	in.IIDs, _ = p.IDs("iids")
	in.Labels, _ = p.Unique("labels")
	in.CreatedAfter, _ = p.Time("created_after")
	in.CreatedBefore, _ = p.Time("created_before")
	in.UpdatedAfter, _ = p.Time("updated_after")
	in.UpdatedBefore, _ = p.Time("updated_before")
	in.OrderBy, _ = p.Enum("order_by", "created_at", "updated_at", "title")
	sort, _ := p.Enum("sort", "asc", "desc")
	in.Asc = sort == "asc"
	in.WIP, _ = p.Enum("wip", "yes", "no")
	return in
}

func (h *Handlers) list(c *endpoint.Call, project, group string) error {
	in := filter(c)
	pg, err := c.Page()
	if err != nil {
		return err
	}
	if err := c.P.Err(); err != nil {
		return err
	}
	if project == "" && group == "" && in.Scope == "" {
		// GET /merge_requests defaults to the caller's own.
		in.Scope = "created_by_me"
	}
	list, info, err := h.mr.List(c.Ctx(), c.Actor, project, group, in, pg)
	if err != nil {
		return err
	}
	b, err := h.r.MergeRequestsJSON(list)
	if err != nil {
		return err
	}
	return c.List(pg, info, endpoint.Raw(b))
}

func (h *Handlers) listAll(c *endpoint.Call) error     { return h.list(c, "", "") }
func (h *Handlers) listGroup(c *endpoint.Call) error   { return h.list(c, "", c.Path("id")) }
func (h *Handlers) listProject(c *endpoint.Call) error { return h.list(c, c.Path("id"), "") }

func (h *Handlers) create(c *endpoint.Call) error {
	p := c.P
	p.Require("source_branch", "target_branch", "title")
	in := mergerequests.CreateInput{SourceBranch: p.Value("source_branch"), TargetBranch: p.Value("target_branch"), Title: p.Value("title"),
		Description: p.Value("description"), RemoveSourceBranch: p.BoolPtr("remove_source_branch"), Squash: p.BoolPtr("squash")}
	if n, ok := p.Int("target_project_id"); ok {
		in.TargetProjectID = n
	}
	if v, ok := c.P.IDs("assignee_ids"); ok {
		in.AssigneeIDs = v
	} else if n, ok := p.Int("assignee_id"); ok {
		in.AssigneeIDs = []int64{n}
	}
	in.ReviewerIDs, _ = c.P.IDs("reviewer_ids")
	in.Labels, _ = p.Unique("labels")
	if err := p.Err(); err != nil {
		return err
	}
	v, err := h.mr.Create(c.Ctx(), c.Actor, c.Path("id"), in)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, h.r.MergeRequestDetail(v, c.Actor))
}

func (h *Handlers) get(c *endpoint.Call) error {
	n, err := iid(c)
	if err != nil {
		return err
	}
	v, err := h.mr.Get(c.Ctx(), c.Actor, c.Path("id"), n)
	if err != nil {
		return err
	}
	b, err := h.r.MergeRequestDetailJSON(v, c.Actor)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, endpoint.Raw(b))
}

func (h *Handlers) update(c *endpoint.Call) error {
	n, err := iid(c)
	if err != nil {
		return err
	}
	p := c.P
	in := mergerequests.UpdateInput{Title: p.StringPtr("title"), Description: p.StringPtr("description"),
		TargetBranch: p.StringPtr("target_branch"), RemoveSourceBranch: p.BoolPtr("remove_source_branch"), Squash: p.BoolPtr("squash"),
		DiscussionLocked: p.BoolPtr("discussion_locked")}
	if v, ok := p.Enum("state_event", "close", "reopen"); ok {
		in.StateEvent = &v
	}
	if v, ok := c.P.IDs("assignee_ids"); ok {
		in.AssigneeIDs = &v
	} else if v, ok := p.Int("assignee_id"); ok {
		list := []int64{}
		if v > 0 {
			list = append(list, v)
		}
		in.AssigneeIDs = &list
	}
	if v, ok := c.P.IDs("reviewer_ids"); ok {
		in.ReviewerIDs = &v
	}
	if v, ok := p.Unique("labels"); ok {
		in.Labels = &v
	}
	in.AddLabels, _ = p.Unique("add_labels")
	in.RemoveLabels, _ = p.Unique("remove_labels")
	// GitLab's list (path values are no parameters here).
	p.AtLeastOneOf("assignee_id", "assignee_ids", "reviewer_ids", "description", "labels", "add_labels", "remove_labels",
		"milestone_id", "remove_source_branch", "allow_collaboration", "allow_maintainer_to_push", "squash", "target_branch",
		"title", "state_event", "discussion_locked")
	if err := p.Err(); err != nil {
		return err
	}
	v, err := h.mr.Update(c.Ctx(), c.Actor, c.Path("id"), n, in)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, h.r.MergeRequestDetail(v, c.Actor))
}

func (h *Handlers) delete(c *endpoint.Call) error {
	n, err := iid(c)
	if err != nil {
		return err
	}
	if err := h.mr.Delete(c.Ctx(), c.Actor, c.Path("id"), n); err != nil {
		return err
	}
	return c.NoContent()
}

func (h *Handlers) commits(c *endpoint.Call) error {
	n, err := iid(c)
	if err != nil {
		return err
	}
	pg, err := c.Page()
	if err != nil {
		return err
	}
	p, list, info, err := h.mr.Commits(c.Ctx(), c.Actor, c.Path("id"), n, pg)
	if err != nil {
		return err
	}
	out := make([]entity.Commit, len(list))
	for i, cm := range list {
		out[i] = h.r.Commit(cm, "/"+p.FullPath()+"/-/commit/"+string(cm.ID))
	}
	pg.Keyset = false // GitLab pages merge request commits by offset only
	return c.List(pg, info, out)
}

func (h *Handlers) changes(c *endpoint.Call) error {
	n, err := iid(c)
	if err != nil {
		return err
	}
	ch, err := h.mr.Changes(c.Ctx(), c.Actor, c.Path("id"), n)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, entity.MergeRequestChanges{MergeRequestDetail: h.r.MergeRequestDetail(ch.View, c.Actor),
		Changes: entity.Diffs(ch.Diffs), Overflow: ch.Overflow})
}

// diffs pages a merge request's file diffs.
func (h *Handlers) diffs(c *endpoint.Call) error {
	n, err := iid(c)
	if err != nil {
		return err
	}
	pg, err := c.Page()
	if err != nil {
		return err
	}
	ch, err := h.mr.Changes(c.Ctx(), c.Actor, c.Path("id"), n)
	if err != nil {
		return err
	}
	all := entity.Diffs(ch.Diffs)
	from := min((pg.Number-1)*pg.PerPage, len(all))
	to := min(from+pg.PerPage, len(all))
	info := model.PageInfo{Total: len(all), TotalKnown: true, HasMore: to < len(all)}
	return c.List(pg, info, all[from:to])
}

func (h *Handlers) participants(c *endpoint.Call) error {
	n, err := iid(c)
	if err != nil {
		return err
	}
	users, err := h.mr.Participants(c.Ctx(), c.Actor, c.Path("id"), n)
	if err != nil {
		return err
	}
	out := make([]entity.UserBasic, len(users))
	for i := range users {
		out[i] = h.r.UserBasic(&users[i])
	}
	return c.JSON(http.StatusOK, out)
}

func (h *Handlers) merge(c *endpoint.Call) error {
	n, err := iid(c)
	if err != nil {
		return err
	}
	p := c.P
	in := mergerequests.MergeInput{SHA: p.Value("sha"), MergeCommitMessage: p.Value("merge_commit_message"),
		SquashCommitMessage: p.Value("squash_commit_message"), Squash: p.BoolPtr("squash"),
		ShouldRemoveSourceBranch: p.BoolPtr("should_remove_source_branch")}
	if err := p.Err(); err != nil {
		return err
	}
	v, err := h.mr.Merge(c.Ctx(), c.Actor, c.Path("id"), n, in)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, h.r.MergeRequestDetail(v, c.Actor))
}

func (h *Handlers) rebase(c *endpoint.Call) error {
	n, err := iid(c)
	if err != nil {
		return err
	}
	if err := h.mr.Rebase(c.Ctx(), c.Actor, c.Path("id"), n); err != nil {
		return err
	}
	return c.JSON(http.StatusAccepted, map[string]bool{"rebase_in_progress": false})
}
