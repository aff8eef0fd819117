package entity

import "quarry/internal/model"

// PipelineSchedule is GitLab's Entities::Ci::PipelineSchedule.
type PipelineSchedule struct {
	ID           int64      `json:"id"`
	Description  string     `json:"description"`
	Ref          string     `json:"ref"`
	Cron         string     `json:"cron"`
	CronTimezone string     `json:"cron_timezone"`
	NextRunAt    Time       `json:"next_run_at"`
	Active       bool       `json:"active"`
	CreatedAt    Time       `json:"created_at"`
	UpdatedAt    Time       `json:"updated_at"`
	Owner        *UserBasic `json:"owner"`
}

// PipelineScheduleDetails adds the last pipeline and, for who may see
// them, the variables (Entities::Ci::PipelineScheduleDetails).
type PipelineScheduleDetails struct {
	PipelineSchedule
	LastPipeline *PipelineBasic      `json:"last_pipeline"`
	Variables    *[]PipelineVariable `json:"variables,omitempty"`
}

// PipelineSchedule renders a schedule's list form.
func (r *Renderer) PipelineSchedule(s model.PipelineSchedule, owner *model.User) PipelineSchedule {
	out := PipelineSchedule{ID: s.ID, Description: s.Description, Ref: s.Ref, Cron: s.Cron, CronTimezone: s.CronTimezone,
		NextRunAt: Time(s.NextRunAt), Active: s.Active, CreatedAt: Time(s.CreatedAt), UpdatedAt: Time(s.UpdatedAt)}
	if owner != nil {
		u := r.UserBasic(owner)
		out.Owner = &u
	}
	return out
}

// PipelineScheduleDetails renders a schedule with its last pipeline (of
// the project at projectPath) and, when vars is not nil, its variables.
func (r *Renderer) PipelineScheduleDetails(s model.PipelineSchedule, owner *model.User, last *model.Pipeline, projectPath string, vars []model.Variable) PipelineScheduleDetails {
	out := PipelineScheduleDetails{PipelineSchedule: r.PipelineSchedule(s, owner)}
	if last != nil {
		b := r.PipelineBasic(*last, projectPath)
		out.LastPipeline = &b
	}
	if vars != nil {
		list := make([]PipelineVariable, len(vars))
		for i, v := range vars {
			list[i] = ScheduleVariable(v)
		}
		out.Variables = &list
	}
	return out
}

// ScheduleVariable renders a schedule's variable (Entities::Ci::Variable
// of a Ci::PipelineScheduleVariable).
func ScheduleVariable(v model.Variable) PipelineVariable {
	return PipelineVariable{Key: v.Key, VariableType: v.VariableType, Value: v.Value}
}
