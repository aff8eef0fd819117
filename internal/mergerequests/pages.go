package mergerequests

import (
	"context"

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

// HeadPipelines sets the head pipeline (as a detail shows it) of each
// merge request of a list, one lookup each: a list page is short.
func (s *Service) HeadPipelines(ctx context.Context, list []View) error {
	if s.pipelines == nil {
		return nil
	}
	for i := range list {
		m := &list[i]
		if m.HeadSHA == "" {
			continue
		}
		pl, err := s.pipelines.HeadPipeline(ctx, m.SourceProjectID, m.SourceBranch, m.HeadSHA)
		if err != nil {
			return err
		}
		m.HeadPipeline = pl
	}
	return nil
}
