// Package endpoint is what every area of the API shares: the route row
// (method, path, how the caller authenticates, which token scopes pass, how
// the body is read, the handler), the call a handler works on, the
// parameter reader, pagination headers and the one translation of errors
// into statuses and GitLab's bodies.
package endpoint

import (
	"fmt"
	"strings"

	"quarry/internal/auth"
	"quarry/internal/model"
)

// Auth says which credentials a route takes and whether a caller without
// them passes. The zero value is not a valid Auth: every row says.
type Auth uint8

// The ways a caller authenticates.
const (
	_ Auth = iota
	// NoAuth reads no credentials at all (the handler, if it needs a
	// secret, checks it itself).
	NoAuth
	// Public takes a personal or OAuth token when one is sent; callers
	// without one pass as anonymous (the service may still refuse).
	Public
	// Token requires a personal or OAuth token: 401 without one.
	Token
	// JobToken requires a CI job token (JOB-TOKEN header, job_token
	// parameter, or Authorization: Bearer).
	JobToken
	// RunnerToken requires a runner's authentication token (the body's
	// token parameter or the RUNNER-TOKEN header).
	RunnerToken
	// IntegrationKey requires the key of an inbound integration (alert
	// intake, error-tracking collector): Authorization: Bearer, the
	// X-Sentry-Auth header's sentry_key, or the sentry_key parameter.
	IntegrationKey
)

var authNames = [...]string{"", "none", "public", "token", "job token", "runner token", "integration key"}

func (a Auth) String() string {
	if int(a) < len(authNames) && a != 0 {
		return authNames[a]
	}
	return fmt.Sprintf("Auth(%d)", a)
}

// Valid reports whether a is one of the declared kinds.
func (a Auth) Valid() bool { return a >= NoAuth && a <= IntegrationKey }

// Body says how a route's request body is read, and how much of it.
// Every body is read only once the caller is known (see Site.Handler).
type Body struct {
	streamed bool
	limit    int64
	content  Content
}

// Content names the content setting that bounds a row whose parameters
// legitimately carry content (file and commit content, wiki pages,
// attachments): such a row takes a parsed body as large as that setting
// allows rather than the server's parsed-body limit.
type Content string

// The kinds of content rows carry.
const (
	// ContentFile is repository file content (the files and commits APIs).
	ContentFile Content = "file"
	// ContentWikiPage is a wiki page's content.
	ContentWikiPage Content = "wiki_page"
	// ContentAttachment is an uploaded file (wiki attachments).
	ContentAttachment Content = "attachment"
	// ContentSnippet is a snippet's files (snippet_size_limit in all).
	ContentSnippet Content = "snippet"
)

// Parsed bodies are read before the handler: the query string, then a
// form (urlencoded or multipart, files included) or JSON on top, within
// the server's parsed-body limit.
var Parsed = Body{limit: -1}

// Carrying is a parsed body whose parameters carry content of kind: its
// limit is what the content setting allows.
func Carrying(kind Content) Body { return Body{limit: -1, content: kind} }

// Streamed leaves the body to the handler (artifacts, imports, large
// uploads), which reads at most limit bytes through Call.Body; only the
// query string is parsed beforehand.
func Streamed(limit int64) Body { return Body{streamed: true, limit: limit} }

// Valid reports whether b was declared (Parsed, Carrying a known kind, or
// Streamed with a limit).
func (b Body) Valid() bool {
	switch {
	case b.streamed:
		return b.limit > 0 && b.content == ""
	case b.limit != -1:
		return false
	}
	switch b.content {
	case "", ContentFile, ContentWikiPage, ContentAttachment, ContentSnippet:
		return true
	}
	return false
}

// IsStreamed reports whether the handler reads the body itself.
func (b Body) IsStreamed() bool { return b.streamed }

// Limit is the most a streamed body may hold.
func (b Body) Limit() int64 { return b.limit }

// Carries is the content kind of a parsed row ("" for none).
func (b Body) Carries() Content { return b.content }

func (b Body) String() string {
	switch {
	case b.streamed:
		return fmt.Sprintf("streamed(%d)", b.limit)
	case !b.Valid():
		return "unset"
	case b.content != "":
		return "parsed+" + string(b.content)
	}
	return "parsed"
}

// Handler answers one route. A returned error is rendered by WriteError.
type Handler func(c *Call) error

// Route is one row of the route table. Paths are under /api/v4 and use
// ServeMux wildcards that name the resource they identify ({id},
// {user_id}, {file_path}, …), never an action.
type Route struct {
	Method string
	Path   string
	Auth   Auth
	Scopes auth.ScopeRule
	Body   Body
	Handle Handler
	// JobTokens lets a Public or Token row also take a CI job token
	// (JOB-TOKEN, job_token, or a Bearer glcbt- token): the endpoints
	// GitLab opens to jobs.
	JobTokens bool
}

// WithJobTokens returns the row taking CI job tokens too.
func (rt Route) WithJobTokens() Route {
	rt.JobTokens = true
	return rt
}

// Row builds a route row; every part is required.
func Row(method, path string, a Auth, scopes auth.ScopeRule, body Body, h Handler) Route {
	return Route{Method: method, Path: path, Auth: a, Scopes: scopes, Body: body, Handle: h}
}

// Pattern is the row's ServeMux pattern.
func (rt Route) Pattern() string { return rt.Method + " /api/v4" + rt.Path }

// Scope rules the rows use.
var (
	// ScopeAPI accepts `api`, and `read_api` on reads.
	ScopeAPI = auth.ScopeRule{}
	// ScopeUser adds `read_user` on reads (users, user, version).
	ScopeUser = auth.ScopeRule{Extra: []model.Scope{model.ScopeReadUser}}
	// ScopeRepoRead adds `read_repository` on reads (the files API).
	ScopeRepoRead = auth.ScopeRule{Extra: []model.Scope{model.ScopeReadRepository}}
	// ScopeAny accepts a token of any scope (the token's own endpoints).
	ScopeAny = auth.ScopeRule{Any: true}
	// ScopeSelfRotate accepts `self_rotate` besides `api`.
	ScopeSelfRotate = auth.ScopeRule{Extra: []model.Scope{model.ScopeSelfRotate}}
)

// identifierWildcards are the names a path wildcard may have: each names
// the resource it identifies. A wildcard named for an action ({action},
// {verb}) would hide several endpoints behind one row.
var identifierWildcards = map[string]bool{
	"id": true, "user_id": true, "group_id": true, "project_id": true, "forked_from_id": true,
	"key": true, "provider": true, "file_path": true, "sha": true, "branch": true, "tag": true,
	"name": true, "path...": true, "job_id": true, "pipeline_id": true, "trigger_id": true, "ref": true,
	"artifact_path...": true, "merge_request_iid": true, "issue_iid": true, "issue_id": true, "approval_rule_id": true,
	"agent_id": true, "target_project_id": true, "target_group_id": true,
	"runner_id": true, "slug": true, "snippet_id": true, "repository_storage_id": true,
	"badge_id": true, "label_id": true, "milestone_id": true, "board_id": true, "list_id": true,
	"integration_id": true, "alert_iid": true, "metric_image_id": true,
	"key_id": true, "error_id": true, "note_id": true, "award_id": true,
	"tag_name": true, "link_id": true,
	"pipeline_schedule_id": true,
	"environment_id":       true, "deployment_id": true,
}

// Check reports what is wrong with a row: an unknown method, a path that
// does not start with "/", an undeclared auth kind or body mode, a missing
// handler, or a wildcard that does not name a resource.
func (rt Route) Check() error {
	switch rt.Method {
	case "GET", "HEAD", "POST", "PUT", "PATCH", "DELETE":
	default:
		return fmt.Errorf("%s: method %q", rt.Pattern(), rt.Method)
	}
	if !strings.HasPrefix(rt.Path, "/") {
		return fmt.Errorf("%s: path must start with /", rt.Pattern())
	}
	if !rt.Auth.Valid() {
		return fmt.Errorf("%s: no auth kind", rt.Pattern())
	}
	if !rt.Body.Valid() {
		return fmt.Errorf("%s: no body mode", rt.Pattern())
	}
	if rt.Handle == nil {
		return fmt.Errorf("%s: no handler", rt.Pattern())
	}
	if rt.JobTokens && rt.Auth != Public && rt.Auth != Token {
		return fmt.Errorf("%s: only public and token rows take job tokens too", rt.Pattern())
	}
	segs := strings.Split(rt.Path, "/")
	for i, seg := range segs {
		if seg == "{$}" && i == len(segs)-1 {
			continue // the path ends with its slash, and nothing after it
		}
		if strings.HasPrefix(seg, "{") {
			name := strings.TrimSuffix(strings.TrimPrefix(seg, "{"), "}")
			if !strings.HasSuffix(seg, "}") || !identifierWildcards[name] {
				return fmt.Errorf("%s: wildcard %s does not name a resource", rt.Pattern(), seg)
			}
		} else if strings.ContainsAny(seg, "{}") {
			return fmt.Errorf("%s: wildcard inside segment %q", rt.Pattern(), seg)
		}
	}
	return nil
}
