package repository

import (
	"encoding/json"
	"net/http"
	"strconv"

	"quarry/internal/api/endpoint"
	"quarry/internal/api/entity"
	"quarry/internal/model"
	"quarry/internal/projects"
	"quarry/internal/repofiles"
)

func (h *Handlers) listBranches(c *endpoint.Call) error {
	var f repofiles.BranchFilter
	f.Search, _ = c.P.String("search")
	f.Regex, _ = c.P.String("regex")
	f.Sort, _ = c.P.Enum("sort", repofiles.BranchesByName, repofiles.BranchesUpdatedAsc, repofiles.BranchesUpdatedDesc)
	if err := c.P.Err(); err != nil {
		return err
	}
	pg, err := c.Page()
	if err != nil {
		return err
	}
	list, info, err := h.files.Branches(c.Ctx(), c.Actor, c.Path("id"), f, pg)
	if err != nil {
		return err
	}
	out := make([]entity.Branch, len(list))
	for i := range list {
		out[i] = h.r.Branch(list[i])
	}
	return c.List(pg, info, out)
}

func (h *Handlers) getBranch(c *endpoint.Call) error {
	b, err := h.files.Branch(c.Ctx(), c.Actor, c.Path("id"), c.Path("branch"))
	if err != nil {
		return err
	}
	if c.R.Method == http.MethodHead {
		c.W.WriteHeader(http.StatusNoContent)
		return nil
	}
	return c.JSON(http.StatusOK, h.r.Branch(b))
}

func (h *Handlers) createBranch(c *endpoint.Call) error {
	c.P.Require("branch", "ref")
	name, _ := c.P.String("branch")
	ref, _ := c.P.String("ref")
	if err := c.P.Err(); err != nil {
		return err
	}
	b, err := h.files.CreateBranch(c.Ctx(), c.Actor, c.Path("id"), name, ref)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, h.r.Branch(b))
}

func (h *Handlers) deleteBranch(c *endpoint.Call) error {
	if err := h.files.DeleteBranch(c.Ctx(), c.Actor, c.Path("id"), c.Path("branch")); err != nil {
		return err
	}
	return c.NoContent()
}

func (h *Handlers) deleteMergedBranches(c *endpoint.Call) error {
	if err := h.files.DeleteMergedBranches(c.Ctx(), c.Actor, c.Path("id")); err != nil {
		return err
	}
	return c.Accepted()
}

func (h *Handlers) listTags(c *endpoint.Call) error {
	search, _ := c.P.String("search")
	orderBy := "updated"
	if v, ok := c.P.Enum("order_by", "name", "updated", "version"); ok {
		orderBy = v
	}
	desc := true
	if v, ok := c.P.Enum("sort", "asc", "desc"); ok {
		desc = v == "desc"
	}
	pg, err := c.Page()
	if err != nil {
		return err
	}
	list, info, err := h.files.Tags(c.Ctx(), c.Actor, c.Path("id"), search, orderBy, desc, pg)
	if err != nil {
		return err
	}
	out := make([]entity.Tag, len(list))
	for i := range list {
		out[i] = h.r.Tag(list[i])
	}
	return c.List(pg, info, out)
}

func (h *Handlers) getTag(c *endpoint.Call) error {
	t, err := h.files.Tag(c.Ctx(), c.Actor, c.Path("id"), c.Path("tag"))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, h.r.Tag(t))
}

func (h *Handlers) createTag(c *endpoint.Call) error {
	c.P.Require("tag_name", "ref")
	name, _ := c.P.String("tag_name")
	ref, _ := c.P.String("ref")
	msg, _ := c.P.String("message")
	if err := c.P.Err(); err != nil {
		return err
	}
	t, err := h.files.CreateTag(c.Ctx(), c.Actor, c.Path("id"), name, ref, msg)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, h.r.Tag(t))
}

func (h *Handlers) deleteTag(c *endpoint.Call) error {
	if err := h.files.DeleteTag(c.Ctx(), c.Actor, c.Path("id"), c.Path("tag")); err != nil {
		return err
	}
	return c.NoContent()
}

func (h *Handlers) listProtectedBranches(c *endpoint.Call) error {
	search, _ := c.P.String("search")
	pg, err := c.Page()
	if err != nil {
		return err
	}
	list, info, err := h.projects.ProtectedBranches(c.Ctx(), c.Actor, c.Path("id"), search, pg)
	if err != nil {
		return err
	}
	out := make([]entity.ProtectedBranch, len(list))
	for i := range list {
		out[i] = h.r.ProtectedBranch(list[i])
	}
	return c.List(pg, info, out)
}

func (h *Handlers) getProtectedBranch(c *endpoint.Call) error {
	b, err := h.projects.ProtectedBranch(c.Ctx(), c.Actor, c.Path("id"), c.Path("name"))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, h.r.ProtectedBranch(b))
}

var branchLevels = []string{"0", "30", "40", "60"}

// protectInput reads the levels and grants of a protection.
func protectInput(p *endpoint.Params) projects.ProtectInput {
	var in projects.ProtectInput
	in.Name, _ = p.String("name")
	for key, dst := range map[string]**model.AccessLevel{"push_access_level": &in.PushAccessLevel,
		"merge_access_level": &in.MergeAccessLevel, "unprotect_access_level": &in.UnprotectAccessLevel} {
		if v, ok := p.Enum(key, branchLevels...); ok {
			n, _ := strconv.Atoi(v)
			l := model.AccessLevel(n)
			*dst = &l
		}
	}
	in.AllowForcePush = p.BoolPtr("allow_force_push")
	in.CodeOwnerApprovalRequired = p.BoolPtr("code_owner_approval_required")
	for key, dst := range map[string]*[]model.BranchAccess{"allowed_to_push": &in.AllowedToPush,
		"allowed_to_merge": &in.AllowedToMerge, "allowed_to_unprotect": &in.AllowedToUnprotect} {
		*dst = grants(p, key)
	}
	return in
}

// grants reads "allowed_to_push[][access_level]=40" style arrays, sent as
// JSON arrays of objects.
func grants(p *endpoint.Params, key string) []model.BranchAccess {
	if !p.Has(key) || p.IsNull(key) {
		return nil
	}
	vals := p.Objects(key)
	out := []model.BranchAccess{}
	for _, v := range vals {
		var g struct {
			AccessLevel *int   `json:"access_level"`
			UserID      *int64 `json:"user_id"`
			GroupID     *int64 `json:"group_id"`
		}
		if err := json.Unmarshal([]byte(v), &g); err != nil {
			p.Fail("%s is invalid", key)
			return nil
		}
		var a model.BranchAccess
		switch {
		case g.AccessLevel != nil:
			l := model.AccessLevel(*g.AccessLevel)
			a.AccessLevel = &l
		case g.UserID != nil:
			a.UserID = g.UserID
		case g.GroupID != nil:
			a.GroupID = g.GroupID
		default:
			p.Fail("%s is invalid", key)
			return nil
		}
		out = append(out, a)
	}
	return out
}

func (h *Handlers) protectBranch(c *endpoint.Call) error {
	c.P.Require("name")
	in := protectInput(c.P)
	if err := c.P.Err(); err != nil {
		return err
	}
	b, err := h.projects.Protect(c.Ctx(), c.Actor, c.Path("id"), in)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, h.r.ProtectedBranch(b))
}

func (h *Handlers) updateProtectedBranch(c *endpoint.Call) error {
	in := protectInput(c.P)
	if err := c.P.Err(); err != nil {
		return err
	}
	b, err := h.projects.UpdateProtection(c.Ctx(), c.Actor, c.Path("id"), c.Path("name"), in)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, h.r.ProtectedBranch(b))
}

func (h *Handlers) unprotectBranch(c *endpoint.Call) error {
	if err := h.projects.Unprotect(c.Ctx(), c.Actor, c.Path("id"), c.Path("name")); err != nil {
		return err
	}
	return c.NoContent()
}
