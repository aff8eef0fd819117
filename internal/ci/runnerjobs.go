package ci

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"quarry/internal/jobfiles"
	"slices"
	"strconv"
	"strings"
	"time"

	"quarry/internal/auth"
	"quarry/internal/ciconfig"
	"quarry/internal/model"
	"quarry/internal/store"
)

// The engine's side of the runner protocol (reference §1): a runner
// claims a pending build, gets its payload, reports its state, appends to
// its log and hands in artifacts; later jobs fetch earlier jobs'
// archives. Each job call is authenticated by the job's token, which is
// minted when a runner takes the job, shown to that runner once, and
// stored as a digest.

// QueueChannel is the notification channel on which the engine says "a
// build became pending" (after the transaction commits, to every process
// on the database).
const QueueChannel = "ci_queue"

// ErrDropped is a job Claim failed instead of giving it to the runner
// (see Claim); the runner goes on to the next candidate.
var ErrDropped = errors.New("the job failed before it ran")

// Claim gives the pending build jobID to runner r, whose features are
// those its request listed: the job moves to running with the runner and
// a fresh job token (returned, never stored). First come GitLab's checks
// before a runner gets a job (RegisterJobService's pre-assign checks), in
// its order: a job one of whose dependencies lost its archive (erased, or
// expired) fails with missing_dependency_failure, one needing a feature
// the runner lacks with runner_unsupported — in the same compare-and-set
// move from pending, so no runner ever sees it; that is ErrDropped, with
// the failed job. A job that is no longer pending, or that another runner
// holds, is model.ErrConflict.
func (s *Service) Claim(ctx context.Context, jobID int64, r model.Runner, features map[string]bool) (model.Job, string, error) {
	secret, digest := auth.NewToken(model.JobTokenPrefix)
	var out model.Job
	var dropped model.FailureReason
	var why string
	err := s.withJob(ctx, jobID, func(tx *store.Tx, p *model.Pipeline, j *model.Job, fx *effects) error {
		dropped = ""
		if j.Status != model.StatusPending || j.RunnerID != 0 || j.Kind != model.JobBuild {
			return model.Conflict("job was taken")
		}
		rid := r.ID
		reason, cause, err := s.preAssign(ctx, tx, j, features)
		if err != nil {
			return err
		}
		if reason != "" {
			// As GitLab's drop: the runner is recorded, the job fails
			// (and retry: applies), no token is made.
			if err := s.moveJob(ctx, tx, j, model.StatusFailed, store.JobChange{RunnerID: &rid, FailureReason: &reason}, fx); err != nil {
				return err
			}
			dropped, why, out = reason, cause, *j
			if pl, err := planned(j); err == nil && autoRetry(j, pl.Retry) {
				_, err := s.retryJob(ctx, tx, j, j.UserID, false, fx)
				return err
			}
			return nil
		}
		if err := s.moveJob(ctx, tx, j, model.StatusRunning, store.JobChange{RunnerID: &rid, TokenDigest: &digest}, fx); err != nil {
			return err
		}
		out = *j
		return nil
	})
	if err != nil {
		return model.Job{}, "", err
	}
	if dropped != "" {
		s.log.Info("job failed before it ran", "job_id", jobID, "runner_id", r.ID, "failure_reason", dropped, "cause", why)
		return out, "", fmt.Errorf("job %d: %s: %w", jobID, dropped, ErrDropped)
	}
	return out, secret, nil
}

// preAssign runs the checks of Claim on the pending job j: the reason to
// fail it with and what caused it, or "" when a runner with features may
// take it. A configuration that cannot be read passes (the payload then
// fails, as scheduler_failure).
func (s *Service) preAssign(ctx context.Context, tx *store.Tx, j *model.Job, features map[string]bool) (model.FailureReason, string, error) {
	opts, err := planned(j)
	if err != nil {
		return "", "", nil
	}
	lost, err := lostDependencies(ctx, tx, *j, opts)
	if err != nil {
		return "", "", err
	}
	if len(lost) > 0 {
		return model.FailureMissingDependency, "dependencies without their archive: " + strings.Join(lost, ", "), nil
	}
	if f := missingFeature(opts, features); f != "" {
		return model.FailureRunnerUnsupported, "the runner lacks the feature " + f, nil
	}
	if j.Environment != "" {
		return s.deployCheck(ctx, tx, j, opts)
	}
	return "", "", nil
}

// lostDependencies names the dependencies of job j that lost their
// archive (archiveLost).
func lostDependencies(ctx context.Context, tx *store.Tx, j model.Job, opts jobOptions) ([]string, error) {
	deps, err := dependencyJobs(ctx, tx, j, opts)
	if err != nil || len(deps) == 0 {
		return nil, err
	}
	ids := make([]int64, len(deps))
	for i, d := range deps {
		ids[i] = d.ID
	}
	states, err := tx.ArchiveStates(ctx, ids...)
	if err != nil {
		return nil, err
	}
	arts, err := tx.JobArtifacts(ctx, ids...)
	if err != nil {
		return nil, err
	}
	now := tx.Now()
	available := map[int64]bool{}
	for _, a := range arts {
		if archiveAvailable(a, now) {
			available[a.JobID] = true
		}
	}
	names := map[int64]string{}
	for _, d := range deps {
		names[d.ID] = d.Name
	}
	var lost []string
	for _, st := range states {
		if archiveLost(st, available[st.JobID], now) {
			lost = append(lost, names[st.JobID])
		}
	}
	return lost, nil
}

// archiveLost reports whether a dependency lost its archive for the jobs
// after it (GitLab's Build#valid_dependency?, negated): the job was
// erased, or the archive it stored expired and is no longer there —
// expired by time and not kept (by hand, or as the latest of its ref,
// which keeps it available). A job that never stored an archive, or one
// removed before its time (DELETE …/artifacts), loses nothing: the job
// runs without it, as in GitLab.
func archiveLost(st store.ArchiveState, available bool, now time.Time) bool {
	if st.ErasedAt != nil {
		return true
	}
	return st.ExpireAt != nil && !st.ExpireAt.After(now) && !available
}

// archiveAvailable reports whether an artifact is an archive later jobs
// and downloads may have now: not expired.
func archiveAvailable(a model.Artifact, now time.Time) bool {
	return a.FileType == "archive" && (a.ExpireAt == nil || a.ExpireAt.After(now))
}

// RunnerJob authenticates a runner's call about job jobID with the job's
// token, as GitLab does (§1.6): an unknown job or wrong token, a deleted
// project or an erased job is 403, a job that no longer runs 403 "Job is
// not running" — the job is returned with every error but the first two so
// that the caller can send its status (Job-Status).
func (s *Service) RunnerJob(ctx context.Context, jobID int64, token string) (model.Job, error) {
	j, err := s.db.Job(ctx, jobID)
	if errors.Is(err, model.ErrNotFound) || (err == nil && (j.TokenDigest == "" || j.TokenDigest != auth.Digest(token))) {
		return model.Job{}, model.Forbidden("")
	}
	if err != nil {
		return model.Job{}, err
	}
	p, err := s.db.ProjectByID(ctx, j.ProjectID)
	if errors.Is(err, model.ErrNotFound) || (err == nil && p.PendingDelete) {
		return j, model.Forbidden("Project has been deleted!")
	}
	if err != nil {
		return j, err
	}
	if j.ErasedAt != nil {
		return j, model.Forbidden("Job has been erased!")
	}
	if j.Status != model.StatusRunning && j.Status != model.StatusCanceling {
		return j, model.Forbidden("Job is not running")
	}
	return j, nil
}

// AuthenticateJobToken turns a job token into the actor its requests run
// as: the user who triggered the job, with the job attached. The token of
// a job that does not run (or of a deleted project, or of a job whose user
// is gone or blocked) is 401.
func (s *Service) AuthenticateJobToken(ctx context.Context, secret string) (auth.Actor, error) {
	if !strings.HasPrefix(secret, model.JobTokenPrefix) || !auth.PlausibleSecret(secret) {
		return auth.Anonymous, model.Unauthorized("")
	}
	j, err := s.db.JobByTokenDigest(ctx, auth.Digest(secret))
	if errors.Is(err, model.ErrNotFound) {
		return auth.Anonymous, model.Unauthorized("")
	}
	if err != nil {
		return auth.Anonymous, err
	}
	if j.Status != model.StatusRunning && j.Status != model.StatusCanceling || j.ErasedAt != nil || j.UserID == 0 {
		return auth.Anonymous, model.Unauthorized("")
	}
	p, err := s.db.ProjectByID(ctx, j.ProjectID)
	if err != nil || p.PendingDelete {
		return auth.Anonymous, model.Unauthorized("")
	}
	u, err := s.db.UserByID(ctx, j.UserID)
	if errors.Is(err, model.ErrNotFound) || (err == nil && u.State != model.UserActive) {
		return auth.Anonymous, model.Unauthorized("")
	}
	if err != nil {
		return auth.Anonymous, err
	}
	return auth.Actor{User: &u, Job: &auth.JobActor{ID: j.ID, ProjectID: j.ProjectID, PipelineID: j.PipelineID}}, nil
}

// TokenJob is the job view of the job whose token authenticated a (GET
// /job).
func (s *Service) TokenJob(ctx context.Context, a auth.Actor) (JobView, error) {
	if a.Job == nil {
		return JobView{}, model.NotFound("Job")
	}
	p, err := s.db.ProjectByID(ctx, a.Job.ProjectID)
	if err != nil {
		return JobView{}, model.NotFoundAs(err, "Job")
	}
	j, err := s.db.Job(ctx, a.Job.ID)
	if err != nil {
		return JobView{}, model.NotFoundAs(err, "Job")
	}
	return s.jobView(ctx, p, j)
}

// RunnerUpdate is a runner's PUT /jobs/:id.
type RunnerUpdate struct {
	State    string // running (a touch), success, failed
	Reason   model.FailureReason
	ExitCode *int
	// LogBytes is the size of the log the runner sent (output[bytesize]),
	// nil when it did not say.
	LogBytes *int64
}

// UpdateFromRunner applies a runner's state report to a job RunnerJob
// authenticated: running only records that the runner is alive; success
// and failed end the job (a job being canceled ends canceled). Any other
// state is 400.
func (s *Service) UpdateFromRunner(ctx context.Context, j model.Job, u RunnerUpdate) (model.Job, error) {
	switch u.State {
	case "running", "pending":
		return j, s.db.InTx(ctx, func(tx *store.Tx) error { return tx.TouchJob(ctx, j.ID) })
	case "success", "failed":
		if u.LogBytes != nil && *u.LogBytes != j.LogSize {
			// The log the server holds is not the runner's (a patch the
			// runner cut short and sent again, applied after its resend,
			// truncated it): 412 makes the runner send it all again
			// before the state.
			return j, model.PreconditionFailed(fmt.Sprintf("trace validation failed: the runner sent %d bytes, the server holds %d", *u.LogBytes, j.LogSize))
		}
	}
	switch u.State {
	case "success":
		return s.Finish(ctx, j.ID, Outcome{Status: model.StatusSuccess})
	case "failed":
		return s.Finish(ctx, j.ID, Outcome{Status: model.StatusFailed, Reason: u.Reason, ExitCode: u.ExitCode})
	}
	return j, model.BadRequest("state is invalid")
}

// JobRequest is the job payload a runner receives (§1.5).
type JobRequest struct {
	ID            int64                `json:"id"`
	Token         string               `json:"token"`
	AllowGitFetch bool                 `json:"allow_git_fetch"`
	JobInfo       RequestJobInfo       `json:"job_info"`
	GitInfo       RequestGitInfo       `json:"git_info"`
	RunnerInfo    RequestRunnerInfo    `json:"runner_info"`
	Variables     []RequestVariable    `json:"variables"`
	Steps         []RequestStep        `json:"steps"`
	Image         *RequestImage        `json:"image"`
	Services      []RequestImage       `json:"services"`
	Artifacts     []RequestArtifact    `json:"artifacts"`
	Cache         []RequestCache       `json:"cache"`
	Credentials   []RequestCredentials `json:"credentials"`
	Dependencies  []RequestDependency  `json:"dependencies"`
	Features      RequestFeatures      `json:"features"`
	// Release is the job's release: as written, beside the release
	// step, for runners that make the release themselves (Quarry's);
	// gitlab-runner ignores the key and runs the step's release-cli.
	Release *ciconfig.Release `json:"release,omitempty"`
}

// RequestJobInfo is the payload's job_info.
type RequestJobInfo struct {
	ID              int64   `json:"id"`
	Name            string  `json:"name"`
	Stage           string  `json:"stage"`
	ProjectID       int64   `json:"project_id"`
	ProjectName     string  `json:"project_name"`
	PipelineID      int64   `json:"pipeline_id"`
	ProjectFullPath string  `json:"project_full_path"`
	NamespaceID     int64   `json:"namespace_id"`
	UserID          int64   `json:"user_id"`
	TimeInQueue     float64 `json:"time_in_queue_seconds"`
}

// RequestGitInfo is the payload's git_info.
type RequestGitInfo struct {
	RepoURL          string   `json:"repo_url"`
	Ref              string   `json:"ref"`
	SHA              string   `json:"sha"`
	BeforeSHA        string   `json:"before_sha"`
	RefType          string   `json:"ref_type"`
	Refspecs         []string `json:"refspecs"`
	Depth            int      `json:"depth"`
	RepoObjectFormat string   `json:"repo_object_format"`
	Protected        bool     `json:"protected"`
}

// RequestRunnerInfo is the payload's runner_info.
type RequestRunnerInfo struct {
	Timeout          int     `json:"timeout"`
	RunnerSessionURL *string `json:"runner_session_url"`
}

// RequestVariable is one variable as the runner takes it (§4.1).
type RequestVariable struct {
	Key    string `json:"key"`
	Value  string `json:"value"`
	Public bool   `json:"public"`
	Masked bool   `json:"masked"`
	File   bool   `json:"file,omitempty"`
	Raw    bool   `json:"raw,omitempty"`
}

// RequestStep is one step of the job script.
type RequestStep struct {
	Name         string   `json:"name"`
	Script       []string `json:"script"`
	Timeout      int      `json:"timeout"`
	When         string   `json:"when"`
	AllowFailure bool     `json:"allow_failure"`
}

// RequestImage is image: or a service.
type RequestImage struct {
	Name       string            `json:"name"`
	Entrypoint []string          `json:"entrypoint,omitempty"`
	Command    []string          `json:"command,omitempty"`
	Alias      string            `json:"alias,omitempty"`
	Ports      []map[string]any  `json:"ports"`
	PullPolicy []string          `json:"pull_policy,omitempty"`
	Variables  []RequestVariable `json:"variables,omitempty"`
}

// RequestArtifact is one artifact the runner uploads.
type RequestArtifact struct {
	Name           string   `json:"name"`
	Untracked      bool     `json:"untracked"`
	Paths          []string `json:"paths"`
	Exclude        []string `json:"exclude,omitempty"`
	When           string   `json:"when"`
	ExpireIn       *string  `json:"expire_in"`
	ArtifactType   string   `json:"artifact_type"`
	ArtifactFormat string   `json:"artifact_format"`
}

// RequestCache is one cache entry.
type RequestCache struct {
	Key          string   `json:"key"`
	Untracked    bool     `json:"untracked"`
	Paths        []string `json:"paths"`
	Policy       string   `json:"policy"`
	When         string   `json:"when"`
	FallbackKeys []string `json:"fallback_keys"`
}

// RequestCredentials are registry credentials (none: Quarry has no
// registry yet).
type RequestCredentials struct {
	Type     string `json:"type"`
	URL      string `json:"url"`
	Username string `json:"username"`
	Password string `json:"password"`
}

// RequestDependency is an earlier job whose archive the job downloads.
type RequestDependency struct {
	ID            int64                `json:"id"`
	Name          string               `json:"name"`
	Token         string               `json:"token"`
	ArtifactsFile *RequestArtifactFile `json:"artifacts_file,omitempty"`
}

// RequestArtifactFile names a dependency's archive.
type RequestArtifactFile struct {
	Filename string `json:"filename"`
	Size     int64  `json:"size"`
}

// RequestFeatures are the server features the runner may use.
type RequestFeatures struct {
	TraceSections  bool                  `json:"trace_sections"`
	FailureReasons []model.FailureReason `json:"failure_reasons"`
}

// Runner features a job may need (§1.4).
const (
	featureMultipleArtifacts = "upload_multiple_artifacts"
	featureArtifactsExclude  = "artifacts_exclude"
	featureReturnExitCode    = "return_exit_code"
	featureFallbackCacheKeys = "fallback_cache_keys"
)

// missingFeature names a feature a job configured as pl needs that the
// runner does not have ("" when it has them all).
func missingFeature(pl jobOptions, features map[string]bool) string {
	need := func(f string) bool { return !features[f] }
	if a := pl.Artifacts; a != nil {
		if len(a.Reports) > 0 && need(featureMultipleArtifacts) {
			return featureMultipleArtifacts
		}
		if len(a.Exclude) > 0 && need(featureArtifactsExclude) {
			return featureArtifactsExclude
		}
	}
	if len(pl.AllowFailureExitCodes) > 0 && need(featureReturnExitCode) {
		return featureReturnExitCode
	}
	for _, c := range pl.Cache {
		if len(c.FallbackKeys) > 0 && need(featureFallbackCacheKeys) {
			return featureFallbackCacheKeys
		}
	}
	return ""
}

// JobTimeout is how long job j may run on runner r: its timeout:, else
// the project's, capped by the runner's maximum.
func JobTimeout(j model.Job, p model.Project, r model.Runner) int {
	t := p.Settings.BuildTimeout
	if t <= 0 {
		t = 3600
	}
	if pl, err := planned(&j); err == nil && pl.Timeout > 0 {
		t = int(pl.Timeout / time.Second)
	} else if j.Timeout > 0 {
		t = j.Timeout
	}
	if r.MaximumTimeout > 0 && r.MaximumTimeout < t {
		t = r.MaximumTimeout
	}
	return t
}

// Payload builds the payload of job j, just claimed by runner r with
// token.
func (s *Service) Payload(ctx context.Context, j model.Job, token string, r model.Runner) (*JobRequest, error) {
	p, err := s.db.ProjectByID(ctx, j.ProjectID)
	if err != nil {
		return nil, err
	}
	pl, err := s.db.Pipeline(ctx, j.PipelineID)
	if err != nil {
		return nil, err
	}
	opts, err := planned(&j)
	if err != nil {
		return nil, err
	}
	repoURL := s.cloneURL(p, token)
	timeout := JobTimeout(j, p, r)
	vars, err := s.jobVariables(ctx, p, pl, j, opts, token, repoURL, r)
	if err != nil {
		return nil, err
	}
	depth := p.Settings.CIDefaultGitDepth
	for _, v := range vars {
		if v.Key == "GIT_DEPTH" {
			if d, err := strconv.Atoi(v.Value); err == nil && d >= 0 {
				depth = d
			}
		}
	}
	refType := "branch"
	refspecs := []string{"+refs/pipelines/" + strconv.FormatInt(pl.ID, 10) + ":refs/pipelines/" + strconv.FormatInt(pl.ID, 10)}
	switch {
	case depth > 0 && pl.Tag:
		refspecs = append(refspecs, "+refs/tags/"+pl.Ref+":refs/tags/"+pl.Ref)
	case depth > 0:
		refspecs = append(refspecs, "+refs/heads/"+pl.Ref+":refs/remotes/origin/"+pl.Ref)
	default:
		refspecs = append(refspecs, "+refs/heads/*:refs/remotes/origin/*", "+refs/tags/*:refs/tags/*")
	}
	if pl.Tag {
		refType = "tag"
	}
	before := pl.BeforeSHA
	if before == "" {
		before = model.ZeroRef
	}
	out := &JobRequest{
		ID: j.ID, Token: token, AllowGitFetch: p.Settings.BuildGitStrategy != "clone",
		JobInfo: RequestJobInfo{ID: j.ID, Name: j.Name, Stage: j.Stage, ProjectID: p.ID, ProjectName: p.Name, PipelineID: pl.ID,
			ProjectFullPath: p.FullPath(), NamespaceID: p.Namespace.ID, UserID: j.UserID},
		GitInfo: RequestGitInfo{RepoURL: repoURL, Ref: pl.Ref, SHA: pl.SHA, BeforeSHA: before, RefType: refType, Refspecs: refspecs,
			Depth: depth, RepoObjectFormat: "sha1", Protected: pl.Protected},
		RunnerInfo:  RequestRunnerInfo{Timeout: timeout},
		Variables:   vars,
		Services:    []RequestImage{},
		Cache:       []RequestCache{},
		Credentials: []RequestCredentials{},
		Features: RequestFeatures{TraceSections: true, FailureReasons: []model.FailureReason{model.FailureUnknown,
			model.FailureScript, model.FailureRunnerSystem, model.FailureJobExecutionTimeout, model.FailureRunnerUnsupported}},
	}
	if j.QueuedAt != nil && j.StartedAt != nil {
		out.JobInfo.TimeInQueue = j.StartedAt.Sub(*j.QueuedAt).Seconds()
	}
	script := append(slices.Clone(opts.BeforeScript), opts.Script...)
	out.Steps = []RequestStep{{Name: "script", Script: nonNil(script), Timeout: timeout, When: "on_success"}}
	if opts.Release != nil {
		// GitLab's Step.from_release: after the script, before after_script.
		out.Steps = append(out.Steps, RequestStep{Name: "release", Script: []string{opts.Release.CLICommand()}, Timeout: timeout,
			When: "on_success"})
		out.Release = opts.Release
	}
	if len(opts.AfterScript) > 0 {
		out.Steps = append(out.Steps, RequestStep{Name: "after_script", Script: opts.AfterScript, Timeout: timeout, When: "always",
			AllowFailure: true})
	}
	if opts.Image != nil {
		img := requestImage(*opts.Image)
		out.Image = &img
	}
	for _, sv := range opts.Services {
		out.Services = append(out.Services, requestImage(sv))
	}
	out.Artifacts = requestArtifacts(opts.Artifacts)
	if out.Cache, err = s.requestCaches(ctx, p, pl, j, opts.Cache); err != nil {
		return nil, err
	}
	if out.Dependencies, err = s.dependencies(ctx, s.db.Tx, j, opts, token); err != nil {
		return nil, err
	}
	return out, nil
}

func nonNil[T any](v []T) []T {
	if v == nil {
		return []T{}
	}
	return v
}

func requestImage(i ciconfig.Image) RequestImage {
	out := RequestImage{Name: i.Name, Entrypoint: i.Entrypoint, Command: i.Command, Alias: i.Alias, Ports: nonNil(i.Ports),
		PullPolicy: i.PullPolicy}
	keys := make([]string, 0, len(i.Variables))
	for k := range i.Variables {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		out.Variables = append(out.Variables, RequestVariable{Key: k, Value: i.Variables[k], Public: true})
	}
	return out
}

// requestArtifacts are the uploads artifacts: asks for: the archive (when
// it names paths or untracked files), then one per report.
func requestArtifacts(a *ciconfig.Artifacts) []RequestArtifact {
	if a == nil {
		return nil
	}
	var expire *string
	if a.ExpireIn != "" {
		e := a.ExpireIn
		expire = &e
	}
	when := a.When
	if when == "" {
		when = "on_success"
	}
	var out []RequestArtifact
	if len(a.Paths) > 0 || a.Untracked {
		out = append(out, RequestArtifact{Name: a.Name, Untracked: a.Untracked, Paths: nonNil(a.Paths), Exclude: a.Exclude, When: when,
			ExpireIn: expire, ArtifactType: "archive", ArtifactFormat: "zip"})
	}
	types := make([]string, 0, len(a.Reports))
	for t := range a.Reports {
		types = append(types, t)
	}
	slices.Sort(types)
	for _, t := range types {
		paths := reportPaths(a.Reports[t])
		if len(paths) == 0 {
			continue
		}
		typ := t
		if t == "coverage_report" {
			typ = "cobertura"
		}
		name, ok := reportFileNames[typ]
		if !ok {
			name = typ
		}
		out = append(out, RequestArtifact{Name: name, Paths: paths, When: "always", ExpireIn: expire, ArtifactType: typ,
			ArtifactFormat: "gzip"})
	}
	return out
}

// reportFileNames are the names GitLab gives report uploads (the runner
// adds the format's extension).
var reportFileNames = map[string]string{"junit": "junit.xml", "cobertura": "cobertura-coverage.xml", "dotenv": ".env",
	"codequality": "gl-code-quality-report.json", "metrics": "metrics.txt", "cyclonedx": "gl-sbom.cdx.json", "annotations": "gl-annotations.json"}

// reportPaths reads the paths of an artifacts:reports entry as written:
// a path, a list of paths, or (coverage_report) a map with path.
func reportPaths(v any) []string {
	switch x := v.(type) {
	case string:
		return []string{x}
	case []string:
		return x
	case []any:
		var out []string
		for _, e := range x {
			if s, ok := e.(string); ok {
				out = append(out, s)
			}
		}
		return out
	case map[string]any:
		return reportPaths(x["path"])
	}
	return nil
}

// cloneURL is the project's HTTP clone URL with the job token as the
// password of gitlab-ci-token.
func (s *Service) cloneURL(p model.Project, token string) string {
	u, err := url.Parse(s.cfg.ExternalURL)
	if err != nil {
		return s.cfg.ExternalURL + "/" + p.FullPath() + ".git"
	}
	u.User = url.UserPassword("gitlab-ci-token", token)
	u.Path = strings.TrimSuffix(u.Path, "/") + "/" + p.FullPath() + ".git"
	return u.String()
}

// jobVariables are the variables of a job's payload in GitLab's order,
// lowest precedence first (§4.2): the job's predefined variables, the
// pipeline's, the YAML variables, the dotenv reports of the jobs it
// depends on, instance, group and project CI/CD
// variables (secretCIVariables: each masked one is sent masked, so the
// runner hides its value in the log), the variables the job was played
// with, and the pipeline's own.
func (s *Service) jobVariables(ctx context.Context, p model.Project, pl model.Pipeline, j model.Job, opts jobOptions, token, repoURL string,
	r model.Runner) ([]RequestVariable, error) {
	var out []RequestVariable
	add := func(key, value string, public, masked bool) {
		out = append(out, RequestVariable{Key: key, Value: value, Public: public, Masked: masked})
	}
	id := strconv.FormatInt(j.ID, 10)
	add("CI_JOB_ID", id, true, false)
	add("CI_JOB_URL", s.cfg.ExternalURL+"/"+p.FullPath()+"/-/jobs/"+id, true, false)
	add("CI_JOB_TOKEN", token, false, true)
	if j.StartedAt != nil {
		add("CI_JOB_STARTED_AT", j.StartedAt.UTC().Format(time.RFC3339), true, false)
	}
	add("CI_JOB_NAME", j.Name, true, false)
	add("CI_JOB_NAME_SLUG", Slug(j.Name), true, false)
	add("CI_JOB_STAGE", j.Stage, true, false)
	add("CI_JOB_TIMEOUT", strconv.Itoa(JobTimeout(j, p, r)), true, false)
	if opts.NodeTotal > 0 {
		add("CI_NODE_INDEX", strconv.Itoa(opts.NodeIndex), true, false)
		add("CI_NODE_TOTAL", strconv.Itoa(opts.NodeTotal), true, false)
	} else {
		add("CI_NODE_TOTAL", "1", true, false)
	}
	add("CI_REGISTRY_USER", "gitlab-ci-token", true, false)
	add("CI_REGISTRY_PASSWORD", token, false, true)
	add("CI_REPOSITORY_URL", repoURL, false, false)
	add("CI_DEPENDENCY_PROXY_USER", "gitlab-ci-token", true, false)
	add("CI_DEPENDENCY_PROXY_PASSWORD", token, false, true)
	add("CI_RUNNER_ID", strconv.FormatInt(r.ID, 10), true, false)
	add("CI_RUNNER_DESCRIPTION", r.Description, true, false)
	add("CI_RUNNER_TAGS", "["+strings.Join(quoteAll(r.TagList), ", ")+"]", true, false)
	envVars, err := s.environmentVariables(ctx, j, opts)
	if err != nil {
		return nil, err
	}
	out = append(out, envVars...)
	// The ID tokens (id_tokens:) come here, GitLab's place for them;
	// their audiences are expanded with every variable, so they are
	// made last and put back here.
	tokensAt := len(out)
	predefined, err := s.pipelinePredefined(ctx, p, pl)
	if err != nil {
		return nil, err
	}
	secrets, err := s.secretCIVariables(ctx, s.db.Tx, p, pl.Protected, j.Environment)
	if err != nil {
		return nil, err
	}
	own, err := s.db.PipelineVariables(ctx, pl.ID)
	if err != nil {
		return nil, err
	}
	for _, v := range predefined {
		add(v.Key, v.Value, true, false)
	}
	for _, v := range opts.YAMLVariables {
		out = append(out, RequestVariable{Key: v.Key, Value: v.Value, Public: true, Raw: v.Raw})
	}
	dotenv, err := s.dotenvVariables(ctx, j, opts)
	if err != nil {
		return nil, err
	}
	out = append(out, dotenv...)
	for _, v := range secrets {
		out = append(out, RequestVariable{Key: v.Key, Value: v.Value, Masked: v.Masked, File: v.VariableType == model.VarFile, Raw: v.Raw})
	}
	for _, list := range [][]model.Variable{j.ManualVariables, own} {
		for _, v := range list {
			out = append(out, RequestVariable{Key: v.Key, Value: v.Value, File: v.VariableType == model.VarFile, Raw: v.Raw})
		}
	}
	tokens, err := s.idTokens(ctx, p, pl, j, r, opts, out, JobTimeout(j, p, r))
	if err != nil {
		return nil, err
	}
	return slices.Insert(out, tokensAt, tokens...), nil
}

func quoteAll(v []string) []string {
	out := make([]string, len(v))
	for i, s := range v {
		out[i] = strconv.Quote(s)
	}
	return out
}

// dependencyJobs are the earlier builds whose archives job j downloads
// (GitLab's BuildDependencies#local): those its dependencies: names, else
// its needs with artifacts, else every build of the earlier stages — the
// latest of each, by id.
func dependencyJobs(ctx context.Context, tx *store.Tx, j model.Job, opts jobOptions) ([]model.Job, error) {
	var jobs []model.Job
	var err error
	switch {
	case opts.Dependencies != nil:
		jobs, err = tx.JobsNamed(ctx, j.PipelineID, opts.Dependencies)
	case opts.Needs != nil:
		var names []string
		for _, n := range opts.Needs {
			if n.Artifacts && n.Pipeline == "" {
				names = append(names, n.Job)
			}
		}
		jobs, err = tx.JobsNamed(ctx, j.PipelineID, names)
	default:
		jobs, err = tx.JobsBeforeStage(ctx, j.PipelineID, j.StageIdx)
	}
	if err != nil {
		return nil, err
	}
	jobs = slices.DeleteFunc(jobs, func(d model.Job) bool { return d.Kind != model.JobBuild || d.ID == j.ID })
	slices.SortFunc(jobs, func(a, b model.Job) int { return cmp.Compare(a.ID, b.ID) })
	return jobs, nil
}

// dependencies are the payload's dependencies of job j (dependencyJobs),
// each with its archive when it has one, downloaded with the job's own
// token.
func (s *Service) dependencies(ctx context.Context, tx *store.Tx, j model.Job, opts jobOptions, token string) ([]RequestDependency, error) {
	jobs, err := dependencyJobs(ctx, tx, j, opts)
	if err != nil {
		return nil, err
	}
	out := []RequestDependency{}
	if len(jobs) == 0 {
		return out, nil
	}
	byJob, err := s.JobArtifacts(ctx, jobs)
	if err != nil {
		return nil, err
	}
	now := s.now()
	for _, d := range jobs {
		dep := RequestDependency{ID: d.ID, Name: d.Name, Token: token}
		for _, a := range byJob[d.ID] {
			if archiveAvailable(a, now) {
				dep.ArtifactsFile = &RequestArtifactFile{Filename: a.FileName, Size: a.Size}
			}
		}
		out = append(out, dep)
	}
	return out, nil
}

// SettingsSource gives the application settings in effect.
type SettingsSource interface {
	Current(ctx context.Context) (model.ApplicationSettings, error)
}

// SetSettings gives the service the instance's settings (before use).
func (s *Service) SetSettings(src SettingsSource) { s.settings = src }

// Settings are the instance's application settings in effect.
func (s *Service) Settings(ctx context.Context) (model.ApplicationSettings, error) {
	if s.settings == nil {
		return model.DefaultApplicationSettings(), nil
	}
	return s.settings.Current(ctx)
}

// ArtifactUpload is a runner's POST /jobs/:id/artifacts.
type ArtifactUpload struct {
	Type     string // archive (default), junit, …
	Format   string // zip (default), gzip, raw
	ExpireIn string // "30 days", "never"; "" the instance default
	FileName string
}

// artifactFormats are the formats each artifact type may come in.
var artifactFormats = map[string][]string{
	"archive": {"zip"}, "metadata": {"gzip"}, "trace": {"raw"}, "junit": {"gzip"}, "cobertura": {"gzip"}, "dotenv": {"gzip"},
	"codequality": {"gzip"}, "sast": {"raw"}, "dependency_scanning": {"raw"}, "terraform": {"raw"}, "accessibility": {"raw"},
	"lsif": {"zip"}, "requirements": {"raw"}, "metrics": {"gzip"}, "cyclonedx": {"gzip"}, "annotations": {"gzip"},
}

// UploadArtifact streams an artifact of a job RunnerJob authenticated to
// disk, within the instance's size limit (413 beyond), expiring as asked
// (or after the instance default).
func (s *Service) UploadArtifact(ctx context.Context, j model.Job, in ArtifactUpload, r io.Reader) (model.Artifact, error) {
	if in.Type == "" {
		in.Type = "archive"
	}
	formats, ok := artifactFormats[in.Type]
	if !ok {
		return model.Artifact{}, model.Param("artifact_type does not have a valid value")
	}
	if in.Format == "" {
		in.Format = formats[0]
	}
	if !slices.Contains(formats, in.Format) && in.Format != "raw" {
		return model.Artifact{}, model.BadRequest("Artifact type " + in.Type + " is not supported in " + in.Format + " format")
	}
	settings, err := s.Settings(ctx)
	if err != nil {
		return model.Artifact{}, err
	}
	expire, err := s.artifactExpiry(in.ExpireIn, settings)
	if err != nil {
		return model.Artifact{}, err
	}
	if in.FileName == "" {
		in.FileName = in.Type + "." + in.Format
	}
	art := ArtifactInput{FileType: in.Type, Format: in.Format, FileName: in.FileName, ExpireAt: expire, Limit: MaxArtifactBytes(settings)}
	if in.Type == "dotenv" {
		// Parsed before it is stored: a file GitLab would refuse leaves
		// nothing behind.
		raw, vars, err := DotenvUpload(r, in.Format)
		if err != nil {
			return model.Artifact{}, err
		}
		art.Variables = vars
		r = bytes.NewReader(raw)
	}
	return s.StoreArtifact(ctx, j.ID, art, r)
}

// MaxArtifactBytes is the instance's artifact size limit in bytes.
func MaxArtifactBytes(st model.ApplicationSettings) int64 {
	mb := st.MaxArtifactsSize
	if mb <= 0 {
		mb = 100
	}
	return int64(mb) << 20
}

// artifactExpiry is when an artifact uploaded now with expire_in expires:
// nil for "never".
func (s *Service) artifactExpiry(expireIn string, st model.ApplicationSettings) (*time.Time, error) {
	if expireIn == "" {
		expireIn = st.DefaultArtifactsExpireIn
	}
	if expireIn == "" || strings.EqualFold(strings.TrimSpace(expireIn), "never") || expireIn == "0" {
		return nil, nil
	}
	d, err := ciconfig.ParseDuration(expireIn)
	if err != nil {
		return nil, model.Param("expire_in is invalid")
	}
	at := s.now().Add(d)
	return &at, nil
}

// DependencyArchive opens the archive of job jobID for a runner (GET
// /jobs/:id/artifacts): the token is that of a running job allowed to read
// the job (one of its project), or the job's own. No archive is 404.
func (s *Service) DependencyArchive(ctx context.Context, jobID int64, token string) (io.ReadCloser, model.Artifact, error) {
	target, err := s.db.Job(ctx, jobID)
	if errors.Is(err, model.ErrNotFound) {
		return nil, model.Artifact{}, model.NotFound("")
	}
	if err != nil {
		return nil, model.Artifact{}, err
	}
	digest := auth.Digest(token)
	if target.TokenDigest != digest {
		if !auth.PlausibleSecret(token) {
			return nil, model.Artifact{}, model.Forbidden("")
		}
		caller, err := s.db.JobByTokenDigest(ctx, digest)
		if errors.Is(err, model.ErrNotFound) {
			return nil, model.Artifact{}, model.Forbidden("")
		}
		if err != nil {
			return nil, model.Artifact{}, err
		}
		running := caller.Status == model.StatusRunning || caller.Status == model.StatusCanceling
		if !running || caller.ProjectID != target.ProjectID {
			return nil, model.Artifact{}, model.Forbidden("")
		}
	}
	return s.openArchive(ctx, target)
}

// openArchive opens a job's unexpired archive.
func (s *Service) openArchive(ctx context.Context, j model.Job) (io.ReadCloser, model.Artifact, error) {
	list, err := s.db.JobArtifacts(ctx, j.ID)
	if err != nil {
		return nil, model.Artifact{}, err
	}
	now := s.now()
	for _, a := range list {
		if archiveAvailable(a, now) {
			f, err := s.files.OpenArtifact(a.Path)
			if err != nil {
				return nil, a, model.NotFound("")
			}
			return f, a, nil
		}
	}
	return nil, model.Artifact{}, model.NotFound("")
}

// JobStatus reads a job's current status.
func (s *Service) JobStatus(ctx context.Context, id int64) (model.CIStatus, error) {
	j, err := s.db.Job(ctx, id)
	return j.Status, err
}

// LogOffset reports a log append at an offset past the log's end, with
// the log's size (the runner resends from there).
func LogOffset(err error) (size int64, ok bool) {
	var off *jobfiles.ErrOffset
	if errors.As(err, &off) {
		return off.Size, true
	}
	return 0, false
}

// AppendRunnerLog appends a runner's piece of the log of a job RunnerJob
// authenticated (AppendLog), and fails the job when the log outgrows
// MaxLogBytes: the job's status after the append is returned (failed
// then), for Job-Status.
func (s *Service) AppendRunnerLog(ctx context.Context, j model.Job, offset int64, data io.Reader) (int64, model.CIStatus, error) {
	size, err := s.appendLog(ctx, j, offset, data)
	if err != nil {
		return size, j.Status, err
	}
	if size > s.cfg.MaxLogBytes {
		dropped, err := s.Drop(ctx, j.ID, model.FailureTraceSizeExceeded)
		if st, ok := NotRunningStatus(err); ok {
			return size, st, model.Forbidden("Job is not running")
		}
		if err != nil {
			return size, j.Status, err
		}
		return size, dropped.Status, model.Forbidden("Job log is too large")
	}
	st, err := s.JobStatus(ctx, j.ID)
	return size, st, err
}
