package e2e

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"quarry/internal/apitest"
)

// The CI pages: a project's pipelines, a pipeline's stages and jobs, a
// job's log (coloured, in sections, followed from an offset), its
// artifacts, and the retry and cancel forms, on a pipeline Quarry's own
// runner ran.

const webCI = `
stages: [build, test]
build:
  stage: build
  script:
    - printf '\033[31mred-text\033[0m <b>not-bold</b>\n'
    - printf 'progress 10%%\rprogress 100%%\n'
    - mkdir -p out/sub && echo artifact-a > out/a.txt && echo artifact-b > out/sub/b.txt
  artifacts: {paths: [out/]}
test:
  stage: test
  script:
    - echo testing-now
    - exit 1
`

// webStuckCI's job waits for a runner with a tag none has.
const webStuckCI = `
stuck:
  tags: [nowhere]
  script: [echo never]
`

// traceJSON is trace.json's answer.
type traceJSON struct {
	ID       int64  `json:"id"`
	Status   string `json:"status"`
	Complete bool   `json:"complete"`
	Offset   int64  `json:"offset"`
	Size     int64  `json:"size"`
	State    string `json:"state"`
	Chunks   []struct {
		Depth int    `json:"depth"`
		HTML  string `json:"html"`
	} `json:"chunks"`
}

func (tr traceJSON) html() string {
	var b strings.Builder
	for _, c := range tr.Chunks {
		b.WriteString(c.HTML)
	}
	return b.String()
}

func TestWeb_ciPages(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		alice, bob := s.NewUser(t, "alice"), s.NewUser(t, "bob")
		s.NewUser(t, "carol")
		p := newCIProject(t, s, alice, "ci-web", nil)
		s.Do(t, apitest.Request{Method: "PUT", Path: "/projects/" + itoa(p.ID), Token: alice.Token,
			JSON: map[string]any{"visibility": "private"}}).Want(t, http.StatusOK)
		s.Do(t, apitest.Request{Method: "POST", Path: "/projects/" + itoa(p.ID) + "/members", Token: alice.Token,
			JSON: map[string]any{"user_id": bob.ID, "access_level": 20}}).Want(t, http.StatusCreated)
		r := projectRunner(t, p, map[string]any{"description": "web-runner"})
		quarryRunner(1)(t, s.URL, r.Token, t.TempDir())
		p.commit(t, "main", map[string]string{".gitlab-ci.yml": webCI})

		var pl pipelineJSON
		eventuallyFor(t, 2*time.Minute, "the pipeline ran", func() bool {
			list := p.pipelines(t, "source=push")
			if len(list) == 0 {
				return false
			}
			pl = list[0]
			return pl.Status == "failed"
		})
		jobs := latest(p.jobs(t, pl.ID))
		build, test := jobs["build"], jobs["test"]
		if build.Status != "success" || test.Status != "failed" {
			t.Fatalf("build %s, test %s", build.Status, test.Status)
		}

		ab, bb, cb, anon := newBrowser(s), newBrowser(s), newBrowser(s), newBrowser(s)
		ab.signIn(t, "alice", webPassword).want(t, http.StatusSeeOther)
		bb.signIn(t, "bob", webPassword).want(t, http.StatusSeeOther)
		cb.signIn(t, "carol", webPassword).want(t, http.StatusSeeOther)
		base := "/" + p.Path + "/-/"
		plURL := fmt.Sprintf("%spipelines/%d", base, pl.ID)
		buildURL, testURL := fmt.Sprintf("%sjobs/%d", base, build.ID), fmt.Sprintf("%sjobs/%d", base, test.ID)

		// The list: the pipeline, its ref, commit, source and stages;
		// the Pipelines tab; filters.
		list := ab.get(t, base+"pipelines").want(t, http.StatusOK)
		list.contains(t, `data-testid="pipelines-tab"`, fmt.Sprintf(`href="%s"`, plURL), `data-status="failed"`,
			`data-stage="build" data-status="success"`, `data-stage="test" data-status="failed"`, `<div class="meta">push`, pl.SHA[:8], ">main</a>")
		wantSecurityHeaders(t, base+"pipelines", list)
		ab.get(t, base+"pipelines?status=success").want(t, http.StatusOK).contains(t, `data-testid="no-pipelines"`)
		ab.get(t, base+"pipelines?scope=finished&status=failed").want(t, http.StatusOK).contains(t, fmt.Sprintf(`href="%s"`, plURL))
		ab.get(t, base+"pipelines?scope=branches").want(t, http.StatusOK).contains(t, fmt.Sprintf(`href="%s"`, plURL))
		ab.get(t, base+"pipelines?status=nope").want(t, http.StatusBadRequest)
		ab.get(t, base+"pipelines?scope=nope").want(t, http.StatusBadRequest)

		// The pipeline: stages, jobs with their statuses and links, and
		// the owner's retry form.
		ab.get(t, plURL).want(t, http.StatusOK).contains(t, `data-testid="pipeline-heading"`,
			`data-job="build" data-status="success"`, `data-job="test" data-status="failed"`, fmt.Sprintf(`href="%s"`, buildURL),
			`data-testid="pipeline-retry"`).lacks(t, `data-testid="pipeline-cancel"`)
		ab.get(t, fmt.Sprintf("%spipelines/%d", base, s.AbsentID(t))).want(t, http.StatusNotFound)
		ab.get(t, base+"pipelines/abc").want(t, http.StatusNotFound)

		// The job: status, stage, runner, the log coloured, escaped, in
		// sections, carriage returns applied; the artifacts' links.
		page := ab.get(t, buildURL).want(t, http.StatusOK)
		page.contains(t, `data-testid="job-name">build<`, `data-testid="job-stage">build<`, "web-runner",
			`<span class="term-fg1">red-text</span> &lt;b&gt;not-bold&lt;/b&gt;`, `<div class="log-line">progress 100%</div>`,
			`class="log-section" data-section="get_sources"`, `data-testid="artifacts-browse"`, buildURL+"/raw").
			lacks(t, "<b>not-bold</b>", `<div class="log-line">progress 10%`, `data-following="true"`, `data-testid="job-cancel"`)
		wantSecurityHeaders(t, buildURL, page)
		ab.get(t, testURL).want(t, http.StatusOK).contains(t, "testing-now", `data-testid="job-retry"`, `data-testid="job-failure"`)

		// The raw log, whole and sandboxed.
		raw := ab.get(t, buildURL+"/raw").want(t, http.StatusOK)
		if !strings.Contains(raw.Body, "\x1b[31mred-text") || !strings.HasPrefix(raw.Header.Get("Content-Type"), "text/plain") ||
			!strings.Contains(raw.Header.Get("Content-Security-Policy"), "sandbox") {
			t.Errorf("raw log %q %q:\n%.300s", raw.Header.Get("Content-Type"), raw.Header.Get("Content-Security-Policy"), raw.Body)
		}

		// trace.json: from 0 all of it; from an offset only what follows.
		trace := func(b *browser, query string) traceJSON {
			t.Helper()
			res := b.do(t, "GET", buildURL+"/trace.json?"+query, nil, map[string]string{"Accept": "application/json"}).want(t, http.StatusOK)
			var tr traceJSON
			if err := json.Unmarshal([]byte(res.Body), &tr); err != nil {
				t.Fatalf("trace.json: %v: %s", err, res.Body)
			}
			return tr
		}
		all := trace(ab, "offset=0")
		if !all.Complete || all.Status != "success" || all.Offset != int64(len(raw.Body)) || all.Size != int64(len(raw.Body)) ||
			!strings.Contains(all.html(), `<span class="term-fg1">red-text</span>`) {
			t.Errorf("trace from 0: %+v", all)
		}
		mid := strings.Index(raw.Body, "progress 10%\r")
		mid = strings.LastIndex(raw.Body[:mid], "\n") + 1
		rest := trace(ab, fmt.Sprintf("offset=%d", mid))
		if rest.Offset != int64(len(raw.Body)) || strings.Contains(rest.html(), "red-text") || !strings.Contains(rest.html(), "progress 100%") {
			t.Errorf("trace from %d: %+v", mid, rest)
		}
		if tail := trace(ab, fmt.Sprintf("offset=%d&state=%s", all.Offset, url.QueryEscape(all.State))); len(tail.Chunks) != 0 || !tail.Complete {
			t.Errorf("trace from the end: %+v", tail)
		}
		for _, q := range []string{"offset=-1", "offset=x", "state=" + url.QueryEscape("<script>"), "state=99.0.0"} {
			ab.do(t, "GET", buildURL+"/trace.json?"+q, nil, map[string]string{"Accept": "application/json"}).want(t, http.StatusBadRequest)
		}

		// Artifacts: browse the folders, a file's bytes, the archive.
		ab.get(t, buildURL+"/artifacts/browse").want(t, http.StatusOK).contains(t, `href="`+buildURL+`/artifacts/browse/out"`)
		ab.get(t, buildURL+"/artifacts/browse/out").want(t, http.StatusOK).
			contains(t, `href="`+buildURL+`/artifacts/browse/out/sub"`, `href="`+buildURL+`/artifacts/raw/out/a.txt"`)
		ab.get(t, buildURL+"/artifacts/browse/nope").want(t, http.StatusNotFound)
		if f := ab.get(t, buildURL+"/artifacts/raw/out/sub/b.txt").want(t, http.StatusOK); f.Body != "artifact-b\n" {
			t.Errorf("artifact file %q", f.Body)
		}
		ab.get(t, buildURL+"/artifacts/file/out/a.txt").want(t, http.StatusFound)
		ab.get(t, buildURL+"/artifacts/raw/out/missing.txt").want(t, http.StatusNotFound)
		zipPage := ab.get(t, buildURL+"/artifacts/download").want(t, http.StatusOK)
		if zr, err := zip.NewReader(bytes.NewReader([]byte(zipPage.Body)), int64(len(zipPage.Body))); err != nil || len(zr.File) == 0 {
			t.Errorf("the download is not a zip: %v", err)
		}
		ab.get(t, testURL+"/artifacts/download").want(t, http.StatusNotFound)

		// Visibility as the API: a signed-in outsider gets 404s, an
		// anonymous visitor the sign-in page; the web_url of pipelines
		// and jobs the API returns open.
		for _, u := range []string{base + "pipelines", plURL, buildURL, buildURL + "/raw", buildURL + "/trace.json",
			buildURL + "/artifacts/browse", buildURL + "/artifacts/download", buildURL + "/artifacts/raw/out/a.txt"} {
			cb.get(t, u).want(t, http.StatusNotFound)
			if loc := anon.get(t, u).want(t, http.StatusFound).Header.Get("Location"); !strings.HasPrefix(loc, "/users/sign_in?redirect_to=") {
				t.Errorf("%s: Location %q", u, loc)
			}
		}
		for _, u := range []string{pl.WebURL, build.WebURL} {
			ab.get(t, strings.TrimPrefix(u, s.URL)).want(t, http.StatusOK)
			bb.get(t, strings.TrimPrefix(u, s.URL)).want(t, http.StatusOK)
			cb.get(t, strings.TrimPrefix(u, s.URL)).want(t, http.StatusNotFound)
		}

		// A reporter sees the pages without the forms, and their posts
		// are refused as the API refuses them (403).
		bb.get(t, plURL).want(t, http.StatusOK).lacks(t, `data-testid="pipeline-retry"`)
		bb.get(t, testURL).want(t, http.StatusOK).lacks(t, `data-testid="job-retry"`)
		bb.do(t, "POST", testURL+"/retry", url.Values{}, nil).want(t, http.StatusForbidden)
		bb.do(t, "POST", plURL+"/retry", url.Values{}, nil).want(t, http.StatusForbidden)
		bb.do(t, "POST", plURL+"/cancel", url.Values{}, nil).want(t, http.StatusForbidden)
		cb.do(t, "POST", testURL+"/retry", url.Values{}, nil).want(t, http.StatusNotFound)
		if loc := anon.do(t, "POST", testURL+"/retry", url.Values{}, nil).want(t, http.StatusSeeOther).Header.Get("Location"); loc !=
			"/users/sign_in?redirect_to="+url.QueryEscape(testURL) {
			t.Errorf("anonymous retry: Location %q", loc)
		}
		// A form sent from another site is refused.
		ab.do(t, "POST", testURL+"/retry", url.Values{}, map[string]string{"Sec-Fetch-Site": "cross-site"}).want(t, http.StatusForbidden).
			contains(t, "Cross-site request refused")
		ab.do(t, "POST", plURL+"/retry", url.Values{}, map[string]string{"Origin": "http://evil.example"}).want(t, http.StatusForbidden)
		if n := len(p.jobs(t, pl.ID)); n != 2 {
			t.Fatalf("refused retries made jobs: %d", n)
		}

		// The owner retries the failed job: to the new job's page, which
		// the runner runs.
		res := ab.do(t, "POST", testURL+"/retry", url.Values{}, nil).want(t, http.StatusSeeOther)
		var retried jobJSON
		eventuallyFor(t, time.Minute, "the retried job ran", func() bool {
			retried = latest(p.jobs(t, pl.ID))["test"]
			return retried.ID != test.ID && retried.Status == "failed"
		})
		if loc := res.Header.Get("Location"); loc != fmt.Sprintf("%sjobs/%d", base, retried.ID) {
			t.Errorf("retry went to %q; want job %d", loc, retried.ID)
		}
		ab.get(t, testURL).want(t, http.StatusOK).contains(t, "was retried")
		ab.get(t, plURL).want(t, http.StatusOK).contains(t, fmt.Sprintf(`href="%sjobs/%d"`, base, retried.ID)).
			lacks(t, fmt.Sprintf(`href="%s"`, testURL))
		// Retrying the pipeline: the failed job again.
		ab.do(t, "POST", plURL+"/retry", url.Values{}, nil).want(t, http.StatusSeeOther)
		eventuallyFor(t, time.Minute, "the retried pipeline ran", func() bool {
			j := latest(p.jobs(t, pl.ID))["test"]
			return j.ID != retried.ID && j.Status == "failed"
		})

		// Cancel: a pipeline whose job no runner takes; then the job's
		// page no longer offers it.
		p.commit(t, "stuck", map[string]string{".gitlab-ci.yml": webStuckCI})
		var stuck pipelineJSON
		eventuallyFor(t, time.Minute, "the stuck pipeline", func() bool {
			l := p.pipelines(t, "ref=stuck")
			if len(l) > 0 {
				stuck = l[0]
			}
			return len(l) > 0 && stuck.Status == "pending"
		})
		stuckURL := fmt.Sprintf("%spipelines/%d", base, stuck.ID)
		stuckJob := latest(p.jobs(t, stuck.ID))["stuck"]
		jobPage := ab.get(t, fmt.Sprintf("%sjobs/%d", base, stuckJob.ID)).want(t, http.StatusOK)
		jobPage.contains(t, `data-following="true"`, `data-testid="job-cancel"`)
		ab.get(t, stuckURL).want(t, http.StatusOK).contains(t, `data-testid="pipeline-cancel"`)
		if loc := ab.do(t, "POST", stuckURL+"/cancel", url.Values{}, nil).want(t, http.StatusSeeOther).Header.Get("Location"); loc != stuckURL {
			t.Errorf("cancel went to %q", loc)
		}
		if st := p.pipeline(t, stuck.ID).Status; st != "canceled" {
			t.Errorf("pipeline %s after cancel", st)
		}
		ab.get(t, stuckURL).want(t, http.StatusOK).contains(t, `data-job="stuck" data-status="canceled"`).lacks(t, `data-testid="pipeline-cancel"`)
	})
}

// webProtoCI: a job whose log the test writes piece by piece, one whose
// artifacts only developers may download, and a child pipeline.
const webProtoCI = `
stages: [build, children]
logged:
  stage: build
  script: [make]
restricted:
  stage: build
  script: [make]
  artifacts: {access: developer, paths: [out/]}
kids:
  stage: children
  trigger:
    include: ci/child.yml
"xss <img src=x onerror=alert(1)>":
  stage: children
  script: [make]
`

// TestWeb_ciTrace drives the runner's protocol itself: trace.json hands a
// running job's log out a whole line at a time from an offset, carries a
// section and a colour from one piece to the next (a chunk inside the
// open section, then one after it), and says when the job is done; the
// job's page renders only the end of a long log; artifacts:access holds
// on the web as in the API; a child pipeline links to its parent and
// back.
func TestWeb_ciTrace(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		alice, rep, dev := s.NewUser(t, "alice"), s.NewUser(t, "rep"), s.NewUser(t, "dev")
		p := newCIProject(t, s, alice, "proto", map[string]string{".gitlab-ci.yml": webProtoCI, "ci/child.yml": "unit: {script: [unit]}\n"})
		for u, lvl := range map[int64]int{rep.ID: 20, dev.ID: 30} {
			s.Do(t, apitest.Request{Method: "POST", Path: "/projects/" + itoa(p.ID) + "/members", Token: alice.Token,
				JSON: map[string]any{"user_id": u, "access_level": lvl}}).Want(t, http.StatusCreated)
		}
		parent := childPushRoot(t, p)
		r := projectRunner(t, p, nil)
		jobs := map[string]payloadJSON{}
		for range 2 {
			j := r.take(t)
			jobs[j.JobInfo.Name] = j
		}
		logged := jobs["logged"]
		ab, rb, db := newBrowser(s), newBrowser(s), newBrowser(s)
		ab.signIn(t, "alice", webPassword).want(t, http.StatusSeeOther)
		rb.signIn(t, "rep", webPassword).want(t, http.StatusSeeOther)
		db.signIn(t, "dev", webPassword).want(t, http.StatusSeeOther)
		base := "/" + p.Path + "/-/"
		loggedURL := fmt.Sprintf("%sjobs/%d", base, logged.ID)
		trace := func(offset int64, state string) traceJSON {
			t.Helper()
			res := ab.do(t, "GET", fmt.Sprintf("%s/trace.json?offset=%d&state=%s", loggedURL, offset, url.QueryEscape(state)), nil,
				map[string]string{"Accept": "application/json"}).want(t, http.StatusOK)
			if res.Header.Get("Cache-Control") != "no-store" {
				t.Errorf("trace.json Cache-Control %q", res.Header.Get("Cache-Control"))
			}
			var tr traceJSON
			if err := json.Unmarshal([]byte(res.Body), &tr); err != nil {
				t.Fatal(err)
			}
			return tr
		}

		// Nothing yet: the page follows an empty log.
		ab.get(t, loggedURL).want(t, http.StatusOK).contains(t, `data-following="true"`, `data-offset="0"`)
		if tr := trace(0, ""); tr.Complete || tr.Offset != 0 || len(tr.Chunks) != 0 || tr.Status != "running" {
			t.Errorf("before any log: %+v", tr)
		}
		// A section opens, a colour starts, a line is half written.
		piece1 := "section_start:1:build_step\r\x1b[0K\x1b[36mBuilding\x1b[0m\n\x1b[33mwarming <up>\nhalf"
		r.trace(t, logged, 0, piece1).Want(t, http.StatusAccepted)
		page := ab.get(t, loggedURL).want(t, http.StatusOK)
		whole := int64(strings.LastIndex(piece1, "\n") + 1)
		page.contains(t, `data-section="build_step" open`, `<span class="term-fg3">warming &lt;up&gt;</span>`,
			fmt.Sprintf(`data-offset="%d"`, whole), `data-state="3.-1.0~build_step"`).lacks(t, "half")
		tr1 := trace(0, "")
		if tr1.Offset != whole || tr1.State != "3.-1.0~build_step" || tr1.Complete || len(tr1.Chunks) != 1 || tr1.Chunks[0].Depth != 0 ||
			strings.Contains(tr1.html(), "half") {
			t.Errorf("first piece: %+v", tr1)
		}
		if tr := trace(tr1.Offset, tr1.State); tr.Offset != tr1.Offset || len(tr.Chunks) != 0 {
			t.Errorf("no whole line since: %+v", tr)
		}
		// The line ends, the section closes, a line follows it.
		piece2 := "-done\nsection_end:2:build_step\r\x1b[0K\nafter\n"
		r.trace(t, logged, len(piece1), piece2).Want(t, http.StatusAccepted)
		tr2 := trace(tr1.Offset, tr1.State)
		want := []struct {
			depth int
			html  string
		}{{1, `<div class="log-line"><span class="term-fg3">half-done</span></div>`},
			{0, `<div class="log-line"><span class="term-fg3">after</span></div>`}}
		if len(tr2.Chunks) != len(want) || tr2.Offset != int64(len(piece1)+len(piece2)) || tr2.State != "3.-1.0" {
			t.Fatalf("second piece: %+v", tr2)
		}
		for i, w := range want {
			if tr2.Chunks[i].Depth != w.depth || tr2.Chunks[i].HTML != w.html {
				t.Errorf("chunk %d: %+v; want %+v", i, tr2.Chunks[i], w)
			}
		}
		// The job ends: the last piece (no newline) and complete.
		piece3 := "\x1b[0mJob succeeded"
		r.trace(t, logged, len(piece1)+len(piece2), piece3).Want(t, http.StatusAccepted)
		r.update(t, logged, map[string]any{"state": "success"}).Want(t, http.StatusOK)
		tr3 := trace(tr2.Offset, tr2.State)
		if !tr3.Complete || tr3.Status != "success" || tr3.html() != `<div class="log-line">Job succeeded</div>` {
			t.Errorf("last piece: %+v", tr3)
		}
		ab.get(t, loggedURL).want(t, http.StatusOK).contains(t, "Job succeeded").lacks(t, `data-following="true"`)

		// artifacts:access developer: the reporter is refused as the API
		// refuses (403), the developer downloads.
		restricted := jobs["restricted"]
		uploadArchive(t, s, restricted, "")
		r.update(t, restricted, map[string]any{"state": "success"}).Want(t, http.StatusOK)
		rURL := fmt.Sprintf("%sjobs/%d", base, restricted.ID)
		for _, u := range []string{rURL + "/artifacts/download", rURL + "/artifacts/browse", rURL + "/artifacts/raw/out/a.txt"} {
			rb.get(t, u).want(t, http.StatusForbidden)
			db.get(t, u).want(t, http.StatusOK)
			if got := s.Get(t, fmt.Sprintf("/projects/%d/jobs/%d/artifacts", p.ID, restricted.ID), rep.Token).Status; got != http.StatusForbidden {
				t.Errorf("the API answers the reporter %d", got)
			}
		}
		rb.get(t, rURL).want(t, http.StatusOK)

		// The child pipeline: linked from the bridge, and back.
		bridge := childDownstream(t, p, parent.ID, "kids")
		parentURL := fmt.Sprintf("%spipelines/%d", base, parent.ID)
		childURL := fmt.Sprintf("%spipelines/%d", base, bridge.DownstreamPipeline.ID)
		ab.get(t, parentURL).want(t, http.StatusOK).contains(t, `data-job="kids"`, `href="`+childURL+`" data-testid="downstream-link"`,
			`>xss &lt;img src=x onerror=alert(1)&gt;</a>`).lacks(t, "<img src=x")
		ab.get(t, childURL).want(t, http.StatusOK).contains(t, `data-testid="parent-pipeline"`, `href="`+parentURL+`"`, `data-job="unit"`)
		// The list shows the parent, not the child.
		ab.get(t, base+"pipelines").want(t, http.StatusOK).contains(t, `href="`+parentURL+`"`).lacks(t, `href="`+childURL+`"`)
	})
}

// TestWeb_ciLogBound: a job's page renders only the end of a long log,
// from a line's start, and links the raw log, which has all of it.
func TestWeb_ciLogBound(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		alice := s.NewUser(t, "alice")
		p := newCIProject(t, s, alice, "long", map[string]string{".gitlab-ci.yml": "big: {script: [make]}\n"})
		p.settle(t, 1)
		r := projectRunner(t, p, nil)
		job := r.take(t)
		var b strings.Builder
		b.WriteString("very-first-line\n")
		for i := 0; b.Len() < 700<<10; i++ {
			fmt.Fprintf(&b, "line %06d %s\n", i, strings.Repeat("x", 100))
		}
		b.WriteString("very-last-line\n")
		log := b.String()
		for off := 0; off < len(log); off += 256 << 10 {
			r.trace(t, job, off, log[off:min(len(log), off+256<<10)]).Want(t, http.StatusAccepted)
		}
		r.update(t, job, map[string]any{"state": "success"}).Want(t, http.StatusOK)
		ab := newBrowser(s)
		ab.signIn(t, "alice", webPassword).want(t, http.StatusSeeOther)
		jobURL := fmt.Sprintf("/%s/-/jobs/%d", p.Path, job.ID)
		page := ab.get(t, jobURL).want(t, http.StatusOK).contains(t, "very-last-line", "Showing the end of the log", jobURL+"/raw").
			lacks(t, "very-first-line")
		if len(page.Body) > 1<<20 {
			t.Errorf("the page is %d bytes", len(page.Body))
		}
		if i := strings.Index(page.Body, `<div class="log-line">line `); i < 0 || page.Body[i+len(`<div class="log-line">line `)+6] != ' ' {
			t.Errorf("the log does not begin at a line's start")
		}
		if raw := ab.get(t, jobURL+"/raw").want(t, http.StatusOK); raw.Body != log {
			t.Errorf("raw log: %d bytes; want %d", len(raw.Body), len(log))
		}
		// A public project's jobs are anyone's to read, as in the API.
		anon := newBrowser(s)
		anon.get(t, jobURL).want(t, http.StatusFound)
		s.Do(t, apitest.Request{Method: "PUT", Path: "/projects/" + itoa(p.ID), Token: alice.Token,
			JSON: map[string]any{"visibility": "public"}}).Want(t, http.StatusOK)
		anon.get(t, jobURL).want(t, http.StatusOK).contains(t, "very-last-line").lacks(t, `data-testid="job-retry"`)
		anon.do(t, "GET", jobURL+"/trace.json?offset=0", nil, map[string]string{"Accept": "application/json"}).want(t, http.StatusOK)
		anon.get(t, fmt.Sprintf("/%s/-/pipelines", p.Path)).want(t, http.StatusOK).contains(t, `data-testid="pipeline-row"`)
		anon.do(t, "POST", jobURL+"/retry", url.Values{}, nil).want(t, http.StatusSeeOther)
		if n := len(p.jobs(t, p.pipelines(t, "source=push")[0].ID)); n != 1 {
			t.Errorf("an anonymous retry made a job: %d jobs", n)
		}
	})
}
