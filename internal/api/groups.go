package api

import (
	"net/http"
	"strconv"

	"quarry/internal/attributes"
	"quarry/internal/groups"
	"quarry/internal/model"
	"quarry/internal/projects"
)

func groupInput(p *Params) groups.Input {
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

func groupListInput(p *Params, orderBy ...string) groups.ListInput {
	in := groups.ListInput{AllAvailable: p.BoolPtr("all_available"), Owned: p.Flag("owned"), TopLevelOnly: p.Flag("top_level_only"),
		CustomAttributes: p.Hash("custom_attributes"), OrderBy: "name", Sort: "asc"}
	in.Search, _ = p.String("search")
	if n, ok := p.Int("min_access_level"); ok {
		in.MinAccessLevel = int(n)
	}
	if ids, ok := p.Strings("skip_groups"); ok {
		for _, s := range ids {
			n, err := strconv.ParseInt(s, 10, 64)
			if err != nil {
				p.fail("skip_groups is invalid")
				break
			}
			in.SkipGroups = append(in.SkipGroups, n)
		}
	}
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
func (c *call) renderGroups(gs []model.Group) ([]groupJSON, error) {
	withStats := c.p.Flag("statistics") && c.actor.Admin()
	var attrs map[int64][]model.CustomAttribute
	if c.p.Flag("with_custom_attributes") && c.actor.Admin() {
		ids := make([]int64, len(gs))
		for i := range gs {
			ids[i] = gs[i].ID
		}
		var err error
		if attrs, err = c.s.Attributes.Of(c.r.Context(), attributes.Groups, ids); err != nil {
			return nil, err
		}
	}
	out := make([]groupJSON, len(gs))
	for i := range gs {
		out[i] = c.s.group(&gs[i])
		if attrs != nil {
			out[i].CustomAttributes = customAttributes(attrs[gs[i].ID])
		}
		if withStats {
			st, err := c.s.Groups.Statistics(c.r.Context(), gs[i])
			if err != nil {
				return nil, err
			}
			out[i].Statistics = statistics(&st)
		}
	}
	return out, nil
}

func (c *call) listGroupsWith(list func(groups.ListInput, model.Page) ([]model.Group, model.PageInfo, error), orderBy ...string) error {
	in := groupListInput(c.p, orderBy...)
	pg, err := c.page()
	if err != nil {
		return err
	}
	if pg.Keyset && (c.actor.SignedIn() || in.OrderBy != "name" || in.Sort != "asc") {
		return &model.Error{Kind: model.KindMethodNotAllowed, Message: "Keyset pagination is not yet available for this type of request"}
	}
	gs, info, err := list(in, pg)
	if err != nil {
		return err
	}
	out, err := c.renderGroups(gs)
	if err != nil {
		return err
	}
	c.paginate(pg, info)
	return c.json(http.StatusOK, out)
}

func (c *call) listGroups() error {
	return c.listGroupsWith(func(in groups.ListInput, pg model.Page) ([]model.Group, model.PageInfo, error) {
		return c.s.Groups.List(c.r.Context(), c.actor, in, pg)
	}, "name", "path", "id", "similarity")
}

func (c *call) subgroups(all bool) error {
	return c.listGroupsWith(func(in groups.ListInput, pg model.Page) ([]model.Group, model.PageInfo, error) {
		return c.s.Groups.Subgroups(c.r.Context(), c.actor, c.r.PathValue("id"), all, in, pg)
	}, "name", "path", "id")
}

// groupDetail renders GroupDetail: shares, the runners token for owners,
// and up to 100 projects and shared projects unless with_projects=false.
func (c *call) groupDetail(status int, g model.Group, withProjects bool) error {
	ctx := c.r.Context()
	j := groupDetailJSON{groupJSON: c.s.group(&g), SharedWithGroups: []sharedGroupJSON{}}
	acc, err := c.s.Groups.Access(ctx, c.actor, g.ID)
	if err != nil {
		return err
	}
	if c.actor.Admin() || acc >= model.Owner {
		j.RunnersToken = &g.RunnersToken
	}
	if c.p.Flag("statistics") && c.actor.Admin() {
		st, err := c.s.Groups.Statistics(ctx, g)
		if err != nil {
			return err
		}
		j.Statistics = statistics(&st)
	}
	if withProjects {
		page := model.Page{Number: 1, PerPage: 100}
		ref := strconv.FormatInt(g.ID, 10)
		for _, part := range []struct {
			dst    **[]projectJSON
			shared bool
		}{{&j.Projects, false}, {&j.SharedProjects, true}} {
			in := projects.GroupProjectsInput{OnlyShared: part.shared}
			in.OrderBy, in.Desc = "created_at", true
			ps, _, err := c.s.Projects.GroupProjects(ctx, c.actor, ref, in, page)
			if err != nil {
				return err
			}
			views, err := c.s.Projects.Views(ctx, c.actor, ps, false)
			if err != nil {
				return err
			}
			list := make([]projectJSON, len(views))
			for i := range views {
				list[i] = c.s.project(&views[i], c.actor)
			}
			*part.dst = &list
		}
	}
	return c.json(status, j)
}

func (c *call) getGroup() error {
	withProjects := true
	if b, ok := c.p.Bool("with_projects"); ok {
		withProjects = b
	}
	if err := c.p.Err(); err != nil {
		return err
	}
	g, _, err := c.s.Groups.Resolve(c.r.Context(), c.actor, c.r.PathValue("id"))
	if err != nil {
		return err
	}
	return c.groupDetail(http.StatusOK, g, withProjects)
}

func (c *call) createGroup() error {
	c.p.Require("name", "path")
	in := groupInput(c.p)
	if err := c.p.Err(); err != nil {
		return err
	}
	g, err := c.s.Groups.Create(c.r.Context(), c.actor, in)
	if err != nil {
		return err
	}
	return c.groupDetail(http.StatusCreated, g, false)
}

func (c *call) updateGroup() error {
	in := groupInput(c.p)
	if err := c.p.Err(); err != nil {
		return err
	}
	g, err := c.s.Groups.Update(c.r.Context(), c.actor, c.r.PathValue("id"), in)
	if err != nil {
		return err
	}
	return c.groupDetail(http.StatusOK, g, true)
}

func (c *call) deleteGroup() error {
	permanently := c.p.Flag("permanently_remove")
	fullPath, _ := c.p.String("full_path")
	if err := c.p.Err(); err != nil {
		return err
	}
	if err := c.s.Groups.Delete(c.r.Context(), c.actor, c.r.PathValue("id"), permanently, fullPath); err != nil {
		return err
	}
	return c.json(http.StatusAccepted, messageBody{Message: "202 Accepted"})
}

func (c *call) transferGroup() error {
	var target *int64
	if id, ok := c.p.Int("group_id"); ok {
		target = &id
	}
	if err := c.p.Err(); err != nil {
		return err
	}
	g, err := c.s.Groups.Transfer(c.r.Context(), c.actor, c.r.PathValue("id"), target)
	if err != nil {
		return err
	}
	return c.groupDetail(http.StatusCreated, g, false)
}

func (c *call) restoreGroup() error {
	g, err := c.s.Groups.Restore(c.r.Context(), c.actor, c.r.PathValue("id"))
	if err != nil {
		return err
	}
	return c.groupDetail(http.StatusCreated, g, false)
}

func (c *call) groupProjects(shared bool) error {
	orderBy := []string{"id", "name", "path", "created_at", "updated_at", "last_activity_at", "similarity", "star_count"}
	if shared {
		orderBy = []string{"id", "name", "path", "created_at", "updated_at", "last_activity_at", "star_count"}
	}
	in := projects.GroupProjectsInput{ListInput: projectListInput(c.p, orderBy), OnlyShared: shared, WithShared: !shared,
		IncludeSubgroups: c.p.Flag("include_subgroups")}
	if b, ok := c.p.Bool("with_shared"); ok && !shared {
		in.WithShared = b
	}
	if err := c.p.Err(); err != nil {
		return err
	}
	return c.listProjectsWith(in.ListInput, func(li projects.ListInput, pg model.Page) ([]model.Project, model.PageInfo, error) {
		in.ListInput = li
		return c.s.Projects.GroupProjects(c.r.Context(), c.actor, c.r.PathValue("id"), in, pg)
	})
}

func (c *call) listNamespaces() error {
	f := groups.NamespacesInput{OwnedOnly: c.p.Flag("owned_only"), TopLevelOnly: c.p.Flag("top_level_only")}
	if s, ok := c.p.String("full_path_search"); ok {
		if b, valid := ParseBool(s); valid && b {
			f.FullPathSearch = true
		}
	}
	f.Search, _ = c.p.String("search")
	pg, err := c.page()
	if err != nil {
		return err
	}
	ns, info, err := c.s.Groups.Namespaces(c.r.Context(), c.actor, f, pg)
	if err != nil {
		return err
	}
	out := make([]namespaceJSON, len(ns))
	for i := range ns {
		out[i] = c.s.namespaceBasic(&ns[i])
	}
	c.paginate(pg, info)
	return c.json(http.StatusOK, out)
}

func (c *call) getNamespace() error {
	n, err := c.s.Groups.Namespace(c.r.Context(), c.actor, c.r.PathValue("id"))
	if err != nil {
		return err
	}
	return c.json(http.StatusOK, c.s.namespaceBasic(&n))
}

func (c *call) namespaceExists() error {
	var parent int64
	if id, ok := c.p.Int("parent_id"); ok {
		parent = id
	}
	if err := c.p.Err(); err != nil {
		return err
	}
	exists, suggests, err := c.s.Groups.PathExists(c.r.Context(), c.actor, c.r.PathValue("id"), parent)
	if err != nil {
		return err
	}
	return c.json(http.StatusOK, map[string]any{"exists": exists, "suggests": suggests})
}
