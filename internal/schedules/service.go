// Package schedules keeps projects' pipeline schedules (GitLab's
// Ci::PipelineSchedule): their rules and permissions, their variables,
// and the scheduler — a durable task that comes back every minute, claims
// each due schedule by compare-and-set on its next_run_at and runs its
// pipeline through the CI engine (source schedule, as its owner).
package schedules

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"quarry/internal/auth"
	"quarry/internal/ci"
	"quarry/internal/model"
	"quarry/internal/store"
	"quarry/internal/tasks"
)

// Projects resolves projects with the caller's access (the projects
// service).
type Projects interface {
	Resolve(ctx context.Context, a auth.Actor, ref string) (model.Project, model.AccessLevel, error)
}

// Pipelines is what the scheduler needs of the CI engine.
type Pipelines interface {
	CreateSchedulePipeline(ctx context.Context, run ci.ScheduleRun) (model.Pipeline, bool, error)
	MayRunPipelineOn(ctx context.Context, a auth.Actor, p model.Project, acc model.AccessLevel, ref string) (bool, error)
}

// Limits of a schedule's inputs.
const (
	maxDescription = 255
	maxRef         = 1024
	maxVariables   = 200
	maxValue       = 10000
	// batch is how many due schedules one pass of the scheduler takes.
	batch = 100
)

// Interval is how often the scheduler looks for due schedules: the
// resolution of a cron line.
const Interval = time.Minute

// Service is the pipeline schedules' rules.
type Service struct {
	db        *store.DB
	projects  Projects
	pipelines Pipelines
	log       *slog.Logger
}

type (
	tickPayload struct{}
	// runPayload is one run of a schedule as UserID; Key names it, so a
	// retried task makes one pipeline.
	runPayload struct {
		ScheduleID int64
		UserID     int64
		Key        string
	}
)

var (
	// tickTask is the scheduler's pass; one waits at a time.
	tickTask = tasks.Define("ci_pipeline_schedules", tasks.KindOptions[tickPayload]{MaxAttempts: 3,
		Dedupe: func(tickPayload) string { return "tick" }})
	// runTask runs one schedule's pipeline: a play, or the safety net of a
	// run the scheduler claimed (done by the scheduler itself unless the
	// process dies first).
	runTask = tasks.Define("ci_pipeline_schedule_run", tasks.KindOptions[runPayload]{MaxAttempts: 5})
)

// runGrace is how long a claimed run's safety net waits before a worker
// runs it: the scheduler marks it done once it ran the pipeline itself.
const runGrace = 5 * time.Minute

// New returns the service and registers its background work on queue.
func New(db *store.DB, projects Projects, pipelines Pipelines, queue *tasks.Queue, log *slog.Logger) *Service {
	s := &Service{db: db, projects: projects, pipelines: pipelines, log: log}
	tasks.Handle(queue, tickTask, s.runTick, nil)
	tasks.Handle(queue, runTask, s.runRun, nil)
	return s
}

// Start makes sure the scheduler's next pass is scheduled (one at a time,
// whatever the number of processes).
func (s *Service) Start(ctx context.Context) error {
	return s.db.InTx(ctx, func(tx *store.Tx) error {
		_, err := tickTask.Enqueue(ctx, tx, tickPayload{}, tasks.After(Interval))
		return err
	})
}

// View is a schedule with what its entity shows.
type View struct {
	model.PipelineSchedule
	Owner        *model.User
	ProjectPath  string
	LastPipeline *model.Pipeline
	// Variables are shown only to who may see them (nil: left out).
	Variables []model.Variable
}

// access is a schedule's project as the caller sees it.
type access struct {
	a       auth.Actor
	project model.Project
	level   model.AccessLevel
}

func (x access) res() auth.Resource { return auth.Resource{Project: &x.project, Access: x.level} }

// read: GitLab's read_pipeline_schedule, reporters up.
func (x access) read() bool {
	return auth.Can(x.a, auth.ReadPipeline, x.res()) && (x.a.Admin() || x.level >= model.Reporter)
}

// create: create_pipeline_schedule, developers up.
func (x access) create() bool { return auth.Can(x.a, auth.RunPipeline, x.res()) }

func (x access) owns(sc model.PipelineSchedule) bool { return sc.OwnerID != 0 && x.a.Is(sc.OwnerID) }

// admin: admin_pipeline_schedule (and read_pipeline_schedule_variables):
// maintainers, or the owner who is a developer.
func (x access) admin(sc model.PipelineSchedule) bool {
	return auth.Can(x.a, auth.AdminCI, x.res()) || (x.create() && x.owns(sc))
}

// update: update_pipeline_schedule — administrators, or the owner who is
// a developer; a maintainer takes ownership first.
func (x access) update(sc model.PipelineSchedule) bool {
	return (x.a.Admin() && auth.Can(x.a, auth.ReadPipeline, x.res())) || (x.create() && x.owns(sc))
}

// setVariables: set_pipeline_variables — developers, maintainers when the
// project restricts pipeline variables.
func (x access) setVariables() bool {
	if x.project.Settings.RestrictUserDefinedVariables {
		return auth.Can(x.a, auth.AdminCI, x.res())
	}
	return x.create()
}

func (s *Service) project(ctx context.Context, a auth.Actor, projectRef string) (access, error) {
	p, acc, err := s.projects.Resolve(ctx, a, projectRef)
	if err != nil {
		return access{}, err
	}
	x := access{a: a, project: p, level: acc}
	if !x.read() {
		if auth.Can(a, auth.ReadPipeline, x.res()) {
			return x, model.Forbidden("")
		}
		return x, model.NotFound("Project")
	}
	return x, nil
}

// schedule finds a schedule of the project: 404 Pipeline Schedule Not
// Found otherwise.
func (s *Service) schedule(ctx context.Context, a auth.Actor, projectRef string, id int64) (access, model.PipelineSchedule, error) {
	x, err := s.project(ctx, a, projectRef)
	if err != nil {
		return x, model.PipelineSchedule{}, err
	}
	sc, err := s.db.PipelineSchedule(ctx, id)
	if errors.Is(err, model.ErrNotFound) || (err == nil && sc.ProjectID != x.project.ID) {
		return x, sc, model.NotFound("Pipeline Schedule")
	}
	return x, sc, err
}

func (s *Service) views(ctx context.Context, x access, list []model.PipelineSchedule) ([]View, error) {
	ids := make([]int64, 0, len(list))
	for _, sc := range list {
		if sc.OwnerID != 0 {
			ids = append(ids, sc.OwnerID)
		}
	}
	users, err := s.db.UsersByIDs(ctx, ids)
	if err != nil {
		return nil, err
	}
	out := make([]View, len(list))
	for i, sc := range list {
		out[i] = View{PipelineSchedule: sc, ProjectPath: x.project.FullPath()}
		if u, ok := users[sc.OwnerID]; ok {
			out[i].Owner = &u
		}
	}
	return out, nil
}

// details adds the last pipeline, and the variables when shown.
func (s *Service) details(ctx context.Context, x access, sc model.PipelineSchedule, withVariables bool) (View, error) {
	v, err := s.views(ctx, x, []model.PipelineSchedule{sc})
	if err != nil {
		return View{}, err
	}
	out := v[0]
	last, ok, err := s.db.LastSchedulePipeline(ctx, sc.ID)
	if err != nil {
		return out, err
	}
	if ok {
		out.LastPipeline = &last
	}
	if withVariables && x.admin(sc) {
		if out.Variables, err = s.db.ScheduleVariables(ctx, sc.ID); err != nil {
			return out, err
		}
	}
	return out, nil
}

// ListInput filters and orders a project's schedules.
type ListInput struct {
	Scope   string
	OrderBy string
	Desc    bool
}

// List lists a project's schedules.
func (s *Service) List(ctx context.Context, a auth.Actor, projectRef string, in ListInput, page model.Page) ([]View, model.PageInfo, error) {
	x, err := s.project(ctx, a, projectRef)
	if err != nil {
		return nil, model.PageInfo{}, err
	}
	list, info, err := s.db.PipelineSchedules(ctx, store.ScheduleFilter{ProjectID: x.project.ID, Scope: in.Scope, OrderBy: in.OrderBy, Desc: in.Desc}, page)
	if err != nil {
		return nil, info, err
	}
	views, err := s.views(ctx, x, list)
	return views, info, err
}

// Get returns one schedule with its last pipeline, and its variables for
// who may see them.
func (s *Service) Get(ctx context.Context, a auth.Actor, projectRef string, id int64) (View, error) {
	x, sc, err := s.schedule(ctx, a, projectRef, id)
	if err != nil {
		return View{}, err
	}
	return s.details(ctx, x, sc, true)
}

// Input are a schedule's settings; nil leaves one unchanged (on create:
// CronTimezone UTC, Active true).
type Input struct {
	Description  *string
	Ref          *string
	Cron         *string
	CronTimezone *string
	Active       *bool
}

// apply validates in over sc with GitLab's messages and computes the
// next run from now.
func (s *Service) apply(sc *model.PipelineSchedule, in Input, now time.Time) error {
	if in.Description != nil {
		sc.Description = *in.Description
	}
	if in.Ref != nil {
		sc.Ref = *in.Ref
	}
	if in.Cron != nil {
		sc.Cron = strings.TrimSpace(*in.Cron)
	}
	if in.CronTimezone != nil {
		sc.CronTimezone = *in.CronTimezone
	}
	if in.Active != nil {
		sc.Active = *in.Active
	}
	var f model.FieldErrors
	switch {
	case strings.TrimSpace(sc.Description) == "":
		f.Add("description", "can't be blank")
	case len(sc.Description) > maxDescription:
		f.Add("description", fmt.Sprintf("is too long (maximum is %d characters)", maxDescription))
	}
	switch {
	case strings.TrimSpace(sc.Ref) == "":
		f.Add("ref", "can't be blank")
	case len(sc.Ref) > maxRef:
		f.Add("ref", fmt.Sprintf("is too long (maximum is %d characters)", maxRef))
	}
	if sc.Cron == "" {
		f.Add("cron", "can't be blank")
	}
	if sc.CronTimezone == "" {
		f.Add("cron_timezone", "can't be blank")
	}
	if sc.Cron != "" && sc.CronTimezone != "" {
		c, err := ParseCron(sc.Cron, sc.CronTimezone)
		switch {
		case errors.Is(err, errTimezone):
			f.Add("cron_timezone", "syntax is invalid")
			if _, cerr := ParseCron(sc.Cron, "UTC"); cerr != nil {
				f.Add("cron", "syntax is invalid")
			}
		case err != nil:
			f.Add("cron", "syntax is invalid")
		default:
			sc.NextRunAt = c.Next(now)
			if sc.NextRunAt.IsZero() {
				f.Add("cron", "syntax is invalid")
			}
		}
	}
	return f.Err()
}

// Create makes a schedule owned by the caller (developers up).
func (s *Service) Create(ctx context.Context, a auth.Actor, projectRef string, in Input) (View, error) {
	x, err := s.project(ctx, a, projectRef)
	if err != nil {
		return View{}, err
	}
	if !x.create() {
		return View{}, model.Forbidden("")
	}
	sc := model.PipelineSchedule{ProjectID: x.project.ID, OwnerID: a.UserID(), CronTimezone: "UTC", Active: true}
	if err := s.apply(&sc, in, s.db.Now()); err != nil {
		return View{}, err
	}
	if err := s.checkRef(ctx, x, sc.Ref, "create"); err != nil {
		return View{}, err
	}
	if err := s.db.InTx(ctx, func(tx *store.Tx) error { return tx.CreatePipelineSchedule(ctx, &sc) }); err != nil {
		return View{}, err
	}
	return s.details(ctx, x, sc, false)
}

// write stores sc over the version read (a lost race is a 409).
func (s *Service) write(ctx context.Context, sc *model.PipelineSchedule, prev time.Time) error {
	return s.db.InTx(ctx, func(tx *store.Tx) error {
		ok, err := tx.UpdatePipelineSchedule(ctx, sc, prev)
		if err == nil && !ok {
			err = model.Conflict("409 Conflict - the pipeline schedule changed meanwhile")
		}
		return err
	})
}

// Update changes a schedule (its owner, or an administrator); the next
// run is computed again, as GitLab does on every save.
func (s *Service) Update(ctx context.Context, a auth.Actor, projectRef string, id int64, in Input) (View, error) {
	x, sc, err := s.schedule(ctx, a, projectRef, id)
	if err != nil {
		return View{}, err
	}
	if err := s.mayUpdate(ctx, x, sc); err != nil {
		return View{}, err
	}
	prev := sc.UpdatedAt
	if err := s.apply(&sc, in, s.db.Now()); err != nil {
		return View{}, err
	}
	if err := s.checkRef(ctx, x, sc.Ref, "update"); err != nil {
		return View{}, err
	}
	if err := s.write(ctx, &sc, prev); err != nil {
		return View{}, err
	}
	return s.details(ctx, x, sc, false)
}

// mayUpdate: update_pipeline_schedule, which GitLab's policy prevents
// on a ref the caller may not run pipelines for (a protected branch they
// may neither push nor merge to).
func (s *Service) mayUpdate(ctx context.Context, x access, sc model.PipelineSchedule) error {
	if !x.update(sc) {
		return model.Forbidden("")
	}
	ok, err := s.pipelines.MayRunPipelineOn(ctx, x.a, x.project, x.level, sc.Ref)
	if err == nil && !ok {
		err = model.Forbidden("")
	}
	return err
}

// checkRef refuses to save a schedule for a ref the caller may not run
// pipelines for, with GitLab's message (a 400 on base).
func (s *Service) checkRef(ctx context.Context, x access, ref, verb string) error {
	ok, err := s.pipelines.MayRunPipelineOn(ctx, x.a, x.project, x.level, ref)
	if err == nil && !ok {
		err = model.Invalid("base", "The current user is not authorized to "+verb+" the pipeline schedule")
	}
	return err
}

// TakeOwnership makes the caller the schedule's owner (maintainers, or
// the owner, for whom nothing changes: changed false, GitLab's 200).
func (s *Service) TakeOwnership(ctx context.Context, a auth.Actor, projectRef string, id int64) (View, bool, error) {
	x, sc, err := s.schedule(ctx, a, projectRef, id)
	if err != nil {
		return View{}, false, err
	}
	if !x.admin(sc) {
		return View{}, false, model.Forbidden("")
	}
	if x.owns(sc) {
		v, err := s.details(ctx, x, sc, false)
		return v, false, err
	}
	prev := sc.UpdatedAt
	sc.OwnerID = a.UserID()
	if err := s.apply(&sc, Input{}, s.db.Now()); err != nil {
		return View{}, false, err
	}
	if err := s.write(ctx, &sc, prev); err != nil {
		return View{}, false, err
	}
	v, err := s.details(ctx, x, sc, false)
	return v, true, err
}

// Delete removes a schedule (maintainers, or its owner); its pipelines
// stay.
func (s *Service) Delete(ctx context.Context, a auth.Actor, projectRef string, id int64) error {
	x, sc, err := s.schedule(ctx, a, projectRef, id)
	if err != nil {
		return err
	}
	if !x.admin(sc) {
		return model.Forbidden("")
	}
	err = s.db.InTx(ctx, func(tx *store.Tx) error { return tx.DeletePipelineSchedule(ctx, sc.ID) })
	return model.NotFoundAs(err, "Pipeline Schedule")
}

// Play runs the schedule's pipeline now, as the caller, in the
// background (GitLab's PlayService); the next scheduled run is not moved.
// Developers who may run pipelines for the schedule's ref may.
func (s *Service) Play(ctx context.Context, a auth.Actor, projectRef string, id int64) error {
	x, sc, err := s.schedule(ctx, a, projectRef, id)
	if err != nil {
		return err
	}
	if !x.create() {
		return model.Forbidden("")
	}
	ok, err := s.pipelines.MayRunPipelineOn(ctx, a, x.project, x.level, sc.Ref)
	if err != nil {
		return err
	}
	if !ok {
		return model.Forbidden("")
	}
	key := "play " + strconv.FormatInt(sc.ID, 10) + " " + randomKey()
	return s.db.InTx(ctx, func(tx *store.Tx) error {
		_, err := runTask.Enqueue(ctx, tx, runPayload{ScheduleID: sc.ID, UserID: a.UserID(), Key: key})
		return err
	})
}

func randomKey() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// Pipelines lists the pipelines a schedule made, by id (desc reverses).
func (s *Service) Pipelines(ctx context.Context, a auth.Actor, projectRef string, id int64, desc bool, page model.Page) ([]model.Pipeline, string, model.PageInfo, error) {
	x, sc, err := s.schedule(ctx, a, projectRef, id)
	if err != nil {
		return nil, "", model.PageInfo{}, err
	}
	list, info, err := s.db.SchedulePipelines(ctx, sc.ID, desc, page)
	return list, x.project.FullPath(), info, err
}
