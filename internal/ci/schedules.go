package ci

import (
	"context"
	"strconv"

	"quarry/internal/auth"
	"quarry/internal/model"
	"quarry/internal/store"
)

// ScheduleRun is one run of a pipeline schedule (internal/schedules).
type ScheduleRun struct {
	ScheduleID int64
	ProjectID  int64
	// Ref is the schedule's ref: a branch or tag name, or a full
	// refs/heads/… or refs/tags/… ref.
	Ref string
	// User is whom the pipeline runs as: the schedule's owner, or who
	// played it.
	User model.User
	// Variables are the schedule's, given to the pipeline as its own.
	Variables []model.Variable
	// Key names this run: a second call with the same key creates nothing.
	Key string
}

// CreateSchedulePipeline runs a schedule's pipeline (source schedule) as
// run.User, who must still be active and allowed to run pipelines for the
// ref (protected branch rules included): otherwise a model.Forbidden
// error, and nothing is stored. As GitLab's schedules (save_on_errors:
// false), an invalid configuration or a missing ref is an error too, not
// a failed pipeline. The pipeline is linked to its schedule in the
// transaction that stores it. created is false, with no error, when the
// run's key made a pipeline already.
func (s *Service) CreateSchedulePipeline(ctx context.Context, run ScheduleRun) (pl model.Pipeline, created bool, err error) {
	p, err := s.db.ProjectByID(ctx, run.ProjectID)
	if err != nil {
		return pl, false, model.NotFoundAs(err, "Project")
	}
	if p.PendingDelete || p.Settings.BuildsAccessLevel == "disabled" {
		return pl, false, model.Forbidden("")
	}
	if run.User.State.IsBlocked() {
		return pl, false, model.Forbidden("")
	}
	a := auth.Actor{User: &run.User}
	_, acc, err := s.projects.Resolve(ctx, a, strconv.FormatInt(p.ID, 10))
	if err != nil {
		return pl, false, model.Forbidden("")
	}
	repo, err := s.repo(p)
	if err != nil {
		return pl, false, err
	}
	r, err := resolveRef(ctx, repo, run.Ref, "")
	if err != nil {
		return pl, false, err
	}
	ok, err := s.mayRunOn(ctx, a, &p, acc, r.name, r.tag)
	if err != nil {
		return pl, false, err
	}
	if !ok {
		return pl, false, model.Forbidden(msgProtectedRef)
	}
	pl, err = s.create(ctx, request{project: p, source: model.SourceSchedule, resolved: &r, user: &run.User,
		variables: run.Variables, eventKey: "schedule " + run.Key,
		link: func(ctx context.Context, tx *store.Tx, pl *model.Pipeline) error {
			return tx.LinkSchedulePipeline(ctx, run.ScheduleID, pl.ID)
		}})
	if store.IsUnique(err, store.UniquePipelineEvent) {
		return pl, false, nil
	}
	if err != nil {
		return pl, false, err
	}
	return pl, true, nil
}

// MayRunPipelineOn reports whether user may run pipelines for ref (a
// branch or tag name, or a full ref) of a resolved project: GitLab's
// play_pipeline_schedule, which protected branch rules prevent. A ref
// that does not exist is judged as a branch.
func (s *Service) MayRunPipelineOn(ctx context.Context, a auth.Actor, p model.Project, acc model.AccessLevel, ref string) (bool, error) {
	repo, err := s.repo(p)
	if err != nil {
		return false, err
	}
	r, err := resolveRef(ctx, repo, ref, "")
	if err != nil {
		if model.KindOf(err) != model.KindInvalid {
			return false, err
		}
		r = resolvedRef{name: ref}
	}
	return s.mayRunOn(ctx, a, &p, acc, r.name, r.tag)
}
