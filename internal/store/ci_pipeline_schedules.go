package store

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"quarry/internal/model"
)

// Pipeline schedules, their variables (sealed) and the pipelines they made.

const scheduleColumns = "id, project_id, owner_id, description, ref, cron, cron_timezone, active, next_run_at, created_at, updated_at"

func scheduleDest(s *model.PipelineSchedule) []any {
	return []any{&s.ID, &s.ProjectID, nullInt64{&s.OwnerID}, &s.Description, &s.Ref, &s.Cron, &s.CronTimezone, &s.Active,
		tsScan{&s.NextRunAt}, tsScan{&s.CreatedAt}, tsScan{&s.UpdatedAt}}
}

// UniqueScheduleVariable allows one variable per schedule and key.
const UniqueScheduleVariable = "ci_pipeline_schedule_variables_pkey"

func init() {
	sqliteColumnUniques["ci_pipeline_schedule_variables.schedule_id, ci_pipeline_schedule_variables.key"] = UniqueScheduleVariable
}

// CreatePipelineSchedule inserts s and sets its id and times.
func (tx *Tx) CreatePipelineSchedule(ctx context.Context, s *model.PipelineSchedule) error {
	now := tx.Now()
	s.CreatedAt, s.UpdatedAt = now, now
	var err error
	s.ID, err = tx.insert(ctx, `INSERT INTO ci_pipeline_schedules (project_id, owner_id, description, ref, cron, cron_timezone, active,
		next_run_at, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		s.ProjectID, zeroNull(s.OwnerID), s.Description, s.Ref, s.Cron, s.CronTimezone, s.Active, micros(s.NextRunAt), micros(now), micros(now))
	return err
}

// UpdatePipelineSchedule writes s's settings, owner and next run if the
// row still has the updated_at read (prev); false when another writer
// came first.
func (tx *Tx) UpdatePipelineSchedule(ctx context.Context, s *model.PipelineSchedule, prev time.Time) (bool, error) {
	now := tx.Now()
	if !now.After(prev) {
		// Two writes in one clock tick still differ.
		now = prev.Add(time.Microsecond)
	}
	n, err := tx.execN(ctx, `UPDATE ci_pipeline_schedules SET owner_id = ?, description = ?, ref = ?, cron = ?, cron_timezone = ?,
		active = ?, next_run_at = ?, updated_at = ? WHERE id = ? AND updated_at = ?`,
		zeroNull(s.OwnerID), s.Description, s.Ref, s.Cron, s.CronTimezone, s.Active, micros(s.NextRunAt), micros(now), s.ID, micros(prev))
	if err != nil || n == 0 {
		return false, err
	}
	s.UpdatedAt = now
	return true, nil
}

// ClaimPipelineSchedule moves an active schedule's next run from due to
// next, by compare-and-set: false when it is no longer active or another
// process claimed this run first.
func (tx *Tx) ClaimPipelineSchedule(ctx context.Context, id int64, due, next time.Time) (bool, error) {
	n, err := tx.execN(ctx, "UPDATE ci_pipeline_schedules SET next_run_at = ? WHERE id = ? AND active = ? AND next_run_at = ?",
		micros(next), id, true, micros(due))
	return n == 1, err
}

// DeletePipelineSchedule removes a schedule with its variables; its
// pipelines stay. model.ErrNotFound when it is gone.
func (tx *Tx) DeletePipelineSchedule(ctx context.Context, id int64) error {
	n, err := tx.execN(ctx, "DELETE FROM ci_pipeline_schedules WHERE id = ?", id)
	if err == nil && n == 0 {
		err = model.ErrNotFound
	}
	return err
}

// PipelineSchedule returns a schedule by id, or model.ErrNotFound.
func (tx *Tx) PipelineSchedule(ctx context.Context, id int64) (model.PipelineSchedule, error) {
	var s model.PipelineSchedule
	err := tx.row(ctx, scheduleDest(&s), "SELECT "+scheduleColumns+" FROM ci_pipeline_schedules WHERE id = ?", id)
	return s, err
}

// ScheduleFilter selects a project's schedules and their order.
type ScheduleFilter struct {
	ProjectID int64
	Scope     string // "", model.ScheduleScopeActive or model.ScheduleScopeInactive
	// OrderBy is id (default), description, ref, next_run_at, created_at
	// or updated_at; Desc reverses it.
	OrderBy string
	Desc    bool
}

// PipelineSchedules lists a project's schedules.
func (tx *Tx) PipelineSchedules(ctx context.Context, f ScheduleFilter, page model.Page) ([]model.PipelineSchedule, model.PageInfo, error) {
	var w where
	w.add("project_id = ?", f.ProjectID)
	switch f.Scope {
	case model.ScheduleScopeActive:
		w.add("active = ?", true)
	case model.ScheduleScopeInactive:
		w.add("active = ?", false)
	}
	o := order{desc: f.Desc}
	switch f.OrderBy {
	case "description", "ref", "next_run_at", "created_at", "updated_at":
		o.column = f.OrderBy
	}
	return list(ctx, tx, listSpec[model.PipelineSchedule]{
		columns: scheduleColumns, from: "ci_pipeline_schedules", idCol: "id", where: w, order: o,
		scan: func(r *sql.Rows) (model.PipelineSchedule, error) {
			var s model.PipelineSchedule
			return s, r.Scan(scheduleDest(&s)...)
		},
		keyOf: func(s model.PipelineSchedule) (any, int64) {
			switch f.OrderBy {
			case "description":
				return s.Description, s.ID
			case "ref":
				return s.Ref, s.ID
			case "next_run_at":
				return micros(s.NextRunAt), s.ID
			case "created_at":
				return micros(s.CreatedAt), s.ID
			case "updated_at":
				return micros(s.UpdatedAt), s.ID
			}
			return s.ID, s.ID
		},
	}, page)
}

// DuePipelineSchedules returns up to limit active schedules whose next run
// is at or before now, the longest waiting first.
func (tx *Tx) DuePipelineSchedules(ctx context.Context, now time.Time, limit int) ([]model.PipelineSchedule, error) {
	var out []model.PipelineSchedule
	err := tx.each(ctx, "SELECT "+scheduleColumns+" FROM ci_pipeline_schedules WHERE active = ? AND next_run_at <= ? ORDER BY next_run_at, id LIMIT ?",
		[]any{true, micros(now), limit}, func(r *sql.Rows) error {
			var s model.PipelineSchedule
			err := r.Scan(scheduleDest(&s)...)
			out = append(out, s)
			return err
		})
	return out, err
}

// SetScheduleVariable inserts or replaces one variable of a schedule, its
// value sealed.
func (tx *Tx) SetScheduleVariable(ctx context.Context, scheduleID int64, v model.Variable, insert bool) error {
	value, err := tx.sealValue(v.Value, sealScheduleVar)
	if err != nil {
		return err
	}
	if insert {
		_, err = tx.exec(ctx, "INSERT INTO ci_pipeline_schedule_variables (schedule_id, key, value, variable_type, created_at) VALUES (?, ?, ?, ?, ?)",
			scheduleID, v.Key, value, v.VariableType, micros(tx.Now()))
		return err
	}
	n, err := tx.execN(ctx, "UPDATE ci_pipeline_schedule_variables SET value = ?, variable_type = ? WHERE schedule_id = ? AND key = ?",
		value, v.VariableType, scheduleID, v.Key)
	if err == nil && n == 0 {
		err = model.ErrNotFound
	}
	return err
}

// DeleteScheduleVariable removes one variable of a schedule;
// model.ErrNotFound when there is none.
func (tx *Tx) DeleteScheduleVariable(ctx context.Context, scheduleID int64, key string) error {
	n, err := tx.execN(ctx, "DELETE FROM ci_pipeline_schedule_variables WHERE schedule_id = ? AND key = ?", scheduleID, key)
	if err == nil && n == 0 {
		err = model.ErrNotFound
	}
	return err
}

// ScheduleVariables returns a schedule's variables in the order they were
// made.
func (tx *Tx) ScheduleVariables(ctx context.Context, scheduleID int64) ([]model.Variable, error) {
	out := []model.Variable{}
	err := tx.each(ctx, "SELECT key, value, variable_type FROM ci_pipeline_schedule_variables WHERE schedule_id = ? ORDER BY created_at, key",
		[]any{scheduleID}, func(r *sql.Rows) error {
			var v model.Variable
			err := r.Scan(&v.Key, sealedText{tx, &v.Value, sealScheduleVar}, &v.VariableType)
			out = append(out, v)
			return err
		})
	return out, err
}

// CountScheduleVariables counts a schedule's variables.
func (tx *Tx) CountScheduleVariables(ctx context.Context, scheduleID int64) (int, error) {
	var n int
	err := tx.row(ctx, []any{&n}, "SELECT COUNT(*) FROM ci_pipeline_schedule_variables WHERE schedule_id = ?", scheduleID)
	return n, err
}

// LinkSchedulePipeline records that a schedule made a pipeline.
func (tx *Tx) LinkSchedulePipeline(ctx context.Context, scheduleID, pipelineID int64) error {
	_, err := tx.exec(ctx, "INSERT INTO ci_pipeline_schedule_pipelines (pipeline_id, schedule_id) VALUES (?, ?)", pipelineID, scheduleID)
	if err != nil {
		return fmt.Errorf("link pipeline %d to schedule %d: %w", pipelineID, scheduleID, err)
	}
	return nil
}

const schedulePipelines = "id IN (SELECT pipeline_id FROM ci_pipeline_schedule_pipelines WHERE schedule_id = ?)"

// SchedulePipelines lists the pipelines a schedule made, by id.
func (tx *Tx) SchedulePipelines(ctx context.Context, scheduleID int64, desc bool, page model.Page) ([]model.Pipeline, model.PageInfo, error) {
	var w where
	w.add(schedulePipelines, scheduleID)
	return list(ctx, tx, listSpec[model.Pipeline]{
		columns: pipelineColumns, from: "ci_pipelines", idCol: "id", where: w, order: order{desc: desc},
		scan: func(r *sql.Rows) (model.Pipeline, error) {
			var p model.Pipeline
			return p, r.Scan(pipelineDest(&p)...)
		},
		keyOf: func(p model.Pipeline) (any, int64) { return p.ID, p.ID },
	}, page)
}

// LastSchedulePipeline returns the newest pipeline a schedule made;
// ok is false when it made none.
func (tx *Tx) LastSchedulePipeline(ctx context.Context, scheduleID int64) (p model.Pipeline, ok bool, err error) {
	err = tx.each(ctx, "SELECT "+pipelineColumns+" FROM ci_pipelines WHERE "+schedulePipelines+" ORDER BY id DESC LIMIT 1",
		[]any{scheduleID}, func(r *sql.Rows) error {
			ok = true
			return r.Scan(pipelineDest(&p)...)
		})
	return p, ok, err
}
