package ci

import (
	"archive/zip"
	"context"
	"errors"
	"io"
	"os"
	"path"
	"strconv"
	"strings"
	"time"

	"quarry/internal/auth"
	"quarry/internal/model"
	"quarry/internal/store"
	"quarry/internal/tasks"
)

// Job artifacts as users reach them: a job's archive, one file out of it,
// the archive of the latest successful job of a name on a ref; keeping,
// deleting and expiring them.

// ArtifactFile is an open artifact (or one entry of an archive) to send.
type ArtifactFile struct {
	io.ReadCloser
	Name string
	Size int64 // -1: unknown
}

// JobArchive opens a job's archive (who may read the job and its
// artifacts; 404 without one).
func (s *Service) JobArchive(ctx context.Context, a auth.Actor, projectRef string, jobID int64) (ArtifactFile, error) {
	p, acc, j, err := s.jobAction(ctx, a, projectRef, jobID, auth.ReadJob, model.JobBuild)
	if err != nil {
		return ArtifactFile{}, err
	}
	return s.archiveOf(ctx, a, p, acc, j)
}

// archiveOf opens job j's archive for a, who reads j's project with
// access acc: 404 without one, 403 when its artifacts:access keeps it
// from a.
func (s *Service) archiveOf(ctx context.Context, a auth.Actor, p model.Project, acc model.AccessLevel, j model.Job) (ArtifactFile, error) {
	rc, art, err := s.openArchive(ctx, j)
	if err != nil {
		return ArtifactFile{}, model.NotFound("")
	}
	if !mayDownload(a, p, acc, j) {
		rc.Close()
		return ArtifactFile{}, model.Forbidden("")
	}
	return ArtifactFile{ReadCloser: rc, Name: art.FileName, Size: art.Size}, nil
}

// mayDownload applies job j's artifacts:access (or artifacts:public) to
// a reader of its jobs (GitLab's read_job_artifacts): all (the default)
// lets every such reader download, developer (public: false) only
// developers and up, none nobody through the API. The runner's download
// of a dependency's archive (DependencyArchive) does not ask. GitLab keeps
// the access on the archive and applies it only when there is one: so
// here, after the archive is found.
func mayDownload(a auth.Actor, p model.Project, acc model.AccessLevel, j model.Job) bool {
	if j.Options == "" {
		return true
	}
	opts, err := planned(&j)
	if err != nil {
		return false
	}
	if opts.Artifacts == nil {
		return true
	}
	access := opts.Artifacts.Access
	if access == "" && opts.Artifacts.Public != nil && !*opts.Artifacts.Public {
		access = "developer"
	}
	switch access {
	case "none":
		return false
	case "developer":
		return auth.Can(a, auth.ReadRestrictedArtifacts, auth.Resource{Project: &p, Access: acc})
	}
	return true
}

// JobArtifactFile opens one file of a job's archive (404 when the archive
// or the file is missing).
func (s *Service) JobArtifactFile(ctx context.Context, a auth.Actor, projectRef string, jobID int64, file string) (ArtifactFile, error) {
	p, acc, j, err := s.jobAction(ctx, a, projectRef, jobID, auth.ReadJob, model.JobBuild)
	if err != nil {
		return ArtifactFile{}, err
	}
	return s.entryOf(ctx, a, p, acc, j, file)
}

// entryOf opens one entry of a job's zip archive, streamed from disk.
func (s *Service) entryOf(ctx context.Context, a auth.Actor, p model.Project, acc model.AccessLevel, j model.Job, file string) (ArtifactFile, error) {
	arch, err := s.archiveOf(ctx, a, p, acc, j)
	if err != nil {
		return ArtifactFile{}, err
	}
	clean := path.Clean("/" + file)[1:]
	if clean == "" || clean != strings.TrimSuffix(file, "/") {
		arch.Close()
		return ArtifactFile{}, model.NotFound("")
	}
	f, ok := arch.ReadCloser.(*os.File)
	if !ok {
		arch.Close()
		return ArtifactFile{}, model.NotFound("")
	}
	zr, err := zip.NewReader(f, arch.Size)
	if err != nil {
		f.Close()
		return ArtifactFile{}, model.NotFound("")
	}
	for _, e := range zr.File {
		if e.Name != clean || e.FileInfo().IsDir() {
			continue
		}
		er, err := e.Open()
		if err != nil {
			f.Close()
			return ArtifactFile{}, model.NotFound("")
		}
		return ArtifactFile{ReadCloser: readCloser{er, f}, Name: path.Base(clean), Size: int64(e.UncompressedSize64)}, nil
	}
	f.Close()
	return ArtifactFile{}, model.NotFound("")
}

type readCloser struct {
	io.ReadCloser
	file *os.File
}

func (r readCloser) Close() error { return errors.Join(r.ReadCloser.Close(), r.file.Close()) }

// refJob is the latest successful job named name in the latest successful
// pipeline of ref, with its project and the caller's access.
func (s *Service) refJob(ctx context.Context, a auth.Actor, projectRef, ref, name string) (model.Project, model.AccessLevel, model.Job, error) {
	p, acc, err := s.project(ctx, a, projectRef, auth.ReadJob)
	if err != nil {
		return p, acc, model.Job{}, err
	}
	if name == "" {
		return p, acc, model.Job{}, model.Param("job is missing")
	}
	pl, err := s.db.LatestSuccessfulPipeline(ctx, p.ID, ref)
	if err != nil {
		return p, acc, model.Job{}, model.NotFoundAs(err, "")
	}
	jobs, err := s.db.JobsNamed(ctx, pl.ID, []string{name})
	if err != nil {
		return p, acc, model.Job{}, err
	}
	for _, j := range jobs {
		if j.Kind == model.JobBuild && j.Status == model.StatusSuccess {
			// The whole row: the list carries no configuration, and
			// the archive's access is in it.
			full, err := s.db.Job(ctx, j.ID)
			return p, acc, full, model.NotFoundAs(err, "")
		}
	}
	return p, acc, model.Job{}, model.NotFound("")
}

// RefArchive opens the archive of the latest successful job named name on
// ref.
func (s *Service) RefArchive(ctx context.Context, a auth.Actor, projectRef, ref, name string) (ArtifactFile, error) {
	p, acc, j, err := s.refJob(ctx, a, projectRef, ref, name)
	if err != nil {
		return ArtifactFile{}, err
	}
	return s.archiveOf(ctx, a, p, acc, j)
}

// RefArtifactFile opens one file of that archive.
func (s *Service) RefArtifactFile(ctx context.Context, a auth.Actor, projectRef, ref, name, file string) (ArtifactFile, error) {
	p, acc, j, err := s.refJob(ctx, a, projectRef, ref, name)
	if err != nil {
		return ArtifactFile{}, err
	}
	return s.entryOf(ctx, a, p, acc, j, file)
}

// KeepArtifacts keeps a job's artifacts from expiring (developers).
func (s *Service) KeepArtifacts(ctx context.Context, a auth.Actor, projectRef string, jobID int64) (JobView, error) {
	p, _, j, err := s.jobAction(ctx, a, projectRef, jobID, auth.RunPipeline, model.JobBuild)
	if err != nil {
		return JobView{}, err
	}
	list, err := s.db.JobArtifacts(ctx, j.ID)
	if err != nil {
		return JobView{}, err
	}
	if len(list) == 0 {
		return JobView{}, model.NotFound("")
	}
	err = s.db.InTx(ctx, func(tx *store.Tx) error {
		if err := tx.SetArtifactsExpiry(ctx, j.ID, nil); err != nil {
			return err
		}
		return tx.SetJobArchiveExpiry(ctx, j.ID, nil)
	})
	if err != nil {
		return JobView{}, err
	}
	return s.jobView(ctx, p, j)
}

// DeleteJobArtifacts removes a job's artifacts (maintainers); its log
// stays.
func (s *Service) DeleteJobArtifacts(ctx context.Context, a auth.Actor, projectRef string, jobID int64) error {
	_, _, j, err := s.jobAction(ctx, a, projectRef, jobID, auth.AdminCI, model.JobBuild)
	if err != nil {
		return err
	}
	var gone []model.Artifact
	err = s.db.InTx(ctx, func(tx *store.Tx) error {
		list, err := tx.DeleteJobArtifacts(ctx, j.ID)
		gone = list
		return err
	})
	if err != nil {
		return err
	}
	if len(gone) == 0 {
		return model.NotFound("")
	}
	s.removeArtifactFiles(gone)
	return nil
}

func (s *Service) removeArtifactFiles(list []model.Artifact) {
	for _, a := range list {
		if err := s.files.RemoveArtifact(a.Path); err != nil {
			s.log.Warn("remove artifact file", "path", a.Path, "err", err)
		}
	}
}

// projectPayload names a project whose artifacts go.
type projectPayload struct{ ProjectID int64 }

// deleteArtifactsTask removes every artifact of a project that may go.
var deleteArtifactsTask = tasks.Define("ci_delete_artifacts", tasks.KindOptions[projectPayload]{MaxAttempts: 5,
	Dedupe: func(p projectPayload) string { return strconv.FormatInt(p.ProjectID, 10) }})

// DeleteProjectArtifacts schedules the removal of a project's artifacts
// (maintainers): all but those of the latest successful pipeline of each
// ref when the project keeps the latest.
func (s *Service) DeleteProjectArtifacts(ctx context.Context, a auth.Actor, projectRef string) error {
	p, _, err := s.project(ctx, a, projectRef, auth.AdminCI)
	if err != nil {
		return err
	}
	return s.db.InTx(ctx, func(tx *store.Tx) error {
		_, err := deleteArtifactsTask.Enqueue(ctx, tx, projectPayload{ProjectID: p.ID})
		return err
	})
}

// runDeleteArtifacts is the durable removal of a project's artifacts.
func (s *Service) runDeleteArtifacts(ctx context.Context, pl projectPayload) error {
	p, err := s.db.ProjectByID(ctx, pl.ProjectID)
	if errors.Is(err, model.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	st, err := s.Settings(ctx)
	if err != nil {
		return err
	}
	var after int64
	for {
		list, err := s.db.ProjectArtifacts(ctx, p.ID, after, 500)
		if err != nil || len(list) == 0 {
			return err
		}
		var doomed []model.Artifact
		for _, a := range list {
			after = a.ID
			keep, err := s.keptAsLatest(ctx, st, p, a)
			if err != nil {
				return err
			}
			if !keep && a.FileType != "trace" {
				doomed = append(doomed, a)
			}
		}
		if err := s.deleteArtifacts(ctx, doomed); err != nil {
			return err
		}
	}
}

// deleteArtifacts removes artifacts' records, then their files.
func (s *Service) deleteArtifacts(ctx context.Context, list []model.Artifact) error {
	if len(list) == 0 {
		return nil
	}
	err := s.db.InTx(ctx, func(tx *store.Tx) error {
		for _, a := range list {
			if _, err := tx.DeleteArtifact(ctx, a.ID); err != nil {
				return err
			}
		}
		return nil
	})
	if err == nil {
		s.removeArtifactFiles(list)
	}
	return err
}

// keptAsLatest reports whether an artifact belongs to the latest
// successful pipeline of its ref in a project that keeps those.
func (s *Service) keptAsLatest(ctx context.Context, st model.ApplicationSettings, p model.Project, a model.Artifact) (bool, error) {
	if !p.Settings.KeepLatestArtifact || !st.KeepLatestArtifact {
		return false, nil
	}
	j, err := s.db.Job(ctx, a.JobID)
	if errors.Is(err, model.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	latest, err := s.db.LatestSuccessfulPipeline(ctx, p.ID, j.Ref)
	if errors.Is(err, model.ErrNotFound) {
		return false, nil
	}
	return err == nil && latest.ID == j.PipelineID, err
}

// expireArtifacts removes artifacts whose time passed (keeping those of
// the latest successful pipeline of each ref where the project keeps them:
// they are looked at again an hour later).
func (s *Service) expireArtifacts(ctx context.Context) error {
	now := s.now()
	st, err := s.Settings(ctx)
	if err != nil {
		return err
	}
	for {
		list, err := s.db.ExpiredArtifacts(ctx, now, 500)
		if err != nil || len(list) == 0 {
			return err
		}
		var doomed []model.Artifact
		var kept []int64
		projects := map[int64]*model.Project{}
		for _, a := range list {
			p, ok := projects[a.ProjectID]
			if !ok {
				pp, err := s.db.ProjectByID(ctx, a.ProjectID)
				if err != nil && !errors.Is(err, model.ErrNotFound) {
					return err
				}
				if err == nil {
					p = &pp
				}
				projects[a.ProjectID] = p
			}
			keep := false
			if p != nil {
				if keep, err = s.keptAsLatest(ctx, st, *p, a); err != nil {
					return err
				}
			}
			if keep {
				kept = append(kept, a.ID)
			} else {
				doomed = append(doomed, a)
			}
		}
		if len(kept) > 0 {
			later := now.Add(time.Hour)
			if err := s.db.InTx(ctx, func(tx *store.Tx) error { return tx.PostponeArtifacts(ctx, kept, later) }); err != nil {
				return err
			}
		}
		if err := s.deleteArtifacts(ctx, doomed); err != nil {
			return err
		}
		if len(list) < 500 {
			return nil
		}
	}
}
