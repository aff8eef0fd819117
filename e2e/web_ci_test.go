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
