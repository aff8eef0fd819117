package mergerequests

import (
	"quarry/internal/model"
)

// DetailedMergeStatus is GitLab's detailed_merge_status of a merge
// request read in detail (Get): what keeps it from merging, or
// "mergeable".
func (v View) DetailedMergeStatus() string {
	switch {
	case v.State != model.MRStateOpened:
		return "not_open"
	case v.Draft():
		return "draft_status"
	case v.MergeStatus == model.MergeUnchecked:
		return "unchecked"
	case v.Conflicts:
		return "broken_status"
	case v.MergeStatus == model.MergeCannotBeMerged:
		return "broken_status"
	case v.NotApproved:
		return "not_approved"
	case v.CIMustPass:
		return "ci_must_pass"
	case v.NeedRebase:
		return "need_rebase"
	}
	return "mergeable"
}
