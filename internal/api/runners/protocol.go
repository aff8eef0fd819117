// Package runners serves runners: the runner protocol (registration,
// job requests, job state, logs and artifacts as gitlab-runner speaks
// them, reference §1), GET /job for job tokens, and the runners API users
// manage runners with.
package runners

import (
	"errors"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"strconv"
	"strings"
	"time"

	"quarry/internal/api/endpoint"
	"quarry/internal/api/entity"
	"quarry/internal/ci"
	"quarry/internal/model"
	"quarry/internal/runners"
)

// Handlers answer the runners area.
type Handlers struct {
	runners *runners.Service
	ci      *ci.Service
	r       *entity.Renderer
	// TraceInterval is the X-GitLab-Trace-Update-Interval sent with every
	// log append (seconds).
	TraceInterval int
}

// New returns the runners area.
func New(s *runners.Service, engine *ci.Service, r *entity.Renderer) *Handlers {
	return &Handlers{runners: s, ci: engine, r: r, TraceInterval: 3}
}

// maxArtifactBody bounds a streamed artifact upload before the instance's
// own limit (which the handler applies, 413) — the row's declared bound.
const maxArtifactBody = 64 << 30

// maxLogPatch bounds one log append.
const maxLogPatch = 16 << 20

// ProtocolRoutes are the rows gitlab-runner calls.
func (h *Handlers) ProtocolRoutes() []endpoint.Route {
	row, parsed := endpoint.Row, endpoint.Parsed
	none, runner, job, any := endpoint.NoAuth, endpoint.RunnerToken, endpoint.JobToken, endpoint.ScopeAny
	return []endpoint.Route{
		row("POST", "/runners", none, any, parsed, h.register),
		row("POST", "/runners/verify", runner, any, parsed, h.verify),
		row("DELETE", "/runners", runner, any, parsed, h.unregister),
		row("DELETE", "/runners/managers", runner, any, parsed, h.unregisterManager),
		row("POST", "/runners/reset_authentication_token", runner, any, parsed, h.resetOwnToken),
		row("POST", "/jobs/request", runner, any, parsed, h.requestJob),
		// The job's own calls: the handler checks the job token itself, as
		// GitLab answers them (403 with Job-Status, not 401).
		row("PUT", "/jobs/{job_id}", none, any, parsed, h.updateJob),
		row("PATCH", "/jobs/{job_id}/trace", none, any, endpoint.Streamed(maxLogPatch), h.appendTrace),
		row("POST", "/jobs/{job_id}/artifacts/authorize", none, any, parsed, h.authorizeArtifact),
		row("POST", "/jobs/{job_id}/artifacts", none, any, endpoint.Streamed(maxArtifactBody), h.uploadArtifact),
		row("GET", "/jobs/{job_id}/artifacts", none, any, parsed, h.downloadDependency),
		// A job's token as a client credential.
		row("GET", "/job", job, any, parsed, h.tokenJob),
	}
}

// runnerInfo reads the info hash a runner sends, with its address.
func runnerInfo(c *endpoint.Call) model.RunnerInfo {
	info := c.P.Hash("info")
	return model.RunnerInfo{Name: info["name"], Version: info["version"], Revision: info["revision"], Platform: info["platform"],
		Architecture: info["architecture"], Executor: info["executor"], IPAddress: c.ClientIP()}
}

// registerInput reads a runner's attributes.
func registerInput(c *endpoint.Call) runners.RegisterInput {
	p := c.P
	in := runners.RegisterInput{RunUntagged: p.BoolPtr("run_untagged")}
	in.Description, _ = p.String("description")
	in.MaintenanceNote, _ = p.String("maintenance_note")
	if in.MaintenanceNote == "" {
		in.MaintenanceNote, _ = p.String("maintainer_note")
	}
	if v, ok := p.Bool("paused"); ok {
		in.Paused = v
	} else if v, ok := p.Bool("active"); ok {
		in.Paused = !v
	}
	in.Locked, _ = p.Bool("locked")
	in.TagList, _ = p.Unique("tag_list")
	in.AccessLevel, _ = p.Enum("access_level", model.RunnerNotProtected, model.RunnerRefProtected)
	if n, ok := p.Int("maximum_timeout"); ok {
		in.MaximumTimeout = int(min(max(n, 0), 1<<31-1))
	}
	return in
}

// tokenBody is the answer to registration and verification.
type tokenBody struct {
	ID             int64      `json:"id,omitempty"`
	Token          string     `json:"token"`
	TokenExpiresAt *time.Time `json:"token_expires_at"`
}

func (h *Handlers) register(c *endpoint.Call) error {
	c.P.Require("token")
	if c.P.Has("paused") && c.P.Has("active") {
		c.P.Fail("paused, active are mutually exclusive")
	}
	in := registerInput(c)
	in.Info = runnerInfo(c)
	if err := c.P.Err(); err != nil {
		return err
	}
	r, secret, err := h.runners.Register(c.Ctx(), c.P.Value("token"), in)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, tokenBody{ID: r.ID, Token: secret, TokenExpiresAt: r.TokenExpiresAt})
}

func (h *Handlers) verify(c *endpoint.Call) error {
	r := c.Actor.Runner
	if err := h.runners.Verify(c.Ctx(), r, c.P.Value("system_id"), runnerInfo(c)); err != nil {
		return err
	}
	return c.JSON(http.StatusOK, tokenBody{ID: r.ID, Token: c.P.Value("token"), TokenExpiresAt: r.TokenExpiresAt})
}

func (h *Handlers) unregister(c *endpoint.Call) error {
	if err := h.runners.Unregister(c.Ctx(), *c.Actor.Runner); err != nil {
		return err
	}
	return c.NoContent()
}

func (h *Handlers) unregisterManager(c *endpoint.Call) error {
	c.P.Require("system_id")
	if err := c.P.Err(); err != nil {
		return err
	}
	if err := h.runners.UnregisterManager(c.Ctx(), *c.Actor.Runner, c.P.Value("system_id")); err != nil {
		return err
	}
	return c.NoContent()
}

func (h *Handlers) resetOwnToken(c *endpoint.Call) error {
	secret, err := h.runners.ResetToken(c.Ctx(), *c.Actor.Runner)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, tokenBody{Token: secret})
}

// setQueueVersion sends the queue version under both header names.
func setQueueVersion(w http.ResponseWriter, v string) {
	w.Header().Set("X-GitLab-Last-Update", v)
	w.Header().Set("X-Service-Last-Update", v)
}

func (h *Handlers) requestJob(c *endpoint.Call) error {
	r := c.Actor.Runner
	if err := h.runners.Heartbeat(c.Ctx(), r, c.P.Value("system_id"), runnerInfo(c)); err != nil {
		return err
	}
	features := map[string]bool{}
	for k, v := range c.P.Hash("info[features]") {
		features[k] = v == "true"
	}
	a, version, err := h.runners.RequestJob(c.Ctx(), *r, runners.RequestInput{LastUpdate: c.P.Value("last_update"), Features: features})
	if err != nil {
		return err
	}
	if a == nil {
		setQueueVersion(c.W, version)
		return c.NoContent()
	}
	return c.JSON(http.StatusCreated, a.Payload)
}

// jobToken is the job token of a runner's job call: JOB-TOKEN, or the
// token parameter.
func jobToken(c *endpoint.Call) string {
	if t := strings.TrimSpace(c.R.Header.Get("Job-Token")); t != "" {
		return t
	}
	return c.P.Value("token")
}

// setJobStatus sends a job's status (the runner stops a job whose status
// is no longer running).
func setJobStatus(w http.ResponseWriter, st model.CIStatus) {
	if st != "" {
		w.Header().Set("Job-Status", string(st))
	}
}

// runnerJob authenticates a job call; the failure carries the job's
// status when it is known.
func (h *Handlers) runnerJob(c *endpoint.Call) (model.Job, error) {
	id, err := c.PathID("job_id")
	if err != nil {
		return model.Job{}, err
	}
	j, err := h.ci.RunnerJob(c.Ctx(), id, jobToken(c))
	if err != nil {
		setJobStatus(c.W, j.Status)
	}
	return j, err
}

// text answers a runner with a status and its number as the body.
func text(c *endpoint.Call, status int) error {
	c.W.Header().Set("Content-Type", "text/plain; charset=utf-8")
	c.W.WriteHeader(status)
	_, _ = io.WriteString(c.W, strconv.Itoa(status))
	return nil
}

func (h *Handlers) updateJob(c *endpoint.Call) error {
	j, err := h.runnerJob(c)
	if err != nil {
		return err
	}
	state, _ := c.P.String("state")
	u := ci.RunnerUpdate{State: state, Reason: model.FailureReason(c.P.Value("failure_reason")), ExitCode: c.P.IntPtr("exit_code")}
	if n, ok := c.P.Int("output[bytesize]"); ok {
		u.LogBytes = &n
	}
	if err := c.P.Err(); err != nil {
		return err
	}
	j, err = h.ci.UpdateFromRunner(c.Ctx(), j, u)
	if st, ok := ci.NotRunningStatus(err); ok {
		setJobStatus(c.W, st)
		return model.Forbidden("Job is not running")
	}
	if err != nil {
		return err
	}
	setJobStatus(c.W, j.Status)
	return text(c, http.StatusOK)
}

// contentRange reads "start-end" (the end is ignored, as GitLab does).
func contentRange(v string) (int64, bool) {
	start, _, ok := strings.Cut(strings.TrimSpace(v), "-")
	if !ok {
		return 0, false
	}
	n, err := strconv.ParseInt(start, 10, 64)
	return n, err == nil && n >= 0
}

func (h *Handlers) appendTrace(c *endpoint.Call) error {
	j, err := h.runnerJob(c)
	if err != nil {
		return err
	}
	cr := c.R.Header.Get("Content-Range")
	if cr == "" {
		return model.BadRequestRaw("400 Missing header Content-Range")
	}
	start, ok := contentRange(cr)
	if !ok {
		return model.BadRequestRaw("400 Bad request - Content-Range is invalid")
	}
	size, status, err := h.ci.AppendRunnerLog(c.Ctx(), j, start, c.Body())
	if at, ok := ci.LogOffset(err); ok {
		c.W.Header().Set("Range", "0-"+strconv.FormatInt(at, 10))
		c.W.WriteHeader(http.StatusRequestedRangeNotSatisfiable)
		return nil
	}
	// The job may have been canceled meanwhile, or failed for its log's
	// size: the runner learns it here.
	setJobStatus(c.W, status)
	if err != nil {
		return endpoint.BodyError(err)
	}
	c.W.Header().Set("Range", "0-"+strconv.FormatInt(size, 10))
	interval := strconv.Itoa(h.TraceInterval)
	c.W.Header().Set("X-GitLab-Trace-Update-Interval", interval)
	c.W.Header().Set("X-Service-Trace-Update-Interval", interval)
	c.W.WriteHeader(http.StatusAccepted)
	return nil
}

func (h *Handlers) authorizeArtifact(c *endpoint.Call) error {
	if _, err := h.runnerJob(c); err != nil {
		return err
	}
	settings, err := h.ci.Settings(c.Ctx())
	if err != nil {
		return err
	}
	limit := ci.MaxArtifactBytes(settings)
	if n, ok := c.P.Int("filesize"); ok && n > limit {
		return model.TooLarge()
	}
	return c.JSON(http.StatusOK, map[string]any{"TempPath": "", "MaximumSize": limit})
}

func (h *Handlers) uploadArtifact(c *endpoint.Call) error {
	j, err := h.runnerJob(c)
	if err != nil {
		return err
	}
	in := ci.ArtifactUpload{Type: c.P.Value("artifact_type"), Format: c.P.Value("artifact_format"), ExpireIn: c.P.Value("expire_in")}
	mediaType, params, err := mime.ParseMediaType(c.R.Header.Get("Content-Type"))
	if err != nil || !strings.HasPrefix(mediaType, "multipart/") || params["boundary"] == "" {
		return model.Param("file is missing")
	}
	mr := multipart.NewReader(c.Body(), params["boundary"])
	for {
		part, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			return model.Param("file is missing")
		}
		if err != nil {
			return endpoint.BodyError(err)
		}
		switch part.FormName() {
		case "file":
			in.FileName = part.FileName()
			if _, err := h.ci.UploadArtifact(c.Ctx(), j, in, part); err != nil {
				return endpoint.BodyError(err)
			}
			return text(c, http.StatusCreated)
		case "artifact_type", "artifact_format", "expire_in":
			b, err := io.ReadAll(io.LimitReader(part, 256))
			if err != nil {
				return endpoint.BodyError(err)
			}
			switch v := strings.TrimSpace(string(b)); part.FormName() {
			case "artifact_type":
				in.Type = v
			case "artifact_format":
				in.Format = v
			default:
				in.ExpireIn = v
			}
		}
	}
}

func (h *Handlers) downloadDependency(c *endpoint.Call) error {
	id, err := c.PathID("job_id")
	if err != nil {
		return err
	}
	rc, a, err := h.ci.DependencyArchive(c.Ctx(), id, jobToken(c))
	if err != nil {
		return err
	}
	defer rc.Close()
	return c.Download(rc, a.FileName, "application/zip", a.Size)
}

func (h *Handlers) tokenJob(c *endpoint.Call) error {
	v, err := h.ci.TokenJob(c.Ctx(), c.Actor)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, h.r.Job(v, c.Actor))
}
