package users

import (
	"context"
	"net/http"

	"quarry/internal/api/endpoint"
	"quarry/internal/api/entity"
	"quarry/internal/attributes"
	"quarry/internal/auth"
	"quarry/internal/model"
	"quarry/internal/users"
)

// userAttrs reads the optional user attributes shared by create and update.
func userAttrs(p *endpoint.Params) users.Attrs {
	a := users.Attrs{
		Email: p.StringPtr("email"), Name: p.StringPtr("name"), Username: p.StringPtr("username"),
		Password: p.StringPtr("password"),
		Admin:    p.BoolPtr("admin"), External: p.BoolPtr("external"), CanCreateGroup: p.BoolPtr("can_create_group"),
		ViewDiffsFileByFile: p.BoolPtr("view_diffs_file_by_file"),
		Bio:                 p.StringPtr("bio"), Location: p.StringPtr("location"), PublicEmail: p.StringPtr("public_email"),
		CommitEmail: p.StringPtr("commit_email"), Skype: p.StringPtr("skype"), Linkedin: p.StringPtr("linkedin"),
		Twitter: p.StringPtr("twitter"), Discord: p.StringPtr("discord"), WebsiteURL: p.StringPtr("website_url"),
		Organization: p.StringPtr("organization"), JobTitle: p.StringPtr("job_title"), Pronouns: p.StringPtr("pronouns"),
		Note:          p.StringPtr("note"),
		ProjectsLimit: p.IntPtr("projects_limit"), ThemeID: p.IntPtr("theme_id"), ColorSchemeID: p.IntPtr("color_scheme_id"),
		ExternUID: p.StringPtr("extern_uid"), Provider: p.StringPtr("provider"),
		Avatar:             p.File("avatar"),
		SkipReconfirmation: p.Flag("skip_reconfirmation"),
	}
	if p.Has("private_profile") {
		a.PrivateProfile = users.Nullable[bool]{Set: true, Value: p.BoolPtr("private_profile")}
	}
	for key, dst := range map[string]*users.Nullable[int]{
		"shared_runners_minutes_limit":       &a.SharedRunnersMinutesLimit,
		"extra_shared_runners_minutes_limit": &a.ExtraSharedRunnersMinutesLimit,
	} {
		if p.Has(key) {
			*dst = users.Nullable[int]{Set: true, Value: p.IntPtr(key)}
		}
	}
	if id, ok := p.Int("group_id_for_saml"); ok {
		a.GroupIDForSAML = &id
	}
	p.AllOrNoneOf("extern_uid", "provider")
	return a
}

// renderUsers presents users in the view the actor is entitled to.
func (h *Handlers) renderUsers(c *endpoint.Call, us []model.User, withCustom bool) (any, error) {
	if !c.Actor.Admin() {
		out := make([]entity.UserBasic, len(us))
		for i := range us {
			out[i] = h.r.UserBasic(&us[i])
		}
		return out, nil
	}
	if h.r.Cache != nil && !withCustom {
		return h.cachedAdminUsers(c, us, false)
	}
	return h.adminUsers(c, us, withCustom)
}

// adminUsers renders the administrator's view, loading identities,
// creators and (when asked) custom attributes for all users at once.
func (h *Handlers) adminUsers(c *endpoint.Call, us []model.User, withCustom bool) ([]entity.UserAdmin, error) {
	ctx := c.Ctx()
	if err := h.users.WithIdentities(ctx, us); err != nil {
		return nil, err
	}
	creators, err := h.users.Creators(ctx, us)
	if err != nil {
		return nil, err
	}
	var attrs map[int64][]model.CustomAttribute
	if withCustom {
		if attrs, err = h.attributes.Of(ctx, attributes.Users, userIDs(us)); err != nil {
			return nil, err
		}
	}
	out := make([]entity.UserAdmin, len(us))
	for i := range us {
		out[i] = h.r.UserAdmin(&us[i], c.Actor)
		if us[i].CreatedByID != nil {
			if cr, ok := creators[*us[i].CreatedByID]; ok {
				b := h.r.UserBasic(&cr)
				out[i].CreatedBy = &b
			}
		}
		if withCustom {
			out[i].CustomAttributes = h.r.CustomAttributes(attrs[us[i].ID])
		}
	}
	return out, nil
}

// adminUser renders one user in the administrator's view.
func (h *Handlers) adminUser(c *endpoint.Call, u model.User, withCustom bool) (entity.UserAdmin, error) {
	out, err := h.adminUsers(c, []model.User{u}, withCustom)
	if err != nil {
		return entity.UserAdmin{}, err
	}
	return out[0], nil
}

func (h *Handlers) listUsers(c *endpoint.Call) error {
	p := c.P
	f := model.UserFilter{
		Search:          p.Value("search"),
		Username:        p.Value("username"),
		Active:          p.Flag("active"),
		Blocked:         p.Flag("blocked"),
		External:        p.Flag("external"),
		ExcludeExternal: p.Flag("exclude_external"),
		ExcludeInternal: p.Flag("exclude_internal"),
		Admins:          p.Flag("admins"),
		WithoutProjects: p.Flag("without_projects"),
		Provider:        p.Value("provider"),
		ExternUID:       p.Value("extern_uid"),
		OrderBy:         "id",
		Desc:            true,
	}
	f.CreatedBefore, _ = p.Time("created_before")
	f.CreatedAfter, _ = p.Time("created_after")
	if v, ok := p.Enum("order_by", "id", "name", "username", "created_at", "updated_at"); ok {
		f.OrderBy = v
	}
	if v, ok := p.Enum("sort", "asc", "desc"); ok {
		f.Desc = v == "desc"
	}
	f.TwoFactor, _ = p.Enum("two_factor", "enabled", "disabled")
	if id, ok := p.Int("saml_provider_id"); ok {
		f.SAMLProviderID = &id
	}
	if attrs := p.Hash("custom_attributes"); len(attrs) > 0 {
		f.CustomAttributes = attrs
	}
	withCustom := p.Flag("with_custom_attributes") && c.Actor.Admin()
	p.AllOrNoneOf("extern_uid", "provider")
	pg, err := c.Page()
	if err != nil {
		return err
	}
	if c.Actor.Admin() && h.r.Cache != nil && !withCustom {
		hs, info, err := h.users.ListHeads(c.Ctx(), c.Actor, users.ListInput{UserFilter: f}, pg)
		if err != nil {
			return err
		}
		body, err := h.cachedAdminUserPage(c, hs)
		if err != nil {
			return err
		}
		c.Paginate(pg, info)
		return c.JSON(http.StatusOK, body)
	}
	us, info, err := h.users.List(c.Ctx(), c.Actor, users.ListInput{UserFilter: f}, pg)
	if err != nil {
		return err
	}
	body, err := h.renderUsers(c, us, withCustom)
	if err != nil {
		return err
	}
	c.Paginate(pg, info)
	return c.JSON(http.StatusOK, body)
}

func (h *Handlers) getUser(c *endpoint.Call) error {
	id, err := c.PathID("id")
	if err != nil {
		return err
	}
	withCustom := c.P.Flag("with_custom_attributes")
	if err := c.P.Err(); err != nil {
		return err
	}
	if !c.Actor.SignedIn() {
		return model.Forbidden("Not authorized!")
	}
	u, err := h.users.ByID(c.Ctx(), c.Actor, id)
	if err != nil {
		return err
	}
	if !c.Actor.Admin() {
		return c.JSON(http.StatusOK, h.r.User(&u, c.Actor))
	}
	if h.r.Cache != nil && !withCustom {
		body, err := h.cachedAdminUsers(c, []model.User{u}, true)
		if err != nil {
			return err
		}
		return c.JSON(http.StatusOK, body)
	}
	a, err := h.adminUser(c, u, withCustom && c.Actor.Admin())
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, h.r.UserDetailsAdmin(&u, a))
}

func (h *Handlers) createUser(c *endpoint.Call) error {
	p := c.P
	p.Require("email")
	p.AtLeastOneOf("password", "reset_password", "force_random_password")
	p.Require("name")
	p.Require("username")
	in := users.CreateInput{
		Attrs:               userAttrs(p),
		ResetPassword:       p.Flag("reset_password"),
		ForceRandomPassword: p.Flag("force_random_password"),
		SkipConfirmation:    p.Flag("skip_confirmation"),
	}
	if err := p.Err(); err != nil {
		return err
	}
	u, err := h.users.Create(c.Ctx(), c.Actor, in)
	if err != nil {
		return err
	}
	a, err := h.adminUser(c, u, false)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, a)
}

func (h *Handlers) updateUser(c *endpoint.Call) error {
	id, err := c.PathID("id")
	if err != nil {
		return err
	}
	a := userAttrs(c.P)
	if err := c.P.Err(); err != nil {
		return err
	}
	u, err := h.users.Update(c.Ctx(), c.Actor, id, a)
	if err != nil {
		return err
	}
	j, err := h.adminUser(c, u, false)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, j)
}

func (h *Handlers) deleteUser(c *endpoint.Call) error {
	id, err := c.PathID("id")
	if err != nil {
		return err
	}
	hard := c.P.Flag("hard_delete")
	if err := c.P.Err(); err != nil {
		return err
	}
	if err := h.users.Delete(c.Ctx(), c.Actor, id, hard); err != nil {
		return err
	}
	return c.NoContent()
}

func (h *Handlers) deleteIdentity(c *endpoint.Call) error {
	id, err := c.PathID("id")
	if err != nil {
		return err
	}
	if err := h.users.DeleteIdentity(c.Ctx(), c.Actor, id, c.Path("provider")); err != nil {
		return err
	}
	return c.NoContent()
}

// stateChange serves block, unblock, activate and deactivate: 201 with
// `true`, or `null` when there was nothing to do.
func (h *Handlers) stateChange(c *endpoint.Call, change func(context.Context, auth.Actor, int64) (bool, error)) error {
	id, err := c.PathID("id")
	if err != nil {
		return err
	}
	changed, err := change(c.Ctx(), c.Actor, id)
	if err != nil {
		return err
	}
	if !changed {
		return c.JSON(http.StatusCreated, nil)
	}
	return c.JSON(http.StatusCreated, true)
}

func (h *Handlers) currentUser(c *endpoint.Call) error {
	u := *c.Actor.User
	if c.Actor.Admin() {
		a, err := h.adminUser(c, u, false)
		if err != nil {
			return err
		}
		return c.JSON(http.StatusOK, a)
	}
	us := []model.User{u}
	if err := h.users.WithIdentities(c.Ctx(), us); err != nil {
		return err
	}
	return c.JSON(http.StatusOK, h.r.UserPublic(&us[0], c.Actor))
}

func (h *Handlers) ownStatus(c *endpoint.Call) error {
	st, ok, err := h.users.Status(c.Ctx(), *c.Actor.User)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, h.r.UserStatus(st, ok))
}

func (h *Handlers) statusOf(c *endpoint.Call) error {
	u, err := h.users.ByIDOrUsername(c.Ctx(), c.Actor, c.Path("user_id"))
	if err != nil {
		return err
	}
	st, ok, err := h.users.Status(c.Ctx(), u)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, h.r.UserStatus(st, ok))
}

// setStatus serves PUT (absent fields are cleared) and PATCH (absent
// fields are kept) of /user/status.
func (h *Handlers) setStatus(c *endpoint.Call, merge bool) error {
	p := c.P
	in := users.StatusInput{Merge: merge, Emoji: p.StringPtr("emoji"), Message: p.StringPtr("message")}
	if v, ok := p.Enum("availability", users.Availabilities...); ok {
		in.Availability = &v
	}
	keys := make([]string, 0, len(users.ClearStatusAfter))
	for k := range users.ClearStatusAfter {
		keys = append(keys, k)
	}
	if v, ok := p.Enum("clear_status_after", keys...); ok {
		in.ClearStatusAfter = &v
	}
	if err := p.Err(); err != nil {
		return err
	}
	if merge && in.Emoji == nil && in.Message == nil && in.Availability == nil && in.ClearStatusAfter == nil {
		return h.ownStatus(c)
	}
	st, ok, err := h.users.SetStatus(c.Ctx(), c.Actor, in)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, h.r.UserStatus(st, ok))
}

func (h *Handlers) getPreferences(c *endpoint.Call) error {
	pr, err := h.users.Preferences(c.Ctx(), c.Actor)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, h.r.Preferences(pr))
}

func (h *Handlers) putPreferences(c *endpoint.Call) error {
	p := c.P
	p.Require("view_diffs_file_by_file", "show_whitespace_in_diffs")
	in := users.PreferencesInput{
		ViewDiffsFileByFile:       p.BoolPtr("view_diffs_file_by_file"),
		ShowWhitespaceInDiffs:     p.BoolPtr("show_whitespace_in_diffs"),
		PassUserIdentitiesToCIJWT: p.BoolPtr("pass_user_identities_to_ci_jwt"),
	}
	if err := p.Err(); err != nil {
		return err
	}
	pr, err := h.users.SetPreferences(c.Ctx(), c.Actor, in)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, h.r.Preferences(pr))
}

func userIDs(us []model.User) []int64 {
	ids := make([]int64, len(us))
	for i := range us {
		ids[i] = us[i].ID
	}
	return ids
}
