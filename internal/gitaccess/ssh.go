package gitaccess

import (
	"context"
	"errors"
	"net/http"

	"quarry/internal/auth"
	"quarry/internal/git/smarthttp"
	"quarry/internal/model"
)

// KeyHolder is who an SSH connection authenticated as: the user of a
// user's key, or a deploy key (DeployKeyID); KeyID is the key's id
// either way.
type KeyHolder struct {
	User        *model.User
	DeployKeyID int64
	KeyID       int64
}

// DeployKeys tells what a deploy key may do on a project (the keys
// service).
type DeployKeys interface {
	// DeployKeyAccess returns the project at fullPath if deploy key keyID
	// is enabled on it, whether it may push there and the key's creator
	// (0 when gone); model.ErrNotFound otherwise.
	DeployKeyAccess(ctx context.Context, keyID int64, fullPath string) (p model.Project, canPush bool, creatorID int64, err error)
}

// SetDeployKeys makes git over SSH serve deploy keys (before use).
func (s *Service) SetDeployKeys(d DeployKeys) { s.deployKeys = d }

// Messages of git over SSH.
const (
	msgSSHNotAllowed       = "Git access over SSH is not allowed"
	msgDeployKeyReadOnly   = "This deploy key does not have write access to this project."
	msgDeployKeyNoArchived = "You are not allowed to push code to an archived project."
)

// AuthorizeSSH grants a clone or push over SSH to the holder of a key,
// with exactly the rules of git over HTTP for users; a deploy key reads
// the projects it is enabled on and pushes where it may (can_push),
// never to protected branches or tags.
func (s *Service) AuthorizeSSH(ctx context.Context, who KeyHolder, fullPath string, push bool) (smarthttp.Grant, error) {
	if s.settings != nil {
		st, err := s.settings.Current(ctx)
		if err != nil {
			return smarthttp.Grant{}, err
		}
		if p := st.EnabledGitAccessProtocol; p != nil && *p == "http" {
			return smarthttp.Grant{}, deny(http.StatusForbidden, msgSSHNotAllowed)
		}
	}
	if who.User != nil {
		return s.authorizeActor(ctx, auth.Actor{User: who.User}, fullPath, push)
	}
	if s.deployKeys == nil || who.DeployKeyID == 0 {
		return smarthttp.Grant{}, deny(http.StatusNotFound, msgProjectNotFound)
	}
	p, canPush, creator, err := s.deployKeys.DeployKeyAccess(ctx, who.DeployKeyID, fullPath)
	if errors.Is(err, model.ErrNotFound) {
		return smarthttp.Grant{}, deny(http.StatusNotFound, msgProjectNotFound)
	}
	if err != nil {
		return smarthttp.Grant{}, err
	}
	root, rel, err := s.projects.RepositoryLocation(p)
	if err != nil {
		return smarthttp.Grant{}, err
	}
	g := smarthttp.Grant{ProjectID: p.ID, Root: root, Rel: rel, UserID: creator}
	if !push {
		return g, nil
	}
	switch {
	case !canPush:
		return g, deny(http.StatusForbidden, msgDeployKeyReadOnly)
	case p.Archived:
		return g, deny(http.StatusForbidden, msgDeployKeyNoArchived)
	case p.RepositoryReadOnly:
		return g, deny(http.StatusForbidden, model.RepositoryReadOnlyMessage)
	}
	rules, err := s.projects.ProtectedRules(ctx, p.ID)
	if err != nil && !errors.Is(err, model.ErrNotFound) {
		return g, err
	}
	for _, rule := range rules {
		ref := "refs/heads/" + rule.Name
		g.Rules.NoDelete = append(g.Rules.NoDelete, ref)
		g.Rules.Deny = append(g.Rules.Deny, ref)
	}
	tags, err := s.projects.ProtectedTagRules(ctx, p.ID)
	if err != nil && !errors.Is(err, model.ErrNotFound) {
		return g, err
	}
	for _, t := range tags {
		if pat, ok := HookPattern(t.Name); ok {
			g.Rules.ProtectedTags = append(g.Rules.ProtectedTags, "refs/tags/"+pat)
		}
	}
	g.Rules.TagDeleteMessage = msgDeleteProtectedTag
	g.Push = true
	return g, nil
}
