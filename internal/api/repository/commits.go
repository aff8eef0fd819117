package repository

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"

	"quarry/internal/api/endpoint"
	"quarry/internal/api/entity"
	"quarry/internal/model"
	"quarry/internal/repofiles"
)

func (h *Handlers) listCommits(c *endpoint.Call) error {
	p := c.P
	var in repofiles.CommitsInput
	in.RefName, _ = p.String("ref_name")
	in.Path, _ = p.String("path")
	in.Author, _ = p.String("author")
	in.Since, _ = p.Time("since")
	in.Until, _ = p.Time("until")
	in.All = p.Flag("all")
	in.FirstParent = p.Flag("first_parent")
	in.WithStats = p.Flag("with_stats")
	pg, err := c.Page()
	if err != nil {
		return err
	}
	list, info, err := h.files.Commits(c.Ctx(), c.Actor, c.Path("id"), in, pg)
	if err != nil {
		return err
	}
	out := make([]entity.CommitDetail, len(list))
	for i := range list {
		out[i] = h.r.CommitDetail(list[i])
	}
	return c.List(pg, info, out)
}

func (h *Handlers) getCommit(c *endpoint.Call) error {
	stats := true
	if b, ok := c.P.Bool("stats"); ok {
		stats = b
	}
	v, err := h.files.Commit(c.Ctx(), c.Actor, c.Path("id"), c.Path("sha"), stats)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, h.r.CommitDetail(v))
}

func (h *Handlers) commitDiff(c *endpoint.Call) error {
	pg, err := c.Page()
	if err != nil {
		return err
	}
	files, info, err := h.files.CommitDiff(c.Ctx(), c.Actor, c.Path("id"), c.Path("sha"), pg)
	if err != nil {
		return err
	}
	return c.List(pg, info, entity.Diffs(files))
}

// commitRefs serves GET /repository/commits/:sha/refs.
func (h *Handlers) commitRefs(c *endpoint.Call) error {
	kind := "all"
	if v, ok := c.P.Enum("type", "branch", "tag", "all"); ok {
		kind = v
	}
	pg, err := c.Page()
	if err != nil {
		return err
	}
	refs, info, err := h.files.CommitRefs(c.Ctx(), c.Actor, c.Path("id"), c.Path("sha"), kind, pg)
	if err != nil {
		return err
	}
	out := make([]entity.CommitRef, len(refs))
	for i, r := range refs {
		out[i] = entity.CommitRef{Type: r.Type, Name: r.Name}
	}
	return c.List(pg, info, out)
}

// createCommit serves POST /repository/commits with several actions.
func (h *Handlers) createCommit(c *endpoint.Call) error {
	p := c.P
	p.Require("branch", "commit_message", "actions")
	in := commitInput(p)
	stats := true
	if b, ok := p.Bool("stats"); ok {
		stats = b
	}
	raw := p.Objects("actions")
	for _, a := range raw {
		var act struct {
			Action          string  `json:"action"`
			FilePath        string  `json:"file_path"`
			PreviousPath    string  `json:"previous_path"`
			Content         *string `json:"content"`
			Encoding        string  `json:"encoding"`
			LastCommitID    string  `json:"last_commit_id"`
			ExecuteFilemode *bool   `json:"execute_filemode"`
		}
		if err := json.Unmarshal([]byte(a), &act); err != nil {
			p.Fail("actions is invalid")
			break
		}
		switch act.Action {
		case "create", "update", "delete", "move", "chmod":
		default:
			p.Fail("actions[action] does not have a valid value")
		}
		if act.FilePath == "" {
			p.Fail("actions[file_path] is missing")
		}
		content := []byte{}
		if act.Content != nil {
			d, err := repofiles.DecodeContent(*act.Content, act.Encoding)
			if err != nil {
				return err
			}
			content = d
		}
		in.Actions = append(in.Actions, repofiles.Action{Kind: act.Action, Path: act.FilePath, PreviousPath: act.PreviousPath,
			Content: content, HasContent: act.Content != nil || act.Action == "create" || act.Action == "update", Executable: act.ExecuteFilemode})
		if act.LastCommitID != "" {
			in.LastCommitIDs[act.FilePath] = act.LastCommitID
		}
	}
	if err := p.Err(); err != nil {
		return err
	}
	if len(in.Actions) == 0 {
		return model.Param("actions is empty")
	}
	v, err := h.files.CreateCommit(c.Ctx(), c.Actor, c.Path("id"), in, stats)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, h.r.CommitDetail(v))
}

func (h *Handlers) compare(c *endpoint.Call) error {
	p := c.P
	p.Require("from", "to")
	from, _ := p.String("from")
	to, _ := p.String("to")
	straight := p.Flag("straight")
	fromProject := ""
	if id, ok := p.Int("from_project_id"); ok {
		fromProject = strconv.FormatInt(id, 10)
	}
	if err := p.Err(); err != nil {
		return err
	}
	cmp, err := h.files.Compare(c.Ctx(), c.Actor, c.Path("id"), from, to, straight, fromProject)
	if err != nil {
		return err
	}
	out := entity.Compare{Commits: []entity.Commit{}, Diffs: entity.Diffs(cmp.Diffs), CompareTimeout: cmp.Timeout, CompareSameRef: cmp.SameRef,
		WebURL: fmt.Sprintf("%s/%s/-/compare/%s...%s", h.r.ExternalURL, cmp.ProjectPath, cmp.From, cmp.To)}
	for _, v := range cmp.Commits {
		out.Commits = append(out.Commits, h.r.Commit(v.Commit, v.WebURL))
	}
	if n := len(out.Commits); n > 0 {
		last := out.Commits[n-1]
		out.Commit = &last
	}
	if out.Diffs == nil {
		out.Diffs = []entity.Diff{}
	}
	return c.JSON(http.StatusOK, out)
}

func (h *Handlers) mergeBase(c *endpoint.Call) error {
	c.P.Require("refs")
	refs, _ := c.P.Strings("refs")
	if err := c.P.Err(); err != nil {
		return err
	}
	v, err := h.files.MergeBase(c.Ctx(), c.Actor, c.Path("id"), refs)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, h.r.Commit(v.Commit, v.WebURL))
}

func (h *Handlers) contributors(c *endpoint.Call) error {
	orderBy := "commits"
	if v, ok := c.P.Enum("order_by", "name", "email", "commits"); ok {
		orderBy = v
	}
	desc := false
	if v, ok := c.P.Enum("sort", "asc", "desc"); ok {
		desc = v == "desc"
	}
	ref, _ := c.P.String("ref")
	pg, err := c.Page()
	if err != nil {
		return err
	}
	list, info, err := h.files.Contributors(c.Ctx(), c.Actor, c.Path("id"), ref, orderBy, desc, pg)
	if err != nil {
		return err
	}
	out := make([]entity.Contributor, len(list))
	for i, x := range list {
		out[i] = entity.Contributor{Name: x.Name, Email: x.Email, Commits: x.Commits}
	}
	return c.List(pg, info, out)
}
