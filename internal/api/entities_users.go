package api

import (
	"quarry/internal/auth"
	"quarry/internal/model"
	"quarry/internal/users"
)

// User entities, from the smallest to the administrator's view. Each embeds
// the one before, as GitLab's entities inherit.

type customAttributeJSON struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

type userBasicJSON struct {
	ID               int64                  `json:"id"`
	Username         string                 `json:"username"`
	Name             string                 `json:"name"`
	State            string                 `json:"state"`
	Locked           bool                   `json:"locked"`
	AvatarURL        *string                `json:"avatar_url"`
	WebURL           string                 `json:"web_url"`
	CustomAttributes *[]customAttributeJSON `json:"custom_attributes,omitempty"`
}

type userJSON struct {
	userBasicJSON
	CreatedAt       *apiTime `json:"created_at,omitempty"`
	Bio             string   `json:"bio"`
	Location        string   `json:"location"`
	PublicEmail     *string  `json:"public_email"`
	Skype           string   `json:"skype"`
	Linkedin        string   `json:"linkedin"`
	Twitter         string   `json:"twitter"`
	Discord         string   `json:"discord"`
	WebsiteURL      string   `json:"website_url"`
	Organization    string   `json:"organization"`
	JobTitle        string   `json:"job_title"`
	Pronouns        *string  `json:"pronouns"`
	Bot             bool     `json:"bot"`
	WorkInformation *string  `json:"work_information"`
	Followers       *int     `json:"followers,omitempty"`
	Following       *int     `json:"following,omitempty"`
}

type identityJSON struct {
	Provider       string `json:"provider"`
	ExternUID      string `json:"extern_uid"`
	SAMLProviderID *int64 `json:"saml_provider_id"`
}

type userPublicJSON struct {
	userJSON
	LastSignInAt     *apiTime       `json:"last_sign_in_at"`
	ConfirmedAt      *apiTime       `json:"confirmed_at"`
	LastActivityOn   *string        `json:"last_activity_on"`
	Email            string         `json:"email"`
	ThemeID          int            `json:"theme_id"`
	ColorSchemeID    int            `json:"color_scheme_id"`
	ProjectsLimit    int            `json:"projects_limit"`
	CurrentSignInAt  *apiTime       `json:"current_sign_in_at"`
	Identities       []identityJSON `json:"identities"`
	CanCreateGroup   bool           `json:"can_create_group"`
	CanCreateProject bool           `json:"can_create_project"`
	TwoFactorEnabled bool           `json:"two_factor_enabled"`
	External         bool           `json:"external"`
	PrivateProfile   bool           `json:"private_profile"`
	CommitEmail      string         `json:"commit_email"`
}

type userAdminJSON struct {
	userPublicJSON
	IsAdmin                        bool           `json:"is_admin"`
	Note                           string         `json:"note"`
	NamespaceID                    int64          `json:"namespace_id"`
	CreatedBy                      *userBasicJSON `json:"created_by"`
	SharedRunnersMinutesLimit      *int           `json:"shared_runners_minutes_limit"`
	ExtraSharedRunnersMinutesLimit *int           `json:"extra_shared_runners_minutes_limit"`
	IsAuditor                      bool           `json:"is_auditor"`
	UsingLicenseSeat               bool           `json:"using_license_seat"`
	ProvisionedByGroupID           *int64         `json:"provisioned_by_group_id"`
}

type userDetailsAdminJSON struct {
	userAdminJSON
	CurrentSignInIP *string `json:"current_sign_in_ip"`
	LastSignInIP    *string `json:"last_sign_in_ip"`
	SignInCount     int     `json:"sign_in_count"`
	Plan            string  `json:"plan"`
	Trial           bool    `json:"trial"`
}

func (s *Server) avatarURL(path string) *string {
	if path == "" {
		return nil
	}
	u := s.externalURL + "/uploads/-/system/" + path
	return &u
}

func (s *Server) userBasic(u *model.User) userBasicJSON {
	return userBasicJSON{ID: u.ID, Username: u.Username, Name: u.Name, State: string(u.State),
		Locked: false, AvatarURL: s.avatarURL(u.Avatar), WebURL: s.externalURL + "/" + u.Username}
}

func (s *Server) user(u *model.User, viewer auth.Actor) userJSON {
	j := userJSON{userBasicJSON: s.userBasic(u), Bio: u.Bio, Location: u.Location, PublicEmail: strPtr(u.PublicEmail),
		Skype: u.Skype, Linkedin: u.Linkedin, Twitter: u.Twitter, Discord: u.Discord, WebsiteURL: u.WebsiteURL,
		Organization: u.Organization, JobTitle: u.JobTitle, Pronouns: strPtr(u.Pronouns), Bot: u.Type.IsBot(),
		WorkInformation: workInformation(u)}
	if auth.Can(viewer, auth.ReadUserProfile, auth.Resource{User: u}) {
		t := apiTime(u.CreatedAt)
		zero := 0 // Quarry has no following yet: nobody follows anyone.
		j.CreatedAt, j.Followers, j.Following = &t, &zero, &zero
	}
	return j
}

func workInformation(u *model.User) *string {
	switch {
	case u.JobTitle != "" && u.Organization != "":
		s := u.JobTitle + " at " + u.Organization
		return &s
	case u.JobTitle != "":
		return &u.JobTitle
	case u.Organization != "":
		return &u.Organization
	}
	return nil
}

func (s *Server) userPublic(u *model.User, viewer auth.Actor) userPublicJSON {
	ids := make([]identityJSON, 0, len(u.Identities))
	for _, i := range u.Identities {
		ids = append(ids, identityJSON{Provider: i.Provider, ExternUID: i.ExternUID, SAMLProviderID: i.SAMLProviderID})
	}
	commit := u.CommitEmail
	if commit == "" {
		commit = u.Email
	}
	return userPublicJSON{userJSON: s.user(u, viewer), LastSignInAt: timePtr(u.LastSignInAt), ConfirmedAt: timePtr(u.ConfirmedAt),
		LastActivityOn: strPtr(u.LastActivityOn), Email: u.Email, ThemeID: u.ThemeID, ColorSchemeID: u.ColorSchemeID,
		ProjectsLimit: u.ProjectsLimit, CurrentSignInAt: timePtr(u.CurrentSignInAt), Identities: ids,
		CanCreateGroup: u.CanCreateGroup, CanCreateProject: u.CanCreateProject(), TwoFactorEnabled: u.TwoFactorEnabled,
		External: u.External, PrivateProfile: u.PrivateProfile, CommitEmail: commit}
}

func (s *Server) userAdmin(u *model.User, viewer auth.Actor) userAdminJSON {
	return userAdminJSON{userPublicJSON: s.userPublic(u, viewer), IsAdmin: u.Admin, Note: u.Note, NamespaceID: u.NamespaceID,
		SharedRunnersMinutesLimit: u.SharedRunnersMinutesLimit, ExtraSharedRunnersMinutesLimit: u.ExtraSharedRunnersMinutesLimit}
}

func (s *Server) userDetailsAdmin(u *model.User, admin userAdminJSON) userDetailsAdminJSON {
	return userDetailsAdminJSON{userAdminJSON: admin, CurrentSignInIP: strPtr(u.CurrentSignInIP),
		LastSignInIP: strPtr(u.LastSignInIP), SignInCount: u.SignInCount, Plan: "free"}
}

type userStatusJSON struct {
	Emoji         *string  `json:"emoji"`
	Availability  *string  `json:"availability"`
	Message       *string  `json:"message"`
	MessageHTML   *string  `json:"message_html"`
	ClearStatusAt *apiTime `json:"clear_status_at"`
}

func userStatus(st model.UserStatus, ok bool) userStatusJSON {
	if !ok {
		return userStatusJSON{}
	}
	html := users.MessageHTML(st.Message)
	return userStatusJSON{Emoji: &st.Emoji, Availability: &st.Availability, Message: &st.Message,
		MessageHTML: &html, ClearStatusAt: timePtr(st.ClearStatusAt)}
}

type preferencesJSON struct {
	ID                        int64 `json:"id"`
	UserID                    int64 `json:"user_id"`
	ViewDiffsFileByFile       bool  `json:"view_diffs_file_by_file"`
	ShowWhitespaceInDiffs     bool  `json:"show_whitespace_in_diffs"`
	PassUserIdentitiesToCIJWT bool  `json:"pass_user_identities_to_ci_jwt"`
}

func preferences(p model.UserPreferences) preferencesJSON {
	return preferencesJSON{ID: p.ID, UserID: p.UserID, ViewDiffsFileByFile: p.ViewDiffsFileByFile,
		ShowWhitespaceInDiffs: p.ShowWhitespaceInDiffs, PassUserIdentitiesToCIJWT: p.PassUserIdentitiesToCIJWT}
}

func customAttributes(as []model.CustomAttribute) *[]customAttributeJSON {
	out := make([]customAttributeJSON, len(as))
	for i, a := range as {
		out[i] = customAttributeJSON{Key: a.Key, Value: a.Value}
	}
	return &out
}
