// Package housekeeping keeps repositories cheap to serve, as GitLab's
// Repositories::HousekeepingService and Gitaly's OptimizeRepository do:
// every write to a repository (a push, a merge, an API or wiki commit) is
// counted in the database, and every housekeeping_incremental_repack_period
// writes a housekeeping is enqueued — incremental (what the repository's
// state calls for), a full repack with bitmaps every
// housekeeping_full_repack_period writes, and a gc (full repack, prune of
// unreachable objects past the grace, commit-graph rewritten) every
// housekeeping_gc_period writes. Maintainers start one through the API.
//
// A repository is housekept by one worker at a time: enqueueing takes the
// repository's lease in the database (compare-and-set; GitLab's exclusive
// lease), the task gives it back when it ends. Tasks run on their own queue
// (--housekeeping-concurrency workers per process) and under the
// repository's write lease, so a storage move waits for them.
package housekeeping

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"quarry/internal/auth"
	"quarry/internal/git/gitrepo"
	"quarry/internal/model"
	"quarry/internal/store"
	"quarry/internal/tasks"
)

// LeaseTimeout is how long a housekeeping holds its repository's lease at
// most (GitLab's 24 hours); the task gives it back when it ends.
const LeaseTimeout = 24 * time.Hour

// Target names one repository housekeeping counts writes for.
type Target struct {
	// Kind is "project" (a project's repository), "project_wiki",
	// "group_wiki" or "snippet".
	Kind string
	ID   int64
}

// ProjectRepository, ProjectWiki, GroupWiki and Snippet are the targets.
func ProjectRepository(id int64) Target { return Target{"project", id} }
func ProjectWiki(id int64) Target       { return Target{"project_wiki", id} }
func GroupWiki(id int64) Target         { return Target{"group_wiki", id} }
func Snippet(id int64) Target           { return Target{"snippet", id} }

// Key is the target's row key in the database.
func (t Target) Key() string { return t.Kind + "/" + strconv.FormatInt(t.ID, 10) }

// parseTarget reads a Key.
func parseTarget(key string) (Target, error) {
	kind, id, ok := strings.Cut(key, "/")
	n, err := strconv.ParseInt(id, 10, 64)
	if !ok || err != nil || n <= 0 || (kind != "project" && kind != "project_wiki" && kind != "group_wiki" && kind != "snippet") {
		return Target{}, fmt.Errorf("housekeeping target %q", key)
	}
	return Target{kind, n}, nil
}

// Settings give the application settings in effect.
type Settings interface {
	Current(ctx context.Context) (model.ApplicationSettings, error)
}

// Projects resolve projects for the API and take their repositories'
// write leases (refused while a storage move holds them).
type Projects interface {
	Resolve(ctx context.Context, a auth.Actor, ref string) (model.Project, model.AccessLevel, error)
	BeginWrite(ctx context.Context, p *model.Project) (end func(), err error)
}

// Groups take group wikis' write leases.
type Groups interface {
	BeginWrite(ctx context.Context, g *model.Group) (end func(), err error)
}

// Snippets open snippet repositories under a write lease.
type Snippets interface {
	BeginHousekeeping(ctx context.Context, snippetID int64) (*gitrepo.Repo, func(), error)
}

// SetSnippets gives the service the snippets (before use): without them
// snippet writes are counted and their housekeeping does nothing.
func (s *Service) SetSnippets(sn Snippets) { s.snippets = sn }

// Config tunes the service.
type Config struct {
	// PruneGrace is how old an unreachable object must be before a gc
	// prunes it (default two weeks).
	PruneGrace time.Duration
}

// Service counts writes and runs housekeeping.
type Service struct {
	db       *store.DB
	storages *gitrepo.Storages
	settings Settings
	projects Projects
	groups   Groups
	snippets Snippets
	log      *slog.Logger
	cfg      Config
}

// New returns the service; its tasks run on queue (see Register).
func New(db *store.DB, storages *gitrepo.Storages, settings Settings, projects Projects, groups Groups, log *slog.Logger, cfg Config) *Service {
	if cfg.PruneGrace <= 0 {
		cfg.PruneGrace = 14 * 24 * time.Hour
	}
	return &Service{db: db, storages: storages, settings: settings, projects: projects, groups: groups, log: log, cfg: cfg}
}

// payload is one housekeeping of one repository.
type payload struct {
	Repository string `json:"repository"`
	Strategy   string `json:"strategy"`
}

// housekeepingTask runs one housekeeping. It is deduplicated by
// repository; the lease makes a second one rare anyway.
var housekeepingTask = tasks.Define("repository_housekeeping", tasks.KindOptions[payload]{MaxAttempts: 3,
	Dedupe: func(p payload) string { return p.Repository }})

// Register runs housekeeping tasks on queue (its workers bound how many
// run at once in this process).
func (s *Service) Register(queue *tasks.Queue) {
	tasks.Handle(queue, housekeepingTask, s.run, s.failed)
}

// strategyFor is GitLab's choice of task by the count of writes: a gc
// every gc period, a full repack every full period, an incremental one
// every incremental period, nothing in between.
func strategyFor(n int64, st model.ApplicationSettings) (gitrepo.Strategy, bool) {
	switch {
	case n <= 0:
		return 0, false
	case st.HousekeepingGcPeriod > 0 && n%st.HousekeepingGcPeriod == 0:
		return gitrepo.GC, true
	case st.HousekeepingFullRepackPeriod > 0 && n%st.HousekeepingFullRepackPeriod == 0:
		return gitrepo.Full, true
	case st.HousekeepingIncrementalRepackPeriod > 0 && n%st.HousekeepingIncrementalRepackPeriod == 0:
		return gitrepo.Incremental, true
	}
	return 0, false
}

// CountWrite counts one write to t's repository inside tx (it counts only
// if tx commits) and, when the count reaches a period and housekeeping is
// enabled, enqueues the housekeeping it calls for — unless one holds the
// repository's lease already, which then does the work.
func (s *Service) CountWrite(ctx context.Context, tx *store.Tx, t Target) error {
	n, err := tx.CountRepositoryWrite(ctx, t.Key())
	if err != nil {
		return err
	}
	st, err := s.settings.Current(ctx)
	if err != nil {
		return err
	}
	if !st.HousekeepingEnabled {
		return nil
	}
	strategy, ok := strategyFor(n, st)
	if !ok {
		return nil
	}
	if n >= st.HousekeepingGcPeriod {
		if err := tx.ResetRepositoryWrites(ctx, t.Key()); err != nil {
			return err
		}
	}
	_, err = s.enqueue(ctx, tx, t, strategy)
	return err
}

// enqueue takes t's lease and enqueues a housekeeping; false when the
// lease is taken.
func (s *Service) enqueue(ctx context.Context, tx *store.Tx, t Target, strategy gitrepo.Strategy) (bool, error) {
	ok, err := tx.TakeHousekeepingLease(ctx, t.Key(), tx.Now().Add(LeaseTimeout))
	if err != nil || !ok {
		return false, err
	}
	_, err = housekeepingTask.Enqueue(ctx, tx, payload{Repository: t.Key(), Strategy: strategy.String()})
	return err == nil, err
}

// OnRefsChanged counts a change of a project's refs (a push, a merge, an
// API commit) as a write to its repository: the events bus's subscriber.
func (s *Service) OnRefsChanged(ctx context.Context, e model.RefsChanged) error {
	return s.db.InTx(ctx, func(tx *store.Tx) error { return s.CountWrite(ctx, tx, ProjectRepository(e.ProjectID)) })
}

// Tasks of the API (GitLab's task parameter).
const (
	TaskEager = "eager"
	TaskPrune = "prune"
)

// ErrLeaseTaken is GitLab's answer to a housekeeping asked for while one
// holds the repository's lease.
var ErrLeaseTaken = model.Conflict(fmt.Sprintf("Somebody already triggered housekeeping for this resource in the past %d minutes",
	int(LeaseTimeout/time.Minute)))

// Start enqueues a housekeeping of the project's repository for a
// maintainer (POST /projects/:id/housekeeping): task eager optimizes
// everything whatever the repository's state, prune does so too and
// prunes the unreachable objects past the grace; both are a gc here.
// The write counter is left as it is. Returns the task's id.
func (s *Service) Start(ctx context.Context, a auth.Actor, ref, task string) (int64, error) {
	p, acc, err := s.projects.Resolve(ctx, a, ref)
	if err != nil {
		return 0, err
	}
	if !auth.Can(a, auth.UpdateProject, auth.Resource{Project: &p, Access: acc}) {
		return 0, model.Forbidden("")
	}
	if task != TaskEager && task != TaskPrune {
		return 0, model.Param("task does not have a valid value")
	}
	var id int64
	err = s.db.InTx(ctx, func(tx *store.Tx) error {
		t := ProjectRepository(p.ID)
		ok, err := tx.TakeHousekeepingLease(ctx, t.Key(), tx.Now().Add(LeaseTimeout))
		if err != nil {
			return err
		}
		if !ok {
			return ErrLeaseTaken
		}
		tk, err := housekeepingTask.Enqueue(ctx, tx, payload{Repository: t.Key(), Strategy: gitrepo.GC.String()})
		id = tk.ID
		return err
	})
	return id, err
}

// Result is what one housekeeping did, for logs and tests.
type Result struct {
	Target            Target
	Strategy          gitrepo.Strategy
	Before, After     gitrepo.ObjectStats
	Optimized         gitrepo.Optimized
	Duration          time.Duration
	RepositoryMissing bool
}

// Run housekeeps t's repository now, with the given strategy, in the
// calling goroutine (the task's body; benchmarks call it). The caller
// holds the lease or knows nobody else housekeeps t.
func (s *Service) Run(ctx context.Context, t Target, strategy gitrepo.Strategy) (Result, error) {
	res := Result{Target: t, Strategy: strategy}
	repo, end, err := s.open(ctx, t)
	if errors.Is(err, model.ErrNotFound) {
		res.RepositoryMissing = true
		return res, nil
	}
	if err != nil {
		return res, err
	}
	defer end()
	if !repo.Exists() {
		res.RepositoryMissing = true
		return res, nil
	}
	start := time.Now()
	if res.Before, err = repo.Stats(ctx); err != nil {
		return res, err
	}
	// The grace is counted on the one clock (tests move it); git compares
	// it with the objects' file times.
	o := gitrepo.OptimizeOptions{Strategy: strategy}
	if strategy == gitrepo.GC {
		o.PruneBefore = s.db.Now().Add(-s.cfg.PruneGrace)
	}
	if res.Optimized, err = repo.Optimize(ctx, o); err != nil {
		return res, fmt.Errorf("housekeeping %s: %w", t.Key(), err)
	}
	if res.After, err = repo.Stats(ctx); err != nil {
		return res, err
	}
	res.Duration = time.Since(start)
	return res, nil
}

// open opens t's repository under its write lease.
func (s *Service) open(ctx context.Context, t Target) (*gitrepo.Repo, func(), error) {
	switch t.Kind {
	case "project", "project_wiki":
		p, err := s.db.ProjectByID(ctx, t.ID)
		if err != nil {
			return nil, nil, err
		}
		end, err := s.projects.BeginWrite(ctx, &p)
		if err != nil {
			return nil, nil, err
		}
		rel := p.DiskPath
		if t.Kind == "project_wiki" {
			rel = gitrepo.WikiPath(rel)
		}
		repo, err := s.storages.Open(p.RepositoryStorage, rel)
		if err != nil {
			end()
			return nil, nil, err
		}
		return repo, end, nil
	case "snippet":
		if s.snippets == nil {
			return nil, nil, model.ErrNotFound
		}
		return s.snippets.BeginHousekeeping(ctx, t.ID)
	default:
		g, err := s.db.GroupByID(ctx, t.ID)
		if err != nil {
			return nil, nil, err
		}
		end, err := s.groups.BeginWrite(ctx, &g)
		if err != nil {
			return nil, nil, err
		}
		repo, err := s.storages.Open(g.RepositoryStorage, gitrepo.GroupWikiPath(g.ID))
		if err != nil {
			end()
			return nil, nil, err
		}
		return repo, end, nil
	}
}

func (s *Service) run(ctx context.Context, pl payload) error {
	t, err := parseTarget(pl.Repository)
	if err != nil {
		return tasks.Permanent{Err: err}
	}
	strategy, ok := gitrepo.ParseStrategy(pl.Strategy)
	if !ok {
		return tasks.Permanent{Err: fmt.Errorf("housekeeping strategy %q", pl.Strategy)}
	}
	res, err := s.Run(ctx, t, strategy)
	if err != nil {
		return err // the lease stays with the retry; failed gives it back
	}
	if res.RepositoryMissing {
		return s.db.InTx(ctx, func(tx *store.Tx) error { return tx.ForgetRepositoryHousekeeping(ctx, t.Key()) })
	}
	s.log.Info("repository housekept", "repository", t.Key(), "strategy", strategy.String(), "repack", res.Optimized.Repack,
		"pruned", res.Optimized.Pruned, "loose_before", res.Before.Loose, "loose_after", res.After.Loose,
		"packs_before", res.Before.Packs, "packs_after", res.After.Packs, "duration_ms", res.Duration.Milliseconds())
	return s.db.InTx(ctx, func(tx *store.Tx) error { return tx.EndHousekeeping(ctx, t.Key(), true) })
}

// failed gives the lease back after the last attempt failed.
func (s *Service) failed(ctx context.Context, pl payload, err error) {
	s.log.Warn("repository housekeeping failed", "repository", pl.Repository, "err", err)
	if e := s.db.InTx(ctx, func(tx *store.Tx) error { return tx.EndHousekeeping(ctx, pl.Repository, false) }); e != nil {
		s.log.Warn("housekeeping lease not given back", "repository", pl.Repository, "err", e)
	}
}

// CountWikiWrite counts a write to the wiki of a project (projectID) or
// of a group (groupID) inside tx; see CountWrite.
func (s *Service) CountWikiWrite(ctx context.Context, tx *store.Tx, projectID, groupID int64) error {
	if projectID != 0 {
		return s.CountWrite(ctx, tx, ProjectWiki(projectID))
	}
	return s.CountWrite(ctx, tx, GroupWiki(groupID))
}

// CountSnippetWrite counts a write to a snippet's repository (an API
// update of its files, a push) in a transaction of its own; see
// CountWrite.
func (s *Service) CountSnippetWrite(ctx context.Context, snippetID int64) error {
	return s.db.InTx(ctx, func(tx *store.Tx) error { return s.CountWrite(ctx, tx, Snippet(snippetID)) })
}
