package store

import (
	"context"
	"database/sql"

	"quarry/internal/model"
)

// Reads of many rows at once for the pages that list them: the approval
// state of a page of merge requests, the head pipelines of a page of
// merge requests. Each costs a fixed number of statements, whatever the
// number of ids.

// MergeRequestsApprovalRules lists the own rules of merge requests, by
// merge request, each by id.
func (tx *Tx) MergeRequestsApprovalRules(ctx context.Context, mrIDs []int64) (map[int64][]model.ApprovalRule, error) {
	out := map[int64][]model.ApprovalRule{}
	if len(mrIDs) == 0 {
		return out, nil
	}
	rules, err := tx.rules(ctx, "merge_request_id IN ("+placeholders(len(mrIDs))+")", anys(mrIDs)...)
	for _, r := range rules {
		out[r.MergeRequestID] = append(out[r.MergeRequestID], r)
	}
	return out, err
}

// ApprovalsOf lists the approvals of merge requests, by merge request,
// each oldest first.
func (tx *Tx) ApprovalsOf(ctx context.Context, mrIDs []int64) (map[int64][]model.Approval, error) {
	out := map[int64][]model.Approval{}
	if len(mrIDs) == 0 {
		return out, nil
	}
	err := tx.each(ctx, "SELECT merge_request_id, user_id, created_at FROM approvals WHERE merge_request_id IN ("+placeholders(len(mrIDs))+
		") ORDER BY created_at, user_id", anys(mrIDs), func(r *sql.Rows) error {
		var a model.Approval
		if err := r.Scan(&a.MergeRequestID, &a.UserID, tsScan{&a.CreatedAt}); err != nil {
			return err
		}
		out[a.MergeRequestID] = append(out[a.MergeRequestID], a)
		return nil
	})
	return out, err
}

// GroupsMemberIDs is GroupMemberIDs of several groups: each group's
// members, by user id.
func (tx *Tx) GroupsMemberIDs(ctx context.Context, groupIDs []int64, today string) (map[int64][]int64, error) {
	out := map[int64][]int64{}
	if len(groupIDs) == 0 {
		return out, nil
	}
	args := append(anys(groupIDs), today)
	err := tx.each(ctx, `SELECT DISTINCT namespace_id, user_id FROM namespace_authorizations WHERE namespace_id IN (`+placeholders(len(groupIDs))+`)
		AND (expires_at IS NULL OR expires_at > ?) ORDER BY namespace_id, user_id`, args, func(r *sql.Rows) error {
		var gid, uid int64
		if err := r.Scan(&gid, &uid); err != nil {
			return err
		}
		out[gid] = append(out[gid], uid)
		return nil
	})
	return out, err
}

// HeadKey names the head pipeline of a merge request: its source
// project, branch and head commit.
type HeadKey struct {
	ProjectID int64
	Ref, SHA  string
}

// HeadPipelines is HeadPipeline of several keys: the newest pipeline
// (children left out) of each key that has one.
func (tx *Tx) HeadPipelines(ctx context.Context, keys []HeadKey) (map[HeadKey]model.Pipeline, error) {
	out := map[HeadKey]model.Pipeline{}
	if len(keys) == 0 {
		return out, nil
	}
	want := map[HeadKey]bool{}
	var projects, shas []any
	seenP, seenS := map[int64]bool{}, map[string]bool{}
	for _, k := range keys {
		want[k] = true
		if !seenP[k.ProjectID] {
			seenP[k.ProjectID] = true
			projects = append(projects, k.ProjectID)
		}
		if !seenS[k.SHA] {
			seenS[k.SHA] = true
			shas = append(shas, k.SHA)
		}
	}
	q := "SELECT " + pipelineColumns + " FROM ci_pipelines WHERE project_id IN (" + placeholders(len(projects)) + ") AND sha IN (" +
		placeholders(len(shas)) + ") AND parent_id IS NULL ORDER BY id DESC"
	err := tx.each(ctx, q, append(projects, shas...), func(r *sql.Rows) error {
		var p model.Pipeline
		if err := r.Scan(pipelineDest(&p)...); err != nil {
			return err
		}
		k := HeadKey{ProjectID: p.ProjectID, Ref: p.Ref, SHA: p.SHA}
		if _, done := out[k]; want[k] && !done {
			out[k] = p
		}
		return nil
	})
	return out, err
}
