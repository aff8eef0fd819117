package projects

import (
	"context"
	"fmt"
	"net/http"
	"strconv"

	"quarry/internal/api/endpoint"
	"quarry/internal/api/entity"
	"quarry/internal/attributes"
	"quarry/internal/auth"
	"quarry/internal/model"
	"quarry/internal/projects"
)

// projectInput reads the attributes of POST and PUT /projects.
func projectInput(p *endpoint.Params) projects.Input {
	in := projects.Input{
		Name: p.StringPtr("name"), Path: p.StringPtr("path"), Description: p.StringPtr("description"),
		DefaultBranch: p.StringPtr("default_branch"), RepositoryStorage: p.StringPtr("repository_storage"),
		InitializeWithReadme: p.Flag("initialize_with_readme"), Avatar: p.File("avatar"), Settings: map[string]any{},
	}
	if v, ok := p.Enum("visibility", "private", "internal", "public"); ok {
		in.Visibility = &v
	}
	if id, ok := p.Int("namespace_id"); ok {
		in.NamespaceID = &id
	}
	for _, key := range []string{"topics", "tag_list"} {
		if t, ok := p.Unique(key); ok && in.Topics == nil {
			in.Topics = &t
		}
	}
	if p.Has("avatar") && in.Avatar == nil {
		if v, _ := p.Raw("avatar"); v == "" {
			in.RemoveAvatar = true
		}
	}
	for flag, level := range model.DeprecatedFeatureFlags {
		if b, ok := p.Bool(flag); ok && !p.Has(level) {
			v := "disabled"
			if b {
				v = "enabled"
			}
			switch level {
			case "issues_access_level":
				in.IssuesAccessLevel = &v
			case "merge_requests_access_level":
				in.MergeRequestsAccessLevel = &v
			default:
				in.Settings[level] = v
			}
		}
	}
	if v, ok := p.Enum("issues_access_level", model.FeatureLevels...); ok {
		in.IssuesAccessLevel = &v
	}
	if v, ok := p.Enum("merge_requests_access_level", model.FeatureLevels...); ok {
		in.MergeRequestsAccessLevel = &v
	}
	if b, ok := p.Bool("public_builds"); ok && !p.Has("public_jobs") {
		in.Settings["public_jobs"] = b
	}
	for _, sp := range model.ProjectSettingParams {
		if !p.Has(sp.Name) {
			continue
		}
		switch sp.Kind {
		case model.SettingBool:
			if b, ok := p.Bool(sp.Name); ok {
				in.Settings[sp.Name] = b
			}
		case model.SettingInt:
			if n, ok := p.Int(sp.Name); ok {
				in.Settings[sp.Name] = n
			}
		case model.SettingString:
			if v, ok := p.String(sp.Name); ok {
				in.Settings[sp.Name] = v
			}
		case model.SettingEnum:
			if v, ok := p.Enum(sp.Name, sp.Values...); ok {
				in.Settings[sp.Name] = v
			}
		case model.SettingNullString:
			if p.IsNull(sp.Name) {
				in.Settings[sp.Name] = nil
			} else if v, ok := p.String(sp.Name); ok {
				in.Settings[sp.Name] = v
			}
		}
	}
	if h := p.Hash("container_expiration_policy_attributes"); len(h) > 0 {
		pol := map[string]any{}
		for k, v := range h {
			switch k {
			case "enabled":
				b, ok := endpoint.ParseBool(v)
				if !ok {
					p.Fail("container_expiration_policy_attributes[enabled] is invalid")
				}
				pol[k] = b
			case "keep_n":
				n, err := strconv.Atoi(v)
				if err != nil {
					p.Fail("container_expiration_policy_attributes[keep_n] is invalid")
				}
				pol[k] = n
			default:
				pol[k] = v
			}
		}
		in.ContainerExpirationPolicy = pol
	}
	return in
}

// renderProjects presents projects: the simple form for anonymous callers
// or simple=true, else the full entity with permissions.
func (h *Handlers) renderProjects(c *endpoint.Call, ps []model.Project, simple, withStats, withCustom bool) (any, error) {
	if h.cacheable(c, simple, withStats, withCustom) {
		views, err := h.projects.CachedViews(c.Ctx(), c.Actor, ps, h.r.Cache)
		if err != nil {
			return nil, err
		}
		return h.cachedProjects(c, views, true)
	}
	views, err := h.projects.Views(c.Ctx(), c.Actor, ps, withStats)
	if err != nil {
		return nil, err
	}
	var attrs map[int64][]model.CustomAttribute
	if withCustom && c.Actor.Admin() {
		ids := make([]int64, len(ps))
		for i := range ps {
			ids[i] = ps[i].ID
		}
		if attrs, err = h.attributes.Of(c.Ctx(), attributes.Projects, ids); err != nil {
			return nil, err
		}
	}
	if simple || !c.Actor.SignedIn() {
		out := make([]entity.ProjectBasic, len(views))
		for i := range views {
			out[i] = h.r.ProjectBasic(&views[i], c.Actor)
			if attrs != nil {
				out[i].CustomAttributes = h.r.CustomAttributes(attrs[ps[i].ID])
			}
		}
		return out, nil
	}
	out := make([]entity.Project, len(views))
	for i := range views {
		out[i] = h.r.Project(&views[i], c.Actor)
		if attrs != nil {
			out[i].CustomAttributes = h.r.CustomAttributes(attrs[ps[i].ID])
		}
	}
	return out, nil
}

// renderProject presents one project.
func (h *Handlers) renderProject(c *endpoint.Call, status int, p model.Project, withStats, withLicense bool) error {
	views, err := h.projects.Views(c.Ctx(), c.Actor, []model.Project{p}, withStats)
	if err != nil {
		return err
	}
	return h.renderView(c, status, views[0], withLicense)
}

// renderView presents one project from its view.
func (h *Handlers) renderView(c *endpoint.Call, status int, v projects.View, withLicense bool) error {
	if !c.Actor.SignedIn() {
		return c.JSON(status, h.r.ProjectBasic(&v, c.Actor))
	}
	j := h.r.Project(&v, c.Actor)
	if !withLicense {
		return c.JSON(status, j)
	}
	p := v.Project
	out := entity.ProjectWithLicense{Project: j}
	if v.CanReadCode {
		lic, err := h.projects.DetectLicense(c.Ctx(), p)
		if err != nil {
			return err
		}
		if lic != nil {
			u := h.r.ProjectWebURL(&p) + "/-/blob/" + p.DefaultBranch + "/" + lic.Path
			out.LicenseURL = &u
			out.License = &entity.License{Key: lic.Key, Name: lic.Name, Nickname: lic.Nickname, HTMLURL: lic.HTMLURL, SourceURL: lic.SourceURL}
		}
	}
	return c.JSON(status, out)
}

var projectOrderBy = []string{"id", "name", "path", "created_at", "updated_at", "last_activity_at", "similarity",
	"repository_size", "storage_size", "packages_size", "wiki_size", "star_count"}

// projectListInput reads the filters shared by the project lists.
func projectListInput(p *endpoint.Params, orderBy []string) projects.ListInput {
	var in projects.ListInput
	f := &in.ProjectFilter
	f.Archived = p.BoolPtr("archived")
	f.Visibility, _ = p.Enum("visibility", "private", "internal", "public")
	f.Search, _ = p.String("search")
	f.SearchNamespaces = p.Flag("search_namespaces")
	f.Owned = p.Flag("owned")
	f.Membership = p.Flag("membership")
	f.Starred = p.Flag("starred")
	if n, ok := p.Int("min_access_level"); ok {
		f.MinAccessLevel = int(n)
	}
	f.Topics, _ = p.Unique("topic")
	if n, ok := p.Int("topic_id"); ok {
		f.TopicID = n
	}
	if n, ok := p.Int("id_after"); ok {
		f.IDAfter = n
	}
	if n, ok := p.Int("id_before"); ok {
		f.IDBefore = n
	}
	f.LastActivityAfter, _ = p.Time("last_activity_after")
	f.LastActivityBefore, _ = p.Time("last_activity_before")
	f.WithIssuesEnabled = p.Flag("with_issues_enabled")
	f.WithMergeRequestsEnabled = p.Flag("with_merge_requests_enabled")
	f.Language, _ = p.String("with_programming_language")
	f.RepositoryStorage, _ = p.String("repository_storage")
	f.CustomAttributes = p.Hash("custom_attributes")
	f.OrderBy = "created_at"
	if v, ok := p.Enum("order_by", orderBy...); ok {
		f.OrderBy = v
	}
	f.Desc = true
	if v, ok := p.Enum("sort", "asc", "desc"); ok {
		f.Desc = v == "desc"
	}
	if f.OrderBy == "similarity" {
		if f.Search == "" {
			f.OrderBy = "created_at"
		} else {
			f.Desc = false
		}
	}
	return in
}

// listProjectsWith serves a project list from a service call, or from
// cached (when not nil) for the entities the entity cache serves.
func (h *Handlers) listProjectsWith(c *endpoint.Call, in projects.ListInput, list func(projects.ListInput, model.Page) ([]model.Project, model.PageInfo, error),
	cached func(projects.ListInput, model.Page) ([]projects.View, model.PageInfo, error)) error {
	pg, err := c.Page()
	if err != nil {
		return err
	}
	if pg.Keyset && in.OrderBy != "id" {
		return &model.Error{Kind: model.KindMethodNotAllowed, Message: "Keyset pagination is not yet available for this type of request"}
	}
	var body any
	var info model.PageInfo
	var lastID int64
	if cached != nil && h.cacheable(c, c.P.Flag("simple"), c.P.Flag("statistics"), c.P.Flag("with_custom_attributes")) {
		var views []projects.View
		if views, info, err = cached(in, pg); err != nil {
			return err
		}
		if body, err = h.cachedProjects(c, views, true); err != nil {
			return err
		}
		if len(views) > 0 {
			lastID = views[len(views)-1].Project.ID
		}
	} else {
		var ps []model.Project
		if ps, info, err = list(in, pg); err != nil {
			return err
		}
		if body, err = h.renderProjects(c, ps, c.P.Flag("simple"), c.P.Flag("statistics"), c.P.Flag("with_custom_attributes")); err != nil {
			return err
		}
		if len(ps) > 0 {
			lastID = ps[len(ps)-1].ID
		}
	}
	if pg.Keyset {
		// GitLab continues project lists with id_after / id_before.
		if info.HasMore && lastID != 0 {
			key := "id_after"
			if in.Desc {
				key = "id_before"
			}
			c.W.Header().Set("Link", fmt.Sprintf(`<%s>; rel="next"`, c.LinkURL(map[string]string{key: strconv.FormatInt(lastID, 10)})))
		}
	} else {
		c.Paginate(pg, info)
	}
	return c.JSON(http.StatusOK, body)
}

func (h *Handlers) listProjects(c *endpoint.Call) error {
	in := projectListInput(c.P, projectOrderBy)
	if err := c.P.Err(); err != nil {
		return err
	}
	return h.listProjectsWith(c, in, func(in projects.ListInput, pg model.Page) ([]model.Project, model.PageInfo, error) {
		return h.projects.List(c.Ctx(), c.Actor, in, pg)
	}, func(in projects.ListInput, pg model.Page) ([]projects.View, model.PageInfo, error) {
		return h.projects.CachedList(c.Ctx(), c.Actor, in, pg, h.r.Cache)
	})
}

func (h *Handlers) userProjects(c *endpoint.Call) error {
	in := projectListInput(c.P, projectOrderBy[:6])
	in.UserRef = c.Path("user_id")
	if err := c.P.Err(); err != nil {
		return err
	}
	return h.listProjectsWith(c, in, func(in projects.ListInput, pg model.Page) ([]model.Project, model.PageInfo, error) {
		return h.projects.List(c.Ctx(), c.Actor, in, pg)
	}, func(in projects.ListInput, pg model.Page) ([]projects.View, model.PageInfo, error) {
		return h.projects.CachedList(c.Ctx(), c.Actor, in, pg, h.r.Cache)
	})
}

func (h *Handlers) userStarredProjects(c *endpoint.Call) error {
	in := projectListInput(c.P, projectOrderBy[:6])
	if err := c.P.Err(); err != nil {
		return err
	}
	return h.listProjectsWith(c, in, func(in projects.ListInput, pg model.Page) ([]model.Project, model.PageInfo, error) {
		return h.projects.StarredBy(c.Ctx(), c.Actor, c.Path("user_id"), in, pg)
	}, nil)
}

func (h *Handlers) projectForks(c *endpoint.Call) error {
	in := projectListInput(c.P, projectOrderBy[:6])
	if err := c.P.Err(); err != nil {
		return err
	}
	return h.listProjectsWith(c, in, func(in projects.ListInput, pg model.Page) ([]model.Project, model.PageInfo, error) {
		return h.projects.Forks(c.Ctx(), c.Actor, c.Path("id"), in, pg)
	}, nil)
}

func (h *Handlers) getProject(c *endpoint.Call) error {
	withStats, withLicense := c.P.Flag("statistics"), c.P.Flag("license")
	if err := c.P.Err(); err != nil {
		return err
	}
	if h.cacheable(c, false, withStats, withLicense) {
		vs, err := h.projects.ResolveView(c.Ctx(), c.Actor, c.Path("id"), h.r.Cache)
		if err != nil {
			return err
		}
		body, err := h.cachedProjects(c, vs, false)
		if err != nil {
			return err
		}
		return c.JSON(http.StatusOK, body)
	}
	p, acc, err := h.projects.Resolve(c.Ctx(), c.Actor, c.Path("id"))
	if err != nil {
		return err
	}
	v, err := h.projects.View(c.Ctx(), c.Actor, p, acc, withStats)
	if err != nil {
		return err
	}
	return h.renderView(c, http.StatusOK, v, withLicense)
}

func (h *Handlers) createProject(c *endpoint.Call, forUser bool) error {
	var owner *model.User
	if forUser {
		id, err := c.PathID("user_id")
		if err != nil {
			return err
		}
		c.P.Require("name")
		u, err := h.users.ByID(c.Ctx(), c.Actor, id)
		if err != nil {
			return err
		}
		owner = &u
	} else {
		c.P.AtLeastOneOf("name", "path")
	}
	in := projectInput(c.P)
	if err := c.P.Err(); err != nil {
		return err
	}
	p, err := h.projects.Create(c.Ctx(), c.Actor, in, owner)
	if err != nil {
		return err
	}
	return h.renderProject(c, http.StatusCreated, p, false, false)
}

// projectUpdateKeys are the attributes PUT /projects/:id names when none
// is given.
var projectUpdateKeys = []string{"name", "path", "description", "default_branch", "visibility", "topics", "tag_list",
	"issues_access_level", "merge_requests_access_level", "avatar", "container_expiration_policy_attributes"}

func (h *Handlers) updateProject(c *endpoint.Call) error {
	keys := append([]string{}, projectUpdateKeys...)
	for _, sp := range model.ProjectSettingParams {
		keys = append(keys, sp.Name)
	}
	for k := range model.DeprecatedFeatureFlags {
		keys = append(keys, k)
	}
	// An administrator's repository_storage alone is an update too: it
	// moves the repository (a storage move).
	present := c.P.Has("repository_storage")
	for _, k := range keys {
		present = present || c.P.Has(k) || len(c.P.Hash(k)) > 0
	}
	if !present {
		c.P.AtLeastOneOf(keys...)
	}
	in := projectInput(c.P)
	if err := c.P.Err(); err != nil {
		return err
	}
	p, err := h.projects.Update(c.Ctx(), c.Actor, c.Path("id"), in)
	if err != nil {
		return err
	}
	return h.renderProject(c, http.StatusOK, p, false, false)
}

func (h *Handlers) deleteProject(c *endpoint.Call) error {
	permanently := c.P.Flag("permanently_remove")
	fullPath, _ := c.P.String("full_path")
	if err := c.P.Err(); err != nil {
		return err
	}
	if err := h.projects.Delete(c.Ctx(), c.Actor, c.Path("id"), permanently, fullPath); err != nil {
		return err
	}
	return c.Accepted()
}

// projectAction serves POST /projects/:id/<action> and, for id "user",
// POST /projects/user/:user_id.
// change serves the POST /projects/:id/<change> rows that answer with the
// changed project (201).
func (h *Handlers) change(c *endpoint.Call, do func(ctx context.Context, a auth.Actor, ref string) (model.Project, error)) error {
	p, err := do(c.Ctx(), c.Actor, c.Path("id"))
	if err != nil {
		return err
	}
	return h.renderProject(c, http.StatusCreated, p, false, false)
}

func (h *Handlers) archive(c *endpoint.Call) error {
	return h.change(c, func(ctx context.Context, a auth.Actor, ref string) (model.Project, error) {
		return h.projects.SetArchived(ctx, a, ref, true)
	})
}

func (h *Handlers) unarchive(c *endpoint.Call) error {
	return h.change(c, func(ctx context.Context, a auth.Actor, ref string) (model.Project, error) {
		return h.projects.SetArchived(ctx, a, ref, false)
	})
}

func (h *Handlers) star(c *endpoint.Call) error {
	return h.change(c, func(ctx context.Context, a auth.Actor, ref string) (model.Project, error) {
		return h.projects.Star(ctx, a, ref, true)
	})
}

func (h *Handlers) unstar(c *endpoint.Call) error {
	return h.change(c, func(ctx context.Context, a auth.Actor, ref string) (model.Project, error) {
		return h.projects.Star(ctx, a, ref, false)
	})
}

func (h *Handlers) restore(c *endpoint.Call) error { return h.change(c, h.projects.Restore) }

func (h *Handlers) transferProject(c *endpoint.Call) error {
	c.P.Require("namespace")
	ns, _ := c.P.String("namespace")
	if err := c.P.Err(); err != nil {
		return err
	}
	p, err := h.projects.Transfer(c.Ctx(), c.Actor, c.Path("id"), ns)
	if err != nil {
		return err
	}
	return h.renderProject(c, http.StatusOK, p, false, false)
}

func (h *Handlers) forkProject(c *endpoint.Call) error {
	p := c.P
	in := projects.ForkInput{Name: p.StringPtr("name"), Path: p.StringPtr("path"), Description: p.StringPtr("description")}
	if v, ok := p.Enum("visibility", "private", "internal", "public"); ok {
		in.Visibility = &v
	}
	for _, k := range []string{"namespace_id", "namespace_path", "namespace"} {
		if v, ok := p.String(k); ok && in.Namespace == "" {
			in.Namespace = v
		}
	}
	if err := p.Err(); err != nil {
		return err
	}
	fork, err := h.projects.Fork(c.Ctx(), c.Actor, c.Path("id"), in)
	if err != nil {
		return err
	}
	return h.renderProject(c, http.StatusCreated, fork, false, false)
}

func (h *Handlers) markFork(c *endpoint.Call) error {
	from, err := c.PathID("forked_from_id")
	if err != nil {
		return err
	}
	p, err := h.projects.ForkRelation(c.Ctx(), c.Actor, c.Path("id"), &from)
	if err != nil {
		return err
	}
	return h.renderProject(c, http.StatusCreated, p, false, false)
}

func (h *Handlers) unmarkFork(c *endpoint.Call) error {
	if _, err := h.projects.ForkRelation(c.Ctx(), c.Actor, c.Path("id"), nil); err != nil {
		return err
	}
	return c.NoContent()
}

func (h *Handlers) starrers(c *endpoint.Call) error {
	search, _ := c.P.String("search")
	pg, err := c.Page()
	if err != nil {
		return err
	}
	list, info, err := h.projects.Starrers(c.Ctx(), c.Actor, c.Path("id"), search, pg)
	if err != nil {
		return err
	}
	out := make([]entity.Starrer, len(list))
	for i := range list {
		out[i] = entity.Starrer{StarredSince: entity.Time(list[i].StarredAt), User: h.r.UserBasic(&list[i].User)}
	}
	c.Paginate(pg, info)
	return c.JSON(http.StatusOK, out)
}

var shareLevels = []string{"10", "20", "30", "40", "50"}

func (h *Handlers) shareProject(c *endpoint.Call) error {
	p := c.P
	p.Require("group_id", "group_access")
	gid, _ := p.Int("group_id")
	lvl, _ := p.Enum("group_access", shareLevels...)
	expires, _ := p.Date("expires_at")
	if err := p.Err(); err != nil {
		return err
	}
	n, _ := strconv.Atoi(lvl)
	l, err := h.projects.Share(c.Ctx(), c.Actor, c.Path("id"), gid, model.AccessLevel(n), expires)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, entity.GroupLink{ID: l.GroupID, ProjectID: l.ProjectID, GroupID: l.GroupID,
		GroupAccess: int(l.GroupAccess), ExpiresAt: entity.StrPtr(l.ExpiresAt)})
}

func (h *Handlers) unshareProject(c *endpoint.Call) error {
	gid, err := c.PathID("group_id")
	if err != nil {
		return err
	}
	if err := h.projects.Unshare(c.Ctx(), c.Actor, c.Path("id"), gid); err != nil {
		return err
	}
	return c.NoContent()
}

func (h *Handlers) projectLanguages(c *endpoint.Call) error {
	langs, err := h.projects.Languages(c.Ctx(), c.Actor, c.Path("id"))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, langs)
}

func (h *Handlers) groupProjects(c *endpoint.Call, shared bool) error {
	orderBy := []string{"id", "name", "path", "created_at", "updated_at", "last_activity_at", "similarity", "star_count"}
	if shared {
		orderBy = []string{"id", "name", "path", "created_at", "updated_at", "last_activity_at", "star_count"}
	}
	in := projects.GroupProjectsInput{ListInput: projectListInput(c.P, orderBy), OnlyShared: shared, WithShared: !shared,
		IncludeSubgroups: c.P.Flag("include_subgroups")}
	if b, ok := c.P.Bool("with_shared"); ok && !shared {
		in.WithShared = b
	}
	if err := c.P.Err(); err != nil {
		return err
	}
	return h.listProjectsWith(c, in.ListInput, func(li projects.ListInput, pg model.Page) ([]model.Project, model.PageInfo, error) {
		in.ListInput = li
		return h.projects.GroupProjects(c.Ctx(), c.Actor, c.Path("id"), in, pg)
	}, nil)
}
