package api

import (
	"fmt"
	"net/http"
	"strconv"

	"quarry/internal/attributes"
	"quarry/internal/model"
	"quarry/internal/projects"
)

// projectInput reads the attributes of POST and PUT /projects.
func projectInput(p *Params) projects.Input {
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
		if t, ok := p.Strings(key); ok && in.Topics == nil {
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
				b, ok := ParseBool(v)
				if !ok {
					p.fail("container_expiration_policy_attributes[enabled] is invalid")
				}
				pol[k] = b
			case "keep_n":
				n, err := strconv.Atoi(v)
				if err != nil {
					p.fail("container_expiration_policy_attributes[keep_n] is invalid")
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
func (c *call) renderProjects(ps []model.Project, simple, withStats, withCustom bool) (any, error) {
	views, err := c.s.Projects.Views(c.r.Context(), c.actor, ps, withStats)
	if err != nil {
		return nil, err
	}
	var attrs map[int64][]model.CustomAttribute
	if withCustom && c.actor.Admin() {
		ids := make([]int64, len(ps))
		for i := range ps {
			ids[i] = ps[i].ID
		}
		if attrs, err = c.s.Attributes.Of(c.r.Context(), attributes.Projects, ids); err != nil {
			return nil, err
		}
	}
	if simple || !c.actor.SignedIn() {
		out := make([]projectBasicJSON, len(views))
		for i := range views {
			out[i] = c.s.projectBasic(&views[i], c.actor)
			if attrs != nil {
				out[i].CustomAttributes = customAttributes(attrs[ps[i].ID])
			}
		}
		return out, nil
	}
	out := make([]projectJSON, len(views))
	for i := range views {
		out[i] = c.s.project(&views[i], c.actor)
		if attrs != nil {
			out[i].CustomAttributes = customAttributes(attrs[ps[i].ID])
		}
	}
	return out, nil
}

// renderProject presents one project.
func (c *call) renderProject(status int, p model.Project, withStats, withLicense bool) error {
	views, err := c.s.Projects.Views(c.r.Context(), c.actor, []model.Project{p}, withStats)
	if err != nil {
		return err
	}
	return c.renderView(status, views[0], withLicense)
}

// renderView presents one project from its view.
func (c *call) renderView(status int, v projects.View, withLicense bool) error {
	if !c.actor.SignedIn() {
		return c.json(status, c.s.projectBasic(&v, c.actor))
	}
	j := c.s.project(&v, c.actor)
	if !withLicense {
		return c.json(status, j)
	}
	p := v.Project
	out := projectWithLicenseJSON{projectJSON: j}
	if v.CanReadCode {
		lic, err := c.s.Projects.DetectLicense(c.r.Context(), p)
		if err != nil {
			return err
		}
		if lic != nil {
			u := c.s.projectWebURL(&p) + "/-/blob/" + p.DefaultBranch + "/" + lic.Path
			out.LicenseURL = &u
			out.License = &licenseJSON{Key: lic.Key, Name: lic.Name, Nickname: lic.Nickname, HTMLURL: lic.HTMLURL, SourceURL: lic.SourceURL}
		}
	}
	return c.json(status, out)
}

var projectOrderBy = []string{"id", "name", "path", "created_at", "updated_at", "last_activity_at", "similarity",
	"repository_size", "storage_size", "packages_size", "wiki_size", "star_count"}

// projectListInput reads the filters shared by the project lists.
func projectListInput(p *Params, orderBy []string) projects.ListInput {
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
	f.Topics, _ = p.Strings("topic")
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

// listProjectsWith serves a project list from a service call.
func (c *call) listProjectsWith(in projects.ListInput, list func(projects.ListInput, model.Page) ([]model.Project, model.PageInfo, error)) error {
	pg, err := c.page()
	if err != nil {
		return err
	}
	if pg.Keyset && in.OrderBy != "id" {
		return &model.Error{Kind: model.KindMethodNotAllowed, Message: "Keyset pagination is not yet available for this type of request"}
	}
	ps, info, err := list(in, pg)
	if err != nil {
		return err
	}
	body, err := c.renderProjects(ps, c.p.Flag("simple"), c.p.Flag("statistics"), c.p.Flag("with_custom_attributes"))
	if err != nil {
		return err
	}
	if pg.Keyset {
		// GitLab continues project lists with id_after / id_before.
		if info.HasMore && len(ps) > 0 {
			key := "id_after"
			if in.Desc {
				key = "id_before"
			}
			c.w.Header().Set("Link", fmt.Sprintf(`<%s>; rel="next"`, c.linkURL(map[string]string{key: strconv.FormatInt(ps[len(ps)-1].ID, 10)})))
		}
	} else {
		c.paginate(pg, info)
	}
	return c.json(http.StatusOK, body)
}

func (c *call) listProjects() error {
	in := projectListInput(c.p, projectOrderBy)
	if err := c.p.Err(); err != nil {
		return err
	}
	return c.listProjectsWith(in, func(in projects.ListInput, pg model.Page) ([]model.Project, model.PageInfo, error) {
		return c.s.Projects.List(c.r.Context(), c.actor, in, pg)
	})
}

func (c *call) userProjects() error {
	in := projectListInput(c.p, projectOrderBy[:6])
	in.UserRef = c.r.PathValue("user_id")
	if err := c.p.Err(); err != nil {
		return err
	}
	return c.listProjectsWith(in, func(in projects.ListInput, pg model.Page) ([]model.Project, model.PageInfo, error) {
		return c.s.Projects.List(c.r.Context(), c.actor, in, pg)
	})
}

func (c *call) userStarredProjects() error {
	in := projectListInput(c.p, projectOrderBy[:6])
	if err := c.p.Err(); err != nil {
		return err
	}
	return c.listProjectsWith(in, func(in projects.ListInput, pg model.Page) ([]model.Project, model.PageInfo, error) {
		return c.s.Projects.StarredBy(c.r.Context(), c.actor, c.r.PathValue("user_id"), in, pg)
	})
}

func (c *call) projectForks() error {
	in := projectListInput(c.p, projectOrderBy[:6])
	if err := c.p.Err(); err != nil {
		return err
	}
	return c.listProjectsWith(in, func(in projects.ListInput, pg model.Page) ([]model.Project, model.PageInfo, error) {
		return c.s.Projects.Forks(c.r.Context(), c.actor, c.r.PathValue("id"), in, pg)
	})
}

func (c *call) getProject() error {
	withStats, withLicense := c.p.Flag("statistics"), c.p.Flag("license")
	if err := c.p.Err(); err != nil {
		return err
	}
	p, acc, err := c.s.Projects.Resolve(c.r.Context(), c.actor, c.r.PathValue("id"))
	if err != nil {
		return err
	}
	v, err := c.s.Projects.View(c.r.Context(), c.actor, p, acc, withStats)
	if err != nil {
		return err
	}
	return c.renderView(http.StatusOK, v, withLicense)
}

func (c *call) createProject(forUser bool) error {
	var owner *model.User
	if forUser {
		id, err := strconv.ParseInt(c.r.PathValue("action"), 10, 64)
		if err != nil {
			return errRouteNotFound
		}
		c.p.Require("name")
		u, err := c.s.Users.ByID(c.r.Context(), c.actor, id)
		if err != nil {
			return err
		}
		owner = &u
	} else {
		c.p.AtLeastOneOf("name", "path")
	}
	in := projectInput(c.p)
	if err := c.p.Err(); err != nil {
		return err
	}
	p, err := c.s.Projects.Create(c.r.Context(), c.actor, in, owner)
	if err != nil {
		return err
	}
	return c.renderProject(http.StatusCreated, p, false, false)
}

// projectUpdateKeys are the attributes PUT /projects/:id names when none
// is given.
var projectUpdateKeys = []string{"name", "path", "description", "default_branch", "visibility", "topics", "tag_list",
	"issues_access_level", "merge_requests_access_level", "avatar", "container_expiration_policy_attributes"}

func (c *call) updateProject() error {
	keys := append([]string{}, projectUpdateKeys...)
	for _, sp := range model.ProjectSettingParams {
		keys = append(keys, sp.Name)
	}
	for k := range model.DeprecatedFeatureFlags {
		keys = append(keys, k)
	}
	present := false
	for _, k := range keys {
		present = present || c.p.Has(k) || len(c.p.Hash(k)) > 0
	}
	if !present {
		c.p.AtLeastOneOf(keys...)
	}
	in := projectInput(c.p)
	if err := c.p.Err(); err != nil {
		return err
	}
	p, err := c.s.Projects.Update(c.r.Context(), c.actor, c.r.PathValue("id"), in)
	if err != nil {
		return err
	}
	return c.renderProject(http.StatusOK, p, false, false)
}

func (c *call) deleteProject() error {
	permanently := c.p.Flag("permanently_remove")
	fullPath, _ := c.p.String("full_path")
	if err := c.p.Err(); err != nil {
		return err
	}
	if err := c.s.Projects.Delete(c.r.Context(), c.actor, c.r.PathValue("id"), permanently, fullPath); err != nil {
		return err
	}
	return c.json(http.StatusAccepted, messageBody{Message: "202 Accepted"})
}

// projectAction serves POST /projects/:id/<action> and, for id "user",
// POST /projects/user/:user_id.
func (c *call) projectAction() error {
	if c.r.PathValue("id") == "user" {
		return c.createProject(true)
	}
	ctx, ref := c.r.Context(), c.r.PathValue("id")
	var p model.Project
	var err error
	switch c.r.PathValue("action") {
	case "archive":
		p, err = c.s.Projects.SetArchived(ctx, c.actor, ref, true)
	case "unarchive":
		p, err = c.s.Projects.SetArchived(ctx, c.actor, ref, false)
	case "restore":
		p, err = c.s.Projects.Restore(ctx, c.actor, ref)
	case "star":
		p, err = c.s.Projects.Star(ctx, c.actor, ref, true)
	case "unstar":
		p, err = c.s.Projects.Star(ctx, c.actor, ref, false)
	case "fork":
		return c.forkProject()
	case "share":
		return c.shareProject()
	default:
		return errRouteNotFound
	}
	if err != nil {
		return err
	}
	return c.renderProject(http.StatusCreated, p, false, false)
}

func (c *call) transferProject() error {
	c.p.Require("namespace")
	ns, _ := c.p.String("namespace")
	if err := c.p.Err(); err != nil {
		return err
	}
	p, err := c.s.Projects.Transfer(c.r.Context(), c.actor, c.r.PathValue("id"), ns)
	if err != nil {
		return err
	}
	return c.renderProject(http.StatusOK, p, false, false)
}

func (c *call) forkProject() error {
	p := c.p
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
	fork, err := c.s.Projects.Fork(c.r.Context(), c.actor, c.r.PathValue("id"), in)
	if err != nil {
		return err
	}
	return c.renderProject(http.StatusCreated, fork, false, false)
}

func (c *call) markFork() error {
	from, err := c.pathInt("forked_from_id")
	if err != nil {
		return err
	}
	p, err := c.s.Projects.ForkRelation(c.r.Context(), c.actor, c.r.PathValue("id"), &from)
	if err != nil {
		return err
	}
	return c.renderProject(http.StatusCreated, p, false, false)
}

func (c *call) unmarkFork() error {
	if _, err := c.s.Projects.ForkRelation(c.r.Context(), c.actor, c.r.PathValue("id"), nil); err != nil {
		return err
	}
	return c.noContent()
}

type starrerJSON struct {
	StarredSince apiTime       `json:"starred_since"`
	User         userBasicJSON `json:"user"`
}

func (c *call) starrers() error {
	search, _ := c.p.String("search")
	pg, err := c.page()
	if err != nil {
		return err
	}
	list, info, err := c.s.Projects.Starrers(c.r.Context(), c.actor, c.r.PathValue("id"), search, pg)
	if err != nil {
		return err
	}
	out := make([]starrerJSON, len(list))
	for i := range list {
		out[i] = starrerJSON{StarredSince: apiTime(list[i].StarredAt), User: c.s.userBasic(&list[i].User)}
	}
	c.paginate(pg, info)
	return c.json(http.StatusOK, out)
}

type groupLinkJSON struct {
	ID          int64   `json:"id"`
	ProjectID   int64   `json:"project_id"`
	GroupID     int64   `json:"group_id"`
	GroupAccess int     `json:"group_access"`
	ExpiresAt   *string `json:"expires_at"`
}

var shareLevels = []string{"10", "20", "30", "40", "50"}

func (c *call) shareProject() error {
	p := c.p
	p.Require("group_id", "group_access")
	gid, _ := p.Int("group_id")
	lvl, _ := p.Enum("group_access", shareLevels...)
	expires, _ := p.Date("expires_at")
	if err := p.Err(); err != nil {
		return err
	}
	n, _ := strconv.Atoi(lvl)
	l, err := c.s.Projects.Share(c.r.Context(), c.actor, c.r.PathValue("id"), gid, model.AccessLevel(n), expires)
	if err != nil {
		return err
	}
	return c.json(http.StatusCreated, groupLinkJSON{ID: l.GroupID, ProjectID: l.ProjectID, GroupID: l.GroupID,
		GroupAccess: int(l.GroupAccess), ExpiresAt: strPtr(l.ExpiresAt)})
}

func (c *call) unshareProject() error {
	gid, err := c.pathInt("group_id")
	if err != nil {
		return err
	}
	if err := c.s.Projects.Unshare(c.r.Context(), c.actor, c.r.PathValue("id"), gid); err != nil {
		return err
	}
	return c.noContent()
}

func (c *call) projectLanguages() error {
	langs, err := c.s.Projects.Languages(c.r.Context(), c.actor, c.r.PathValue("id"))
	if err != nil {
		return err
	}
	return c.json(http.StatusOK, langs)
}
