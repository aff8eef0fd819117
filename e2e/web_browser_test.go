package e2e

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"

	"quarry/internal/apitest"
)

// TestWeb_browser drives Debian's chromium, headless, through the pages
// as a person would: sign in, open a project from the explore list, open
// a file from the tree, see its code highlighted (the style sheet
// applied under the page's CSP), open a merge request from the list,
// approve and merge it, sign out. Each step asserts on the
// rendered DOM and saves a screenshot to $QUARRY_WEB_SCREENSHOTS, or to
// the test's temporary folder. A browser that cannot start fails the
// test. One browser at a time (EachSerial): a browser takes a core.
func TestWeb_browser(t *testing.T) {
	apitest.EachSerial(t, func(t *testing.T, s *apitest.Server) {
		alice := s.NewUser(t, "alice")
		demo := webProject(t, s, alice.Token, "demo", "public")
		webHistory(t, s, alice.Token, demo["id"])
		mr := s.Do(t, apitest.Request{Method: "POST", Path: fmt.Sprintf("/projects/%v/merge_requests", demo["id"]), Token: s.RootToken,
			JSON: map[string]any{"source_branch": `feat/<i>x</i>&"y"`, "target_branch": "main", "title": "Feature <b>work</b>"}}).
			Want(t, http.StatusCreated).Object(t)

		shots := screenshotDir(t, s)
		bctx := newChromeTab(t, 90*time.Second)
		do, eval := chromeSteps(t, bctx)
		text := func(sel string) string {
			t.Helper()
			v, err := chromedp.Run(bctx, chromedp.Text(chromedp.CSS(sel)))
			if err != nil {
				t.Fatalf("text of %s: %v", sel, err)
			}
			return strings.TrimSpace(v)
		}
		n := 0
		shot := func(name string) {
			t.Helper()
			n++
			b, err := chromedp.Run(bctx, chromedp.FullScreenshot(100))
			if err != nil {
				t.Fatalf("screenshot %s: %v", name, err)
			}
			if err := os.WriteFile(filepath.Join(shots, fmt.Sprintf("%02d-%s.png", n, name)), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}

		// Sign in.
		do("open sign-in", chromedp.Navigate(s.URL+"/users/sign_in"), chromedp.WaitVisible(chromedp.CSS("#user_login")))
		shot("sign-in")
		do("sign in", chromedp.SendKeys(chromedp.CSS("#user_login"), "alice"),
			chromedp.SendKeys(chromedp.CSS("#user_password"), webPassword),
			chromedp.Click(chromedp.CSS(`[data-testid="sign-in-button"]`)),
			chromedp.WaitVisible(chromedp.CSS(`[data-testid="user-menu"]`)))
		if got := text(`[data-testid="user-menu"]`); got != "@alice" {
			t.Errorf("signed in as %q", got)
		}
		shot("home")

		// A project from the explore list.
		do("open explore", chromedp.Navigate(s.URL+"/explore/projects"), chromedp.WaitVisible(chromedp.CSS(`[data-testid="project-list"]`)))
		shot("explore")
		do("open the project", chromedp.Click(chromedp.CSS(`a[data-testid="project-link"][href="/alice/demo"]`)),
			chromedp.WaitVisible(chromedp.CSS(`[data-testid="readme"]`)))
		if got := text(`[data-testid="project-name"]`); !strings.HasPrefix(got, "demo") {
			t.Errorf("project name %q", got)
		}
		if got := text(`[data-testid="readme"] h1`); got != "Hello demo" {
			t.Errorf("README heading %q", got)
		}
		if !eval(`document.querySelector('[data-testid="clone-http"]').value.endsWith('/alice/demo.git')`) {
			t.Errorf("no HTTP clone URL")
		}
		shot("project")

		// A file from the tree, highlighted.
		do("open the file", chromedp.Click(chromedp.CSS(`a[data-testid="tree-entry"][href="/alice/demo/-/blob/main/main.go"]`)),
			chromedp.WaitVisible(chromedp.CSS(`[data-testid="code"] .chroma`)))
		if got := text(`[data-testid="file-name"]`); got != "main.go" {
			t.Errorf("file name %q", got)
		}
		if !eval(`document.querySelectorAll('[data-testid="code"] .chroma .kn').length > 0 && document.getElementById('L7') !== null`) {
			t.Errorf("no highlighted keywords or line anchors")
		}
		// The keyword's colour comes from the style sheet: it differs from
		// the plain text's, so the sheet loaded under the policy.
		if !eval(`getComputedStyle(document.querySelector('.chroma .kn')).color !== getComputedStyle(document.querySelector('[data-testid="file-name"]')).color`) {
			t.Errorf("keywords are not coloured: the style sheet did not apply")
		}
		shot("blob")

		// Dark when the system prefers it, light otherwise.
		scheme := func(v string) {
			t.Helper()
			if _, err := chromedp.Call(bctx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
				Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: v}}}); err != nil {
				t.Fatalf("prefers-color-scheme %s: %v", v, err)
			}
		}
		background := func() string {
			t.Helper()
			v, err := chromedp.Run(bctx, chromedp.Evaluate[string](`getComputedStyle(document.body).backgroundColor`))
			if err != nil {
				t.Fatal(err)
			}
			return v
		}
		// Every token of the code is readable: none takes the page's
		// background colour (or the other scheme's).
		readable := `[...document.querySelectorAll('[data-testid="code"] td:last-child span')].every(e => e.textContent.trim() === '' ||
			getComputedStyle(e).color !== getComputedStyle(document.body).backgroundColor)`
		scheme("dark")
		if got := background(); got != "rgb(24, 23, 29)" {
			t.Errorf("dark background %q", got)
		}
		if !eval(readable) || !eval(`getComputedStyle(document.querySelector('.chroma .kn')).color !== 'rgb(207, 34, 46)'`) {
			t.Errorf("dark code: tokens unreadable, or coloured by the light style")
		}
		shot("blob-dark")
		scheme("light")
		if got := background(); got != "rgb(255, 255, 255)" {
			t.Errorf("light background %q", got)
		}
		if !eval(readable) {
			t.Errorf("light code: tokens unreadable")
		}

		// A phone's width: nothing wider than the screen but the code.
		do("phone", chromedp.EmulateViewport(390, 844, chromedp.EmulateMobile), chromedp.Navigate(s.URL+"/alice/demo"),
			chromedp.WaitVisible(chromedp.CSS(`[data-testid="readme"]`)))
		if !eval(`document.documentElement.scrollWidth <= window.innerWidth`) {
			w, _ := chromedp.Run(bctx, chromedp.Evaluate[int](`document.documentElement.scrollWidth`))
			t.Errorf("the overview is %d px wide on a 390 px screen", w)
		}
		shot("project-phone")
		do("phone blob", chromedp.Navigate(s.URL+"/alice/demo/-/blob/main/main.go"), chromedp.WaitVisible(chromedp.CSS(`[data-testid="code"]`)))
		if !eval(`document.documentElement.scrollWidth <= window.innerWidth`) {
			t.Errorf("the blob page is wider than a phone's screen")
		}
		shot("blob-phone")
		do("desktop", chromedp.EmulateReset())

		// A commit from a file's history, and its diff.
		do("open the history", chromedp.EmulateViewport(1280, 900), chromedp.Navigate(s.URL+"/alice/demo/-/commits/main/main.go"),
			chromedp.WaitVisible(chromedp.CSS(`[data-testid="commit-list"]`)))
		shot("commits")
		do("open the commit", chromedp.Click(chromedp.CSS(`[data-testid="commit-list"] li:first-child a[data-testid="commit-title"]`)),
			chromedp.WaitVisible(chromedp.CSS(`[data-testid="diff"] table.diff.inline`)))
		if got := text(`h2[data-testid="commit-title"]`); got != "Say <script>alert('msg')</script> louder" {
			t.Errorf("commit title %q", got)
		}
		if got := text(`[data-testid="diff-file-name"]`); got != "main.go" {
			t.Errorf("diff file %q", got)
		}
		if !eval(`(() => { const a = document.querySelector('td.line.add'), d = document.querySelector('td.line.del');
			return a !== null && d !== null && a.textContent.includes('HI <i>') &&
				getComputedStyle(a).backgroundColor !== getComputedStyle(d).backgroundColor &&
				getComputedStyle(a).backgroundColor !== getComputedStyle(document.body).backgroundColor })()`) {
			t.Errorf("the diff's added and removed lines are not coloured apart")
		}
		shot("commit")
		do("side by side", chromedp.Click(chromedp.CSS(`[data-testid="diff-toggle"] a:last-child`)),
			chromedp.WaitVisible(chromedp.CSS(`[data-testid="diff"] table.diff.parallel`)))
		if !eval(`document.querySelector('table.diff.parallel tr td.line.del + td.num + td.line.add') !== null`) {
			t.Errorf("side by side: the removed and added lines are not on one row")
		}
		shot("commit-parallel")

		// A merge request: open it from the list, approve it, merge it.
		do("open the merge requests", chromedp.Navigate(s.URL+"/alice/demo/-/merge_requests"),
			chromedp.WaitVisible(chromedp.CSS(`[data-testid="mr-list"]`)))
		do("open the merge request", chromedp.Click(chromedp.CSS(fmt.Sprintf(`a[data-testid="mr-link"][href="/alice/demo/-/merge_requests/%v"]`, mr["iid"]))),
			chromedp.WaitVisible(chromedp.CSS(`[data-testid="merge-status"]`)))
		if got := text(`[data-testid="mr-title"]`); got != "Feature <b>work</b>" {
			t.Errorf("merge request title %q", got)
		}
		if got := text(`[data-testid="mr-state"]`); got != "Open" {
			t.Errorf("merge request state %q", got)
		}
		shot("merge-request")
		do("approve", chromedp.Click(chromedp.CSS(`[data-testid="approve-button"]`)),
			chromedp.WaitVisible(chromedp.CSS(`[data-testid="unapprove-button"]`)))
		if got := text(`[data-testid="approved-by"]`); got != "Approved by Alice" {
			t.Errorf("approved by %q", got)
		}
		if !eval(`document.querySelector('[data-testid="merge-status"]').dataset.status === 'mergeable' && !document.querySelector('[data-testid="merge-button"]').disabled`) {
			t.Errorf("approved, but the merge button is not ready")
		}
		shot("merge-request-approved")
		do("merge", chromedp.Click(chromedp.CSS(`[data-testid="merge-button"]`)),
			chromedp.WaitVisible(chromedp.CSS(`[data-testid="merge-commit"]`)))
		if got := text(`[data-testid="mr-state"]`); got != "Merged" {
			t.Errorf("merged merge request state %q", got)
		}
		if got := text(`[data-testid="flash"]`); got != "The merge request was merged." {
			t.Errorf("flash after merging %q", got)
		}
		shot("merge-request-merged")

		// Sign out.
		do("sign out", chromedp.Click(chromedp.CSS(`[data-testid="sign-out"]`)),
			chromedp.WaitVisible(chromedp.CSS(`#user_login`)))
		if !eval(`document.querySelector('[data-testid="user-menu"]') === null && document.querySelector('[data-testid="sign-in-link"]') !== null`) {
			t.Errorf("still signed in after signing out")
		}
		shot("signed-out")
		entries, err := os.ReadDir(shots)
		if err != nil || len(entries) < n {
			t.Errorf("screenshots in %s: %d, %v", shots, len(entries), err)
		}
	})
}

// webLiveCI's job writes a line, waits (boundedly) for the test's signal
// file, then writes another: the test opens the job's page between the
// two.
const webLiveCI = `
live:
  script:
    - echo first-line
    - for i in $(seq 600); do [ -f "$GO_FILE" ] && break; sleep 0.1; done
    - printf '\033[32msecond-line\033[0m\n'
`

// TestWeb_browserCI drives chromium through the CI pages while Quarry's
// runner runs a job: the job's log grows on the open page without a
// reload, within a second of the runner's trace update reaching the
// server, the page stops following when the job ends, and the retry
// button runs the job again. One browser at a time (EachSerial), and the
// latency is wall-clock timing.
func TestWeb_browserCI(t *testing.T) {
	apitest.EachSerial(t, func(t *testing.T, s *apitest.Server) {
		alice := s.NewUser(t, "alice")
		p := newCIProject(t, s, alice, "live", nil)
		signal := filepath.Join(t.TempDir(), "go")
		s.Do(t, apitest.Request{Method: "POST", Path: fmt.Sprintf("/projects/%d/variables", p.ID), Token: alice.Token,
			JSON: map[string]any{"key": "GO_FILE", "value": signal}}).Want(t, http.StatusCreated)
		r := projectRunner(t, p, map[string]any{"description": "live-runner"})
		quarryRunner(1)(t, s.URL, r.Token, t.TempDir())

		shots := screenshotDir(t, s)
		bctx := newChromeTab(t, 120*time.Second)
		do, eval := chromeSteps(t, bctx)
		shot := func(name string) {
			t.Helper()
			b, err := chromedp.Run(bctx, chromedp.FullScreenshot(100))
			if err != nil {
				t.Fatalf("screenshot %s: %v", name, err)
			}
			if err := os.WriteFile(filepath.Join(shots, "ci-"+name+".png"), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}

		do("sign in", chromedp.Navigate(s.URL+"/users/sign_in"), chromedp.WaitVisible(chromedp.CSS("#user_login")),
			chromedp.SendKeys(chromedp.CSS("#user_login"), "alice"), chromedp.SendKeys(chromedp.CSS("#user_password"), webPassword),
			chromedp.Click(chromedp.CSS(`[data-testid="sign-in-button"]`)), chromedp.WaitVisible(chromedp.CSS(`[data-testid="user-menu"]`)))

		// The job runs and has written its first line.
		p.commit(t, "main", map[string]string{".gitlab-ci.yml": webLiveCI})
		var job jobJSON
		trace := func(id int64) string {
			res := s.Get(t, fmt.Sprintf("/projects/%d/jobs/%d/trace", p.ID, id), alice.Token)
			return string(res.Body)
		}
		eventuallyFor(t, time.Minute, "the live job runs and logs its first line", func() bool {
			for _, pl := range p.pipelines(t, "source=push") {
				for _, j := range p.jobs(t, pl.ID) {
					if j.Status == "running" && strings.Contains(trace(j.ID), "first-line\n") {
						job = j
						return true
					}
				}
			}
			return false
		})

		// Its page, following the log.
		jobPath := fmt.Sprintf("/%s/-/jobs/%d", p.Path, job.ID)
		do("open the running job", chromedp.Navigate(s.URL+jobPath), chromedp.WaitVisible(chromedp.CSS(`[data-testid="job-log"]`)))
		if !eval(`document.getElementById('job-log').dataset.following === 'true' && document.getElementById('job-log').textContent.includes('first-line')`) ||
			eval(`document.getElementById('job-log').textContent.includes('second-line')`) {
			t.Fatalf("the running job's page does not show just its first line")
		}
		do("mark the page", chromedp.Evaluate[chromedp.Void](`window.quarryMark = 'still-here'`))
		shot("job-running")

		// The signal: the job writes its second line; the server has it
		// when its trace has it, and the page within a second of that.
		seen := make(chan time.Time, 1)
		go func() {
			req, _ := http.NewRequest("GET", fmt.Sprintf("%s/api/v4/projects/%d/jobs/%d/trace", s.URL, p.ID, job.ID), nil)
			req.Header.Set("PRIVATE-TOKEN", alice.Token)
			for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
				res, err := http.DefaultClient.Do(req)
				if err != nil {
					continue
				}
				var b bytes.Buffer
				_, _ = b.ReadFrom(res.Body)
				res.Body.Close()
				if strings.Contains(b.String(), "second-line") {
					seen <- time.Now()
					return
				}
			}
			close(seen)
		}()
		if err := os.WriteFile(signal, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := chromedp.Run(bctx, chromedp.Poll[bool](`document.querySelector('#job-log .term-fg2') !== null &&
			document.getElementById('job-log').textContent.includes('second-line')`,
			chromedp.WithPollingMutation(), chromedp.WithPollingTimeout(30*time.Second))); err != nil {
			t.Fatalf("the second line never showed on the page: %v", err)
		}
		onPage := time.Now()
		atServer, ok := <-seen
		if !ok {
			t.Fatal("the server's trace never had the second line")
		}
		if lag := onPage.Sub(atServer); lag > time.Second {
			t.Errorf("the page showed the line %v after the server had it; want within 1s", lag)
		} else {
			t.Logf("the page showed the line %v after the server had it", lag)
		}
		if !eval(`window.quarryMark === 'still-here'`) {
			t.Errorf("the page reloaded")
		}
		// The job ends: the page stops following.
		if _, err := chromedp.Run(bctx, chromedp.Poll[bool](`document.getElementById('job-log').dataset.complete === 'true'`,
			chromedp.WithPollingMutation(), chromedp.WithPollingTimeout(30*time.Second))); err != nil {
			t.Fatalf("the page never saw the job end: %v", err)
		}
		if !eval(`document.querySelector('[data-testid="job-heading"] [data-testid="ci-status"]').dataset.status === 'success' &&
			document.querySelector('[data-testid="job-cancel"]') === null`) {
			t.Errorf("the finished job's page still shows it running")
		}
		shot("job-done")
		do("open the pipeline", chromedp.Click(chromedp.CSS(`[data-testid="job-pipeline"]`)),
			chromedp.WaitVisible(chromedp.CSS(`[data-testid="pipeline-graph"]`)))
		if !eval(`document.querySelector('[data-testid="job"][data-job="live"]').dataset.status === 'success'`) {
			t.Errorf("the pipeline's page does not show the live job passed")
		}
		shot("pipeline")
		do("open the pipelines", chromedp.Click(chromedp.CSS(`[data-testid="pipelines-tab"]`)),
			chromedp.WaitVisible(chromedp.CSS(`[data-testid="pipeline-list"]`)))
		shot("pipelines")
		// On a phone: nothing wider than the screen.
		do("phone", chromedp.EmulateViewport(390, 844, chromedp.EmulateMobile), chromedp.Reload(),
			chromedp.WaitVisible(chromedp.CSS(`[data-testid="pipeline-list"]`)))
		if !eval(`document.documentElement.scrollWidth <= window.innerWidth`) {
			t.Errorf("the pipelines page is wider than a phone's screen")
		}
		do("phone job", chromedp.Navigate(s.URL+jobPath), chromedp.WaitVisible(chromedp.CSS(`[data-testid="job-log"]`)))
		if !eval(`document.documentElement.scrollWidth <= window.innerWidth`) {
			t.Errorf("the job page is wider than a phone's screen")
		}
		shot("job-phone")
		do("desktop", chromedp.EmulateReset(), chromedp.EmulateViewport(1280, 900))

		// Retry: the button runs the job again, on the new job's page.
		do("reload the finished job", chromedp.Navigate(s.URL+jobPath), chromedp.WaitVisible(chromedp.CSS(`[data-testid="job-retry"]`)))
		do("retry", chromedp.Click(chromedp.CSS(`[data-testid="job-retry"]`)))
		var loc string
		eventuallyFor(t, 30*time.Second, "the retry opened the new job's page", func() bool {
			l, err := chromedp.Run(bctx, chromedp.Location())
			loc = l
			return err == nil && strings.HasPrefix(l, s.URL+"/"+p.Path+"/-/jobs/") && l != s.URL+jobPath
		})
		do("the new job's page", chromedp.WaitVisible(chromedp.CSS(`[data-testid="job-name"]`)))
		newID, err := strconv.ParseInt(loc[strings.LastIndex(loc, "/")+1:], 10, 64)
		if err != nil || newID <= job.ID {
			t.Fatalf("after retry at %s", loc)
		}
		if got := latest(p.jobs(t, job.Pipeline.ID))["live"].ID; got != newID {
			t.Errorf("the newest live job is %d; the page shows %d", got, newID)
		}
		eventuallyFor(t, time.Minute, "the retried job ran", func() bool {
			return latest(p.jobs(t, job.Pipeline.ID))["live"].Status == "success"
		})
		shot("job-retried")
	})
}

// screenshotDir is where a browser test writes its screenshots:
// $QUARRY_WEB_SCREENSHOTS/<database> when set (kept), else a temporary
// folder.
func screenshotDir(t *testing.T, s *apitest.Server) string {
	t.Helper()
	shots := os.Getenv("QUARRY_WEB_SCREENSHOTS")
	if shots == "" {
		return t.TempDir()
	}
	shots = filepath.Join(shots, s.Target.Name)
	if err := os.MkdirAll(shots, 0o755); err != nil {
		t.Fatal(err)
	}
	return shots
}

// newChromeTab starts Debian's chromium headless (a test that cannot
// start it fails) and returns a tab's context, ended after timeout or
// with the test.
func newChromeTab(t *testing.T, timeout time.Duration) context.Context {
	t.Helper()
	path, err := exec.LookPath("chromium")
	if err != nil {
		t.Fatalf("chromium is not installed (apt-get install chromium): %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	t.Cleanup(cancel)
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(path), chromedp.NoSandbox,
		chromedp.Flag("disable-gpu", true), chromedp.WindowSize(1280, 900), chromedp.UserDataDir(t.TempDir()))
	actx, stop := chromedp.NewExecAllocator(ctx, opts...)
	t.Cleanup(stop)
	bctx, closeBrowser := chromedp.NewContext(actx)
	t.Cleanup(closeBrowser)
	return bctx
}

// chromeSteps are a browser test's two verbs on tab: do runs a named
// step's actions, eval evaluates a boolean expression; either fails the
// test on an error.
func chromeSteps(t *testing.T, tab context.Context) (do func(step string, actions ...chromedp.Action[chromedp.Void]), eval func(js string) bool) {
	do = func(step string, actions ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(tab, actions...); err != nil {
			t.Fatalf("%s: %v", step, err)
		}
	}
	eval = func(js string) bool {
		t.Helper()
		v, err := chromedp.Run(tab, chromedp.Evaluate[bool](js))
		if err != nil {
			t.Fatalf("evaluate %s: %v", js, err)
		}
		return v
	}
	return do, eval
}
