package entity

import (
	"quarry/internal/auth"
	"quarry/internal/model"
	"quarry/internal/users"
)

// User entities, from the smallest to the administrator's view. Each embeds
// the one before, as GitLab's entities inherit.

type CustomAttribute struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

type UserBasic struct {
	ID               int64              `json:"id"`
	Username         string             `json:"username"`
	Name             string             `json:"name"`
	State            string             `json:"state"`
	Locked           bool               `json:"locked"`
	AvatarURL        *string            `json:"avatar_url"`
	WebURL           string             `json:"web_url"`
	CustomAttributes *[]CustomAttribute `json:"custom_attributes,omitempty"`
}

type User struct {
	UserBasic
	CreatedAt       *Time   `json:"created_at,omitempty"`
	Bio             string  `json:"bio"`
	Location        string  `json:"location"`
	PublicEmail     *string `json:"public_email"`
	Skype           string  `json:"skype"`
	Linkedin        string  `json:"linkedin"`
	Twitter         string  `json:"twitter"`
	Discord         string  `json:"discord"`
	WebsiteURL      string  `json:"website_url"`
	Organization    string  `json:"organization"`
	JobTitle        string  `json:"job_title"`
	Pronouns        *string `json:"pronouns"`
	Bot             bool    `json:"bot"`
	WorkInformation *string `json:"work_information"`
	Followers       *int    `json:"followers,omitempty"`
	Following       *int    `json:"following,omitempty"`
}

type Identity struct {
	Provider       string `json:"provider"`
	ExternUID      string `json:"extern_uid"`
	SAMLProviderID *int64 `json:"saml_provider_id"`
}

type UserPublic struct {
	User
	LastSignInAt     *Time      `json:"last_sign_in_at"`
	ConfirmedAt      *Time      `json:"confirmed_at"`
	LastActivityOn   *string    `json:"last_activity_on"`
	Email            string     `json:"email"`
	ThemeID          int        `json:"theme_id"`
	ColorSchemeID    int        `json:"color_scheme_id"`
	ProjectsLimit    int        `json:"projects_limit"`
	CurrentSignInAt  *Time      `json:"current_sign_in_at"`
	Identities       []Identity `json:"identities"`
	CanCreateGroup   bool       `json:"can_create_group"`
	CanCreateProject bool       `json:"can_create_project"`
	TwoFactorEnabled bool       `json:"two_factor_enabled"`
	External         bool       `json:"external"`
	PrivateProfile   bool       `json:"private_profile"`
	CommitEmail      string     `json:"commit_email"`
}

type UserAdmin struct {
	UserPublic
	IsAdmin                        bool       `json:"is_admin"`
	Note                           string     `json:"note"`
	NamespaceID                    int64      `json:"namespace_id"`
	CreatedBy                      *UserBasic `json:"created_by"`
	SharedRunnersMinutesLimit      *int       `json:"shared_runners_minutes_limit"`
	ExtraSharedRunnersMinutesLimit *int       `json:"extra_shared_runners_minutes_limit"`
	IsAuditor                      bool       `json:"is_auditor"`
	UsingLicenseSeat               bool       `json:"using_license_seat"`
	ProvisionedByGroupID           *int64     `json:"provisioned_by_group_id"`
}

type UserDetailsAdmin struct {
	UserAdmin
	CurrentSignInIP *string `json:"current_sign_in_ip"`
	LastSignInIP    *string `json:"last_sign_in_ip"`
	SignInCount     int     `json:"sign_in_count"`
	Plan            string  `json:"plan"`
	Trial           bool    `json:"trial"`
}

func (r *Renderer) UserBasic(u *model.User) UserBasic {
	return UserBasic{ID: u.ID, Username: u.Username, Name: u.Name, State: string(u.State),
		Locked: false, AvatarURL: r.AvatarURL(u.Avatar), WebURL: r.ExternalURL + "/" + u.Username}
}

func (r *Renderer) User(u *model.User, viewer auth.Actor) User {
	j := User{UserBasic: r.UserBasic(u), Bio: u.Bio, Location: u.Location, PublicEmail: StrPtr(u.PublicEmail),
		Skype: u.Skype, Linkedin: u.Linkedin, Twitter: u.Twitter, Discord: u.Discord, WebsiteURL: u.WebsiteURL,
		Organization: u.Organization, JobTitle: u.JobTitle, Pronouns: StrPtr(u.Pronouns), Bot: u.Type.IsBot(),
		WorkInformation: workInformation(u)}
	if auth.Can(viewer, auth.ReadUserProfile, auth.Resource{User: u}) {
		t := Time(u.CreatedAt)
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

func (r *Renderer) UserPublic(u *model.User, viewer auth.Actor) UserPublic {
	ids := make([]Identity, 0, len(u.Identities))
	for _, i := range u.Identities {
		ids = append(ids, Identity{Provider: i.Provider, ExternUID: i.ExternUID, SAMLProviderID: i.SAMLProviderID})
	}
	commit := u.CommitEmail
	if commit == "" {
		commit = u.Email
	}
	return UserPublic{User: r.User(u, viewer), LastSignInAt: TimePtr(u.LastSignInAt), ConfirmedAt: TimePtr(u.ConfirmedAt),
		LastActivityOn: StrPtr(u.LastActivityOn), Email: u.Email, ThemeID: u.ThemeID, ColorSchemeID: u.ColorSchemeID,
		ProjectsLimit: u.ProjectsLimit, CurrentSignInAt: TimePtr(u.CurrentSignInAt), Identities: ids,
		CanCreateGroup: u.CanCreateGroup, CanCreateProject: u.CanCreateProject(), TwoFactorEnabled: u.TwoFactorEnabled,
		External: u.External, PrivateProfile: u.PrivateProfile, CommitEmail: commit}
}

func (r *Renderer) UserAdmin(u *model.User, viewer auth.Actor) UserAdmin {
	return UserAdmin{UserPublic: r.UserPublic(u, viewer), IsAdmin: u.Admin, Note: u.Note, NamespaceID: u.NamespaceID,
		SharedRunnersMinutesLimit: u.SharedRunnersMinutesLimit, ExtraSharedRunnersMinutesLimit: u.ExtraSharedRunnersMinutesLimit}
}

func (r *Renderer) UserDetailsAdmin(u *model.User, admin UserAdmin) UserDetailsAdmin {
	return UserDetailsAdmin{UserAdmin: admin, CurrentSignInIP: StrPtr(u.CurrentSignInIP),
		LastSignInIP: StrPtr(u.LastSignInIP), SignInCount: u.SignInCount, Plan: "free"}
}

type UserStatus struct {
	Emoji         *string `json:"emoji"`
	Availability  *string `json:"availability"`
	Message       *string `json:"message"`
	MessageHTML   *string `json:"message_html"`
	ClearStatusAt *Time   `json:"clear_status_at"`
}

func (r *Renderer) UserStatus(st model.UserStatus, ok bool) UserStatus {
	if !ok {
		return UserStatus{}
	}
	html := users.MessageHTML(st.Message)
	return UserStatus{Emoji: &st.Emoji, Availability: &st.Availability, Message: &st.Message,
		MessageHTML: &html, ClearStatusAt: TimePtr(st.ClearStatusAt)}
}

type Preferences struct {
	ID                        int64 `json:"id"`
	UserID                    int64 `json:"user_id"`
	ViewDiffsFileByFile       bool  `json:"view_diffs_file_by_file"`
	ShowWhitespaceInDiffs     bool  `json:"show_whitespace_in_diffs"`
	PassUserIdentitiesToCIJWT bool  `json:"pass_user_identities_to_ci_jwt"`
}

func (r *Renderer) Preferences(p model.UserPreferences) Preferences {
	return Preferences{ID: p.ID, UserID: p.UserID, ViewDiffsFileByFile: p.ViewDiffsFileByFile,
		ShowWhitespaceInDiffs: p.ShowWhitespaceInDiffs, PassUserIdentitiesToCIJWT: p.PassUserIdentitiesToCIJWT}
}

func (r *Renderer) CustomAttributes(as []model.CustomAttribute) *[]CustomAttribute {
	out := make([]CustomAttribute, len(as))
	for i, a := range as {
		out[i] = CustomAttribute{Key: a.Key, Value: a.Value}
	}
	return &out
}
