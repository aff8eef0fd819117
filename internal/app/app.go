// Package app is Quarry's composition root: it opens the database, applies
// migrations, builds the services and the HTTP server, creates the
// administrator on first start and shuts everything down in order.
package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"quarry/internal/activity"
	"quarry/internal/agents"
	"quarry/internal/alerts"
	"quarry/internal/api"
	"quarry/internal/approvals"
	"quarry/internal/attributes"
	"quarry/internal/auth"
	"quarry/internal/badges"
	"quarry/internal/boards"
	"quarry/internal/buildinfo"
	"quarry/internal/changelog"
	"quarry/internal/ci"
	"quarry/internal/config"
	"quarry/internal/errortracking"
	"quarry/internal/events"
	"quarry/internal/geo"
	"quarry/internal/git"
	"quarry/internal/git/gitrepo"
	"quarry/internal/git/packcache"
	"quarry/internal/git/smarthttp"
	"quarry/internal/gitaccess"
	"quarry/internal/groupexport"
	"quarry/internal/groups"
	"quarry/internal/housekeeping"
	"quarry/internal/issues"
	"quarry/internal/jobfiles"
	"quarry/internal/jobtokenscope"
	"quarry/internal/keys"
	"quarry/internal/labels"
	"quarry/internal/members"
	"quarry/internal/memtrim"
	"quarry/internal/mergerequests"
	"quarry/internal/milestones"
	"quarry/internal/model"
	"quarry/internal/notes"
	"quarry/internal/oidc"
	"quarry/internal/outbound"
	"quarry/internal/projects"
	"quarry/internal/protectedenvs"
	"quarry/internal/releases"
	"quarry/internal/repofiles"
	"quarry/internal/runners"
	"quarry/internal/schedules"
	"quarry/internal/settings"
	"quarry/internal/snippets"
	"quarry/internal/sshd"
	"quarry/internal/storagemoves"
	"quarry/internal/store"
	"quarry/internal/tasks"
	"quarry/internal/tokens"
	"quarry/internal/topics"
	"quarry/internal/uploads"
	"quarry/internal/users"
	"quarry/internal/web"
	"quarry/internal/wikis"
)

// App is a running Quarry without its listener.
type App struct {
	Config     config.Config
	DB         *store.DB
	Users      *users.Service
	Tokens     *tokens.Service
	Projects   *projects.Service
	Groups     *groups.Service
	Topics     *topics.Service
	CI         *ci.Service
	Runners    *runners.Service
	MRs        *mergerequests.Service
	Approval   *approvals.Service
	Wikis      *wikis.Service
	Snippets   *snippets.Service
	Milestones *milestones.Service
	// Issues are projects' issues.
	Issues *issues.Service
	// Notes are issues' notes (comments) and award emoji.
	Notes *notes.Service
	// Keys are users' SSH keys and deploy keys.
	Keys *keys.Service
	// Activity is the contributions feed (events).
	Activity *activity.Service
	// SSH serves git over SSH (nil when --ssh-listen is empty); Serve
	// listens for it, tests may give it a listener of their own.
	SSH *sshd.Server
	// Boards are issue boards (a group export lists and recreates them).
	Boards   *boards.Service
	Settings *settings.Service
	Queue    *tasks.Queue
	// MoveQueue runs repository storage moves, at most
	// StorageMoveConcurrency at once; Moves schedules them.
	MoveQueue *tasks.Queue
	Moves     *storagemoves.Service
	// HousekeepingQueue runs repository housekeeping, at most
	// HousekeepingConcurrency at once.
	HousekeepingQueue *tasks.Queue
	Housekeeping      *housekeeping.Service
	// GroupTransfers are group exports and imports.
	GroupTransfers *groupexport.Service
	Events         *events.Bus
	storages       *gitrepo.Storages
	Handler        http.Handler
	log            *slog.Logger
	stop           context.CancelFunc
	// stopRunners ends the runner queue's listener and answers parked job
	// requests; runnersDone is closed once it has stopped.
	stopRunners context.CancelFunc
	runnersDone <-chan struct{}
	// settingsDone is closed once the settings cache stops listening.
	settingsDone <-chan struct{}
	// Agents are agents for Kubernetes; JobTokenScope, CI job token scopes.
	Agents        *agents.Service
	JobTokenScope *jobtokenscope.Service
	// Geo is geo nodes; stopGeo ends a secondary's status pushes, geoDone
	// is closed once they stopped.
	Geo     *geo.Service
	stopGeo context.CancelFunc
	geoDone chan struct{}
	// OIDC signs CI ID tokens (id_tokens:) and publishes their keys.
	OIDC *oidc.Service
	// Schedules are pipeline schedules and their scheduler.
	Schedules *schedules.Service
	// ProtectedEnvironments say who may deploy where; CI's runner checks
	// ask them before a deployment job runs.
	ProtectedEnvironments *protectedenvs.Service
	// Packs is the pack cache of clones and fetches (nil: none);
	// stopPacks ends its sweeper, packsDone is closed once it stopped.
	Packs     *packcache.Cache
	stopPacks context.CancelFunc
	packsDone chan struct{}

	// pprofAddr is where --pprof-listen serves, once Serve listens.
	pprofAddr net.Addr
}

// PprofAddr is the address serving net/http/pprof (--pprof-listen), known
// once Serve has called its ready function; nil when profiles are off.
func (a *App) PprofAddr() net.Addr { return a.pprofAddr }

// New opens the data folder and database, migrates, reads the secrets key
// file and seals what the database holds in plain text or under an older
// key, bootstraps the first administrator and builds the HTTP handler.
func New(ctx context.Context, cfg config.Config, log *slog.Logger) (*App, error) {
	if err := os.MkdirAll(cfg.DataDir, 0o750); err != nil {
		return nil, fmt.Errorf("create data dir: %w", err)
	}
	db, err := Open(ctx, cfg)
	if err != nil {
		return nil, err
	}
	if cfg.Clock != nil {
		// One clock for everything: services and background work read it
		// through the database, which stamps its writes with it.
		db.SetClock(cfg.Clock)
	}
	if err := migrate(ctx, cfg, db, log); err != nil {
		db.Close()
		return nil, err
	}
	if _, err := openSecrets(cfg, db, log); err != nil {
		db.Close()
		return nil, err
	}
	roots, err := cfg.RepositoryStorages()
	if err != nil {
		db.Close()
		return nil, err
	}
	runner, err := git.NewRunner("", filepath.Join(cfg.DataDir, "tmp", "git-home"))
	if err != nil {
		db.Close()
		return nil, err
	}
	storages, err := gitrepo.NewStoragesWith(runner, roots, gitrepo.Options{MaxProcesses: cfg.GitMaxProcesses, IdleTimeout: cfg.GitIdleTimeout})
	if err != nil {
		db.Close()
		return nil, err
	}
	for name, reason := range storages.Unusable() {
		log.Error("repository storage unusable: no new repository goes there and moves to it fail", "storage", name,
			"path", roots[name], "reason", reason)
	}
	// The process's geo role comes first: a secondary writes nothing to
	// the database, not even at start.
	files := jobfiles.New(cfg.JobFilesDir())
	geoSvc := geo.New(db, storages, files, log, geo.Config{ExternalURL: cfg.ExternalURL, NodeName: cfg.GeoNodeName,
		StorageRoots: roots, Version: buildinfo.APIVersion, Revision: buildinfo.Revision()})
	if err := geoSvc.Resolve(ctx); err != nil {
		storages.Close()
		db.Close()
		return nil, err
	}
	secondary := geoSvc.ReadOnly()
	if !secondary {
		if err := sealSecrets(ctx, db, log); err != nil {
			storages.Close()
			db.Close()
			return nil, err
		}
	}
	up := uploads.New(cfg.UploadsDir())
	if secondary {
		// Background work writes: a secondary leaves it to the primary.
		cfg.TaskWorkers, cfg.WithRunner, cfg.StuckJobsInterval = 0, 0, 0
	}
	queue := tasks.New(db, log, tasks.Options{Workers: cfg.TaskWorkers, Lease: cfg.TaskLease, Now: db.Now})
	moveWorkers := cfg.StorageMoveConcurrency
	if cfg.TaskWorkers == 0 {
		moveWorkers = 0 // an API-only process runs no background work
	}
	moveQueue := tasks.New(db, log, tasks.Options{Workers: moveWorkers, Lease: cfg.TaskLease, Now: db.Now})
	hkWorkers := cfg.HousekeepingConcurrency
	if cfg.TaskWorkers == 0 {
		hkWorkers = 0
	}
	hkQueue := tasks.New(db, log, tasks.Options{Workers: hkWorkers, Lease: cfg.TaskLease, Now: db.Now})
	bus := events.New(db, queue, log)
	set := settings.New(db, log, settings.Config{Initial: func(st *model.ApplicationSettings) { initialSettings(cfg, roots, st) },
		ReadOnly: secondary})
	a := &App{
		Config:   cfg,
		Settings: set,
		DB:       db,
		Users:    users.New(db, up, log, cfg.PasswordCost),
		Tokens:   tokens.New(db, cfg.TokenPrefix),
		Projects: projects.New(db, storages, up, queue, bus, log, projects.Config{DefaultBranch: cfg.DefaultBranch,
			DeletionDelay: cfg.DeletionDelay}),
		Groups:    groups.New(db, up, queue, log, cfg.DeletionDelay),
		Topics:    topics.New(db, up),
		Queue:     queue,
		MoveQueue: moveQueue,
		Events:    bus,
		storages:  storages,
		log:       log,
	}
	a.Geo = geoSvc
	a.Moves = storagemoves.New(db, storages, set, queue, moveQueue, log, storagemoves.Config{WriteWait: cfg.StorageMoveWriteWait,
		CleanupDelay: cfg.StorageMoveCleanupDelay})
	a.Moves.Register(storagemoves.ProjectKind(db, a.Projects))
	a.Moves.Register(storagemoves.GroupKind(db, a.Groups))
	a.Projects.SetStorageMoves(a.Moves)
	a.Groups.SetStorageMoves(a.Moves)
	if secondary {
		a.Tokens.RecordNoUse()
	}
	a.CI = ci.New(db, a.Projects, a.Groups, storages, files, queue, log, ci.Config{
		ExternalURL: strings.TrimRight(cfg.ExternalURL, "/"), ServerVersion: buildinfo.APIVersion, ServerRevision: buildinfo.Revision(),
		SweepInterval: cfg.StuckJobsInterval, RunnerSilence: cfg.RunnerSilence, MaxLogBytes: cfg.MaxJobLogBytes})
	a.CI.SetSettings(set)
	a.CI.SetRemoteFetcher(outbound.Client{})
	a.OIDC = oidc.New(db, cfg.ExternalURL)
	a.CI.SetOIDC(a.OIDC)
	a.ProtectedEnvironments = protectedenvs.New(db, a.Projects)
	a.CI.SetEnvironmentGuard(a.ProtectedEnvironments)
	a.Schedules = schedules.New(db, a.Projects, a.CI, queue, log)
	a.Projects.SetSettings(set)
	a.Groups.SetSettings(set)
	a.Users.SetSettings(set)
	a.Tokens.SetSettings(set)
	a.Runners = runners.New(db, a.CI, a.Projects, a.Groups, log, runners.Config{LongPoll: cfg.RunnerLongPoll})
	a.Runners.SetSettings(set)
	a.Agents, a.JobTokenScope = agents.New(db, a.Projects, storages, log), jobtokenscope.New(db, a.Projects, a.Groups)
	a.Projects.SetJobTokenScope(a.JobTokenScope.Allowed)
	a.MRs = mergerequests.New(db, a.Projects, a.Groups, storages, queue, bus, log)
	a.Approval = approvals.New(db, a.Projects, storages, log)
	a.Wikis = wikis.New(db, a.Projects, a.Groups, a.CI, storages, queue, log, wikis.Config{DefaultBranch: cfg.DefaultBranch})
	a.Groups.OnRemoved(a.Wikis.RemoveGroupWiki)
	a.Milestones = milestones.New(db, a.Projects, a.Groups)
	a.Issues = issues.New(db, a.Projects, a.Groups, a.Milestones)
	a.Notes = notes.New(db, a.Issues)
	a.Boards = boards.New(db, a.Projects, a.Groups)
	a.Snippets = snippets.New(db, a.Projects, storages, queue, log, snippets.Config{DefaultBranch: cfg.DefaultBranch})
	a.Snippets.SetSettings(set)
	a.Snippets.SetStorageMoves(a.Moves)
	a.Moves.Register(storagemoves.SnippetKind(db, a.Snippets))
	a.GroupTransfers = groupexport.New(db, a.Groups, storages, set, queue, log, groupexport.Config{DataDir: cfg.DataDir,
		ExportTTL: cfg.GroupExportTTL, Version: buildinfo.APIVersion, Revision: buildinfo.Revision(), DefaultBranch: cfg.DefaultBranch})
	a.Projects.OnRemoving(a.Snippets.RemoveProjectSnippets)
	a.Users.SetSnippetRemover(a.Snippets)
	a.MRs.SetApprovals(a.Approval)
	a.MRs.SetSettings(set)
	a.MRs.SetPipelines(a.CI)
	a.Projects.SetGroupResolver(a.Groups)
	a.Projects.OnRemoved(a.CI.OnProjectRemoved)
	a.Groups.SetProjectRemover(a.Projects)
	a.Users.SetRemovers(a.Projects, a.Groups)
	// What follows a change of refs, in every process (a delivery runs
	// wherever a worker takes it).
	bus.OnRefsChanged("repository", a.Projects.OnRefsChanged)
	bus.OnRefsChanged("pipelines", a.CI.OnRefsChanged)
	bus.OnRefsChanged("merge_requests", a.MRs.OnRefsChanged)
	a.Activity = activity.New(db, a.Projects, a.Users, storages)
	bus.OnRefsChanged("activity", a.Activity.OnRefsChanged)
	a.HousekeepingQueue = hkQueue
	a.Housekeeping = housekeeping.New(db, storages, set, a.Projects, a.Groups, log, housekeeping.Config{PruneGrace: cfg.HousekeepingPruneGrace})
	a.Housekeeping.Register(hkQueue)
	a.Wikis.SetHousekeeping(a.Housekeeping)
	a.Housekeeping.SetSnippets(a.Snippets)
	a.Snippets.SetHousekeeping(a.Housekeeping)
	bus.OnRefsChanged("housekeeping", a.Housekeeping.OnRefsChanged)
	if err := set.Preload(ctx); err != nil {
		storages.Close()
		db.Close()
		return nil, err
	}
	if err := set.SyncStorages(ctx, storages.Names()); err != nil {
		storages.Close()
		db.Close()
		return nil, err
	}
	if !secondary {
		if err := a.bootstrap(ctx); err != nil {
			storages.Close()
			db.Close()
			return nil, err
		}
	}
	// Background work runs until Close; tasks left over from a previous run
	// (or a crash) are picked up here.
	rctx, stopRunners := context.WithCancel(context.Background())
	a.stopRunners = stopRunners
	if a.runnersDone, err = a.Runners.Start(rctx); err != nil {
		stopRunners()
		storages.Close()
		db.Close()
		return nil, err
	}
	if a.settingsDone, err = set.Start(rctx); err != nil {
		stopRunners()
		<-a.runnersDone
		storages.Close()
		db.Close()
		return nil, err
	}
	if err := a.CI.StartSweeps(ctx); err != nil {
		a.Close()
		return nil, err
	}
	if err := a.Schedules.Start(ctx); err != nil {
		a.Close()
		return nil, err
	}
	if !secondary {
		if err := a.Users.HandleDormant(ctx, queue); err != nil {
			a.Close()
			return nil, err
		}
		if err := a.MRs.RecoverMerges(ctx); err != nil {
			a.Close()
			return nil, err
		}
		if err := a.GroupTransfers.SweepStaged(ctx); err != nil {
			a.Close()
			return nil, err
		}
	}
	if cfg.TaskWorkers > 0 {
		qctx, stop := context.WithCancel(context.Background())
		a.stop = stop
		queue.Start(qctx)
		moveQueue.Start(qctx)
		hkQueue.Start(qctx)
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	pushes := filepath.Join(cfg.DataDir, "tmp", "pushes")
	if err := os.MkdirAll(pushes, 0o750); err != nil {
		a.Close()
		return nil, err
	}
	if a.Packs, err = a.startPackCache(ctx, cfg, storages.Runner(), reg); err != nil {
		a.Close()
		return nil, err
	}
	var packs smarthttp.PackCache
	if a.Packs != nil {
		packs = a.Packs
	}
	repoFiles := repofiles.New(a.Projects, storages, bus, log, repofiles.Options{Now: db.Now, ArchivesPerMinute: cfg.ArchiveRateLimit,
		ArchiveCacheDir: filepath.Join(cfg.DataDir, "cache", "archives"), ArchiveCacheBytes: cfg.ArchiveCacheBytes, MaxFileBytes: cfg.MaxFileBytes})
	repoFiles.SetSettings(set)
	gitAccess := gitaccess.New(a.Tokens, jobTokens(a.CI.AuthenticateJobToken), a.Users, a.Projects, bus, a.Wikis)
	gitAccess.SetSettings(set)
	gitAccess.SetSnippets(a.Snippets)
	keySvc := keys.New(db, a.Users, a.Projects, set)
	a.Keys = keySvc
	gitAccess.SetDeployKeys(keySvc)
	gitHandler := &smarthttp.Handler{Runner: storages.Runner(), Log: log, TempDir: pushes, Access: gitAccess, Packs: packs}
	if cfg.SSHListen != "" {
		a.SSH, err = sshd.New(sshd.Config{HostKeyDir: filepath.Join(cfg.DataDir, "ssh")}, sshKeys{keySvc}, gitAccess, gitHandler, log)
		if err != nil {
			a.Close()
			return nil, fmt.Errorf("ssh server: %w", err)
		}
	}
	alertsSvc := alerts.New(db, a.Projects, set, up)
	a.Projects.OnRemoving(alertsSvc.RemoveProjectImages)
	// The web pages, beside the API: the API's server hands them the
	// paths outside /api/ that it does not serve.
	rels := releases.New(db, a.Projects, a.Groups, repoFiles)
	sshHost, sshPort := cfg.SSHClone()
	pages, err := web.New(web.Deps{Users: a.Users, Groups: a.Groups, Projects: a.Projects, Files: repoFiles,
		Wikis: a.Wikis, Snippets: a.Snippets, Tokens: a.Tokens, Releases: rels, ExternalURL: cfg.ExternalURL, Log: log, Now: db.Now,
		MRs: a.MRs, Approvals: a.Approval, Issues: a.Issues, Notes: a.Notes, CI: a.CI, SSHHost: sshHost, SSHPort: sshPort, CacheBytes: cfg.PageCacheBytes})
	if err != nil {
		a.Close()
		return nil, err
	}
	srv, err := api.New(api.Deps{
		Users: a.Users, Tokens: a.Tokens, Projects: a.Projects, Groups: a.Groups, Topics: a.Topics, Attributes: attributes.New(db), ProtectedEnvironments: a.ProtectedEnvironments, EntityCacheBytes: cfg.EntityCacheBytes,
		Members:    members.New(db, a.Projects, a.Groups, cfg.UserCap),
		Files:      repoFiles,
		Changelog:  changelog.New(db, a.Projects, a.Groups, repoFiles, storages, cfg.ExternalURL),
		CI:         a.CI,
		Runners:    a.Runners,
		MRs:        a.MRs,
		Approvals:  a.Approval,
		Wikis:      a.Wikis,
		Snippets:   a.Snippets,
		Badges:     badges.New(db, a.Projects, a.Groups, repoFiles, cfg.ExternalURL),
		Labels:     labels.New(db, a.Projects, a.Groups),
		Milestones: a.Milestones,
		Issues:     a.Issues,
		Notes:      a.Notes,
		Boards:     a.Boards,
		Settings:   set,
		Agents:     a.Agents, JobTokenScope: a.JobTokenScope, Geo: a.Geo, Moves: a.Moves, Housekeeping: a.Housekeeping, GroupTransfers: a.GroupTransfers,
		Alerts:        alertsSvc,
		ErrorTracking: errortracking.New(db, a.Projects, cfg.ExternalURL, errortracking.DefaultLimits),
		Releases:      rels,
		OIDC:          a.OIDC,
		Schedules:     a.Schedules,
		Keys:          keySvc,
		Activity:      a.Activity,
		Git:           gitHandler,
		Web:           pages,
		Uploads:       up, DB: db, Log: log,
		ExternalURL: cfg.ExternalURL, Version: buildinfo.APIVersion, Revision: buildinfo.Revision(),
		SSHHost: sshHost, SSHPort: sshPort,
		MaxParsed: cfg.MaxParsedBodyBytes, MaxFile: cfg.MaxFileBytes, Registry: reg, Now: db.Now,
		BodyPace: api.BodyPace{Stall: cfg.BodyStallTimeout, MinRate: cfg.BodyMinRate, Grace: cfg.BodyGrace},
	})
	if err != nil {
		a.Close()
		return nil, err
	}
	a.Handler = srv
	a.geoDone = make(chan struct{})
	if a.Geo.PushesStatus() {
		gctx, stop := context.WithCancel(context.Background())
		a.stopGeo = stop
		go func() {
			defer close(a.geoDone)
			send := newStatusSender()
			defer send.close()
			a.Geo.RunPusher(gctx, send, cfg.GeoStatusInterval)
		}()
	} else {
		close(a.geoDone)
	}
	return a, nil
}

// migrate applies the pending migrations. A process named for a geo node
// may be a secondary, which writes nothing: it migrates only when the name
// is the primary's, and otherwise refuses a database its build is ahead
// of (the primary's upgrade migrates it).
func migrate(ctx context.Context, cfg config.Config, db *store.DB, log *slog.Logger) error {
	if cfg.GeoNodeName != "" {
		pending, err := db.PendingMigrations(ctx)
		if err != nil {
			return err
		}
		if pending == 0 {
			return nil
		}
		n, err := db.GeoNodeByName(ctx, cfg.GeoNodeName)
		if err != nil || !n.Primary {
			return fmt.Errorf("the database lacks %d migrations of this version, and geo node %q is not known to be the primary: "+
				"a secondary does not migrate (upgrade the primary first)", pending, cfg.GeoNodeName)
		}
	}
	n, err := db.Migrate(ctx)
	if err != nil {
		return err
	}
	if n > 0 {
		log.Info("database migrated", "dialect", db.Dialect, "applied", n)
	}
	return nil
}

// Open connects to the configured database without migrating.
func Open(ctx context.Context, cfg config.Config) (*store.DB, error) {
	return store.Open(ctx, cfg.DatabaseURL, cfg.SQLitePath())
}

// GitRunner is the runner every git process of the repositories starts
// through (tests observe it).
func (a *App) GitRunner() *git.Runner { return a.storages.Runner() }

// StopRunnerQueue answers the runners' parked job requests now and parks
// no more (before a listener that waits for open requests closes).
func (a *App) StopRunnerQueue() { a.stopRunners() }

// Close stops the background workers and releases the database.
func (a *App) Close() error {
	if a.SSH != nil {
		a.SSH.Close()
	}
	if a.stopPacks != nil {
		a.stopPacks()
		<-a.packsDone
	}
	if a.stopGeo != nil {
		a.stopGeo()
		<-a.geoDone
	}
	a.stopRunners()
	<-a.runnersDone
	if a.settingsDone != nil {
		<-a.settingsDone
	}
	if a.stop != nil {
		a.stop()
		a.Queue.Wait()
		a.MoveQueue.Wait()
		a.HousekeepingQueue.Wait()
	}
	a.storages.Close()
	return a.DB.Close()
}

// Serve listens on the configured address until ctx is cancelled, then
// shuts down gracefully. ready, if not nil, receives the bound address.
func (a *App) Serve(ctx context.Context, ready func(addr net.Addr)) error {
	ln, err := net.Listen("tcp", a.Config.Listen)
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	if a.Config.PprofListen != "" {
		pp, err := startPprof(a.Config.PprofListen, a.log)
		if err != nil {
			ln.Close()
			return err
		}
		a.pprofAddr = pp.ln.Addr()
		defer pp.close()
	}
	if a.SSH != nil {
		// Git over SSH is a second door. An address the operator chose
		// must open, or the start fails; the default one taken (another
		// Quarry on this machine) is logged, and the API serves on.
		if sln, err := net.Listen("tcp", a.Config.SSHListen); err != nil {
			if a.Config.SSHListen != config.DefaultSSHListen {
				ln.Close()
				return fmt.Errorf("ssh listen: %w", err)
			}
			a.log.Error("ssh server not listening: its default address is taken (set --ssh-listen, or empty to turn it off)",
				"ssh_listen", a.Config.SSHListen, "err", err)
		} else {
			go func() {
				if err := a.SSH.Serve(sln); err != nil {
					a.log.Error("ssh server stopped", "err", err)
				}
			}()
			defer a.SSH.Close()
			a.log.Info("ssh listening", "ssh_listen", sln.Addr().String())
		}
	}
	a.applyMemoryLimit()
	handler := a.Handler
	if quiet := a.Config.IdleTrim; quiet > 0 {
		idle := memtrim.NewIdle(nil)
		handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			idle.Touch()
			a.Handler.ServeHTTP(w, r)
		})
		go idle.Run(ctx, quiet, min(quiet/4, 5*time.Second), a.trimIdle)
	}
	srv := &http.Server{
		Handler:           handler,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    MaxHeaderBytes,
		ErrorLog:          slog.NewLogLogger(a.log.Handler(), slog.LevelWarn),
	}
	ln = a.Limit(ln)
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	a.log.Info("quarry listening", "addr", ln.Addr().String(), "external_url", a.Config.ExternalURL,
		"database", string(a.DB.Dialect), "data_dir", a.Config.DataDir)
	// The built-in runner works until the server begins to shut down, and
	// reports its jobs while the server still listens.
	rctx, stopBuiltin := context.WithCancel(context.Background())
	defer stopBuiltin()
	builtinDone := make(chan struct{})
	if n := a.Config.WithRunner; n > 0 {
		go func() {
			defer close(builtinDone)
			if err := a.runBuiltinRunner(rctx, "http://"+ln.Addr().String(), n); err != nil {
				a.log.Error("built-in runner stopped", "err", err)
			}
		}()
	} else {
		close(builtinDone)
	}
	if ready != nil {
		ready(ln.Addr())
	}
	select {
	case err := <-errc:
		stopBuiltin()
		<-builtinDone
		return err
	case <-ctx.Done():
	}
	a.log.Info("shutting down")
	stopBuiltin()
	<-builtinDone
	a.stopRunners() // parked job requests answer now
	sctx, cancel := context.WithTimeout(context.Background(), a.Config.ShutdownTimeout)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// trimIdle gives back what an idle server holds for nothing: the pages
// of the executable requests brought back, and the heap the collector
// kept for the next burst (debug.FreeOSMemory collects, then returns
// every free page), and SQLite's idle connections with their page caches.
// The caches' contents stay.
func (a *App) trimIdle() {
	start := time.Now()
	a.DB.ReleaseIdle()
	// The collection first: scanning the goroutines' stacks reads the
	// executable's function tables, which the trim then drops.
	debug.FreeOSMemory()
	n, err := memtrim.Executable()
	if err != nil {
		a.log.Warn("idle trim: executable's pages kept", "err", err)
	}
	a.log.Debug("idle trim", "executable_mapped_bytes", n, "took", time.Since(start))
}

// MaxHeaderBytes bounds a request's line and headers together (net/http
// answers 431 past it); the request line alone is bounded tighter by the
// API (414).
const MaxHeaderBytes = 64 << 10

// Limit caps the connections ln serves at once at the configured maximum;
// one past it is answered 503 and closed.
func (a *App) Limit(ln net.Listener) net.Listener {
	return api.LimitListener(ln, a.Config.MaxConnections)
}

// applyMemoryLimit sets the process's soft memory limit: the configured
// bytes, or half the memory the machine (or its cgroup) gives, unless the
// GOMEMLIMIT environment variable already set one. Past it the collector
// runs harder and returns memory to the system, so a burst of large
// requests is given back.
func (a *App) applyMemoryLimit() {
	limit := a.Config.MemoryLimit
	if limit < 0 || os.Getenv("GOMEMLIMIT") != "" {
		return
	}
	if limit == 0 {
		limit = machineMemory() / 2
	}
	if limit > 0 {
		debug.SetMemoryLimit(limit)
		a.log.Info("memory limit", "bytes", limit)
	}
}

// machineMemory is the memory this process may use: the cgroup's limit
// when one is set, else the machine's total (0 when neither is known).
func machineMemory() int64 {
	var total int64
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if rest, ok := strings.CutPrefix(line, "MemTotal:"); ok {
				kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
				total = kb << 10
			}
		}
	}
	if b, err := os.ReadFile("/sys/fs/cgroup/memory.max"); err == nil {
		if n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64); err == nil && n > 0 && (total == 0 || n < total) {
			total = n
		}
	}
	return total
}

// jobTokens adapts the CI engine's job token check to an authenticator.
type jobTokens func(ctx context.Context, secret string) (auth.Actor, error)

func (f jobTokens) Authenticate(ctx context.Context, secret string) (auth.Actor, error) {
	return f(ctx, secret)
}

// sshKeys adapts the keys service to the SSH server.
type sshKeys struct{ k *keys.Service }

func (s sshKeys) Authenticate(ctx context.Context, fp string) (gitaccess.KeyHolder, bool, error) {
	h, err := s.k.Authenticate(ctx, fp)
	if keys.IsRefused(err) {
		return gitaccess.KeyHolder{}, true, nil
	}
	if err != nil {
		return gitaccess.KeyHolder{}, false, err
	}
	if h.Key.Deploy {
		return gitaccess.KeyHolder{DeployKeyID: h.Key.ID, KeyID: h.Key.ID}, false, nil
	}
	return gitaccess.KeyHolder{User: h.User, KeyID: h.Key.ID}, false, nil
}

func (s sshKeys) Used(ctx context.Context, keyID int64) error { return s.k.Used(ctx, keyID) }
