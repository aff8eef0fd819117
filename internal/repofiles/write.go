package repofiles

import (
	"context"
	"errors"
	"fmt"

	"quarry/internal/auth"
	"quarry/internal/git"
	"quarry/internal/git/gitrepo"
	"quarry/internal/model"
)

// Refresher records what a repository holds after a write (the projects
// service). The first commit of an empty repository is recorded before
// the write answers; later ones follow the refs-changed event.
type Refresher interface {
	RepositoryChanged(ctx context.Context, id int64) error
}

// RefsEvents learns of every ref a write moves (the events bus).
type RefsEvents interface {
	RefsChanged(ctx context.Context, e model.RefsChanged) error
}

// refsChanged emits the refs-changed event of a write that moved refs. The
// write has happened and stands: a failure to emit is logged, not
// returned (the caller must not retry a write that succeeded).
func (s *Service) refsChanged(ctx context.Context, a auth.Actor, p model.Project, updates ...model.RefUpdate) {
	if len(updates) == 0 {
		return
	}
	e := model.RefsChanged{ProjectID: p.ID, ActorID: a.UserID(), Updates: updates, Source: model.RefsSourceAPI, At: s.now()}
	if err := s.events.RefsChanged(context.WithoutCancel(ctx), e); err != nil {
		s.log.Error("refs changed: emit", "project_id", p.ID, "err", err)
	}
}

// update is a RefUpdate from object ids ("" for a missing side).
func update(ref string, old, next git.ObjectID) model.RefUpdate {
	u := model.RefUpdate{Ref: ref, Old: string(old), New: string(next)}
	if u.Old == "" {
		u.Old = model.ZeroRef
	}
	if u.New == "" {
		u.New = model.ZeroRef
	}
	return u
}

// CommitInput is a commit of one or more file actions.
type CommitInput struct {
	Branch      string
	StartBranch string
	Message     string
	AuthorName  string
	AuthorEmail string
	Actions     []Action
	// LastCommitIDs, by path, are the last commits the caller saw: a path
	// changed since is refused.
	LastCommitIDs map[string]string
}

// maxReapply bounds how often a commit is rebuilt on a branch that other
// writers keep moving.
const maxReapply = 25

// CommitActions writes the actions as one commit on the branch. A branch moved by
// another writer meanwhile is fine when that writer touched other paths:
// the commit is rebuilt on the new tip. Only a change to the same paths is
// refused.
func (s *Service) CommitActions(ctx context.Context, a auth.Actor, projectRef string, in CommitInput) (git.ObjectID, error) {
	_, _, id, err := s.commitActions(ctx, a, projectRef, in)
	return id, err
}

// commitActions is CommitActions, answering also the project and its
// repository for the caller's next step.
func (s *Service) commitActions(ctx context.Context, a auth.Actor, projectRef string, in CommitInput) (model.Project, *gitrepo.Repo, git.ObjectID, error) {
	if !a.SignedIn() {
		return model.Project{}, nil, "", model.Unauthorized("")
	}
	var size int64
	for _, act := range in.Actions {
		size += int64(len(act.Content))
	}
	if s.maxFile > 0 && size > s.maxFile {
		return model.Project{}, nil, "", model.TooLarge()
	}
	for i := range in.Actions {
		var err error
		if in.Actions[i].Path, err = CleanPath(in.Actions[i].Path); err != nil {
			return model.Project{}, nil, "", err
		}
		if in.Actions[i].Kind == "move" {
			if in.Actions[i].PreviousPath, err = CleanPath(in.Actions[i].PreviousPath); err != nil {
				return model.Project{}, nil, "", err
			}
		}
	}
	p, acc, err := s.projects.Resolve(ctx, a, projectRef)
	if err != nil {
		return model.Project{}, nil, "", err
	}
	if !auth.Can(a, auth.ReadCode, auth.Resource{Project: &p, Access: acc}) {
		return model.Project{}, nil, "", model.Forbidden("")
	}
	ok, err := s.projects.CanPush(ctx, a, &p, acc, in.Branch)
	if err != nil {
		return model.Project{}, nil, "", err
	}
	if !ok {
		return model.Project{}, nil, "", model.Forbidden("You are not allowed to push into this branch")
	}
	if !git.ValidRefName(in.Branch) {
		return model.Project{}, nil, "", model.BadRequestRaw(fmt.Sprintf("Something went wrong when we tried to create '%s' for you: Branch name is invalid", in.Branch))
	}
	repo, end, err := s.leased(ctx, &p)
	if err != nil {
		return model.Project{}, nil, "", err
	}
	defer end()
	// Writers of one branch in this process take turns; the
	// compare-and-swap below still guards against pushes and other
	// processes.
	unlock, err := repo.LockBranch(ctx, in.Branch)
	if err != nil {
		return model.Project{}, nil, "", err
	}
	defer unlock()
	start := in.StartBranch
	if start == "" {
		start = in.Branch
	}
	base, err := repo.BranchTip(ctx, start)
	if err != nil {
		return model.Project{}, nil, "", err
	}
	wasEmpty := false
	if base == "" {
		if wasEmpty, err = repo.Empty(ctx); err != nil {
			return model.Project{}, nil, "", err
		}
	}
	if base == "" && !wasEmpty {
		return model.Project{}, nil, "", model.BadRequestRaw("You can only create or edit files when you are on a branch")
	}
	newBranch := start != in.Branch
	if newBranch {
		if tip, err := repo.BranchTip(ctx, in.Branch); err != nil {
			return model.Project{}, nil, "", err
		} else if tip != "" {
			return model.Project{}, nil, "", model.BadRequestRaw(fmt.Sprintf("A branch called '%s' already exists. Switch to that branch in order to make changes", in.Branch))
		}
	}
	if err := s.checkLastCommits(ctx, repo, base, in); err != nil {
		return model.Project{}, nil, "", err
	}
	now := s.now()
	committer := gitrepo.Signature{Name: a.User.Name, Email: a.User.Email, When: now}
	author := committer
	if in.AuthorName != "" {
		author.Name = in.AuthorName
	}
	if in.AuthorEmail != "" {
		author.Email = in.AuthorEmail
	}
	touched := map[string]bool{}
	for _, act := range in.Actions {
		touched[act.Path] = true
		if act.PreviousPath != "" {
			touched[act.PreviousPath] = true
		}
	}
	ref := "refs/heads/" + in.Branch
	for attempt := 0; ; attempt++ {
		id, err := repo.BuildCommit(ctx, base, in.Actions, author, committer, in.Message)
		var ae *gitrepo.ActionError
		switch {
		case errors.As(err, &ae):
			return model.Project{}, nil, "", model.BadRequestRaw(ae.Message)
		case errors.Is(err, gitrepo.ErrNoChanges):
			return model.Project{}, nil, "", model.BadRequestRaw("You are attempting to commit no changes: the content is identical to the current content")
		case err != nil:
			return model.Project{}, nil, "", err
		}
		old := base
		if newBranch {
			old = ""
		}
		err = repo.UpdateRef(ctx, ref, id, old)
		if err == nil {
			s.refsChanged(ctx, a, p, update(ref, old, id))
			if wasEmpty {
				err = s.refresher.RepositoryChanged(ctx, p.ID)
			}
			return p, repo, id, err
		}
		if !errors.Is(err, gitrepo.ErrRefMoved) {
			return model.Project{}, nil, "", err
		}
		moved := fmt.Sprintf("Could not update branch '%s': it was changed by another push while this commit was being made", in.Branch)
		if newBranch || attempt >= maxReapply {
			return model.Project{}, nil, "", model.BadRequestRaw(moved)
		}
		tip, err := repo.BranchTip(ctx, in.Branch)
		if err != nil {
			return model.Project{}, nil, "", err
		}
		if base == "" || tip == "" {
			return model.Project{}, nil, "", model.BadRequestRaw(moved)
		}
		changed, err := repo.ChangedPaths(ctx, base, tip)
		if err != nil {
			return model.Project{}, nil, "", err
		}
		for path := range touched {
			if changed[path] {
				return model.Project{}, nil, "", model.BadRequestRaw(moved)
			}
		}
		base = tip
	}
}

// checkLastCommits refuses actions on paths that changed since the commit
// the caller last saw.
func (s *Service) checkLastCommits(ctx context.Context, repo *gitrepo.Repo, base git.ObjectID, in CommitInput) error {
	if base == "" {
		return nil
	}
	for _, act := range in.Actions {
		want, ok := in.LastCommitIDs[act.Path]
		if act.Kind == "move" && !ok {
			want, ok = in.LastCommitIDs[act.PreviousPath]
		}
		if !ok || want == "" {
			continue
		}
		path := act.Path
		if act.Kind == "move" {
			path = act.PreviousPath
		}
		last, err := repo.LastCommit(ctx, base, path)
		if err != nil && !errors.Is(err, gitrepo.ErrPathNotFound) {
			return err
		}
		if string(last) != want {
			if act.Kind == "delete" {
				return model.BadRequestRaw("You are attempting to delete a file that has been previously updated.")
			}
			return model.BadRequestRaw("You are attempting to update a file that has changed since you started editing it.")
		}
	}
	return nil
}

// Action is one change of a commit (create, update, delete, move, chmod).
type Action = gitrepo.Action

// CommitFile writes one file as a commit on branch: created when
// lastCommit is empty, otherwise updated if it has not changed since
// lastCommit.
func (s *Service) CommitFile(ctx context.Context, a auth.Actor, projectRef, branch, path string, content []byte, message, lastCommit string) error {
	in := CommitInput{Branch: branch, Message: message, LastCommitIDs: map[string]string{}}
	kind := "create"
	if lastCommit != "" {
		kind = "update"
		in.LastCommitIDs[path] = lastCommit
	}
	in.Actions = []Action{{Kind: kind, Path: path, Content: content, HasContent: true}}
	_, err := s.CommitActions(ctx, a, projectRef, in)
	return err
}
