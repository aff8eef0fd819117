package auth

import "quarry/internal/model"

// Action is something an actor may try to do.
type Action string

// Actions on users and tokens.
const (
	// ReadUser: see that a user exists (GET /users/:id, status).
	ReadUser Action = "read_user"
	// ReadUserProfile: see a user's profile details (created_at, followers).
	ReadUserProfile Action = "read_user_profile"
	// ListUsers: list the instance's users.
	ListUsers Action = "list_users"
	// AdminUsers: create, update, block, delete users and their tokens.
	AdminUsers Action = "admin_users"
	// UpdateOwnStatus: set one's own status and preferences.
	UpdateOwnStatus Action = "update_user_status"
	// ReadToken / RevokeToken: a personal access token's owner or an admin.
	ReadToken   Action = "read_token"
	RevokeToken Action = "revoke_token"
)

// Resource is what an action applies to; only the fields an action needs
// are set.
type Resource struct {
	User  *model.User
	Token *model.PersonalAccessToken
}

type rule func(a Actor, r Resource) bool

// rules is the permission table: one row per action.
var rules = map[Action]rule{
	ReadUser: func(a Actor, r Resource) bool {
		if r.User == nil {
			return false
		}
		// Blocked and banned accounts are hidden from everyone but admins.
		return !r.User.State.IsBlocked() || a.Admin() || a.Is(r.User.ID)
	},
	ReadUserProfile: func(a Actor, r Resource) bool {
		return r.User != nil && (!r.User.PrivateProfile || a.Admin() || a.Is(r.User.ID))
	},
	ListUsers:       func(a Actor, r Resource) bool { return true },
	AdminUsers:      func(a Actor, r Resource) bool { return a.Admin() },
	UpdateOwnStatus: func(a Actor, r Resource) bool { return a.SignedIn() && !a.User.State.IsBlocked() },
	ReadToken: func(a Actor, r Resource) bool {
		return r.Token != nil && (a.Admin() || a.Is(r.Token.UserID))
	},
	RevokeToken: func(a Actor, r Resource) bool {
		return r.Token != nil && (a.Admin() || a.Is(r.Token.UserID))
	},
}

// Can reports whether actor may do action on resource. Unknown actions are
// denied.
func Can(a Actor, action Action, r Resource) bool {
	f, ok := rules[action]
	return ok && f(a, r)
}
