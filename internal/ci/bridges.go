package ci

import (
	"context"
	"errors"
	"fmt"

	"quarry/internal/auth"
	"quarry/internal/ciconfig"
	"quarry/internal/model"
	"quarry/internal/store"
)

// maxChildDepth is how many levels of child pipelines may hang below a
// root pipeline.
const maxChildDepth = 2

// bridgeFailure is why a bridge could not start its downstream pipeline.
type bridgeFailure struct {
	reason model.FailureReason
	msg    string
}

func (b bridgeFailure) Error() string { return b.msg }

// runDownstream creates the pipeline a pending bridge triggers (reference
// §8): a child pipeline of the same project from trigger:include, or a
// pipeline of another project (trigger:project). A bridge whose pipeline
// exists already (a task run again after a crash) is only linked.
func (s *Service) runDownstream(ctx context.Context, pl jobPayload) error {
	bridge, err := s.db.Job(ctx, pl.JobID)
	if errors.Is(err, model.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	if bridge.Status != model.StatusPending || bridge.DownstreamID != 0 {
		return nil
	}
	down, err := s.db.PipelineByParentJob(ctx, bridge.ID)
	if errors.Is(err, model.ErrNotFound) {
		down, err = s.triggerDownstream(ctx, &bridge)
	}
	var bf bridgeFailure
	if errors.As(err, &bf) {
		return s.failBridge(ctx, bridge.ID, bf.reason)
	}
	if err != nil {
		return err
	}
	return s.linkDownstream(ctx, bridge.ID, down)
}

// downstreamFailed fails a bridge whose pipeline could not be made after
// every attempt.
func (s *Service) downstreamFailed(ctx context.Context, pl jobPayload, cause error) {
	s.log.Error("ci: downstream pipeline", "bridge_id", pl.JobID, "err", cause)
	if err := s.failBridge(ctx, pl.JobID, model.FailureDownstreamCreation); err != nil {
		s.log.Error("ci: fail bridge", "bridge_id", pl.JobID, "err", err)
	}
}

// triggerDownstream makes the bridge's downstream pipeline.
func (s *Service) triggerDownstream(ctx context.Context, bridge *model.Job) (model.Pipeline, error) {
	opts, err := planned(bridge)
	if err != nil || opts.Trigger == nil {
		return model.Pipeline{}, bridgeFailure{model.FailureInvalidBridgeTrigger, "no trigger"}
	}
	trig := opts.Trigger
	parent, err := s.db.Pipeline(ctx, bridge.PipelineID)
	if err != nil {
		return model.Pipeline{}, err
	}
	project, err := s.db.ProjectByID(ctx, bridge.ProjectID)
	if err != nil {
		return model.Pipeline{}, err
	}
	var user *model.User
	if bridge.UserID != 0 {
		u, err := s.db.UserByID(ctx, bridge.UserID)
		if err != nil && !errors.Is(err, model.ErrNotFound) {
			return model.Pipeline{}, err
		}
		if err == nil {
			user = &u
		}
	}
	vars, err := s.forwardedVariables(ctx, project, parent, bridge, opts)
	if err != nil {
		return model.Pipeline{}, err
	}
	req := request{source: model.SourceParentPipeline, user: user, variables: vars, save: true, parent: &parent, parentJob: bridge}
	if len(trig.Include) > 0 {
		depth, err := s.depth(ctx, parent)
		if err != nil {
			return model.Pipeline{}, err
		}
		if depth >= maxChildDepth {
			return model.Pipeline{}, bridgeFailure{model.FailureMaxDescendantDepth, "maximum depth of child pipelines reached"}
		}
		req.project, req.ref, req.sha, req.before, req.include = project, parent.Ref, parent.SHA, parent.BeforeSHA, trig.Include
	} else {
		target, err := s.downstreamProject(ctx, user, project, trig)
		if err != nil {
			return model.Pipeline{}, err
		}
		req.project, req.source, req.ref = target, model.SourcePipeline, trig.Branch
		if req.ref == "" {
			req.ref = target.DefaultBranch
		}
	}
	down, err := s.create(ctx, req)
	if err != nil && model.KindOf(err) == model.KindInvalid {
		return down, bridgeFailure{model.FailureDownstreamCreation, err.Error()}
	}
	return down, err
}

// downstreamProject resolves a multi-project trigger's project as the
// bridge's user, who must be able to run pipelines on the branch there.
func (s *Service) downstreamProject(ctx context.Context, user *model.User, upstream model.Project, trig *ciconfig.Trigger) (model.Project, error) {
	if user == nil {
		return model.Project{}, bridgeFailure{model.FailureInsufficientBridgePerms, "no user"}
	}
	a := auth.Actor{User: user}
	target, acc, err := s.projects.Resolve(ctx, a, trig.Project)
	if model.KindOf(err) == model.KindNotFound {
		return target, bridgeFailure{model.FailureDownstreamNotFound, "downstream project not found"}
	}
	if err != nil {
		return target, err
	}
	if target.ID == upstream.ID {
		return target, bridgeFailure{model.FailureInvalidBridgeTrigger, "a multi-project pipeline cannot trigger its own project"}
	}
	branch := trig.Branch
	if branch == "" {
		branch = target.DefaultBranch
	}
	ok, err := s.mayRunOn(ctx, a, &target, acc, branch, false)
	if err != nil {
		return target, err
	}
	if !ok {
		return target, bridgeFailure{model.FailureInsufficientBridgePerms, "insufficient permissions on the downstream project"}
	}
	return target, nil
}

// depth counts the child pipeline levels above p (0 for a root).
func (s *Service) depth(ctx context.Context, p model.Pipeline) (int, error) {
	n := 0
	for p.Source == model.SourceParentPipeline && p.ParentID != 0 && n <= maxChildDepth {
		var err error
		if p, err = s.db.Pipeline(ctx, p.ParentID); err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}

// forwardedVariables are what a bridge passes downstream (trigger:forward):
// its YAML variables (by default), expanded in the upstream pipeline's
// context as GitLab does (so $CI_PIPELINE_SOURCE and the like carry the
// parent's values, and the dotenv variables of the jobs the bridge
// depends on are there), and the upstream pipeline's own variables (when
// asked). A later key replaces an earlier one.
func (s *Service) forwardedVariables(ctx context.Context, project model.Project, parent model.Pipeline, bridge *model.Job,
	opts jobOptions) ([]model.Variable, error) {
	var out vars
	if opts.Trigger.ForwardYAMLVariables && len(opts.YAMLVariables) > 0 {
		upstream, err := s.pipelineVariables(ctx, project, parent)
		if err != nil {
			return nil, err
		}
		scope := upstream.asMap()
		// The dotenv reports of the jobs the bridge depends on, as a
		// job's (GitLab's scoped variables of a bridge): the way to
		// hand them downstream is a variable naming one.
		dotenv, err := s.dotenvVariables(ctx, *bridge, opts)
		if err != nil {
			return nil, err
		}
		for _, v := range dotenv {
			scope[v.Key] = v.Value
		}
		for _, v := range opts.YAMLVariables {
			value := v.Value
			if !v.Raw {
				value = ciconfig.Expand(value, scope)
			}
			scope[v.Key] = value
			out = append(out, model.Variable{Key: v.Key, Value: value, VariableType: model.VarEnv, Raw: v.Raw})
		}
	}
	if opts.Trigger.ForwardPipelineVariables {
		pv, err := s.db.PipelineVariables(ctx, parent.ID)
		if err != nil {
			return nil, err
		}
		out = append(out, pv...)
	}
	seen := map[string]int{}
	var uniq []model.Variable
	for _, v := range out {
		if i, ok := seen[v.Key]; ok {
			uniq[i] = v
			continue
		}
		seen[v.Key] = len(uniq)
		uniq = append(uniq, v)
	}
	return uniq, nil
}

// linkDownstream records a bridge's downstream pipeline. Without
// strategy: depend the bridge succeeds at once; with it, it runs until
// the downstream pipeline completes. A bridge canceled meanwhile cancels
// the pipeline it made.
func (s *Service) linkDownstream(ctx context.Context, bridgeID int64, down model.Pipeline) error {
	orphan := false
	err := s.withJob(ctx, bridgeID, func(tx *store.Tx, p *model.Pipeline, b *model.Job, fx *effects) error {
		if b.Status != model.StatusPending {
			orphan = true
			return nil
		}
		opts, err := planned(b)
		if err != nil {
			return err
		}
		id := down.ID
		ch := store.JobChange{DownstreamID: &id}
		to := model.StatusSuccess
		switch {
		case down.FailureReason != "":
			// Stored, but not created as a pipeline that runs (its
			// configuration failed): the bridge fails, as GitLab's.
			reason := model.FailureDownstreamCreation
			to, ch.FailureReason = model.StatusFailed, &reason
		case opts.Trigger != nil && opts.Trigger.Strategy == "depend":
			to = model.StatusRunning
		}
		if err := s.moveJob(ctx, tx, b, to, ch, fx); err != nil {
			return err
		}
		if to == model.StatusRunning && down.Status.Completed() {
			return s.followDownstream(ctx, tx, b, down, fx)
		}
		return nil
	})
	if err == nil && orphan {
		return s.cancelAll(ctx, down.ID)
	}
	return err
}

// failBridge fails a bridge that has not finished.
func (s *Service) failBridge(ctx context.Context, bridgeID int64, reason model.FailureReason) error {
	return s.withJob(ctx, bridgeID, func(tx *store.Tx, p *model.Pipeline, b *model.Job, fx *effects) error {
		if b.Status.Completed() {
			return nil
		}
		return s.moveJob(ctx, tx, b, model.StatusFailed, store.JobChange{FailureReason: &reason}, fx)
	})
}

// runBridgeSync moves a depend-strategy bridge after its downstream
// pipeline completed.
func (s *Service) runBridgeSync(ctx context.Context, pl jobPayload) error {
	err := s.withJob(ctx, pl.JobID, func(tx *store.Tx, p *model.Pipeline, b *model.Job, fx *effects) error {
		if b.DownstreamID == 0 || b.Status != model.StatusRunning {
			return nil
		}
		down, err := tx.Pipeline(ctx, b.DownstreamID)
		if err != nil {
			return err
		}
		return s.followDownstream(ctx, tx, b, down, fx)
	})
	if model.KindOf(err) == model.KindNotFound {
		return nil
	}
	return err
}

// followDownstream gives a running depend bridge the outcome of its
// completed downstream pipeline: success, canceled, or failed (for a
// failed or skipped one).
func (s *Service) followDownstream(ctx context.Context, tx *store.Tx, b *model.Job, down model.Pipeline, fx *effects) error {
	switch down.Status {
	case model.StatusSuccess:
		return s.moveJob(ctx, tx, b, model.StatusSuccess, store.JobChange{}, fx)
	case model.StatusCanceled:
		return s.moveJob(ctx, tx, b, model.StatusCanceled, store.JobChange{}, fx)
	case model.StatusFailed, model.StatusSkipped:
		reason := model.FailureUnknown
		return s.moveJob(ctx, tx, b, model.StatusFailed, store.JobChange{FailureReason: &reason}, fx)
	}
	return nil
}

// Downstream returns the pipelines bridges started, by bridge id.
func (s *Service) Downstream(ctx context.Context, bridges []model.Job) (map[int64]model.Pipeline, error) {
	out := map[int64]model.Pipeline{}
	for _, b := range bridges {
		if b.DownstreamID == 0 {
			continue
		}
		p, err := s.db.Pipeline(ctx, b.DownstreamID)
		if errors.Is(err, model.ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("downstream of bridge %d: %w", b.ID, err)
		}
		out[b.ID] = p
	}
	return out, nil
}
