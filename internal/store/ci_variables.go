package store

import (
	"context"
	"database/sql"
	"fmt"

	"quarry/internal/model"
)

// CI/CD variables of projects, groups and the instance, and pipeline
// trigger tokens.

// UniqueCIVariable allows one variable per owner, key and environment
// scope (the instance's have neither owner column set, and scope "*").
const UniqueCIVariable = "ci_variables_key"

const ciVariableColumns = `id, project_id, group_id, key, value, variable_type, protected, masked, hidden, raw, environment_scope,
	description, created_at, updated_at`

// The value is sealed (secrets.go).
func (tx *Tx) ciVariableDest(v *model.CIVariable, projectID, groupID *int64) []any {
	return []any{&v.ID, nullInt64{projectID}, nullInt64{groupID}, &v.Key, sealedText{tx, &v.Value, sealVariableValue}, &v.VariableType,
		&v.Protected, &v.Masked, &v.Hidden, &v.Raw, &v.EnvironmentScope, nullString{&v.Description}, tsScan{&v.CreatedAt}, tsScan{&v.UpdatedAt}}
}

func (tx *Tx) scanCIVariable(r *sql.Rows) (model.CIVariable, error) {
	var v model.CIVariable
	var p, g int64
	err := r.Scan(tx.ciVariableDest(&v, &p, &g)...)
	switch {
	case g != 0:
		v.OwnerType, v.OwnerID = model.OwnerGroup, g
	case p != 0:
		v.OwnerType, v.OwnerID = model.OwnerProject, p
	default:
		v.OwnerType = model.OwnerInstance
	}
	return v, err
}

// ownerColumns is the owner's column pair as arguments: NULL where the
// owner is not of that kind, both for the instance.
func ownerColumns(ownerType string, ownerID int64) (project, group any) {
	switch ownerType {
	case model.OwnerGroup:
		return nil, ownerID
	case model.OwnerInstance:
		return nil, nil
	}
	return ownerID, nil
}

// ownerCond selects one owner's variables (ownerArgs), in the terms of
// the unique index ci_variables_key, which serves it on both engines.
const ownerCond = "COALESCE(project_id, 0) = ? AND COALESCE(group_id, 0) = ?"

func ownerArgs(ownerType string, ownerID int64) []any {
	switch ownerType {
	case model.OwnerGroup:
		return []any{0, ownerID}
	case model.OwnerInstance:
		return []any{0, 0}
	}
	return []any{ownerID, 0}
}

// CreateCIVariable stores v, its value sealed (a clash of owner, key and scope is
// UniqueCIVariable).
func (tx *Tx) CreateCIVariable(ctx context.Context, v *model.CIVariable) error {
	now := tx.Now()
	v.CreatedAt, v.UpdatedAt = now, now
	p, g := ownerColumns(v.OwnerType, v.OwnerID)
	value, err := tx.sealValue(v.Value, sealVariableValue)
	if err != nil {
		return err
	}
	v.ID, err = tx.insert(ctx, `INSERT INTO ci_variables (project_id, group_id, key, value, variable_type, protected, masked, hidden,
		raw, environment_scope, description, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		p, g, v.Key, value, v.VariableType, v.Protected, v.Masked, v.Hidden, v.Raw, v.EnvironmentScope, emptyNull(v.Description),
		micros(now), micros(now))
	return err
}

// UpdateCIVariable rewrites a variable's attributes.
func (tx *Tx) UpdateCIVariable(ctx context.Context, v *model.CIVariable) error {
	v.UpdatedAt = tx.Now()
	value, err := tx.sealValue(v.Value, sealVariableValue)
	if err != nil {
		return err
	}
	_, err = tx.exec(ctx, `UPDATE ci_variables SET key = ?, value = ?, variable_type = ?, protected = ?, masked = ?, hidden = ?, raw = ?,
		environment_scope = ?, description = ?, updated_at = ? WHERE id = ?`, v.Key, value, v.VariableType, v.Protected, v.Masked,
		v.Hidden, v.Raw, v.EnvironmentScope, emptyNull(v.Description), micros(v.UpdatedAt), v.ID)
	return err
}

// DeleteCIVariable removes a variable.
func (tx *Tx) DeleteCIVariable(ctx context.Context, id int64) error {
	_, err := tx.exec(ctx, "DELETE FROM ci_variables WHERE id = ?", id)
	return err
}

// CIVariablesByKey returns an owner's variables of one key (one per
// environment scope).
func (tx *Tx) CIVariablesByKey(ctx context.Context, ownerType string, ownerID int64, key string) ([]model.CIVariable, error) {
	return tx.ciVariables(ctx, " WHERE "+ownerCond+" AND key = ?", append(ownerArgs(ownerType, ownerID), key)...)
}

// ciVariables returns the variables the condition picks, by id.
func (tx *Tx) ciVariables(ctx context.Context, cond string, args ...any) ([]model.CIVariable, error) {
	var out []model.CIVariable
	err := tx.each(ctx, "SELECT "+ciVariableColumns+" FROM ci_variables"+cond+" ORDER BY id", args, func(r *sql.Rows) error {
		v, err := tx.scanCIVariable(r)
		out = append(out, v)
		return err
	})
	return out, err
}

// CountCIVariables counts an owner's variables.
func (tx *Tx) CountCIVariables(ctx context.Context, ownerType string, ownerID int64) (int, error) {
	var n int
	err := tx.row(ctx, []any{&n}, "SELECT COUNT(*) FROM ci_variables WHERE "+ownerCond, ownerArgs(ownerType, ownerID)...)
	return n, err
}

// LockCIVariables keeps every other transaction from adding to or
// removing from an owner's variables until this one ends, so a count it
// reads still holds when it writes (a limit of the number of
// variables). On PostgreSQL it takes a transaction-scoped advisory lock
// named by the schema and the owner; on SQLite the transaction holds the
// only writer already.
func (tx *Tx) LockCIVariables(ctx context.Context, ownerType string, ownerID int64) error {
	if tx.dialect != Postgres {
		return nil
	}
	_, err := tx.exec(ctx, "SELECT pg_advisory_xact_lock(hashtextextended(current_schema() || ?, 0))",
		fmt.Sprintf("/ci_variables/%s/%d", ownerType, ownerID))
	return err
}

// CIVariables lists an owner's variables by id.
func (tx *Tx) CIVariables(ctx context.Context, ownerType string, ownerID int64, page model.Page) ([]model.CIVariable, model.PageInfo, error) {
	var w where
	w.add(ownerCond, ownerArgs(ownerType, ownerID)...)
	return list(ctx, tx, listSpec[model.CIVariable]{
		columns: ciVariableColumns, from: "ci_variables", idCol: "id", where: w, scan: tx.scanCIVariable,
		keyOf: func(v model.CIVariable) (any, int64) { return v.ID, v.ID },
	}, page)
}

// GroupsCIVariables returns every variable of the given groups (a
// project's ancestors), by id.
func (tx *Tx) GroupsCIVariables(ctx context.Context, groupIDs []int64) ([]model.CIVariable, error) {
	if len(groupIDs) == 0 {
		return nil, nil
	}
	return tx.ciVariables(ctx, " WHERE group_id IN ("+placeholders(len(groupIDs))+")", anys(groupIDs)...)
}

// ProjectCIVariables returns every variable of a project, by id.
func (tx *Tx) ProjectCIVariables(ctx context.Context, projectID int64) ([]model.CIVariable, error) {
	return tx.ciVariables(ctx, " WHERE "+ownerCond, ownerArgs(model.OwnerProject, projectID)...)
}

// CIVariablesInScope returns, in one statement, the variables a
// project's pipelines see before their scopes and protection are
// applied: the instance's, its groups' (groupIDs) and the project's,
// each list by id, as InstanceCIVariables, GroupsCIVariables and
// ProjectCIVariables return them.
func (tx *Tx) CIVariablesInScope(ctx context.Context, projectID int64, groupIDs []int64) (instance, groups, project []model.CIVariable,
	err error) {
	cond := " WHERE COALESCE(group_id, 0) = 0 AND COALESCE(project_id, 0) IN (0, ?)"
	args := []any{projectID}
	if len(groupIDs) > 0 {
		cond += " OR group_id IN (" + placeholders(len(groupIDs)) + ")"
		args = append(args, anys(groupIDs)...)
	}
	all, err := tx.ciVariables(ctx, cond, args...)
	if err != nil {
		return nil, nil, nil, err
	}
	for _, v := range all {
		switch v.OwnerType {
		case model.OwnerInstance:
			instance = append(instance, v)
		case model.OwnerGroup:
			groups = append(groups, v)
		default:
			project = append(project, v)
		}
	}
	return instance, groups, project, nil
}

// InstanceCIVariables returns every variable of the instance, by id.
func (tx *Tx) InstanceCIVariables(ctx context.Context) ([]model.CIVariable, error) {
	return tx.ciVariables(ctx, " WHERE "+ownerCond, ownerArgs(model.OwnerInstance, 0)...)
}

const triggerColumns = "id, project_id, owner_id, description, token_digest, token_hint, last_used, expires_at, created_at, updated_at"

func triggerDest(t *model.Trigger) []any {
	return []any{&t.ID, &t.ProjectID, nullInt64{&t.OwnerID}, &t.Description, &t.TokenDigest, &t.TokenHint, nullTSScan{&t.LastUsed},
		nullString{&t.ExpiresAt}, tsScan{&t.CreatedAt}, tsScan{&t.UpdatedAt}}
}

// CreateTrigger stores a trigger token's record.
func (tx *Tx) CreateTrigger(ctx context.Context, t *model.Trigger) error {
	now := tx.Now()
	t.CreatedAt, t.UpdatedAt = now, now
	var err error
	t.ID, err = tx.insert(ctx, `INSERT INTO ci_triggers (project_id, owner_id, description, token_digest, token_hint, expires_at,
		created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`, t.ProjectID, zeroNull(t.OwnerID), t.Description, t.TokenDigest,
		t.TokenHint, emptyNull(t.ExpiresAt), micros(now), micros(now))
	return err
}

// Trigger returns a project's trigger by id.
func (tx *Tx) Trigger(ctx context.Context, projectID, id int64) (model.Trigger, error) {
	var t model.Trigger
	err := tx.row(ctx, triggerDest(&t), "SELECT "+triggerColumns+" FROM ci_triggers WHERE project_id = ? AND id = ?", projectID, id)
	return t, err
}

// TriggerByDigest returns the trigger whose token hashes to digest.
func (tx *Tx) TriggerByDigest(ctx context.Context, digest string) (model.Trigger, error) {
	var t model.Trigger
	err := tx.row(ctx, triggerDest(&t), "SELECT "+triggerColumns+" FROM ci_triggers WHERE token_digest = ?", digest)
	return t, err
}

// Triggers lists a project's triggers by id.
func (tx *Tx) Triggers(ctx context.Context, projectID int64, page model.Page) ([]model.Trigger, model.PageInfo, error) {
	var w where
	w.add("project_id = ?", projectID)
	return list(ctx, tx, listSpec[model.Trigger]{
		columns: triggerColumns, from: "ci_triggers", idCol: "id", where: w,
		scan: func(r *sql.Rows) (model.Trigger, error) {
			var t model.Trigger
			return t, r.Scan(triggerDest(&t)...)
		},
		keyOf: func(t model.Trigger) (any, int64) { return t.ID, t.ID },
	}, page)
}

// UpdateTrigger rewrites a trigger's description.
func (tx *Tx) UpdateTrigger(ctx context.Context, t *model.Trigger) error {
	t.UpdatedAt = tx.Now()
	_, err := tx.exec(ctx, "UPDATE ci_triggers SET description = ?, updated_at = ? WHERE id = ?", t.Description, micros(t.UpdatedAt), t.ID)
	return err
}

// TouchTrigger records a trigger's use.
func (tx *Tx) TouchTrigger(ctx context.Context, id int64) error {
	_, err := tx.exec(ctx, "UPDATE ci_triggers SET last_used = ? WHERE id = ?", micros(tx.Now()), id)
	return err
}

// DeleteTrigger removes a trigger.
func (tx *Tx) DeleteTrigger(ctx context.Context, id int64) error {
	_, err := tx.exec(ctx, "DELETE FROM ci_triggers WHERE id = ?", id)
	return err
}
