package e2e

import (
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"quarry/internal/apitest"
)

// webGroup makes a group (a subgroup with parent) as token's user.
func webGroup(t testing.TB, s *apitest.Server, token, path, visibility string, parent any) map[string]any {
	t.Helper()
	in := map[string]any{"name": path, "path": path, "visibility": visibility, "description": "The <b>" + path + "</b> group"}
	if parent != nil {
		in["parent_id"] = parent
	}
	return s.Do(t, apitest.Request{Method: "POST", Path: "/groups", Token: token, JSON: in}).Want(t, http.StatusCreated).Object(t)
}

// TestWeb_groupsAndUsers: the explore groups list, a group's page at
// /groups/<path> and /<path> (nested too) with its subgroups and
// projects, a user's profile; private groups as the API decides.
func TestWeb_groupsAndUsers(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		alice, _ := s.NewUser(t, "alice"), s.NewUser(t, "bob")
		team := webGroup(t, s, alice.Token, "team", "public", nil)
		sub := webGroup(t, s, alice.Token, "sub", "public", team["id"])
		webGroup(t, s, alice.Token, "hidden", "private", nil)
		s.Do(t, apitest.Request{Method: "POST", Path: "/projects", Token: alice.Token, JSON: map[string]any{
			"name": "tool", "namespace_id": team["id"], "visibility": "public", "description": "A <i>tool</i>"}}).Want(t, http.StatusCreated)
		s.Do(t, apitest.Request{Method: "POST", Path: "/projects", Token: alice.Token, JSON: map[string]any{
			"name": "deep", "namespace_id": sub["id"], "visibility": "public"}}).Want(t, http.StatusCreated)
		webProject(t, s, alice.Token, "demo", "public")
		webProject(t, s, alice.Token, "secret", "private")
		s.Do(t, apitest.Request{Method: "PUT", Path: fmt.Sprintf("/users/%d", alice.ID), Token: s.RootToken,
			JSON: map[string]any{"bio": "I write <script>alert(1)</script> code"}}).Want(t, http.StatusOK)

		anon := newBrowser(s)
		ex := anon.get(t, "/explore/groups").want(t, http.StatusOK)
		wantSecurityHeaders(t, "/explore/groups", ex)
		ex.contains(t, `href="/groups/team"`, "The &lt;b&gt;team&lt;/b&gt; group").lacks(t, "hidden", "<b>team</b>")
		anon.get(t, "/explore/groups?filter=nothing-like-it").lacks(t, `href="/groups/team"`)
		anon.get(t, "/explore/groups?page=0").want(t, http.StatusBadRequest)
		for _, p := range []string{"/groups/team", "/team"} {
			anon.get(t, p).want(t, http.StatusOK).contains(t, `data-testid="group-name">team`, `href="/groups/team/sub"`,
				`href="/team/tool"`, "A &lt;i&gt;tool&lt;/i&gt;", "The &lt;b&gt;team&lt;/b&gt; group").lacks(t, "<i>tool</i>")
		}
		for _, p := range []string{"/groups/team/sub", "/team/sub"} {
			anon.get(t, p).want(t, http.StatusOK).contains(t, `data-testid="group-name">sub`, `href="/team/sub/deep"`, `href="/groups/team"`)
		}
		anon.get(t, "/team/tool").want(t, http.StatusOK).contains(t, `data-testid="project-name">tool`)

		prof := anon.get(t, "/alice").want(t, http.StatusOK)
		prof.contains(t, `data-testid="user-name">Alice<`, "@alice", "I write &lt;script&gt;alert(1)&lt;/script&gt; code", `href="/alice/demo"`).
			lacks(t, "alert(1)</script>", `href="/alice/secret"`)
		anon.get(t, "/nobody-at-all").want(t, http.StatusFound)

		// A private group: sign-in for the anonymous, 404 for an outsider,
		// the page for a member.
		r := anon.get(t, "/groups/hidden").want(t, http.StatusFound)
		if !strings.HasPrefix(r.Header.Get("Location"), "/users/sign_in?redirect_to=") {
			t.Errorf("Location %q", r.Header.Get("Location"))
		}
		anon.get(t, "/hidden").want(t, http.StatusFound)
		bob := newBrowser(s)
		bob.signIn(t, "bob", webPassword).want(t, http.StatusSeeOther)
		bob.get(t, "/groups/hidden").want(t, http.StatusNotFound)
		bob.get(t, "/hidden").want(t, http.StatusNotFound)
		bob.get(t, "/explore/groups").lacks(t, "hidden")
		ab := newBrowser(s)
		ab.signIn(t, "alice", webPassword).want(t, http.StatusSeeOther)
		ab.get(t, "/groups/hidden").want(t, http.StatusOK)
		ab.get(t, "/explore/groups").contains(t, `href="/groups/hidden"`)
		ab.get(t, "/alice").contains(t, `href="/alice/secret"`)

		// A private profile shows who, not what.
		s.Do(t, apitest.Request{Method: "PUT", Path: fmt.Sprintf("/users/%d", alice.ID), Token: s.RootToken,
			JSON: map[string]any{"private_profile": true}}).Want(t, http.StatusOK)
		for _, v := range []*browser{anon, bob} {
			v.get(t, "/alice").want(t, http.StatusOK).contains(t, `data-testid="user-name">Alice<`, `data-testid="private-profile"`).
				lacks(t, `href="/alice/demo"`, "I write")
		}
		ab.get(t, "/alice").want(t, http.StatusOK).contains(t, `href="/alice/demo"`, "I write").lacks(t, `data-testid="private-profile"`)
	})
}

// webHistory adds to webProject's repository: a commit changing main.go
// with a hostile message, a large file, a branch and an annotated tag
// with hostile names; it returns the changing commit's id.
func webHistory(t testing.TB, s *apitest.Server, token string, id any) string {
	t.Helper()
	commit := func(branch, msg string, actions ...map[string]any) string {
		t.Helper()
		return s.Do(t, apitest.Request{Method: "POST", Path: fmt.Sprintf("/projects/%v/repository/commits", id), Token: token,
			JSON: map[string]any{"branch": branch, "commit_message": msg, "actions": actions}}).Want(t, http.StatusCreated).Object(t)["id"].(string)
	}
	sha := commit("main", "Say <script>alert('msg')</script> louder\n\nThe body <b>explains</b> why.",
		map[string]any{"action": "update", "file_path": "main.go",
			"content": "package main\n\nimport \"fmt\"\n\nfunc main() {\n\tfmt.Println(\"HI <i>\")\n}\n"})
	var big strings.Builder
	for i := range 600 {
		fmt.Fprintf(&big, "line %d\n", i)
	}
	commit("main", "Add a large file", map[string]any{"action": "create", "file_path": "big.txt", "content": big.String()})
	s.Do(t, apitest.Request{Method: "POST", Path: fmt.Sprintf("/projects/%v/repository/branches?branch=%s&ref=main", id,
		url.QueryEscape(`feat/<i>x</i>&"y"`)), Token: token}).Want(t, http.StatusCreated)
	commit(`feat/<i>x</i>&"y"`, "Feature work", map[string]any{"action": "create", "file_path": "feature.txt", "content": "new <u>\n"})
	s.Do(t, apitest.Request{Method: "POST", Path: fmt.Sprintf("/projects/%v/repository/tags", id), Token: token,
		JSON: map[string]any{"tag_name": "v1.0", "ref": "main", "message": "Release <b>one</b>"}}).Want(t, http.StatusCreated)
	return sha
}

// TestWeb_history: a project's history, a commit with its diff (inline
// and side by side, large files collapsed), branches, tags, compare and
// blame, everything the repository names escaped.
func TestWeb_history(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		alice := s.NewUser(t, "alice")
		p := webProject(t, s, alice.Token, "demo", "public")
		sha := webHistory(t, s, alice.Token, p["id"])
		b := newBrowser(s)
		short := sha[:8]
		branch := `feat/<i>x</i>&"y"`
		hostile := []string{"<script>alert('msg')", "<b>explains</b>", "<i>x</i>", "<b>one</b>", "<u>", "HI <i>"}

		hist := b.get(t, "/alice/demo/-/commits/main").want(t, http.StatusOK)
		wantSecurityHeaders(t, "commits", hist)
		hist.contains(t, "Say &lt;script&gt;alert(&#39;msg&#39;)&lt;/script&gt; louder", `href="/alice/demo/-/commit/`+sha+`"`,
			">"+short+"<", `data-testid="commit-author">Alice<`, "Add files &lt;em&gt;now&lt;/em&gt;", "Add a large file").lacks(t, hostile...)
		b.get(t, "/alice/demo/-/commits/main/main.go").want(t, http.StatusOK).contains(t, "louder", "Add files").lacks(t, "Add a large file")
		b.get(t, "/alice/demo/-/commits/main/docs").want(t, http.StatusOK).contains(t, "Add files").lacks(t, "louder")
		b.get(t, "/alice/demo/-/commits/"+escapeSegments(branch)).want(t, http.StatusOK).contains(t, "Feature work", "louder")
		b.get(t, "/alice/demo/-/commits/main?page=2").want(t, http.StatusOK).contains(t, "No commits to show")
		b.get(t, "/alice/demo/-/commits/main?page=x").want(t, http.StatusBadRequest)
		b.get(t, "/alice/demo/-/commits/no-such-ref").want(t, http.StatusNotFound)

		c := b.get(t, "/alice/demo/-/commit/"+sha).want(t, http.StatusOK)
		c.contains(t, `data-testid="commit-title">Say &lt;script&gt;`, "The body &lt;b&gt;explains&lt;/b&gt; why.", "<code data-testid=\"commit-id\">"+sha,
			`data-testid="diff-file-name">main.go<`, `class="line del">	fmt.Println(&#34;hi &lt;b&gt;&#34;)<`,
			`class="line add">	fmt.Println(&#34;HI &lt;i&gt;&#34;)<`, `class="diff inline"`, `data-testid="parents">Parent`,
			`<details class="diff-file" id="diff-0" open`, "+1", "−1").lacks(t, hostile...)
		b.get(t, "/alice/demo/-/commit/"+sha+"?view=parallel").want(t, http.StatusOK).
			contains(t, `class="diff parallel"`, `<td class="line del">	fmt.Println(&#34;hi &lt;b&gt;&#34;)</td><td class="num">6</td><td class="line add">`).lacks(t, hostile...)
		m := regexp.MustCompile(`href="([^"]+)" data-testid="commit-title">Add a large file<`).FindStringSubmatch(b.get(t, "/alice/demo/-/commits/main").Body)
		if m == nil {
			t.Fatalf("no large file commit in the history")
		}
		bigURL := m[1]
		b.get(t, bigURL).want(t, http.StatusOK).contains(t, `data-testid="collapsed"`, `<details class="diff-file" id="diff-0" data-testid`, "line 599", "+600")
		m = regexp.MustCompile(`href="([^"]+)" data-testid="commit-title">Add files &lt;em&gt;now&lt;/em&gt;<`).FindStringSubmatch(b.get(t, "/alice/demo/-/commits/main").Body)
		if m == nil {
			t.Fatalf("no first commit in the history")
		}
		b.get(t, m[1]).want(t, http.StatusOK).contains(t, `data-testid="diff-file-name">&lt;img src=x onerror=alert(1)&gt;.txt<`,
			`data-testid="diff-file-name">data.bin<`, "Binary file.", `data-testid="commit-title">Add files &lt;em&gt;now&lt;/em&gt;<`).
			lacks(t, "<img src=x", "<em>now")
		b.get(t, "/alice/demo/-/commit/0000000000000000000000000000000000000000").want(t, http.StatusNotFound)
		b.get(t, "/alice/demo/-/commit/--help").want(t, http.StatusNotFound)

		br := b.get(t, "/alice/demo/-/branches").want(t, http.StatusOK)
		br.contains(t, `data-testid="branch-name">main<`, `data-testid="default-badge"`, `data-testid="protected-badge"`,
			"feat/&lt;i&gt;x&lt;/i&gt;&amp;&#34;y&#34;", `href="/alice/demo/-/tree/feat/%3Ci%3Ex%3C/i%3E&amp;%22y%22"`,
			`href="/alice/demo/-/compare/main...feat/%3Ci%3Ex%3C/i%3E&amp;%22y%22"`, "Feature work").lacks(t, hostile...)
		b.get(t, "/alice/demo/-/branches?search=feat").contains(t, "Feature work").lacks(t, `data-testid="branch-name">main<`)

		b.get(t, "/alice/demo/-/tags").want(t, http.StatusOK).contains(t, `data-testid="tag-name">v1.0<`, "Release &lt;b&gt;one&lt;/b&gt;",
			`href="/alice/demo/-/commit/`).lacks(t, hostile...)

		cmp := b.get(t, "/alice/demo/-/compare/main..."+escapeSegments(branch)).want(t, http.StatusOK)
		cmp.contains(t, "Feature work", `data-testid="diff-file-name">feature.txt<`, `class="line add">new &lt;u&gt;<`, `<span class="badge">new</span>`).
			lacks(t, append([]string{"louder"}, hostile...)...)
		b.get(t, "/alice/demo/-/compare/main..."+escapeSegments(branch)+"?view=parallel").want(t, http.StatusOK).contains(t, `class="diff parallel"`)
		b.get(t, "/alice/demo/-/compare/main...main").want(t, http.StatusOK).contains(t, `data-testid="same-ref"`)
		b.get(t, "/alice/demo/-/compare/main...no-such-ref").want(t, http.StatusNotFound)
		b.get(t, "/alice/demo/-/compare/main").want(t, http.StatusNotFound)
		b.get(t, "/alice/demo/-/compare").want(t, http.StatusOK).contains(t, `name="from" value="main"`)
		if r := b.get(t, "/alice/demo/-/compare?from=main&to=v1.0").want(t, http.StatusFound); r.Header.Get("Location") != "/alice/demo/-/compare/main...v1.0" {
			t.Errorf("compare form: Location %q", r.Header.Get("Location"))
		}

		bl := b.get(t, "/alice/demo/-/blame/main/main.go").want(t, http.StatusOK)
		bl.contains(t, `data-testid="blame-commit"`, `href="/alice/demo/-/commit/`+sha+`"`, `id="L6"`,
			`<td class="line">	fmt.Println(&#34;HI &lt;i&gt;&#34;)</td>`, "Say &lt;script&gt;", "Add files &lt;em&gt;now&lt;/em&gt;").lacks(t, hostile...)
		b.get(t, "/alice/demo/-/blame/main/nothing.go").want(t, http.StatusNotFound)
		b.get(t, "/alice/demo/-/blame/main/data.bin").want(t, http.StatusOK).contains(t, `data-testid="binary"`).lacks(t, `data-testid="blame-commit"`)
		b.get(t, "/alice/demo/-/blame/main/"+url.PathEscape("<img src=x onerror=alert(1)>.txt")).want(t, http.StatusOK).
			contains(t, "&lt;img src=x onerror=alert(1)&gt;.txt").lacks(t, "<img src=x")
		b.get(t, "/alice/demo").contains(t, `href="/alice/demo/-/commits/main"`, `href="/alice/demo/-/branches"`)
	})
}

// escapeSegments escapes each segment of a ref or path for a URL.
func escapeSegments(p string) string {
	segs := strings.Split(p, "/")
	for i, s := range segs {
		segs[i] = url.PathEscape(s)
	}
	return strings.Join(segs, "/")
}

// TestWeb_historyVisibility: the history pages of a private project are
// a sign-in for the anonymous and a 404 for an outsider.
func TestWeb_historyVisibility(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		alice, _ := s.NewUser(t, "alice"), s.NewUser(t, "bob")
		p := webProject(t, s, alice.Token, "secret", "private")
		sha := webHistory(t, s, alice.Token, p["id"])
		paths := []string{"/alice/secret/-/commits/main", "/alice/secret/-/commits/main/main.go", "/alice/secret/-/commit/" + sha,
			"/alice/secret/-/branches", "/alice/secret/-/tags", "/alice/secret/-/compare/v1.0...main", "/alice/secret/-/compare",
			"/alice/secret/-/blame/main/main.go"}
		anon, bob, ab := newBrowser(s), newBrowser(s), newBrowser(s)
		bob.signIn(t, "bob", webPassword).want(t, http.StatusSeeOther)
		ab.signIn(t, "alice", webPassword).want(t, http.StatusSeeOther)
		for _, path := range paths {
			r := anon.get(t, path).want(t, http.StatusFound)
			if want := "/users/sign_in?redirect_to=" + url.QueryEscape(path); r.Header.Get("Location") != want {
				t.Errorf("%s: Location %q; want %q", path, r.Header.Get("Location"), want)
			}
			bob.get(t, path).want(t, http.StatusNotFound).lacks(t, "louder")
			ab.get(t, path).want(t, http.StatusOK)
		}
	})
}

// TestWeb_webURLs: the web_url the API gives a project, a group, a user,
// a commit and a merge request opens its page: 200 for a viewer the API would answer,
// a sign-in for the anonymous and 404 for a signed-in outsider.
func TestWeb_webURLs(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		alice, carol := s.NewUser(t, "alice"), s.NewUser(t, "carol")
		s.NewUser(t, "bob")
		s.Do(t, apitest.Request{Method: "POST", Path: "/users", Token: s.RootToken, JSON: map[string]any{
			"username": "admin1", "email": "admin1@example.com", "name": "Admin", "password": webPassword,
			"skip_confirmation": true, "admin": true}}).Want(t, http.StatusCreated)
		g := webGroup(t, s, alice.Token, "hidden", "private", nil)
		p := s.Do(t, apitest.Request{Method: "POST", Path: "/projects", Token: alice.Token, JSON: map[string]any{
			"name": "secret", "namespace_id": g["id"], "visibility": "private", "initialize_with_readme": true}}).Want(t, http.StatusCreated).Object(t)
		pub := webProject(t, s, alice.Token, "demo", "public")
		s.Do(t, apitest.Request{Method: "POST", Path: fmt.Sprintf("/users/%d/block", carol.ID), Token: s.RootToken}).Want(t, http.StatusCreated)

		webURL := func(path, token string) string {
			t.Helper()
			u, _ := s.Get(t, path, token).Want(t, http.StatusOK).Object(t)["web_url"].(string)
			if !strings.HasPrefix(u, s.URL+"/") {
				t.Fatalf("%s: web_url %q is not under %s", path, u, s.URL)
			}
			return strings.TrimPrefix(u, s.URL)
		}
		mrURL := func(id any) string {
			t.Helper()
			s.Do(t, apitest.Request{Method: "POST", Path: fmt.Sprintf("/projects/%v/repository/branches?branch=topic&ref=main", id),
				Token: alice.Token}).Want(t, http.StatusCreated)
			mr := s.Do(t, apitest.Request{Method: "POST", Path: fmt.Sprintf("/projects/%v/merge_requests", id), Token: alice.Token,
				JSON: map[string]any{"source_branch": "topic", "target_branch": "main", "title": "Topic"}}).Want(t, http.StatusCreated).Object(t)
			return webURL(fmt.Sprintf("/projects/%v/merge_requests/%v", id, mr["iid"]), alice.Token)
		}
		commitURL := func(id any) string {
			t.Helper()
			return webURL(fmt.Sprintf("/projects/%v/repository/commits/main", id), alice.Token)
		}
		anon, bob, ab, admin := newBrowser(s), newBrowser(s), newBrowser(s), newBrowser(s)
		bob.signIn(t, "bob", webPassword).want(t, http.StatusSeeOther)
		ab.signIn(t, "alice", webPassword).want(t, http.StatusSeeOther)
		admin.signIn(t, "admin1", webPassword).want(t, http.StatusSeeOther)

		// Public: anyone.
		for _, u := range []string{webURL(fmt.Sprintf("/projects/%v", pub["id"]), ""), webURL(fmt.Sprintf("/users/%d", alice.ID), alice.Token),
			commitURL(pub["id"]), mrURL(pub["id"])} {
			anon.get(t, u).want(t, http.StatusOK)
			bob.get(t, u).want(t, http.StatusOK)
		}
		// Private: the member (or an administrator) only.
		cases := []struct {
			url     string
			allowed *browser
			want    string
		}{
			{webURL(fmt.Sprintf("/projects/%v", p["id"]), alice.Token), ab, `data-testid="project-name">secret`},
			{webURL(fmt.Sprintf("/groups/%v", g["id"]), alice.Token), ab, `data-testid="group-name">hidden`},
			{commitURL(p["id"]), ab, `data-testid="commit-id"`},
			{mrURL(p["id"]), ab, `data-testid="mr-title">Topic<`},
			{webURL(fmt.Sprintf("/users/%d", carol.ID), s.RootToken), admin, `data-testid="user-name">Carol<`},
		}
		for _, c := range cases {
			c.allowed.get(t, c.url).want(t, http.StatusOK).contains(t, c.want)
			r := anon.get(t, c.url).want(t, http.StatusFound)
			if !strings.HasPrefix(r.Header.Get("Location"), "/users/sign_in?redirect_to=") {
				t.Errorf("%s: Location %q", c.url, r.Header.Get("Location"))
			}
			bob.get(t, c.url).want(t, http.StatusNotFound)
		}
		if !strings.HasPrefix(cases[2].url, "/hidden/secret/-/commit/") || cases[1].url != "/groups/hidden" || cases[4].url != "/carol" ||
			cases[3].url != "/hidden/secret/-/merge_requests/1" {
			t.Errorf("web URLs %+v", cases)
		}

		// A pipeline's and a job's web_url (no runner: the job waits).
		s.Do(t, apitest.Request{Method: "POST", Path: fmt.Sprintf("/projects/%v/repository/files/.gitlab-ci.yml", p["id"]), Token: alice.Token,
			JSON: map[string]any{"branch": "main", "content": "build: {script: [make]}\n", "commit_message": "CI"}}).Want(t, http.StatusCreated)
		var pls []struct {
			ID int64 `json:"id"`
		}
		eventually(t, "the push pipeline", func() bool {
			s.Get(t, fmt.Sprintf("/projects/%v/pipelines", p["id"]), alice.Token).Want(t, http.StatusOK).JSON(t, &pls)
			return len(pls) > 0
		})
		plURL := webURL(fmt.Sprintf("/projects/%v/pipelines/%d", p["id"], pls[0].ID), alice.Token)
		var jobs []map[string]any
		s.Get(t, fmt.Sprintf("/projects/%v/pipelines/%d/jobs", p["id"], pls[0].ID), alice.Token).Want(t, http.StatusOK).JSON(t, &jobs)
		if len(jobs) != 1 {
			t.Fatalf("jobs %v", jobs)
		}
		jobURL, _ := jobs[0]["web_url"].(string)
		jobURL = strings.TrimPrefix(jobURL, s.URL)
		for u, want := range map[string]string{plURL: `data-testid="pipeline-heading"`, jobURL: `data-testid="job-name">build<`} {
			ab.get(t, u).want(t, http.StatusOK).contains(t, want)
			admin.get(t, u).want(t, http.StatusOK)
			bob.get(t, u).want(t, http.StatusNotFound)
			if loc := anon.get(t, u).want(t, http.StatusFound).Header.Get("Location"); !strings.HasPrefix(loc, "/users/sign_in?redirect_to=") {
				t.Errorf("%s: Location %q", u, loc)
			}
		}
	})
}
