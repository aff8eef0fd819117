// Package gitaccess decides who may clone and push over HTTP: it turns
// Basic credentials (a personal access token as password, or the account
// password) into an actor, checks token scopes, project visibility and
// role, and computes the protected branch rules a push must respect.
package gitaccess

import (
	"context"
	"errors"
	"net/http"
	"path"
	"strings"

	"quarry/internal/auth"
	"quarry/internal/git/smarthttp"
	"quarry/internal/model"
)

// Tokens authenticates personal access tokens (the tokens service).
type Tokens interface {
	Authenticate(ctx context.Context, secret string) (auth.Actor, error)
}

// Passwords checks account passwords (the users service).
type Passwords interface {
	CheckPassword(ctx context.Context, username, password string) (model.User, error)
}

// Projects resolves projects and their repositories (the projects service).
type Projects interface {
	Resolve(ctx context.Context, a auth.Actor, ref string) (model.Project, model.AccessLevel, error)
	ProtectedRules(ctx context.Context, projectID int64) ([]model.ProtectedBranch, error)
	ProtectedTagRules(ctx context.Context, projectID int64) ([]model.ProtectedTag, error)
	// InGroup tests a user's membership of groups (protected tag grants).
	InGroup(ctx context.Context, userID int64) func(groupID int64) bool
	RepositoryLocation(p model.Project) (root, rel string, err error)
	FirstWrite(ctx context.Context, id int64) error
	// BeginWrite registers a write to p's repository (refused with
	// model.ErrRepositoryReadOnly while a storage move holds it) and sets
	// p's storage to where it is now; end ends it.
	BeginWrite(ctx context.Context, p *model.Project) (end func(), err error)
}

// RefsEvents learns of every ref a push moves (the events bus).
type RefsEvents interface {
	RefsChanged(ctx context.Context, e model.RefsChanged) error
}

// Wikis authorizes wiki clones and pushes and follows wiki pushes (the
// wikis service). GitAccess answers model errors: not found when the
// caller sees no project or group at ownerPath, forbidden with the
// message git prints.
type Wikis interface {
	GitAccess(ctx context.Context, a auth.Actor, ownerPath string, push bool) (root, rel string, err error)
	// BeginPush registers a push to the wiki of the project or group at
	// ownerPath (refused with model.ErrRepositoryReadOnly while a storage
	// move holds it) and says where the wiki is now.
	BeginPush(ctx context.Context, ownerPath string) (root string, end func(), err error)
	Pushed(ctx context.Context, ownerPath string, branches []string) error
}

// Snippets authorizes snippet clones and pushes and follows snippet
// pushes (the snippets service). GitAccess answers the grant of the
// snippet at path ("snippets/<id>" or "<project path>/snippets/<id>"),
// its push rules included, or model errors: not found when the caller
// sees no such snippet, forbidden (or read-only) with the message git
// prints.
type Snippets interface {
	GitAccess(ctx context.Context, a auth.Actor, path string, push bool) (smarthttp.Grant, error)
	// BeginPush registers a push to a snippet's repository (refused with
	// model.ErrRepositoryReadOnly while a storage move holds it) and says
	// where the repository is now.
	BeginPush(ctx context.Context, snippetID int64) (root string, end func(), err error)
	Pushed(ctx context.Context, snippetID int64) error
}

// Service implements smarthttp.Access.
type Service struct {
	tokens     Tokens
	jobs       Tokens
	passwords  Passwords
	projects   Projects
	events     RefsEvents
	wikis      Wikis
	settings   Settings
	snippets   Snippets
	deployKeys DeployKeys
}

// SetSnippets makes git over HTTP serve snippet repositories at
// "snippets/<id>.git" and "<project path>/snippets/<id>.git" (before
// use).
func (s *Service) SetSnippets(sn Snippets) { s.snippets = sn }

// Settings give the instance's application settings in effect.
type Settings interface {
	Current(ctx context.Context) (model.ApplicationSettings, error)
}

// SetSettings makes git over HTTP follow the instance's
// enabled_git_access_protocol (before use).
func (s *Service) SetSettings(st Settings) { s.settings = st }

// JobUser is the user name a CI job clones with, its job token the
// password.
const JobUser = "gitlab-ci-token"

// New returns the git access service; jobs authenticates CI job tokens
// (user gitlab-ci-token); wikis serves "<project or group>.wiki.git".
func New(tokens, jobs Tokens, passwords Passwords, projects Projects, events RefsEvents, wikis Wikis) *Service {
	return &Service{tokens: tokens, jobs: jobs, passwords: passwords, projects: projects, events: events, wikis: wikis}
}

var _ smarthttp.Access = (*Service)(nil)

func deny(status int, msg string) error { return &smarthttp.DeniedError{Status: status, Message: msg} }

// refusal turns a service's verdict on a clone or push into git's answer,
// as GitLab gives it: an anonymous caller is asked for credentials (401
// with a Basic challenge), a signed-in one is told why (403 with the
// service's message) or that nothing is there (404). Unclassified errors
// stay errors (a 500 that is logged).
func refusal(a auth.Actor, err error, notFound string) error {
	var me *model.Error
	if !errors.As(err, &me) {
		return err
	}
	switch {
	case me.Kind == model.KindUnauthorized, !a.SignedIn() && (me.Kind == model.KindNotFound || me.Kind == model.KindForbidden):
		return deny(http.StatusUnauthorized, accessDenied)
	case me.Kind == model.KindNotFound:
		return deny(http.StatusNotFound, notFound)
	case me.Kind == model.KindForbidden:
		msg := me.Message
		if msg == "" {
			msg = "You are not allowed to download code from this project."
		}
		return deny(http.StatusForbidden, msg)
	case me.Kind == model.KindReadOnly:
		return deny(http.StatusForbidden, me.Message)
	}
	return err
}

// What git prints when nothing the caller sees is at the path.
const (
	msgProjectNotFound = "The project you were looking for could not be found or you don't have permission to view it."
	msgWikiNotFound    = "The wiki you were looking for could not be found or you don't have permission to view it."
	msgSnippetNotFound = "The snippet you were looking for could not be found."
)

const accessDenied = "HTTP Basic: Access denied. If a password was provided for Git authentication, the password was incorrect or you're required to use a token instead of a password."

// actor turns Basic credentials into an actor: the password as a token
// first, then as the account's password.
func (s *Service) actor(ctx context.Context, username, password string, has bool) (auth.Actor, error) {
	if !has {
		return auth.Anonymous, nil
	}
	if username == JobUser {
		a, err := s.jobs.Authenticate(ctx, password)
		if err != nil {
			return auth.Anonymous, deny(http.StatusUnauthorized, accessDenied)
		}
		return a, nil
	}
	a, err := s.tokens.Authenticate(ctx, password)
	if err == nil {
		return a, nil
	}
	if errors.Is(err, auth.ErrBlocked) {
		// A blocked user's token is no credential for git (GitLab's
		// Gitlab::Auth.personal_access_token_check wants a user who may
		// log in): git is asked for credentials again.
		return auth.Anonymous, deny(http.StatusUnauthorized, accessDenied)
	}
	if model.KindOf(err) == model.KindForbidden {
		return a, deny(http.StatusForbidden, err.Error())
	}
	u, perr := s.passwords.CheckPassword(ctx, username, password)
	if perr != nil {
		if model.KindOf(perr) == model.KindForbidden {
			return a, deny(http.StatusForbidden, perr.Error())
		}
		return auth.Anonymous, deny(http.StatusUnauthorized, accessDenied)
	}
	return auth.Actor{User: &u}, nil
}

// Authorize implements smarthttp.Access.
func (s *Service) Authorize(ctx context.Context, username, password string, has bool, fullPath string, push bool) (smarthttp.Grant, error) {
	if s.settings != nil {
		st, err := s.settings.Current(ctx)
		if err != nil {
			return smarthttp.Grant{}, err
		}
		if p := st.EnabledGitAccessProtocol; p != nil && *p == "ssh" {
			return smarthttp.Grant{}, deny(http.StatusForbidden, "Git access over HTTP is not allowed")
		}
	}
	a, err := s.actor(ctx, username, password, has)
	if err != nil {
		return smarthttp.Grant{}, err
	}
	if a.Token != nil {
		need := []model.Scope{model.ScopeAPI, model.ScopeWriteRepository}
		if !push {
			// read_api gives git GitLab's read-only abilities, download_code
			// among them (Gitlab::Auth.abilities_for_scopes).
			need = append(need, model.ScopeReadRepository, model.ScopeReadAPI)
		}
		ok := false
		for _, sc := range need {
			ok = ok || a.Token.HasScope(sc)
		}
		if !ok {
			return smarthttp.Grant{}, deny(http.StatusForbidden, "Your token does not have the scope needed to "+map[bool]string{true: "push", false: "pull"}[push]+" this repository.")
		}
	}
	return s.authorizeActor(ctx, a, fullPath, push)
}

// authorizeActor grants a known actor a clone or push of the repository
// at fullPath (a project's, a wiki's or a snippet's): the rules of git
// over HTTP and SSH alike.
func (s *Service) authorizeActor(ctx context.Context, a auth.Actor, fullPath string, push bool) (smarthttp.Grant, error) {
	if owner, ok := strings.CutSuffix(fullPath, ".wiki"); ok && s.wikis != nil {
		g, err := s.authorizeWiki(ctx, a, owner, push)
		if !errors.Is(err, model.ErrNotFound) {
			return g, err
		}
		// No project or group owns such a wiki: a project whose path
		// ends in ".wiki", or nothing.
	}
	if s.snippets != nil && snippetPath(fullPath) {
		g, err := s.authorizeSnippet(ctx, a, fullPath, push)
		if !errors.Is(err, model.ErrNotFound) {
			return g, err
		}
		// No snippet the caller sees, and a project at that path.
	}
	// A project's full path always has its namespace: a bare "12.git"
	// would name project 12 by id, not by path.
	p, acc, err := model.Project{}, model.AccessLevel(-1), error(model.ErrNotFound)
	if strings.Contains(fullPath, "/") {
		p, acc, err = s.projects.Resolve(ctx, a, fullPath)
	}
	if err != nil {
		return smarthttp.Grant{}, refusal(a, err, msgProjectNotFound)
	}
	res := auth.Resource{Project: &p, Access: acc}
	if !auth.Can(a, auth.ReadCode, res) {
		if !a.SignedIn() {
			return smarthttp.Grant{}, deny(http.StatusUnauthorized, accessDenied)
		}
		return smarthttp.Grant{}, deny(http.StatusForbidden, "You are not allowed to download code from this project.")
	}
	root, rel, err := s.projects.RepositoryLocation(p)
	if err != nil {
		return smarthttp.Grant{}, err
	}
	g := smarthttp.Grant{ProjectID: p.ID, Root: root, Rel: rel}
	if a.User != nil {
		g.User, g.UserID = a.User.Username, a.User.ID
	}
	if !push {
		return g, nil
	}
	if !a.SignedIn() {
		return g, deny(http.StatusUnauthorized, accessDenied)
	}
	if a.Job != nil {
		return g, deny(http.StatusForbidden, "You are not allowed to upload code.")
	}
	if p.Archived {
		return g, deny(http.StatusForbidden, "You are not allowed to push code to an archived project.")
	}
	if p.RepositoryReadOnly {
		return g, deny(http.StatusForbidden, model.RepositoryReadOnlyMessage)
	}
	if !a.Admin() && acc < model.Developer {
		return g, deny(http.StatusForbidden, "You are not allowed to push code to this project.")
	}
	rules, err := s.projects.ProtectedRules(ctx, p.ID)
	if err != nil && !errors.Is(err, model.ErrNotFound) {
		return g, err
	}
	for _, rule := range rules {
		ref := "refs/heads/" + rule.Name
		g.Rules.NoDelete = append(g.Rules.NoDelete, ref)
		if !auth.Can(a, auth.PushCode, auth.Resource{Project: &p, Access: acc, Branch: &auth.Branch{Name: rule.Name, Rules: rules}}) {
			g.Rules.Deny = append(g.Rules.Deny, ref)
		} else if !rule.AllowForcePush {
			g.Rules.NoForce = append(g.Rules.NoForce, ref)
		}
	}
	if err := s.tagRules(ctx, a, &p, acc, &g.Rules); err != nil {
		return g, err
	}
	g.Push = true
	return g, nil
}

// Messages of refused pushes of protected tags (GitLab's TagCheck).
const (
	msgDeleteProtectedTag = "You are not allowed to delete protected tags from this project. " +
		"Only a project maintainer or owner can delete a protected tag."
	msgDeleteProtectedTagNonWeb = "You can only delete protected tags using the web interface."
)

// tagRules adds the project's protected tags to a push's rules: every
// covered tag is refused updates and deletions, and created only when a
// rule covering it grants the pusher (auth.CanCreateTag).
func (s *Service) tagRules(ctx context.Context, a auth.Actor, p *model.Project, acc model.AccessLevel, rules *smarthttp.PushRules) error {
	tags, err := s.projects.ProtectedTagRules(ctx, p.ID)
	if err != nil || len(tags) == 0 {
		return err
	}
	inGroup := s.projects.InGroup(ctx, a.UserID())
	rules.TagDeleteMessage = msgDeleteProtectedTagNonWeb
	if !a.Admin() && acc < model.Maintainer {
		rules.TagDeleteMessage = msgDeleteProtectedTag
	}
	for _, t := range tags {
		pat, ok := HookPattern(t.Name)
		if !ok {
			continue // no tag can match it
		}
		rules.ProtectedTags = append(rules.ProtectedTags, "refs/tags/"+pat)
		for _, g := range t.Create {
			if auth.CanCreateTag(a, acc, t.Name, []model.ProtectedTag{{Name: t.Name, Create: []model.BranchAccess{g}}}, inGroup) {
				rules.CreateTags = append(rules.CreateTags, "refs/tags/"+pat)
				break
			}
		}
	}
	return nil
}

// HookPattern turns a protected ref name into the shell pattern the
// pre-receive hook matches refs with: `*` stays a wildcard; false for a
// name holding what no ref name may hold (blanks, `?`, `[`, `\`, control
// characters), which matches no ref and is left out.
func HookPattern(name string) (string, bool) {
	if name == "" {
		return "", false
	}
	for _, r := range name {
		if r <= ' ' || r == 0x7f || strings.ContainsRune("?[\\~^:", r) {
			return "", false
		}
	}
	return name, true
}

// authorizeWiki grants a clone or push of the wiki of the project or
// group at owner.
func (s *Service) authorizeWiki(ctx context.Context, a auth.Actor, owner string, push bool) (smarthttp.Grant, error) {
	root, rel, err := s.wikis.GitAccess(ctx, a, owner, push)
	if err != nil {
		if errors.Is(err, model.ErrNotFound) {
			return smarthttp.Grant{}, err // the caller tries a project next
		}
		return smarthttp.Grant{}, refusal(a, err, msgWikiNotFound)
	}
	g := smarthttp.Grant{Root: root, Rel: rel, Push: push, Wiki: owner}
	if a.User != nil {
		g.User, g.UserID = a.User.Username, a.User.ID
	}
	return g, nil
}

// snippetPath reports whether a clone path has a snippet's shape: it ends
// in "snippets/<digits>" (the snippets service reads it exactly).
func snippetPath(p string) bool {
	dir, id := path.Split(p)
	return id != "" && strings.Trim(id, "0123456789") == "" && (dir == "snippets/" || strings.HasSuffix(dir, "/snippets/"))
}

// authorizeSnippet grants a clone or push of the snippet at fullPath. A
// snippet the caller does not see is refused with the snippet's message,
// unless a project the caller sees has that path (its answer is
// model.ErrNotFound: the caller serves the project).
func (s *Service) authorizeSnippet(ctx context.Context, a auth.Actor, fullPath string, push bool) (smarthttp.Grant, error) {
	g, err := s.snippets.GitAccess(ctx, a, fullPath, push)
	if errors.Is(err, model.ErrNotFound) {
		if _, _, perr := s.projects.Resolve(ctx, a, fullPath); perr == nil {
			return g, err
		}
	}
	if err != nil {
		return g, refusal(a, err, msgSnippetNotFound)
	}
	if a.User != nil {
		g.User, g.UserID = a.User.Username, a.User.ID
	}
	return g, nil
}

// BeginPush implements smarthttp.Access: the push is a write in flight
// (a storage move waits for it), refused while a move holds the
// repository; g.Root is set to where the repository is now.
func (s *Service) BeginPush(ctx context.Context, g *smarthttp.Grant) (func(), error) {
	if g.Wiki != "" {
		root, end, err := s.wikis.BeginPush(ctx, g.Wiki)
		if err != nil {
			return nil, writeRefusal(err, msgWikiNotFound)
		}
		g.Root = root
		return end, nil
	}
	if g.Snippet != 0 {
		root, end, err := s.snippets.BeginPush(ctx, g.Snippet)
		if err != nil {
			return nil, writeRefusal(err, msgSnippetNotFound)
		}
		g.Root = root
		return end, nil
	}
	p := model.Project{ID: g.ProjectID, DiskPath: g.Rel}
	end, err := s.projects.BeginWrite(ctx, &p)
	if err != nil {
		return nil, writeRefusal(err, msgProjectNotFound)
	}
	root, _, err := s.projects.RepositoryLocation(p)
	if err != nil {
		end()
		return nil, err
	}
	g.Root = root
	return end, nil
}

// writeRefusal turns a refused write into git's answer.
func writeRefusal(err error, notFound string) error {
	switch {
	case errors.Is(err, model.ErrReadOnly):
		return deny(http.StatusForbidden, model.RepositoryReadOnlyMessage)
	case errors.Is(err, model.ErrNotFound):
		return deny(http.StatusNotFound, notFound)
	}
	return err
}

// Pushed emits the refs-changed event of a finished push; what follows a
// push (the project's repository facts, housekeeping, …) hangs on it. The
// first push into an empty repository is recorded before that (its branch
// becomes the protected default).
func (s *Service) Pushed(ctx context.Context, g smarthttp.Grant, push smarthttp.Push) error {
	if g.Snippet != 0 {
		return s.snippets.Pushed(ctx, g.Snippet)
	}
	if g.Wiki != "" {
		var branches []string
		for _, u := range push.Updates {
			if b, ok := strings.CutPrefix(u.Ref, "refs/heads/"); ok {
				branches = append(branches, b)
			}
		}
		return s.wikis.Pushed(ctx, g.Wiki, branches)
	}
	first := s.projects.FirstWrite(ctx, g.ProjectID)
	e := model.RefsChanged{ProjectID: g.ProjectID, ActorID: g.UserID, Source: model.RefsSourcePush, PushOptions: push.Options}
	for _, u := range push.Updates {
		e.Updates = append(e.Updates, model.RefUpdate{Ref: u.Ref, Old: u.Old, New: u.New})
	}
	return errors.Join(first, s.events.RefsChanged(ctx, e))
}
