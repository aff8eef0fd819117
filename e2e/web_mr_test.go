package e2e

import (
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"quarry/internal/apitest"
	"quarry/internal/storetest"
	"quarry/internal/web"
)

// The merge request pages, driven as a browser would: the list by state,
// the overview (status, approvals and their rules, pipeline), commits and
// changes, and the actions as forms, each checked through the API.

// webMRCI runs a pipeline for merge requests only.
const webMRCI = `
mr-check:
  script: ["true"]
  rules:
    - if: $CI_PIPELINE_SOURCE == "merge_request_event"
`

// webMRFixture is a project with a merge request: alice owns it, bob is a
// developer (the approver of its "Security" rule), dave a reporter.
type webMRFixture struct {
	s                *apitest.Server
	p                ciProject
	alice, bob, dave apitest.User
	mr               mrJSON
	pipeline         int64
	base             string // the project's web path
}

func newWebMRFixture(t *testing.T, s *apitest.Server, visibility string) webMRFixture {
	t.Helper()
	f := webMRFixture{s: s, alice: s.NewUser(t, "alice"), bob: s.NewUser(t, "bob"), dave: s.NewUser(t, "dave")}
	f.p = mrProject(t, s, f.alice, "demo", visibility)
	f.base = "/" + f.p.Path
	apMember(t, f.p, apDeveloper, f.bob)
	apMember(t, f.p, apReporter, f.dave)
	f.p.commit(t, "main", map[string]string{".gitlab-ci.yml": webMRCI})
	f.p.commit(t, "topic", map[string]string{"topic.go": "package topic\n\n// Hello <b>world</b>.\nfunc Hello() string { return \"hi\" }\n"})
	apCreateRule(t, f.p, map[string]any{"name": "Security <i>team</i>", "approvals_required": 1, "user_ids": []int64{f.bob.ID}})
	f.mr = mrCreate(t, f.p, f.alice.Token, map[string]any{"source_branch": "topic", "target_branch": "main",
		"title": "Add <script>alert('topic')</script> hello", "description": "Adds **hello**.\n\n<script>alert('desc')</script>\n",
		"assignee_ids": []int64{f.bob.ID}, "reviewer_ids": []int64{f.bob.ID}})
	var got struct {
		HeadPipeline *struct {
			ID int64 `json:"id"`
		} `json:"head_pipeline"`
	}
	s.Get(t, mrPath(f.p, f.mr.IID, ""), f.alice.Token).Want(t, http.StatusOK).JSON(t, &got)
	if got.HeadPipeline == nil {
		t.Fatalf("the merge request has no head pipeline")
	}
	f.pipeline = got.HeadPipeline.ID
	return f
}

// mrPage is the web path of the fixture's merge request iid (0: the
// list) and what follows it.
func (f webMRFixture) mrPage(iid int64, suffix string) string {
	if iid == 0 {
		return f.base + "/-/merge_requests" + suffix
	}
	return fmt.Sprintf("%s/-/merge_requests/%d%s", f.base, iid, suffix)
}

// signedIn is a browser signed in as user.
func (f webMRFixture) signedIn(t *testing.T, user string) *browser {
	t.Helper()
	b := newBrowser(f.s)
	b.signIn(t, user, webPassword).want(t, http.StatusSeeOther)
	return b
}

// post sends an action's form and returns the answer.
func (f webMRFixture) post(t *testing.T, b *browser, iid int64, action string, form url.Values) page {
	t.Helper()
	if form == nil {
		form = url.Values{}
	}
	return b.do(t, "POST", f.mrPage(iid, "/"+action), form, nil)
}

// act posts an action's form, wants the redirect back to the overview,
// and gives the overview the browser follows it to.
func (f webMRFixture) act(t *testing.T, b *browser, iid int64, action string, form url.Values) page {
	t.Helper()
	r := f.post(t, b, iid, action, form).want(t, http.StatusSeeOther)
	if loc := r.Header.Get("Location"); loc != f.mrPage(iid, "") {
		t.Fatalf("%s: Location %q; want %q", action, loc, f.mrPage(iid, ""))
	}
	// The message rides in a cookie of its own (the test browser keeps
	// only the session's): send it back as a browser would.
	var flash string
	for _, c := range (&http.Response{Header: r.Header}).Cookies() {
		if c.Name == "_quarry_flash" {
			flash = c.Name + "=" + c.Value
		}
	}
	if flash == "" {
		t.Fatalf("%s: no flash cookie", action)
	}
	next := b.do(t, "GET", f.mrPage(iid, ""), nil, map[string]string{"Cookie": web.SessionCookie + "=" + b.cookie + "; " + flash}).
		want(t, http.StatusOK)
	if !strings.Contains(next.Body, `data-testid="flash"`) {
		t.Errorf("%s: no flash message after the redirect", action)
	}
	// The message shows once: the page clears its cookie.
	if !strings.Contains(strings.Join(next.Header.Values("Set-Cookie"), "\n"), "_quarry_flash=; Path=/; Max-Age=0") {
		t.Errorf("%s: the flash cookie is not cleared: %q", action, next.Header.Values("Set-Cookie"))
	}
	b.get(t, f.mrPage(iid, "")).want(t, http.StatusOK).lacks(t, `data-testid="flash"`)
	return next
}

// TestWeb_mergeRequestPages: the list by state, the overview with its
// status, approvals, rules and pipeline, the commits and the changes;
// everything the merge request names escaped.
func TestWeb_mergeRequestPages(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		f := newWebMRFixture(t, s, "public")
		hostile := []string{"<script>alert('topic')", "<script>alert('desc')", "<i>team</i>", "<b>world</b>"}
		for _, b := range []*browser{newBrowser(s), f.signedIn(t, "dave")} {
			list := b.get(t, f.mrPage(0, "")).want(t, http.StatusOK)
			wantSecurityHeaders(t, "merge requests", list)
			list.contains(t, `data-testid="mr-link">Add &lt;script&gt;alert(&#39;topic&#39;)&lt;/script&gt; hello<`,
				`href="`+f.mrPage(f.mr.IID, "")+`"`, `data-testid="mr-author">Alice<`, "topic → main",
				`href="`+f.base+`/-/pipelines/`+strconv.FormatInt(f.pipeline, 10)+`"`, `data-testid="mr-approvals" title="Approvals">✓ 0/1<`,
				`aria-current="page" data-testid="state-opened"`).lacks(t, hostile...)
		}
		b := newBrowser(s)
		b.get(t, f.mrPage(0, "?state=merged")).want(t, http.StatusOK).contains(t, `data-testid="mr-empty"`).lacks(t, `data-testid="mr-item"`)
		b.get(t, f.mrPage(0, "?state=closed")).want(t, http.StatusOK).lacks(t, `data-testid="mr-item"`)
		b.get(t, f.mrPage(0, "?state=all")).want(t, http.StatusOK).contains(t, `data-testid="mr-item"`)
		b.get(t, f.mrPage(0, "?state=nope")).want(t, http.StatusBadRequest)
		b.get(t, f.mrPage(0, "?page=2")).want(t, http.StatusOK).lacks(t, `data-testid="mr-item"`)
		b.get(t, f.base).contains(t, `href="`+f.base+`/-/merge_requests" data-testid="mr-tab"`)

		ov := b.get(t, f.mrPage(f.mr.IID, "")).want(t, http.StatusOK)
		wantSecurityHeaders(t, "merge request", ov)
		ov.contains(t, `data-testid="mr-title">Add &lt;script&gt;`, `data-testid="mr-state">Open<`,
			`data-testid="mr-source">topic<`, `data-testid="mr-target">main<`, "Adds <strong>hello</strong>.",
			`data-testid="mr-assignees"><a href="/bob">Bob</a>`, `data-testid="mr-reviewers"><a href="/bob">Bob</a>`,
			`data-testid="pipeline-link">#`+strconv.FormatInt(f.pipeline, 10)+`<`, `data-status="not_approved"`,
			"Merge blocked: all required approvals must be given.", `data-testid="approvals-required">0 of 1 required approvals`,
			`data-testid="rule-name">Security &lt;i&gt;team&lt;/i&gt;<`, `data-testid="rule-count">0 of 1<`, "1 more needed",
			`data-testid="changes-count">1<`).lacks(t, append(hostile, `data-testid="approve-button"`, `data-testid="merge-form"`,
			`data-testid="close-button"`)...)

		cm := b.get(t, f.mrPage(f.mr.IID, "/commits")).want(t, http.StatusOK)
		cm.contains(t, `data-testid="commit-title">ci files<`, `href="`+f.base+`/-/commit/`+f.mr.SHA+`"`).lacks(t, hostile...)
		b.get(t, f.mrPage(f.mr.IID, "/commits?page=2")).want(t, http.StatusOK).contains(t, "No commits to show")

		df := b.get(t, f.mrPage(f.mr.IID, "/diffs")).want(t, http.StatusOK)
		df.contains(t, `data-testid="diff-file-name">topic.go<`, `class="line add">// Hello &lt;b&gt;world&lt;/b&gt;.<`,
			`class="diff inline"`, `data-testid="diff-toggle"`).lacks(t, hostile...)
		// Again, from the cache: the same page.
		if again := b.get(t, f.mrPage(f.mr.IID, "/diffs")).want(t, http.StatusOK); again.Body != df.Body {
			t.Errorf("the changes page differs when read again")
		}
		b.get(t, f.mrPage(f.mr.IID, "/diffs?view=parallel")).want(t, http.StatusOK).contains(t, `class="diff parallel"`, "topic.go")

		// A draft: blocked, and the page says why.
		mrUpdate(t, f.p, f.alice.Token, f.mr.IID, map[string]any{"title": "Draft: hello"})
		b.get(t, f.mrPage(f.mr.IID, "")).want(t, http.StatusOK).contains(t, `data-testid="mr-draft"`, `data-status="draft_status"`,
			"Merge blocked: merge request must be marked as ready. It&#39;s still marked as draft.")

		for _, p := range []string{f.mrPage(99, ""), f.mrPage(99, "/diffs"), f.mrPage(99, "/commits")} {
			f.signedIn(t, "dave").get(t, p).want(t, http.StatusNotFound)
		}
		for _, p := range []string{f.mrPage(0, "/0"), f.mrPage(0, "/x"), f.mrPage(0, "/-1"), f.mrPage(f.mr.IID, "/nope"),
			f.mrPage(f.mr.IID, "/approve")} {
			b.get(t, p).want(t, http.StatusNotFound)
		}
	})
}

// TestWeb_mergeRequestActions: approve, unapprove, merge (the target
// branch has the change, as the API reports), close, reopen and rebase
// through the forms, each with its message after the redirect; a form
// sent from another site is refused and changes nothing.
func TestWeb_mergeRequestActions(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		f := newWebMRFixture(t, s, "private")
		alice, bob := f.signedIn(t, "alice"), f.signedIn(t, "bob")
		iid := f.mr.IID

		// A cross-site form is refused.
		for _, h := range []map[string]string{{"Sec-Fetch-Site": "cross-site"}, {"Origin": "http://evil.example"}} {
			bob.do(t, "POST", f.mrPage(iid, "/approve"), url.Values{}, h).want(t, http.StatusForbidden).contains(t, "Cross-site request refused")
		}
		if st := apApprovals(t, f.p, f.alice.Token, iid); len(st.ApprovedBy) != 0 {
			t.Fatalf("a cross-site approval counted: %+v", st.ApprovedBy)
		}

		// Bob, the rule's approver, sees the button and approves.
		bob.get(t, f.mrPage(iid, "")).want(t, http.StatusOK).contains(t, `data-testid="approve-button"`, `name="sha" value="`+f.mr.SHA+`"`).
			lacks(t, `data-testid="merge-form"`)
		ov := f.act(t, bob, iid, "approve", url.Values{"sha": {f.mr.SHA}})
		ov.contains(t, "You approved this merge request.", `data-testid="approved-by">Approved by <a href="/bob">Bob</a>`,
			`data-testid="rule-count">1 of 1<`, `data-testid="unapprove-button"`).lacks(t, `data-testid="approve-button"`)
		mrWant(t, "approvers after the form", apApprovals(t, f.p, f.alice.Token, iid).approvers(), []int64{f.bob.ID})
		// Approving twice is the API's refusal (401), shown on the page.
		f.post(t, bob, iid, "approve", url.Values{"sha": {f.mr.SHA}}).want(t, http.StatusUnauthorized).contains(t, `data-testid="alert"`)
		// A stale head: the API's 409 and its message.
		f.act(t, bob, iid, "unapprove", nil).contains(t, "You revoked your approval.")
		mrWant(t, "approvers after unapproving", apApprovals(t, f.p, f.alice.Token, iid).approvers(), []int64{})
		f.post(t, bob, iid, "unapprove", nil).want(t, http.StatusNotFound).contains(t, "You have not approved this merge request.")
		f.post(t, bob, iid, "approve", url.Values{"sha": {strings.Repeat("a", 40)}}).want(t, http.StatusConflict).
			contains(t, "SHA does not match HEAD of source branch: "+f.mr.SHA)
		f.act(t, bob, iid, "approve", url.Values{"sha": {f.mr.SHA}})

		// Alice merges with the project's method.
		ov = alice.get(t, f.mrPage(iid, "")).want(t, http.StatusOK)
		ov.contains(t, `data-status="mergeable"`, "Ready to merge!", `data-testid="merge-button">Merge<`, `data-testid="close-button"`,
			`data-testid="rebase-button"`).lacks(t, `data-testid="merge-button" disabled`)
		ov = f.act(t, alice, iid, "merge", url.Values{"sha": {f.mr.SHA}, "merge_options": {"1"}, "should_remove_source_branch": {"true"}})
		ov.contains(t, "The merge request was merged.", `data-testid="mr-state">Merged<`, `data-testid="merge-commit"`).
			lacks(t, `data-testid="merge-form"`, `data-testid="approve-button"`, `data-testid="unapprove-button"`)
		got := mrGet(t, f.p, f.alice.Token, iid)
		if got.State != "merged" || got.MergeCommitSHA == "" || got.MergedBy == nil || got.MergedBy.ID != f.alice.ID {
			t.Fatalf("after the merge form: state %q, merge commit %q, merged by %+v", got.State, got.MergeCommitSHA, got.MergedBy)
		}
		var branch struct {
			Commit struct {
				ID string `json:"id"`
			} `json:"commit"`
		}
		s.Get(t, fmt.Sprintf("/projects/%d/repository/branches/main", f.p.ID), f.alice.Token).Want(t, http.StatusOK).JSON(t, &branch)
		if branch.Commit.ID != got.MergeCommitSHA {
			t.Errorf("main is at %s; want the merge commit %s", branch.Commit.ID, got.MergeCommitSHA)
		}
		s.Get(t, fmt.Sprintf("/projects/%d/repository/files/topic.go?ref=main", f.p.ID), f.alice.Token).Want(t, http.StatusOK)
		eventually(t, "the source branch removed", func() bool {
			return s.Get(t, fmt.Sprintf("/projects/%d/repository/branches/topic", f.p.ID), f.alice.Token).Status == http.StatusNotFound
		})
		alice.get(t, f.mrPage(0, "?state=merged")).want(t, http.StatusOK).contains(t, `data-testid="mr-item"`)
		f.post(t, alice, iid, "merge", url.Values{}).want(t, http.StatusMethodNotAllowed).contains(t, `data-testid="alert"`)

		// Close and reopen.
		f.p.commit(t, "second", map[string]string{"second.txt": "two\n"})
		second := mrCreate(t, f.p, f.alice.Token, map[string]any{"source_branch": "second", "target_branch": "main", "title": "Second"})
		f.act(t, alice, second.IID, "close", nil).contains(t, "The merge request was closed.", `data-testid="mr-state">Closed<`,
			`data-testid="reopen-button"`).lacks(t, `data-testid="close-button"`)
		if got := mrGet(t, f.p, f.alice.Token, second.IID); got.State != "closed" {
			t.Errorf("after the close form: state %q", got.State)
		}
		alice.get(t, f.mrPage(0, "?state=closed")).contains(t, `data-testid="mr-link">Second<`)
		alice.get(t, f.mrPage(0, "")).lacks(t, `data-testid="mr-link">Second<`)
		f.act(t, alice, second.IID, "reopen", nil).contains(t, "The merge request was reopened.", `data-testid="mr-state">Open<`)
		if got := mrGet(t, f.p, f.alice.Token, second.IID); got.State != "opened" {
			t.Errorf("after the reopen form: state %q", got.State)
		}

		// Rebase: main moved (the first merge), the source branch is
		// replayed onto it.
		var tip struct {
			Commit struct {
				ID string `json:"id"`
			} `json:"commit"`
		}
		s.Get(t, fmt.Sprintf("/projects/%d/repository/branches/main", f.p.ID), f.alice.Token).Want(t, http.StatusOK).JSON(t, &tip)
		f.act(t, alice, second.IID, "rebase", nil).contains(t, "The source branch was rebased onto the target branch.")
		var head struct {
			ID        string   `json:"id"`
			ParentIDs []string `json:"parent_ids"`
		}
		s.Get(t, fmt.Sprintf("/projects/%d/repository/commits/second", f.p.ID), f.alice.Token).Want(t, http.StatusOK).JSON(t, &head)
		if len(head.ParentIDs) != 1 || head.ParentIDs[0] != tip.Commit.ID {
			t.Errorf("after the rebase form, second's head %s has parents %v; want main's tip %s", head.ID, head.ParentIDs, tip.Commit.ID)
		}
		eventually(t, "the merge request follows the rebased branch", func() bool { return mrGet(t, f.p, f.alice.Token, second.IID).SHA == head.ID })
	})
}

// TestWeb_mergeRequestVisibility: a private project's merge request
// pages are a sign-in for the anonymous and a 404 for an outsider, its
// forms too; a reporter sees no action, and a forged form is refused
// with the status the API answers the same request.
func TestWeb_mergeRequestVisibility(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		f := newWebMRFixture(t, s, "private")
		s.NewUser(t, "eve")
		iid := f.mr.IID
		anon, eve, dave := newBrowser(s), f.signedIn(t, "eve"), f.signedIn(t, "dave")
		for _, p := range []string{f.mrPage(0, ""), f.mrPage(iid, ""), f.mrPage(iid, "/commits"), f.mrPage(iid, "/diffs")} {
			r := anon.get(t, p).want(t, http.StatusFound)
			if want := "/users/sign_in?redirect_to=" + url.QueryEscape(p); r.Header.Get("Location") != want {
				t.Errorf("%s: Location %q; want %q", p, r.Header.Get("Location"), want)
			}
			eve.get(t, p).want(t, http.StatusNotFound).lacks(t, "hello")
			dave.get(t, p).want(t, http.StatusOK)
		}
		for _, action := range []string{"approve", "unapprove", "merge", "close", "reopen", "rebase"} {
			r := f.post(t, anon, iid, action, nil).want(t, http.StatusFound)
			if want := "/users/sign_in?redirect_to=" + url.QueryEscape(f.mrPage(iid, "")); r.Header.Get("Location") != want {
				t.Errorf("anonymous %s: Location %q; want %q", action, r.Header.Get("Location"), want)
			}
			f.post(t, eve, iid, action, nil).want(t, http.StatusNotFound)
		}
		f.post(t, f.signedIn(t, "alice"), iid, "frobnicate", nil).want(t, http.StatusNotFound)

		// The reporter reads, and may do nothing.
		dave.get(t, f.mrPage(iid, "")).want(t, http.StatusOK).contains(t, `data-testid="mr-title"`).
			lacks(t, `data-testid="approve-button"`, `data-testid="merge-form"`, `data-testid="close-button"`, `data-testid="rebase-button"`)
		api := map[string]struct{ method, suffix string }{
			"approve": {"POST", "/approve"}, "merge": {"PUT", "/merge"}, "rebase": {"PUT", "/rebase"},
		}
		for action, call := range api {
			want := mrDo(t, f.p, call.method, f.dave.Token, iid, call.suffix, nil).Status
			if want < 400 {
				t.Fatalf("the API let a reporter %s (%d)", action, want)
			}
			f.post(t, dave, iid, action, nil).want(t, want).contains(t, `data-testid="alert"`)
		}
		want := mrDo(t, f.p, "PUT", f.dave.Token, iid, "", map[string]any{"state_event": "close"}).Status
		f.post(t, dave, iid, "close", nil).want(t, want).contains(t, "You are not allowed to close this merge request.")
		if got := mrGet(t, f.p, f.alice.Token, iid); got.State != "opened" {
			t.Errorf("a reporter's forms changed the merge request: state %q", got.State)
		}
		if st := apApprovals(t, f.p, f.alice.Token, iid); len(st.ApprovedBy) != 0 {
			t.Errorf("a reporter's form approved")
		}
		// The merge request's web_url opens the overview.
		u := regexp.MustCompile(`^https?://[^/]+`).ReplaceAllString(mrGet(t, f.p, f.alice.Token, iid).WebURL, "")
		if u != f.mrPage(iid, "") {
			t.Errorf("web_url path %q; want %q", u, f.mrPage(iid, ""))
		}
		dave.get(t, u).want(t, http.StatusOK)
	})
}

// BenchmarkWebMergeRequestChanges: the changes page of a merge request
// of 50 files (20 changed lines each), read by 32 clients at once on a
// public project (issue 28: ≥ 300 pages/s on SQLite). The rendered diff
// is kept between readers: no git process runs per page once warm.
func BenchmarkWebMergeRequestChanges(b *testing.B) {
	target := storetest.Target{Name: "sqlite"}
	if os.Getenv("QUARRY_BENCH_POSTGRES") != "" {
		target = storetest.Target{Name: "postgres", DatabaseURL: storetest.NewPostgresDatabase(&keepAlive{b})}
	}
	s := apitest.Start(&keepAlive{b}, target)
	owner := s.NewUser(b, "benchowner")
	var p struct {
		ID                int64  `json:"id"`
		PathWithNamespace string `json:"path_with_namespace"`
	}
	s.Do(b, apitest.Request{Method: "POST", Path: "/projects", Token: owner.Token, JSON: map[string]any{"name": "changes",
		"visibility": "public", "initialize_with_readme": true}}).Want(b, http.StatusCreated).JSON(b, &p)
	file := func(i int, tag string) string {
		var sb strings.Builder
		for l := range 40 {
			if l%2 == 0 {
				fmt.Fprintf(&sb, "line %d of file %d: %s <tag>\n", l, i, tag)
			} else {
				fmt.Fprintf(&sb, "line %d of file %d stays\n", l, i)
			}
		}
		return sb.String()
	}
	commit := func(branch, start, tag string) {
		var actions []map[string]any
		for i := range 50 {
			action := "update"
			if branch == "main" {
				action = "create"
			}
			actions = append(actions, map[string]any{"action": action, "file_path": fmt.Sprintf("src/file%02d.txt", i), "content": file(i, tag)})
		}
		body := map[string]any{"branch": branch, "commit_message": "files " + tag, "actions": actions}
		if start != "" {
			body["start_branch"] = start
		}
		s.Do(b, apitest.Request{Method: "POST", Path: fmt.Sprintf("/projects/%d/repository/commits", p.ID), Token: owner.Token,
			JSON: body}).Want(b, http.StatusCreated)
	}
	commit("main", "", "old")
	commit("topic", "main", "new")
	mr := map[string]any{}
	s.Do(b, apitest.Request{Method: "POST", Path: fmt.Sprintf("/projects/%d/merge_requests", p.ID), Token: owner.Token,
		JSON: map[string]any{"source_branch": "topic", "target_branch": "main", "title": "Fifty files"}}).Want(b, http.StatusCreated).JSON(b, &mr)
	page := fmt.Sprintf("%s/%s/-/merge_requests/%v/diffs", s.URL, p.PathWithNamespace, mr["iid"])
	get := func() string {
		req, _ := http.NewRequest("GET", page, nil)
		req.Header.Set("Accept", "text/html")
		resp, err := benchClient.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		defer resp.Body.Close()
		data, err := io.ReadAll(resp.Body)
		if err != nil || resp.StatusCode != http.StatusOK {
			b.Fatalf("GET %s: %d %v", page, resp.StatusCode, err)
		}
		return string(data)
	}
	if body := get(); strings.Count(body, `data-testid="diff-file"`) != 50 || !strings.Contains(body, "+20") {
		b.Fatalf("the changes page does not show the 50 files")
	}
	b.SetParallelism(16) // 16 × GOMAXPROCS (2) = 32 clients
	cpu := processCPU()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			req, _ := http.NewRequest("GET", page, nil)
			req.Header.Set("Accept", "text/html")
			resp, err := benchClient.Do(req)
			if err != nil {
				b.Fatal(err)
			}
			n, err := io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if err != nil || resp.StatusCode != http.StatusOK || n < 100<<10 {
				b.Fatalf("GET %s: %d, %d bytes, %v", page, resp.StatusCode, n, err)
			}
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "pages/s")
	b.ReportMetric(float64((processCPU()-cpu).Microseconds())/float64(b.N), "cpu-µs/op")
	b.ReportMetric(float64(len(get()))/1024, "page-KiB")
	b.StopTimer()
}

// TestWeb_mergeRequestFastForward: with the fast-forward merge method, a
// merge request behind its target shows why it is blocked and a disabled
// merge button; the rebase form makes it mergeable, and the merge form
// fast-forwards the target branch to the source's head.
func TestWeb_mergeRequestFastForward(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		f := newWebMRFixture(t, s, "public")
		mrSettings(t, f.p, map[string]any{"merge_method": "ff"})
		apDo(t, f.p, "DELETE", f.p.Token, "/approval_rules/"+strconv.FormatInt(apRulesOf(t, apDo(t, f.p, "GET", f.p.Token,
			"/approval_rules", nil).Want(t, http.StatusOK).Body, apProjectRuleKeys)[0].ID, 10), nil).Want(t, http.StatusNoContent)
		f.p.commit(t, "main", map[string]string{"other.txt": "main moved\n"})
		alice := f.signedIn(t, "alice")
		iid := f.mr.IID
		ov := alice.get(t, f.mrPage(iid, "")).want(t, http.StatusOK)
		ov.contains(t, `data-status="need_rebase"`, "Merge blocked: the source branch must be rebased onto the target branch.",
			`data-testid="merge-button" disabled>Fast-forward merge<`, `data-testid="rebase-button"`)
		// The API refuses the merge too; the form shows its refusal.
		want := mrDo(t, f.p, "PUT", f.alice.Token, iid, "/merge", nil).Status
		f.post(t, alice, iid, "merge", url.Values{}).want(t, want).contains(t, `data-testid="alert"`)
		f.act(t, alice, iid, "rebase", nil)
		var head string
		eventually(t, "the merge request follows the rebased branch", func() bool {
			head = mrGet(t, f.p, f.alice.Token, iid).SHA
			return head != f.mr.SHA
		})
		alice.get(t, f.mrPage(iid, "")).want(t, http.StatusOK).contains(t, `data-status="mergeable"`, `data-testid="merge-button">Fast-forward merge<`)
		f.act(t, alice, iid, "merge", url.Values{"sha": {head}}).contains(t, `data-testid="mr-state">Merged<`)
		var branch struct {
			Commit struct {
				ID string `json:"id"`
			} `json:"commit"`
		}
		s.Get(t, fmt.Sprintf("/projects/%d/repository/branches/main", f.p.ID), f.alice.Token).Want(t, http.StatusOK).JSON(t, &branch)
		if branch.Commit.ID != head {
			t.Errorf("main is at %s; want the fast-forwarded head %s", branch.Commit.ID, head)
		}
	})
}
