package keys

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"quarry/internal/auth"
	"quarry/internal/model"
	"quarry/internal/store"
)

// deployPrefix names the fields of a deploy key created through its
// project link, as GitLab's nested attributes do.
const deployPrefix = "deploy_key."

// DeployKeyView is a deploy key with the projects it may push to and
// those it may only read (at most maxLinks of them).
type DeployKeyView struct {
	model.SSHKey
	Write, ReadOnly []model.Project
}

// ListDeploy lists every deploy key of the instance (only the public
// ones when publicOnly) with its projects (administrators).
func (s *Service) ListDeploy(ctx context.Context, a auth.Actor, publicOnly bool, page model.Page) ([]DeployKeyView, model.PageInfo, error) {
	if !a.Admin() {
		return nil, model.PageInfo{}, model.Forbidden("")
	}
	list, info, err := s.db.ListDeployKeys(ctx, publicOnly, page)
	if err != nil {
		return nil, info, err
	}
	ids := make([]int64, len(list))
	for i := range list {
		ids[i] = list[i].ID
	}
	links, err := s.db.DeployKeyLinks(ctx, ids, maxLinks)
	if err != nil {
		return nil, info, err
	}
	var pids []int64
	for _, ls := range links {
		for _, l := range ls {
			pids = append(pids, l.ProjectID)
		}
	}
	projects, err := s.db.ProjectsByIDs(ctx, pids)
	if err != nil {
		return nil, info, err
	}
	out := make([]DeployKeyView, len(list))
	for i := range list {
		v := DeployKeyView{SSHKey: list[i], Write: []model.Project{}, ReadOnly: []model.Project{}}
		for _, l := range links[list[i].ID] {
			p, ok := projects[l.ProjectID]
			switch {
			case !ok || p.PendingDelete:
			case l.CanPush:
				v.Write = append(v.Write, p)
			default:
				v.ReadOnly = append(v.ReadOnly, p)
			}
		}
		out[i] = v
	}
	return out, info, nil
}

// CreateInstance adds a public deploy key any project's maintainer may
// enable (administrators).
func (s *Service) CreateInstance(ctx context.Context, a auth.Actor, in Input) (model.SSHKey, error) {
	if !a.Admin() {
		return model.SSHKey{}, model.Forbidden("")
	}
	k, f, err := s.build(ctx, in, "")
	if err != nil {
		return model.SSHKey{}, err
	}
	if err := f.Err(); err != nil {
		return model.SSHKey{}, err
	}
	k.Deploy, k.Public, k.UserID = true, true, a.UserID()
	err = s.db.InTx(ctx, func(tx *store.Tx) error { return insert(ctx, tx, &k, "") })
	return k, err
}

// project resolves a project whose deploy keys the caller administers
// (Maintainer and up): 404 when it may not see it, else 403.
func (s *Service) project(ctx context.Context, a auth.Actor, ref string) (model.Project, error) {
	if !a.SignedIn() {
		return model.Project{}, model.Unauthorized("")
	}
	p, acc, err := s.projects.Resolve(ctx, a, ref)
	if err != nil {
		return p, err
	}
	if !auth.Can(a, auth.UpdateProject, auth.Resource{Project: &p, Access: acc}) {
		return p, model.Forbidden("")
	}
	return p, nil
}

// ListProject lists the deploy keys enabled on a project.
func (s *Service) ListProject(ctx context.Context, a auth.Actor, ref string, page model.Page) ([]model.DeployKeyProject, model.PageInfo, error) {
	p, err := s.project(ctx, a, ref)
	if err != nil {
		return nil, model.PageInfo{}, err
	}
	return s.db.ListProjectDeployKeys(ctx, p.ID, page)
}

// GetProject returns a deploy key as enabled on a project.
func (s *Service) GetProject(ctx context.Context, a auth.Actor, ref string, keyID int64) (model.DeployKeyProject, error) {
	p, err := s.project(ctx, a, ref)
	if err != nil {
		return model.DeployKeyProject{}, err
	}
	d, err := s.db.ProjectDeployKey(ctx, p.ID, keyID)
	if errors.Is(err, model.ErrNotFound) {
		return d, model.RecordNotFound()
	}
	return d, err
}

// accessible reports whether the caller may enable deploy key k on its
// projects: a public key, or one enabled on a project it maintains
// (GitLab's accessible_deploy_keys).
func (s *Service) accessible(ctx context.Context, a auth.Actor, k model.SSHKey) (bool, error) {
	if k.Public {
		return true, nil
	}
	links, err := s.db.DeployKeyLinks(ctx, []int64{k.ID}, maxLinks)
	if err != nil {
		return false, err
	}
	for _, l := range links[k.ID] {
		acc, err := s.projects.Access(ctx, a, l.ProjectID)
		if err != nil {
			return false, err
		}
		if acc >= model.Maintainer {
			return true, nil
		}
	}
	return false, nil
}

// CreateProject adds a deploy key to a project: the project's own key
// with that fingerprint as it is; a key the caller may enable, enabled
// (with canPush); else a new key.
func (s *Service) CreateProject(ctx context.Context, a auth.Actor, ref string, in Input, canPush bool) (model.DeployKeyProject, error) {
	p, err := s.project(ctx, a, ref)
	if err != nil {
		return model.DeployKeyProject{}, err
	}
	if parsed := Parse(in.Key); parsed.Valid() {
		existing, err := s.db.SSHKeyBySHA256(ctx, parsed.SHA256)
		switch {
		case errors.Is(err, model.ErrNotFound):
		case err != nil:
			return model.DeployKeyProject{}, err
		case existing.Deploy:
			if d, err := s.db.ProjectDeployKey(ctx, p.ID, existing.ID); err == nil {
				return d, nil
			} else if !errors.Is(err, model.ErrNotFound) {
				return d, err
			}
			ok, err := s.accessible(ctx, a, existing)
			if err != nil {
				return model.DeployKeyProject{}, err
			}
			if ok {
				return s.link(ctx, p.ID, existing.ID, canPush)
			}
		}
	}
	k, f, err := s.build(ctx, in, deployPrefix)
	if err != nil {
		return model.DeployKeyProject{}, err
	}
	if err := f.Err(); err != nil {
		return model.DeployKeyProject{}, err
	}
	k.Deploy, k.UserID = true, a.UserID()
	err = s.db.InTx(ctx, func(tx *store.Tx) error {
		if err := insert(ctx, tx, &k, deployPrefix); err != nil {
			return err
		}
		return tx.EnableDeployKey(ctx, p.ID, k.ID, canPush)
	})
	if err != nil {
		return model.DeployKeyProject{}, err
	}
	return s.db.ProjectDeployKey(ctx, p.ID, k.ID)
}

// link enables key keyID on project projectID (a link made meanwhile is
// kept as it is) and returns it.
func (s *Service) link(ctx context.Context, projectID, keyID int64, canPush bool) (model.DeployKeyProject, error) {
	err := s.db.InTx(ctx, func(tx *store.Tx) error {
		if _, err := tx.ProjectDeployKey(ctx, projectID, keyID); err == nil {
			return nil
		} else if !errors.Is(err, model.ErrNotFound) {
			return err
		}
		return tx.EnableDeployKey(ctx, projectID, keyID, canPush)
	})
	if err != nil && !errors.Is(err, model.ErrConflict) {
		return model.DeployKeyProject{}, err
	}
	return s.db.ProjectDeployKey(ctx, projectID, keyID)
}

// Enable enables a deploy key the caller may use on a project.
func (s *Service) Enable(ctx context.Context, a auth.Actor, ref string, keyID int64) (model.SSHKey, error) {
	p, err := s.project(ctx, a, ref)
	if err != nil {
		return model.SSHKey{}, err
	}
	k, err := s.db.DeployKeyByID(ctx, keyID)
	if errors.Is(err, model.ErrNotFound) {
		return k, errDeployKeyNotFound
	}
	if err != nil {
		return k, err
	}
	ok, err := s.accessible(ctx, a, k)
	if err != nil {
		return k, err
	}
	if !ok && !a.Admin() {
		return k, errDeployKeyNotFound
	}
	d, err := s.link(ctx, p.ID, k.ID, false)
	return d.Key, err
}

// UpdateInput changes a deploy key on a project; nil leaves a field.
type UpdateInput struct {
	Title   *string
	CanPush *bool
}

// UpdateProject changes whether a deploy key may push to a project and,
// for its creator (of a key not public) or an administrator, its title.
func (s *Service) UpdateProject(ctx context.Context, a auth.Actor, ref string, keyID int64, in UpdateInput) (model.DeployKeyProject, error) {
	d, err := s.GetProject(ctx, a, ref, keyID)
	if err != nil {
		return d, err
	}
	titleAllowed := a.Admin() || (!d.Key.Public && d.Key.UserID != 0 && a.Is(d.Key.UserID))
	if in.Title != nil && titleAllowed {
		var f model.FieldErrors
		switch t := *in.Title; {
		case strings.TrimSpace(t) == "":
			f.Add(deployPrefix+"title", "can't be blank")
		case utf8.RuneCountInString(t) > MaxTitleLength:
			f.Add(deployPrefix+"title", fmt.Sprintf("is too long (maximum is %d characters)", MaxTitleLength))
		}
		if err := f.Err(); err != nil {
			return d, err
		}
	}
	err = s.db.InTx(ctx, func(tx *store.Tx) error {
		if in.CanPush != nil {
			if err := tx.SetDeployKeyCanPush(ctx, d.ProjectID, keyID, *in.CanPush); err != nil {
				return err
			}
		}
		if in.Title != nil && titleAllowed {
			return tx.SetSSHKeyTitle(ctx, keyID, *in.Title)
		}
		return nil
	})
	if errors.Is(err, model.ErrNotFound) {
		return d, model.RecordNotFound()
	}
	if err != nil {
		return d, err
	}
	return s.db.ProjectDeployKey(ctx, d.ProjectID, keyID)
}

// DisableProject removes a deploy key from a project; a key no project
// has any more goes too, unless it is public.
func (s *Service) DisableProject(ctx context.Context, a auth.Actor, ref string, keyID int64) error {
	p, err := s.project(ctx, a, ref)
	if err != nil {
		return err
	}
	return s.db.InTx(ctx, func(tx *store.Tx) error {
		left, err := tx.DisableDeployKey(ctx, p.ID, keyID)
		if errors.Is(err, model.ErrNotFound) {
			return errDeployKeyNotFound
		}
		if err != nil || left > 0 {
			return err
		}
		k, err := tx.DeployKeyByID(ctx, keyID)
		if err != nil || k.Public {
			return model.NotFoundAs(err, "Deploy key")
		}
		return tx.DeleteSSHKey(ctx, keyID)
	})
}
