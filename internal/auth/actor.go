package auth

import (
	"errors"
	"net/http"
	"strings"
	"sync"

	"quarry/internal/model"
)

// Actor is who a request runs as.
type Actor struct {
	// User is nil for anonymous requests. With sudo it is the target user.
	User *model.User
	// Token authenticated the request, if any.
	Token *model.PersonalAccessToken
	// Sudoer is the administrator who used sudo, if any.
	Sudoer *model.User
	// Job is set when a CI job token authenticated the request: the
	// request runs as the user who triggered the job (User), limited to
	// the endpoints that take job tokens and, outside the job's own
	// project, to projects whose job token scope admits it.
	Job *JobActor
	// Runner is set when a runner's authentication token authenticated
	// the request (the runner protocol); User is nil then.
	Runner *model.Runner
	// OutsideAdminMode is set when the instance requires admin mode and
	// the request's token lacks the admin_mode scope: an administrator
	// then acts as a regular user.
	OutsideAdminMode bool
	// Integration is set when an inbound integration's key authenticated
	// the request (an error-tracking client key); User is nil then.
	Integration *IntegrationActor
}

// IntegrationActor is the inbound integration whose key authenticated a
// request: its kind, its key's id and the project it reports to.
type IntegrationActor struct {
	Kind      string
	KeyID     int64
	ProjectID int64
	// Enabled tells whether the project takes what the integration sends
	// now (integrated error tracking on).
	Enabled bool
}

// JobActor is the running job whose token authenticated a request.
type JobActor struct {
	ID         int64
	ProjectID  int64
	PipelineID int64

	mu sync.Mutex
	// outside holds the projects whose CI job token scope refuses the job
	// although the job's user sees them (public, or internal): Can then
	// allows the job only what GitLab leaves it there.
	outside map[int64]bool
}

// SetOutside records that the job token scope of project id refuses the
// job (projects.Resolve does, for the request the actor serves).
func (j *JobActor) SetOutside(id int64) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.outside == nil {
		j.outside = map[int64]bool{}
	}
	j.outside[id] = true
}

// Outside reports whether SetOutside recorded project id.
func (j *JobActor) Outside(id int64) bool {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.outside[id]
}

// ErrBlocked joins the refusal of a credential whose user is blocked
// (errors.Is): the API answers the refusal (403 with its reason), git
// asks for credentials again, as GitLab takes no token of a user who may
// not log in for git.
var ErrBlocked = errors.New("the user is blocked")

// Anonymous is the actor of a request without credentials.
var Anonymous = Actor{}

// SignedIn reports whether the actor is a user.
func (a Actor) SignedIn() bool { return a.User != nil }

// Admin reports whether the actor is an administrator.
func (a Actor) Admin() bool { return a.User != nil && a.User.Admin && !a.OutsideAdminMode }

// UserID is the actor's user id, 0 when anonymous.
func (a Actor) UserID() int64 {
	if a.User == nil {
		return 0
	}
	return a.User.ID
}

// Is reports whether the actor is the given user.
func (a Actor) Is(userID int64) bool { return a.User != nil && a.User.ID == userID }

// ScopeRule says which token scopes an endpoint accepts beyond `api` (always
// accepted) and `read_api` (accepted on reads).
type ScopeRule struct {
	// Extra scopes accepted, e.g. read_user on /users reads.
	Extra []model.Scope
	// Any accepts a token of any scope (e.g. /personal_access_tokens/self).
	Any bool
}

// Accepted lists the scopes that satisfy the rule for a request method, as
// GitLab names them in an insufficient_scope error.
func (r ScopeRule) Accepted(method string) []model.Scope {
	s := []model.Scope{model.ScopeAPI}
	if isRead(method) {
		s = append(s, model.ScopeReadAPI)
	}
	return append(s, r.Extra...)
}

// Allows reports whether a token with the given scopes may call an endpoint
// with this rule.
func (r ScopeRule) Allows(method string, t *model.PersonalAccessToken) bool {
	if t == nil || r.Any {
		return true
	}
	for _, s := range r.Accepted(method) {
		if t.HasScope(s) {
			return true
		}
	}
	return false
}

// ScopeString renders scopes space-separated.
func ScopeString(s []model.Scope) string {
	parts := make([]string, len(s))
	for i, v := range s {
		parts[i] = string(v)
	}
	return strings.Join(parts, " ")
}

func isRead(method string) bool { return method == http.MethodGet || method == http.MethodHead }

// Owner is the actor as the owner of its credentials: without sudo, the
// administrator who holds the token rather than the user it acts as.
func (a Actor) Owner() Actor {
	if a.Sudoer != nil {
		return Actor{User: a.Sudoer, Token: a.Token}
	}
	return a
}
