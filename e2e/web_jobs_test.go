package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"quarry/internal/apitest"
	"quarry/internal/store"
	"quarry/internal/web"
)

// The jobs list, a running pipeline's JSON view (what its page polls),
// the retry, cancel and play forms shown by the rule the CI service
// applies when they are posted (a protected branch wants the right to
// push or merge to it), and the merge request list in a fixed number of
// statements.

// webJobsCI: a job a runner takes, and a manual one after it.
const webJobsCI = `
stages: [build, deploy]
build:
  stage: build
  script: [make]
deploy:
  stage: deploy
  when: manual
  script: [deploy]
`

// pipelineAnswerJSON is /-/pipelines/<id>.json's answer.
type pipelineAnswerJSON struct {
	ID       int64  `json:"id"`
	Status   string `json:"status"`
	Complete bool   `json:"complete"`
	Stages   []struct {
		Name   string `json:"name"`
		Status string `json:"status"`
	} `json:"stages"`
	Jobs []struct {
		ID     int64  `json:"id"`
		Name   string `json:"name"`
		Status string `json:"status"`
	} `json:"jobs"`
}

func TestWeb_jobsList(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		alice, dev, maint, rep := s.NewUser(t, "alice"), s.NewUser(t, "dev"), s.NewUser(t, "maint"), s.NewUser(t, "rep")
		carol := s.NewUser(t, "carol")
		p := newCIProject(t, s, alice, "jobs-web", map[string]string{".gitlab-ci.yml": webJobsCI})
		s.Do(t, apitest.Request{Method: "PUT", Path: "/projects/" + itoa(p.ID), Token: alice.Token,
			JSON: map[string]any{"visibility": "private"}}).Want(t, http.StatusOK)
		apMember(t, p, apDeveloper, dev)
		apMember(t, p, apMaintainer, maint)
		apMember(t, p, apReporter, rep)
		p.settle(t, 1)
		p.commit(t, "feature", map[string]string{"f.txt": "feature\n"})
		eventually(t, "the feature pipeline", func() bool { return len(p.pipelines(t, "ref=feature")) == 1 })
		mainPl, featPl := p.pipelines(t, "ref=main")[0], p.pipelines(t, "ref=feature")[0]
		mainBuild, featBuild := latest(p.jobs(t, mainPl.ID))["build"], latest(p.jobs(t, featPl.ID))["build"]

		db, mb, rb, cb, anon := newBrowser(s), newBrowser(s), newBrowser(s), newBrowser(s), newBrowser(s)
		db.signIn(t, "dev", webPassword).want(t, http.StatusSeeOther)
		mb.signIn(t, "maint", webPassword).want(t, http.StatusSeeOther)
		rb.signIn(t, "rep", webPassword).want(t, http.StatusSeeOther)
		cb.signIn(t, "carol", webPassword).want(t, http.StatusSeeOther)
		base := "/" + p.Path + "/-/"
		jobsURL := base + "jobs"
		mainPlURL, featPlURL := fmt.Sprintf("%spipelines/%d", base, mainPl.ID), fmt.Sprintf("%spipelines/%d", base, featPl.ID)
		mainJobURL, featJobURL := fmt.Sprintf("%sjobs/%d", base, mainBuild.ID), fmt.Sprintf("%sjobs/%d", base, featBuild.ID)
		row := func(id int64) string { return fmt.Sprintf(`data-job-id="%d"`, id) }

		// Pending: the list, its rows and tabs; the pipelines pages link
		// to it.
		list := mb.get(t, jobsURL).want(t, http.StatusOK)
		list.contains(t, `data-testid="job-list"`, row(mainBuild.ID), row(featBuild.ID), `href="`+mainJobURL+`" data-testid="job-link">#`,
			`href="`+mainPlURL+`" data-testid="job-pipeline"`, `data-testid="job-ref">main</a>`, `data-testid="job-stage">build<`,
			`data-testid="ci-tab-Jobs"`, `href="`+jobsURL+`?scope=finished"`)
		wantSecurityHeaders(t, jobsURL, list)
		mb.get(t, base+"pipelines").want(t, http.StatusOK).contains(t, `href="`+jobsURL+`" data-testid="ci-tab-Jobs"`)
		mb.get(t, mainPlURL).want(t, http.StatusOK).contains(t, `href="`+jobsURL+`" data-testid="ci-tab-Jobs"`)
		mb.get(t, jobsURL+"?scope=pending").want(t, http.StatusOK).contains(t, row(mainBuild.ID))
		mb.get(t, jobsURL+"?scope=running").want(t, http.StatusOK).contains(t, `data-testid="no-jobs"`)
		for _, q := range []string{"?scope=nope", "?status=nope", "?scope=pending&status=failed", "?page=0"} {
			mb.get(t, jobsURL+q).want(t, http.StatusBadRequest)
		}

		// A running pipeline's page follows its JSON view.
		r := projectRunner(t, p, nil)
		taken := map[int64]payloadJSON{}
		for range 2 {
			j := r.take(t)
			taken[j.ID] = j
		}
		mb.get(t, jobsURL+"?scope=running").want(t, http.StatusOK).contains(t, row(mainBuild.ID), row(featBuild.ID))
		pipelineJSON := func(b *browser, u string, status int) pipelineAnswerJSON {
			t.Helper()
			res := b.do(t, "GET", u+".json", nil, map[string]string{"Accept": "application/json"}).want(t, status)
			var ans pipelineAnswerJSON
			if status == http.StatusOK {
				if res.Header.Get("Cache-Control") != "no-store" {
					t.Errorf("%s.json: Cache-Control %q", u, res.Header.Get("Cache-Control"))
				}
				if err := json.Unmarshal([]byte(res.Body), &ans); err != nil {
					t.Fatalf("%s.json: %v: %s", u, err, res.Body)
				}
			}
			return ans
		}
		plPage := rb.get(t, mainPlURL).want(t, http.StatusOK)
		plPage.contains(t, `data-following="true"`, `data-json-url="`+mainPlURL+`.json"`, `data-testid="pipeline-following"`, `/assets/pipeline-`)
		if ans := pipelineJSON(rb, mainPlURL, http.StatusOK); ans.ID != mainPl.ID || ans.Status != "running" || ans.Complete ||
			len(ans.Jobs) != 2 || ans.Jobs[0].ID != mainBuild.ID || ans.Jobs[0].Status != "running" || ans.Jobs[1].Status != "created" ||
			len(ans.Stages) != 2 || ans.Stages[0].Name != "build" || ans.Stages[0].Status != "running" {
			t.Errorf("a running pipeline: %+v", ans)
		}
		// The JSON view is the page's: none for an outsider, nor for an
		// anonymous visitor; a bad id is a 404.
		pipelineJSON(cb, mainPlURL, http.StatusNotFound)
		pipelineJSON(anon, mainPlURL, http.StatusNotFound)
		pipelineJSON(rb, fmt.Sprintf("%spipelines/%d", base, s.AbsentID(t)), http.StatusNotFound)
		pipelineJSON(rb, base+"pipelines/x", http.StatusNotFound)

		for _, j := range taken {
			r.update(t, j, map[string]any{"state": "failed", "failure_reason": "script_failure"}).Want(t, http.StatusOK)
		}
		eventually(t, "the pipelines failed", func() bool {
			return p.pipeline(t, mainPl.ID).Status == "failed" && p.pipeline(t, featPl.ID).Status == "failed"
		})
		if ans := pipelineJSON(rb, mainPlURL, http.StatusOK); !ans.Complete || ans.Status != "failed" || ans.Jobs[0].Status != "failed" ||
			ans.Jobs[1].Status != "skipped" {
			t.Errorf("a failed pipeline: %+v", ans)
		}
		rb.get(t, mainPlURL).want(t, http.StatusOK).lacks(t, `data-following="true"`, `data-testid="pipeline-following"`, `/assets/pipeline-`)
		mb.get(t, jobsURL+"?scope=finished").want(t, http.StatusOK).contains(t, row(mainBuild.ID), row(featBuild.ID))
		mb.get(t, jobsURL+"?scope=finished&status=success").want(t, http.StatusOK).contains(t, `data-testid="no-jobs"`)
		mb.get(t, jobsURL+"?status=failed").want(t, http.StatusOK).contains(t, row(mainBuild.ID))

		// main is protected (maintainers push and merge): a developer
		// sees no form of its pipeline and jobs, and their posts are
		// refused, by the web as by the API; on the feature branch the
		// developer may.
		if got := s.Do(t, apitest.Request{Method: "POST", Path: fmt.Sprintf("/projects/%d/jobs/%d/retry", p.ID, mainBuild.ID),
			Token: dev.Token}).Status; got != http.StatusForbidden {
			t.Errorf("the API lets a developer retry on a protected branch: %d", got)
		}
		db.get(t, mainJobURL).want(t, http.StatusOK).lacks(t, `data-testid="job-retry"`)
		db.get(t, mainPlURL).want(t, http.StatusOK).lacks(t, `data-testid="pipeline-retry"`)
		devList := db.get(t, jobsURL).want(t, http.StatusOK)
		if n := strings.Count(devList.Body, `data-testid="job-retry"`); n != 1 || !strings.Contains(devList.Body, `action="`+featJobURL+`/retry"`) {
			t.Errorf("the developer's list has %d retry forms; want the feature job's only", n)
		}
		db.do(t, "POST", mainJobURL+"/retry", url.Values{}, nil).want(t, http.StatusForbidden)
		db.do(t, "POST", mainPlURL+"/retry", url.Values{}, nil).want(t, http.StatusForbidden)
		if n := len(p.jobs(t, mainPl.ID)); n != 2 {
			t.Fatalf("refused retries made jobs: %d", n)
		}
		db.get(t, featJobURL).want(t, http.StatusOK).contains(t, `data-testid="job-retry"`)
		db.get(t, featPlURL).want(t, http.StatusOK).contains(t, `data-testid="pipeline-retry"`)
		db.do(t, "POST", featJobURL+"/retry", url.Values{}, nil).want(t, http.StatusSeeOther)
		// A reporter sees no form anywhere.
		rb.get(t, jobsURL).want(t, http.StatusOK).contains(t, row(mainBuild.ID)).lacks(t, `data-testid="job-retry"`, `data-testid="job-play"`)

		// The maintainer sees the forms on main and may use them.
		mlist := mb.get(t, jobsURL).want(t, http.StatusOK)
		mlist.contains(t, `action="`+mainJobURL+`/retry"`)
		mb.get(t, mainJobURL).want(t, http.StatusOK).contains(t, `data-testid="job-retry"`)
		mb.get(t, mainPlURL).want(t, http.StatusOK).contains(t, `data-testid="pipeline-retry"`)
		mb.do(t, "POST", mainJobURL+"/retry", url.Values{}, nil).want(t, http.StatusSeeOther)
		eventually(t, "the retried job", func() bool { return latest(p.jobs(t, mainPl.ID))["build"].ID != mainBuild.ID })
		// The list has the retried job too, marked.
		mb.get(t, jobsURL+"?status=failed").want(t, http.StatusOK).contains(t, row(mainBuild.ID), `data-testid="job-retried"`)

		// A protected tag (v*: maintainers create): its pending job's
		// cancel form is the maintainer's only.
		s.Do(t, apitest.Request{Method: "POST", Path: fmt.Sprintf("/projects/%d/protected_tags", p.ID), Token: alice.Token,
			JSON: map[string]any{"name": "v*", "create_access_level": 40}}).Want(t, http.StatusCreated)
		s.Do(t, apitest.Request{Method: "POST", Path: fmt.Sprintf("/projects/%d/repository/tags", p.ID), Token: maint.Token,
			JSON: map[string]any{"tag_name": "v1", "ref": "main"}}).Want(t, http.StatusCreated)
		eventually(t, "the tag's pipeline", func() bool { return len(p.pipelines(t, "ref=v1")) == 1 })
		tagPl := p.pipelines(t, "ref=v1")[0]
		tagJobURL := fmt.Sprintf("%sjobs/%d", base, latest(p.jobs(t, tagPl.ID))["build"].ID)
		tagPlURL := fmt.Sprintf("%spipelines/%d", base, tagPl.ID)
		db.get(t, tagJobURL).want(t, http.StatusOK).lacks(t, `data-testid="job-cancel"`)
		db.get(t, tagPlURL).want(t, http.StatusOK).lacks(t, `data-testid="pipeline-cancel"`)
		if strings.Contains(db.get(t, jobsURL).want(t, http.StatusOK).Body, `action="`+tagJobURL+`/cancel"`) {
			t.Errorf("the developer's list offers to cancel the protected tag's job")
		}
		db.do(t, "POST", tagJobURL+"/cancel", url.Values{}, nil).want(t, http.StatusForbidden)
		mb.get(t, tagJobURL).want(t, http.StatusOK).contains(t, `data-testid="job-cancel"`)
		mb.get(t, tagPlURL).want(t, http.StatusOK).contains(t, `data-testid="pipeline-cancel"`)
		mb.get(t, jobsURL).want(t, http.StatusOK).contains(t, `action="`+tagJobURL+`/cancel"`)
		mb.do(t, "POST", tagJobURL+"/cancel", url.Values{}, nil).want(t, http.StatusSeeOther)

		// Visibility as GET /projects/:id/jobs: an outsider gets a 404,
		// an anonymous visitor the sign-in page; a public project whose
		// builds are private to members shows the list to members only.
		cb.get(t, jobsURL).want(t, http.StatusNotFound)
		if loc := anon.get(t, jobsURL).want(t, http.StatusFound).Header.Get("Location"); loc != "/users/sign_in?redirect_to="+url.QueryEscape(jobsURL) {
			t.Errorf("anonymous: Location %q", loc)
		}
		s.Do(t, apitest.Request{Method: "PUT", Path: "/projects/" + itoa(p.ID), Token: alice.Token,
			JSON: map[string]any{"visibility": "public", "builds_access_level": "private"}}).Want(t, http.StatusOK)
		if got := s.Get(t, fmt.Sprintf("/projects/%d/jobs", p.ID), carol.Token).Status; got == http.StatusOK {
			t.Errorf("the API lists private builds to an outsider")
		}
		cb.get(t, "/"+p.Path).want(t, http.StatusOK)
		cb.get(t, jobsURL).want(t, http.StatusNotFound)
		anon.get(t, jobsURL).want(t, http.StatusFound)
		rb.get(t, jobsURL).want(t, http.StatusOK).contains(t, row(mainBuild.ID))
		s.Do(t, apitest.Request{Method: "PUT", Path: "/projects/" + itoa(p.ID), Token: alice.Token,
			JSON: map[string]any{"builds_access_level": "enabled"}}).Want(t, http.StatusOK)
		anon.get(t, jobsURL).want(t, http.StatusOK).contains(t, row(mainBuild.ID)).lacks(t, `data-testid="job-retry"`)
	})
}

// webPageCounter serves s behind a handler that counts the statements
// of each request (store.CountQueries), for pages a browser's session
// cookie opens.
type webPageCounter struct {
	url    string
	counts chan int64
}

func newWebPageCounter(t *testing.T, s *apitest.Server) *webPageCounter {
	c := &webPageCounter{counts: make(chan int64, 1)}
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Every counted page reads its session and its project (a
		// session read and a project resolved may otherwise answer from
		// memory for a second, and two pages compared would differ by
		// those statements; so may a list's page, store/pages.go).
		s.App.Users.ForgetSessions()
		s.App.Projects.ForgetCachedReads()
		s.App.DB.ForgetPages()
		ctx, n := store.CountQueries(r.Context())
		s.App.Handler.ServeHTTP(w, r.WithContext(ctx))
		c.counts <- n.N()
	}))
	t.Cleanup(hs.Close)
	c.url = hs.URL
	return c
}

// get fetches a page with b's session and returns its body and the
// statements it cost.
func (c *webPageCounter) get(t *testing.T, b *browser, path string) (string, int64) {
	t.Helper()
	req, err := http.NewRequest("GET", c.url+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", "text/html")
	req.AddCookie(&http.Cookie{Name: web.SessionCookie, Value: b.cookie})
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d\n%.500s", path, resp.StatusCode, body)
	}
	select {
	case n := <-c.counts:
		return string(body), n
	case <-time.After(10 * time.Second):
		t.Fatalf("GET %s: no statement count", path)
		return "", 0
	}
}

// steady gets a page until two reads in a row cost the same statements
// (at most ten) and returns the last: the page's cost once what the
// server still does in the background (a pipeline's jobs made, a
// project's statistics refreshed) has stopped moving what it reads.
func (c *webPageCounter) steady(t *testing.T, b *browser, path string) (string, int64) {
	t.Helper()
	_, n := c.get(t, b, path)
	for range 10 {
		body, m := c.get(t, b, path)
		if m == n {
			return body, m
		}
		n = m
	}
	t.Fatalf("GET %s: its statements never settled (last %d)", path, n)
	return "", n
}

// TestWeb_mergeRequestListQueries: the merge request list reads a page's
// approvals and head pipelines in a fixed number of statements — a page
// of 1 and a page of 20 cost the same, whether the approval states are
// cached or read again (a change of any group's members moves them all)
// — and shows each merge request's approvals as its approval state.
func TestWeb_mergeRequestListQueries(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		alice, bob, eve := s.NewUser(t, "alice"), s.NewUser(t, "bob"), s.NewUser(t, "eve")
		var g struct {
			ID int64 `json:"id"`
		}
		s.Do(t, apitest.Request{Method: "POST", Path: "/groups", Token: alice.Token,
			JSON: map[string]any{"name": "reviewers", "path": "reviewers"}}).Want(t, http.StatusCreated).JSON(t, &g)
		s.Do(t, apitest.Request{Method: "POST", Path: fmt.Sprintf("/groups/%d/members", g.ID), Token: alice.Token,
			JSON: map[string]any{"user_id": bob.ID, "access_level": apDeveloper}}).Want(t, http.StatusCreated)
		build := func(name string, n int) ciProject {
			p := mrProject(t, s, alice, name, "private")
			apMember(t, p, apDeveloper, bob, eve)
			p.commit(t, "main", map[string]string{".gitlab-ci.yml": webMRCI})
			apCreateRule(t, p, map[string]any{"name": "Reviewers", "approvals_required": 2, "user_ids": []int64{eve.ID},
				"group_ids": []int64{g.ID}})
			for i := range n {
				branch := fmt.Sprintf("topic-%02d", i)
				p.commit(t, branch, map[string]string{branch + ".txt": branch + "\n"})
				mr := mrCreate(t, p, alice.Token, map[string]any{"source_branch": branch, "target_branch": "main",
					"title": "Change " + branch, "labels": "web,ci", "assignee_ids": []int64{bob.ID}, "reviewer_ids": []int64{eve.ID}})
				apMRDo(t, p, "POST", alice.Token, mr.IID, "/approval_rules", map[string]any{"name": "Own " + branch,
					"approvals_required": 1, "group_ids": []int64{g.ID}}).Want(t, http.StatusCreated)
				apApprove(t, p, bob.Token, mr.IID, nil)
			}
			return p
		}
		one, many := build("one", 1), build("many", 20)
		for p, n := range map[*ciProject]int{&one: 1, &many: 20} {
			eventually(t, "the merge request pipelines", func() bool {
				for iid := 1; iid <= n; iid++ {
					var mr struct {
						HeadPipeline *struct{} `json:"head_pipeline"`
					}
					s.Get(t, mrPath(*p, int64(iid), ""), alice.Token).Want(t, http.StatusOK).JSON(t, &mr)
					if mr.HeadPipeline == nil {
						return false
					}
				}
				return true
			})
		}
		c := newWebPageCounter(t, s)
		b := newBrowser(s)
		b.signIn(t, "alice", webPassword).want(t, http.StatusSeeOther)
		listPath := func(p ciProject) string { return "/" + p.Path + "/-/merge_requests" }
		moveMembers := func() {
			// A change of any group's members moves every approval
			// state's version: the next read reads them again.
			tmp := fmt.Sprintf("tmp-%d", time.Now().UnixNano())
			s.Do(t, apitest.Request{Method: "POST", Path: "/groups", Token: alice.Token,
				JSON: map[string]any{"name": tmp, "path": tmp}}).Want(t, http.StatusCreated)
		}
		for _, p := range []ciProject{one, many} {
			c.get(t, b, listPath(p)) // warm what every first read warms
		}
		// A page read again after a move, until two such reads cost the
		// same (what the server still does in the background — a
		// pipeline's jobs, a merge status, a project's refresh — may
		// move what one read finds).
		readAgain := func(p ciProject) (string, int64) {
			t.Helper()
			moveMembers()
			_, n := c.get(t, b, listPath(p))
			for range 10 {
				moveMembers()
				body, m := c.get(t, b, listPath(p))
				if m == n {
					return body, m
				}
				n = m
			}
			t.Fatalf("%s: its statements never settled (last %d)", listPath(p), n)
			return "", n
		}
		body1, cold1 := readAgain(one)
		body20, cold20 := readAgain(many)
		_, warm1 := c.steady(t, b, listPath(one))
		_, warm20 := c.steady(t, b, listPath(many))
		if n1, n20 := strings.Count(body1, `data-testid="mr-item"`), strings.Count(body20, `data-testid="mr-item"`); n1 != 1 || n20 != 20 {
			t.Fatalf("pages of %d and %d merge requests; want 1 and 20", n1, n20)
		}
		t.Logf("merge request list: %d statements for 1, %d for 20 (read again); %d and %d cached", cold1, cold20, warm1, warm20)
		if cold1 != cold20 || warm1 != warm20 || cold1 == 0 {
			t.Errorf("statements: %d for a page of 1 and %d for 20 read again, %d and %d cached; want the same", cold1, cold20, warm1, warm20)
		}
		// Each item shows its approval state: bob's approval, and what
		// the rules require (the merge request's own rule replaces the
		// project's), as the API tells it.
		st := apApprovals(t, many, alice.Token, 1)
		want := fmt.Sprintf("✓ %d/%d<", len(st.ApprovedBy), st.ApprovalsRequired)
		if len(st.ApprovedBy) != 1 || strings.Count(body20, want) != 20 || strings.Count(body20, `data-testid="pipeline-status"`) != 20 {
			t.Errorf("the list lacks %q or a pipeline on some items:\n%.3000s", want, body20)
		}
	})
}

// TestWeb_browserPipelineLive: a running pipeline's page, in chromium
// under the page's CSP, follows its jobs: when the runner finishes the
// job the badges of the job, its stage and the pipeline change without a
// reload, and the page stops following.
func TestWeb_browserPipelineLive(t *testing.T) {
	apitest.EachSerial(t, func(t *testing.T, s *apitest.Server) {
		alice := s.NewUser(t, "alice")
		p := newCIProject(t, s, alice, "live-pipeline", map[string]string{".gitlab-ci.yml": "only-job: {script: [make]}\n"})
		p.settle(t, 1)
		pl := p.pipelines(t, "source=push")[0]
		r := projectRunner(t, p, nil)
		job := r.take(t)

		bctx := newChromeTab(t, 90*time.Second)
		do, eval := chromeSteps(t, bctx)
		do("sign in", chromedp.Navigate(s.URL+"/users/sign_in"), chromedp.WaitVisible(chromedp.CSS("#user_login")),
			chromedp.SendKeys(chromedp.CSS("#user_login"), "alice"), chromedp.SendKeys(chromedp.CSS("#user_password"), webPassword),
			chromedp.Click(chromedp.CSS(`[data-testid="sign-in-button"]`)), chromedp.WaitVisible(chromedp.CSS(`[data-testid="user-menu"]`)))
		plPath := fmt.Sprintf("/%s/-/pipelines/%d", p.Path, pl.ID)
		do("open the running pipeline", chromedp.Navigate(s.URL+plPath), chromedp.WaitVisible(chromedp.CSS(`[data-testid="pipeline-graph"]`)),
			chromedp.Evaluate[chromedp.Void](`window.quarryMark = 'still-here'`))
		jobSel := `document.querySelector('[data-testid="job"][data-job="only-job"]')`
		if !eval(jobSel + `.dataset.status === 'running' && document.getElementById('pipeline-graph').dataset.following === 'true'`) {
			t.Fatalf("the page does not show the job running")
		}
		r.update(t, job, map[string]any{"state": "success"}).Want(t, http.StatusOK)
		if _, err := chromedp.Run(bctx, chromedp.Poll[bool](`document.getElementById('pipeline-graph').dataset.complete === 'true'`,
			chromedp.WithPollingMutation(), chromedp.WithPollingTimeout(30*time.Second))); err != nil {
			t.Fatalf("the page never saw the pipeline end: %v", err)
		}
		if !eval(jobSel + `.dataset.status === 'success' && ` + jobSel + `.querySelector('[data-testid="ci-status"]').dataset.status === 'success' &&
			document.querySelector('[data-testid="stage"]').dataset.status === 'success' &&
			document.querySelector('[data-testid="pipeline-heading"] [data-testid="ci-status"]').textContent.includes('passed') &&
			document.querySelector('[data-testid="pipeline-cancel"]') === null`) {
			t.Errorf("the finished pipeline's page still shows it running")
		}
		if !eval(`window.quarryMark === 'still-here'`) {
			t.Errorf("the page reloaded")
		}
	})
}

// TestWeb_mergeRequestListApprovals: each item of the merge request list
// shows the approvals given and required as the API's approval state
// tells them, whatever applies — code owner rules of the paths changed,
// the deprecated approvals_before_merge, a merge request's own rules
// replacing the project's, or none — read in one batch and from the
// cache.
func TestWeb_mergeRequestListApprovals(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		owner, docsLead, dev := s.NewUser(t, "owner"), s.NewUser(t, "docslead"), s.NewUser(t, "dev")
		p := newCIProject(t, s, owner, "mixed", nil)
		apMember(t, p, apDeveloper, docsLead, dev)
		p.commit(t, "main", map[string]string{
			".gitlab/CODEOWNERS": "[Documentation][2]\ndocs/ @docslead @dev\n\n[Code]\n*.go @owner\n",
			"docs/guide.md":      "guide\n",
		})
		s.Do(t, apitest.Request{Method: "PATCH", Path: fmt.Sprintf("/projects/%d/protected_branches/main", p.ID), Token: owner.Token,
			JSON: map[string]any{"code_owner_approval_required": true}}).Want(t, http.StatusOK)
		apDo(t, p, "POST", owner.Token, "/approvals", map[string]any{"approvals_before_merge": 3}).Want(t, http.StatusCreated)
		open := func(branch string, files map[string]string) mrJSON {
			p.commit(t, branch, files)
			return mrCreate(t, p, owner.Token, map[string]any{"source_branch": branch, "target_branch": "main", "title": "Change " + branch})
		}
		docs := open("docs", map[string]string{"docs/guide.md": "better\n"})
		code := open("code", map[string]string{"main.go": "package main\n"})
		own := open("own", map[string]string{"x.txt": "x\n"})
		plain := open("plain", map[string]string{"y.txt": "y\n"})
		apMRDo(t, p, "POST", owner.Token, own.IID, "/approval_rules", map[string]any{"name": "Own", "approvals_required": 1,
			"user_ids": []int64{dev.ID}}).Want(t, http.StatusCreated)
		apApprove(t, p, docsLead.Token, docs.IID, nil)
		apApprove(t, p, dev.Token, docs.IID, nil)
		apApprove(t, p, dev.Token, own.IID, nil)

		b := newBrowser(s)
		b.signIn(t, "owner", webPassword).want(t, http.StatusSeeOther)
		for _, round := range []string{"read", "cached"} {
			body := b.get(t, "/"+p.Path+"/-/merge_requests").want(t, http.StatusOK).Body
			items := strings.Split(body, `data-testid="mr-item"`)[1:]
			if len(items) != 4 {
				t.Fatalf("%s: %d items; want 4", round, len(items))
			}
			for _, mr := range []mrJSON{docs, code, own, plain} {
				st := apApprovals(t, p, owner.Token, mr.IID)
				want := fmt.Sprintf("✓ %d<", len(st.ApprovedBy))
				if st.ApprovalsRequired > 0 {
					want = fmt.Sprintf("✓ %d/%d<", len(st.ApprovedBy), st.ApprovalsRequired)
				}
				t.Logf("%s !%d: %s", round, mr.IID, want)
				found := false
				for _, it := range items {
					if strings.Contains(it, fmt.Sprintf("/-/merge_requests/%d\"", mr.IID)) {
						found = true
						if !strings.Contains(it, want) {
							t.Errorf("%s: !%d shows no %q (the API: %d approvals of %d required):\n%s", round, mr.IID, want,
								len(st.ApprovedBy), st.ApprovalsRequired, it)
						}
					}
				}
				if !found {
					t.Errorf("%s: !%d is not listed", round, mr.IID)
				}
			}
		}
	})
}

// TestWeb_jobsListQueries: the jobs list costs the same statements for a
// page of 1 job and a page of 30 (their pipelines, users, artifacts and
// the run rule of their refs each read once).
func TestWeb_jobsListQueries(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		alice := s.NewUser(t, "alice")
		one := newCIProject(t, s, alice, "one-job", map[string]string{".gitlab-ci.yml": "solo: {script: [make]}\n"})
		many := newCIProject(t, s, alice, "many-jobs", map[string]string{".gitlab-ci.yml": "multi: {parallel: 30, script: [make]}\n"})
		one.settle(t, 1)
		many.settle(t, 1)
		b := newBrowser(s)
		b.signIn(t, "alice", webPassword).want(t, http.StatusSeeOther)
		c := newWebPageCounter(t, s)
		body1, n1 := c.steady(t, b, "/"+one.Path+"/-/jobs")
		body30, n30 := c.steady(t, b, "/"+many.Path+"/-/jobs")
		if r1, r30 := strings.Count(body1, `data-testid="job-row"`), strings.Count(body30, `data-testid="job-row"`); r1 != 1 || r30 != 30 {
			t.Fatalf("pages of %d and %d jobs; want 1 and 30", r1, r30)
		}
		t.Logf("jobs list: %d statements for 1 job, %d for 30", n1, n30)
		if n1 != n30 || n1 == 0 {
			t.Errorf("statements: %d for a page of 1 job, %d for 30; want the same", n1, n30)
		}
	})
}
