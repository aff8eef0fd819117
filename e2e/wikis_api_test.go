package e2e

import (
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"quarry/internal/apitest"
	"quarry/internal/git/gitrepo"
)

// Wikis end to end (spec part 2, group wikis; reference §3): the same
// rows under /projects/:id/wikis and /groups/:id/wikis, the validation
// messages, permissions, the wiki as a real git repository (clone, push),
// statistics and removal.

// wikiOwners makes a private group and a private project in it, both
// owned by owner, and returns their wiki base paths.
func wikiOwners(t *testing.T, s *apitest.Server, owner apitest.User) (group, project string, groupID, projectID int64) {
	t.Helper()
	var g, p struct{ ID int64 }
	s.Do(t, apitest.Request{Method: "POST", Path: "/groups", Token: owner.Token,
		JSON: map[string]any{"name": "team", "path": "team", "visibility": "private"}}).Want(t, 201).JSON(t, &g)
	s.Do(t, apitest.Request{Method: "POST", Path: "/projects", Token: owner.Token,
		JSON: map[string]any{"name": "app", "namespace_id": g.ID, "visibility": "private"}}).Want(t, 201).JSON(t, &p)
	return "/groups/" + itoa(g.ID) + "/wikis", "/projects/" + itoa(p.ID) + "/wikis", g.ID, p.ID
}

// setWikiLimits sets the instance's page content and attachment limits.
func setWikiLimits(t *testing.T, s *apitest.Server, contentBytes int64, attachmentMiB int) {
	t.Helper()
	s.Do(t, apitest.Request{Method: "PUT", Path: "/application/settings", Token: s.RootToken,
		JSON: map[string]any{"wiki_page_max_content_bytes": contentBytes, "max_attachment_size": attachmentMiB}}).Want(t, 200)
}

func TestWikis_pagesAndValidation(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		owner := s.NewUser(t, "owner")
		group, project, _, _ := wikiOwners(t, s, owner)
		setWikiLimits(t, s, 1024, 1)
		for _, base := range []string{group, project} {
			do := func(method, path string, body map[string]any) *apitest.Response {
				return s.Do(t, apitest.Request{Method: method, Path: base + path, Token: owner.Token, JSON: body})
			}
			s.Get(t, base, owner.Token).Want(t, 200).WantBody(t, `[]`)

			// Create: slugs, titles, folders and formats.
			do("POST", "", map[string]any{"title": "  Hello   World ", "content": "# Hello"}).Want(t, 201).
				WantBody(t, `{"format":"markdown","slug":"Hello-World","title":"Hello World","content":"# Hello","encoding":"UTF-8"}`)
			do("POST", "", map[string]any{"title": "../../Guide/Getting Started", "content": "start", "format": "rdoc"}).Want(t, 201).
				WantBody(t, `{"format":"rdoc","slug":"Guide/Getting-Started","title":"Getting Started","content":"start","encoding":"UTF-8"}`)
			do("POST", "", map[string]any{"title": "Guide", "content": "the guide", "format": "asciidoc"}).Want(t, 201)
			do("POST", "", map[string]any{"title": "Zeta", "content": "z", "format": "org"}).Want(t, 201)

			// Lists: by path, content only when asked.
			s.Get(t, base, owner.Token).Want(t, 200).WantBody(t, `[`+
				`{"format":"asciidoc","slug":"Guide","title":"Guide"},`+
				`{"format":"rdoc","slug":"Guide/Getting-Started","title":"Getting Started"},`+
				`{"format":"markdown","slug":"Hello-World","title":"Hello World"},`+
				`{"format":"org","slug":"Zeta","title":"Zeta"}]`)
			full := s.Get(t, base+"?with_content=true", owner.Token).Want(t, 200).Array(t)
			if len(full) != 4 || full[2]["content"] != "# Hello" || full[2]["encoding"] != "UTF-8" {
				t.Errorf("with content: %v", full)
			}

			// Get: encoded nested slugs, any case, the title form, rendering.
			s.Get(t, base+"/Guide%2FGetting-Started", owner.Token).Want(t, 200).
				WantBody(t, `{"format":"rdoc","slug":"Guide/Getting-Started","title":"Getting Started","content":"start","encoding":"UTF-8"}`)
			if got := s.Get(t, base+"/hello%20world", owner.Token).Want(t, 200).Object(t); got["slug"] != "Hello-World" {
				t.Errorf("title form: %v", got)
			}
			if got := s.Get(t, base+"/Hello-World?render_html=true", owner.Token).Want(t, 200).Object(t); got["content"] != "<h1>Hello</h1>\n" {
				t.Errorf("rendered: %q", got["content"])
			}
			do("POST", "", map[string]any{"title": "Unsafe", "content": "<script>alert(1)</script><b onclick=\"x()\">bold</b>", "format": "org"}).Want(t, 201)
			if got := s.Get(t, base+"/Unsafe?render_html=true", owner.Token).Want(t, 200).Object(t); got["content"] !=
				"<pre>&lt;script&gt;alert(1)&lt;/script&gt;&lt;b onclick=&#34;x()&#34;&gt;bold&lt;/b&gt;</pre>" {
				t.Errorf("other formats are escaped: %q", got["content"])
			}
			for _, missing := range []string{"/Nope", "/Hello-World?version=0123456789abcdef0123456789abcdef01234567", "/Hello-World?version=HEAD~1"} {
				s.Get(t, base+missing, owner.Token).Want(t, 404).WantBody(t, `{"message":"404 Wiki Page Not Found"}`)
			}

			// Bad input.
			cases := []struct {
				body map[string]any
				want string
			}{
				{map[string]any{"content": "x"}, `{"error":"title is missing"}`},
				{map[string]any{"title": "x"}, `{"error":"content is missing"}`},
				{map[string]any{"title": "x", "content": "x", "format": "html"}, `{"error":"format does not have a valid value"}`},
				{map[string]any{"title": "   ", "content": "x"}, `{"message":{"title":["can't be blank"]}}`},
				{map[string]any{"title": "/../", "content": "x"}, `{"message":{"title":["can't be blank"]}}`},
				{map[string]any{"title": "hello WORLD", "content": "x"}, `{"message":{"base":["Duplicate page: A page with that title already exists in the file Hello-World.md"]}}`},
				{map[string]any{"title": "Hello World", "content": "x", "format": "org"}, `{"message":{"base":["Duplicate page: A page with that title already exists in the file Hello-World.md"]}}`},
				{map[string]any{"title": "guide/getting started", "content": "x"}, `{"message":{"base":["Duplicate page: A page with that title already exists in the file Guide/Getting-Started.rdoc"]}}`},
				{map[string]any{"title": strings.Repeat("é", 123), "content": "x"}, `{"message":{"title":["exceeds the limit of 245 bytes"]}}`},
				{map[string]any{"title": strings.Repeat("d", 256) + "/page", "content": "x"}, `{"message":{"title":["exceeds the limit of 255 bytes for directory name \"` + strings.Repeat("d", 256) + `\""]}}`},
				{map[string]any{"title": "Big", "content": strings.Repeat("x", 2000)}, `{"message":{"content":["is too long (1.95 KB). The maximum size is 1 KB."]}}`},
			}
			for _, c := range cases {
				do("POST", "", c.body).Want(t, 400).WantBody(t, c.want)
			}

			// Update: content, format (new extension), title (moves the
			// page and its folder; a title without "/" keeps the folder).
			do("PUT", "/Hello-World", map[string]any{}).Want(t, 400).
				WantBody(t, `{"error":"content, title, format are missing, at least one parameter must be provided"}`)
			do("PUT", "/Hello-World", map[string]any{"content": "## Changed"}).Want(t, 200).
				WantBody(t, `{"format":"markdown","slug":"Hello-World","title":"Hello World","content":"## Changed","encoding":"UTF-8"}`)
			do("PUT", "/Guide", map[string]any{"title": "Manual", "format": "markdown"}).Want(t, 200).
				WantBody(t, `{"format":"markdown","slug":"Manual","title":"Manual","content":"the guide","encoding":"UTF-8"}`)
			s.Get(t, base+"/Manual%2FGetting-Started", owner.Token).Want(t, 200)
			s.Get(t, base+"/Guide%2FGetting-Started", owner.Token).Want(t, 404)
			do("PUT", "/Manual%2FGetting-Started", map[string]any{"title": "First Steps"}).Want(t, 200).
				WantBody(t, `{"format":"rdoc","slug":"Manual/First-Steps","title":"First Steps","content":"start","encoding":"UTF-8"}`)
			do("PUT", "/Manual%2FFirst-Steps", map[string]any{"title": "/Top"}).Want(t, 200)
			s.Get(t, base+"/Top", owner.Token).Want(t, 200)
			do("PUT", "/Top", map[string]any{"title": "zeta"}).Want(t, 400).
				WantBody(t, `{"message":{"base":["There is already a page with the same title in that path."]}}`)
			do("PUT", "/Top", map[string]any{"title": " "}).Want(t, 400).WantBody(t, `{"message":{"title":["can't be blank"]}}`)
			do("PUT", "/Top", map[string]any{"content": strings.Repeat("y", 1025)}).Want(t, 400).
				WantBody(t, `{"message":{"content":["is too long (1 KB). The maximum size is 1 KB."]}}`)
			do("PUT", "/Top", map[string]any{"format": "pdf"}).Want(t, 400).WantBody(t, `{"error":"format does not have a valid value"}`)
			do("PUT", "/Nope", map[string]any{"content": "x"}).Want(t, 404).WantBody(t, `{"message":"404 Wiki Page Not Found"}`)

			// Delete.
			r := do("DELETE", "/Zeta", nil).Want(t, 204)
			if len(r.Body) != 0 {
				t.Errorf("delete body %q", r.Body)
			}
			do("DELETE", "/Zeta", nil).Want(t, 404).WantBody(t, `{"message":"404 Wiki Page Not Found"}`)
			if n := len(s.Get(t, base, owner.Token).Want(t, 200).Array(t)); n != 4 {
				t.Errorf("pages left: %d; want 4", n)
			}
		}
	})
}

func TestWikis_attachments(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		owner := s.NewUser(t, "owner")
		group, project, _, _ := wikiOwners(t, s, owner)
		setWikiLimits(t, s, 50<<20, 1)
		for _, base := range []string{group, project} {
			upload := func(name string, content []byte, fields map[string]string) *apitest.Response {
				return s.Do(t, apitest.Request{Method: "POST", Path: base + "/attachments", Token: owner.Token,
					Files: map[string]apitest.File{"file": {Name: name, Content: content}}, Multipart: fields})
			}
			var a struct {
				FileName string `json:"file_name"`
				FilePath string `json:"file_path"`
				Branch   string `json:"branch"`
				Link     struct{ URL, Markdown string }
			}
			upload("my pic.png", []byte("\x89PNG"), nil).Want(t, 201).JSON(t, &a)
			dir, name, _ := strings.Cut(strings.TrimPrefix(a.FilePath, "uploads/"), "/")
			if a.FileName != "my_pic.png" || name != "my_pic.png" || len(dir) != 32 || strings.Trim(dir, "0123456789abcdef") != "" ||
				a.Branch != "main" || a.Link.URL != a.FilePath || a.Link.Markdown != "![my_pic]("+a.FilePath+")" {
				t.Errorf("image attachment %+v", a)
			}
			upload("notes.txt", []byte("n"), map[string]string{"branch": "drafts"}).Want(t, 201).JSON(t, &a)
			if a.Branch != "drafts" || a.Link.Markdown != "[notes.txt]("+a.FilePath+")" {
				t.Errorf("file attachment %+v", a)
			}
			s.Do(t, apitest.Request{Method: "POST", Path: base + "/attachments", Token: owner.Token, Multipart: map[string]string{"branch": "x"}}).
				Want(t, 400).WantBody(t, `{"error":"file is missing"}`)
			upload("big.bin", make([]byte, 1<<20+1), nil).Want(t, 413).WantBody(t, `{"message":"413 Request Entity Too Large"}`)
			upload("...", []byte("x"), nil).Want(t, 400).WantBody(t, `{"message":"The file name cannot be empty"}`)
			// Attachments are no pages.
			s.Get(t, base, owner.Token).Want(t, 200).WantBody(t, `[]`)
		}
	})
}

func TestWikis_permissions(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		owner, reporter, dev, stranger := s.NewUser(t, "owner"), s.NewUser(t, "reporter"), s.NewUser(t, "dev"), s.NewUser(t, "stranger")
		group, project, groupID, projectID := wikiOwners(t, s, owner)
		for _, m := range []struct {
			u     apitest.User
			level int
		}{{reporter, 20}, {dev, 30}} {
			s.Do(t, apitest.Request{Method: "POST", Path: "/groups/" + itoa(groupID) + "/members", Token: owner.Token,
				JSON: map[string]any{"user_id": m.u.ID, "access_level": m.level}}).Want(t, 201)
		}
		page := map[string]any{"title": "Page", "content": "x"}
		for _, c := range []struct {
			base, notFound string
		}{{group, "Group"}, {project, "Project"}} {
			// Hidden from those who cannot see the owner.
			s.Get(t, c.base, stranger.Token).Want(t, 404).WantBody(t, `{"message":"404 `+c.notFound+` Not Found"}`)
			s.Get(t, c.base, "").Want(t, 404)
			s.Do(t, apitest.Request{Method: "POST", Path: c.base, Token: stranger.Token, JSON: page}).Want(t, 404)
			// Reporters read; developers write; maintainers delete.
			s.Do(t, apitest.Request{Method: "POST", Path: c.base, Token: reporter.Token, JSON: page}).Want(t, 403).WantBody(t, `{"message":"403 Forbidden"}`)
			s.Do(t, apitest.Request{Method: "POST", Path: c.base + "/attachments", Token: reporter.Token,
				Files: map[string]apitest.File{"file": {Name: "a.txt", Content: []byte("a")}}}).Want(t, 403)
			s.Do(t, apitest.Request{Method: "POST", Path: c.base, Token: dev.Token, JSON: page}).Want(t, 201)
			s.Get(t, c.base+"/Page", reporter.Token).Want(t, 200)
			s.Do(t, apitest.Request{Method: "PUT", Path: c.base + "/Page", Token: reporter.Token, JSON: map[string]any{"content": "y"}}).Want(t, 403)
			s.Do(t, apitest.Request{Method: "PUT", Path: c.base + "/Page", Token: dev.Token, JSON: map[string]any{"content": "y"}}).Want(t, 200)
			s.Do(t, apitest.Request{Method: "DELETE", Path: c.base + "/Page", Token: dev.Token}).Want(t, 403)
			s.Do(t, apitest.Request{Method: "DELETE", Path: c.base + "/Page", Token: owner.Token}).Want(t, 204)
		}

		// A project's wiki feature: disabled shuts everyone out; private
		// keeps it to members of a public project; archived is read-only.
		pp := "/projects/" + itoa(projectID)
		s.Do(t, apitest.Request{Method: "PUT", Path: "/groups/" + itoa(groupID), Token: owner.Token, JSON: map[string]any{"visibility": "public"}}).Want(t, 200)
		s.Do(t, apitest.Request{Method: "PUT", Path: pp, Token: owner.Token, JSON: map[string]any{"visibility": "public", "wiki_enabled": false}}).Want(t, 200)
		s.Get(t, project, owner.Token).Want(t, 403).WantBody(t, `{"message":"403 Forbidden"}`)
		s.Do(t, apitest.Request{Method: "POST", Path: project, Token: owner.Token, JSON: page}).Want(t, 403)
		s.Do(t, apitest.Request{Method: "PUT", Path: pp, Token: owner.Token, JSON: map[string]any{"wiki_access_level": "private"}}).Want(t, 200)
		s.Do(t, apitest.Request{Method: "POST", Path: project, Token: owner.Token, JSON: page}).Want(t, 201)
		s.Get(t, project, stranger.Token).Want(t, 403)
		s.Get(t, project, "").Want(t, 403)
		s.Get(t, project+"/Page", reporter.Token).Want(t, 200)
		s.Do(t, apitest.Request{Method: "PUT", Path: pp, Token: owner.Token, JSON: map[string]any{"wiki_access_level": "enabled"}}).Want(t, 200)
		s.Get(t, project+"/Page", "").Want(t, 200)
		s.Do(t, apitest.Request{Method: "POST", Path: pp + "/archive", Token: owner.Token}).Want(t, 201)
		s.Do(t, apitest.Request{Method: "POST", Path: project, Token: owner.Token, JSON: map[string]any{"title": "More", "content": "x"}}).Want(t, 403)
		s.Get(t, project+"/Page", stranger.Token).Want(t, 200)
	})
}

// wikiDir is a wiki repository's folder on disk.
func wikiDir(s *apitest.Server, rel string) string {
	return filepath.Join(s.DataDir, "repositories", filepath.FromSlash(rel))
}

func TestWikis_gitStatisticsAndRemoval(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		owner, reporter := s.NewUser(t, "owner"), s.NewUser(t, "reporter")
		group, project, groupID, projectID := wikiOwners(t, s, owner)
		s.Do(t, apitest.Request{Method: "POST", Path: "/groups/" + itoa(groupID) + "/members", Token: owner.Token,
			JSON: map[string]any{"user_id": reporter.ID, "access_level": 20}}).Want(t, 201)
		s.Do(t, apitest.Request{Method: "POST", Path: group, Token: owner.Token, JSON: map[string]any{"title": "Docs/Intro Page", "content": "intro"}}).Want(t, 201)
		var a struct {
			FilePath string `json:"file_path"`
		}
		s.Do(t, apitest.Request{Method: "POST", Path: group + "/attachments", Token: owner.Token,
			Files: map[string]apitest.File{"file": {Name: "logo.png", Content: []byte("png")}}}).Want(t, 201).JSON(t, &a)
		s.Do(t, apitest.Request{Method: "PUT", Path: group + "/Docs%2FIntro-Page", Token: owner.Token, JSON: map[string]any{"content": "intro 2"}}).Want(t, 200)

		// A clone shows the pages, the attachment and one commit per change
		// by the caller.
		work := t.TempDir()
		if out, err := gitRun(work, "clone", "-q", cloneURL(s, "team.wiki", "any", owner.Token), "w"); err != nil {
			t.Fatalf("clone: %v\n%s", err, out)
		}
		w := filepath.Join(work, "w")
		if b, err := os.ReadFile(filepath.Join(w, "Docs", "Intro-Page.md")); err != nil || string(b) != "intro 2" {
			t.Errorf("page file: %q %v", b, err)
		}
		if b, err := os.ReadFile(filepath.Join(w, filepath.FromSlash(a.FilePath))); err != nil || string(b) != "png" {
			t.Errorf("attachment file: %q %v", b, err)
		}
		log, _ := gitRun(w, "log", "--format=%an <%ae>|%s")
		want := "Owner <owner@example.com>|owner updated page: Intro Page\n" +
			"Owner <owner@example.com>|Upload attachment logo.png\n" +
			"Owner <owner@example.com>|owner created page: Docs/Intro Page\n"
		if log != want {
			t.Errorf("history:\n%s\nwant:\n%s", log, want)
		}

		// A page pushed with git is a page of the API.
		writeFile(t, filepath.Join(w, "Pushed-Page.org"), "* pushed")
		gitRun(w, "add", ".")
		gitRun(w, "commit", "-q", "-m", "push a page")
		if out, err := gitRun(w, "push", "-q", "origin", "HEAD"); err != nil {
			t.Fatalf("push: %v\n%s", err, out)
		}
		s.Get(t, group+"/Pushed-Page", owner.Token).Want(t, 200).
			WantBody(t, `{"format":"org","slug":"Pushed-Page","title":"Pushed Page","content":"* pushed","encoding":"UTF-8"}`)

		// Reporters clone but do not push; strangers and anonymous do neither;
		// a token without repository scopes does not clone.
		if out, err := gitRun(work, "clone", "-q", cloneURL(s, "team.wiki", "r", reporter.Token), "r"); err != nil {
			t.Fatalf("reporter clone: %v\n%s", err, out)
		}
		writeFile(t, filepath.Join(work, "r", "x.md"), "x")
		gitRun(filepath.Join(work, "r"), "add", ".")
		gitRun(filepath.Join(work, "r"), "commit", "-q", "-m", "x")
		if out, err := gitRun(filepath.Join(work, "r"), "push", "origin", "HEAD"); err == nil || !strings.Contains(out, "You are not allowed to write to this project's wiki.") {
			t.Errorf("reporter push: %v\n%s", err, out)
		}
		if out, err := gitRun(work, "clone", "-q", cloneURL(s, "team.wiki", "", ""), "anon"); err == nil {
			t.Errorf("anonymous clone of a private wiki: %s", out)
		}
		userOnly := s.NewToken(t, owner.ID, "read_user")
		if out, err := gitRun(work, "clone", "-q", cloneURL(s, "team.wiki", "o", userOnly), "scoped"); err == nil {
			t.Errorf("clone with a read_user token: %s", out)
		}

		// The project's wiki clones at <project path>.wiki.git.
		s.Do(t, apitest.Request{Method: "POST", Path: project, Token: owner.Token, JSON: map[string]any{"title": "Home", "content": "home"}}).Want(t, 201)
		if out, err := gitRun(work, "clone", "-q", cloneURL(s, "team/app.wiki", "o", owner.Token), "pw"); err != nil {
			t.Fatalf("project wiki clone: %v\n%s", err, out)
		}
		if _, err := os.Stat(filepath.Join(work, "pw", "Home.md")); err != nil {
			t.Error(err)
		}

		// Sizes reach the statistics (recorded in the background).
		wikiSize := func(path string) float64 {
			st, _ := s.Get(t, path+"?statistics=true", s.RootToken).Want(t, 200).Object(t)["statistics"].(map[string]any)
			n, _ := st["wiki_size"].(float64)
			return n
		}
		eventually(t, "project wiki size", func() bool { return wikiSize("/projects/"+itoa(projectID)) > 0 })
		eventually(t, "group wiki size covers both wikis", func() bool {
			return wikiSize("/groups/"+itoa(groupID)) > wikiSize("/projects/"+itoa(projectID))
		})

		// Removal: the project's wiki with the project, the group's with the group.
		pdir := wikiDir(s, gitrepo.WikiPath(gitrepo.HashedPath("", projectID)))
		gdir := wikiDir(s, gitrepo.GroupWikiPath(groupID))
		for _, d := range []string{pdir, gdir} {
			if _, err := os.Stat(d); err != nil {
				t.Fatalf("wiki repository: %v", err)
			}
		}
		s.Do(t, apitest.Request{Method: "DELETE", Path: "/projects/" + itoa(projectID), Token: owner.Token}).Want(t, 202)
		eventually(t, "project wiki removed", func() bool { _, err := os.Stat(pdir); return os.IsNotExist(err) })
		s.Do(t, apitest.Request{Method: "DELETE", Path: "/groups/" + itoa(groupID), Token: owner.Token}).Want(t, 202)
		eventually(t, "group wiki removed", func() bool { _, err := os.Stat(gdir); return os.IsNotExist(err) })
	})
}

func TestWikis_concurrentEdits(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		owner := s.NewUser(t, "owner")
		group, _, _, _ := wikiOwners(t, s, owner)
		const n = 8
		round := func(method string, path func(i int) string, body func(i int) map[string]any, want int) {
			var wg sync.WaitGroup
			codes := make([]int, n)
			for i := 0; i < n; i++ {
				wg.Add(1)
				go func(i int) {
					defer wg.Done()
					codes[i] = s.Do(t, apitest.Request{Method: method, Path: path(i), Token: owner.Token, JSON: body(i)}).Status
				}(i)
			}
			wg.Wait()
			for i, c := range codes {
				if c != want {
					t.Errorf("%s %s: %d; want %d", method, path(i), c, want)
				}
			}
		}
		round("POST", func(int) string { return group }, func(i int) map[string]any {
			return map[string]any{"title": fmt.Sprintf("Page %d", i), "content": "first"}
		}, 201)
		round("PUT", func(i int) string { return group + "/" + url.PathEscape(fmt.Sprintf("Page-%d", i)) }, func(i int) map[string]any {
			return map[string]any{"content": fmt.Sprintf("second %d", i)}
		}, 200)
		list := s.Get(t, group+"?with_content=true", owner.Token).Want(t, 200).Array(t)
		if len(list) != n {
			t.Fatalf("pages: %d; want %d", len(list), n)
		}
		for _, p := range list {
			if want := "second " + strings.TrimPrefix(p["slug"].(string), "Page-"); p["content"] != want {
				t.Errorf("%s: %q; want %q", p["slug"], p["content"], want)
			}
		}
		work := t.TempDir()
		if out, err := gitRun(work, "clone", "-q", cloneURL(s, "team.wiki", "o", owner.Token), "w"); err != nil {
			t.Fatalf("clone: %v\n%s", err, out)
		}
		if out, _ := gitRun(filepath.Join(work, "w"), "rev-list", "--count", "HEAD"); strings.TrimSpace(out) != itoa(2*n) {
			t.Errorf("commits: %s; want %d", out, 2*n)
		}
		// Two creations of one title: one page, one duplicate error.
		codes := make(chan int, 2)
		for i := 0; i < 2; i++ {
			go func() {
				codes <- s.Do(t, apitest.Request{Method: "POST", Path: group, Token: owner.Token, JSON: map[string]any{"title": "Same", "content": "x"}}).Status
			}()
		}
		if a, b := <-codes, <-codes; a+b != 201+400 {
			t.Errorf("racing duplicates: %d and %d; want 201 and 400", a, b)
		}
	})
}
