// Package storagemoves moves the repositories of containers — projects
// (repository and wiki), groups (wiki) and, once they exist, snippets —
// from one named storage to another, and keeps the write leases that let a
// move wait for the writes in flight.
//
// A move follows model.MoveState's table: scheduling makes the container
// read-only in the transaction that records the move and enqueues its
// task; the task (at most --storage-move-concurrency at once per process)
// waits until no write lease of the container is live, copies each
// repository to the destination (built aside, verified, renamed into
// place) and then, in one transaction, marks the move replicated and puts
// the container on the destination, writable again; a cleanup task,
// a grace later, removes the source copies. Every state change is a
// compare-and-set against the table; a failure makes the container
// writable on its source and records why.
package storagemoves

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sort"
	"strconv"
	"time"

	"quarry/internal/auth"
	"quarry/internal/git/gitrepo"
	"quarry/internal/model"
	"quarry/internal/store"
	"quarry/internal/tasks"
)

// Settings give the instance's application settings in effect (the
// storage weights).
type Settings interface {
	Current(ctx context.Context) (model.ApplicationSettings, error)
}

// Kind is one kind of repository container: how the API's :id finds one,
// which repositories it has, and how its records show it. The store
// knows its table (store.containerTables). A snippet kind plugs in with
// Register, its repository at gitrepo.SnippetPath(id).
type Kind struct {
	Name model.ContainerKind
	// Resolve finds the container the API names by id or path (for an
	// administrator); a missing one is the kind's 404.
	Resolve func(ctx context.Context, a auth.Actor, ref string) (int64, error)
	// Repositories are the paths of the container's repositories on its
	// storage (those that do not exist yet are skipped by the copy).
	Repositories func(ctx context.Context, id int64) ([]string, error)
	// Load loads containers by id for the move records; a container
	// missing from the answer is shown as null.
	Load func(ctx context.Context, ids []int64) (map[int64]any, error)
}

// Config tunes the moves.
type Config struct {
	// WriteWait bounds the wait for writes in flight once the container
	// is read-only (GitLab polls 3 times, 10 s apart); past it the move
	// fails with "Timeout waiting for <kind> repository pushes".
	WriteWait time.Duration
	// CleanupDelay is how long after the switch the source copies are
	// removed, so that reads that opened them finish.
	CleanupDelay time.Duration
	// LeaseTTL is how long a write lease lasts without renewal (a write
	// renews it a third of that apart); a dead process's leases expire
	// after it.
	LeaseTTL time.Duration
	// BulkWindow bounds the moves of one kind a bulk move keeps
	// scheduled or started (each holds its container read-only): it
	// schedules more as they finish.
	BulkWindow int
}

// Service schedules and runs storage moves and keeps write leases.
type Service struct {
	db       *store.DB
	storages *gitrepo.Storages
	settings Settings
	log      *slog.Logger
	cfg      Config
	kinds    map[model.ContainerKind]*Kind
	holder   string
}

// Default settings.
const (
	DefaultWriteWait    = 30 * time.Second
	DefaultCleanupDelay = time.Minute
	DefaultLeaseTTL     = 30 * time.Second
	DefaultBulkWindow   = 100
)

// New returns the service. Its moves run on moves (a queue whose workers
// bound how many run at once), the rest of its background work (bulk
// scheduling, cleanup) on queue. Register the container kinds before the
// queues start.
func New(db *store.DB, storages *gitrepo.Storages, settings Settings, queue, moves *tasks.Queue, log *slog.Logger, cfg Config) *Service {
	if cfg.WriteWait <= 0 {
		cfg.WriteWait = DefaultWriteWait
	}
	if cfg.CleanupDelay < 0 {
		cfg.CleanupDelay = 0
	}
	if cfg.LeaseTTL <= 0 {
		cfg.LeaseTTL = DefaultLeaseTTL
	}
	if cfg.BulkWindow <= 0 {
		cfg.BulkWindow = DefaultBulkWindow
	}
	host, _ := os.Hostname()
	s := &Service{db: db, storages: storages, settings: settings, log: log, cfg: cfg, kinds: map[model.ContainerKind]*Kind{},
		holder: host + "-" + strconv.Itoa(os.Getpid())}
	tasks.Handle(moves, moveTask, s.runMove, s.moveFailed)
	tasks.Handle(queue, cleanupTask, s.runCleanup, nil)
	tasks.Handle(queue, bulkTask, s.runBulk, nil)
	return s
}

// Register adds a container kind.
func (s *Service) Register(k Kind) { s.kinds[k.Name] = &k }

// Move is a move with its container (nil when it is gone).
type Move struct {
	model.RepositoryStorageMove
	Container any
}

func (s *Service) kind(kind model.ContainerKind) (*Kind, error) {
	k, ok := s.kinds[kind]
	if !ok {
		return nil, fmt.Errorf("no storage moves of kind %q", kind)
	}
	return k, nil
}

// admin refuses everyone but administrators (GitLab's
// authenticated_as_admin!: 403).
func admin(a auth.Actor) error {
	if !a.Admin() {
		return model.Forbidden("")
	}
	return nil
}

// errNotFound is the answer for a move that is not there (or not of that
// container): GitLab's bare not_found!.
func errNotFound() error { return model.RecordNotFound() }

// List returns a page of the moves of a kind, of one container when ref
// names one, newest first.
func (s *Service) List(ctx context.Context, a auth.Actor, kind model.ContainerKind, ref string, page model.Page) ([]Move, model.PageInfo, error) {
	if err := admin(a); err != nil {
		return nil, model.PageInfo{}, err
	}
	k, err := s.kind(kind)
	if err != nil {
		return nil, model.PageInfo{}, err
	}
	var id int64
	if ref != "" {
		if id, err = k.Resolve(ctx, a, ref); err != nil {
			return nil, model.PageInfo{}, err
		}
	}
	list, info, err := s.db.ListStorageMoves(ctx, kind, id, page)
	if err != nil {
		return nil, info, err
	}
	out, err := s.withContainers(ctx, k, list)
	return out, info, err
}

// Get returns one move of a kind (of the container ref names, when not
// empty).
func (s *Service) Get(ctx context.Context, a auth.Actor, kind model.ContainerKind, ref string, id int64) (Move, error) {
	if err := admin(a); err != nil {
		return Move{}, err
	}
	k, err := s.kind(kind)
	if err != nil {
		return Move{}, err
	}
	var container int64
	if ref != "" {
		if container, err = k.Resolve(ctx, a, ref); err != nil {
			return Move{}, err
		}
	}
	m, err := s.db.StorageMove(ctx, id)
	if errors.Is(err, model.ErrNotFound) || (err == nil && (m.Kind != kind || (container != 0 && m.ContainerID != container))) {
		return Move{}, errNotFound()
	}
	if err != nil {
		return Move{}, err
	}
	out, err := s.withContainers(ctx, k, []model.RepositoryStorageMove{m})
	if err != nil {
		return Move{}, err
	}
	return out[0], nil
}

func (s *Service) withContainers(ctx context.Context, k *Kind, list []model.RepositoryStorageMove) ([]Move, error) {
	ids := make([]int64, 0, len(list))
	for _, m := range list {
		ids = append(ids, m.ContainerID)
	}
	containers, err := k.Load(ctx, ids)
	if err != nil {
		return nil, err
	}
	out := make([]Move, len(list))
	for i, m := range list {
		out[i] = Move{RepositoryStorageMove: m, Container: containers[m.ContainerID]}
	}
	return out, nil
}

// Schedule moves the repositories of the container ref names to
// destination (chosen by the storage weights, other than its own, when
// empty). The container is read-only from now until the move ends.
func (s *Service) Schedule(ctx context.Context, a auth.Actor, kind model.ContainerKind, ref, destination string) (Move, error) {
	if err := admin(a); err != nil {
		return Move{}, err
	}
	k, err := s.kind(kind)
	if err != nil {
		return Move{}, err
	}
	id, err := k.Resolve(ctx, a, ref)
	if err != nil {
		return Move{}, err
	}
	var m model.RepositoryStorageMove
	err = s.db.InTx(ctx, func(tx *store.Tx) error {
		source, _, err := tx.ContainerStorage(ctx, kind, id)
		if err != nil {
			return err
		}
		m, err = s.ScheduleInTx(ctx, tx, kind, id, source, destination)
		return err
	})
	if err != nil {
		return Move{}, err
	}
	out, err := s.withContainers(ctx, k, []model.RepositoryStorageMove{m})
	if err != nil {
		return Move{}, err
	}
	return out[0], nil
}

// ScheduleInTx schedules a move of container id of kind, on storage
// source, to destination (picked by weight when empty) inside tx: the
// move is recorded (initial, then scheduled by the table), the container
// made read-only and the move's task enqueued, all or nothing.
// Validation failures are GitLab's 400s: a storage that is not configured
// ("is not included in the list"), a destination equal to the source, a
// container that is read-only already ({"<kind>":["is read-only"]}) or
// whose last move has not removed its source copies yet. Nothing is
// written when it fails so.
func (s *Service) ScheduleInTx(ctx context.Context, tx *store.Tx, kind model.ContainerKind, id int64, source, destination string) (model.RepositoryStorageMove, error) {
	m := model.RepositoryStorageMove{Kind: kind, ContainerID: id, State: model.MoveInitial, SourceStorageName: source,
		DestinationStorageName: destination}
	var f model.FieldErrors
	if !s.storages.Has(source) {
		f.Add("source_storage_name", "is not included in the list")
	}
	if destination == "" {
		picked, err := s.pick(ctx, source)
		if err != nil {
			return m, err
		}
		m.DestinationStorageName = picked
	}
	switch {
	case m.DestinationStorageName == "":
		f.Add("destination_storage_name", "can't be blank")
	case !s.storages.Has(m.DestinationStorageName):
		f.Add("destination_storage_name", "is not included in the list")
	case m.DestinationStorageName == source:
		f.Add("destination_storage_name", "must differ from source_storage_name")
	}
	if err := f.Err(); err != nil {
		return m, err
	}
	// A move whose source copies are still to be removed would remove
	// them from under this one, were it to move the container back.
	if prev, ok, err := tx.UnfinishedStorageMove(ctx, kind, id); err != nil {
		return m, err
	} else if ok && prev.State == model.MoveReplicated {
		return m, model.Invalid(string(kind), "has a repository storage move still cleaning up")
	}
	held, err := tx.SetContainerReadOnly(ctx, kind, id, true)
	if err != nil {
		return m, err
	}
	if !held {
		return m, model.Invalid(string(kind), "is read-only")
	}
	if err := tx.CreateStorageMove(ctx, &m); err != nil {
		return m, err
	}
	if moved, err := tx.MoveStorageMove(ctx, &m, model.MoveSchedule, ""); err != nil || !moved {
		return m, errors.Join(err, fmt.Errorf("schedule storage move %d: lost to another writer", m.ID))
	}
	if _, err := moveTask.Enqueue(ctx, tx, movePayload{MoveID: m.ID}); err != nil {
		return m, err
	}
	return m, nil
}

// pick chooses a destination by the storage weights, other than source;
// "" when no usable storage has weight.
func (s *Service) pick(ctx context.Context, source string) (string, error) {
	st, err := s.settings.Current(ctx)
	if err != nil {
		return "", err
	}
	name, err := s.storages.Pick(st.RepositoryStoragesWeighted, source)
	if errors.Is(err, gitrepo.ErrNoStorage) {
		return "", nil
	}
	return name, err
}

// ScheduleBulk schedules, in the background, a move of every container of
// kind on source to destination (each picked by weight when empty).
func (s *Service) ScheduleBulk(ctx context.Context, a auth.Actor, kind model.ContainerKind, source, destination string) error {
	if err := admin(a); err != nil {
		return err
	}
	if _, err := s.kind(kind); err != nil {
		return err
	}
	if !s.storages.Has(source) {
		return model.Param("source_storage_name does not have a valid value")
	}
	if destination != "" && !s.storages.Has(destination) {
		return model.Param("destination_storage_name does not have a valid value")
	}
	if destination == source {
		return model.Invalid("destination_storage_name", "must differ from source_storage_name")
	}
	return s.db.InTx(ctx, func(tx *store.Tx) error {
		_, err := bulkTask.Enqueue(ctx, tx, bulkPayload{Kind: kind, Source: source, Destination: destination})
		return err
	})
}

// StorageNames are the configured storages, sorted.
func (s *Service) StorageNames() []string {
	names := s.storages.Names()
	sort.Strings(names)
	return names
}

// PickStorage chooses the storage of a new repository container — a
// project, a group (its wiki), a snippet: a weighted random choice by
// the application setting repository_storages_weighted among the usable
// storages. With none usable and weighted it falls back to "default".
func (s *Service) PickStorage(ctx context.Context) (string, error) {
	st, err := s.settings.Current(ctx)
	if err != nil {
		return "", err
	}
	name, err := s.storages.Pick(st.RepositoryStoragesWeighted)
	if errors.Is(err, gitrepo.ErrNoStorage) {
		s.log.Warn("no usable repository storage has a weight; using default", "weights", st.RepositoryStoragesWeighted)
		return "default", nil
	}
	return name, err
}
