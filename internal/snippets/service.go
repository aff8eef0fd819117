// Package snippets keeps snippets, personal and of projects. Each snippet
// is a bare Git repository of its own on a storage ("@snippets/<hash>.git"),
// made with the snippet; its files are the files of the repository's
// default branch, every change through the API is one commit by the
// caller, and the same repository is cloned and pushed over HTTP. The
// database row keeps what the repository does not: title, description,
// visibility, author, project, storage, the read-only flag of a move and
// the user agent detail.
package snippets

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"time"
	"unicode/utf8"

	"quarry/internal/auth"
	"quarry/internal/git"
	"quarry/internal/git/gitrepo"
	"quarry/internal/model"
	"quarry/internal/store"
	"quarry/internal/tasks"
)

// Projects resolves projects with the caller's access (the projects
// service).
type Projects interface {
	Resolve(ctx context.Context, a auth.Actor, ref string) (model.Project, model.AccessLevel, error)
	Access(ctx context.Context, a auth.Actor, projectID int64) (model.AccessLevel, error)
}

// Settings give the instance's application settings in effect.
type Settings interface {
	Current(ctx context.Context) (model.ApplicationSettings, error)
}

// Config are the snippets' settings.
type Config struct {
	// DefaultBranch is a new snippet's branch when the instance names
	// none ("main" when empty).
	DefaultBranch string
}

// Service answers every snippet question.
type Service struct {
	db       *store.DB
	projects Projects
	settings Settings
	storages *gitrepo.Storages
	moves    StorageMoves
	// housekeeping counts repository writes (nil: not counted).
	housekeeping Housekeeping
	log          *slog.Logger
	cfg          Config
	now          func() time.Time
}

// New returns the snippets service; its background work (removing what a
// creation cut short left) runs on queue.
func New(db *store.DB, projects Projects, storages *gitrepo.Storages, queue *tasks.Queue, log *slog.Logger, cfg Config) *Service {
	if cfg.DefaultBranch == "" {
		cfg.DefaultBranch = "main"
	}
	s := &Service{db: db, projects: projects, storages: storages, log: log, cfg: cfg, now: db.Now}
	tasks.Handle(queue, createdTask, s.runCreated, nil)
	return s
}

// SetSettings gives the service the instance's settings (before use).
func (s *Service) SetSettings(st Settings) { s.settings = st }

// instance are the application settings in effect (GitLab's defaults
// before SetSettings).
func (s *Service) instance(ctx context.Context) (model.ApplicationSettings, error) {
	if s.settings == nil {
		return model.DefaultApplicationSettings(), nil
	}
	return s.settings.Current(ctx)
}

// Where names the route a snippet is asked through: /snippets/:id
// (Project "") or /projects/:id/snippets/:snippet_id (Project the
// project's id or full path).
type Where struct{ Project string }

// View is a snippet as the API shows it: its row, author and project, and
// the files of its repository.
type View struct {
	model.Snippet
	Author  model.User
	Project *model.Project // nil for a personal snippet
	// Files are the repository's files at Branch, sorted; HasRepository
	// is false for a snippet whose repository is missing (a creation cut
	// short).
	Files         []string
	Branch        string
	HasRepository bool
}

// FullPath is the snippet's repository path as git over HTTP names it:
// "snippets/<id>" or "<project path>/snippets/<id>".
func (v View) FullPath() string {
	p := fmt.Sprintf("snippets/%d", v.ID)
	if v.Project != nil {
		p = v.Project.FullPath() + "/" + p
	}
	return p
}

// FirstFile is the snippet's first file ("" without files): the
// repository's, else what the row remembers.
func (v View) FirstFile() string {
	if len(v.Files) > 0 {
		return v.Files[0]
	}
	return v.FileName
}

// found is a snippet resolved for a caller: the row, its project (nil for
// a personal one) and the caller's access to that project.
type found struct {
	model.Snippet
	project *model.Project
	access  model.AccessLevel
}

func (f *found) resource() auth.Resource {
	return auth.Resource{Snippet: &f.Snippet, Project: f.project, Access: f.access}
}

var errSnippetNotFound = model.NotFound("Snippet")

// project resolves the project of a project route: 404 when the caller
// does not see it, 403 when its snippets are closed to the caller (GitLab
// checks both before it authenticates).
func (s *Service) project(ctx context.Context, a auth.Actor, ref string) (*model.Project, model.AccessLevel, error) {
	p, acc, err := s.projects.Resolve(ctx, a, ref)
	if err != nil {
		return nil, 0, err
	}
	if !auth.Can(a, auth.ReadProjectSnippets, auth.Resource{Project: &p, Access: acc}) {
		return nil, 0, model.Forbidden("")
	}
	return &p, acc, nil
}

// find resolves the snippet id asked through w for the caller: 404 unless
// the caller may read it (and, on a project route, it is that project's).
func (s *Service) find(ctx context.Context, a auth.Actor, w Where, id int64) (*found, error) {
	if w.Project == "" {
		return s.findIn(ctx, a, nil, 0, id)
	}
	proj, acc, err := s.project(ctx, a, w.Project)
	if err != nil {
		return nil, err
	}
	return s.findIn(ctx, a, proj, acc, id)
}

// findIn is find with the project of a project route resolved (nil on
// /snippets/:id).
func (s *Service) findIn(ctx context.Context, a auth.Actor, proj *model.Project, acc model.AccessLevel, id int64) (*found, error) {
	sn, err := s.db.SnippetByID(ctx, id)
	if errors.Is(err, model.ErrNotFound) {
		return nil, errSnippetNotFound
	}
	if err != nil {
		return nil, err
	}
	if proj != nil && sn.ProjectID != proj.ID {
		return nil, errSnippetNotFound
	}
	f := &found{Snippet: sn, project: proj, access: acc}
	if proj == nil && sn.ProjectID != 0 {
		// A project's snippet asked for as /snippets/:id: seen where its
		// project and its snippets are open to the caller.
		p, err := s.db.ProjectByID(ctx, sn.ProjectID)
		if errors.Is(err, model.ErrNotFound) || (err == nil && p.PendingDelete) {
			return nil, errSnippetNotFound
		}
		if err != nil {
			return nil, err
		}
		if f.access, err = s.projects.Access(ctx, a, p.ID); err != nil {
			return nil, err
		}
		f.project = &p
	}
	if !auth.Can(a, auth.ReadSnippet, f.resource()) {
		return nil, errSnippetNotFound
	}
	return f, nil
}

// findToChange resolves a snippet to update or delete: on /snippets/:id
// only the caller's own (GitLab looks among the caller's snippets), on a
// project route any of the project's the caller reads; then the action
// (403) and the repository's read-only flag.
func (s *Service) findToChange(ctx context.Context, a auth.Actor, w Where, id int64, action auth.Action) (*found, error) {
	var proj *model.Project
	var acc model.AccessLevel
	if w.Project != "" {
		var err error
		if proj, acc, err = s.project(ctx, a, w.Project); err != nil {
			return nil, err
		}
	}
	if !a.SignedIn() {
		return nil, model.Unauthorized("")
	}
	f, err := s.findIn(ctx, a, proj, acc, id)
	if err != nil {
		return nil, err
	}
	if proj == nil && !a.Is(f.AuthorID) {
		return nil, errSnippetNotFound
	}
	if !auth.Can(a, action, f.resource()) {
		return nil, model.Forbidden("")
	}
	if f.RepositoryReadOnly {
		return nil, model.RepositoryReadOnly()
	}
	return f, nil
}

// Get returns one snippet the caller may read.
func (s *Service) Get(ctx context.Context, a auth.Actor, w Where, id int64) (View, error) {
	f, err := s.find(ctx, a, w, id)
	if err != nil {
		return View{}, err
	}
	return s.view(ctx, f.Snippet, f.project)
}

// repo opens a snippet's repository (which may not exist).
func (s *Service) repo(sn model.Snippet) (*gitrepo.Repo, error) {
	return s.storages.Open(sn.RepositoryStorage, gitrepo.SnippetPath(sn.ID))
}

// files lists a repository's files at its default branch: the branch,
// its tip ("" without commits) and the files, sorted as git lists them.
func files(ctx context.Context, repo *gitrepo.Repo) (string, git.ObjectID, []string, error) {
	branch, err := repo.HeadBranch(ctx)
	if err != nil {
		return "", "", nil, fmt.Errorf("snippet head: %w", err)
	}
	tip, err := repo.BranchTip(ctx, branch)
	if err != nil || tip == "" {
		return branch, "", nil, err
	}
	entries, err := repo.Tree(ctx, tip, "", true)
	if err != nil {
		return "", "", nil, fmt.Errorf("list snippet files: %w", err)
	}
	var out []string
	for _, e := range entries {
		if e.Type == "blob" {
			out = append(out, e.Path)
		}
	}
	sort.Strings(out)
	return branch, tip, out, nil
}

// view completes a snippet with its author, project and files.
func (s *Service) view(ctx context.Context, sn model.Snippet, p *model.Project) (View, error) {
	author, err := s.db.UserByID(ctx, sn.AuthorID)
	if err != nil {
		return View{}, fmt.Errorf("snippet author: %w", err)
	}
	return s.viewWith(ctx, sn, author, p)
}

func (s *Service) viewWith(ctx context.Context, sn model.Snippet, author model.User, p *model.Project) (View, error) {
	v := View{Snippet: sn, Author: author, Project: p}
	repo, err := s.repo(sn)
	if err != nil {
		return v, err
	}
	if !repo.Exists() {
		return v, nil
	}
	v.HasRepository = true
	v.Branch, _, v.Files, err = files(ctx, repo)
	return v, err
}

// Scope says which snippets a list shows.
type Scope int

// The lists of snippets.
const (
	// Mine: the caller's own (GET /snippets).
	Mine Scope = iota
	// Public: every public personal snippet (GET /snippets/public).
	Public
	// All: every snippet the caller sees, every one for an administrator
	// (GET /snippets/all).
	All
	// OfProject: a project's (GET /projects/:id/snippets).
	OfProject
)

// ListInput are a list's scope and filters.
type ListInput struct {
	Scope         Scope
	Project       string // OfProject: the project's id or full path
	CreatedAfter  *time.Time
	CreatedBefore *time.Time
	// Storage lists only the snippets on that storage (administrators).
	Storage string
}

// List returns one page of snippets, newest first.
func (s *Service) List(ctx context.Context, a auth.Actor, in ListInput, page model.Page) ([]View, model.PageInfo, error) {
	f := store.SnippetFilter{Viewer: store.Viewer{UserID: a.UserID(), Admin: a.Admin(), Today: s.now().UTC().Format(model.DateLayout)},
		CreatedAfter: in.CreatedAfter, CreatedBefore: in.CreatedBefore}
	if a.User != nil {
		f.Viewer.External = a.User.External
	}
	var proj *model.Project
	switch in.Scope {
	case Mine:
		f.AuthorID = a.UserID()
	case Public:
		f.Viewer, f.PersonalOnly = store.Viewer{}, true
	case All:
		if a.Admin() {
			f.Storage = in.Storage
		}
	case OfProject:
		var err error
		if proj, _, err = s.project(ctx, a, in.Project); err != nil {
			return nil, model.PageInfo{}, err
		}
		f.ProjectID = proj.ID
	}
	if !a.SignedIn() {
		return nil, model.PageInfo{}, model.Unauthorized("")
	}
	list, info, err := s.db.ListSnippets(ctx, f, page)
	if err != nil {
		return nil, info, err
	}
	var userIDs, projectIDs []int64
	for _, sn := range list {
		userIDs = append(userIDs, sn.AuthorID)
		if sn.ProjectID != 0 {
			projectIDs = append(projectIDs, sn.ProjectID)
		}
	}
	users, err := s.db.UsersByIDs(ctx, userIDs)
	if err != nil {
		return nil, info, err
	}
	projects, err := s.db.ProjectsByIDs(ctx, projectIDs)
	if err != nil {
		return nil, info, err
	}
	out := make([]View, 0, len(list))
	for _, sn := range list {
		var p *model.Project
		if sn.ProjectID != 0 {
			pr := projects[sn.ProjectID]
			p = &pr
		}
		v, err := s.viewWith(ctx, sn, users[sn.AuthorID], p)
		if err != nil {
			return nil, info, err
		}
		out = append(out, v)
	}
	return out, info, nil
}

// UserAgent returns the user agent detail recorded when a snippet was
// made (administrators): on /snippets/:id any snippet, on a project route
// the project's.
func (s *Service) UserAgent(ctx context.Context, a auth.Actor, w Where, id int64) (model.SnippetUserAgent, error) {
	var proj *model.Project
	if w.Project != "" {
		var err error
		if proj, _, err = s.project(ctx, a, w.Project); err != nil {
			return model.SnippetUserAgent{}, err
		}
	}
	if !a.SignedIn() {
		return model.SnippetUserAgent{}, model.Unauthorized("")
	}
	if !a.Admin() {
		return model.SnippetUserAgent{}, model.Forbidden("")
	}
	sn, err := s.db.SnippetByID(ctx, id)
	if errors.Is(err, model.ErrNotFound) || (err == nil && proj != nil && sn.ProjectID != proj.ID) {
		return model.SnippetUserAgent{}, model.RecordNotFound()
	}
	if err != nil {
		return model.SnippetUserAgent{}, err
	}
	if sn.Agent == nil {
		return model.SnippetUserAgent{}, model.NotFound("UserAgentDetail")
	}
	return *sn.Agent, nil
}

// checkAttributes applies GitLab's validations of a snippet's own
// attributes (400, {"message":{"error":"…"}}).
func checkAttributes(title string, description *string) error {
	if utf8.RuneCountInString(title) > model.SnippetTitleMax {
		return model.WrappedError(model.KindBadRequest, fmt.Sprintf("Title is too long (maximum is %d characters)", model.SnippetTitleMax))
	}
	if description != nil && utf8.RuneCountInString(*description) > model.SnippetDescriptionMax {
		return model.WrappedError(model.KindBadRequest, fmt.Sprintf("Description is too long (maximum is %d characters)", model.SnippetDescriptionMax))
	}
	return nil
}

// checkPaths bounds the paths of actions as GitLab bounds a snippet's
// file name.
func checkPaths(actions []Action) error {
	for _, a := range actions {
		if utf8.RuneCountInString(a.Path) > model.SnippetFileNameMax || utf8.RuneCountInString(a.PreviousPath) > model.SnippetFileNameMax {
			return model.WrappedError(model.KindBadRequest, fmt.Sprintf("File name is too long (maximum is %d characters)", model.SnippetFileNameMax))
		}
	}
	return nil
}

// checkVisibility refuses a level the instance restricts to
// administrators (403, GitLab's words).
func checkVisibility(st model.ApplicationSettings, a auth.Actor, v model.Visibility) error {
	if _, restricted := st.RestrictedFor(a.Admin(), v); restricted {
		return model.WrappedError(model.KindForbidden, "Visibility level "+string(v)+" has been restricted by your GitLab administrator")
	}
	return nil
}

// changeError words a change that does not fit the repository as
// GitLab's services do (400, "Repository Error creating the snippet - …").
func changeError(creating bool, err error) error {
	var ce *ChangeError
	var ae *gitrepo.ActionError
	msg := ""
	switch {
	case errors.As(err, &ce):
		msg = ce.Message
	case errors.As(err, &ae):
		msg = ae.Message
	default:
		return err
	}
	what := "updating"
	if creating {
		what = "creating"
	}
	return model.WrappedError(model.KindBadRequest, "Repository Error "+what+" the snippet - "+msg)
}

// commitEmail is the address a user's commits carry.
func commitEmail(u *model.User) string {
	if u.CommitEmail != "" {
		return u.CommitEmail
	}
	return u.Email
}

// newBranch is a new snippet's branch: the instance's default_branch_name,
// else the configured default.
func (s *Service) newBranch(st model.ApplicationSettings) string {
	return st.NewRepositoryBranch(s.cfg.DefaultBranch)
}
