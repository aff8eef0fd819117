package snippets

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"quarry/internal/auth"
	"quarry/internal/git/smarthttp"
	"quarry/internal/model"
	"quarry/internal/store"
)

// Messages git prints when a snippet clone or push is refused, GitLab's
// (Gitlab::GitAccessSnippet).
const (
	msgRead       = "You are not allowed to read this snippet."
	msgUpdate     = "You are not allowed to update this snippet."
	msgMechanism  = "The authentication mechanism is not supported."
	snippetsInURL = "snippets/"
)

// ParseRepositoryPath splits the path of a snippet's repository, as clone
// URLs name it without ".git": "snippets/<id>" (project "") or
// "<project full path>/snippets/<id>". A project path always has its
// namespace, so a bare "12/snippets/3" names nothing (12 would be read as
// an id).
func ParseRepositoryPath(p string) (project string, id int64, ok bool) {
	i := strings.LastIndex(p, snippetsInURL)
	if i < 0 || (i > 0 && p[i-1] != '/') {
		return "", 0, false
	}
	num := p[i+len(snippetsInURL):]
	id, err := strconv.ParseInt(num, 10, 64)
	if err != nil || id <= 0 || strconv.FormatInt(id, 10) != num {
		return "", 0, false
	}
	project = strings.TrimSuffix(p[:i], "/")
	if i > 0 && !strings.Contains(project, "/") {
		return "", 0, false
	}
	return project, id, true
}

// GitAccess authorizes a clone (or, with push, a push) of the snippet
// whose repository path is p (see ParseRepositoryPath) and grants it: its
// repository, and for a push the rules GitLab's snippet checks make (only
// the default branch, never deleted, one to model.SnippetMaxFiles files
// within snippet_size_limit). The errors: model.ErrNotFound when the
// caller sees no such snippet, a model Forbidden (or the read-only kind)
// carrying the message git should print.
func (s *Service) GitAccess(ctx context.Context, a auth.Actor, p string, push bool) (smarthttp.Grant, error) {
	project, id, ok := ParseRepositoryPath(p)
	if !ok {
		return smarthttp.Grant{}, model.NotFound("Snippet")
	}
	if a.Job != nil {
		return smarthttp.Grant{}, model.ForbiddenRaw(msgMechanism)
	}
	f, err := s.find(ctx, a, Where{Project: project}, id)
	switch {
	case model.KindOf(err) == model.KindForbidden:
		// The project's snippets are closed to the caller.
		return smarthttp.Grant{}, model.ForbiddenRaw(msgRead)
	case err != nil:
		return smarthttp.Grant{}, err
	}
	repo, err := s.repo(f.Snippet)
	if err != nil {
		return smarthttp.Grant{}, err
	}
	if !repo.Exists() {
		return smarthttp.Grant{}, model.NotFound("Snippet")
	}
	g := smarthttp.Grant{Root: repo.Root(), Rel: repo.Rel, Snippet: f.ID}
	if !push {
		return g, nil
	}
	if !a.SignedIn() {
		return g, model.Unauthorized("")
	}
	if !auth.Can(a, auth.UpdateSnippet, f.resource()) {
		return g, model.ForbiddenRaw(msgUpdate)
	}
	if f.RepositoryReadOnly {
		return g, model.RepositoryReadOnly()
	}
	st, err := s.instance(ctx)
	if err != nil {
		return g, err
	}
	branch, err := repo.HeadBranch(ctx)
	if err != nil {
		return g, fmt.Errorf("snippet head: %w", err)
	}
	g.Push = true
	g.Rules = smarthttp.PushRules{OnlyRef: "refs/heads/" + branch, MaxFiles: model.SnippetMaxFiles, MaxBytes: st.SnippetSizeLimit}
	return g, nil
}

// Pushed follows a push into a snippet's repository: the row remembers
// its first file and the time.
func (s *Service) Pushed(ctx context.Context, snippetID int64) error {
	s.countWrite(ctx, snippetID)
	sn, err := s.db.SnippetByID(ctx, snippetID)
	if errors.Is(err, model.ErrNotFound) {
		return nil // removed meanwhile
	}
	if err != nil {
		return err
	}
	repo, err := s.repo(sn)
	if err != nil {
		return err
	}
	_, _, list, err := files(ctx, repo)
	if err != nil {
		return err
	}
	name := sn.FileName
	if len(list) > 0 {
		name = list[0]
	}
	return s.db.InTx(ctx, func(tx *store.Tx) error { return tx.SetSnippetFileName(ctx, sn.ID, name) })
}
