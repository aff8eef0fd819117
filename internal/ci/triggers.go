package ci

import (
	"context"
	"errors"
	"slices"
	"strings"

	"quarry/internal/auth"
	"quarry/internal/model"
	"quarry/internal/store"
)

// TriggerTokenPrefix starts every pipeline trigger token.
const TriggerTokenPrefix = "glptt-"

// TriggerView is a trigger token's record with its owner, and the token
// itself only when it was just made.
type TriggerView struct {
	model.Trigger
	Owner *model.User
	Token string
}

func (s *Service) triggerViews(ctx context.Context, list []model.Trigger) ([]TriggerView, error) {
	ownerOf, err := usersOf(ctx, s.db, list, func(t model.Trigger) int64 { return t.OwnerID })
	if err != nil {
		return nil, err
	}
	out := make([]TriggerView, len(list))
	for i, t := range list {
		out[i] = TriggerView{Trigger: t, Owner: ownerOf(t)}
	}
	return out, nil
}

func (s *Service) triggerView(ctx context.Context, t model.Trigger) (TriggerView, error) {
	v, err := s.triggerViews(ctx, []model.Trigger{t})
	if err != nil {
		return TriggerView{}, err
	}
	return v[0], nil
}

// Triggers lists a project's trigger tokens (maintainers).
func (s *Service) Triggers(ctx context.Context, a auth.Actor, projectRef string, page model.Page) ([]TriggerView, model.PageInfo, error) {
	p, _, err := s.project(ctx, a, projectRef, auth.AdminCI)
	if err != nil {
		return nil, model.PageInfo{}, err
	}
	list, info, err := s.db.Triggers(ctx, p.ID, page)
	if err != nil {
		return nil, info, err
	}
	views, err := s.triggerViews(ctx, list)
	return views, info, err
}

// trigger resolves a project's trigger for a maintainer: 404 Trigger Not
// Found.
func (s *Service) trigger(ctx context.Context, a auth.Actor, projectRef string, id int64) (model.Trigger, error) {
	p, _, err := s.project(ctx, a, projectRef, auth.AdminCI)
	if err != nil {
		return model.Trigger{}, err
	}
	t, err := s.db.Trigger(ctx, p.ID, id)
	return t, model.NotFoundAs(err, "Trigger")
}

// Trigger returns one trigger token's record.
func (s *Service) Trigger(ctx context.Context, a auth.Actor, projectRef string, id int64) (TriggerView, error) {
	t, err := s.trigger(ctx, a, projectRef, id)
	if err != nil {
		return TriggerView{}, err
	}
	return s.triggerView(ctx, t)
}

// CreateTrigger makes a trigger token owned by the caller. The token is
// returned this once; only its digest is stored.
func (s *Service) CreateTrigger(ctx context.Context, a auth.Actor, projectRef, description string) (TriggerView, error) {
	p, _, err := s.project(ctx, a, projectRef, auth.AdminCI)
	if err != nil {
		return TriggerView{}, err
	}
	if len(description) > 255 {
		return TriggerView{}, model.Invalid("description", "is too long (maximum is 255 characters)")
	}
	secret := auth.NewSecret(TriggerTokenPrefix, 40)
	t := model.Trigger{ProjectID: p.ID, OwnerID: a.UserID(), Description: description, TokenDigest: auth.Digest(secret),
		TokenHint: secret[:len(TriggerTokenPrefix)+4]}
	if err := s.db.InTx(ctx, func(tx *store.Tx) error { return tx.CreateTrigger(ctx, &t) }); err != nil {
		return TriggerView{}, err
	}
	return TriggerView{Trigger: t, Owner: a.User, Token: secret}, nil
}

// UpdateTrigger changes a trigger's description.
func (s *Service) UpdateTrigger(ctx context.Context, a auth.Actor, projectRef string, id int64, description *string) (TriggerView, error) {
	t, err := s.trigger(ctx, a, projectRef, id)
	if err != nil {
		return TriggerView{}, err
	}
	if description != nil {
		if len(*description) > 255 {
			return TriggerView{}, model.Invalid("description", "is too long (maximum is 255 characters)")
		}
		t.Description = *description
		if err := s.db.InTx(ctx, func(tx *store.Tx) error { return tx.UpdateTrigger(ctx, &t) }); err != nil {
			return TriggerView{}, err
		}
	}
	return s.triggerView(ctx, t)
}

// DeleteTrigger revokes a trigger token.
func (s *Service) DeleteTrigger(ctx context.Context, a auth.Actor, projectRef string, id int64) error {
	t, err := s.trigger(ctx, a, projectRef, id)
	if err != nil {
		return err
	}
	return s.db.InTx(ctx, func(tx *store.Tx) error { return tx.DeleteTrigger(ctx, t.ID) })
}

// TriggerPipeline runs a project's CI configuration for ref with a
// trigger token (source trigger): the pipeline runs as the token's owner,
// with the given variables and CI_PIPELINE_TRIGGERED. An unknown or
// revoked token, or one of another project, is 404 (nothing about the
// project leaks); an owner who may no longer run pipelines there is 403.
func (s *Service) TriggerPipeline(ctx context.Context, projectRef, token, ref string, vars map[string]string) (PipelineView, error) {
	pl, p, err := s.triggerPipeline(ctx, projectRef, token, ref, vars)
	if err != nil {
		return PipelineView{}, err
	}
	return s.pipelineView(ctx, p, pl)
}

func (s *Service) triggerPipeline(ctx context.Context, projectRef, token, ref string, vars map[string]string) (model.Pipeline, model.Project, error) {
	notFound := model.NotFound("")
	p, err := s.db.ProjectByRef(ctx, projectRef)
	if errors.Is(err, model.ErrNotFound) || (err == nil && p.PendingDelete) {
		return model.Pipeline{}, p, notFound
	}
	if err != nil {
		return model.Pipeline{}, p, err
	}
	var (
		a       auth.Actor
		trigger *model.Trigger
		source  = model.SourceTrigger
	)
	if strings.HasPrefix(token, model.JobTokenPrefix) {
		// A running job's token: the pipeline is the job's user's, with
		// source "pipeline" (a multi-project pipeline from a script).
		if a, err = s.AuthenticateJobToken(ctx, token); err != nil {
			return model.Pipeline{}, p, notFound
		}
		source = model.SourcePipeline
	} else {
		if !auth.PlausibleSecret(token) {
			return model.Pipeline{}, p, notFound
		}
		t, err := s.db.TriggerByDigest(ctx, auth.Digest(token))
		if errors.Is(err, model.ErrNotFound) || (err == nil && t.ProjectID != p.ID) {
			return model.Pipeline{}, p, notFound
		}
		if err != nil {
			return model.Pipeline{}, p, err
		}
		if t.ExpiresAt != "" && t.ExpiresAt <= s.now().UTC().Format(model.DateLayout) {
			return model.Pipeline{}, p, notFound
		}
		if t.OwnerID == 0 {
			return model.Pipeline{}, p, model.ForbiddenRaw("403 Forbidden")
		}
		owner, err := s.db.UserByID(ctx, t.OwnerID)
		if err != nil {
			return model.Pipeline{}, p, model.NotFoundAs(err, "")
		}
		if owner.State.IsBlocked() {
			return model.Pipeline{}, p, model.ForbiddenRaw("403 Forbidden")
		}
		a, trigger = auth.Actor{User: &owner}, &t
	}
	_, acc, err := s.projects.Resolve(ctx, a, projectRef)
	if err != nil {
		return model.Pipeline{}, p, model.ForbiddenRaw("403 Forbidden")
	}
	if !auth.Can(a, auth.RunPipeline, auth.Resource{Project: &p, Access: acc}) {
		return model.Pipeline{}, p, model.ForbiddenRaw("403 Forbidden")
	}
	var pv []model.Variable
	for k, v := range vars {
		pv = append(pv, model.Variable{Key: k, Value: v, VariableType: model.VarEnv})
	}
	// A map gives no order; keys do.
	slices.SortFunc(pv, func(a, b model.Variable) int { return strings.Compare(a.Key, b.Key) })
	if err := checkVariables(pv); err != nil {
		return model.Pipeline{}, p, err
	}
	repo, err := s.repo(p)
	if err != nil {
		return model.Pipeline{}, p, err
	}
	r, err := resolveRef(ctx, repo, ref, "")
	if err != nil {
		return model.Pipeline{}, p, err
	}
	ok, err := s.mayRunOn(ctx, a, &p, acc, r.name, r.tag)
	if err != nil {
		return model.Pipeline{}, p, err
	}
	if !ok {
		return model.Pipeline{}, p, chainError(msgProtectedRef)
	}
	if trigger != nil {
		if err := s.db.InTx(ctx, func(tx *store.Tx) error { return tx.TouchTrigger(ctx, trigger.ID) }); err != nil {
			return model.Pipeline{}, p, err
		}
	}
	pl, err := s.create(ctx, request{project: p, source: source, resolved: &r, user: a.User,
		variables: pv, save: true, triggered: trigger != nil})
	return pl, p, err
}
