package e2e

import (
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"quarry/internal/apitest"
	"quarry/internal/web"
)

// The issue pages, driven as a browser would: the list (tabs with their
// counts, GitLab's filters, release_tag, pages), an issue, the new issue
// and edit forms, closing and reopening, each checked through the API;
// who sees what (private projects, confidential issues, the issues
// feature).

// webIssueFixture is a project "wi/app" with a repository: alice owns
// it, rita is a reporter, gus a guest, eve a stranger.
type webIssueFixture struct {
	s                     *apitest.Server
	alice, rita, gus, eve apitest.User
	id                    int64
	base                  string // "/wi/app"
}

func newWebIssueFixture(t *testing.T, s *apitest.Server, visibility string) webIssueFixture {
	t.Helper()
	f := webIssueFixture{s: s, alice: s.NewUser(t, "alice"), rita: s.NewUser(t, "rita"), gus: s.NewUser(t, "gus"), eve: s.NewUser(t, "eve"),
		base: "/wi/app"}
	var g, p struct{ ID int64 }
	s.Do(t, apitest.Request{Method: "POST", Path: "/groups", Token: f.alice.Token,
		JSON: map[string]any{"name": "wi", "path": "wi", "visibility": visibility}}).Want(t, http.StatusCreated).JSON(t, &g)
	s.Do(t, apitest.Request{Method: "POST", Path: "/projects", Token: f.alice.Token, JSON: map[string]any{"name": "app",
		"namespace_id": g.ID, "visibility": visibility, "initialize_with_readme": true}}).Want(t, http.StatusCreated).JSON(t, &p)
	f.id = p.ID
	for _, m := range []struct {
		u     apitest.User
		level int
	}{{f.rita, 20}, {f.gus, 10}} {
		s.Do(t, apitest.Request{Method: "POST", Path: fmt.Sprintf("/projects/%d/members", p.ID), Token: f.alice.Token,
			JSON: map[string]any{"user_id": m.u.ID, "access_level": m.level}}).Want(t, http.StatusCreated)
	}
	return f
}

// api calls the project's API path (after /projects/:id).
func (f webIssueFixture) api(t *testing.T, method, path, token string, body map[string]any) *apitest.Response {
	t.Helper()
	return f.s.Do(t, apitest.Request{Method: method, Path: fmt.Sprintf("/projects/%d%s", f.id, path), Token: token, JSON: body})
}

// issue opens an issue through the API and returns its iid.
func (f webIssueFixture) issue(t *testing.T, token string, body map[string]any) int64 {
	t.Helper()
	var got struct{ IID int64 }
	f.api(t, "POST", "/issues", token, body).Want(t, http.StatusCreated).JSON(t, &got)
	return got.IID
}

// apiIssue reads an issue through the API as alice.
func (f webIssueFixture) apiIssue(t *testing.T, iid int64) map[string]any {
	t.Helper()
	return f.api(t, "GET", fmt.Sprintf("/issues/%d", iid), f.alice.Token, nil).Want(t, http.StatusOK).Object(t)
}

// page is the web path of the project's issues (iid 0: the list) and
// what follows.
func (f webIssueFixture) page(iid int64, suffix string) string {
	if iid == 0 {
		return f.base + "/-/issues" + suffix
	}
	return fmt.Sprintf("%s/-/issues/%d%s", f.base, iid, suffix)
}

func (f webIssueFixture) signedIn(t *testing.T, user string) *browser {
	t.Helper()
	b := newBrowser(f.s)
	b.signIn(t, user, webPassword).want(t, http.StatusSeeOther)
	return b
}

// post sends a form to an issue path.
func (f webIssueFixture) post(t *testing.T, b *browser, path string, form url.Values) page {
	t.Helper()
	if form == nil {
		form = url.Values{}
	}
	return b.do(t, "POST", path, form, nil)
}

// done posts a form, wants the redirect to the issue and its flash
// message, and gives the issue's page.
func (f webIssueFixture) done(t *testing.T, b *browser, path string, form url.Values, iid int64, message string) page {
	t.Helper()
	r := f.post(t, b, path, form).want(t, http.StatusSeeOther)
	if loc := r.Header.Get("Location"); loc != f.page(iid, "") {
		t.Fatalf("POST %s: Location %q; want %q", path, loc, f.page(iid, ""))
	}
	var flash string
	for _, c := range (&http.Response{Header: r.Header}).Cookies() {
		if c.Name == "_quarry_flash" {
			flash = c.Name + "=" + c.Value
		}
	}
	if flash == "" {
		t.Fatalf("POST %s: no flash cookie", path)
	}
	return b.do(t, "GET", f.page(iid, ""), nil, map[string]string{"Cookie": web.SessionCookie + "=" + b.cookie + "; " + flash}).
		want(t, http.StatusOK).contains(t, `data-testid="flash">`+message+`<`)
}

// listIIDs are the iids of a list page, in order.
func listIIDs(p page) string {
	var out []string
	for _, m := range regexp.MustCompile(`href="[^"]*/-/issues/(\d+)" data-testid="issue-link"`).FindAllStringSubmatch(p.Body, -1) {
		out = append(out, m[1])
	}
	return strings.Join(out, ",")
}

// TestWeb_issueList: the tabs with their counts, each filter of GitLab's
// web list (labels, milestone, author, assignee, search, scope, sort,
// release_tag: the links a release hands out), pages of 20, bad
// parameters; confidential issues counted and listed only for those who
// see them.
func TestWeb_issueList(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		f := newWebIssueFixture(t, s, "public")
		var m1, m2 struct{ ID int64 }
		f.api(t, "POST", "/milestones", f.alice.Token, map[string]any{"title": "m1"}).Want(t, http.StatusCreated).JSON(t, &m1)
		f.api(t, "POST", "/milestones", f.alice.Token, map[string]any{"title": "m2"}).Want(t, http.StatusCreated).JSON(t, &m2)
		one := f.issue(t, f.alice.Token, map[string]any{"title": "First <b>bug</b>", "labels": "bug,<i>x</i>", "milestone_id": m1.ID,
			"assignee_ids": []int64{f.rita.ID}, "due_date": "2030-01-02"})
		two := f.issue(t, f.alice.Token, map[string]any{"title": "Second", "milestone_id": m1.ID, "description": "needle here"})
		f.api(t, "PUT", fmt.Sprintf("/issues/%d", two), f.alice.Token, map[string]any{"state_event": "close"}).Want(t, http.StatusOK)
		three := f.issue(t, f.alice.Token, map[string]any{"title": "Secret", "confidential": true, "milestone_id": m1.ID})
		four := f.issue(t, f.rita.Token, map[string]any{"title": "Another", "labels": "ui", "milestone_id": m2.ID})
		f.api(t, "POST", "/releases", f.alice.Token, map[string]any{"tag_name": "v1", "ref": "main", "milestones": []string{"m1"}}).
			Want(t, http.StatusCreated)
		_ = three

		anon, gus, rita := newBrowser(s), f.signedIn(t, "gus"), f.signedIn(t, "rita")
		list := anon.get(t, f.page(0, "")).want(t, http.StatusOK)
		wantSecurityHeaders(t, "issues", list)
		list.contains(t, `data-testid="issue-link">First &lt;b&gt;bug&lt;/b&gt;<`, `data-testid="issue-label">&lt;i&gt;x&lt;/i&gt;<`,
			`data-testid="issue-milestone">◷ m1<`, `data-testid="issue-due">due 2030-01-02<`, `title="Assigned to Rita">rita<`,
			`data-testid="issue-author">Alice<`, `aria-current="page" data-testid="state-opened"`,
			`data-testid="count-opened">2<`, `data-testid="count-closed">1<`, `data-testid="count-all">3<`,
			`href="`+f.base+`/-/issues" data-testid="issues-tab">Issues <span class="badge" data-testid="issues-count">2<`).
			lacks(t, "<b>bug</b>", "<i>x</i>", "Secret", `data-testid="new-issue"`)
		if got, want := listIIDs(list), fmt.Sprintf("%d,%d", four, one); got != want {
			t.Errorf("open issues %s; want %s", got, want)
		}
		// A guest sees no confidential issue; a reporter does, counted.
		gus.get(t, f.page(0, "?state=all")).want(t, http.StatusOK).lacks(t, "Secret").contains(t, `data-testid="count-all">3<`,
			`data-testid="new-issue"`)
		rita.get(t, f.page(0, "")).want(t, http.StatusOK).contains(t, `data-testid="issue-confidential">Confidential<`,
			`data-testid="count-opened">3<`, `data-testid="issues-count">3<`)

		for _, c := range []struct{ query, want string }{
			{"?state=closed", fmt.Sprint(two)},
			{"?state=all&sort=created_asc", fmt.Sprintf("%d,%d,%d", one, two, four)},
			{"?state=all&sort=title_asc", fmt.Sprintf("%d,%d,%d", four, one, two)},
			{"?label_name[]=bug", fmt.Sprint(one)},
			{"?label_name[]=bug&label_name[]=ui", ""},
			{"?labels=ui", fmt.Sprint(four)},
			{"?milestone_title=m2", fmt.Sprint(four)},
			{"?milestone_title=None", ""},
			{"?author_username=rita", fmt.Sprint(four)},
			{"?author_username=nobody", ""},
			{"?assignee_username=rita", fmt.Sprint(one)},
			{"?state=all&search=needle", fmt.Sprint(two)},
			{"?release_tag=v1&scope=all&state=opened", fmt.Sprint(one)},
			{"?release_tag=v1&scope=all&state=closed", fmt.Sprint(two)},
			{"?release_tag=v9&scope=all&state=all", ""},
			{"?release_tag=Any&state=all&sort=created_asc", fmt.Sprintf("%d,%d", one, two)},
			{"?release_tag=none&state=all&sort=created_asc", fmt.Sprint(four)},
			{"?label_name=bug,%3Ci%3Ex%3C/i%3E", fmt.Sprint(one)},
			{"?sort=nonsense", fmt.Sprintf("%d,%d", four, one)},
		} {
			p := anon.get(t, f.page(0, c.query)).want(t, http.StatusOK)
			if got := listIIDs(p); got != c.want {
				t.Errorf("%s: issues %q; want %q", c.query, got, c.want)
			}
		}
		// The tabs keep the filters and count what they keep.
		rel := anon.get(t, f.page(0, "?release_tag=v1&scope=all&state=opened")).want(t, http.StatusOK)
		rel.contains(t, `data-testid="count-opened">1<`, `data-testid="count-closed">1<`, `data-testid="issue-release-filter"`,
			`href="/wi/app/-/issues?release_tag=v1&amp;scope=all&amp;state=closed"`)
		// A scope of one's own: a signed-in viewer's.
		if got := listIIDs(rita.get(t, f.page(0, "?scope=created_by_me")).want(t, http.StatusOK)); got != fmt.Sprint(four) {
			t.Errorf("rita's issues %q", got)
		}
		if got := listIIDs(rita.get(t, f.page(0, "?scope=authored")).want(t, http.StatusOK)); got != fmt.Sprint(four) {
			t.Errorf("rita's issues (authored) %q", got)
		}
		if got := listIIDs(rita.get(t, f.page(0, "?scope=assigned_to_me")).want(t, http.StatusOK)); got != fmt.Sprint(one) {
			t.Errorf("issues assigned to rita %q", got)
		}
		r := anon.get(t, f.page(0, "?scope=created_by_me")).want(t, http.StatusFound)
		if !strings.HasPrefix(r.Header.Get("Location"), "/users/sign_in?redirect_to=") {
			t.Errorf("anonymous created_by_me: Location %q", r.Header.Get("Location"))
		}

		// The release's links are these pages.
		rv := s.Get(t, fmt.Sprintf("/projects/%d/releases/v1", f.id), f.alice.Token).Want(t, http.StatusOK).Object(t)
		links := rv["_links"].(map[string]any)
		for k, want := range map[string]string{"opened_issues_url": fmt.Sprint(one), "closed_issues_url": fmt.Sprint(two)} {
			u := regexp.MustCompile(`^https?://[^/]+`).ReplaceAllString(links[k].(string), "")
			if got := listIIDs(anon.get(t, u).want(t, http.StatusOK)); got != want {
				t.Errorf("%s %s: issues %q; want %q", k, u, got, want)
			}
		}

		// Bad parameters are a 400 page.
		for _, q := range []string{"?state=nope", "?scope=everything", "?page=0", "?page=x", "?search=" + strings.Repeat("a", 2000),
			manyLabels(60), "?search=%ff"} {
			if r := anon.get(t, f.page(0, q)); r.Status != http.StatusBadRequest {
				t.Errorf("%.80s: %d; want 400", q, r.Status)
			}
		}

		// Pages of 20.
		for i := range 20 {
			f.issue(t, f.alice.Token, map[string]any{"title": fmt.Sprintf("Bulk %02d", i)})
		}
		p1 := anon.get(t, f.page(0, "")).want(t, http.StatusOK)
		if n := strings.Count(p1.Body, `data-testid="issue-item"`); n != 20 {
			t.Errorf("page 1 has %d issues; want 20", n)
		}
		p1.contains(t, `href="/wi/app/-/issues?page=2" rel="next"`, `data-testid="count-opened">22<`)
		p2 := anon.get(t, f.page(0, "?page=2")).want(t, http.StatusOK)
		if got := listIIDs(p2); got != fmt.Sprintf("%d,%d", four, one) {
			t.Errorf("page 2: %q", got)
		}
		p2.contains(t, `rel="prev"`).lacks(t, `rel="next"`)
		anon.get(t, f.page(0, "?page=3")).want(t, http.StatusOK).contains(t, `data-testid="issue-empty"`)
	})
}

// manyLabels is a list query of n distinct labels.
func manyLabels(n int) string {
	ls := make([]string, n)
	for i := range ls {
		ls[i] = fmt.Sprintf("l%d", i)
	}
	return "?labels=" + strings.Join(ls, ",")
}

// TestWeb_issuePage: an issue's page shows its title (escaped), state,
// description as Markdown with its task list, author, labels, milestone,
// assignees, due date and confidential mark; the buttons show only to
// who may use them; its web_url opens it.
func TestWeb_issuePage(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		f := newWebIssueFixture(t, s, "public")
		var m struct{ ID int64 }
		f.api(t, "POST", "/milestones", f.alice.Token, map[string]any{"title": "Launch"}).Want(t, http.StatusCreated).JSON(t, &m)
		iid := f.issue(t, f.alice.Token, map[string]any{"title": "Fix <script>alert(1)</script>",
			"description": "Steps **bold**\n\n- [x] done\n- [ ] todo\n\n<script>alert('d')</script>\n", "labels": "bug",
			"milestone_id": m.ID, "assignee_ids": []int64{f.rita.ID}, "due_date": "2031-05-06", "confidential": true})
		rita, gus := f.signedIn(t, "rita"), f.signedIn(t, "gus")
		p := rita.get(t, f.page(iid, "")).want(t, http.StatusOK)
		wantSecurityHeaders(t, "issue", p)
		p.contains(t, `data-testid="issue-title">Fix &lt;script&gt;alert(1)&lt;/script&gt;<`, `data-testid="issue-state">Open<`,
			`data-testid="issue-confidential">Confidential<`, `data-testid="issue-author">Alice<`, "Steps <strong>bold</strong>",
			`type="checkbox"`, `checked=""`, `data-testid="issue-label">bug<`, `data-testid="issue-milestone">Launch<`,
			`data-testid="issue-assignees"><a href="/rita">Rita</a>`, `data-testid="issue-due">2031-05-06<`,
			`data-testid="close-issue"`, `data-testid="edit-issue"`).lacks(t, "<script>")
		// The guest does not see a confidential issue.
		gus.get(t, f.page(iid, "")).want(t, http.StatusNotFound)
		r := newBrowser(s).get(t, f.page(iid, "")).want(t, http.StatusFound)
		if !strings.HasPrefix(r.Header.Get("Location"), "/users/sign_in") {
			t.Errorf("anonymous on a confidential issue: Location %q", r.Header.Get("Location"))
		}
		// A public issue: read by all, buttons for who may.
		pub := f.issue(t, f.rita.Token, map[string]any{"title": "Public one"})
		gus.get(t, f.page(pub, "")).want(t, http.StatusOK).contains(t, `data-testid="issue-title">Public one<`).
			lacks(t, `data-testid="close-issue"`, `data-testid="edit-issue"`)
		newBrowser(s).get(t, f.page(pub, "")).want(t, http.StatusOK).lacks(t, `data-testid="issue-actions"`)
		f.signedIn(t, "alice").get(t, f.page(pub, "")).want(t, http.StatusOK).contains(t, `data-testid="close-issue"`)
		// A signed-in non-member opens issues of a public project: no
		// labels, milestone or assignees (the service drops them).
		f.signedIn(t, "eve").get(t, f.page(0, "/new")).want(t, http.StatusOK).
			contains(t, `data-testid="issue-confidential-input"`, `data-testid="issue-due-input"`).
			lacks(t, `data-testid="issue-labels-input"`, `data-testid="issue-assignees-input"`)
		// The web_url opens the page.
		u := regexp.MustCompile(`^https?://[^/]+`).ReplaceAllString(f.apiIssue(t, pub)["web_url"].(string), "")
		if u != f.page(pub, "") {
			t.Errorf("web_url path %q; want %q", u, f.page(pub, ""))
		}
		for _, bad := range []string{f.page(99, ""), f.page(0, "/0"), f.page(0, "/x"), f.page(pub, "/nope"), f.page(pub, "/close")} {
			gus.get(t, bad).want(t, http.StatusNotFound)
		}
	})
}

// TestWeb_issueForms: opening, editing, closing and reopening an issue
// through the forms, each seen through the API; GitLab's messages for
// bad input, the form again; 413 past the form's bound; a reporter's
// labels, confidentiality and due date, a guest's dropped; the author
// edits their own issue, another guest may not; a cross-site form is
// refused.
func TestWeb_issueForms(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		f := newWebIssueFixture(t, s, "private")
		gus, rita, alice := f.signedIn(t, "gus"), f.signedIn(t, "rita"), f.signedIn(t, "alice")

		// The new issue form: a member's (a guest's, a reporter's) sets
		// the labels, milestone and assignees; anyone's the
		// confidentiality and due date (the service's rule).
		for _, b := range []*browser{gus, rita} {
			b.get(t, f.page(0, "/new")).want(t, http.StatusOK).contains(t, `data-testid="issue-form"`, `action="/wi/app/-/issues"`,
				`data-testid="issue-labels-input"`, `data-testid="issue-milestone-input"`, `data-testid="issue-confidential-input"`,
				`data-testid="issue-due-input"`)
		}

		// A guest opens one; a label that does not exist is not made by
		// a guest (who does not manage labels).
		f.api(t, "POST", "/labels", f.alice.Token, map[string]any{"name": "existing", "color": "#ff0000"}).Want(t, http.StatusCreated)
		r := f.post(t, gus, f.page(0, ""), url.Values{"title": {"  From the web  "}, "description": {"- [ ] a task"},
			"labels": {"sneaky, existing"}, "metadata_shown": {"1"}}).want(t, http.StatusSeeOther)
		loc := r.Header.Get("Location")
		var iid int64
		if _, err := fmt.Sscanf(loc, "/wi/app/-/issues/%d", &iid); err != nil {
			t.Fatalf("Location %q", loc)
		}
		got := f.apiIssue(t, iid)
		if got["title"] != "From the web" || got["description"] != "- [ ] a task" || got["confidential"] != false ||
			fmt.Sprint(got["labels"]) != "[existing]" || got["author"].(map[string]any)["username"] != "gus" {
			t.Errorf("the guest's issue: %v", got)
		}
		r = f.post(t, gus, f.page(0, ""), url.Values{"title": {"Private matter"}, "confidential": {"1"}, "due_date": {"2031-01-01"},
			"metadata_shown": {"1"}}).want(t, http.StatusSeeOther)
		var ciid int64
		if _, err := fmt.Sscanf(r.Header.Get("Location"), "/wi/app/-/issues/%d", &ciid); err != nil {
			t.Fatalf("Location %q", r.Header.Get("Location"))
		}
		if got := f.apiIssue(t, ciid); got["confidential"] != true || got["due_date"] != "2031-01-01" {
			t.Errorf("the guest's confidential issue: confidential %v, due %v", got["confidential"], got["due_date"])
		}
		// Its author reads it; the edit form of a guest has no metadata.
		gus.get(t, f.page(ciid, "")).want(t, http.StatusOK).contains(t, `data-testid="issue-confidential"`)
		gus.get(t, f.page(ciid, "/edit")).want(t, http.StatusOK).lacks(t, `data-testid="issue-labels-input"`,
			`data-testid="issue-confidential-input"`, `name="metadata_shown"`)
		// A reporter's metadata is kept.
		f.api(t, "POST", "/milestones", f.alice.Token, map[string]any{"title": "m1"}).Want(t, http.StatusCreated)
		r = f.post(t, rita, f.page(0, ""), url.Values{"title": {"Reporter's"}, "labels": {"a, b"}, "confidential": {"1"},
			"due_date": {"2032-02-03"}, "milestone_title": {"m1"}, "assignee_usernames": {"gus, @rita"}}).want(t, http.StatusSeeOther)
		var riid int64
		if _, err := fmt.Sscanf(r.Header.Get("Location"), "/wi/app/-/issues/%d", &riid); err != nil {
			t.Fatalf("Location %q", r.Header.Get("Location"))
		}
		got = f.apiIssue(t, riid)
		ms, _ := got["milestone"].(map[string]any)
		if fmt.Sprint(got["labels"]) != "[a b]" || got["confidential"] != true || got["due_date"] != "2032-02-03" || ms == nil || ms["title"] != "m1" {
			t.Errorf("the reporter's issue: labels %v, confidential %v, due %v, milestone %v", got["labels"], got["confidential"], got["due_date"], got["milestone"])
		}
		var assignees []string
		for _, a := range got["assignees"].([]any) {
			assignees = append(assignees, a.(map[string]any)["username"].(string))
		}
		if strings.Join(assignees, ",") != "gus,rita" {
			t.Errorf("the reporter's issue: assignees %v", assignees)
		}
		rita.get(t, f.page(riid, "/edit")).want(t, http.StatusOK).contains(t, `name="milestone_title" value="m1"`,
			`name="assignee_usernames" value="gus, rita"`, `name="labels" value="a, b"`, `value="2032-02-03"`)

		// Bad input: the form again with GitLab's message, nothing made.
		before := f.api(t, "GET", "/issues?state=all", f.alice.Token, nil).Want(t, http.StatusOK).Array(t)
		f.post(t, gus, f.page(0, ""), url.Values{"title": {"   "}, "description": {"kept <b>text</b>"}}).want(t, http.StatusBadRequest).
			contains(t, `data-testid="alert">Title can&#39;t be blank<`, "kept &lt;b&gt;text&lt;/b&gt;")
		f.post(t, gus, f.page(0, ""), url.Values{"title": {strings.Repeat("t", 256)}}).want(t, http.StatusBadRequest).
			contains(t, "Title is too long (maximum is 255 characters)")
		f.post(t, rita, f.page(0, ""), url.Values{"title": {"ok"}, "due_date": {"tomorrow"}}).want(t, http.StatusBadRequest).
			contains(t, "due_date is invalid")
		f.post(t, rita, f.page(0, ""), url.Values{"title": {"ok"}, "milestone_title": {"nope"}}).want(t, http.StatusBadRequest).
			contains(t, `data-testid="alert">Milestone does not exist<`, `value="nope"`)
		f.post(t, rita, f.page(0, ""), url.Values{"title": {"ok"}, "assignee_usernames": {"nobody"}}).want(t, http.StatusBadRequest).
			contains(t, `data-testid="alert">Assignees @nobody does not exist<`)
		f.post(t, gus, f.page(0, ""), url.Values{"title": {"big"}, "description": {strings.Repeat("x", 5<<20)}}).
			want(t, http.StatusRequestEntityTooLarge)
		after := f.api(t, "GET", "/issues?state=all", f.alice.Token, nil).Want(t, http.StatusOK).Array(t)
		if len(after) != len(before) {
			t.Errorf("bad forms made issues: %d before, %d after", len(before), len(after))
		}
		// A cross-site form is refused.
		gus.do(t, "POST", f.page(0, ""), url.Values{"title": {"x"}}, map[string]string{"Sec-Fetch-Site": "cross-site"}).
			want(t, http.StatusForbidden)

		// The author edits; another guest may not.
		gus.get(t, f.page(iid, "/edit")).want(t, http.StatusOK).contains(t, `value="From the web"`)
		f.done(t, gus, f.page(iid, ""), url.Values{"title": {"Edited"}, "description": {"New **words**"}}, iid, "The issue was updated.").
			contains(t, `data-testid="issue-title">Edited<`, "New <strong>words</strong>")
		if got := f.apiIssue(t, iid); got["title"] != "Edited" || got["description"] != "New **words**" {
			t.Errorf("after the edit form: %v %v", got["title"], got["description"])
		}
		f.post(t, gus, f.page(iid, ""), url.Values{"title": {""}}).want(t, http.StatusBadRequest).contains(t, "Title can&#39;t be blank")
		gil := s.NewUser(t, "gil")
		f.api(t, "POST", "/members", f.alice.Token, map[string]any{"user_id": gil.ID, "access_level": 10}).Want(t, http.StatusCreated)
		gilB := f.signedIn(t, "gil")
		gilB.get(t, f.page(iid, "/edit")).want(t, http.StatusNotFound)
		f.post(t, gilB, f.page(iid, ""), url.Values{"title": {"Hijack"}}).want(t, http.StatusNotFound)
		f.post(t, gilB, f.page(iid, "/close"), nil).want(t, http.StatusForbidden).contains(t, "You are not allowed to close this issue.")
		// A reporter edits metadata.
		f.done(t, rita, f.page(iid, ""), url.Values{"title": {"Edited"}, "labels": {"triaged"}, "metadata_shown": {"1"},
			"due_date": {"2033-01-01"}, "milestone_title": {"m1"}, "assignee_usernames": {"rita"}}, iid, "The issue was updated.").
			contains(t, `data-testid="issue-label">triaged<`, `data-testid="issue-milestone">m1<`, `data-testid="issue-assignees"><a href="/rita">Rita</a>`,
				`data-testid="issue-due">2033-01-01<`)
		// Cleared, the milestone and the assignees go.
		f.done(t, rita, f.page(iid, ""), url.Values{"metadata_shown": {"1"}, "labels": {"triaged"}}, iid, "The issue was updated.")
		if got := f.apiIssue(t, iid); got["milestone"] != nil || len(got["assignees"].([]any)) != 0 || got["due_date"] != nil {
			t.Errorf("after clearing: milestone %v, assignees %v, due %v", got["milestone"], got["assignees"], got["due_date"])
		}

		// Close and reopen.
		f.done(t, alice, f.page(iid, "/close"), nil, iid, "The issue was closed.").
			contains(t, `data-testid="issue-state">Closed<`, `data-testid="reopen-issue"`, `data-testid="issue-closed-by">Alice<`)
		if got := f.apiIssue(t, iid); got["state"] != "closed" {
			t.Errorf("after the close form: %v", got["state"])
		}
		alice.get(t, f.page(0, "?state=closed")).contains(t, `data-testid="issue-link">Edited<`)
		f.done(t, gus, f.page(iid, "/reopen"), nil, iid, "The issue was reopened.").contains(t, `data-testid="issue-state">Open<`)
		if got := f.apiIssue(t, iid); got["state"] != "opened" {
			t.Errorf("after the reopen form: %v", got["state"])
		}
		for _, bad := range []string{f.page(iid, "/frob"), f.page(0, "/x"), f.page(iid, "/close/x")} {
			f.post(t, alice, bad, nil).want(t, http.StatusNotFound)
		}
		f.post(t, alice, f.page(99, "/close"), nil).want(t, http.StatusNotFound)
	})
}

// TestWeb_issueVisibility: a private project's issue pages and forms are
// a sign-in for the anonymous and a 404 for a signed-in outsider; with
// the issues feature disabled they are a 404 for everyone, and the tab
// is gone; an archived project offers no new issue.
func TestWeb_issueVisibility(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		f := newWebIssueFixture(t, s, "private")
		iid := f.issue(t, f.alice.Token, map[string]any{"title": "Hidden issue"})
		anon, eve, gus := newBrowser(s), f.signedIn(t, "eve"), f.signedIn(t, "gus")
		pages := []string{f.page(0, ""), f.page(0, "?release_tag=v1&scope=all&state=opened"), f.page(0, "/new"), f.page(iid, ""), f.page(iid, "/edit")}
		for _, p := range pages {
			r := anon.get(t, p).want(t, http.StatusFound)
			if want := "/users/sign_in?redirect_to=" + url.QueryEscape(p); r.Header.Get("Location") != want {
				t.Errorf("%s: Location %q; want %q", p, r.Header.Get("Location"), want)
			}
			eve.get(t, p).want(t, http.StatusNotFound).lacks(t, "Hidden issue")
		}
		gus.get(t, f.page(iid, "")).want(t, http.StatusOK).contains(t, "Hidden issue")
		for _, p := range []string{f.page(0, ""), f.page(iid, ""), f.page(iid, "/close"), f.page(iid, "/reopen")} {
			r := f.post(t, anon, p, url.Values{"title": {"x"}}).want(t, http.StatusSeeOther)
			if !strings.HasPrefix(r.Header.Get("Location"), "/users/sign_in?redirect_to=") {
				t.Errorf("anonymous POST %s: Location %q", p, r.Header.Get("Location"))
			}
			f.post(t, eve, p, url.Values{"title": {"x"}}).want(t, http.StatusNotFound)
		}
		if got := f.apiIssue(t, iid); got["title"] != "Hidden issue" || got["state"] != "opened" {
			t.Errorf("forms of outsiders changed the issue: %v", got)
		}
		// The tab shows, with the count.
		f.signedIn(t, "alice").get(t, f.base).want(t, http.StatusOK).contains(t, `data-testid="issues-tab"`, `data-testid="issues-count">1<`)

		// Issues disabled: 404 for everyone, no tab.
		f.api(t, "PUT", "", f.alice.Token, map[string]any{"issues_access_level": "disabled"}).Want(t, http.StatusOK)
		alice := f.signedIn(t, "alice")
		for _, p := range []string{f.page(0, ""), f.page(0, "/new"), f.page(iid, ""), f.page(iid, "/edit")} {
			alice.get(t, p).want(t, http.StatusNotFound)
		}
		f.post(t, alice, f.page(0, ""), url.Values{"title": {"x"}}).want(t, http.StatusNotFound)
		f.post(t, alice, f.page(iid, "/close"), nil).want(t, http.StatusNotFound)
		alice.get(t, f.base).want(t, http.StatusOK).lacks(t, `data-testid="issues-tab"`)

		// Private issues: members only.
		s.Do(t, apitest.Request{Method: "PUT", Path: "/groups/wi", Token: f.alice.Token, JSON: map[string]any{"visibility": "public"}}).
			Want(t, http.StatusOK)
		f.api(t, "PUT", "", f.alice.Token, map[string]any{"issues_access_level": "private", "visibility": "public"}).Want(t, http.StatusOK)
		eve.get(t, f.base).want(t, http.StatusOK).lacks(t, `data-testid="issues-tab"`)
		eve.get(t, f.page(0, "")).want(t, http.StatusNotFound)
		gus.get(t, f.page(0, "")).want(t, http.StatusOK).contains(t, `data-testid="issues-tab"`)

		// Archived: read, but no new issue.
		f.api(t, "POST", "/archive", f.alice.Token, nil).Want(t, http.StatusCreated)
		alice.get(t, f.page(0, "")).want(t, http.StatusOK).lacks(t, `data-testid="new-issue"`)
		alice.get(t, f.page(0, "/new")).want(t, http.StatusNotFound)
		alice.get(t, f.page(iid, "")).want(t, http.StatusOK).lacks(t, `data-testid="close-issue"`)
	})
}

// TestWeb_issueListQueries: a page of 1 issue and a page of 20 (each
// with labels, a milestone, assignees) cost the same statements.
func TestWeb_issueListQueries(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		alice, bob, carol := s.NewUser(t, "alice"), s.NewUser(t, "bob"), s.NewUser(t, "carol")
		build := func(name string, n int) string {
			var p struct{ ID int64 }
			s.Do(t, apitest.Request{Method: "POST", Path: "/projects", Token: alice.Token,
				JSON: map[string]any{"name": name, "visibility": "private"}}).Want(t, http.StatusCreated).JSON(t, &p)
			for _, u := range []apitest.User{bob, carol} {
				s.Do(t, apitest.Request{Method: "POST", Path: fmt.Sprintf("/projects/%d/members", p.ID), Token: alice.Token,
					JSON: map[string]any{"user_id": u.ID, "access_level": 30}}).Want(t, http.StatusCreated)
			}
			var m struct{ ID int64 }
			s.Do(t, apitest.Request{Method: "POST", Path: fmt.Sprintf("/projects/%d/milestones", p.ID), Token: alice.Token,
				JSON: map[string]any{"title": "m"}}).Want(t, http.StatusCreated).JSON(t, &m)
			for i := range n {
				s.Do(t, apitest.Request{Method: "POST", Path: fmt.Sprintf("/projects/%d/issues", p.ID), Token: alice.Token,
					JSON: map[string]any{"title": fmt.Sprintf("Issue %d", i), "labels": "a,b", "milestone_id": m.ID,
						"assignee_ids": []int64{bob.ID, carol.ID}, "confidential": i%2 == 0}}).Want(t, http.StatusCreated)
			}
			return "/alice/" + name + "/-/issues"
		}
		one, many := build("one", 1), build("many", 20)
		c := newWebPageCounter(t, s)
		for _, who := range []string{"alice", "bob"} {
			b := newBrowser(s)
			b.signIn(t, who, webPassword).want(t, http.StatusSeeOther)
			c.get(t, b, one)
			c.get(t, b, many)
			body1, n1 := c.get(t, b, one)
			body20, n20 := c.get(t, b, many)
			if k1, k20 := strings.Count(body1, `data-testid="issue-item"`), strings.Count(body20, `data-testid="issue-item"`); k1 != 1 || k20 != 20 {
				t.Fatalf("%s: pages of %d and %d issues; want 1 and 20", who, k1, k20)
			}
			t.Logf("issue list as %s: %d statements for 1, %d for 20", who, n1, n20)
			if n1 != n20 || n1 == 0 {
				t.Errorf("%s: statements %d for a page of 1 and %d for 20; want the same", who, n1, n20)
			}
			// The filters cost the same statements whatever the page's size.
			const q = "?label_name[]=a&milestone_title=m&assignee_username=bob&author_username=alice&search=Issue&sort=title_asc&state=all"
			fb1, f1 := c.get(t, b, one+q)
			fb20, f20 := c.get(t, b, many+q)
			if k1, k20 := strings.Count(fb1, `data-testid="issue-item"`), strings.Count(fb20, `data-testid="issue-item"`); k1 != 1 || k20 != 20 {
				t.Fatalf("%s: filtered pages of %d and %d issues; want 1 and 20", who, k1, k20)
			}
			if f1 != f20 {
				t.Errorf("%s: filtered statements %d for 1 and %d for 20; want the same", who, f1, f20)
			}
		}
	})
}

// TestWeb_browserIssues: in chromium, open the issues list, open an
// issue, close it with its button (no script needed).
func TestWeb_browserIssues(t *testing.T) {
	apitest.EachSerial(t, func(t *testing.T, s *apitest.Server) {
		f := newWebIssueFixture(t, s, "public")
		iid := f.issue(t, f.alice.Token, map[string]any{"title": "Browser <b>issue</b>", "description": "- [x] one\n- [ ] two\n"})
		bctx := newChromeTab(t, 90*time.Second)
		do, eval := chromeSteps(t, bctx)
		shots, n := screenshotDir(t, s), 0
		shot := func(name string) {
			t.Helper()
			n++
			b, err := chromedp.Run(bctx, chromedp.FullScreenshot(100))
			if err != nil {
				t.Fatalf("screenshot %s: %v", name, err)
			}
			if err := os.WriteFile(filepath.Join(shots, fmt.Sprintf("issues-%02d-%s.png", n, name)), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		do("sign in", chromedp.Navigate(s.URL+"/users/sign_in"), chromedp.WaitVisible(chromedp.CSS("#user_login")),
			chromedp.SendKeys(chromedp.CSS("#user_login"), "alice"), chromedp.SendKeys(chromedp.CSS("#user_password"), webPassword),
			chromedp.Click(chromedp.CSS(`[data-testid="sign-in-button"]`)), chromedp.WaitVisible(chromedp.CSS(`[data-testid="user-menu"]`)))
		do("open the issues list", chromedp.Navigate(s.URL+f.base), chromedp.WaitVisible(chromedp.CSS(`[data-testid="issues-tab"]`)),
			chromedp.Click(chromedp.CSS(`[data-testid="issues-tab"]`)), chromedp.WaitVisible(chromedp.CSS(`[data-testid="issue-list"]`)))
		if !eval(`document.querySelector('[data-testid="issue-link"]').textContent === 'Browser <b>issue</b>'`) {
			t.Errorf("the list does not show the issue's title as text")
		}
		shot("list")
		do("open the issue", chromedp.Click(chromedp.CSS(`[data-testid="issue-link"]`)),
			chromedp.WaitVisible(chromedp.CSS(`[data-testid="issue-title"]`)))
		if !eval(`document.querySelectorAll('[data-testid="issue-description"] input[type=checkbox]').length === 2`) {
			t.Errorf("the task list is not shown")
		}
		shot("issue")
		do("close it", chromedp.Click(chromedp.CSS(`[data-testid="close-issue"]`)),
			chromedp.WaitVisible(chromedp.CSS(`[data-testid="reopen-issue"]`)))
		if !eval(`document.querySelector('[data-testid="issue-state"]').textContent === 'Closed' && document.querySelector('[data-testid="flash"]') !== null`) {
			t.Errorf("the issue page does not show it closed")
		}
		shot("closed")
		if got := f.apiIssue(t, iid); got["state"] != "closed" {
			t.Errorf("after the button: state %v", got["state"])
		}
	})
}
