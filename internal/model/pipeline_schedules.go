package model

import "time"

// PipelineSchedule is a project's pipeline schedule (GitLab's
// Ci::PipelineSchedule): the project's CI configuration run for Ref at the
// times of Cron in CronTimezone, as its owner. NextRunAt is when the
// scheduler takes it next; OwnerID 0 means its owner was removed.
type PipelineSchedule struct {
	ID           int64
	ProjectID    int64
	OwnerID      int64
	Description  string
	Ref          string
	Cron         string
	CronTimezone string
	Active       bool
	NextRunAt    time.Time
	CreatedAt    time.Time
	UpdatedAt    time.Time
}

// Pipeline schedule scopes (GET /projects/:id/pipeline_schedules?scope=).
const (
	ScheduleScopeActive   = "active"
	ScheduleScopeInactive = "inactive"
)
