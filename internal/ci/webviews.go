package ci

import (
	"archive/zip"
	"context"
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
	// MayRun: the actor may retry and cancel (run_pipeline).
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
	g := PipelineGraph{MayRun: auth.Can(a, auth.RunPipeline, res)}
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

// MayRunPipelines reports whether a may retry, cancel and play a
// project's pipelines and jobs (run_pipeline), as the API decides
// before it looks at a ref's protection.
func (s *Service) MayRunPipelines(ctx context.Context, a auth.Actor, projectRef string) (bool, error) {
	p, acc, err := s.project(ctx, a, projectRef, auth.ReadPipeline)
	if err != nil {
		return false, err
	}
	return auth.Can(a, auth.RunPipeline, auth.Resource{Project: &p, Access: acc}), nil
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
