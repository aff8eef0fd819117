package store

import (
	"context"
	"database/sql"

	"quarry/internal/model"
)

// UniqueProtectedEnvironment allows one protection per project and
// environment name.
const UniqueProtectedEnvironment = "protected_environments_project_name_key"

func init() {
	sqliteColumnUniques["protected_environments.project_id, protected_environments.name"] = UniqueProtectedEnvironment
}

const protectedEnvironmentColumns = "id, project_id, name, required_approval_count, created_at"

// CreateProtectedEnvironment stores a protection with its grants.
func (tx *Tx) CreateProtectedEnvironment(ctx context.Context, e *model.ProtectedEnvironment) error {
	now := tx.Now()
	id, err := tx.insert(ctx, "INSERT INTO protected_environments (project_id, name, required_approval_count, created_at, updated_at) VALUES (?, ?, ?, ?, ?)",
		e.ProjectID, e.Name, e.RequiredApprovalCount, micros(now), micros(now))
	if err != nil {
		return err
	}
	e.ID, e.CreatedAt = id, now
	return tx.writeEnvironmentAccess(ctx, e)
}

// UpdateProtectedEnvironment rewrites a protection's approval count and
// grants; grants keep their ids.
func (tx *Tx) UpdateProtectedEnvironment(ctx context.Context, e *model.ProtectedEnvironment) error {
	if _, err := tx.exec(ctx, "UPDATE protected_environments SET required_approval_count = ?, updated_at = ? WHERE id = ?",
		e.RequiredApprovalCount, micros(tx.Now()), e.ID); err != nil {
		return err
	}
	if _, err := tx.exec(ctx, "DELETE FROM protected_environment_access_levels WHERE protected_environment_id = ?", e.ID); err != nil {
		return err
	}
	return tx.writeEnvironmentAccess(ctx, e)
}

func (tx *Tx) writeEnvironmentAccess(ctx context.Context, e *model.ProtectedEnvironment) error {
	for kind, list := range map[string][]model.EnvironmentAccess{"deploy": e.Deploy, "approval": e.ApprovalRules} {
		for i := range list {
			a := &list[i]
			var lvl any
			if a.AccessLevel != nil {
				lvl = int(*a.AccessLevel)
			}
			cols := "protected_environment_id, kind, access_level, user_id, group_id, group_inheritance_type, required_approvals"
			args := []any{e.ID, kind, lvl, a.UserID, a.GroupID, a.GroupInheritanceType, a.RequiredApprovals}
			if a.ID != 0 {
				cols, args = "id, "+cols, append([]any{a.ID}, args...)
			}
			id, err := tx.insert(ctx, "INSERT INTO protected_environment_access_levels ("+cols+") VALUES (?"+repeatArg(len(args)-1)+")", args...)
			if err != nil {
				return err
			}
			a.ID = id
		}
	}
	return nil
}

func repeatArg(n int) string {
	s := ""
	for range n {
		s += ", ?"
	}
	return s
}

// DeleteProtectedEnvironment removes a protection; false when it was
// gone already.
func (tx *Tx) DeleteProtectedEnvironment(ctx context.Context, id int64) (bool, error) {
	res, err := tx.exec(ctx, "DELETE FROM protected_environments WHERE id = ?", id)
	if err != nil {
		return false, err
	}
	n, err := res.RowsAffected()
	return n > 0, err
}

// ProtectedEnvironments returns a project's protections (with grants) by
// name; name, when not empty, selects that one environment.
func (tx *Tx) ProtectedEnvironments(ctx context.Context, projectID int64, name string) ([]model.ProtectedEnvironment, error) {
	var w where
	w.add("project_id = ?", projectID)
	if name != "" {
		w.add("name = ?", name)
	}
	var out []model.ProtectedEnvironment
	idx := map[int64]int{}
	err := tx.each(ctx, "SELECT "+protectedEnvironmentColumns+" FROM protected_environments"+w.sql()+" ORDER BY name, id", w.args, func(r *sql.Rows) error {
		var e model.ProtectedEnvironment
		err := r.Scan(&e.ID, &e.ProjectID, &e.Name, &e.RequiredApprovalCount, tsScan{&e.CreatedAt})
		idx[e.ID] = len(out)
		out = append(out, e)
		return err
	})
	if err != nil || len(out) == 0 {
		return out, err
	}
	ids := make([]int64, len(out))
	for i := range out {
		ids[i] = out[i].ID
	}
	err = tx.each(ctx, `SELECT id, protected_environment_id, kind, access_level, user_id, group_id, group_inheritance_type, required_approvals
		FROM protected_environment_access_levels WHERE protected_environment_id IN (`+placeholders(len(ids))+`) ORDER BY id`, int64Args(ids), func(r *sql.Rows) error {
		var a model.EnvironmentAccess
		var envID int64
		var kind string
		var lvl *int64
		if err := r.Scan(&a.ID, &envID, &kind, nullInt64Ptr{&lvl}, nullInt64Ptr{&a.UserID}, nullInt64Ptr{&a.GroupID}, &a.GroupInheritanceType, &a.RequiredApprovals); err != nil {
			return err
		}
		if lvl != nil {
			l := model.AccessLevel(*lvl)
			a.AccessLevel = &l
		}
		i, ok := idx[envID]
		if !ok {
			return nil
		}
		if kind == "deploy" {
			out[i].Deploy = append(out[i].Deploy, a)
		} else {
			out[i].ApprovalRules = append(out[i].ApprovalRules, a)
		}
		return nil
	})
	return out, err
}
