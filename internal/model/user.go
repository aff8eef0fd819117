package model

import "time"

// UserState is the account state of a user.
type UserState string

// User states.
const (
	UserActive                 UserState = "active"
	UserBlocked                UserState = "blocked"
	UserDeactivated            UserState = "deactivated"
	UserBanned                 UserState = "banned"
	UserBlockedPendingApproval UserState = "blocked_pending_approval"
	UserLDAPBlocked            UserState = "ldap_blocked"
)

// IsBlocked reports the states GitLab treats as blocked: no sign-in, no API.
func (s UserState) IsBlocked() bool {
	switch s {
	case UserBlocked, UserBanned, UserBlockedPendingApproval, UserLDAPBlocked:
		return true
	}
	return false
}

// UserType tells humans from the instance's internal and bot accounts.
type UserType string

// User types.
const (
	UserHuman      UserType = "human"
	UserGhost      UserType = "ghost"
	UserAlertBot   UserType = "alert_bot"
	UserSupportBot UserType = "support_bot"
	UserProjectBot UserType = "project_bot"
)

// IsBot reports whether the account is not a person.
func (t UserType) IsBot() bool { return t != UserHuman && t != "" }

// IsInternal reports the instance's own accounts (ghost, alert and support bots).
func (t UserType) IsInternal() bool {
	return t == UserGhost || t == UserAlertBot || t == UserSupportBot
}

// User is an account.
type User struct {
	ID                             int64
	Username                       string
	Email                          string
	UnconfirmedEmail               string
	Name                           string
	State                          UserState
	Type                           UserType
	Admin                          bool
	External                       bool
	CanCreateGroup                 bool
	ProjectsLimit                  int
	PasswordHash                   string
	PasswordExpiresAt              *time.Time
	Bio                            string
	Location                       string
	PublicEmail                    string
	CommitEmail                    string
	Skype                          string
	Linkedin                       string
	Twitter                        string
	Discord                        string
	WebsiteURL                     string
	Organization                   string
	JobTitle                       string
	Pronouns                       string
	Note                           string
	ThemeID                        int
	ColorSchemeID                  int
	PrivateProfile                 bool
	TwoFactorEnabled               bool
	Avatar                         string // stored file name, "" for none
	ConfirmedAt                    *time.Time
	LastSignInAt                   *time.Time
	CurrentSignInAt                *time.Time
	LastSignInIP                   string
	CurrentSignInIP                string
	SignInCount                    int
	LastActivityOn                 string // YYYY-MM-DD, "" when never
	SharedRunnersMinutesLimit      *int
	ExtraSharedRunnersMinutesLimit *int
	NamespaceID                    int64
	CreatedByID                    *int64
	CreatedAt                      time.Time
	UpdatedAt                      time.Time
	Version                        int64
	// EntityVersion moves on every write to the row or its identities
	// (a trigger): the entity cache's key.
	EntityVersion int64

	// Loaded with the user where an entity needs them.
	Identities []Identity
}

// CanCreateProject reports whether the user may create projects at all.
func (u *User) CanCreateProject() bool { return u.ProjectsLimit > 0 || u.Admin }

// Identity links a user to an external authentication provider.
type Identity struct {
	ID             int64
	UserID         int64
	Provider       string
	ExternUID      string
	SAMLProviderID *int64
}

// UserStatus is the status message a user shows.
type UserStatus struct {
	UserID        int64
	Emoji         string
	Message       string
	Availability  string
	ClearStatusAt *time.Time
}

// UserPreferences are per-user display settings.
type UserPreferences struct {
	ID                        int64
	UserID                    int64
	ViewDiffsFileByFile       bool
	ShowWhitespaceInDiffs     bool
	PassUserIdentitiesToCIJWT bool
}

// CustomAttribute is an admin-defined key/value on a resource.
type CustomAttribute struct {
	Key   string
	Value string
}
