package runner

import (
	"archive/zip"
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"quarry/internal/git/gittest"
	"quarry/internal/leaktest"
)

// TestMain fails the package when its tests leave goroutines or git
// processes behind.
func TestMain(m *testing.M) { leaktest.Main(m) }

func testTiming() timing {
	return timing{
		traceInterval: 50 * time.Millisecond,
		keepAlive:     300 * time.Millisecond,
		afterScript:   20 * time.Second,
		finalTimeout:  20 * time.Second,
		shutdownGrace: 5 * time.Second,
		retryBase:     10 * time.Millisecond,
		pollMin:       10 * time.Millisecond,
		pollMax:       100 * time.Millisecond,
		quietPoll:     50 * time.Millisecond,
	}
}

// harness is a runner working for a fake server, with a repository to
// build.
type harness struct {
	t      *testing.T
	srv    *fakeServer
	repo   string
	sha    string
	builds string
	logs   *testLogger
}

func newHarness(t *testing.T) *harness {
	repo := gittest.NewRepo(t)
	sha := gittest.Commit(t, repo, gittest.Files{"README.md": "hello from the repository\n", "src/main.sh": "echo main\n"},
		gittest.Branch("main"), gittest.Message("first"))
	gittest.Run(t, repo, nil, "update-server-info") // for the dumb HTTP server
	return &harness{t: t, srv: newFakeServer(t, repo), repo: repo, sha: sha, builds: t.TempDir(), logs: &testLogger{}}
}

// start runs the runner until the test ends.
func (h *harness) start(concurrent int) {
	cfg := Config{URL: h.srv.srv.URL + "/", Token: runnerToken, ID: 34, SystemID: "s_0123456789ab", BuildsDir: h.builds,
		Concurrent: concurrent, Version: "1.2.3", Revision: "abcdef12", Description: "test runner"}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- run(ctx, cfg, h.logs.logger(), testTiming()) }()
	h.t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				h.t.Errorf("Run: %v", err)
			}
		case <-time.After(30 * time.Second):
			h.t.Errorf("Run did not return after its context ended")
		}
		for _, secret := range []string{runnerToken, "job-token-"} {
			if strings.Contains(h.logs.String(), secret) {
				h.t.Errorf("the runner's log holds a secret %q:\n%s", secret, h.logs.String())
			}
		}
	})
}

// job is a payload for the harness's repository.
func (h *harness) job(id int, script []string) map[string]any {
	token := fmt.Sprintf("job-token-%d-abcdef", id)
	host := strings.TrimPrefix(h.srv.srv.URL, "http://")
	return map[string]any{
		"id": id, "token": token, "allow_git_fetch": true,
		"job_info": map[string]any{"id": id, "name": "test", "stage": "test", "project_id": 7, "project_name": "demo"},
		"git_info": map[string]any{"repo_url": "http://gitlab-ci-token:" + token + "@" + host + "/git/demo.git",
			"ref": "main", "sha": h.sha, "before_sha": strings.Repeat("0", 40), "ref_type": "branch",
			"refspecs": []string{"+refs/heads/main:refs/remotes/origin/main"}, "depth": 0},
		"runner_info": map[string]any{"timeout": 3600},
		"variables": []map[string]any{
			{"key": "CI_JOB_ID", "value": fmt.Sprint(id), "public": true, "masked": false},
			{"key": "CI_JOB_TOKEN", "value": token, "public": false, "masked": true},
		},
		"steps":     []map[string]any{{"name": "script", "script": script, "timeout": 3600, "when": "on_success", "allow_failure": false}},
		"image":     nil,
		"services":  []any{},
		"artifacts": nil, "cache": []any{}, "credentials": []any{}, "dependencies": []any{},
		"features": map[string]any{"trace_sections": true,
			"failure_reasons": []string{"unknown_failure", "script_failure", "runner_system_failure", "job_execution_timeout"}},
	}
}

func withAfterScript(j map[string]any, script ...string) map[string]any {
	j["steps"] = append(j["steps"].([]map[string]any),
		map[string]any{"name": "after_script", "script": script, "timeout": 3600, "when": "always", "allow_failure": true})
	return j
}

func addVariables(j map[string]any, vars ...map[string]any) {
	j["variables"] = append(j["variables"].([]map[string]any), vars...)
}

// checkFinalLog checks the server holds exactly the log the final state
// describes.
func (h *harness) checkFinalLog(id int64, final jobUpdate) string {
	h.t.Helper()
	log := h.srv.log(id)
	want := fmt.Sprintf("crc32:%08x", crc32.ChecksumIEEE([]byte(log)))
	if final.Output.Checksum != want || final.Output.Bytesize != len(log) {
		h.t.Errorf("final output %+v; the server holds %d bytes, %s", final.Output, len(log), want)
	}
	return log
}

func mustContain(t *testing.T, log string, subs ...string) {
	t.Helper()
	for _, s := range subs {
		if !strings.Contains(log, s) {
			t.Errorf("log lacks %q:\n%s", s, log)
		}
	}
}

func mustNotContain(t *testing.T, log string, subs ...string) {
	t.Helper()
	for _, s := range subs {
		if strings.Contains(log, s) {
			t.Errorf("log holds %q:\n%s", s, log)
		}
	}
}

func zipOf(t *testing.T, files map[string]string) []byte {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for name, content := range files {
		w, err := zw.Create(name)
		if err != nil {
			t.Fatal(err)
		}
		io.WriteString(w, content)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func zipNames(t *testing.T, b []byte) map[string]string {
	zr, err := zip.NewReader(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatalf("uploaded zip: %v", err)
	}
	out := map[string]string{}
	for _, f := range zr.File {
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		c, _ := io.ReadAll(rc)
		rc.Close()
		out[f.Name] = string(c)
	}
	return out
}

func TestRun_successfulJob(t *testing.T) {
	h := newHarness(t)
	j := withAfterScript(h.job(101, []string{
		`echo "secret is $MY_SECRET"`,
		`printf 'half %s' "${MY_SECRET:0:6}"; printf '%s\n' "${MY_SECRET:6}"`,
		`cat "$CONFIG_FILE"; echo`,
		`echo "expanded=$EXPANDED raw=$RAW_ONE base=$BASE"`,
		`cat README.md`,
		`cat dep/file.txt`,
		"mkdir -p out/sub && echo data > out/sub/a.txt && echo x > out/skip.log",
		`printf '<testsuite name="s"><testcase name="t"/></testsuite>' > report.xml`,
		`echo "dir=$CI_PROJECT_DIR builds=$CI_BUILDS_DIR runner=$CI_RUNNER_VERSION"`,
		"for i in 1 2\ndo echo loop $i\ndone",
	}), `echo "after status=$CI_JOB_STATUS"`)
	addVariables(j,
		map[string]any{"key": "BASE", "value": "base", "public": true, "masked": false},
		map[string]any{"key": "EXPANDED", "value": "$BASE/${BASE}-x", "public": true, "masked": false},
		map[string]any{"key": "RAW_ONE", "value": "$BASE", "public": true, "masked": false, "raw": true},
		map[string]any{"key": "MY_SECRET", "value": "s3cr3t-value-1234", "public": false, "masked": true},
		map[string]any{"key": "CONFIG_FILE", "value": "file content $BASE", "public": false, "masked": false, "file": true},
		map[string]any{"key": "BASE", "value": "later", "public": true, "masked": false},
	)
	j["artifacts"] = []map[string]any{
		{"name": "bundle", "untracked": false, "paths": []string{"out/"}, "exclude": []string{"out/*.log"}, "when": "on_success",
			"expire_in": "1 week", "artifact_type": "archive", "artifact_format": "zip"},
		{"name": "junit.xml", "paths": []string{"report.xml"}, "when": "always", "expire_in": nil,
			"artifact_type": "junit", "artifact_format": "gzip"},
		{"name": "on-failure", "paths": []string{"out/"}, "when": "on_failure", "artifact_type": "archive", "artifact_format": "zip"},
	}
	j["dependencies"] = []map[string]any{{"id": 90, "name": "build", "token": j["token"],
		"artifacts_file": map[string]any{"filename": "artifacts.zip", "size": 100}}}
	h.srv.archives[90] = zipOf(t, map[string]string{"dep/file.txt": "from the dependency\n"})
	h.srv.tokens[90] = j["token"].(string)
	h.srv.queueJob(j)
	h.start(1)

	final := h.srv.waitFinal(101)
	if final.State != "success" || final.FailureReason != "" || final.ExitCode != 0 {
		t.Errorf("final state %+v", final)
	}
	log := h.checkFinalLog(101, final)
	mustContain(t, log,
		"Running with quarry-runner 1.2.3 (abcdef12)",
		"on test runner #34, system ID: s_0123456789ab",
		"section_start:", ":get_sources\r\x1b[0K",
		"Checking out "+h.sha[:8]+" as detached HEAD (ref is main)",
		"Downloading artifacts for build (90)",
		`Executing "step_script" stage of the job script`,
		"\x1b[32;1m$ echo \"secret is $MY_SECRET\"\x1b[0;m\n",
		"secret is [MASKED]\n",
		"half [MASKED]\n",
		"file content base\n",
		"expanded=base/base-x raw=$BASE base=later\n",
		"hello from the repository\n",
		"from the dependency\n",
		fmt.Sprintf("dir=%s builds=%s runner=1.2.3\n", filepath.Join(h.builds, "0", "project-7"), h.builds),
		"$ for i in 1 2 # collapsed multi-line command", "loop 1\nloop 2\n",
		"after status=success\n",
		"out/: found 4 matching artifact files and directories",
		"out/*.log: excluded 1 files",
		`Uploading artifacts as "archive" to coordinator... 201 Created`,
		`Uploading artifacts as "junit" to coordinator... 201 Created`,
		"\x1b[32;1mJob succeeded\x1b[0;m\n",
	)
	mustNotContain(t, log, "s3cr3t-value-1234", j["token"].(string), "ERROR")

	h.srv.mu.Lock()
	uploads := h.srv.uploads[101]
	gitAuth := append([]string(nil), h.srv.gitAuth...)
	h.srv.mu.Unlock()
	if len(uploads) != 2 {
		t.Fatalf("%d uploads; want 2 (archive and junit)", len(uploads))
	}
	arch := uploads[0]
	if arch.Filename != "bundle.zip" || arch.Query["artifact_type"] != "archive" || arch.Query["artifact_format"] != "zip" ||
		arch.Query["expire_in"] != "1 week" {
		t.Errorf("archive upload %q %v", arch.Filename, arch.Query)
	}
	got := zipNames(t, arch.Body)
	want := map[string]string{"out/": "", "out/sub/": "", "out/sub/a.txt": "data\n"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("archive holds %v; want %v", got, want)
	}
	junit := uploads[1]
	if junit.Filename != "junit.xml.gz" || junit.Query["artifact_type"] != "junit" || junit.Query["artifact_format"] != "gzip" {
		t.Errorf("junit upload %q %v", junit.Filename, junit.Query)
	}
	zr, err := gzip.NewReader(bytes.NewReader(junit.Body))
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := io.ReadAll(zr); string(b) != `<testsuite name="s"><testcase name="t"/></testsuite>` {
		t.Errorf("junit report %q", b)
	}
	if len(gitAuth) == 0 || gitAuth[0] != basicAuth(j["token"].(string)) {
		t.Errorf("git sent Authorization %q; want the job token", gitAuth)
	}
	// The project's work tree stays for its next job (GIT_STRATEGY
	// fetch); nothing else does.
	if entries, _ := os.ReadDir(h.builds); len(entries) != 2 || entries[0].Name() != ".git-home" || entries[1].Name() != "0" {
		t.Errorf("builds dir after the job: %v", entries)
	}
	if entries, _ := os.ReadDir(filepath.Join(h.builds, "0")); len(entries) != 1 || entries[0].Name() != "project-7" {
		t.Errorf("slot 0 after the job: %v", entries)
	}
}

func TestRun_failingJob(t *testing.T) {
	h := newHarness(t)
	j := withAfterScript(h.job(102, []string{"echo before", "exit 3", "echo never"}),
		`echo "after status=$CI_JOB_STATUS"`, "exit 9")
	j["artifacts"] = []map[string]any{
		{"name": "ok", "paths": []string{"README.md"}, "when": "on_success", "artifact_type": "archive", "artifact_format": "zip"},
		{"name": "debug", "paths": []string{"src/**/*.sh"}, "when": "on_failure", "artifact_type": "archive", "artifact_format": "zip"},
	}
	h.srv.queueJob(j)
	h.start(1)

	final := h.srv.waitFinal(102)
	if final.State != "failed" || final.FailureReason != "script_failure" || final.ExitCode != 3 {
		t.Errorf("final state %+v; want failed, script_failure, exit code 3", final)
	}
	log := h.checkFinalLog(102, final)
	mustContain(t, log, "before\n", "after status=failed\n",
		"WARNING: after_script failed, but job will continue unaffected: exit code 9",
		"Uploading artifacts for failed job", "\x1b[31;1mERROR: Job failed: exit code 3\x1b[0;m\n")
	mustNotContain(t, log, "never\n", "Job succeeded")
	h.srv.mu.Lock()
	uploads := h.srv.uploads[102]
	h.srv.mu.Unlock()
	if len(uploads) != 1 || uploads[0].Filename != "debug.zip" {
		t.Fatalf("uploads %v; want only debug.zip", uploads)
	}
	if got := zipNames(t, uploads[0].Body); fmt.Sprint(got) != fmt.Sprint(map[string]string{"src/main.sh": "echo main\n"}) {
		t.Errorf("failure archive %v", got)
	}
}

func TestRun_timeout(t *testing.T) {
	h := newHarness(t)
	j := withAfterScript(h.job(103, []string{"echo started", "sleep 60", "echo never"}), `echo "after status=$CI_JOB_STATUS"`)
	j["runner_info"] = map[string]any{"timeout": 2}
	h.srv.queueJob(j)
	h.start(1)

	final := h.srv.waitFinal(103)
	if final.State != "failed" || final.FailureReason != "job_execution_timeout" || final.ExitCode != 0 {
		t.Errorf("final state %+v; want failed, job_execution_timeout", final)
	}
	log := h.checkFinalLog(103, final)
	mustContain(t, log, "started\n", "after status=failed\n", "ERROR: Job failed: execution took longer than 2s seconds")
	mustNotContain(t, log, "never\n")
}

// A graceful cancel (Job-Status: canceling) stops the script, runs
// after_script with CI_JOB_STATUS=canceled and reports; the log streams
// while the script runs (the test sees "started" before the job ends).
func TestRun_gracefulCancel(t *testing.T) {
	h := newHarness(t)
	h.srv.queueJob(withAfterScript(h.job(104, []string{"echo started", "sleep 60", "echo never"}),
		`echo "after status=$CI_JOB_STATUS"`))
	h.start(1)

	h.srv.waitLog(104, "started\n")
	h.srv.setStatus(104, "canceling")
	final := h.srv.waitFinal(104)
	h.srv.mu.Lock()
	status := h.srv.status[104]
	h.srv.mu.Unlock()
	if final.State != "failed" || status != "canceled" {
		t.Errorf("final state %+v, job %s; want failed, canceled", final, status)
	}
	log := h.checkFinalLog(104, final)
	mustContain(t, log, "after status=canceled\n", "ERROR: Job failed: canceled")
	mustNotContain(t, log, "never\n")
}

// A hard cancel (403 with Job-Status: canceled) kills the script and ends
// the job without after_script or a final state; the runner goes on to
// ask for work.
func TestRun_hardCancel(t *testing.T) {
	h := newHarness(t)
	h.srv.queueJob(withAfterScript(h.job(105, []string{"echo started", "sleep 60", "echo never"}),
		`echo "after status=$CI_JOB_STATUS"`))
	h.start(1)

	h.srv.waitLog(105, "started\n")
	h.srv.mu.Lock()
	asked := h.srv.requests
	h.srv.mu.Unlock()
	h.srv.setStatus(105, "canceled")
	h.srv.waitFor("the runner to ask for the next job", func() bool { return h.srv.requests > asked })
	h.srv.mu.Lock()
	updates := h.srv.updates[105]
	h.srv.mu.Unlock()
	for _, u := range updates {
		if u.State != "running" {
			t.Errorf("final state %+v sent for a job the server canceled", u)
		}
	}
	mustNotContain(t, h.srv.log(105), "after status", "never")
	if _, err := os.Stat(filepath.Join(h.builds, "105")); !os.IsNotExist(err) {
		t.Errorf("build folder left: %v", err)
	}
}

// The log goes out while the job runs; a server that lost part of it
// (416 with Range) gets it again from its size; the final checksum covers
// the whole log.
func TestRun_traceRangeMismatch(t *testing.T) {
	h := newHarness(t)
	gate := filepath.Join(t.TempDir(), "go")
	h.srv.queueJob(h.job(106, []string{"echo started",
		fmt.Sprintf("while [ ! -e %s ]; do sleep 0.02; done", shellQuote(gate)), "echo done after the gate"}))
	h.start(1)

	h.srv.waitLog(106, "started\n")
	h.srv.mu.Lock()
	h.srv.forgetLog[106] = 10
	h.srv.mu.Unlock()
	if err := os.WriteFile(gate, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	final := h.srv.waitFinal(106)
	log := h.checkFinalLog(106, final)
	if final.State != "success" {
		t.Errorf("final state %+v", final)
	}
	mustContain(t, log, "started\n", "done after the gate\n", "Job succeeded")
	if !strings.HasPrefix(log, "\x1b[32;1mRunning with quarry-runner") {
		t.Errorf("log starts %q", log[:min(40, len(log))])
	}
	h.srv.mu.Lock()
	ranges := h.srv.ranges
	h.srv.mu.Unlock()
	if ranges != 1 {
		t.Errorf("%d answers 416; want 1", ranges)
	}
}

// A big log goes out in patches of at most 1 MiB (the fake server checks)
// and stops at 4 MiB with GitLab's notice; the job goes on.
func TestRun_bigLog(t *testing.T) {
	h := newHarness(t)
	h.srv.queueJob(h.job(114, []string{"head -c 5000000 /dev/zero | tr '\\0' a", "echo; echo after the flood"}))
	h.start(1)

	final := h.srv.waitFinal(114)
	if final.State != "success" {
		t.Errorf("final state %+v", final)
	}
	log := h.checkFinalLog(114, final)
	mustContain(t, log, "Job's log exceeded limit of 4194304 bytes.")
	mustNotContain(t, log, "after the flood", "Job succeeded")
	if n := strings.Count(log, "a"); n < 4000000 || n > logLimit {
		t.Errorf("%d bytes of output kept", n)
	}
	h.srv.mu.Lock()
	patches := h.srv.patches[114]
	h.srv.mu.Unlock()
	if patches < 5 {
		t.Errorf("%d patches for a 4 MiB log; want at least 5", patches)
	}
}

// The final PUT is retried on 202, and on 412 the whole log is sent again
// first.
func TestRun_finalUpdateRetries(t *testing.T) {
	h := newHarness(t)
	h.srv.updateCodes = []int{202, 500, 412}
	h.srv.queueJob(h.job(107, []string{"echo hello"}))
	h.start(1)

	final := h.srv.waitFinal(107)
	log := h.checkFinalLog(107, final)
	mustContain(t, log, "hello\n", "Job succeeded")
	mustNotContain(t, log, "garbage")
	h.srv.mu.Lock()
	n := 0
	for _, u := range h.srv.updates[107] {
		if u.State == "success" {
			n++
		}
	}
	h.srv.mu.Unlock()
	if n != 4 {
		t.Errorf("%d final PUTs; want 4 (202, 500, 412, 200)", n)
	}
}

func TestRun_requestErrorsAndUploadRetries(t *testing.T) {
	h := newHarness(t)
	h.srv.requestErrors = 2
	h.srv.uploadCodes = []int{500, 502}
	j := h.job(108, []string{"echo x > out.txt"})
	j["artifacts"] = []map[string]any{{"paths": []string{"*.txt"}, "when": "on_success", "artifact_type": "archive", "artifact_format": "zip"}}
	h.srv.queueJob(j)
	h.start(1)

	final := h.srv.waitFinal(108)
	if final.State != "success" {
		t.Errorf("final state %+v", final)
	}
	log := h.checkFinalLog(108, final)
	mustContain(t, log, "500 Internal Server Error; retrying", "502 Bad Gateway; retrying",
		`Uploading artifacts as "archive" to coordinator... 201 Created`)
	h.srv.mu.Lock()
	uploads := h.srv.uploads[108]
	h.srv.mu.Unlock()
	if len(uploads) != 1 || uploads[0].Filename != "artifacts.zip" {
		t.Fatalf("uploads %v", uploads)
	}
	if got := zipNames(t, uploads[0].Body); fmt.Sprint(got) != fmt.Sprint(map[string]string{"out.txt": "x\n"}) {
		t.Errorf("archive %v", got)
	}
}

func TestRun_artifactsTooLarge(t *testing.T) {
	h := newHarness(t)
	h.srv.uploadCodes = []int{413}
	j := h.job(109, []string{"echo x > out.txt"})
	j["artifacts"] = []map[string]any{{"paths": []string{"out.txt"}, "when": "on_success", "artifact_type": "archive", "artifact_format": "zip"}}
	h.srv.queueJob(j)
	h.start(1)

	final := h.srv.waitFinal(109)
	if final.State != "failed" || final.FailureReason != "script_failure" {
		t.Errorf("final state %+v; want failed, script_failure", final)
	}
	mustContain(t, h.checkFinalLog(109, final), "too large archive", "ERROR: Job failed: upload artifacts: too large")
}

// Two workers run two jobs at once: both have started before either may
// end.
func TestRun_concurrentJobs(t *testing.T) {
	h := newHarness(t)
	gate := filepath.Join(t.TempDir(), "go")
	wait := fmt.Sprintf("while [ ! -e %s ]; do sleep 0.02; done", shellQuote(gate))
	h.srv.queueJob(h.job(110, []string{"echo started $CI_CONCURRENT_ID", wait}))
	h.srv.queueJob(h.job(111, []string{"echo started $CI_CONCURRENT_ID", wait}))
	h.start(2)

	h.srv.waitLog(110, "started")
	h.srv.waitLog(111, "started")
	if err := os.WriteFile(gate, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	slots := []string{}
	for _, id := range []int64{110, 111} {
		final := h.srv.waitFinal(id)
		if final.State != "success" {
			t.Errorf("job %d: %+v", id, final)
		}
		log := h.checkFinalLog(id, final)
		i := strings.Index(log, "\nstarted ")
		slots = append(slots, log[i+9:i+10])
	}
	sort.Strings(slots)
	if fmt.Sprint(slots) != "[0 1]" {
		t.Errorf("CI_CONCURRENT_ID %v; want 0 and 1", slots)
	}
}

// A job whose sources cannot be fetched fails without running its script.
func TestRun_fetchFails(t *testing.T) {
	h := newHarness(t)
	j := h.job(112, []string{"echo never"})
	j["git_info"].(map[string]any)["refspecs"] = []string{"+refs/heads/nope:refs/remotes/origin/nope"}
	h.srv.queueJob(j)
	h.start(1)

	final := h.srv.waitFinal(112)
	if final.State != "failed" || final.FailureReason != "runner_system_failure" || final.ExitCode != 0 {
		t.Errorf("final state %+v; want failed, runner_system_failure, no exit code", final)
	}
	log := h.checkFinalLog(112, final)
	mustContain(t, log, "ERROR: Job failed (system failure): get sources:")
	mustNotContain(t, log, "never", j["token"].(string))
}

// A dependency whose archive cannot be downloaded fails the job as the
// runner's failure, without running its script.
func TestRun_dependencyDownloadFails(t *testing.T) {
	h := newHarness(t)
	j := h.job(132, []string{"echo never"})
	j["dependencies"] = []map[string]any{{"id": 91, "name": "build", "token": j["token"],
		"artifacts_file": map[string]any{"filename": "artifacts.zip", "size": 100}}}
	h.srv.tokens[91] = j["token"].(string) // no archive: 404
	h.srv.queueJob(j)
	h.start(1)

	final := h.srv.waitFinal(132)
	if final.State != "failed" || final.FailureReason != "runner_system_failure" || final.ExitCode != 0 {
		t.Errorf("final state %+v; want failed, runner_system_failure, no exit code", final)
	}
	log := h.checkFinalLog(132, final)
	mustContain(t, log, "ERROR: Job failed (system failure): download artifacts of build (91): 404 not found")
	mustNotContain(t, log, "never\n")
}

// An upload the server keeps failing (after the retries) is the runner's
// failure; one too large stays the job's (TestRun_artifactsTooLarge).
func TestRun_uploadFails(t *testing.T) {
	h := newHarness(t)
	h.srv.uploadCodes = []int{500, 503, 500, 502}
	j := h.job(133, []string{"echo x > out.txt"})
	j["artifacts"] = []map[string]any{{"paths": []string{"out.txt"}, "when": "on_success", "artifact_type": "archive", "artifact_format": "zip"}}
	h.srv.queueJob(j)
	h.start(1)

	final := h.srv.waitFinal(133)
	if final.State != "failed" || final.FailureReason != "runner_system_failure" || final.ExitCode != 0 {
		t.Errorf("final state %+v; want failed, runner_system_failure, no exit code", final)
	}
	mustContain(t, h.checkFinalLog(133, final), "ERROR: Job failed (system failure): upload artifacts: 502 Bad Gateway")
}

// artifacts:untracked takes what git does not track in the work tree
// (ignored files too), with paths, less exclude; a tracked file only
// through paths.
func TestRun_untrackedArtifacts(t *testing.T) {
	h := newHarness(t)
	j := h.job(130, []string{
		"mkdir -p out/sub logs && echo a > out/sub/a.txt && echo t > top.txt && echo s > skip.tmp && echo l > logs/x.log",
		"echo ignored.txt > .gitignore && echo i > ignored.txt",
		"echo changed >> README.md",
	})
	j["artifacts"] = []map[string]any{{"untracked": true, "paths": []string{"src/main.sh"}, "exclude": []string{"*.tmp", "logs/**"},
		"when": "on_success", "artifact_type": "archive", "artifact_format": "zip"}}
	h.srv.queueJob(j)
	h.start(1)

	final := h.srv.waitFinal(130)
	log := h.checkFinalLog(130, final)
	if final.State != "success" {
		t.Fatalf("final state %+v:\n%s", final, log)
	}
	mustContain(t, log, "src/main.sh: found 1 matching artifact files and directories", "untracked: found 4 files",
		"*.tmp: excluded 1 files", "logs/**: excluded 1 files")
	h.srv.mu.Lock()
	uploads := h.srv.uploads[130]
	h.srv.mu.Unlock()
	if len(uploads) != 1 {
		t.Fatalf("%d uploads; want 1", len(uploads))
	}
	got := zipNames(t, uploads[0].Body)
	want := map[string]string{".gitignore": "ignored.txt\n", "ignored.txt": "i\n", "out/sub/a.txt": "a\n", "src/main.sh": "echo main\n",
		"top.txt": "t\n"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("archive holds %v; want %v", got, want)
	}
}

// Without a work tree (GIT_STRATEGY none) untracked files are a warning;
// the paths still go.
func TestRun_untrackedWithoutWorkTree(t *testing.T) {
	h := newHarness(t)
	j := h.job(131, []string{"echo x > a.txt"})
	addVariables(j, map[string]any{"key": "GIT_STRATEGY", "value": "none", "public": true})
	j["artifacts"] = []map[string]any{{"untracked": true, "paths": []string{"a.txt"}, "when": "on_success", "artifact_type": "archive",
		"artifact_format": "zip"}}
	h.srv.queueJob(j)
	h.start(1)

	final := h.srv.waitFinal(131)
	log := h.checkFinalLog(131, final)
	if final.State != "success" {
		t.Fatalf("final state %+v:\n%s", final, log)
	}
	mustContain(t, log, "WARNING: untracked: the build folder is not a git work tree", "WARNING: untracked: no files")
	h.srv.mu.Lock()
	uploads := h.srv.uploads[131]
	h.srv.mu.Unlock()
	if len(uploads) != 1 || fmt.Sprint(zipNames(t, uploads[0].Body)) != fmt.Sprint(map[string]string{"a.txt": "x\n"}) {
		t.Errorf("uploads %v", uploads)
	}
}

// Stopping the runner aborts its job and reports it as a system failure.
func TestRun_shutdownAbortsJob(t *testing.T) {
	h := newHarness(t)
	h.srv.queueJob(h.job(113, []string{"echo started", "sleep 60"}))
	cfg := Config{URL: h.srv.srv.URL, Token: runnerToken, BuildsDir: h.builds}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- run(ctx, cfg, h.logs.logger(), testTiming()) }()

	h.srv.waitLog(113, "started\n")
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("Run did not return")
	}
	final := h.srv.waitFinal(113)
	if final.State != "failed" || final.FailureReason != "runner_system_failure" {
		t.Errorf("final state %+v", final)
	}
	mustContain(t, h.checkFinalLog(113, final), "ERROR: Job failed (system failure): aborted: the runner is shutting down")
}

func TestRegister(t *testing.T) {
	srv := newFakeServer(t, "")
	ctx := context.Background()

	cfg, err := Register(ctx, RegisterOptions{URL: srv.srv.URL + "/ci", Token: "reg-token", Description: "d",
		Tags: []string{"a", "b"}, RunUntagged: true, Locked: true, BuildsDir: "/b", Concurrent: 3, Version: "9"})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.ID != 12 || cfg.Token != "glrt-issued" || !strings.HasPrefix(cfg.SystemID, "s_") || len(cfg.SystemID) != 14 ||
		cfg.BuildsDir != "/b" || cfg.Concurrent != 3 || cfg.Description != "d" {
		t.Errorf("config %+v", cfg)
	}
	reg := srv.registers[0]
	if reg["tag_list"] != "a,b" || reg["run_untagged"] != true || reg["locked"] != true || reg["paused"] != false ||
		reg["description"] != "d" || reg["info"].(map[string]any)["version"] != "9" {
		t.Errorf("POST /runners body %v", reg)
	}
	if _, err := Register(ctx, RegisterOptions{URL: srv.srv.URL, Token: "wrong"}); statusCode(err) != 403 {
		t.Errorf("bad registration token: %v", err)
	}

	cfg, err = Register(ctx, RegisterOptions{URL: srv.srv.URL, Token: runnerToken, SystemID: "s_aaaaaaaaaaaa"})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.ID != 34 || cfg.Token != runnerToken || cfg.TokenExpiresAt != "2030-01-02T03:04:05.000Z" || cfg.SystemID != "s_aaaaaaaaaaaa" {
		t.Errorf("verified config %+v", cfg)
	}
	if v := srv.verifies[0]; v["token"] != runnerToken || v["system_id"] != "s_aaaaaaaaaaaa" {
		t.Errorf("POST /runners/verify body %v", v)
	}
	if len(srv.registers) != 2 {
		t.Errorf("a glrt- token went to POST /runners")
	}

	path := filepath.Join(t.TempDir(), "runner.json")
	if err := SaveConfig(path, cfg); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("config file mode %v, %v; want 0600", fi.Mode(), err)
	}
	back, err := LoadConfig(path)
	if err != nil {
		t.Fatal(err)
	}
	back.HTTPClient, back.Version, back.Revision = cfg.HTTPClient, cfg.Version, cfg.Revision
	if fmt.Sprint(back) != fmt.Sprint(cfg) {
		t.Errorf("loaded %+v; saved %+v", back, cfg)
	}

	if err := Unregister(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	if d := srv.deletes[0]; d["token"] != runnerToken {
		t.Errorf("DELETE /runners body %v", d)
	}
	if err := Unregister(ctx, Config{URL: srv.srv.URL, Token: "glrt-gone"}); statusCode(err) != 403 {
		t.Errorf("unregister with a bad token: %v", err)
	}
}

func TestRun_badConfig(t *testing.T) {
	for _, cfg := range []Config{{Token: "t"}, {URL: "http://x"}, {URL: "ftp://x", Token: "t"}} {
		if err := Run(context.Background(), cfg, nil); err == nil {
			t.Errorf("Run(%+v) accepted", cfg)
		}
	}
}

// A positive git_info.depth makes a shallow fetch (over file:// here, as
// the dumb HTTP of the fake server cannot).
func TestRun_shallowFetch(t *testing.T) {
	h := newHarness(t)
	second := gittest.Commit(t, h.repo, gittest.Files{"README.md": "second version\n"}, gittest.Branch("main"), gittest.Message("second"))
	j := h.job(115, []string{"git rev-parse --is-shallow-repository HEAD", "git log --format=%s", "cat README.md"})
	gi := j["git_info"].(map[string]any)
	gi["repo_url"], gi["sha"], gi["depth"] = "file://"+h.repo, second, 1
	h.srv.queueJob(j)
	h.start(1)

	final := h.srv.waitFinal(115)
	if final.State != "success" {
		t.Errorf("final state %+v", final)
	}
	log := h.checkFinalLog(115, final)
	mustContain(t, log, "Fetching changes with git depth set to 1...", "true\n"+second+"\n", "\nsecond\n", "second version\n")
	mustNotContain(t, log, "\nfirst\n")
}

// With the fetch strategy a project's second job reuses the work tree the
// first left: the commit is there already, so nothing is fetched, and
// what the first job left untracked is cleaned away. GIT_STRATEGY: clone
// starts afresh.
func TestRun_fetchStrategyReusesWorkTree(t *testing.T) {
	h := newHarness(t)
	h.srv.queueJob(h.job(120, []string{"echo junk > junk.txt", "test -f README.md"}))
	h.start(1)
	if final := h.srv.waitFinal(120); final.State != "success" {
		t.Fatalf("first job %+v:\n%s", final, h.checkFinalLog(120, final))
	}
	h.srv.queueJob(h.job(121, []string{"test ! -e junk.txt", "test -f README.md"}))
	final := h.srv.waitFinal(121)
	log := h.checkFinalLog(121, final)
	if final.State != "success" {
		t.Fatalf("second job %+v:\n%s", final, log)
	}
	mustContain(t, log, "Reinitialized existing Git repository")
	clone := h.job(122, []string{"test -f README.md"})
	addVariables(clone, map[string]any{"key": "GIT_STRATEGY", "value": "clone", "public": true})
	h.srv.queueJob(clone)
	final = h.srv.waitFinal(122)
	log = h.checkFinalLog(122, final)
	if final.State != "success" {
		t.Fatalf("clone job %+v:\n%s", final, log)
	}
	mustContain(t, log, "Created fresh repository.")
}
