package model

import "time"

// Approval rule types.
const (
	RuleAnyApprover    = "any_approver"
	RuleRegular        = "regular"
	RuleCodeOwner      = "code_owner"
	RuleReportApprover = "report_approver"
)

// ApprovalSettings are a project's approval settings (GitLab's defaults
// when never set: approvals reset on push, authors and committers may not
// approve… as below).
type ApprovalSettings struct {
	ProjectID                  int64
	ApprovalsBeforeMerge       int
	ResetApprovalsOnPush       bool
	SelectiveCodeOwnerRemovals bool
	DisableOverridingApprovers bool
	AuthorApproval             bool // merge_requests_author_approval: authors may approve
	DisableCommittersApproval  bool
	RequirePassword            bool
}

// DefaultApprovalSettings are GitLab's for a new project.
func DefaultApprovalSettings(projectID int64) ApprovalSettings {
	return ApprovalSettings{ProjectID: projectID, ResetApprovalsOnPush: true}
}

// ApprovalRule is a rule of a project (ProjectID) or of one merge request
// (MergeRequestID).
type ApprovalRule struct {
	ID                            int64
	ProjectID                     int64
	MergeRequestID                int64
	Name                          string
	RuleType                      string
	ApprovalsRequired             int
	SourceRuleID                  int64
	UserIDs                       []int64
	GroupIDs                      []int64
	ProtectedBranchIDs            []int64
	AppliesToAllProtectedBranches bool
	CreatedAt                     time.Time
	UpdatedAt                     time.Time
}

// Approval is one user's approval of a merge request.
type Approval struct {
	MergeRequestID int64
	UserID         int64
	CreatedAt      time.Time
}
