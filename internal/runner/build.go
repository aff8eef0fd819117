package runner

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"
)

var (
	// errTimeout is the cause of a job's context when runner_info.timeout
	// passed.
	errTimeout = errors.New("job timed out")
	// errCanceled: the server asked for a graceful cancel (Job-Status:
	// canceling).
	errCanceled = errors.New("canceled")
	// errServerAbort: the server ended the job (403, Job-Status canceled
	// or failed).
	errServerAbort = errors.New("the server ended the job")
	// errShutdown: the runner is stopping.
	errShutdown = errors.New("the runner is shutting down")
)

// systemError is a failure of the runner rather than of the job's script
// (runner_system_failure, with no exit code): the build folder cannot be
// prepared, the sources cannot be fetched, a dependency's archive cannot
// be downloaded or unpacked, an upload cannot be made.
type systemError struct{ err error }

func (e *systemError) Error() string { return e.err.Error() }
func (e *systemError) Unwrap() error { return e.err }

// system marks err (when not nil) as a system failure.
func system(err error) error {
	var se *systemError
	if err == nil || errors.As(err, &se) {
		return err
	}
	return &systemError{err}
}

// build is one job on this runner, from the payload to the final state.
type build struct {
	r      *runner
	job    *job
	log    *slog.Logger
	trace  *jobLog
	slot   int    // the worker's number (CI_CONCURRENT_ID)
	dir    string // <builds_dir>/<job id>: the work tree, CI_PROJECT_DIR
	tmp    string // <builds_dir>/<job id>.tmp: scripts, file variables, downloads
	env    []string
	vars   map[string]string // the job's variables, resolved
	start  time.Time
	failed *result // the first failure, classified when it happened
	// failMsg is the end of the log's last line, "ERROR: Job failed: …".
	failMsg string

	// Contexts, outermost first: abort ends everything (the server
	// ended the job, or the runner stops); job adds the timeout; steps is
	// what a graceful cancel stops (after_script then still runs).
	abortCtx, jobCtx, stepsCtx context.Context
}

// runJob runs one job the server assigned and reports it. ctx is the
// runner's: when it ends, the job is aborted and reported failed
// (runner_system_failure) within shutdownGrace.
func (r *runner) runJob(ctx context.Context, slot int, j *job) {
	log := r.log.With("job_id", j.ID, "project_id", j.JobInfo.ProjectID, "job_name", j.JobInfo.Name)
	log.Info("job received", "stage", j.JobInfo.Stage, "ref", j.GitInfo.Ref, "sha", j.GitInfo.Sha)

	abortCtx, abort := context.WithCancelCause(context.WithoutCancel(ctx))
	defer abort(nil)
	stopOnShutdown := context.AfterFunc(ctx, func() { abort(errShutdown) })
	defer stopOnShutdown()
	timeout := time.Duration(j.RunnerInfo.Timeout) * time.Second
	if timeout <= 0 {
		timeout = time.Hour
	}
	jobCtx, cancelJob := context.WithTimeoutCause(abortCtx, timeout, errTimeout)
	defer cancelJob()
	stepsCtx, cancelSteps := context.WithCancelCause(jobCtx)
	defer cancelSteps(nil)

	secrets := []string{j.Token}
	for _, v := range j.Variables {
		if v.Masked {
			secrets = append(secrets, v.Value)
		}
	}
	tr := newJobLog(r.c, j.ID, j.Token, secrets, r.tm, log)
	tr.onCancel = func() {
		if stepsCtx.Err() == nil {
			log.Info("job canceled by the server; running after_script")
		}
		cancelSteps(errCanceled)
	}
	tr.onAbort = func() {
		if abortCtx.Err() == nil {
			log.Info("job ended by the server; aborting")
		}
		abort(errServerAbort)
	}
	// The log's requests outlive a shutdown: the final state still goes.
	tr.start(context.WithoutCancel(ctx))

	b := &build{r: r, job: j, log: log, trace: tr, slot: slot, start: time.Now(),
		// A project's work tree stays in its slot's folder between jobs
		// (GIT_STRATEGY fetch, as gitlab-runner keeps it).
		dir:      filepath.Join(r.cfg.BuildsDir, strconv.Itoa(slot), "project-"+strconv.FormatInt(j.JobInfo.ProjectID, 10)),
		tmp:      filepath.Join(r.cfg.BuildsDir, strconv.FormatInt(j.ID, 10)+".tmp"),
		abortCtx: abortCtx, jobCtx: jobCtx, stepsCtx: stepsCtx}
	res := b.execute()

	finalCtx, cancel := detach(ctx, r.tm.finalTimeout, r.tm.shutdownGrace)
	defer cancel()
	tr.finish(finalCtx, res)
	log.Info("job finished", "state", res.State, "failure_reason", res.Reason, "exit_code", res.ExitCode,
		"duration", time.Since(b.start).Round(time.Millisecond))
}

// detach returns a context that ctx's end does not end at once: it ends
// grace after ctx ends, or after limit at the latest.
func detach(ctx context.Context, limit, grace time.Duration) (context.Context, context.CancelFunc) {
	d, cancel := context.WithTimeout(context.WithoutCancel(ctx), limit)
	timerc := make(chan *time.Timer, 1)
	stop := context.AfterFunc(ctx, func() { timerc <- time.AfterFunc(grace, cancel) })
	return d, func() {
		if !stop() {
			// The AfterFunc ran (or is running): stop its timer.
			if t := <-timerc; t != nil {
				t.Stop()
			}
		}
		cancel()
	}
}

// execute runs the stages of the job, as gitlab-runner's shell executor
// does, and says how it ended. The log gets GitLab's section markers.
func (b *build) execute() result {
	cfg := b.r.cfg
	b.trace.Printf("%sRunning with quarry-runner %s (%s)%s\n", ansiBoldGreen, cfg.Version, cfg.Revision, ansiReset)
	desc := cfg.Description
	if desc == "" {
		desc = "quarry-runner"
	}
	b.trace.Printf("  on %s #%d, system ID: %s\n", desc, cfg.ID, cfg.SystemID)

	b.section("prepare_executor", "Preparing the \"shell\" executor", func() error {
		b.trace.Printf("Using Shell (bash) executor...\n")
		return nil
	})
	err := b.section("prepare_script", "Preparing environment", func() error {
		b.trace.Printf("Running on %s...\n", b.r.hostname)
		return b.prepare()
	})
	b.fail(err)
	if err == nil {
		b.fail(b.section("get_sources", "Getting source from Git repository", func() error {
			return system(b.getSources(b.stepsCtx))
		}))
	}
	if b.failed == nil && len(b.job.Cache) > 0 {
		b.section("restore_cache", "Restoring cache", func() error {
			b.restoreCaches()
			return nil
		})
	}
	if b.failed == nil && b.hasDependencies() {
		b.fail(b.section("download_artifacts", "Downloading artifacts", func() error {
			return system(b.downloadDependencies(b.stepsCtx))
		}))
	}
	if b.failed == nil {
		b.runSteps()
	}
	if len(b.job.Cache) > 0 && b.abortCtx.Err() == nil && b.jobCtx.Err() == nil && b.stepsCtx.Err() == nil {
		failed := b.failed != nil
		name, header := "archive_cache", "Saving cache for successful job"
		if failed {
			name, header = "archive_cache_on_failure", "Saving cache for failed job"
		}
		if b.wantsCaches(failed) {
			b.section(name, header, func() error {
				b.archiveCaches(b.jobCtx, failed)
				return nil
			})
		}
	}
	if len(b.job.Artifacts) > 0 && b.abortCtx.Err() == nil && b.jobCtx.Err() == nil && b.stepsCtx.Err() == nil {
		failed := b.failed != nil
		name, header := "upload_artifacts_on_success", "Uploading artifacts for successful job"
		if failed {
			name, header = "upload_artifacts_on_failure", "Uploading artifacts for failed job"
		}
		if b.wantsArtifacts(failed) {
			b.fail(b.section(name, header, func() error { return b.uploadArtifacts(b.jobCtx, failed) }))
		}
	}
	if b.failed == nil && b.stepsCtx.Err() != nil {
		// Aborted, timed out or canceled while nothing failed (during
		// after_script, say): the job did not succeed all the same.
		b.fail(context.Cause(b.stepsCtx))
	}
	b.section("cleanup_file_variables", "Cleaning up project directory and file based variables", func() error {
		return b.cleanup()
	})

	res := result{State: "success"}
	if b.failed != nil {
		res = *b.failed
	}
	switch {
	case res.State == "success":
		b.trace.Printf("%sJob succeeded%s\n", ansiBoldGreen, ansiReset)
	case res.Reason == reasonSystem:
		b.trace.Printf("%sERROR: Job failed (system failure): %s%s\n", ansiBoldRed, b.failMsg, ansiReset)
	default:
		b.trace.Printf("%sERROR: Job failed: %s%s\n", ansiBoldRed, b.failMsg, ansiReset)
	}
	return res
}

// fail records err as the job's failure unless one was recorded before,
// classified by what was happening when it came.
func (b *build) fail(err error) {
	if err == nil || b.failed != nil {
		return
	}
	res := result{State: "failed", Reason: reasonScript}
	msg := err.Error()
	var se *scriptError
	var sys *systemError
	switch cause := context.Cause(b.abortCtx); {
	case errors.Is(cause, errServerAbort):
		res.Silent, msg = true, errServerAbort.Error()
	case errors.Is(cause, errShutdown):
		res.Reason, msg = reasonSystem, "aborted: "+errShutdown.Error()
	case errors.Is(context.Cause(b.jobCtx), errTimeout):
		res.Reason = reasonTimeout
		msg = fmt.Sprintf("execution took longer than %v seconds", time.Duration(b.job.RunnerInfo.Timeout)*time.Second)
	case errors.Is(context.Cause(b.stepsCtx), errCanceled):
		msg = "canceled"
	case errors.As(err, &se):
		res.ExitCode = se.Code
	case errors.As(err, &sys):
		res.Reason = reasonSystem
	}
	b.failed, b.failMsg = &res, msg
}

// section writes GitLab's collapsible section around fn's output.
func (b *build) section(name, header string, fn func() error) error {
	b.trace.Printf("section_start:%d:%s\r%s%s%s%s\n", time.Now().Unix(), name, ansiClearLine, ansiBoldCyan, header, ansiReset)
	err := fn()
	b.trace.Printf("section_end:%d:%s\r%s", time.Now().Unix(), name, ansiClearLine)
	return err
}

// prepare makes the job's folders and resolves its variables.
func (b *build) prepare() error {
	if b.strategy() != "fetch" {
		if err := removeAll(b.dir); err != nil {
			return &systemError{fmt.Errorf("clear build folder: %w", err)}
		}
	}
	if err := removeAll(b.tmp); err != nil {
		return &systemError{fmt.Errorf("clear build folder: %w", err)}
	}
	if err := os.MkdirAll(b.dir, 0o755); err != nil {
		return &systemError{err}
	}
	if err := os.Mkdir(b.tmp, 0o700); err != nil {
		return &systemError{err}
	}
	cfg := b.r.cfg
	// Runner-side variables around the job's (ci.md §4.3): the job may
	// use the first in its own, the last win.
	vars := []variable{
		{Key: "CI_PROJECT_DIR", Value: b.dir, Raw: true},
		{Key: "CI_BUILDS_DIR", Value: cfg.BuildsDir, Raw: true},
		{Key: "CI_SERVER", Value: "yes"},
		{Key: "CI_SHARED_ENVIRONMENT", Value: "true"},
		{Key: "CI_CONCURRENT_ID", Value: strconv.Itoa(b.slot)},
		{Key: "CI_CONCURRENT_PROJECT_ID", Value: strconv.Itoa(b.slot)},
	}
	vars = append(vars, b.job.Variables...)
	vars = append(vars,
		variable{Key: "CI_RUNNER_VERSION", Value: cfg.Version, Raw: true},
		variable{Key: "CI_RUNNER_REVISION", Value: cfg.Revision, Raw: true},
		variable{Key: "CI_RUNNER_EXECUTABLE_ARCH", Value: runtime.GOOS + "/" + runtime.GOARCH, Raw: true},
	)
	resolved, err := resolveVariables(vars, b.tmp)
	if err != nil {
		return &systemError{err}
	}
	b.vars = map[string]string{}
	for _, kv := range resolved {
		k, v, _ := strings.Cut(kv, "=")
		b.vars[k] = v
	}
	b.env = append(inheritedEnv(), resolved...)
	return nil
}

// variable is the resolved value of a job variable ("" when unset).
func (b *build) variable(key string) string { return b.vars[key] }

// strategy is how the job gets its sources: fetch (reuse the project's
// work tree, the default when the server allows it), clone (a fresh one)
// or none — the job's GIT_STRATEGY, its last value winning.
func (b *build) strategy() string {
	st := ""
	for _, v := range b.job.Variables {
		if v.Key == "GIT_STRATEGY" {
			st = v.Value
		}
	}
	switch {
	case st == "none" || st == "clone":
		return st
	case st == "fetch" || b.job.AllowGitFetch:
		return "fetch"
	}
	return "clone"
}

// runSteps runs the job's steps in order: on_success steps while nothing
// failed, on_failure ones after a failure, always ones (after_script) in
// any case, even after a timeout or a graceful cancel, each for at most
// tm.afterScript. A failing step that allows failure (after_script) only
// leaves a warning.
func (b *build) runSteps() {
	for _, s := range b.job.Steps {
		switch s.When {
		case "on_failure":
			if b.failed == nil {
				continue
			}
		case "always":
		default:
			if b.failed != nil {
				continue
			}
		}
		if b.abortCtx.Err() != nil {
			return
		}
		ctx, cancel, status := b.stepsCtx, context.CancelFunc(func() {}), "running"
		if s.When == "always" {
			ctx, cancel = context.WithTimeout(b.abortCtx, b.r.tm.afterScript)
			status = b.status()
		}
		name := "step_" + s.Name
		header := fmt.Sprintf("Executing %q stage of the job script", name)
		if s.Name == "after_script" {
			name, header = "after_script", "Running after_script"
		}
		err := b.section(name, header, func() error {
			if s.Name == "after_script" {
				b.trace.Printf("Running after script...\n")
			}
			if s.Name == "release" && b.job.Release != nil {
				return b.runRelease(ctx, s)
			}
			return b.runStep(ctx, s, status)
		})
		cancel()
		if err == nil {
			continue
		}
		if s.AllowFailure {
			b.trace.Printf("%sWARNING: %s failed, but job will continue unaffected: %v%s\n", ansiYellow, s.Name, err, ansiReset)
			continue
		}
		b.fail(err)
	}
}

// status is CI_JOB_STATUS for after_script: success, failed or canceled.
func (b *build) status() string {
	switch {
	case errors.Is(context.Cause(b.stepsCtx), errCanceled):
		return "canceled"
	case b.failed != nil:
		return "failed"
	}
	return "success"
}

func (b *build) runStep(ctx context.Context, s step, status string) error {
	file := filepath.Join(b.tmp, "step_"+fileVarName(s.Name)+".sh")
	if err := os.WriteFile(file, []byte(stepScript(s.Script)), 0o700); err != nil {
		return &systemError{err}
	}
	env := append(b.env[:len(b.env):len(b.env)], "CI_JOB_STATUS="+status)
	return runScript(ctx, b.r.bash, file, b.dir, env, b.trace)
}

func (b *build) hasDependencies() bool {
	for _, d := range b.job.Dependencies {
		if d.ArtifactsFile != nil {
			return true
		}
	}
	return false
}

// downloadDependencies fetches and unpacks the archive of every
// dependency that has one, each streamed to a file first (a zip is read
// from its end).
func (b *build) downloadDependencies(ctx context.Context) error {
	for _, d := range b.job.Dependencies {
		if d.ArtifactsFile == nil {
			continue
		}
		b.trace.Printf("Downloading artifacts for %s (%d)...\n", d.Name, d.ID)
		token := d.Token
		if token == "" {
			token = b.job.Token
		}
		if err := b.downloadDependency(ctx, d.ID, token); err != nil {
			b.trace.Printf("%sERROR: Downloading artifacts from coordinator... %v%s\n", ansiBoldRed, err, ansiReset)
			return fmt.Errorf("download artifacts of %s (%d): %w", d.Name, d.ID, err)
		}
	}
	return nil
}

func (b *build) downloadDependency(ctx context.Context, id int64, token string) error {
	f, err := os.CreateTemp(b.tmp, "artifacts-*.zip")
	if err != nil {
		return &systemError{err}
	}
	defer os.Remove(f.Name())
	defer f.Close()
	if err := b.r.c.downloadArtifacts(ctx, id, token, f); err != nil {
		if code := statusCode(err); code != 0 {
			return fmt.Errorf("%d %s", code, strings.ToLower(http.StatusText(code)))
		}
		return err
	}
	b.trace.Printf("Downloading artifacts from coordinator... ok  id=%d responseStatus=200 OK\n", id)
	size, err := f.Seek(0, 2)
	if err != nil {
		return &systemError{err}
	}
	n, err := extractZip(f, size, b.dir)
	if err != nil {
		return err
	}
	b.trace.Printf("%d files and folders extracted\n", n)
	return nil
}

// wantsArtifacts reports whether some artifacts entry uploads for a job
// that failed (or not).
func (b *build) wantsArtifacts(failed bool) bool {
	for _, a := range b.job.Artifacts {
		if uploadsWhen(a.When, failed) {
			return true
		}
	}
	return false
}

func uploadsWhen(when string, failed bool) bool {
	switch when {
	case "always":
		return true
	case "on_failure":
		return failed
	}
	return !failed
}

// uploadArtifacts uploads every artifacts entry whose when fits the
// job's result. The first failed upload fails the job: an archive over
// the server's limit, a refused upload or an entry the runner cannot
// make (a raw report of several files) as the job's failure
// (script_failure), anything else — no answer, server errors after the
// retries, files that cannot be read — as the runner's
// (runner_system_failure).
func (b *build) uploadArtifacts(ctx context.Context, failed bool) error {
	root, err := os.OpenRoot(b.dir)
	if err != nil {
		return &systemError{err}
	}
	defer root.Close()
	for _, a := range b.job.Artifacts {
		if !uploadsWhen(a.When, failed) {
			continue
		}
		if err := b.uploadArtifact(ctx, root, a); err != nil {
			return err
		}
	}
	return nil
}

func (b *build) uploadArtifact(ctx context.Context, root *os.Root, a artifact) error {
	typ, format := a.ArtifactType, a.ArtifactFormat
	if typ == "" {
		typ = "archive"
	}
	if format == "" {
		format = "zip"
		if typ != "archive" {
			format = "gzip"
		}
	}
	b.trace.Printf("Uploading artifacts...\n")
	var untracked []string
	if a.Untracked {
		list, err := b.untrackedFiles(ctx)
		if err != nil {
			// As gitlab-runner's archiver: a warning, the rest goes.
			b.trace.Printf("%sWARNING: untracked: %v%s\n", ansiYellow, err, ansiReset)
		}
		untracked = list
	}
	sel := selectArtifacts(root.FS(), b.dir, a.Paths, untracked, a.Exclude)
	for i, p := range a.Paths {
		b.trace.Printf("%s: found %d matching artifact files and directories\n", p, sel.Found[i])
	}
	if a.Untracked {
		if sel.Untracked > 0 {
			b.trace.Printf("untracked: found %d files\n", sel.Untracked)
		} else {
			b.trace.Printf("%sWARNING: untracked: no files%s\n", ansiYellow, ansiReset)
		}
	}
	for i, p := range a.Exclude {
		if sel.Excluded[i] > 0 {
			b.trace.Printf("%s: excluded %d files\n", p, sel.Excluded[i])
		}
	}
	for _, w := range sel.Warnings {
		b.trace.Printf("%sWARNING: %s%s\n", ansiYellow, w, ansiReset)
	}
	if len(sel.Names) == 0 {
		b.trace.Printf("%sWARNING: No files to upload%s\n", ansiYellow, ansiReset)
		return nil
	}

	name := a.Name
	var filename string
	var write func(w io.Writer) error
	switch format {
	case "zip":
		if name == "" {
			name = "artifacts"
		}
		filename = name + ".zip"
		write = func(w io.Writer) error { return writeZip(w, root, sel.Names) }
	case "gzip":
		if name == "" {
			name = typ
		}
		filename = name + ".gz"
		files := regularFiles(root, sel.Names)
		write = func(w io.Writer) error { return writeGzipMembers(w, root, files) }
	case "raw":
		files := regularFiles(root, sel.Names)
		if len(files) != 1 {
			return fmt.Errorf("artifacts %q: the raw format takes exactly one file, found %d", typ, len(files))
		}
		filename = name
		if filename == "" {
			filename = path.Base(files[0])
		}
		write = func(w io.Writer) error { return copyFile(w, root, files[0]) }
	default:
		return fmt.Errorf("artifacts %q: unknown format %q", typ, format)
	}
	filename = path.Base(filepath.ToSlash(filename))

	q := url.Values{"artifact_type": {typ}, "artifact_format": {format}}
	if a.ExpireIn != "" {
		q.Set("expire_in", a.ExpireIn)
	}
	bo := backoff{min: b.r.tm.retryBase, max: 8 * b.r.tm.retryBase}
	for attempt := 0; ; attempt++ {
		code, err := b.r.c.uploadArtifact(ctx, b.job.ID, b.job.Token, q, filename, write)
		status := ""
		if err == nil {
			status = fmt.Sprintf("%d %s", code, http.StatusText(code))
		}
		switch {
		case err == nil && code == 201:
			b.trace.Printf("Uploading artifacts as %q to coordinator... %s  id=%d responseStatus=%s\n", typ, status, b.job.ID, status)
			return nil
		case err == nil && code == 413:
			b.trace.Printf("%sERROR: Uploading artifacts as %q to coordinator... too large archive%s  id=%d responseStatus=%s\n", ansiBoldRed, typ, ansiReset, b.job.ID, status)
			return fmt.Errorf("upload artifacts: too large")
		case err == nil && code == 403:
			b.trace.Printf("%sERROR: Uploading artifacts as %q to coordinator... forbidden%s  id=%d responseStatus=%s\n", ansiBoldRed, typ, ansiReset, b.job.ID, status)
			return fmt.Errorf("upload artifacts: forbidden")
		case err == nil && code >= 400 && code < 500 && code != http.StatusRequestTimeout && code != http.StatusTooManyRequests:
			// Refused (a dotenv report the server cannot parse is a
			// 400): the same upload would be refused again.
			b.trace.Printf("%sERROR: Uploading artifacts as %q to coordinator... refused%s  id=%d responseStatus=%s\n", ansiBoldRed, typ, ansiReset, b.job.ID, status)
			return fmt.Errorf("upload artifacts: %s", status)
		case ctx.Err() != nil:
			return ctx.Err()
		}
		if err != nil {
			status = err.Error()
		}
		if attempt == maxUploadRetries {
			b.trace.Printf("%sERROR: Uploading artifacts as %q to coordinator... failed%s  id=%d status=%s\n", ansiBoldRed, typ, ansiReset, b.job.ID, status)
			return &systemError{fmt.Errorf("upload artifacts: %s", status)}
		}
		wait := bo.next()
		b.trace.Printf("%sWARNING: Uploading artifacts as %q to coordinator... failed%s  id=%d status=%s; retrying in %v\n", ansiYellow, typ, ansiReset, b.job.ID, status, wait.Round(time.Millisecond))
		if !sleep(ctx, wait) {
			return ctx.Err()
		}
	}
}

// maxUploadRetries is how often a failed upload (no answer, a 408, 429 or
// 5xx) is tried again.
const maxUploadRetries = 3

// cleanup removes the job's folders (the work tree stays for the
// project's next job when the strategy is fetch).
func (b *build) cleanup() error {
	var err error
	if b.strategy() != "fetch" {
		err = removeAll(b.dir)
	}
	if err2 := removeAll(b.tmp); err == nil {
		err = err2
	}
	if err != nil {
		b.log.Warn("remove build folder", "err", err)
	}
	return err
}

// removeAll is os.RemoveAll that also removes read-only folders (Go's
// module cache makes them).
func removeAll(dir string) error {
	if err := os.RemoveAll(dir); err == nil {
		return nil
	}
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			os.Chmod(p, 0o700)
		}
		return nil
	})
	return os.RemoveAll(dir)
}
