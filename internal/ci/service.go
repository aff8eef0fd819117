// Package ci is the CI engine: it turns a project's CI configuration
// into pipelines of jobs (from the API, pushes, trigger tokens and parent
// pipelines), moves jobs through GitLab's statuses, processes pipelines
// after every change, and serves jobs, pipelines, resource groups, test
// reports, CI/CD variables, trigger tokens and commit statuses.
//
// Every job status change is a compare-and-set in the store, made in a
// transaction that holds its pipeline's lock and processes the pipeline
// before it commits: a pipeline's jobs, stages and status move together
// or not at all. Work that crosses pipelines (resource group slots,
// downstream pipelines, a bridge following its child) and delays are
// durable tasks.
package ci

import (
	"context"
	"errors"
	"fmt"
	lru "github.com/hashicorp/golang-lru/v2"
	"log/slog"
	"time"

	"quarry/internal/auth"
	"quarry/internal/git/gitrepo"
	"quarry/internal/jobfiles"
	"quarry/internal/model"
	"quarry/internal/oidc"
	"quarry/internal/store"
	"quarry/internal/tasks"
)

// Projects resolves projects with the caller's access (the projects
// service).
type Projects interface {
	Resolve(ctx context.Context, a auth.Actor, ref string) (model.Project, model.AccessLevel, error)
}

// Groups resolves groups with the caller's access (the groups service).
type Groups interface {
	Resolve(ctx context.Context, a auth.Actor, ref string) (model.Group, model.AccessLevel, error)
}

// Config are the instance facts the engine needs.
type Config struct {
	ExternalURL    string // where clients reach the server, no trailing slash
	ServerVersion  string
	ServerRevision string
	// MaxConfigBytes bounds a CI configuration file and each include
	// (default 1 MiB).
	MaxConfigBytes int
	// SweepInterval is how often stuck jobs and expired artifacts are
	// looked for (0: never); RunnerSilence is how long a running job may
	// go without word from its runner (0: forever).
	SweepInterval time.Duration
	RunnerSilence time.Duration
	// MaxLogBytes bounds a job's log: a runner that sends more fails the
	// job (trace_size_exceeded). Default 100 MiB.
	MaxLogBytes int64
}

// Service is the CI engine.
type Service struct {
	db       *store.DB
	projects Projects
	groups   Groups
	storages *gitrepo.Storages
	files    *jobfiles.Store
	log      *slog.Logger
	cfg      Config
	configs  *lru.Cache[configKey, cachedConfig]
	settings SettingsSource
	oidc     *oidc.Service
	guard    EnvironmentGuard
	remote   RemoteFetcher
}

// Durable work of the engine.
type (
	jobPayload   struct{ JobID int64 }
	groupPayload struct{ GroupID int64 }
)

var (
	// delayedTask enqueues a scheduled (when: delayed) job when its time
	// comes.
	delayedTask = tasks.Define("ci_delayed_job", tasks.KindOptions[jobPayload]{MaxAttempts: 10})
	// assignTask gives a resource group's free slot to the next job.
	assignTask = tasks.Define("ci_assign_resource", tasks.KindOptions[groupPayload]{MaxAttempts: 10,
		Dedupe: func(p groupPayload) string { return fmt.Sprint(p.GroupID) }})
	// downstreamTask creates the pipeline a pending bridge triggers.
	downstreamTask = tasks.Define("ci_downstream", tasks.KindOptions[jobPayload]{MaxAttempts: 5})
	// bridgeTask moves a depend-strategy bridge once its downstream
	// pipeline completed.
	bridgeTask = tasks.Define("ci_bridge_sync", tasks.KindOptions[jobPayload]{MaxAttempts: 10})
)

// New returns the engine and registers its background work on queue.
func New(db *store.DB, projects Projects, groups Groups, storages *gitrepo.Storages, files *jobfiles.Store, queue *tasks.Queue, log *slog.Logger, cfg Config) *Service {
	if cfg.MaxConfigBytes <= 0 {
		cfg.MaxConfigBytes = 1 << 20
	}
	if cfg.MaxLogBytes <= 0 {
		cfg.MaxLogBytes = 100 << 20
	}
	s := &Service{db: db, projects: projects, groups: groups, storages: storages, files: files, log: log, cfg: cfg,
		configs: mustLRU[configKey, cachedConfig](512)}
	tasks.Handle(queue, delayedTask, s.runDelayed, nil)
	tasks.Handle(queue, assignTask, s.runAssign, nil)
	tasks.Handle(queue, downstreamTask, s.runDownstream, s.downstreamFailed)
	tasks.Handle(queue, bridgeTask, s.runBridgeSync, nil)
	tasks.Handle(queue, sweepTask, s.runSweep, nil)
	tasks.Handle(queue, deleteArtifactsTask, s.runDeleteArtifacts, nil)
	tasks.Handle(queue, autoStopTask, s.runAutoStop, nil)
	return s
}

func (s *Service) now() time.Time { return s.db.Now() }

// project resolves a project the actor may read and checks action on it;
// a project the actor cannot see is 404, an action it may not take 403.
func (s *Service) project(ctx context.Context, a auth.Actor, ref string, action auth.Action) (model.Project, model.AccessLevel, error) {
	p, acc, err := s.projects.Resolve(ctx, a, ref)
	if err != nil {
		return p, acc, err
	}
	if !auth.Can(a, action, auth.Resource{Project: &p, Access: acc}) {
		return p, acc, model.Forbidden("")
	}
	return p, acc, nil
}

// pipelineIn finds a pipeline of the project: 404 Pipeline Not Found
// otherwise.
func (s *Service) pipelineIn(ctx context.Context, tx *store.Tx, projectID, id int64) (model.Pipeline, error) {
	p, err := tx.Pipeline(ctx, id)
	if errors.Is(err, model.ErrNotFound) || (err == nil && p.ProjectID != projectID) {
		return p, model.NotFound("Pipeline")
	}
	return p, err
}

// jobIn finds a job of the project: 404 Not found otherwise (GitLab's
// generic lookup failure), and 404 Job Not Found for a bridge or an
// external status where a build is asked for.
func (s *Service) jobIn(ctx context.Context, tx *store.Tx, projectID, id int64, kinds ...string) (model.Job, error) {
	j, err := tx.Job(ctx, id)
	if errors.Is(err, model.ErrNotFound) || (err == nil && j.ProjectID != projectID) {
		return j, model.RecordNotFound()
	}
	if err != nil {
		return j, err
	}
	for _, k := range kinds {
		if j.Kind == k {
			return j, nil
		}
	}
	if len(kinds) > 0 {
		return j, model.RecordNotFound()
	}
	return j, nil
}

// repo opens a project's repository.
func (s *Service) repo(p model.Project) (*gitrepo.Repo, error) {
	return s.storages.Open(p.RepositoryStorage, p.DiskPath)
}

// effects are what a transaction that changed jobs must set going once it
// commits: enqueued as durable tasks inside that transaction.
type effects struct {
	assign     map[int64]bool // resource groups whose slot may change hands
	downstream []int64        // bridges that became pending
	delayed    []delayedJob   // jobs scheduled for later
	bridges    []int64        // bridges whose downstream pipeline completed
	// coverage: a job's coverage changed, or which jobs are latest did;
	// the pipeline's mean is computed again.
	coverage bool
	// queued: a build became pending; waiting runners are woken.
	queued bool
	// countNext: the next job move reads what the processing that
	// follows reads (status counts, created jobs) with it, in one round
	// trip on PostgreSQL instead of three.
	countNext bool
}

type delayedJob struct {
	id int64
	at time.Time
}

func (fx *effects) assignGroup(id int64) {
	if id == 0 {
		return
	}
	if fx.assign == nil {
		fx.assign = map[int64]bool{}
	}
	fx.assign[id] = true
}

// flush enqueues the effects' tasks in tx.
func (fx *effects) flush(ctx context.Context, tx *store.Tx) error {
	for id := range fx.assign {
		if _, err := assignTask.Enqueue(ctx, tx, groupPayload{GroupID: id}); err != nil {
			return err
		}
	}
	for _, id := range fx.downstream {
		if _, err := downstreamTask.Enqueue(ctx, tx, jobPayload{JobID: id}); err != nil {
			return err
		}
	}
	for _, d := range fx.delayed {
		if _, err := delayedTask.Enqueue(ctx, tx, jobPayload{JobID: d.id}, tasks.At(d.at)); err != nil {
			return err
		}
	}
	for _, id := range fx.bridges {
		if _, err := bridgeTask.Enqueue(ctx, tx, jobPayload{JobID: id}); err != nil {
			return err
		}
	}
	if fx.queued {
		if err := tx.Notify(ctx, QueueChannel, ""); err != nil {
			return err
		}
	}
	*fx = effects{}
	return nil
}

// errLostRace reports a job another writer moved while this transaction
// held its pipeline's lock (a writer that does not take it); the
// transaction is rolled back and tried again on fresh state.
var errLostRace = errors.New("ci: a job moved under the pipeline's lock")

// maxRaceRetries bounds the retries of a transaction that lost a race.
const maxRaceRetries = 8

// inPipeline runs fn in a transaction that holds pipeline id's lock, then
// processes the pipeline and enqueues what follows, all before it commits.
// fn sees the locked pipeline. A lost race retries on fresh state.
func (s *Service) inPipeline(ctx context.Context, id int64, fn func(tx *store.Tx, p *model.Pipeline, fx *effects) error) error {
	return s.inLocked(ctx, func(tx *store.Tx) (model.Pipeline, error) { return tx.LockPipeline(ctx, id) }, fn)
}

// inLocked is inPipeline with the pipeline locked (and read) by lock.
func (s *Service) inLocked(ctx context.Context, lock func(tx *store.Tx) (model.Pipeline, error),
	fn func(tx *store.Tx, p *model.Pipeline, fx *effects) error) error {
	var err error
	for range maxRaceRetries {
		err = s.db.InTx(ctx, func(tx *store.Tx) error {
			p, err := lock(tx)
			if err != nil {
				return err
			}
			fx := &effects{}
			if err := fn(tx, &p, fx); err != nil {
				return err
			}
			if err := s.process(ctx, tx, &p, fx); err != nil {
				return err
			}
			return fx.flush(ctx, tx)
		})
		if !errors.Is(err, errLostRace) {
			break
		}
	}
	return err
}

// removeFiles deletes the files of jobs whose rows are gone; a failure is
// logged (the rows, which clients see, are gone either way).
func (s *Service) removeFiles(jobs []model.Job) {
	for _, j := range jobs {
		if err := s.files.RemoveJob(j.ProjectID, j.ID); err != nil {
			s.log.Error("ci: remove job files", "job_id", j.ID, "err", err)
		}
	}
}

// mustLRU makes a cache of n entries (n > 0: New fails only for n <= 0).
func mustLRU[K comparable, V any](n int) *lru.Cache[K, V] {
	c, err := lru.New[K, V](n)
	if err != nil {
		panic(err)
	}
	return c
}
