package ci

import (
	"archive/zip"
	"context"
	"errors"
	"os"
	"sort"
	"strings"

	"quarry/internal/auth"
	"quarry/internal/model"
	"quarry/internal/store"
)

// What the web pages read of CI beyond the API's calls: a pipeline with
// its own jobs and bridges in one read, the jobs of a page of pipelines
// (their stages), and the entries of a job's archive. Each asks what the
// API's calls ask.

// maxGraphJobs bounds the jobs a pipeline's page (or a page of the
// pipelines list) reads.
const maxGraphJobs = 2000

// PipelineGraph is a pipeline with its own jobs and bridges (the latest
// of each, retried ones left out), for its page.
type PipelineGraph struct {
	PipelineView
	// Jobs are the pipeline's builds (when the actor may read jobs) and
	// bridges, oldest first.
	Jobs []JobView
	// Parent is the pipeline that made a child or downstream pipeline.
	Parent *model.Pipeline
	// MayRun: the actor may retry and cancel it and its jobs
	// (run_pipeline, and the right to update its ref when protected).
	MayRun bool
}

// PipelineWithJobs returns a pipeline and its own jobs (read_pipeline;
// builds only with read_build, as the API's jobs list).
func (s *Service) PipelineWithJobs(ctx context.Context, a auth.Actor, projectRef string, id int64) (PipelineGraph, error) {
	p, acc, err := s.project(ctx, a, projectRef, auth.ReadPipeline)
	if err != nil {
		return PipelineGraph{}, err
	}
	pl, err := s.pipelineIn(ctx, s.db.Tx, p.ID, id)
	if err != nil {
		return PipelineGraph{}, err
	}
	res := auth.Resource{Project: &p, Access: acc}
	kinds := []string{model.JobBridge}
	if auth.Can(a, auth.ReadJob, res) {
		kinds = append(kinds, model.JobBuild)
	}
	jobs, _, err := s.db.Jobs(ctx, store.JobFilter{ProjectID: p.ID, PipelineIDs: []int64{pl.ID}, Kinds: kinds},
		model.Page{Number: 1, PerPage: maxGraphJobs})
	if err != nil {
		return PipelineGraph{}, err
	}
	sort.SliceStable(jobs, func(i, j int) bool { return jobs[i].ID < jobs[j].ID })
	var g PipelineGraph
	// As RetryPipeline and CancelPipeline decide: run_pipeline, and on a
	// protected ref the right to push or merge to it.
	if g.MayRun, err = s.mayRunOn(ctx, a, &p, acc, pl.Ref, pl.Tag); err != nil {
		return PipelineGraph{}, err
	}
	if g.PipelineView, err = s.pipelineView(ctx, p, pl); err != nil {
		return PipelineGraph{}, err
	}
	if g.Jobs, err = s.jobViews(ctx, p, jobs); err != nil {
		return PipelineGraph{}, err
	}
	if pl.ParentID != 0 {
		if parent, err := s.db.Pipeline(ctx, pl.ParentID); err == nil && parent.ProjectID == p.ID {
			g.Parent = &parent
		}
	}
	return g, nil
}

// PipelinesJobs returns the latest jobs and bridges of a project's
// pipelines ids (read_pipeline), which the pipelines list shows as
// stages; ids of other projects are left out.
func (s *Service) PipelinesJobs(ctx context.Context, a auth.Actor, projectRef string, ids []int64) ([]model.Job, error) {
	p, _, err := s.project(ctx, a, projectRef, auth.ReadPipeline)
	if err != nil || len(ids) == 0 {
		return nil, err
	}
	jobs, _, err := s.db.Jobs(ctx, store.JobFilter{ProjectID: p.ID, PipelineIDs: ids, Kinds: []string{model.JobBuild, model.JobBridge}},
		model.Page{Number: 1, PerPage: maxGraphJobs})
	return jobs, err
}

// RunRef is a ref pipelines and jobs run for.
type RunRef struct {
	Ref string
	Tag bool
}

// MayRunRefs reports, for each ref, whether a may retry, cancel and play
// a project's pipelines and jobs of that ref: the rule RetryJob,
// CancelJob, PlayJob, RetryPipeline and CancelPipeline apply when the
// action is posted (run_pipeline; on a protected branch the right to
// push or merge to it, on a protected tag the right to create it). The
// protection rules are read once for all the refs.
func (s *Service) MayRunRefs(ctx context.Context, a auth.Actor, projectRef string, refs []RunRef) (map[RunRef]bool, error) {
	p, acc, err := s.project(ctx, a, projectRef, auth.ReadPipeline)
	if err != nil {
		return nil, err
	}
	out := make(map[RunRef]bool, len(refs))
	if len(refs) == 0 || !auth.Can(a, auth.RunPipeline, auth.Resource{Project: &p, Access: acc}) {
		return out, nil
	}
	rules, err := s.db.ProtectedBranches(ctx, p.ID, "")
	if err != nil && !errors.Is(err, model.ErrNotFound) {
		return nil, err
	}
	var tags []model.ProtectedTag
	for _, r := range refs {
		if _, done := out[r]; done {
			continue
		}
		if !r.Tag {
			res := auth.Resource{Project: &p, Access: acc, Branch: &auth.Branch{Name: r.Ref, Rules: rules}}
			out[r] = auth.Can(a, auth.PushCode, res) || auth.Can(a, auth.MergeCode, res)
			continue
		}
		if tags == nil {
			if tags, err = s.db.ProtectedTags(ctx, p.ID); err != nil {
				return nil, err
			}
			if tags == nil {
				tags = []model.ProtectedTag{}
			}
		}
		ok := len(model.ProtectedTagsMatching(tags, r.Ref)) == 0
		if !ok {
			today := s.now().UTC().Format(model.DateLayout)
			inGroup := func(groupID int64) bool {
				in, err := s.db.UserInGroup(ctx, groupID, a.UserID(), true, today)
				return err == nil && in
			}
			ok = auth.CanCreateTag(a, acc, r.Ref, tags, inGroup)
		}
		out[r] = ok
	}
	return out, nil
}

// HeadRef names a merge request's head pipeline: its source project,
// branch and head commit.
type HeadRef struct {
	ProjectID int64
	Branch    string
	SHA       string
}

// HeadPipelines is HeadPipeline of a page of merge requests, in one
// read: the newest pipeline of each ref that has one.
func (s *Service) HeadPipelines(ctx context.Context, refs []HeadRef) (map[HeadRef]model.Pipeline, error) {
	keys := make([]store.HeadKey, 0, len(refs))
	for _, r := range refs {
		if r.SHA != "" {
			keys = append(keys, store.HeadKey{ProjectID: r.ProjectID, Ref: r.Branch, SHA: r.SHA})
		}
	}
	found, err := s.db.HeadPipelines(ctx, keys)
	if err != nil {
		return nil, err
	}
	out := make(map[HeadRef]model.Pipeline, len(found))
	for k, pl := range found {
		out[HeadRef{ProjectID: k.ProjectID, Branch: k.Ref, SHA: k.SHA}] = pl
	}
	return out, nil
}

// ArtifactEntry is one file or folder of a job's archive.
type ArtifactEntry struct {
	Path string // slash-separated; folders end in "/"
	Size int64
	Dir  bool
}

// maxArtifactEntries bounds the entries a listing of an archive reads.
const maxArtifactEntries = 10000

// JobArtifactEntries lists the entries of a job's archive, by path, as
// the archive's download allows (404 without one, 403 when its
// artifacts:access keeps it from a); more reports entries left out.
func (s *Service) JobArtifactEntries(ctx context.Context, a auth.Actor, projectRef string, jobID int64) (entries []ArtifactEntry, more bool, err error) {
	p, acc, j, err := s.jobAction(ctx, a, projectRef, jobID, auth.ReadJob, model.JobBuild)
	if err != nil {
		return nil, false, err
	}
	arch, err := s.archiveOf(ctx, a, p, acc, j)
	if err != nil {
		return nil, false, err
	}
	defer arch.Close()
	f, ok := arch.ReadCloser.(*os.File)
	if !ok {
		return nil, false, model.NotFound("")
	}
	zr, err := zip.NewReader(f, arch.Size)
	if err != nil {
		return nil, false, model.NotFound("")
	}
	seen := map[string]bool{}
	add := func(e ArtifactEntry) {
		if seen[e.Path] {
			return
		}
		if len(entries) >= maxArtifactEntries {
			more = true
			return
		}
		seen[e.Path] = true
		entries = append(entries, e)
	}
	for _, e := range zr.File {
		name := e.Name
		if name == "" || strings.HasPrefix(name, "/") || strings.Contains(name, "\\") || strings.Contains("/"+name, "/../") {
			continue
		}
		// Folders an entry's path implies, though the archive may not
		// hold them.
		for i := 0; i < len(name)-1; i++ {
			if name[i] == '/' {
				add(ArtifactEntry{Path: name[:i+1], Dir: true})
			}
		}
		if e.FileInfo().IsDir() || strings.HasSuffix(name, "/") {
			add(ArtifactEntry{Path: strings.TrimSuffix(name, "/") + "/", Dir: true})
			continue
		}
		add(ArtifactEntry{Path: name, Size: int64(e.UncompressedSize64)})
	}
	sort.Slice(entries, func(i, j int) bool { return entries[i].Path < entries[j].Path })
	return entries, more, nil
}
