package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"quarry/internal/apitest"
	"quarry/internal/git/gitrepo"
)

// Wikis beyond wikis_api_test.go (which holds the shared helpers
// wikiOwners, setWikiLimits and wikiDir): page versions against the real
// history, the files behind formats, renames and deletes, pages pushed
// under other extensions, anonymous git access; the wiki feature levels
// and archiving through both the API and git; and the input edges of
// create, update and attach on a subgroup's wiki named by its full path.

// wikiClone clones the wiki at fullPath (the owner's full path plus
// ".wiki") into dir/name and returns the work tree; token "" clones
// anonymously.
func wikiClone(t *testing.T, s *apitest.Server, dir, fullPath, token, name string, args ...string) string {
	t.Helper()
	clone := append([]string{"clone", "-q"}, args...)
	if out, err := gitRun(dir, append(clone, cloneURL(s, fullPath, "any", token), name)...); err != nil {
		t.Fatalf("clone %s: %v\n%s", fullPath, err, out)
	}
	return filepath.Join(dir, name)
}

// gitOut runs git in dir and fails the test when it fails.
func gitOut(t *testing.T, dir string, args ...string) string {
	t.Helper()
	out, err := gitRun(dir, args...)
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return out
}

func TestWikis_historyVersionsAndFiles(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		owner, dev := s.NewUser(t, "owner"), s.NewUser(t, "dev")
		var p struct{ ID int64 }
		s.Do(t, apitest.Request{Method: "POST", Path: "/projects", Token: owner.Token,
			JSON: map[string]any{"name": "docs", "visibility": "public"}}).Want(t, 201).JSON(t, &p)
		s.Do(t, apitest.Request{Method: "POST", Path: "/projects/" + itoa(p.ID) + "/members", Token: owner.Token,
			JSON: map[string]any{"user_id": dev.ID, "access_level": 30}}).Want(t, 201)
		base := "/projects/owner%2Fdocs/wikis" // the project by its URL-encoded full path
		do := func(u apitest.User, method, path string, body map[string]any) *apitest.Response {
			return s.Do(t, apitest.Request{Method: method, Path: base + path, Token: u.Token, JSON: body})
		}

		// One commit per change, by its caller.
		do(dev, "POST", "", map[string]any{"title": "  Release   Notes ", "content": "v1"}).Want(t, 201).
			WantBody(t, `{"format":"markdown","slug":"Release-Notes","title":"Release Notes","content":"v1","encoding":"UTF-8"}`)
		do(owner, "PUT", "/release-notes", map[string]any{"content": "v2"}).Want(t, 200).
			WantBody(t, `{"format":"markdown","slug":"Release-Notes","title":"Release Notes","content":"v2","encoding":"UTF-8"}`)
		do(owner, "POST", "", map[string]any{"title": "Fmt", "content": "f"}).Want(t, 201)
		for _, f := range []string{"rdoc", "asciidoc", "org"} {
			do(owner, "PUT", "/Fmt", map[string]any{"format": f}).Want(t, 200).
				WantBody(t, `{"format":"`+f+`","slug":"Fmt","title":"Fmt","content":"f","encoding":"UTF-8"}`)
		}
		do(owner, "POST", "", map[string]any{"title": "Guide", "content": "g"}).Want(t, 201)
		do(dev, "POST", "", map[string]any{"title": "Guide/Intro", "content": "i"}).Want(t, 201)
		do(owner, "POST", "", map[string]any{"title": "a/b c", "content": "abc"}).Want(t, 201).
			WantBody(t, `{"format":"markdown","slug":"a/b-c","title":"b c","content":"abc","encoding":"UTF-8"}`)
		do(owner, "PUT", "/Guide", map[string]any{"title": "Handbook"}).Want(t, 200).
			WantBody(t, `{"format":"markdown","slug":"Handbook","title":"Handbook","content":"g","encoding":"UTF-8"}`)
		do(owner, "DELETE", "/a%2Fb-c", nil).Want(t, 204)
		// Deleting a page keeps the folder of pages below it.
		do(owner, "DELETE", "/Handbook", nil).Want(t, 204)
		s.Get(t, base, "").Want(t, 200).WantBody(t, `[`+
			`{"format":"org","slug":"Fmt","title":"Fmt"},`+
			`{"format":"markdown","slug":"Handbook/Intro","title":"Intro"},`+
			`{"format":"markdown","slug":"Release-Notes","title":"Release Notes"}]`)

		// Anybody clones a public project's wiki and sees each change as a
		// commit of its caller; renames are renames of the files, recorded in
		// the redirect file.
		work := t.TempDir()
		w := wikiClone(t, s, work, "owner/docs.wiki", "", "anon")
		if got := gitOut(t, w, "ls-tree", "-r", "--name-only", "HEAD"); got != ".service/redirects.yml\nFmt.org\nHandbook/Intro.md\nRelease-Notes.md\n" {
			t.Errorf("files:\n%s", got)
		}
		log := gitOut(t, w, "log", "-M", "--name-status", "--format=%an <%ae>|%s")
		want := `Owner <owner@example.com>|owner deleted page: Handbook

D	Handbook.md
Owner <owner@example.com>|owner deleted page: b c

D	a/b-c.md
Owner <owner@example.com>|owner updated page: Handbook

A	.service/redirects.yml
R100	Guide.md	Handbook.md
R100	Guide/Intro.md	Handbook/Intro.md
Owner <owner@example.com>|owner created page: a/b c

A	a/b-c.md
Dev <dev@example.com>|dev created page: Guide/Intro

A	Guide/Intro.md
Owner <owner@example.com>|owner created page: Guide

A	Guide.md
Owner <owner@example.com>|owner updated page: Fmt

R100	Fmt.asciidoc	Fmt.org
Owner <owner@example.com>|owner updated page: Fmt

R100	Fmt.rdoc	Fmt.asciidoc
Owner <owner@example.com>|owner updated page: Fmt

R100	Fmt.md	Fmt.rdoc
Owner <owner@example.com>|owner created page: Fmt

A	Fmt.md
Owner <owner@example.com>|owner updated page: Release Notes

M	Release-Notes.md
Dev <dev@example.com>|dev created page: Release Notes

A	Release-Notes.md
`
		if log != want {
			t.Errorf("history:\n%s\nwant:\n%s", log, want)
		}

		// version: any commit of the wiki, full or abbreviated; what is no
		// commit, or a commit without the page, is a missing page.
		commits := strings.Fields(gitOut(t, w, "log", "--reverse", "--format=%H"))
		first, second := commits[0], commits[1]
		v1 := `{"format":"markdown","slug":"Release-Notes","title":"Release Notes","content":"v1","encoding":"UTF-8"}`
		s.Get(t, base+"/Release-Notes?version="+first, "").Want(t, 200).WantBody(t, v1)
		s.Get(t, base+"/release%20notes?version="+first[:8], "").Want(t, 200).WantBody(t, v1)
		s.Get(t, base+"/Release-Notes?version="+second, "").Want(t, 200).
			WantBody(t, `{"format":"markdown","slug":"Release-Notes","title":"Release Notes","content":"v2","encoding":"UTF-8"}`)
		s.Get(t, base+"/Release-Notes?version="+first+"&render_html=true", "").Want(t, 200).
			WantBody(t, `{"format":"markdown","slug":"Release-Notes","title":"Release Notes","content":"<p>v1</p>\n","encoding":"UTF-8"}`)
		s.Get(t, base+"/Release-Notes", "").Want(t, 200).
			WantBody(t, `{"format":"markdown","slug":"Release-Notes","title":"Release Notes","content":"v2","encoding":"UTF-8"}`)
		// The deleted page is still there in the commits before its removal.
		s.Get(t, base+"/a%2Fb-c?version="+commits[len(commits)-3], "").Want(t, 200).
			WantBody(t, `{"format":"markdown","slug":"a/b-c","title":"b c","content":"abc","encoding":"UTF-8"}`)
		blob := strings.TrimSpace(gitOut(t, w, "rev-parse", first+":Release-Notes.md"))
		tree := strings.TrimSpace(gitOut(t, w, "rev-parse", first+"^{tree}"))
		for _, missing := range []string{"/Fmt?version=" + first, "/Release-Notes?version=" + blob, "/Release-Notes?version=" + tree,
			"/Release-Notes?version=main", "/Release-Notes?version=" + first + "%5E"} {
			s.Get(t, base+missing, "").Want(t, 404).WantBody(t, `{"message":"404 Wiki Page Not Found"}`)
		}

		// Anonymous users do not push; a developer's pushed pages are pages
		// whatever their recognised extension, other files are not.
		writeFile(t, filepath.Join(w, "x.md"), "x")
		gitOut(t, w, "add", ".")
		gitOut(t, w, "commit", "-q", "-m", "anonymous")
		if out, err := gitRun(w, "push", "origin", "HEAD"); err == nil {
			t.Errorf("anonymous push: %s", out)
		}
		d := wikiClone(t, s, work, "owner/docs.wiki", dev.Token, "dev")
		writeFile(t, filepath.Join(d, "Deep", "Pushed-Page.adoc"), "= pushed")
		writeFile(t, filepath.Join(d, "Shout.MARKDOWN"), "loud")
		writeFile(t, filepath.Join(d, "data.json"), "{}")
		writeFile(t, filepath.Join(d, "Deep", ".md"), "no name")
		gitOut(t, d, "add", ".")
		gitOut(t, d, "commit", "-q", "-m", "pushed pages")
		gitOut(t, d, "push", "-q", "origin", "HEAD")
		s.Get(t, base, dev.Token).Want(t, 200).WantBody(t, `[`+
			`{"format":"asciidoc","slug":"Deep/Pushed-Page","title":"Pushed Page"},`+
			`{"format":"org","slug":"Fmt","title":"Fmt"},`+
			`{"format":"markdown","slug":"Handbook/Intro","title":"Intro"},`+
			`{"format":"markdown","slug":"Release-Notes","title":"Release Notes"},`+
			`{"format":"markdown","slug":"Shout","title":"Shout"}]`)
		// New content keeps the file, whatever its extension.
		do(dev, "PUT", "/deep%2Fpushed%20page", map[string]any{"content": "= edited"}).Want(t, 200).
			WantBody(t, `{"format":"asciidoc","slug":"Deep/Pushed-Page","title":"Pushed Page","content":"= edited","encoding":"UTF-8"}`)
		do(dev, "PUT", "/Shout", map[string]any{"content": "louder", "format": "markdown"}).Want(t, 200)
		gitOut(t, d, "pull", "-q", "origin", "main")
		if got := gitOut(t, d, "show", "--name-status", "--format=%s", "HEAD~1", "HEAD"); got !=
			"dev updated page: Pushed Page\n\nM\tDeep/Pushed-Page.adoc\ndev updated page: Shout\n\nM\tShout.MARKDOWN\n" {
			t.Errorf("edits of pushed pages:\n%s", got)
		}
	})
}

func TestWikis_featureLevelsAndArchive(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		owner, guest, reporter, stranger := s.NewUser(t, "owner"), s.NewUser(t, "guest"), s.NewUser(t, "reporter"), s.NewUser(t, "stranger")
		var p struct{ ID int64 }
		s.Do(t, apitest.Request{Method: "POST", Path: "/projects", Token: owner.Token,
			JSON: map[string]any{"name": "site", "visibility": "public"}}).Want(t, 201).JSON(t, &p)
		pp := "/projects/" + itoa(p.ID)
		for _, m := range []struct {
			u     apitest.User
			level int
		}{{guest, 10}, {reporter, 20}} {
			s.Do(t, apitest.Request{Method: "POST", Path: pp + "/members", Token: owner.Token,
				JSON: map[string]any{"user_id": m.u.ID, "access_level": m.level}}).Want(t, 201)
		}
		base := pp + "/wikis"
		s.Do(t, apitest.Request{Method: "POST", Path: base, Token: owner.Token, JSON: map[string]any{"title": "Home", "content": "home"}}).Want(t, 201)
		work := t.TempDir()
		// calls are every wiki call; each answers want for the token.
		calls := func(token string, want int, body string) {
			t.Helper()
			for _, r := range []apitest.Request{
				{Method: "GET", Path: base},
				{Method: "GET", Path: base + "/Home"},
				{Method: "POST", Path: base, JSON: map[string]any{"title": "New", "content": "x"}},
				{Method: "PUT", Path: base + "/Home", JSON: map[string]any{"content": "changed"}},
				{Method: "POST", Path: base + "/attachments", Files: map[string]apitest.File{"file": {Name: "a.txt", Content: []byte("a")}}},
				{Method: "DELETE", Path: base + "/Home"},
			} {
				r.Token = token
				s.Do(t, r).Want(t, want).WantBody(t, body)
			}
		}
		setLevel := func(body map[string]any) {
			t.Helper()
			s.Do(t, apitest.Request{Method: "PUT", Path: pp, Token: owner.Token, JSON: body}).Want(t, 200)
		}
		canClone := func(token, name string) (string, bool) {
			out, err := gitRun(work, "clone", "-q", cloneURL(s, "owner/site.wiki", "any", token), name)
			return out, err == nil
		}
		const forbidden = `{"message":"403 Forbidden"}`

		// Disabled: nobody, not even the owner or an administrator, uses the
		// wiki, through the API or git.
		setLevel(map[string]any{"wiki_access_level": "disabled"})
		if got := s.Get(t, pp, owner.Token).Want(t, 200).Object(t); got["wiki_access_level"] != "disabled" || got["wiki_enabled"] != false {
			t.Errorf("project: wiki_access_level %v, wiki_enabled %v", got["wiki_access_level"], got["wiki_enabled"])
		}
		calls(owner.Token, 403, forbidden)
		calls(s.RootToken, 403, forbidden)
		if out, ok := canClone(owner.Token, "disabled"); ok || !strings.Contains(out, "You are not allowed to download files from this wiki.") {
			t.Errorf("clone of a disabled wiki: %s", out)
		}

		// Private: members (a guest too) read, non-members and anonymous get
		// 403 from the API and cannot clone.
		setLevel(map[string]any{"wiki_access_level": "private"})
		for _, tok := range []string{stranger.Token, ""} {
			s.Get(t, base, tok).Want(t, 403).WantBody(t, forbidden)
			s.Get(t, base+"/Home", tok).Want(t, 403).WantBody(t, forbidden)
		}
		if out, ok := canClone(stranger.Token, "stranger"); ok {
			t.Errorf("non-member clone of a private wiki: %s", out)
		}
		if out, ok := canClone("", "anon-private"); ok {
			t.Errorf("anonymous clone of a private wiki: %s", out)
		}
		s.Get(t, base, guest.Token).Want(t, 200).WantBody(t, `[{"format":"markdown","slug":"Home","title":"Home"}]`)
		s.Get(t, base+"/Home", guest.Token).Want(t, 200).
			WantBody(t, `{"format":"markdown","slug":"Home","title":"Home","content":"home","encoding":"UTF-8"}`)
		s.Do(t, apitest.Request{Method: "POST", Path: base, Token: guest.Token, JSON: map[string]any{"title": "G", "content": "x"}}).Want(t, 403).WantBody(t, forbidden)
		s.Do(t, apitest.Request{Method: "PUT", Path: base + "/Home", Token: reporter.Token, JSON: map[string]any{"content": "x"}}).Want(t, 403).WantBody(t, forbidden)
		g := filepath.Join(work, "guest")
		if out, ok := canClone(guest.Token, "guest"); !ok {
			t.Fatalf("guest clone: %s", out)
		}
		writeFile(t, filepath.Join(g, "Guest.md"), "g")
		gitOut(t, g, "add", ".")
		gitOut(t, g, "commit", "-q", "-m", "guest")
		if out, err := gitRun(g, "push", "origin", "HEAD"); err == nil || !strings.Contains(out, "You are not allowed to write to this project's wiki.") {
			t.Errorf("guest push: %v\n%s", err, out)
		}
		// An administrator writes to a private wiki without being a member.
		s.Do(t, apitest.Request{Method: "POST", Path: base, Token: s.RootToken, JSON: map[string]any{"title": "By Admin", "content": "a"}}).Want(t, 201)

		// wiki_enabled=true opens it again: anonymous reads, but does not
		// write (GitLab's wikis API authorizes create_wiki without
		// authenticating first: 403).
		setLevel(map[string]any{"wiki_enabled": true})
		s.Get(t, base+"/By-Admin", "").Want(t, 200)
		s.Do(t, apitest.Request{Method: "POST", Path: base, JSON: map[string]any{"title": "Anon", "content": "x"}}).Want(t, 403).
			WantBody(t, `{"message":"403 Forbidden"}`)

		// Archived: read-only for everybody, through the API and git.
		o := wikiClone(t, s, work, "owner/site.wiki", owner.Token, "owner")
		s.Do(t, apitest.Request{Method: "POST", Path: pp + "/archive", Token: owner.Token}).Want(t, 201)
		for _, tok := range []string{owner.Token, s.RootToken} {
			for _, r := range []apitest.Request{
				{Method: "POST", Path: base, JSON: map[string]any{"title": "New", "content": "x"}},
				{Method: "PUT", Path: base + "/Home", JSON: map[string]any{"content": "changed"}},
				{Method: "POST", Path: base + "/attachments", Files: map[string]apitest.File{"file": {Name: "a.txt", Content: []byte("a")}}},
				{Method: "DELETE", Path: base + "/Home"},
			} {
				r.Token = tok
				s.Do(t, r).Want(t, 403).WantBody(t, forbidden)
			}
		}
		s.Get(t, base+"/Home", "").Want(t, 200)
		writeFile(t, filepath.Join(o, "Late.md"), "late")
		gitOut(t, o, "add", ".")
		gitOut(t, o, "commit", "-q", "-m", "late")
		if out, err := gitRun(o, "push", "origin", "HEAD"); err == nil || !strings.Contains(out, "You are not allowed to write to this project's wiki.") {
			t.Errorf("push to an archived project's wiki: %v\n%s", err, out)
		}
		s.Do(t, apitest.Request{Method: "POST", Path: pp + "/unarchive", Token: owner.Token}).Want(t, 201)
		gitOut(t, o, "push", "-q", "origin", "HEAD")
		s.Get(t, base, "").Want(t, 200).WantBody(t, `[`+
			`{"format":"markdown","slug":"By-Admin","title":"By Admin"},`+
			`{"format":"markdown","slug":"Home","title":"Home"},`+
			`{"format":"markdown","slug":"Late","title":"Late"}]`)

		// A private group's and a private project's wikis do not exist for
		// anonymous callers.
		var pg, pr struct{ ID int64 }
		s.Do(t, apitest.Request{Method: "POST", Path: "/groups", Token: owner.Token,
			JSON: map[string]any{"name": "hidden", "path": "hidden", "visibility": "private"}}).Want(t, 201).JSON(t, &pg)
		s.Do(t, apitest.Request{Method: "POST", Path: "/projects", Token: owner.Token,
			JSON: map[string]any{"name": "secret", "namespace_id": pg.ID, "visibility": "private"}}).Want(t, 201).JSON(t, &pr)
		for _, path := range []string{"/groups/hidden/wikis", "/groups/" + itoa(pg.ID) + "/wikis/Home"} {
			s.Get(t, path, "").Want(t, 404).WantBody(t, `{"message":"404 Group Not Found"}`)
		}
		for _, path := range []string{"/projects/hidden%2Fsecret/wikis", "/projects/" + itoa(pr.ID) + "/wikis/Home"} {
			s.Get(t, path, "").Want(t, 404).WantBody(t, `{"message":"404 Project Not Found"}`)
		}
	})
}

func TestWikis_inputEdges(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		owner := s.NewUser(t, "owner")
		var g, sub struct{ ID int64 }
		s.Do(t, apitest.Request{Method: "POST", Path: "/groups", Token: owner.Token,
			JSON: map[string]any{"name": "team", "path": "team", "visibility": "private"}}).Want(t, 201).JSON(t, &g)
		s.Do(t, apitest.Request{Method: "POST", Path: "/groups", Token: owner.Token,
			JSON: map[string]any{"name": "sub", "path": "sub", "parent_id": g.ID}}).Want(t, 201).JSON(t, &sub)
		setWikiLimits(t, s, 1024, 1)
		base := "/groups/team%2Fsub/wikis" // the subgroup by its URL-encoded full path
		do := func(method, path string, body map[string]any) *apitest.Response {
			return s.Do(t, apitest.Request{Method: method, Path: base + path, Token: owner.Token, JSON: body})
		}

		// Parameters.
		do("POST", "", map[string]any{}).Want(t, 400).WantBody(t, `{"error":"title is missing, content is missing"}`)
		do("POST", "", map[string]any{"title": nil, "content": "x"}).Want(t, 400).WantBody(t, `{"error":"title is missing"}`)
		do("POST", "", map[string]any{"content": "x", "format": "textile"}).Want(t, 400).
			WantBody(t, `{"error":"title is missing, format does not have a valid value"}`)
		s.Get(t, base+"?with_content=maybe", owner.Token).Want(t, 400).WantBody(t, `{"error":"with_content is invalid"}`)

		// Slugs and titles.
		for _, c := range []struct{ title, slug, name string }{
			{"a/b c", "a/b-c", "b c"},
			{"//x//y/./z ", "x/y/z", "z"},
			{"../../Up  One", "Up-One", "Up One"},
		} {
			do("POST", "", map[string]any{"title": c.title, "content": c.slug}).Want(t, 201).
				WantBody(t, `{"format":"markdown","slug":"`+c.slug+`","title":"`+c.name+`","content":"`+c.slug+`","encoding":"UTF-8"}`)
		}
		for _, lookup := range []string{"/a%2Fb-c", "/A%2FB-C", "/a%2Fb%20c", "/A%2Fb%20C"} {
			s.Get(t, base+lookup, owner.Token).Want(t, 200).
				WantBody(t, `{"format":"markdown","slug":"a/b-c","title":"b c","content":"a/b-c","encoding":"UTF-8"}`)
		}

		// Rendering sanitises markdown.
		do("POST", "", map[string]any{"title": "Unsafe", "content": "# Hi\n\n<script>alert(1)</script>\n\n" +
			"[x](javascript:alert(1)) <b onclick=\"x()\">b</b> <img src=x onerror=alert(1)>"}).Want(t, 201)
		s.Get(t, base+"/Unsafe?render_html=true", owner.Token).Want(t, 200).
			WantBody(t, `{"format":"markdown","slug":"Unsafe","title":"Unsafe","content":"<h1>Hi</h1>\n\n<p>x <b>b</b> <img src=\"x\"></p>\n","encoding":"UTF-8"}`)

		// Update: every rule at once, and a rename whose folder would land on
		// existing pages changes nothing.
		do("PUT", "/Unsafe", map[string]any{"title": strings.Repeat("t", 246), "content": strings.Repeat("c", 2000)}).Want(t, 400).
			WantBody(t, `{"message":{"content":["is too long (1.95 KB). The maximum size is 1 KB."],"title":["exceeds the limit of 245 bytes"]}}`)
		long := strings.Repeat("d", 256)
		do("PUT", "/Unsafe", map[string]any{"title": long + "/x"}).Want(t, 400).
			WantBody(t, `{"message":{"title":["exceeds the limit of 255 bytes for directory name \"`+long+`\""]}}`)
		// A blank title is blank in a folder too (the page does not move to
		// the folder's name).
		for _, title := range []string{"/", " ", "."} {
			for _, page := range []string{"/Unsafe", "/a%2Fb-c"} {
				do("PUT", page, map[string]any{"title": title}).Want(t, 400).WantBody(t, `{"message":{"title":["can't be blank"]}}`)
			}
		}
		do("PUT", "/a%2Fb-c", map[string]any{"title": "/Unsafe"}).Want(t, 400).
			WantBody(t, `{"message":{"base":["There is already a page with the same title in that path."]}}`)
		for _, title := range []string{"Guide", "Guide/Intro", "Manual/Intro"} {
			do("POST", "", map[string]any{"title": title, "content": title}).Want(t, 201)
		}
		before := s.Get(t, base+"?with_content=true", owner.Token).Want(t, 200).Body
		// Guide.md could become Manual.md, but Guide/Intro.md would land on
		// Manual/Intro.md.
		coll := do("PUT", "/Guide", map[string]any{"title": "Manual"}).Want(t, 400).Object(t)
		if msg, _ := coll["message"].(map[string]any); msg == nil || msg["base"] == nil {
			t.Errorf("folder collision: %v", coll)
		}
		if after := s.Get(t, base+"?with_content=true", owner.Token).Want(t, 200).Body; string(after) != string(before) {
			t.Errorf("a refused rename changed the wiki:\n%s\nbefore:\n%s", after, before)
		}

		// Attachments: a missing or non-file file, a bad branch, the size
		// limit's edge, and a new branch from the default one.
		attach := func(name string, content []byte, branch string) *apitest.Response {
			req := apitest.Request{Method: "POST", Path: base + "/attachments", Token: owner.Token,
				Files: map[string]apitest.File{"file": {Name: name, Content: content}}}
			if branch != "" {
				req.Multipart = map[string]string{"branch": branch}
			}
			return s.Do(t, req)
		}
		s.Do(t, apitest.Request{Method: "POST", Path: base + "/attachments", Token: owner.Token, JSON: map[string]any{"file": nil}}).
			Want(t, 400).WantBody(t, `{"error":"file is missing"}`)
		s.Do(t, apitest.Request{Method: "POST", Path: base + "/attachments", Token: owner.Token, Multipart: map[string]string{"file": "text"}}).
			Want(t, 400).WantBody(t, `{"error":"file is invalid"}`)
		attach("a.txt", []byte("a"), "bad..branch").Want(t, 400)
		attach("exact.bin", make([]byte, 1<<20), "").Want(t, 201)
		pagesOnMain := s.Get(t, base, owner.Token).Want(t, 200).Body
		var a struct {
			FilePath string `json:"file_path"`
			Branch   string `json:"branch"`
		}
		attach("draft pic.png", []byte("png"), "drafts").Want(t, 201).JSON(t, &a)
		if a.Branch != "drafts" || !strings.HasSuffix(a.FilePath, "/draft_pic.png") {
			t.Errorf("attachment on a new branch: %+v", a)
		}
		attach("second.txt", []byte("2"), "drafts").Want(t, 201)
		s.Get(t, base, owner.Token).Want(t, 200).WantBody(t, string(pagesOnMain))
		work := t.TempDir()
		main := wikiClone(t, s, work, "team/sub.wiki", owner.Token, "main")
		drafts := wikiClone(t, s, work, "team/sub.wiki", owner.Token, "drafts", "-b", "drafts")
		mainFiles := gitOut(t, main, "ls-tree", "-r", "--name-only", "HEAD")
		draftFiles := gitOut(t, drafts, "ls-tree", "-r", "--name-only", "HEAD")
		if strings.Contains(mainFiles, "draft_pic.png") || !strings.Contains(draftFiles, a.FilePath+"\n") ||
			!strings.Contains(draftFiles, "/second.txt\n") || !strings.Contains(draftFiles, "Guide/Intro.md\n") {
			t.Errorf("main:\n%s\ndrafts:\n%s", mainFiles, draftFiles)
		}
		if got := gitOut(t, drafts, "log", "--format=%s", "-2"); got != "Upload attachment second.txt\nUpload attachment draft_pic.png\n" {
			t.Errorf("drafts history:\n%s", got)
		}
		gitOut(t, drafts, "merge-base", "--is-ancestor", "origin/main", "HEAD") // drafts starts from main

		// A clone URL names a path, never an id: the group whose path is
		// team's id owns "<that id>.wiki.git".
		var numeric struct{ ID int64 }
		s.Do(t, apitest.Request{Method: "POST", Path: "/groups", Token: owner.Token,
			JSON: map[string]any{"name": "numbers", "path": itoa(g.ID)}}).Want(t, 201).JSON(t, &numeric)
		s.Do(t, apitest.Request{Method: "POST", Path: "/groups/" + itoa(g.ID) + "/wikis", Token: owner.Token,
			JSON: map[string]any{"title": "In Team", "content": "t"}}).Want(t, 201)
		s.Do(t, apitest.Request{Method: "POST", Path: "/groups/" + itoa(numeric.ID) + "/wikis", Token: owner.Token,
			JSON: map[string]any{"title": "In Numbers", "content": "n"}}).Want(t, 201)
		n := wikiClone(t, s, work, itoa(g.ID)+".wiki", owner.Token, "numeric")
		if got := gitOut(t, n, "ls-tree", "-r", "--name-only", "HEAD"); got != "In-Numbers.md\n" {
			t.Errorf("%s.wiki.git holds:\n%s", itoa(g.ID), got)
		}

		// Pages and attachments written at once all land, one commit each.
		count := func() int {
			n := 0
			fmt.Sscan(gitOut(t, main, "rev-list", "--count", "HEAD"), &n)
			return n
		}
		gitOut(t, main, "pull", "-q")
		start := count()
		var wg sync.WaitGroup
		codes := make([]int, 8)
		for i := range codes {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if i%2 == 0 {
					codes[i] = do("POST", "", map[string]any{"title": fmt.Sprintf("Mixed %d", i), "content": "m"}).Status
				} else {
					codes[i] = attach(fmt.Sprintf("f%d.txt", i), []byte("f"), "").Status
				}
			}()
		}
		wg.Wait()
		for i, c := range codes {
			if c != 201 {
				t.Errorf("writer %d: %d", i, c)
			}
		}
		gitOut(t, main, "pull", "-q")
		if n := count(); n != start+8 {
			t.Errorf("commits: %d; want %d", n, start+8)
		}
		files := gitOut(t, main, "ls-tree", "-r", "--name-only", "HEAD")
		for i := range 8 {
			want := fmt.Sprintf("Mixed-%d.md\n", i)
			if i%2 == 1 {
				want = fmt.Sprintf("/f%d.txt\n", i)
			}
			if !strings.Contains(files, want) {
				t.Errorf("missing %q in:\n%s", want, files)
			}
		}

		// Removing a group removes its subgroups' wikis.
		dir := wikiDir(s, gitrepo.GroupWikiPath(sub.ID))
		if _, err := os.Stat(dir); err != nil {
			t.Fatal(err)
		}
		s.Do(t, apitest.Request{Method: "DELETE", Path: "/groups/" + itoa(g.ID), Token: owner.Token}).Want(t, 202)
		eventually(t, "subgroup wiki removed", func() bool { _, err := os.Stat(dir); return os.IsNotExist(err) })
	})
}

// Renames are recorded in the wiki's redirect file (old slug: new slug),
// in the commit of the rename; a new page at an old slug ends its
// redirect. A wiki with GitLab's .gitlab/redirects.yml keeps using it,
// and a file that is not a mapping is left as it is.
func TestWikis_redirects(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		owner := s.NewUser(t, "owner")
		for _, name := range []string{"docs", "legacy", "odd"} {
			s.Do(t, apitest.Request{Method: "POST", Path: "/projects", Token: owner.Token,
				JSON: map[string]any{"name": name}}).Want(t, 201)
		}
		do := func(project, method, path string, body map[string]any) *apitest.Response {
			return s.Do(t, apitest.Request{Method: method, Path: "/projects/owner%2F" + project + "/wikis" + path, Token: owner.Token, JSON: body})
		}
		work := t.TempDir()
		// redirects is the redirect file at the tip of a project's wiki
		// and the files the last commit changed.
		redirects := func(project, file string) (content, changed string) {
			t.Helper()
			dir := filepath.Join(work, project)
			if _, err := os.Stat(dir); err != nil {
				wikiClone(t, s, work, "owner/"+project+".wiki", owner.Token, project)
			} else {
				gitOut(t, dir, "pull", "-q", "origin", "main")
			}
			if out, err := gitRun(dir, "show", "HEAD:"+file); err == nil {
				content = out
			}
			return content, gitOut(t, dir, "show", "--no-renames", "--name-only", "--format=", "HEAD")
		}

		do("docs", "POST", "", map[string]any{"title": "Guide", "content": "g"}).Want(t, 201)
		do("docs", "POST", "", map[string]any{"title": "Guide/Intro", "content": "i"}).Want(t, 201)
		if got, changed := redirects("docs", ".service/redirects.yml"); got != "" || changed != "Guide/Intro.md\n" {
			t.Errorf("redirects before any rename: %q, changed %q", got, changed)
		}
		do("docs", "PUT", "/Guide", map[string]any{"title": "Handbook"}).Want(t, 200)
		if got, changed := redirects("docs", ".service/redirects.yml"); got != "Guide: Handbook\n" ||
			changed != ".service/redirects.yml\nGuide.md\nGuide/Intro.md\nHandbook.md\nHandbook/Intro.md\n" {
			t.Errorf("after a rename: %q, changed %q", got, changed)
		}
		do("docs", "PUT", "/Handbook", map[string]any{"title": "Manual", "content": "m"}).Want(t, 200)
		if got, _ := redirects("docs", ".service/redirects.yml"); got != "Guide: Handbook\nHandbook: Manual\n" {
			t.Errorf("after a second rename: %q", got)
		}
		// Content and format changes are no renames.
		do("docs", "PUT", "/Manual", map[string]any{"content": "m2", "format": "org"}).Want(t, 200)
		if _, changed := redirects("docs", ".service/redirects.yml"); changed != "Manual.md\nManual.org\n" {
			t.Errorf("a format change touched %q", changed)
		}
		// The API does not follow redirects (as GitLab's does not); the
		// file is no page.
		do("docs", "GET", "/Guide", nil).Want(t, 404).WantBody(t, `{"message":"404 Wiki Page Not Found"}`)
		do("docs", "GET", "", nil).Want(t, 200).WantBody(t, `[`+
			`{"format":"org","slug":"Manual","title":"Manual"},`+
			`{"format":"markdown","slug":"Manual/Intro","title":"Intro"}]`)
		do("docs", "POST", "", map[string]any{"title": "Handbook", "content": "new"}).Want(t, 201)
		if got, changed := redirects("docs", ".service/redirects.yml"); got != "Guide: Handbook\n" ||
			changed != ".service/redirects.yml\nHandbook.md\n" {
			t.Errorf("after a page took an old slug: %q, changed %q", got, changed)
		}
		// Renaming back: the new slug stops redirecting, the old one starts.
		do("docs", "PUT", "/Manual", map[string]any{"title": "Guide"}).Want(t, 200)
		if got, _ := redirects("docs", ".service/redirects.yml"); got != "Manual: Guide\n" {
			t.Errorf("after renaming back: %q", got)
		}

		// GitLab's file is kept up to date where it is the one there.
		do("legacy", "POST", "", map[string]any{"title": "Old", "content": "o"}).Want(t, 201)
		redirects("legacy", ".gitlab/redirects.yml")
		dir := filepath.Join(work, "legacy")
		writeFile(t, filepath.Join(dir, ".gitlab", "redirects.yml"), "Older: Old\n")
		gitOut(t, dir, "add", ".")
		gitOut(t, dir, "commit", "-q", "-m", "redirects from elsewhere")
		gitOut(t, dir, "push", "-q", "origin", "HEAD")
		do("legacy", "PUT", "/Old", map[string]any{"title": "New"}).Want(t, 200)
		if got, changed := redirects("legacy", ".gitlab/redirects.yml"); got != "Old: New\nOlder: Old\n" ||
			changed != ".gitlab/redirects.yml\nNew.md\nOld.md\n" {
			t.Errorf("GitLab's redirect file: %q, changed %q", got, changed)
		}

		// A redirect file that is no mapping of strings is left alone.
		do("odd", "POST", "", map[string]any{"title": "A", "content": "a"}).Want(t, 201)
		redirects("odd", ".service/redirects.yml")
		dir = filepath.Join(work, "odd")
		writeFile(t, filepath.Join(dir, ".service", "redirects.yml"), "- a\n- b\n")
		gitOut(t, dir, "add", ".")
		gitOut(t, dir, "commit", "-q", "-m", "a list")
		gitOut(t, dir, "push", "-q", "origin", "HEAD")
		do("odd", "PUT", "/A", map[string]any{"title": "B"}).Want(t, 200)
		if got, changed := redirects("odd", ".service/redirects.yml"); got != "- a\n- b\n" || changed != "A.md\nB.md\n" {
			t.Errorf("a list as redirect file: %q, changed %q", got, changed)
		}
	})
}
