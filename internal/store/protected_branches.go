package store

import (
	"context"
	"database/sql"

	"quarry/internal/model"
)

// UniqueProtectedBranch allows one rule per project and name.
const UniqueProtectedBranch = "protected_branches_project_name_key"

func init() {
	sqliteColumnUniques["protected_branches.project_id, protected_branches.name"] = UniqueProtectedBranch
}

// CreateProtectedBranch stores a rule with its access grants.
func (tx *Tx) CreateProtectedBranch(ctx context.Context, b *model.ProtectedBranch) error {
	now := tx.Now()
	id, err := tx.insert(ctx, `INSERT INTO protected_branches (project_id, name, allow_force_push, code_owner_approval_required, created_at, updated_at)
		VALUES (?, ?, ?, ?, ?, ?)`, b.ProjectID, b.Name, b.AllowForcePush, b.CodeOwnerApprovalRequired, micros(now), micros(now))
	if err != nil {
		return err
	}
	b.ID, b.CreatedAt = id, now
	return tx.writeBranchAccess(ctx, b)
}

// UpdateProtectedBranch rewrites a rule's flags and grants.
func (tx *Tx) UpdateProtectedBranch(ctx context.Context, b *model.ProtectedBranch) error {
	if _, err := tx.exec(ctx, "UPDATE protected_branches SET allow_force_push = ?, code_owner_approval_required = ?, updated_at = ? WHERE id = ?",
		b.AllowForcePush, b.CodeOwnerApprovalRequired, micros(tx.Now()), b.ID); err != nil {
		return err
	}
	if _, err := tx.exec(ctx, "DELETE FROM protected_branch_access_levels WHERE protected_branch_id = ?", b.ID); err != nil {
		return err
	}
	return tx.writeBranchAccess(ctx, b)
}

func (tx *Tx) writeBranchAccess(ctx context.Context, b *model.ProtectedBranch) error {
	for kind, list := range map[string][]model.BranchAccess{"push": b.Push, "merge": b.Merge, "unprotect": b.Unprotect} {
		for i := range list {
			var lvl any
			if list[i].AccessLevel != nil {
				lvl = int(*list[i].AccessLevel)
			}
			id, err := tx.insert(ctx, "INSERT INTO protected_branch_access_levels (protected_branch_id, kind, access_level, user_id, group_id) VALUES (?, ?, ?, ?, ?)",
				b.ID, kind, lvl, list[i].UserID, list[i].GroupID)
			if err != nil {
				return err
			}
			list[i].ID = id
		}
	}
	return nil
}

// DeleteProtectedBranch removes a rule.
func (tx *Tx) DeleteProtectedBranch(ctx context.Context, id int64) error {
	_, err := tx.exec(ctx, "DELETE FROM protected_branches WHERE id = ?", id)
	return err
}

// ProtectedBranches returns a project's rules (with grants), by name.
func (tx *Tx) ProtectedBranches(ctx context.Context, projectID int64, search string) ([]model.ProtectedBranch, error) {
	var w where
	w.add("b.project_id = ?", projectID)
	if search != "" {
		w.add(tx.ilike("b.name"), likePattern(search))
	}
	// One statement: each branch with its access levels (none: one row
	// of NULLs), branches in name order, levels in id order.
	var out []model.ProtectedBranch
	err := tx.each(ctx, `SELECT b.id, b.project_id, b.name, b.allow_force_push, b.code_owner_approval_required, b.created_at,
		a.id, a.kind, a.access_level, a.user_id, a.group_id FROM protected_branches b
		LEFT JOIN protected_branch_access_levels a ON a.protected_branch_id = b.id`+w.sql()+" ORDER BY b.name, b.id, a.id", w.args,
		func(r *sql.Rows) error {
			var b model.ProtectedBranch
			var aid, lvl *int64
			var kind string
			var a model.BranchAccess
			if err := r.Scan(&b.ID, &b.ProjectID, &b.Name, &b.AllowForcePush, &b.CodeOwnerApprovalRequired, tsScan{&b.CreatedAt},
				nullInt64Ptr{&aid}, nullString{&kind}, nullInt64Ptr{&lvl}, nullInt64Ptr{&a.UserID}, nullInt64Ptr{&a.GroupID}); err != nil {
				return err
			}
			if n := len(out); n == 0 || out[n-1].ID != b.ID {
				out = append(out, b)
			}
			if aid == nil {
				return nil
			}
			a.ID = *aid
			if lvl != nil {
				l := model.AccessLevel(*lvl)
				a.AccessLevel = &l
			}
			last := &out[len(out)-1]
			switch kind {
			case "push":
				last.Push = append(last.Push, a)
			case "merge":
				last.Merge = append(last.Merge, a)
			default:
				last.Unprotect = append(last.Unprotect, a)
			}
			return nil
		})
	return out, err
}
