package groups

import (
	"context"
	"net/http"
	"strconv"

	"quarry/internal/api/endpoint"
	"quarry/internal/api/entity"
	"quarry/internal/attributes"
	"quarry/internal/groups"
	"quarry/internal/model"
	"quarry/internal/projects"
)

func groupInput(p *endpoint.Params) groups.Input {
	in := groups.Input{
		Name: p.StringPtr("name"), Path: p.StringPtr("path"), Description: p.StringPtr("description"),
		DefaultBranch:                  p.StringPtr("default_branch"),
		ShareWithGroupLock:             p.BoolPtr("share_with_group_lock"),
		RequireTwoFactorAuthentication: p.BoolPtr("require_two_factor_authentication"),
		TwoFactorGracePeriod:           p.IntPtr("two_factor_grace_period"),
		AutoDevopsEnabled:              p.BoolPtr("auto_devops_enabled"),
		EmailsDisabled:                 p.BoolPtr("emails_disabled"),
		MentionsDisabled:               p.BoolPtr("mentions_disabled"),
		LFSEnabled:                     p.BoolPtr("lfs_enabled"),
		RequestAccessEnabled:           p.BoolPtr("request_access_enabled"),
		DefaultBranchProtection:        p.IntPtr("default_branch_protection"),
		Avatar:                         p.File("avatar"),
	}
	if b, ok := p.Bool("emails_enabled"); ok && in.EmailsDisabled == nil {
		d := !b
		in.EmailsDisabled = &d
	}
	if v, ok := p.Enum("visibility", "private", "internal", "public"); ok {
		in.Visibility = &v
	}
	if v, ok := p.Enum("project_creation_level", groups.ProjectCreationLevels...); ok {
		in.ProjectCreationLevel = &v
	}
	if v, ok := p.Enum("subgroup_creation_level", groups.SubgroupCreationLevels...); ok {
		in.SubgroupCreationLevel = &v
	}
	if id, ok := p.Int("parent_id"); ok {
		in.ParentID = &id
	}
	if id, ok := p.Int("file_template_project_id"); ok {
		in.FileTemplateProjectID = &id
	}
	if p.Has("avatar") && in.Avatar == nil {
		if v, _ := p.Raw("avatar"); v == "" {
			in.RemoveAvatar = true
		}
	}
	return in
}

func groupListInput(p *endpoint.Params, orderBy ...string) groups.ListInput {
	in := groups.ListInput{AllAvailable: p.BoolPtr("all_available"), Owned: p.Flag("owned"), TopLevelOnly: p.Flag("top_level_only"),
		CustomAttributes: p.Hash("custom_attributes"), OrderBy: "name", Sort: "asc"}
	in.Search, _ = p.String("search")
	if n, ok := p.Int("min_access_level"); ok {
		in.MinAccessLevel = int(n)
	}
	in.SkipGroups, _ = p.IDs("skip_groups")
	if v, ok := p.Enum("order_by", orderBy...); ok {
		in.OrderBy = v
	}
	if v, ok := p.Enum("sort", "asc", "desc"); ok {
		in.Sort = v
	}
	if in.OrderBy == "similarity" && in.Search == "" {
		in.OrderBy = "name"
	}
	return in
}

// renderGroups presents a group list; statistics for administrators who ask.
func (h *Handlers) renderGroups(c *endpoint.Call, gs []model.Group) ([]entity.Group, error) {
	withStats := c.P.Flag("statistics") && c.Actor.Admin()
	var attrs map[int64][]model.CustomAttribute
	if c.P.Flag("with_custom_attributes") && c.Actor.Admin() {
		ids := make([]int64, len(gs))
		for i := range gs {
			ids[i] = gs[i].ID
		}
		var err error
		if attrs, err = h.attributes.Of(c.Ctx(), attributes.Groups, ids); err != nil {
			return nil, err
		}
	}
	var stats map[int64]model.ProjectStatistics
	if withStats {
		var err error
		if stats, err = h.groups.StatisticsOf(c.Ctx(), gs); err != nil {
			return nil, err
		}
	}
	out := make([]entity.Group, len(gs))
	for i := range gs {
		out[i] = h.r.Group(&gs[i])
		if attrs != nil {
			out[i].CustomAttributes = h.r.CustomAttributes(attrs[gs[i].ID])
		}
		if withStats {
			st := stats[gs[i].ID]
			out[i].Statistics = h.r.Statistics(&st)
		}
	}
	return out, nil
}

func (h *Handlers) listGroupsWith(c *endpoint.Call, list func(groups.ListInput, model.Page) ([]model.Group, model.PageInfo, error), orderBy ...string) error {
	in := groupListInput(c.P, orderBy...)
	pg, err := c.Page()
	if err != nil {
		return err
	}
	if pg.Keyset && (c.Actor.SignedIn() || in.OrderBy != "name" || in.Sort != "asc") {
		return &model.Error{Kind: model.KindMethodNotAllowed, Message: "Keyset pagination is not yet available for this type of request"}
	}
	gs, info, err := list(in, pg)
	if err != nil {
		return err
	}
	out, err := h.renderGroups(c, gs)
	if err != nil {
		return err
	}
	c.Paginate(pg, info)
	return c.JSON(http.StatusOK, out)
}

func (h *Handlers) listGroups(c *endpoint.Call) error {
	return h.listGroupsWith(c, func(in groups.ListInput, pg model.Page) ([]model.Group, model.PageInfo, error) {
		return h.groups.List(c.Ctx(), c.Actor, in, pg)
	}, "name", "path", "id", "similarity")
}

func (h *Handlers) subgroups(c *endpoint.Call, all bool) error {
	return h.listGroupsWith(c, func(in groups.ListInput, pg model.Page) ([]model.Group, model.PageInfo, error) {
		return h.groups.Subgroups(c.Ctx(), c.Actor, c.Path("id"), all, in, pg)
	}, "name", "path", "id")
}

// groupDetail renders GroupDetail: the groups it is shared with that the
// caller may see, the runners token for owners, and up to 100 projects and
// shared projects unless with_projects=false.
func (h *Handlers) groupDetail(c *endpoint.Call, status int, g model.Group, withProjects bool) error {
	ctx := c.Ctx()
	j := entity.GroupDetail{Group: h.r.Group(&g)}
	acc, err := h.groups.Access(ctx, c.Actor, g.ID)
	if err != nil {
		return err
	}
	links, err := h.groups.SharedWith(ctx, c.Actor, g)
	if err != nil {
		return err
	}
	j.SharedWithGroups = sharedGroups(links)
	if c.Actor.Admin() || acc >= model.Owner {
		j.RunnersToken = &g.RunnersToken
	}
	if err := h.importState(ctx, &j, g.ID); err != nil {
		return err
	}
	if c.P.Flag("statistics") && c.Actor.Admin() {
		st, err := h.groups.Statistics(ctx, g)
		if err != nil {
			return err
		}
		j.Statistics = h.r.Statistics(&st)
	}
	if withProjects {
		page := model.Page{Number: 1, PerPage: 100}
		ref := strconv.FormatInt(g.ID, 10)
		for _, part := range []struct {
			dst    **[]entity.Project
			shared bool
		}{{&j.Projects, false}, {&j.SharedProjects, true}} {
			in := projects.GroupProjectsInput{OnlyShared: part.shared}
			in.OrderBy, in.Desc = "created_at", true
			ps, _, err := h.projects.GroupProjects(ctx, c.Actor, ref, in, page)
			if err != nil {
				return err
			}
			views, err := h.projects.Views(ctx, c.Actor, ps, false)
			if err != nil {
				return err
			}
			list := make([]entity.Project, len(views))
			for i := range views {
				list[i] = h.r.Project(&views[i], c.Actor)
			}
			*part.dst = &list
		}
	}
	return c.JSON(status, j)
}

func (h *Handlers) getGroup(c *endpoint.Call) error {
	withProjects := true
	if b, ok := c.P.Bool("with_projects"); ok {
		withProjects = b
	}
	if err := c.P.Err(); err != nil {
		return err
	}
	g, _, err := h.groups.Resolve(c.Ctx(), c.Actor, c.Path("id"))
	if err != nil {
		return err
	}
	return h.groupDetail(c, http.StatusOK, g, withProjects)
}

func (h *Handlers) createGroup(c *endpoint.Call) error {
	c.P.Require("name", "path")
	in := groupInput(c.P)
	if err := c.P.Err(); err != nil {
		return err
	}
	g, err := h.groups.Create(c.Ctx(), c.Actor, in)
	if err != nil {
		return err
	}
	return h.groupDetail(c, http.StatusCreated, g, false)
}

func (h *Handlers) updateGroup(c *endpoint.Call) error {
	in := groupInput(c.P)
	if err := c.P.Err(); err != nil {
		return err
	}
	g, err := h.groups.Update(c.Ctx(), c.Actor, c.Path("id"), in)
	if err != nil {
		return err
	}
	return h.groupDetail(c, http.StatusOK, g, true)
}

func (h *Handlers) deleteGroup(c *endpoint.Call) error {
	permanently := c.P.Flag("permanently_remove")
	fullPath, _ := c.P.String("full_path")
	if err := c.P.Err(); err != nil {
		return err
	}
	if err := h.groups.Delete(c.Ctx(), c.Actor, c.Path("id"), permanently, fullPath); err != nil {
		return err
	}
	return c.Accepted()
}

func (h *Handlers) transferGroup(c *endpoint.Call) error {
	var target *int64
	if id, ok := c.P.Int("group_id"); ok {
		target = &id
	}
	if err := c.P.Err(); err != nil {
		return err
	}
	g, err := h.groups.Transfer(c.Ctx(), c.Actor, c.Path("id"), target)
	if err != nil {
		return err
	}
	return h.groupDetail(c, http.StatusCreated, g, false)
}

func (h *Handlers) restoreGroup(c *endpoint.Call) error {
	g, err := h.groups.Restore(c.Ctx(), c.Actor, c.Path("id"))
	if err != nil {
		return err
	}
	return h.groupDetail(c, http.StatusCreated, g, false)
}

func (h *Handlers) listNamespaces(c *endpoint.Call) error {
	f := groups.NamespacesInput{OwnedOnly: c.P.Flag("owned_only"), TopLevelOnly: c.P.Flag("top_level_only")}
	if s, ok := c.P.String("full_path_search"); ok {
		if b, valid := endpoint.ParseBool(s); valid && b {
			f.FullPathSearch = true
		}
	}
	f.Search, _ = c.P.String("search")
	pg, err := c.Page()
	if err != nil {
		return err
	}
	ns, info, err := h.groups.Namespaces(c.Ctx(), c.Actor, f, pg)
	if err != nil {
		return err
	}
	out := make([]entity.Namespace, len(ns))
	for i := range ns {
		out[i] = h.r.Namespace(&ns[i])
	}
	c.Paginate(pg, info)
	return c.JSON(http.StatusOK, out)
}

func (h *Handlers) getNamespace(c *endpoint.Call) error {
	n, err := h.groups.Namespace(c.Ctx(), c.Actor, c.Path("id"))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, h.r.Namespace(&n))
}

func (h *Handlers) namespaceExists(c *endpoint.Call) error {
	var parent int64
	if id, ok := c.P.Int("parent_id"); ok {
		parent = id
	}
	if err := c.P.Err(); err != nil {
		return err
	}
	exists, suggests, err := h.groups.PathExists(c.Ctx(), c.Actor, c.Path("id"), parent)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, map[string]any{"exists": exists, "suggests": suggests})
}

// importState adds Quarry's import fields: how the group import that made
// the group went ("none" for a group made otherwise).
func (h *Handlers) importState(ctx context.Context, j *entity.GroupDetail, groupID int64) error {
	j.ImportStatus = "none"
	if h.imports == nil {
		return nil
	}
	i, ok, err := h.imports.ImportState(ctx, groupID)
	if err != nil || !ok {
		return err
	}
	j.ImportStatus = string(i.State)
	j.ImportError = entity.StrPtr(i.ErrorMessage)
	j.ImportStatistics = &entity.GroupImportStatistics{Groups: len(i.Progress.Groups), Imported: i.Progress.Imported,
		Skipped: i.Progress.Skipped}
	return nil
}
