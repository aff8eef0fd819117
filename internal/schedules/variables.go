package schedules

import (
	"context"
	"errors"
	"fmt"

	"quarry/internal/auth"
	"quarry/internal/model"
	"quarry/internal/store"
)

// VariableInput is a schedule variable's settings; nil leaves one
// unchanged (on create: VariableType env_var).
type VariableInput struct {
	Value        *string
	VariableType *string
}

func checkVariable(v model.Variable) error {
	var f model.FieldErrors
	switch {
	case v.Key == "":
		f.Add("key", "can't be blank")
	case len(v.Key) > 255:
		f.Add("key", "is too long (maximum is 255 characters)")
	case !model.ValidVariableKey(v.Key):
		f.Add("key", "can contain only letters, digits and '_'.")
	}
	if len(v.Value) > maxValue {
		f.Add("value", fmt.Sprintf("is too long (maximum is %d characters)", maxValue))
	}
	if v.VariableType != model.VarEnv && v.VariableType != model.VarFile {
		f.Add("variable_type", "is not included in the list")
	}
	return f.Err()
}

// variableAccess checks set_pipeline_variables and, for a change,
// update_pipeline_schedule, or admin_pipeline_schedule for a removal.
func (s *Service) variableAccess(ctx context.Context, a auth.Actor, projectRef string, id int64, remove bool) (model.PipelineSchedule, error) {
	x, sc, err := s.schedule(ctx, a, projectRef, id)
	if err != nil {
		return sc, err
	}
	if !x.setVariables() {
		return sc, model.Forbidden("")
	}
	if remove {
		if !x.admin(sc) {
			return sc, model.Forbidden("")
		}
		return sc, nil
	}
	return sc, s.mayUpdate(ctx, x, sc)
}

// CreateVariable adds a variable to a schedule (its owner).
func (s *Service) CreateVariable(ctx context.Context, a auth.Actor, projectRef string, id int64, key string, in VariableInput) (model.Variable, error) {
	sc, err := s.variableAccess(ctx, a, projectRef, id, false)
	if err != nil {
		return model.Variable{}, err
	}
	v := model.Variable{Key: key, VariableType: model.VarEnv}
	if in.Value != nil {
		v.Value = *in.Value
	}
	if in.VariableType != nil {
		v.VariableType = *in.VariableType
	}
	if err := checkVariable(v); err != nil {
		return v, err
	}
	err = s.db.InTx(ctx, func(tx *store.Tx) error {
		n, err := tx.CountScheduleVariables(ctx, sc.ID)
		if err != nil {
			return err
		}
		if n >= maxVariables {
			return model.Invalid("base", fmt.Sprintf("Maximum number of variables (%d) reached", maxVariables))
		}
		return tx.SetScheduleVariable(ctx, sc.ID, v, true)
	})
	if store.IsUnique(err, store.UniqueScheduleVariable) {
		return v, model.Invalid("key", "has already been taken")
	}
	return v, err
}

// variable finds one variable of a schedule.
func (s *Service) variable(ctx context.Context, scheduleID int64, key string) (model.Variable, error) {
	vars, err := s.db.ScheduleVariables(ctx, scheduleID)
	if err != nil {
		return model.Variable{}, err
	}
	for _, v := range vars {
		if v.Key == key {
			return v, nil
		}
	}
	return model.Variable{}, model.NotFound("Pipeline Schedule Variable")
}

// Variable returns one variable of a schedule to who may see the
// schedule's variables (read_pipeline_schedule_variables: maintainers, or
// the owner).
func (s *Service) Variable(ctx context.Context, a auth.Actor, projectRef string, id int64, key string) (model.Variable, error) {
	x, sc, err := s.schedule(ctx, a, projectRef, id)
	if err != nil {
		return model.Variable{}, err
	}
	if !x.admin(sc) {
		return model.Variable{}, model.Forbidden("")
	}
	return s.variable(ctx, sc.ID, key)
}

// UpdateVariable changes a schedule variable's value or type.
func (s *Service) UpdateVariable(ctx context.Context, a auth.Actor, projectRef string, id int64, key string, in VariableInput) (model.Variable, error) {
	sc, err := s.variableAccess(ctx, a, projectRef, id, false)
	if err != nil {
		return model.Variable{}, err
	}
	v, err := s.variable(ctx, sc.ID, key)
	if err != nil {
		return v, err
	}
	if in.Value != nil {
		v.Value = *in.Value
	}
	if in.VariableType != nil {
		v.VariableType = *in.VariableType
	}
	if err := checkVariable(v); err != nil {
		return v, err
	}
	err = s.db.InTx(ctx, func(tx *store.Tx) error { return tx.SetScheduleVariable(ctx, sc.ID, v, false) })
	if errors.Is(err, model.ErrNotFound) {
		return v, model.NotFound("Pipeline Schedule Variable")
	}
	return v, err
}

// DeleteVariable removes a schedule variable and returns it.
func (s *Service) DeleteVariable(ctx context.Context, a auth.Actor, projectRef string, id int64, key string) (model.Variable, error) {
	sc, err := s.variableAccess(ctx, a, projectRef, id, true)
	if err != nil {
		return model.Variable{}, err
	}
	v, err := s.variable(ctx, sc.ID, key)
	if err != nil {
		return v, err
	}
	err = s.db.InTx(ctx, func(tx *store.Tx) error { return tx.DeleteScheduleVariable(ctx, sc.ID, key) })
	if errors.Is(err, model.ErrNotFound) {
		return v, model.NotFound("Pipeline Schedule Variable")
	}
	return v, err
}
