package repofiles

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"

	"quarry/internal/auth"
	"quarry/internal/git"
	"quarry/internal/git/gitrepo"
	"quarry/internal/model"
)

// Refresher records what a repository holds after a write (the projects
// service): at once for a repository that was empty, soon otherwise.
type Refresher interface {
	RepositoryChanged(ctx context.Context, id int64) error
	ScheduleRefresh(ctx context.Context, id int64) error
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
	if !a.SignedIn() {
		return "", model.Unauthorized("")
	}
	for i := range in.Actions {
		var err error
		if in.Actions[i].Path, err = CleanPath(in.Actions[i].Path); err != nil {
			return "", err
		}
		if in.Actions[i].Kind == "move" {
			if in.Actions[i].PreviousPath, err = CleanPath(in.Actions[i].PreviousPath); err != nil {
				return "", err
			}
		}
	}
	p, acc, err := s.projects.Resolve(ctx, a, projectRef)
	if err != nil {
		return "", err
	}
	if !auth.Can(a, auth.ReadCode, auth.Resource{Project: &p, Access: acc}) {
		return "", model.Forbidden("")
	}
	ok, err := s.projects.CanPush(ctx, a, &p, acc, in.Branch)
	if err != nil {
		return "", err
	}
	if !ok {
		return "", model.Forbidden("You are not allowed to push into this branch")
	}
	if !git.ValidRefName(in.Branch) {
		return "", model.BadRequestRaw(fmt.Sprintf("Something went wrong when we tried to create '%s' for you: Branch name is invalid", in.Branch))
	}
	repo, err := s.storages.Open(p.RepositoryStorage, p.DiskPath)
	if err != nil {
		return "", err
	}
	// Writers of one branch in this process take turns, so that they do
	// not keep rebuilding on each other's commits; the compare-and-swap
	// below still guards against pushes and other processes.
	unlock, err := s.branchLocks.lock(ctx, repo.Path()+"\x00"+in.Branch)
	if err != nil {
		return "", err
	}
	defer unlock()
	start := in.StartBranch
	if start == "" {
		start = in.Branch
	}
	base, err := repo.BranchTip(ctx, start)
	if err != nil {
		return "", err
	}
	wasEmpty := false
	if base == "" {
		if wasEmpty, err = repo.Empty(ctx); err != nil {
			return "", err
		}
	}
	if base == "" && !wasEmpty {
		return "", model.BadRequestRaw("You can only create or edit files when you are on a branch")
	}
	newBranch := start != in.Branch
	if newBranch {
		if tip, err := repo.BranchTip(ctx, in.Branch); err != nil {
			return "", err
		} else if tip != "" {
			return "", model.BadRequestRaw(fmt.Sprintf("A branch called '%s' already exists. Switch to that branch in order to make changes", in.Branch))
		}
	}
	if err := s.checkLastCommits(ctx, repo, base, in); err != nil {
		return "", err
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
			return "", model.BadRequestRaw(ae.Message)
		case errors.Is(err, gitrepo.ErrNoChanges):
			return "", model.BadRequestRaw("You are attempting to commit no changes: the content is identical to the current content")
		case err != nil:
			return "", err
		}
		old := base
		if newBranch {
			old = ""
		}
		err = repo.UpdateRef(ctx, ref, id, old)
		if err == nil {
			if wasEmpty {
				err = s.refresher.RepositoryChanged(ctx, p.ID)
			} else {
				err = s.refresher.ScheduleRefresh(ctx, p.ID)
			}
			return id, err
		}
		if !errors.Is(err, gitrepo.ErrRefMoved) {
			return "", err
		}
		moved := fmt.Sprintf("Could not update branch '%s': it was changed by another push while this commit was being made", in.Branch)
		if newBranch || attempt >= maxReapply {
			return "", model.BadRequestRaw(moved)
		}
		tip, err := repo.BranchTip(ctx, in.Branch)
		if err != nil {
			return "", err
		}
		if base == "" || tip == "" {
			return "", model.BadRequestRaw(moved)
		}
		changed, err := repo.ChangedPaths(ctx, base, tip)
		if err != nil {
			return "", err
		}
		for path := range touched {
			if changed[path] {
				return "", model.BadRequestRaw(moved)
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

// stripedLocks serializes work per key over a fixed set of locks; keys
// that share a stripe wait for each other, which is harmless.
type stripedLocks [64]chan struct{}

func newStripedLocks() *stripedLocks {
	var l stripedLocks
	for i := range l {
		l[i] = make(chan struct{}, 1)
	}
	return &l
}

// lock waits for key's stripe (or ctx) and returns its release.
func (l *stripedLocks) lock(ctx context.Context, key string) (func(), error) {
	h := fnv.New32a()
	h.Write([]byte(key))
	ch := l[h.Sum32()%uint32(len(l))]
	select {
	case ch <- struct{}{}:
		return func() { <-ch }, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

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
