package snippets

import (
	"context"
	"errors"
	"fmt"
	"time"

	"quarry/internal/auth"
	"quarry/internal/git"
	"quarry/internal/git/gitrepo"
	"quarry/internal/model"
	"quarry/internal/store"
	"quarry/internal/tasks"
)

// Commit messages of API writes, GitLab's.
const (
	createMessage = "Initial commit"
	updateMessage = "Update snippet"
)

// CreateInput is a new snippet.
type CreateInput struct {
	Title       string
	Description *string
	// Visibility "" takes the instance's default_snippet_visibility.
	Visibility model.Visibility
	// Files are the snippet's files, creates (a path "" gets a made-up
	// name).
	Files []Action
	// Agent is what the request said of itself (nil: nothing).
	Agent *model.SnippetUserAgent
}

// Create makes a snippet, personal (w.Project "") or of a project, with
// its repository and a first commit of its files by the caller.
func (s *Service) Create(ctx context.Context, a auth.Actor, w Where, in CreateInput) (View, error) {
	var proj *model.Project
	res := auth.Resource{}
	if w.Project != "" {
		p, acc, err := s.project(ctx, a, w.Project)
		if err != nil {
			return View{}, err
		}
		proj, res = p, auth.Resource{Project: p, Access: acc}
	}
	if !a.SignedIn() {
		return View{}, model.Unauthorized("")
	}
	if !auth.Can(a, auth.CreateSnippet, res) {
		return View{}, model.Forbidden("")
	}
	st, err := s.instance(ctx)
	if err != nil {
		return View{}, err
	}
	if in.Visibility == "" {
		in.Visibility = st.DefaultSnippetVisibility
	}
	if in.Visibility == "" {
		in.Visibility = model.Private
	}
	if err := checkVisibility(st, a, in.Visibility); err != nil {
		return View{}, err
	}
	if err := checkAttributes(in.Title, in.Description); err != nil {
		return View{}, err
	}
	if err := checkPaths(in.Files); err != nil {
		return View{}, err
	}
	// The whole change is checked before anything is stored.
	plan, err := Apply(nil, in.Files)
	if err != nil {
		return View{}, changeError(true, err)
	}
	if err := checkSize(ctx, nil, "", plan, st.SnippetSizeLimit); err != nil {
		return View{}, err
	}
	storage, err := s.newStorage(ctx)
	if err != nil {
		return View{}, err
	}
	sn := model.Snippet{Title: in.Title, Description: in.Description, Visibility: in.Visibility, AuthorID: a.UserID(),
		FileName: plan.Files[0], RepositoryStorage: storage, Agent: in.Agent}
	if proj != nil {
		sn.ProjectID = proj.ID
	}
	var task model.Task
	err = s.db.InTx(ctx, func(tx *store.Tx) error {
		if err := tx.CreateSnippet(ctx, &sn); err != nil {
			return err
		}
		// The safety net of a creation cut short: the repository is made
		// after the row, which names it.
		task, err = createdTask.Enqueue(ctx, tx, createdPayload{SnippetID: sn.ID})
		return err
	})
	if err != nil {
		return View{}, err
	}
	// The repository is written under a lease: a move scheduled as soon
	// as the row exists waits for it.
	end, err := s.beginWrite(ctx, &sn)
	var repo *gitrepo.Repo
	if err == nil {
		defer end()
		repo, err = s.repo(sn)
	}
	if err == nil {
		err = repo.Create(ctx, s.newBranch(st))
	}
	if err == nil {
		_, err = s.commit(ctx, repo, a, createMessage, st.SnippetSizeLimit, true, func([]string) ([]Action, error) { return in.Files, nil })
	}
	if err != nil {
		// Nothing of a failed creation stays: neither a half-made
		// repository nor a row without one.
		if rerr := s.remove(context.WithoutCancel(ctx), sn); rerr != nil {
			s.log.Error("remove a snippet whose creation failed", "snippet_id", sn.ID, "err", rerr)
		}
		return View{}, err
	}
	if err := s.db.InTx(ctx, func(tx *store.Tx) error {
		_, err := createdTask.Done(ctx, tx, task.ID)
		return err
	}); err != nil {
		s.log.Warn("snippet created; its check is left to run", "snippet_id", sn.ID, "err", err)
	}
	return s.viewWith(ctx, sn, *a.User, proj)
}

// UpdateInput is a snippet's edit; nil fields keep what the snippet has.
// Files (the API's files[]) and the legacy FileName and Content change
// the repository, the others the row.
type UpdateInput struct {
	Title       *string
	Description *string
	Visibility  *model.Visibility
	FileName    *string
	Content     *string
	Files       []Action
}

// errUseFiles refuses the single-file parameters on a snippet of several
// files.
var errUseFiles = model.WrappedError(model.KindBadRequest, "To update Snippets with multiple files, you must use the `files` parameter")

// maxUpdateTries bounds the rewrites of a snippet's row that another
// writer changed meanwhile.
const maxUpdateTries = 10

// Update edits a snippet: its row, and its files in one commit by the
// caller.
func (s *Service) Update(ctx context.Context, a auth.Actor, w Where, id int64, in UpdateInput) (View, error) {
	f, err := s.findToChange(ctx, a, w, id, auth.UpdateSnippet)
	if err != nil {
		return View{}, err
	}
	st, err := s.instance(ctx)
	if err != nil {
		return View{}, err
	}
	if in.Visibility != nil && *in.Visibility != f.Visibility {
		if err := checkVisibility(st, a, *in.Visibility); err != nil {
			return View{}, err
		}
	}
	title, description := f.Title, f.Description
	if in.Title != nil {
		title = *in.Title
	}
	if in.Description != nil {
		description = in.Description
	}
	if err := checkAttributes(title, description); err != nil {
		return View{}, err
	}
	legacy := []Action{}
	if in.FileName != nil {
		legacy = append(legacy, Action{Path: *in.FileName})
	}
	if err := checkPaths(append(legacy, in.Files...)); err != nil {
		return View{}, err
	}
	fileName := ""
	if in.Files != nil || in.FileName != nil || in.Content != nil {
		end, err := s.beginWrite(ctx, &f.Snippet)
		if err != nil {
			return View{}, err
		}
		defer end()
		repo, err := s.repo(f.Snippet)
		if err != nil {
			return View{}, err
		}
		if !repo.Exists() {
			// A snippet whose creation was cut short gets its repository
			// now.
			if err := repo.Create(ctx, s.newBranch(st)); err != nil && !errors.Is(err, gitrepo.ErrRepositoryExists) {
				return View{}, fmt.Errorf("create snippet repository: %w", err)
			}
		}
		plan, err := s.commit(ctx, repo, a, updateMessage, st.SnippetSizeLimit, false, func(current []string) ([]Action, error) {
			if in.Files != nil {
				return in.Files, nil
			}
			return legacyActions(current, in.FileName, in.Content)
		})
		if err != nil {
			return View{}, err
		}
		fileName = plan.Files[0]
		s.countWrite(ctx, id)
	}
	sn := f.Snippet
	for try := 0; ; try++ {
		if in.Title != nil {
			sn.Title = *in.Title
		}
		if in.Description != nil {
			sn.Description = in.Description
		}
		if in.Visibility != nil {
			sn.Visibility = *in.Visibility
		}
		if fileName != "" {
			sn.FileName = fileName
		}
		var ok bool
		if err := s.db.InTx(ctx, func(tx *store.Tx) error {
			ok, err = tx.UpdateSnippet(ctx, &sn)
			return err
		}); err != nil {
			return View{}, err
		}
		if ok {
			break
		}
		if try+1 == maxUpdateTries {
			return View{}, model.Conflict("Someone edited the snippet at the same time; try again.")
		}
		// Another writer changed the row: apply the edit to it as it is.
		if sn, err = s.db.SnippetByID(ctx, id); err != nil {
			return View{}, model.NotFoundAs(err, "Snippet")
		}
	}
	return s.view(ctx, sn, f.project)
}

// legacyActions are the change the single-file parameters ask of a
// snippet whose files are current: new content for its file, a new name,
// or both (a snippet without files gets one).
func legacyActions(current []string, fileName, content *string) ([]Action, error) {
	if len(current) > 1 {
		return nil, errUseFiles
	}
	if len(current) == 0 {
		path := ""
		if fileName != nil {
			path = *fileName
		}
		if content == nil {
			return nil, &ChangeError{"A file with this name doesn't exist"}
		}
		return []Action{{Kind: "create", Path: path, Content: content}}, nil
	}
	cur := current[0]
	if fileName == nil || *fileName == "" || *fileName == cur {
		if content == nil {
			return nil, nil
		}
		return []Action{{Kind: "update", Path: cur, Content: content}}, nil
	}
	return []Action{{Kind: "move", PreviousPath: cur, Path: *fileName, Content: content}}, nil
}

// maxCommitTries bounds the rebuilds of a commit whose branch moved while
// it was built (a push landed first).
const maxCommitTries = 10

// commit writes one change of a snippet's repository on its default
// branch: build gives the actions for the files at the branch's tip, the
// whole change is checked (the files it leaves, their size against limit)
// and committed by the caller, and the branch moves by compare-and-swap;
// a lost race builds again on the new tip. A change that changes nothing
// commits nothing. It returns the plan committed.
func (s *Service) commit(ctx context.Context, repo *gitrepo.Repo, a auth.Actor, message string, limit int64, creating bool,
	build func(current []string) ([]Action, error)) (Plan, error) {
	branch, err := repo.HeadBranch(ctx)
	if err != nil {
		return Plan{}, fmt.Errorf("snippet head: %w", err)
	}
	unlock, err := repo.LockBranch(ctx, branch)
	if err != nil {
		return Plan{}, err
	}
	defer unlock()
	for try := 0; ; try++ {
		_, tip, current, err := files(ctx, repo)
		if err != nil {
			return Plan{}, err
		}
		actions, err := build(current)
		if err != nil {
			return Plan{}, changeError(creating, err)
		}
		plan, err := Apply(current, actions)
		if err != nil {
			return Plan{}, changeError(creating, err)
		}
		if len(actions) == 0 {
			return plan, nil
		}
		if err := checkSize(ctx, repo, tip, plan, limit); err != nil {
			return Plan{}, err
		}
		sig := gitrepo.Signature{Name: a.User.Name, Email: commitEmail(a.User), When: s.now()}
		id, err := repo.BuildCommit(ctx, tip, plan.Actions, sig, sig, message)
		if errors.Is(err, gitrepo.ErrNoChanges) {
			return plan, nil
		}
		if err != nil {
			return Plan{}, changeError(creating, err)
		}
		err = repo.UpdateRef(ctx, "refs/heads/"+branch, id, tip)
		if errors.Is(err, gitrepo.ErrRefMoved) && try+1 < maxCommitTries {
			continue
		}
		if errors.Is(err, gitrepo.ErrRefMoved) {
			return Plan{}, model.Conflict("Someone edited the snippet at the same time; try again.")
		}
		return plan, err
	}
}

// checkSize refuses a change that leaves the snippet's files larger than
// limit in all (413): what the change writes, and what the files it keeps
// hold at tip.
func checkSize(ctx context.Context, repo *gitrepo.Repo, tip git.ObjectID, plan Plan, limit int64) error {
	if limit <= 0 {
		return nil
	}
	var total int64
	for _, n := range plan.Written {
		total += n
	}
	for _, from := range plan.Kept {
		info, err := repo.ObjectAt(ctx, tip, from)
		if err != nil {
			return fmt.Errorf("size of snippet file %q: %w", from, err)
		}
		total += info.Size
	}
	if total > limit {
		return model.TooLarge()
	}
	return nil
}

// Delete removes a snippet and its repository.
func (s *Service) Delete(ctx context.Context, a auth.Actor, w Where, id int64) error {
	f, err := s.findToChange(ctx, a, w, id, auth.AdminSnippet)
	if err != nil {
		return err
	}
	end, err := s.beginWrite(ctx, &f.Snippet)
	if err != nil {
		return err
	}
	defer end()
	return s.remove(ctx, f.Snippet)
}

// remove deletes a snippet's repository, then its row: a removal cut
// short leaves a row to remove again, never a repository nobody names.
func (s *Service) remove(ctx context.Context, sn model.Snippet) error {
	repo, err := s.repo(sn)
	if err != nil {
		return err
	}
	if err := repo.Remove(); err != nil {
		return fmt.Errorf("remove snippet repository: %w", err)
	}
	err = s.db.InTx(ctx, func(tx *store.Tx) error { return tx.DeleteSnippet(ctx, sn.ID) })
	if errors.Is(err, model.ErrNotFound) {
		return nil
	}
	return err
}

// RemoveProjectSnippets removes a project's snippets with their
// repositories (the project is being removed).
func (s *Service) RemoveProjectSnippets(ctx context.Context, projectID int64) error {
	return s.removeAll(ctx, projectID, 0)
}

// RemoveUserSnippets removes every snippet a user wrote, personal and in
// projects, with their repositories (the user is being removed, as
// GitLab's Users::DestroyService removes them).
func (s *Service) RemoveUserSnippets(ctx context.Context, userID int64) error {
	return s.removeAll(ctx, 0, userID)
}

func (s *Service) removeAll(ctx context.Context, projectID, authorID int64) error {
	list, err := s.db.SnippetsOf(ctx, projectID, authorID)
	if err != nil {
		return err
	}
	for _, sn := range list {
		if err := s.remove(ctx, sn); err != nil {
			return fmt.Errorf("remove snippet %d: %w", sn.ID, err)
		}
	}
	return nil
}

// createdTask removes a snippet whose creation was cut short (its
// repository has no commit) once its creating request is surely over;
// the request marks it done when it succeeds.
var createdTask = tasks.Define("snippet_created", tasks.KindOptions[createdPayload]{MaxAttempts: 5, Delay: createdCheckDelay})

// createdCheckDelay is how long after a creation its check may run:
// longer than any request lasts.
const createdCheckDelay = 15 * time.Minute

type createdPayload struct {
	SnippetID int64 `json:"snippet_id"`
}

func (s *Service) runCreated(ctx context.Context, p createdPayload) error {
	sn, err := s.db.SnippetByID(ctx, p.SnippetID)
	if errors.Is(err, model.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	repo, err := s.repo(sn)
	if err != nil {
		return err
	}
	if repo.Exists() {
		if _, tip, _, err := files(ctx, repo); err != nil || tip != "" {
			return err
		}
	}
	s.log.Warn("removing a snippet whose creation was cut short", "snippet_id", sn.ID)
	return s.remove(ctx, sn)
}
