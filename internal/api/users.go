package api

import (
	"context"
	"net/http"

	"quarry/internal/attributes"
	"quarry/internal/auth"
	"quarry/internal/model"
	"quarry/internal/users"
)

// userAttrs reads the optional user attributes shared by create and update.
func userAttrs(p *Params) users.Attrs {
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
func (c *call) renderUsers(us []model.User, withCustom bool) (any, error) {
	if !c.actor.Admin() {
		out := make([]userBasicJSON, len(us))
		for i := range us {
			out[i] = c.s.userBasic(&us[i])
		}
		return out, nil
	}
	return c.adminUsers(us, withCustom)
}

// adminUsers renders the administrator's view, loading identities,
// creators and (when asked) custom attributes for all users at once.
func (c *call) adminUsers(us []model.User, withCustom bool) ([]userAdminJSON, error) {
	ctx := c.r.Context()
	if err := c.s.Users.WithIdentities(ctx, us); err != nil {
		return nil, err
	}
	creators, err := c.s.Users.Creators(ctx, us)
	if err != nil {
		return nil, err
	}
	var attrs map[int64][]model.CustomAttribute
	if withCustom {
		if attrs, err = c.s.Attributes.Of(ctx, attributes.Users, userIDs(us)); err != nil {
			return nil, err
		}
	}
	out := make([]userAdminJSON, len(us))
	for i := range us {
		out[i] = c.s.userAdmin(&us[i], c.actor)
		if us[i].CreatedByID != nil {
			if cr, ok := creators[*us[i].CreatedByID]; ok {
				b := c.s.userBasic(&cr)
				out[i].CreatedBy = &b
			}
		}
		if withCustom {
			out[i].CustomAttributes = customAttributes(attrs[us[i].ID])
		}
	}
	return out, nil
}

// adminUser renders one user in the administrator's view.
func (c *call) adminUser(u model.User, withCustom bool) (userAdminJSON, error) {
	out, err := c.adminUsers([]model.User{u}, withCustom)
	if err != nil {
		return userAdminJSON{}, err
	}
	return out[0], nil
}

func (c *call) listUsers() error {
	p := c.p
	f := model.UserFilter{
		Search:          first(p.String("search")),
		Username:        first(p.String("username")),
		Active:          p.Flag("active"),
		Blocked:         p.Flag("blocked"),
		External:        p.Flag("external"),
		ExcludeExternal: p.Flag("exclude_external"),
		ExcludeInternal: p.Flag("exclude_internal"),
		Admins:          p.Flag("admins"),
		WithoutProjects: p.Flag("without_projects"),
		Provider:        first(p.String("provider")),
		ExternUID:       first(p.String("extern_uid")),
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
	withCustom := p.Flag("with_custom_attributes") && c.actor.Admin()
	p.AllOrNoneOf("extern_uid", "provider")
	pg, err := c.page()
	if err != nil {
		return err
	}
	us, info, err := c.s.Users.List(c.r.Context(), c.actor, users.ListInput{UserFilter: f}, pg)
	if err != nil {
		return err
	}
	body, err := c.renderUsers(us, withCustom)
	if err != nil {
		return err
	}
	c.paginate(pg, info)
	return c.json(http.StatusOK, body)
}

func first(s string, _ bool) string { return s }

func (c *call) getUser() error {
	id, err := c.pathInt("id")
	if err != nil {
		return err
	}
	withCustom := c.p.Flag("with_custom_attributes")
	if err := c.p.Err(); err != nil {
		return err
	}
	if !c.actor.SignedIn() {
		return model.Forbidden("Not authorized!")
	}
	u, err := c.s.Users.ByID(c.r.Context(), c.actor, id)
	if err != nil {
		return err
	}
	if !c.actor.Admin() {
		return c.json(http.StatusOK, c.s.user(&u, c.actor))
	}
	a, err := c.adminUser(u, withCustom && c.actor.Admin())
	if err != nil {
		return err
	}
	return c.json(http.StatusOK, c.s.userDetailsAdmin(&u, a))
}

func (c *call) createUser() error {
	p := c.p
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
	u, err := c.s.Users.Create(c.r.Context(), c.actor, in)
	if err != nil {
		return err
	}
	a, err := c.adminUser(u, false)
	if err != nil {
		return err
	}
	return c.json(http.StatusCreated, a)
}

func (c *call) updateUser() error {
	id, err := c.pathInt("id")
	if err != nil {
		return err
	}
	a := userAttrs(c.p)
	if err := c.p.Err(); err != nil {
		return err
	}
	u, err := c.s.Users.Update(c.r.Context(), c.actor, id, a)
	if err != nil {
		return err
	}
	j, err := c.adminUser(u, false)
	if err != nil {
		return err
	}
	return c.json(http.StatusOK, j)
}

func (c *call) deleteUser() error {
	id, err := c.pathInt("id")
	if err != nil {
		return err
	}
	hard := c.p.Flag("hard_delete")
	if err := c.p.Err(); err != nil {
		return err
	}
	if err := c.s.Users.Delete(c.r.Context(), c.actor, id, hard); err != nil {
		return err
	}
	return c.noContent()
}

func (c *call) deleteIdentity() error {
	id, err := c.pathInt("id")
	if err != nil {
		return err
	}
	if err := c.s.Users.DeleteIdentity(c.r.Context(), c.actor, id, c.r.PathValue("provider")); err != nil {
		return err
	}
	return c.noContent()
}

// stateChange serves block, unblock, activate and deactivate: 201 with
// `true`, or `null` when there was nothing to do.
func (c *call) stateChange(change func(context.Context, auth.Actor, int64) (bool, error)) error {
	id, err := c.pathInt("id")
	if err != nil {
		return err
	}
	changed, err := change(c.r.Context(), c.actor, id)
	if err != nil {
		return err
	}
	if !changed {
		return c.json(http.StatusCreated, nil)
	}
	return c.json(http.StatusCreated, true)
}

func (c *call) currentUser() error {
	u := *c.actor.User
	if c.actor.Admin() {
		a, err := c.adminUser(u, false)
		if err != nil {
			return err
		}
		return c.json(http.StatusOK, a)
	}
	us := []model.User{u}
	if err := c.s.Users.WithIdentities(c.r.Context(), us); err != nil {
		return err
	}
	return c.json(http.StatusOK, c.s.userPublic(&us[0], c.actor))
}

func (c *call) ownStatus() error {
	st, ok, err := c.s.Users.Status(c.r.Context(), *c.actor.User)
	if err != nil {
		return err
	}
	return c.json(http.StatusOK, userStatus(st, ok))
}

func (c *call) userStatus() error {
	u, err := c.s.Users.ByIDOrUsername(c.r.Context(), c.actor, c.r.PathValue("user_id"))
	if err != nil {
		return err
	}
	st, ok, err := c.s.Users.Status(c.r.Context(), u)
	if err != nil {
		return err
	}
	return c.json(http.StatusOK, userStatus(st, ok))
}

// setStatus serves PUT (absent fields are cleared) and PATCH (absent
// fields are kept) of /user/status.
func (c *call) setStatus(merge bool) error {
	p := c.p
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
		return c.ownStatus()
	}
	st, ok, err := c.s.Users.SetStatus(c.r.Context(), c.actor, in)
	if err != nil {
		return err
	}
	return c.json(http.StatusOK, userStatus(st, ok))
}

func (c *call) getPreferences() error {
	pr, err := c.s.Users.Preferences(c.r.Context(), c.actor)
	if err != nil {
		return err
	}
	return c.json(http.StatusOK, preferences(pr))
}

func (c *call) putPreferences() error {
	p := c.p
	p.Require("view_diffs_file_by_file", "show_whitespace_in_diffs")
	in := users.PreferencesInput{
		ViewDiffsFileByFile:       p.BoolPtr("view_diffs_file_by_file"),
		ShowWhitespaceInDiffs:     p.BoolPtr("show_whitespace_in_diffs"),
		PassUserIdentitiesToCIJWT: p.BoolPtr("pass_user_identities_to_ci_jwt"),
	}
	if err := p.Err(); err != nil {
		return err
	}
	pr, err := c.s.Users.SetPreferences(c.r.Context(), c.actor, in)
	if err != nil {
		return err
	}
	return c.json(http.StatusOK, preferences(pr))
}

// customAttributeRoutes serve /users|projects|groups/:id/custom_attributes.
func (c *call) listCustomAttributes(kind string) error {
	attrs, err := c.s.Attributes.List(c.r.Context(), c.actor, kind, c.r.PathValue("id"))
	if err != nil {
		return err
	}
	return c.json(http.StatusOK, customAttributes(attrs))
}

func (c *call) getCustomAttribute(kind string) error {
	a, err := c.s.Attributes.Get(c.r.Context(), c.actor, kind, c.r.PathValue("id"), c.r.PathValue("key"))
	if err != nil {
		return err
	}
	return c.json(http.StatusOK, customAttributeJSON{Key: a.Key, Value: a.Value})
}

func (c *call) putCustomAttribute(kind string) error {
	c.p.Require("value")
	value, _ := c.p.String("value")
	if err := c.p.Err(); err != nil {
		return err
	}
	a, err := c.s.Attributes.Set(c.r.Context(), c.actor, kind, c.r.PathValue("id"), model.CustomAttribute{Key: c.r.PathValue("key"), Value: value})
	if err != nil {
		return err
	}
	return c.json(http.StatusOK, customAttributeJSON{Key: a.Key, Value: a.Value})
}

func (c *call) deleteCustomAttribute(kind string) error {
	if err := c.s.Attributes.Delete(c.r.Context(), c.actor, kind, c.r.PathValue("id"), c.r.PathValue("key")); err != nil {
		return err
	}
	return c.noContent()
}

func userIDs(us []model.User) []int64 {
	ids := make([]int64, len(us))
	for i := range us {
		ids[i] = us[i].ID
	}
	return ids
}
