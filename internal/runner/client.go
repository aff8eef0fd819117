package runner

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/url"
	"runtime"
	"strconv"
	"strings"
	"time"
)

// client speaks the runner side of GitLab's runner protocol
// (/api/v4/runners, /api/v4/jobs) to one server. Its methods make one
// request each; retrying is the caller's decision.
type client struct {
	base      *url.URL // <server>/api/v4/
	http      *http.Client
	userAgent string
	info      runnerInfo
}

// runnerInfo is the "info" object of register and job requests: who this
// runner is and which protocol features it implements.
type runnerInfo struct {
	Name         string          `json:"name"`
	Version      string          `json:"version"`
	Revision     string          `json:"revision"`
	Platform     string          `json:"platform"`
	Architecture string          `json:"architecture"`
	Executor     string          `json:"executor"`
	Shell        string          `json:"shell"`
	Features     map[string]bool `json:"features"`
}

// features are the protocol features this runner implements. The server
// refuses to hand a job to a runner lacking a feature the job needs
// (artifacts:reports needs upload_multiple_artifacts, exit codes need
// return_exit_code, …).
var features = []string{
	"variables", "artifacts", "upload_multiple_artifacts", "upload_raw_artifacts", "refspecs",
	"masking", "raw_variables", "artifacts_exclude", "multi_build_steps", "trace_reset",
	"trace_checksum", "trace_size", "cancelable", "return_exit_code", "cancel_gracefully", "shared",
	"cache", "fallback_cache_keys",
}

func newClient(cfg Config) (*client, error) {
	base, err := apiBase(cfg.URL)
	if err != nil {
		return nil, err
	}
	hc := cfg.HTTPClient
	if hc == nil {
		hc = defaultHTTPClient()
	}
	version := cfg.Version
	if version == "" {
		version = "dev"
	}
	f := make(map[string]bool, len(features))
	for _, name := range features {
		f[name] = true
	}
	return &client{
		base:      base,
		http:      hc,
		userAgent: fmt.Sprintf("quarry-runner %s (%s; %s/%s)", version, runtime.Version(), runtime.GOOS, runtime.GOARCH),
		info: runnerInfo{
			Name:         "quarry-runner",
			Version:      version,
			Revision:     cfg.Revision,
			Platform:     runtime.GOOS,
			Architecture: runtime.GOARCH,
			Executor:     "shell",
			Shell:        "bash",
			Features:     f,
		},
	}, nil
}

// defaultHTTPClient has no overall timeout (jobs/request is parked by the
// server for up to about 50 s; uploads take as long as they take) but gives
// up on a server that sends no response header for 10 minutes, as
// gitlab-runner does. It never follows a redirect to another host: requests
// carry job tokens in headers.
func defaultHTTPClient() *http.Client {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.ResponseHeaderTimeout = 10 * time.Minute
	return &http.Client{
		Transport: t,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) >= 10 || req.URL.Host != via[0].URL.Host || req.URL.Scheme != via[0].URL.Scheme {
				return http.ErrUseLastResponse
			}
			return nil
		},
	}
}

// apiBase turns the configured server address into the API root the way
// gitlab-runner does: a trailing "/" and "/ci" are dropped, "/api/v4/" is
// appended.
func apiBase(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("server url: %w", err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("server url %q: want http(s)://host[:port]", raw)
	}
	p := strings.TrimRight(u.Path, "/")
	p = strings.TrimRight(strings.TrimSuffix(p, "/ci"), "/")
	u.Path, u.RawPath, u.RawQuery, u.Fragment = p+"/api/v4/", "", "", ""
	return u, nil
}

// statusError is an answer with a status code the call does not expect.
type statusError struct {
	Method, Path string
	Code         int
	Message      string // the server's {"message": …} or {"error": …}, if any
}

func (e *statusError) Error() string {
	s := fmt.Sprintf("%s %s: %d %s", e.Method, e.Path, e.Code, http.StatusText(e.Code))
	if e.Message != "" {
		s += ": " + e.Message
	}
	return s
}

// statusCode is the status of a *statusError in err's chain, or 0.
func statusCode(err error) int {
	var se *statusError
	if errors.As(err, &se) {
		return se.Code
	}
	return 0
}

// errorFrom reads (a bounded part of) a refused answer and closes it.
func errorFrom(resp *http.Response) *statusError {
	defer resp.Body.Close()
	e := &statusError{Method: resp.Request.Method, Path: resp.Request.URL.Path, Code: resp.StatusCode}
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	var body struct {
		Message json.RawMessage `json:"message"`
		Error   string          `json:"error"`
	}
	if json.Unmarshal(b, &body) == nil {
		var s string
		switch {
		case json.Unmarshal(body.Message, &s) == nil:
			e.Message = s
		case len(body.Message) > 0:
			e.Message = string(body.Message)
		default:
			e.Message = body.Error
		}
	}
	return e
}

// drain reads what is left of a body (so the connection is reused) and
// closes it.
func drain(resp *http.Response) {
	io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
}

// readJSON decodes an answer that must be JSON: like gitlab-runner, a body
// whose media type is not application/json is refused.
func readJSON(resp *http.Response, out any) error {
	defer drain(resp)
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if mt != "application/json" {
		return fmt.Errorf("%s %s: answer is %q, not application/json", resp.Request.Method, resp.Request.URL.Path, mt)
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		return fmt.Errorf("%s %s: decode answer: %w", resp.Request.Method, resp.Request.URL.Path, err)
	}
	return nil
}

func (c *client) newRequest(ctx context.Context, method, path string, query url.Values, body io.Reader) (*http.Request, error) {
	u := c.base.ResolveReference(&url.URL{Path: path})
	if len(query) > 0 {
		u.RawQuery = query.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, method, u.String(), body)
	if err != nil {
		return nil, err
	}
	req.Header.Set("User-Agent", c.userAgent)
	return req, nil
}

// callTimeout bounds every call but the long-polled job request and the
// artifact transfers, so a stuck server cannot hold a job's log or report.
const callTimeout = time.Minute

// doJSON sends in as a JSON body. The answer's body must be read before
// cancel is called.
func (c *client) doJSON(ctx context.Context, method, path string, in any, header http.Header) (*http.Response, error) {
	b, err := json.Marshal(in)
	if err != nil {
		return nil, err
	}
	req, err := c.newRequest(ctx, method, path, nil, bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	for k, v := range header {
		req.Header[k] = v
	}
	return c.http.Do(req)
}

// registration is the server's answer to POST /runners and
// POST /runners/verify.
type registration struct {
	ID             int64   `json:"id"`
	Token          string  `json:"token"`
	TokenExpiresAt *string `json:"token_expires_at"`
}

type registerRequest struct {
	Token       string     `json:"token"`
	Description string     `json:"description"`
	Info        runnerInfo `json:"info"`
	Paused      bool       `json:"paused"`
	Locked      bool       `json:"locked"`
	RunUntagged bool       `json:"run_untagged"`
	TagList     string     `json:"tag_list"`
}

// register is POST /runners: a registration token buys a runner token.
func (c *client) register(ctx context.Context, in registerRequest) (registration, error) {
	var out registration
	in.Info = c.info
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	resp, err := c.doJSON(ctx, http.MethodPost, "runners", in, nil)
	if err != nil {
		return out, fmt.Errorf("register runner: %w", err)
	}
	if resp.StatusCode != http.StatusCreated {
		return out, fmt.Errorf("register runner: %w", errorFrom(resp))
	}
	if err := readJSON(resp, &out); err != nil {
		return out, fmt.Errorf("register runner: %w", err)
	}
	if out.Token == "" {
		return out, errors.New("register runner: the server answered no token")
	}
	return out, nil
}

// verify is POST /runners/verify: checks a runner authentication token
// (glrt-…) and records this machine's system id. An old server may answer
// 200 without JSON; then the token stays what it was.
func (c *client) verify(ctx context.Context, token, systemID string) (registration, error) {
	out := registration{Token: token}
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	resp, err := c.doJSON(ctx, http.MethodPost, "runners/verify", map[string]string{"token": token, "system_id": systemID}, nil)
	if err != nil {
		return out, fmt.Errorf("verify runner: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		return out, fmt.Errorf("verify runner: %w", errorFrom(resp))
	}
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if mt != "application/json" {
		drain(resp)
		return out, nil
	}
	if err := readJSON(resp, &out); err != nil {
		return out, fmt.Errorf("verify runner: %w", err)
	}
	if out.Token == "" {
		out.Token = token
	}
	return out, nil
}

// unregister is DELETE /runners: the runner is deleted on the server.
func (c *client) unregister(ctx context.Context, token string) error {
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	resp, err := c.doJSON(ctx, http.MethodDelete, "runners", map[string]string{"token": token}, nil)
	if err != nil {
		return fmt.Errorf("unregister runner: %w", err)
	}
	if resp.StatusCode != http.StatusNoContent {
		return fmt.Errorf("unregister runner: %w", errorFrom(resp))
	}
	drain(resp)
	return nil
}

type jobRequest struct {
	Token      string     `json:"token"`
	SystemID   string     `json:"system_id"`
	LastUpdate string     `json:"last_update"`
	Info       runnerInfo `json:"info"`
}

// requestJob is POST /jobs/request. It returns the job the server assigned
// (201), or nil and the X-GitLab-Last-Update value to send next time (204).
// The server may park the request for about 50 s before answering 204.
func (c *client) requestJob(ctx context.Context, token, systemID, lastUpdate string) (*job, string, error) {
	resp, err := c.doJSON(ctx, http.MethodPost, "jobs/request",
		jobRequest{Token: token, SystemID: systemID, LastUpdate: lastUpdate, Info: c.info}, nil)
	if err != nil {
		return nil, lastUpdate, fmt.Errorf("request job: %w", err)
	}
	switch resp.StatusCode {
	case http.StatusNoContent:
		drain(resp)
		return nil, resp.Header.Get("X-GitLab-Last-Update"), nil
	case http.StatusCreated:
		var j job
		if err := readJSON(resp, &j); err != nil {
			return nil, lastUpdate, fmt.Errorf("request job: %w", err)
		}
		if j.ID <= 0 || j.Token == "" {
			return nil, lastUpdate, fmt.Errorf("request job: payload without id or token")
		}
		return &j, lastUpdate, nil
	}
	return nil, lastUpdate, fmt.Errorf("request job: %w", errorFrom(resp))
}

// answer is what the job endpoints (PUT /jobs/:id, PATCH /jobs/:id/trace)
// say besides the status code.
type answer struct {
	Code int
	// JobStatus is the Job-Status header: "running", or "canceling"
	// (stop the script, run after_script, report), "canceled" or "failed"
	// (abort).
	JobStatus string
	// Interval is X-GitLab-Trace-Update-Interval (0 when absent).
	Interval time.Duration
	// RemoteSize is the log size the server holds, from "Range: 0-<size>"
	// (-1 when absent).
	RemoteSize int
}

func answerOf(resp *http.Response) answer {
	a := answer{Code: resp.StatusCode, JobStatus: resp.Header.Get("Job-Status"), RemoteSize: -1}
	if s, err := strconv.Atoi(resp.Header.Get("X-GitLab-Trace-Update-Interval")); err == nil && s >= 0 {
		a.Interval = time.Duration(s) * time.Second
	}
	if n, ok := parseRange(resp.Header.Get("Range")); ok {
		a.RemoteSize = n
	}
	return a
}

// aborted reports whether the server said the job is over for the runner:
// it was canceled without grace or failed meanwhile.
func (a answer) aborted() bool { return a.JobStatus == "canceled" || a.JobStatus == "failed" }

// canceling reports a graceful cancel: stop the script, run after_script,
// then send the final state.
func (a answer) canceling() bool { return a.JobStatus == "canceling" }

// parseRange reads the "Range: 0-<size>" header of a trace answer.
func parseRange(h string) (int, bool) {
	start, end, ok := strings.Cut(strings.TrimSpace(h), "-")
	if !ok || start != "0" {
		return 0, false
	}
	n, err := strconv.Atoi(end)
	if err != nil || n < 0 {
		return 0, false
	}
	return n, true
}

// contentRange is the Content-Range of a trace patch of n bytes at offset
// start: "<start>-<end>" with end = start+n-1, as gitlab-runner sends it.
func contentRange(start, n int) string {
	return strconv.Itoa(start) + "-" + strconv.Itoa(start+n-1)
}

type jobOutput struct {
	Checksum string `json:"checksum"`
	Bytesize int    `json:"bytesize"`
}

// jobUpdate is the body of PUT /jobs/:id.
type jobUpdate struct {
	Token         string     `json:"token"`
	State         string     `json:"state"`
	FailureReason string     `json:"failure_reason,omitempty"`
	ExitCode      int        `json:"exit_code,omitempty"`
	Checksum      string     `json:"checksum,omitempty"` // older servers read it here
	Output        jobOutput  `json:"output"`
	Info          runnerInfo `json:"info"`
}

// updateJob is PUT /jobs/:id: a keep-alive (state running) or the final
// state.
func (c *client) updateJob(ctx context.Context, id int64, u jobUpdate) (answer, error) {
	u.Info = c.info
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	resp, err := c.doJSON(ctx, http.MethodPut, "jobs/"+strconv.FormatInt(id, 10), u, http.Header{"Job-Token": {u.Token}})
	if err != nil {
		return answer{}, fmt.Errorf("update job %d: %w", id, err)
	}
	drain(resp)
	return answerOf(resp), nil
}

// patchTrace is PATCH /jobs/:id/trace: data goes at offset of the job's
// log.
func (c *client) patchTrace(ctx context.Context, id int64, token string, data []byte, offset int) (answer, error) {
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	req, err := c.newRequest(ctx, http.MethodPatch, "jobs/"+strconv.FormatInt(id, 10)+"/trace", nil, bytes.NewReader(data))
	if err != nil {
		return answer{}, err
	}
	req.Header.Set("Content-Type", "text/plain")
	req.Header.Set("Content-Range", contentRange(offset, len(data)))
	req.Header.Set("Job-Token", token)
	resp, err := c.http.Do(req)
	if err != nil {
		return answer{}, fmt.Errorf("patch trace of job %d: %w", id, err)
	}
	drain(resp)
	return answerOf(resp), nil
}

// errUploadDone ends an upload's writer when the server answered before
// reading the whole body.
var errUploadDone = errors.New("upload ended")

// uploadArtifact is POST /jobs/:id/artifacts with a multipart body whose
// field "file" (named filename) is what write produces. The body is
// streamed through a pipe: write runs in a goroutine that uploadArtifact
// waits for, and the file never sits in memory. It returns the status code;
// an error means no answer (or write failed).
func (c *client) uploadArtifact(ctx context.Context, id int64, token string, query url.Values, filename string, write func(io.Writer) error) (int, error) {
	pr, pw := io.Pipe()
	mw := multipart.NewWriter(pw)
	done := make(chan error, 1)
	go func() {
		err := func() error {
			part, err := mw.CreateFormFile("file", filename)
			if err != nil {
				return err
			}
			if err := write(part); err != nil {
				return err
			}
			return mw.Close()
		}()
		pw.CloseWithError(err) // nil: the reader sees EOF
		done <- err
	}()
	code, err := func() (int, error) {
		req, err := c.newRequest(ctx, http.MethodPost, "jobs/"+strconv.FormatInt(id, 10)+"/artifacts", query, pr)
		if err != nil {
			return 0, err
		}
		req.Header.Set("Content-Type", mw.FormDataContentType())
		req.Header.Set("Job-Token", token)
		resp, err := c.http.Do(req)
		if err != nil {
			return 0, err
		}
		drain(resp)
		return resp.StatusCode, nil
	}()
	pr.CloseWithError(errUploadDone)
	if werr := <-done; werr != nil && !errors.Is(werr, errUploadDone) && !errors.Is(werr, io.ErrClosedPipe) {
		return code, fmt.Errorf("write artifacts: %w", werr)
	}
	if err != nil {
		return 0, fmt.Errorf("upload artifacts of job %d: %w", id, err)
	}
	return code, nil
}

// downloadArtifacts is GET /jobs/:id/artifacts: the archive of job id,
// copied to w as it arrives.
func (c *client) downloadArtifacts(ctx context.Context, id int64, token string, w io.Writer) error {
	req, err := c.newRequest(ctx, http.MethodGet, "jobs/"+strconv.FormatInt(id, 10)+"/artifacts", nil, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Job-Token", token)
	resp, err := c.http.Do(req)
	if err != nil {
		return fmt.Errorf("download artifacts of job %d: %w", id, err)
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("download artifacts of job %d: %w", id, errorFrom(resp))
	}
	defer resp.Body.Close()
	if _, err := io.Copy(w, resp.Body); err != nil {
		return fmt.Errorf("download artifacts of job %d: %w", id, err)
	}
	return nil
}
