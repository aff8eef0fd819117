// Package projects holds the rules for projects: creating them with a real
// repository, reading, listing, updating, archiving, transferring and
// deleting them, stars, forks (copied in the background) and shares.
package projects

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"quarry/internal/auth"
	"quarry/internal/gencache"
	"quarry/internal/git/gitrepo"
	"quarry/internal/model"
	"quarry/internal/store"
	"quarry/internal/tasks"
	"quarry/internal/uploads"
)

// Config are the instance settings projects follow.
type Config struct {
	DefaultBranch     string // for new repositories (default "main")
	DefaultVisibility model.Visibility
	DeletionDelay     time.Duration // how long a deleted project stays marked
}

// Service answers every project question.
type Service struct {
	db       *store.DB
	storages *gitrepo.Storages
	uploads  *uploads.Store
	events   RefsEvents
	log      *slog.Logger
	cfg      Config
	now      func() time.Time
	groups   GroupResolver
	removed  []func(projectID int64) error
	removing []func(ctx context.Context, projectID int64) error
	// jobScope says whether a CI job of project source may reach project
	// target with its token (nil: every project the job's user may read).
	jobScope func(ctx context.Context, source, target int64) (bool, error)
	settings Settings
	moves    StorageMoves
	// heads remembers project heads, and resolved the projects Resolve
	// found with the caller's access, for a second on SQLite (head.go).
	heads    *gencache.Cache[store.ProjectHead]
	resolved *gencache.Cache[resolvedProject]
}

// StorageMoves are the repository storage moves (the storage moves
// service): the storage of a new repository, the write leases that a
// move waits for, and the scheduling of a move by a project update.
type StorageMoves interface {
	PickStorage(ctx context.Context) (string, error)
	BeginWrite(ctx context.Context, kind model.ContainerKind, id int64) (storage string, end func(), err error)
	ScheduleInTx(ctx context.Context, tx *store.Tx, kind model.ContainerKind, id int64, source, destination string) (model.RepositoryStorageMove, error)
}

// SetStorageMoves gives the service the storage moves (before use):
// without them new projects go to the default storage and nothing leases
// writes.
func (s *Service) SetStorageMoves(m StorageMoves) { s.moves = m }

// BeginWrite registers a write to p's repository or wiki: refused with
// model.ErrRepositoryReadOnly while a storage move holds them, else p's
// storage is set to where they are now (whatever p was read with) and
// end must be called once the write is over. It must not be called
// inside a transaction.
func (s *Service) BeginWrite(ctx context.Context, p *model.Project) (end func(), err error) {
	if s.moves == nil {
		if p.RepositoryReadOnly {
			return nil, model.ErrRepositoryReadOnly
		}
		return func() {}, nil
	}
	storage, end, err := s.moves.BeginWrite(ctx, model.ContainerProject, p.ID)
	if err != nil {
		return nil, model.NotFoundAs(err, "Project")
	}
	p.RepositoryStorage = storage
	return end, nil
}

// Settings give the instance's application settings in effect.
type Settings interface {
	Current(ctx context.Context) (model.ApplicationSettings, error)
}

// SetSettings gives the service the instance's settings (before use).
func (s *Service) SetSettings(st Settings) { s.settings = st }

// instance are the application settings in effect (GitLab's defaults,
// with the server's flags, before SetSettings).
func (s *Service) instance(ctx context.Context) (model.ApplicationSettings, error) {
	if s.settings == nil {
		st := model.DefaultApplicationSettings()
		st.DefaultProjectVisibility = s.cfg.DefaultVisibility
		if s.cfg.DeletionDelay > 0 {
			st.DelayedProjectDeletion, st.DeletionAdjournedPeriod = true, int64(s.cfg.DeletionDelay/(24*time.Hour))
		}
		return st, nil
	}
	return s.settings.Current(ctx)
}

// SetJobTokenScope installs the check of the CI job token scope: a
// request authenticated by a job token reaches another project only if
// allowed says so.
func (s *Service) SetJobTokenScope(allowed func(ctx context.Context, source, target int64) (bool, error)) {
	s.jobScope = allowed
}

// New returns the projects service and registers its background tasks.
func New(db *store.DB, storages *gitrepo.Storages, up *uploads.Store, queue *tasks.Queue, events RefsEvents, log *slog.Logger, cfg Config) *Service {
	if cfg.DefaultBranch == "" {
		cfg.DefaultBranch = "main"
	}
	if cfg.DefaultVisibility == "" {
		cfg.DefaultVisibility = model.Private
	}
	s := &Service{db: db, storages: storages, uploads: up, events: events, log: log, cfg: cfg, now: db.Now}
	if db.Dialect == store.SQLite {
		s.heads = gencache.New[store.ProjectHead](headCacheFor, maxCachedHeads)
		s.resolved = gencache.New[resolvedProject](headCacheFor, maxResolved)
		db.OnCommit(s.heads.Invalidate)
		db.OnCommit(s.resolved.Invalidate)
	}
	tasks.Handle(queue, forkTask, s.runFork, s.forkFailed)
	tasks.Handle(queue, deleteTask, s.runDelete, nil)
	tasks.Handle(queue, refreshTask, s.runRefresh, nil)
	tasks.Handle(queue, createTask, s.runCreate, s.createFailed)
	return s
}

func (s *Service) today() string { return s.now().UTC().Format(model.DateLayout) }

// Access is the actor's effective access to a project (0: none).
func (s *Service) Access(ctx context.Context, a auth.Actor, projectID int64) (model.AccessLevel, error) {
	if !a.SignedIn() {
		return 0, nil
	}
	return s.db.ProjectAccess(ctx, a.UserID(), projectID, s.today())
}

// WithAccess reads the projects of ids with the actor's effective access
// to each (0: none; 0 for every one when anonymous), in two statements
// whatever their number. Projects gone are left out; whether the actor
// may read any of them is the caller's to decide (auth.Can).
func (s *Service) WithAccess(ctx context.Context, a auth.Actor, ids []int64) (map[int64]model.Project, map[int64]model.AccessLevel, error) {
	ps, err := s.db.ProjectsByIDs(ctx, ids)
	if err != nil || len(ps) == 0 {
		return ps, map[int64]model.AccessLevel{}, err
	}
	access := make(map[int64]model.AccessLevel, len(ps))
	if !a.SignedIn() {
		return ps, access, nil
	}
	heads, err := s.db.ProjectHeads(ctx, ids, a.UserID(), s.today())
	if err != nil {
		return nil, nil, err
	}
	for id, h := range heads {
		access[id] = h.Access
	}
	return ps, access, nil
}

// Resolve finds a project by id or full path that the actor may read, with
// the actor's access; anything else is 404 Project Not Found.
func (s *Service) Resolve(ctx context.Context, a auth.Actor, ref string) (model.Project, model.AccessLevel, error) {
	p, acc, err := s.lookup(ctx, a, ref)
	if errors.Is(err, model.ErrNotFound) || (err == nil && p.PendingDelete) {
		return p, 0, model.NotFound("Project")
	}
	if err != nil {
		return p, 0, err
	}
	if !auth.Can(a, auth.ReadProject, auth.Resource{Project: &p, Access: acc}) {
		return p, 0, model.NotFound("Project")
	}
	if a.Job != nil && a.Job.ProjectID != p.ID && s.jobScope != nil {
		ok, err := s.jobScope(ctx, a.Job.ProjectID, p.ID)
		if err != nil {
			return p, 0, err
		}
		if !ok && (p.Visibility == model.Public || (p.Visibility == model.Internal && a.User != nil && !a.User.External)) {
			// A project its user sees stays visible to the job, with
			// little else (auth.Can's outsideScope; GitLab's
			// project_policy.rb, project_allowed_for_job_token).
			a.Job.SetOutside(p.ID)
			return p, acc, nil
		}
		if !ok {
			src, _ := s.db.ProjectByID(ctx, a.Job.ProjectID)
			return p, 0, model.ForbiddenRaw("Authentication by CI/CD job token not allowed from " + src.FullPath() + " to " + p.FullPath() + ".")
		}
	}
	return p, acc, nil
}

// UsersWhoCan keeps of ids the users who exist and may do action on p
// (assignees and reviewers a write names: GitLab drops the others), in
// order, once each; ids that are not positive are dropped.
func (s *Service) UsersWhoCan(ctx context.Context, p model.Project, action auth.Action, ids []int64) ([]int64, error) {
	var out []int64
	for _, id := range ids {
		if id <= 0 || slices.Contains(out, id) {
			continue
		}
		u, err := s.db.UserByID(ctx, id)
		if errors.Is(err, model.ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, err
		}
		a := auth.Actor{User: &u}
		acc, err := s.Access(ctx, a, p.ID)
		if err != nil {
			return nil, err
		}
		if auth.Can(a, action, auth.Resource{Project: &p, Access: acc}) {
			out = append(out, id)
		}
	}
	return out, nil
}

// can is auth.Can for a resolved project.
func can(a auth.Actor, action auth.Action, p *model.Project, acc model.AccessLevel) bool {
	return auth.Can(a, action, auth.Resource{Project: p, Access: acc})
}

// Input carries project attributes; nil means "not given".
type Input struct {
	Name, Path, Description, DefaultBranch, Visibility *string
	NamespaceID                                        *int64
	InitializeWithReadme                               bool
	Topics                                             *[]string
	IssuesAccessLevel, MergeRequestsAccessLevel        *string
	RepositoryStorage                                  *string
	Settings                                           map[string]any
	ContainerExpirationPolicy                          map[string]any
	Avatar                                             *uploads.File
	RemoveAvatar                                       bool
}

// Create makes a project with an empty (or README-initialised) repository.
// owner, when not nil, is the user an administrator creates it for.
func (s *Service) Create(ctx context.Context, a auth.Actor, in Input, owner *model.User) (model.Project, error) {
	if !a.SignedIn() {
		return model.Project{}, model.Unauthorized("")
	}
	creator := a.User
	if owner != nil {
		if !a.Admin() {
			return model.Project{}, model.Forbidden("")
		}
		creator = owner
	}
	ns, err := s.targetNamespace(ctx, a, creator, in.NamespaceID)
	if err != nil {
		return model.Project{}, err
	}
	st, err := s.instance(ctx)
	if err != nil {
		return model.Project{}, err
	}
	if ns.Kind == model.NamespaceUser && ns.OwnerID == creator.ID {
		if err := s.checkPersonalLimit(ctx, creator, ns.ID); err != nil {
			return model.Project{}, err
		}
	}
	storage := "default"
	if s.moves != nil {
		if storage, err = s.moves.PickStorage(ctx); err != nil {
			return model.Project{}, err
		}
	}
	now := s.now().UTC()
	p := model.Project{NamespaceID: ns.ID, CreatorID: creator.ID, Visibility: st.DefaultProjectVisibility,
		DefaultBranch: st.NewRepositoryBranch(s.cfg.DefaultBranch), RepositoryStorage: storage, EmptyRepo: true, ImportStatus: "none",
		IssuesAccessLevel: "enabled", MergeRequestsAccessLevel: "enabled", Settings: model.DefaultProjectSettings(),
		LastActivityAt: now, CreatedAt: now, UpdatedAt: now, Namespace: ns}
	p.Settings.RunnersToken = auth.NewSecret("GR1348941", 20)
	p.Settings.SharedRunnersEnabled = st.SharedRunnersEnabled
	if ns.Kind == model.NamespaceGroup && model.VisibilityRank(ns.Visibility) < model.VisibilityRank(p.Visibility) {
		p.Visibility = ns.Visibility
	}
	// Only a path: the name is the path. Only a name: the path follows it.
	switch {
	case in.Name == nil && in.Path != nil:
		in.Name = in.Path
	case in.Path == nil && in.Name != nil:
		path := *in.Name
		if len(model.ValidateProjectPath(path)) > 0 {
			path = model.Parameterize(path)
		}
		in.Path = &path
	}
	if in.DefaultBranch != nil && *in.DefaultBranch != "" {
		p.DefaultBranch = *in.DefaultBranch
	}
	var f model.FieldErrors
	if err := s.apply(ctx, &f, a, &p, in, true); err != nil {
		return p, err
	}
	if err := f.Err(); err != nil {
		return p, err
	}
	if !s.storages.Has(p.RepositoryStorage) {
		return p, model.Invalid("repository_storage", "is not included in the list")
	}
	var task model.Task
	err = s.db.InTx(ctx, func(tx *store.Tx) error {
		if err := tx.CreateProject(ctx, &p); err != nil {
			return err
		}
		if err := tx.AddEvent(ctx, &model.Event{ProjectID: p.ID, AuthorID: a.UserID(), Action: model.EventCreated}); err != nil {
			return err
		}
		// The repository is made below, after this commits; should the
		// process die first, a worker makes it.
		var err error
		if task, err = createTask.Enqueue(ctx, tx, createPayload{ProjectID: p.ID, Readme: in.InitializeWithReadme}); err != nil {
			return err
		}
		p.DiskPath = gitrepo.HashedPath("", p.ID)
		if err := tx.UpdateProject(ctx, &p); err != nil {
			return err
		}
		if in.Topics != nil {
			if err := tx.SetProjectTopics(ctx, p.ID, *in.Topics); err != nil {
				return err
			}
		}
		if ns.Kind == model.NamespaceUser {
			// A personal project's owner is its member with the Owner role.
			return tx.AddMember(ctx, model.SourceProject, p.ID, ns.OwnerID, model.Owner, a.UserID(), now.UnixMicro())
		}
		if ns.Kind == model.NamespaceGroup {
			// The creator keeps maintaining what they made, unless the group
			// already gives them as much.
			acc, err := tx.NamespaceAccess(ctx, creator.ID, ns.ID, s.today())
			if err != nil {
				return err
			}
			if acc < model.Maintainer {
				if err := tx.AddMember(ctx, model.SourceProject, p.ID, creator.ID, model.Maintainer, a.UserID(), now.UnixMicro()); err != nil {
					return err
				}
				return tx.RefreshAuthorizations(ctx, creator.ID)
			}
		}
		return nil
	})
	if err != nil {
		return p, mapWriteErr(err)
	}
	if err := s.createRepository(ctx, &p, creator, in.InitializeWithReadme, task.ID); err != nil {
		// Leave nothing half made: no repository means no project (its
		// task then finds no project, and does nothing).
		cleanup := context.WithoutCancel(ctx)
		if derr := s.db.InTx(cleanup, func(tx *store.Tx) error { return tx.DeleteProject(cleanup, &p) }); derr != nil {
			s.log.Error("remove a project whose repository could not be made", "project_id", p.ID, "err", derr)
		} else if repo, oerr := s.storages.Open(p.RepositoryStorage, p.DiskPath); oerr == nil {
			_ = repo.Remove()
		}
		return p, err
	}
	if in.Avatar != nil {
		if err := s.saveAvatar(ctx, &p, in.Avatar); err != nil {
			return p, err
		}
	}
	return s.db.ProjectByID(ctx, p.ID)
}

// targetNamespace is where a new project goes: the given namespace if the
// actor may create projects there, else the creator's own.
func (s *Service) targetNamespace(ctx context.Context, a auth.Actor, creator *model.User, id *int64) (model.Namespace, error) {
	if id == nil {
		return s.db.NamespaceByID(ctx, creator.NamespaceID)
	}
	ns, err := s.db.NamespaceByID(ctx, *id)
	if errors.Is(err, model.ErrNotFound) {
		return ns, model.NotFound("Namespace")
	}
	if err != nil {
		return ns, err
	}
	if ns.Kind == model.NamespaceUser {
		if ns.OwnerID != creator.ID && !a.Admin() {
			return ns, model.Invalid("namespace", "is not valid")
		}
		return ns, nil
	}
	g, err := s.db.GroupByID(ctx, ns.ID)
	if err != nil {
		return ns, err
	}
	acc, err := s.db.NamespaceAccess(ctx, a.UserID(), ns.ID, s.today())
	if err != nil {
		return ns, err
	}
	if !auth.Can(a, auth.ReadGroup, auth.Resource{Group: &g, Access: acc}) {
		return ns, model.NotFound("Namespace")
	}
	if !auth.Can(a, auth.CreateProjectInGroup, auth.Resource{Group: &g, Access: acc}) {
		return ns, model.Invalid("namespace", "is not valid")
	}
	return ns, nil
}

// A project's repository is made after the transaction that stores the
// project: the row holds the project's id, which names the repository's
// path. That transaction also enqueues a create_repository task, due a few
// seconds later. The request makes the repository (built aside and renamed
// into place: whole or absent) and its README commit at once, then, in one
// transaction, marks the task done and emits the README's refs-changed
// event. A process that dies in between leaves the task to a worker, which
// makes whatever is missing and emits the event itself. Both makers are
// idempotent and race-safe (the rename, and the README's compare-and-swap
// from no branch), so a worker that claims the task while the request still
// works does no harm.

// createTask makes a new project's repository when its request could not.
var createTask = tasks.Define("create_repository", tasks.KindOptions[createPayload]{MaxAttempts: 5, Delay: createTaskDelay})

// createTaskDelay is how long a creation's task waits before a worker may
// take it: long enough for the request to have done the work (and marked it
// done) but in rare cases.
const createTaskDelay = 5 * time.Second

// createPayload names a project whose repository is to be made, with a
// README commit or not (initialize_with_readme).
type createPayload struct {
	ProjectID int64 `json:"project_id"`
	Readme    bool  `json:"readme,omitempty"`
}

// createRepository makes the project's repository and, when asked, its
// first commit with a README, records the repository's facts and, unless a
// worker took the creation's task meanwhile (it does that), marks the task
// done with the README's refs-changed event. An error means no repository
// (or no README).
func (s *Service) createRepository(ctx context.Context, p *model.Project, creator *model.User, readme bool, taskID int64) error {
	commit, err := s.makeRepository(ctx, p, creator, readme)
	if err != nil {
		return err
	}
	if commit != "" {
		if err := s.RepositoryChanged(ctx, p.ID); err != nil {
			return err
		}
	}
	err = s.db.InTx(ctx, func(tx *store.Tx) error {
		done, err := createTask.Done(ctx, tx, taskID)
		if err != nil || !done || commit == "" {
			return err
		}
		return s.events.EmitRefsChanged(ctx, tx, readmeEvent(p, creator.ID, commit, s.now()))
	})
	if err != nil {
		// The repository stands: the task, still pending, emits the event.
		s.log.Warn("project created; its task is left to emit its event", "project_id", p.ID, "err", err)
	}
	return nil
}

// runCreate makes what is missing of a project's repository (its request
// died before it could) and emits the README's event.
func (s *Service) runCreate(ctx context.Context, pl createPayload) error {
	p, err := s.db.ProjectByID(ctx, pl.ProjectID)
	if errors.Is(err, model.ErrNotFound) {
		return nil // its creation failed, or it was removed since
	}
	if err != nil {
		return err
	}
	var creator *model.User
	if u, err := s.db.UserByID(ctx, p.CreatorID); err == nil {
		creator = &u
	} else if !errors.Is(err, model.ErrNotFound) {
		return err
	}
	readme := pl.Readme && creator != nil // nobody to sign a README: none
	commit, err := s.makeRepository(ctx, &p, creator, readme)
	if err != nil || commit == "" {
		return err
	}
	if err := s.RepositoryChanged(ctx, p.ID); err != nil {
		return err
	}
	return s.events.RefsChanged(ctx, readmeEvent(&p, creator.ID, commit, s.now()))
}

// createFailed says that a project was left without its repository.
func (s *Service) createFailed(_ context.Context, pl createPayload, err error) {
	s.log.Error("project repository not made", "project_id", pl.ProjectID, "err", err)
}

// readmeEvent is the refs-changed event of a new project's README commit.
func readmeEvent(p *model.Project, actorID int64, commit string, at time.Time) model.RefsChanged {
	return model.RefsChanged{ProjectID: p.ID, ActorID: actorID, Source: model.RefsSourceAPI, At: at,
		Updates: []model.RefUpdate{{Ref: "refs/heads/" + p.DefaultBranch, Old: model.ZeroRef, New: commit}}}
}

// makeRepository makes the project's repository unless it exists and,
// with readme, its README commit on the default branch unless the
// repository has a branch already. It returns the README commit, made now
// or before (the default branch's tip), or "" without readme.
func (s *Service) makeRepository(ctx context.Context, p *model.Project, creator *model.User, readme bool) (string, error) {
	repo, err := s.storages.Open(p.RepositoryStorage, p.DiskPath)
	if err != nil {
		return "", err
	}
	if err := repo.Create(ctx, p.DefaultBranch); errors.Is(err, gitrepo.ErrRepositoryExists) {
		// Made by a racing maker, or in place (without its configuration,
		// perhaps) by an older Quarry that died: configured all the same.
		if err := repo.Configure(ctx); err != nil {
			return "", fmt.Errorf("configure repository: %w", err)
		}
	} else if err != nil {
		return "", fmt.Errorf("create repository: %w", err)
	}
	if !readme {
		return "", nil
	}
	existing := func() (string, error) {
		id, _, err := repo.ResolveCommit(ctx, "refs/heads/"+p.DefaultBranch)
		return string(id), err
	}
	if empty, err := repo.Empty(ctx); err != nil {
		return "", err
	} else if !empty {
		return existing()
	}
	sig := gitrepo.Signature{Name: creator.Name, Email: creator.Email, When: s.now()}
	content := fmt.Sprintf("# %s\n\n%s\n", p.Name, p.Description)
	id, err := repo.Commit(ctx, gitrepo.CommitRequest{Branch: p.DefaultBranch, Author: sig, Committer: sig,
		Message: "Initial commit", Files: []gitrepo.FileWrite{{Path: "README.md", Content: []byte(content)}}})
	if errors.Is(err, gitrepo.ErrRefMoved) {
		return existing() // the other maker's README
	}
	if err != nil {
		return "", fmt.Errorf("initial commit: %w", err)
	}
	return string(id), nil
}

// RefsEvents learns of every ref a write moves (the events bus), in a
// transaction of its own or in the caller's.
type RefsEvents interface {
	RefsChanged(ctx context.Context, e model.RefsChanged) error
	EmitRefsChanged(ctx context.Context, tx *store.Tx, e model.RefsChanged) error
}

// OnRefsChanged follows a change of a project's refs: what the project
// records of its repository (at once when it was empty, so a first push
// shows; soon otherwise, many changes folding into one refresh), its last
// activity, and housekeeping.
func (s *Service) OnRefsChanged(ctx context.Context, e model.RefsChanged) error {
	if err := s.FirstWrite(ctx, e.ProjectID); err != nil {
		if errors.Is(err, model.ErrNotFound) {
			return nil // removed since
		}
		return err
	}
	return s.ScheduleRefresh(ctx, e.ProjectID)
}

// FirstWrite records the repository's facts at once when the project was
// recorded empty: the first branch becomes the default one and is
// protected before anyone else writes, rather than when the refs-changed
// event is delivered.
func (s *Service) FirstWrite(ctx context.Context, id int64) error {
	p, err := s.db.ProjectByID(ctx, id)
	if err != nil || !p.EmptyRepo {
		return err
	}
	return s.RepositoryChanged(ctx, id)
}

// refreshTask recomputes a project's repository facts in the background, a
// second after it was asked for; requests for one project fold into one
// pending task.
var refreshTask = tasks.Define("refresh_repository", tasks.KindOptions[projectPayload]{MaxAttempts: 3, Delay: time.Second,
	Dedupe: func(p projectPayload) string { return strconv.FormatInt(p.ProjectID, 10) }})

// ScheduleRefresh asks for RepositoryChanged soon; requests for the same
// project fold into one pending task.
func (s *Service) ScheduleRefresh(ctx context.Context, id int64) error {
	return s.db.InTx(ctx, func(tx *store.Tx) error {
		_, err := refreshTask.Enqueue(ctx, tx, projectPayload{ProjectID: id})
		return err
	})
}

func (s *Service) runRefresh(ctx context.Context, pl projectPayload) error {
	err := s.RepositoryChanged(ctx, pl.ProjectID)
	if errors.Is(err, model.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	return s.housekeep(ctx, pl.ProjectID)
}

// housekeep removes what a crash left beside the repository; packing
// and pruning are the housekeeping service's, counted by writes.
func (s *Service) housekeep(ctx context.Context, id int64) error {
	p, err := s.db.ProjectByID(ctx, id)
	if errors.Is(err, model.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	repo, err := s.storages.Open(p.RepositoryStorage, p.DiskPath)
	if err != nil {
		return err
	}
	repo.Tidy()
	return nil
}

// setHead points the HEAD of p's repository at branch, a write (leased).
func (s *Service) setHead(ctx context.Context, p *model.Project, branch string) error {
	end, err := s.BeginWrite(ctx, p)
	if err != nil {
		return err
	}
	defer end()
	repo, err := s.storages.Open(p.RepositoryStorage, p.DiskPath)
	if err != nil {
		return err
	}
	return repo.SetHeadBranch(ctx, branch)
}

// RepositoryChanged refreshes what the project records about its
// repository (emptiness, README, default branch, size, commit count).
func (s *Service) RepositoryChanged(ctx context.Context, id int64) error {
	p, err := s.db.ProjectByID(ctx, id)
	if err != nil {
		return err
	}
	repo, err := s.storages.Open(p.RepositoryStorage, p.DiskPath)
	if err != nil {
		return err
	}
	empty, err := repo.Empty(ctx)
	if err != nil {
		return err
	}
	branch := p.DefaultBranch
	if head, err := repo.HeadBranch(ctx); err == nil && head != "" {
		branch = head
	}
	if !empty {
		// After a first push to another branch, HEAD follows what exists.
		if tip, err := repo.BranchTip(ctx, branch); err != nil {
			return err
		} else if tip == "" {
			names, err := repo.Branches(ctx)
			if err != nil {
				return err
			}
			next := names[0]
			for _, n := range names {
				if n == s.cfg.DefaultBranch || (n == "master" && next != s.cfg.DefaultBranch) {
					next = n
				}
			}
			if err := s.setHead(ctx, &p, next); err != nil {
				return err
			}
			branch = next
		}
	}
	var readme bool
	var commits int64
	langs := map[string]float64{}
	if !empty {
		if readme, err = repo.HasFile(ctx, branch, "README.md"); err != nil {
			return err
		}
		if commits, err = repo.CommitCount(ctx, branch); err != nil {
			return err
		}
		if _, ok, err := repo.ResolveCommit(ctx, branch); err != nil {
			return err
		} else if ok {
			if langs, err = repo.Languages(ctx, branch); err != nil {
				return err
			}
		}
	}
	size, err := repo.Size()
	if err != nil {
		return err
	}
	return s.db.InTx(ctx, func(tx *store.Tx) error {
		if err := tx.SetProjectLanguages(ctx, id, langs); err != nil {
			return err
		}
		if !empty {
			// The default branch exists from now on: protect it, as
			// GitLab does on the first push — once, whoever records the
			// first commit (the request, a worker, an event).
			first, err := tx.FillRepository(ctx, id)
			if err != nil {
				return err
			}
			if first {
				p.DefaultBranch = branch
				if err := s.protectDefaultBranch(ctx, tx, &p); err != nil {
					return err
				}
			}
		}
		return tx.SetRepositoryState(ctx, id, empty, readme, branch, size, commits, s.now().UTC())
	})
}

// checkPersonalLimit refuses a personal project beyond the creator's
// projects_limit, with GitLab's messages (group projects do not count).
func (s *Service) checkPersonalLimit(ctx context.Context, creator *model.User, namespaceID int64) error {
	if creator.ProjectsLimit <= 0 {
		return model.Invalid("limit_reached", "Personal project creation is not allowed. Please contact your administrator with questions")
	}
	n, err := s.db.CountNamespaceProjects(ctx, namespaceID)
	if err != nil {
		return err
	}
	if n >= creator.ProjectsLimit {
		return model.Invalid("limit_reached", fmt.Sprintf("Your project limit is %d projects! Please contact your administrator to increase it", creator.ProjectsLimit))
	}
	return nil
}

// apply copies the given attributes onto p and validates them.
func (s *Service) apply(ctx context.Context, f *model.FieldErrors, a auth.Actor, p *model.Project, in Input, creating bool) error {
	if in.Name != nil {
		p.Name = strings.TrimSpace(*in.Name)
		if p.Name == "" {
			f.Add("name", "can't be blank")
		} else if !model.ValidProjectName(p.Name) {
			f.Add("name", model.ProjectNameMessage)
		} else if utf8.RuneCountInString(p.Name) > 255 {
			f.Add("name", "is too long (maximum is 255 characters)")
		}
	}
	if in.Path != nil {
		p.Path = *in.Path
		for _, m := range model.ValidateProjectPath(p.Path) {
			f.Add("path", m)
		}
	}
	if creating && in.Name == nil && in.Path == nil {
		f.Add("name", "can't be blank")
	}
	if in.Description != nil {
		p.Description = *in.Description
		if utf8.RuneCountInString(p.Description) > 2000 {
			f.Add("description", "is too long (maximum is 2000 characters)")
		}
	}
	if in.Visibility != nil {
		p.Visibility = model.Visibility(*in.Visibility)
		st, err := s.instance(ctx)
		if err != nil {
			return err
		}
		if msg, refused := st.RestrictedFor(a.Admin(), p.Visibility); refused {
			f.Add("visibility_level", msg)
		}
	}
	if in.Topics != nil {
		topics, msg := model.CleanTopics(*in.Topics)
		if msg != "" {
			f.Add("topics", msg)
		}
		*in.Topics = topics
	}
	if in.DefaultBranch != nil && !creating {
		p.DefaultBranch = *in.DefaultBranch
	}
	if in.IssuesAccessLevel != nil {
		p.IssuesAccessLevel = *in.IssuesAccessLevel
	}
	if in.MergeRequestsAccessLevel != nil {
		p.MergeRequestsAccessLevel = *in.MergeRequestsAccessLevel
	}
	if in.RepositoryStorage != nil && a.Admin() {
		switch {
		case !s.storages.Has(*in.RepositoryStorage):
			f.Add("repository_storage", "is not included in the list")
		case creating && s.storages.Usable(*in.RepositoryStorage) != nil:
			// Logged at start with the reason; a move to it would fail.
			f.Add("repository_storage", "is not usable")
		case creating:
			p.RepositoryStorage = *in.RepositoryStorage
		}
	}
	settings := map[string]any{}
	for k, v := range in.Settings {
		settings[k] = v
	}
	if !a.Admin() {
		for _, sp := range model.ProjectSettingParams {
			if sp.AdminOnly {
				delete(settings, sp.Name)
			}
		}
	}
	if err := p.Settings.ApplySettings(settings); err != nil {
		return err
	}
	if len(in.ContainerExpirationPolicy) > 0 {
		if err := applyPolicy(&p.Settings.ContainerExpirationPolicy, in.ContainerExpirationPolicy); err != nil {
			f.Add("container_expiration_policy", err.Error())
		}
	}
	if p.Settings.BuildTimeout < 600 || p.Settings.BuildTimeout > 2592000 {
		f.Add("build_timeout", "needs to be between 10 minutes and 1 month")
	}
	if p.Settings.CIDefaultGitDepth < 0 || p.Settings.CIDefaultGitDepth > 1000 {
		f.Add("ci_default_git_depth", "must be greater than or equal to 0 and less than or equal to 1000")
	}
	if in.Avatar != nil {
		for _, m := range uploads.ValidateAvatar(in.Avatar) {
			f.Add("avatar", m)
		}
	}
	if in.RemoveAvatar {
		p.Avatar = ""
	}
	// Place: unique name and path in the namespace, visibility within it.
	if p.Path != "" && p.Name != "" {
		pathTaken, nameTaken, err := s.db.ProjectPathTaken(ctx, p.NamespaceID, p.Path, p.Name, p.ID)
		if err != nil {
			return err
		}
		if pathTaken {
			f.Add("path", "has already been taken")
		}
		if nameTaken {
			f.Add("name", "has already been taken")
		}
	}
	if p.Namespace.Kind == model.NamespaceGroup && model.VisibilityRank(p.Visibility) > model.VisibilityRank(p.Namespace.Visibility) {
		f.Add("visibility_level", fmt.Sprintf("%s is not allowed in a %s group.", p.Visibility, p.Namespace.Visibility))
	}
	return nil
}

func applyPolicy(pol *model.ContainerExpirationPolicy, in map[string]any) error {
	for k, v := range in {
		switch k {
		case "cadence":
			s, _ := v.(string)
			switch s {
			case "1d", "7d", "14d", "1month", "3month":
				pol.Cadence = s
			default:
				return fmt.Errorf("cadence is not included in the list")
			}
		case "enabled":
			b, _ := v.(bool)
			pol.Enabled = b
		case "keep_n":
			n, ok := v.(int)
			if !ok {
				return fmt.Errorf("keep_n is invalid")
			}
			pol.KeepN = &n
		case "older_than", "name_regex", "name_regex_keep", "name_regex_delete":
			s, _ := v.(string)
			switch k {
			case "older_than":
				pol.OlderThan = &s
			case "name_regex", "name_regex_delete":
				pol.NameRegex = &s
			default:
				pol.NameRegexKeep = &s
			}
		}
	}
	return nil
}

func mapWriteErr(err error) error {
	switch {
	case store.IsUnique(err, store.UniqueProjectPath):
		return model.Invalid("path", "has already been taken")
	case store.IsUnique(err, store.UniqueProjectName):
		return model.Invalid("name", "has already been taken")
	}
	return err
}

func (s *Service) saveAvatar(ctx context.Context, p *model.Project, file *uploads.File) error {
	rel, err := s.uploads.Save(fmt.Sprintf("project/avatar/%d", p.ID), file)
	if err != nil {
		return err
	}
	return s.db.InTx(ctx, func(tx *store.Tx) error {
		cur, err := tx.ProjectByID(ctx, p.ID)
		if err != nil {
			return err
		}
		cur.Avatar = rel
		return tx.UpdateProject(ctx, &cur)
	})
}

// Update changes a project (maintainers; visibility needs an owner).
func (s *Service) Update(ctx context.Context, a auth.Actor, ref string, in Input) (model.Project, error) {
	p, acc, err := s.Resolve(ctx, a, ref)
	if err != nil {
		return p, err
	}
	if !can(a, auth.UpdateProject, &p, acc) {
		return p, model.Forbidden("")
	}
	if in.Visibility != nil && model.Visibility(*in.Visibility) != p.Visibility && !can(a, auth.OwnProject, &p, acc) {
		return p, model.Forbidden("")
	}
	if in.DefaultBranch != nil && *in.DefaultBranch != p.DefaultBranch && !p.EmptyRepo {
		// HEAD is written: a write to the repository.
		end, err := s.BeginWrite(ctx, &p)
		if err != nil {
			return p, err
		}
		defer end()
		repo, err := s.storages.Open(p.RepositoryStorage, p.DiskPath)
		if err != nil {
			return p, err
		}
		if _, ok, err := repo.ResolveCommit(ctx, "refs/heads/"+*in.DefaultBranch); err != nil {
			return p, err
		} else if !ok {
			return p, model.BadRequestRaw("Could not change HEAD: branch '" + *in.DefaultBranch + "' does not exist")
		}
		if err := repo.SetHeadBranch(ctx, *in.DefaultBranch); err != nil {
			return p, err
		}
	}
	var f model.FieldErrors
	if err := s.apply(ctx, &f, a, &p, in, false); err != nil {
		return p, err
	}
	if err := f.Err(); err != nil {
		return p, err
	}
	p.UpdatedAt = s.now().UTC()
	// An administrator naming another storage moves the repository there
	// (GitLab's Projects::UpdateService schedules a storage move).
	move := in.RepositoryStorage != nil && a.Admin() && *in.RepositoryStorage != p.RepositoryStorage && s.moves != nil
	err = s.db.InTx(ctx, func(tx *store.Tx) error {
		if err := tx.UpdateProject(ctx, &p); err != nil {
			return err
		}
		if move {
			if _, err := s.moves.ScheduleInTx(ctx, tx, model.ContainerProject, p.ID, p.RepositoryStorage, *in.RepositoryStorage); err != nil {
				return err
			}
		}
		if in.Topics != nil {
			return tx.SetProjectTopics(ctx, p.ID, *in.Topics)
		}
		return nil
	})
	if err != nil {
		return p, mapWriteErr(err)
	}
	if in.Avatar != nil {
		if err := s.saveAvatar(ctx, &p, in.Avatar); err != nil {
			return p, err
		}
	}
	if in.DefaultBranch != nil && !p.EmptyRepo {
		if err := s.RepositoryChanged(ctx, p.ID); err != nil {
			return p, err
		}
	}
	return s.db.ProjectByID(ctx, p.ID)
}
