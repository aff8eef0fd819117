package e2e

import (
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"quarry/internal/apitest"
	"quarry/internal/releases"
	"quarry/internal/web"
)

// TestWeb_releaseEdit: a release's edit page at its _links.edit_url. A
// maintainer and a developer see the form (and the release page's Edit
// link) and save the title, notes, date, milestones and asset links
// through it, which the API then returns; a reporter reads the release
// but gets a 404 for the form and its post; the anonymous are sent to
// sign in; bad input shows the form again with the reason and saves
// nothing; a cross-origin post is refused; a missing release is a 404.
func TestWeb_releaseEdit(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		alice, dev, rep := s.NewUser(t, "alice"), s.NewUser(t, "dave"), s.NewUser(t, "rita")
		p := webProject(t, s, alice.Token, "secret", "private")
		pid := fmt.Sprint(p["id"])
		for u, lvl := range map[int64]int{dev.ID: 30, rep.ID: 20} {
			s.Do(t, apitest.Request{Method: "POST", Path: "/projects/" + pid + "/members", Token: alice.Token,
				JSON: map[string]any{"user_id": u, "access_level": lvl}}).Want(t, http.StatusCreated)
		}
		s.Do(t, apitest.Request{Method: "POST", Path: "/projects/" + pid + "/milestones", Token: alice.Token,
			JSON: map[string]any{"title": "M1"}}).Want(t, http.StatusCreated)
		rel := s.Do(t, apitest.Request{Method: "POST", Path: "/projects/" + pid + "/releases", Token: alice.Token,
			JSON: map[string]any{"tag_name": "release/1.0", "ref": "main", "name": "One", "description": "The first",
				"released_at": "2026-01-02T03:04:05Z",
				"assets":      map[string]any{"links": []map[string]any{{"name": "Old binary", "url": "https://example.com/old"}}}}}).
			Want(t, http.StatusCreated).Object(t)
		edit := strings.TrimPrefix(rel["_links"].(map[string]any)["edit_url"].(string), s.URL)
		if edit != "/alice/secret/-/releases/release%2F1.0/edit" {
			t.Fatalf("_links.edit_url %q", edit)
		}
		show := strings.TrimSuffix(edit, "/edit")
		apiRel := "/projects/" + pid + "/releases/" + url.PathEscape("release/1.0")

		ab, db, rb, anon := newBrowser(s), newBrowser(s), newBrowser(s), newBrowser(s)
		ab.signIn(t, "alice", webPassword).want(t, http.StatusSeeOther)
		db.signIn(t, "dave", webPassword).want(t, http.StatusSeeOther)
		rb.signIn(t, "rita", webPassword).want(t, http.StatusSeeOther)
		same := map[string]string{"Sec-Fetch-Site": "same-origin", "Origin": s.URL}

		// The form, filled with the release as it is.
		ab.get(t, show).want(t, http.StatusOK).contains(t, `href="`+edit+`" data-testid="release-edit"`)
		pg := ab.get(t, edit).want(t, http.StatusOK).contains(t, `action="`+edit+`"`, `value="One"`,
			`value="2026-01-02T03:04:05"`, ">\nThe first</textarea>", `name="milestones_shown"`, "Old binary", `name="link_url"`)
		if cc := pg.Header.Get("Cache-Control"); cc != "no-store" {
			t.Errorf("Cache-Control %q; want no-store", cc)
		}
		oldLink := regexp.MustCompile(`name="remove_link" value="(\d+)"`).FindStringSubmatch(pg.Body)
		if oldLink == nil {
			t.Fatalf("no remove box for the asset link:\n%.2000s", pg.Body)
		}

		// A reporter reads the release, not its form; nor may it post.
		rb.get(t, show).want(t, http.StatusOK).lacks(t, "/edit")
		rb.get(t, edit).want(t, http.StatusNotFound).lacks(t, "The first")
		rb.do(t, "POST", edit, url.Values{"name": {"Rita's"}, "description": {"x"}}, same).want(t, http.StatusNotFound)
		// The anonymous are sent to sign in, for the page and the post.
		r := anon.get(t, edit).want(t, http.StatusFound)
		if want := "/users/sign_in?redirect_to=" + url.QueryEscape(edit); r.Header.Get("Location") != want {
			t.Errorf("anonymous: Location %q; want %q", r.Header.Get("Location"), want)
		}
		r = anon.do(t, "POST", edit, url.Values{"name": {"Anon"}}, same).want(t, http.StatusSeeOther)
		if !strings.HasPrefix(r.Header.Get("Location"), "/users/sign_in?redirect_to=") {
			t.Errorf("anonymous post: Location %q", r.Header.Get("Location"))
		}
		// A cross-origin post is refused before anything is read.
		ab.do(t, "POST", edit, url.Values{"name": {"Evil"}, "description": {"x"}}, map[string]string{"Sec-Fetch-Site": "cross-site"}).
			want(t, http.StatusForbidden).contains(t, "Cross-site request refused")
		ab.do(t, "POST", edit, url.Values{"name": {"Evil"}, "description": {"x"}}, map[string]string{"Origin": "http://evil.example"}).
			want(t, http.StatusForbidden)
		if got := s.Get(t, apiRel, alice.Token).Want(t, http.StatusOK).Object(t); got["name"] != "One" || got["description"] != "The first" {
			t.Fatalf("refused posts changed the release: %v / %v", got["name"], got["description"])
		}

		// Bad input: the form again with the reason, nothing saved.
		ab.do(t, "POST", edit, url.Values{"name": {"Two"}, "description": {"kept"}, "released_at": {"yesterday"}}, same).
			want(t, http.StatusBadRequest).contains(t, `data-testid="release-alert"`, "Released at is not a date", `value="Two"`, ">\nkept</textarea>")
		ab.do(t, "POST", edit, url.Values{"name": {"Two"}, "description": {"kept"}, "link_name": {"Bad"}, "link_url": {"javascript:alert(1)"}}, same).
			want(t, http.StatusBadRequest).contains(t, "The asset link was not added: Url is blocked")
		ab.do(t, "POST", edit, url.Values{"name": {strings.Repeat("n", 256)}, "description": {"kept"}}, same).
			want(t, http.StatusBadRequest).contains(t, "Name is too long")
		ab.do(t, "POST", edit, url.Values{"name": {"Two"}, "milestones_shown": {"1"}, "milestones": {"Nope"}}, same).
			want(t, http.StatusBadRequest).contains(t, "Milestone(s) not found: Nope")
		// A form past its bound (the notes' limit and room for the rest)
		// is refused whole: 413, nothing read.
		ab.do(t, "POST", edit, url.Values{"name": {"Two"}, "description": {strings.Repeat("x", releases.MaxDescription+65<<10)}}, same).
			want(t, http.StatusRequestEntityTooLarge).contains(t, "larger than this page takes")
		if got := s.Get(t, apiRel, alice.Token).Want(t, http.StatusOK).Object(t); got["name"] != "One" {
			t.Fatalf("a refused form changed the release: %v", got["name"])
		}

		// The maintainer saves: title, notes (with an attempt at script),
		// date, a milestone, one link removed and one added.
		notes := "Fixed <script>alert('notes')</script> and <img src=x onerror=alert(2)>.\r\n\r\n**Bold** notes"
		r = ab.do(t, "POST", edit, url.Values{"name": {"Two <b>x</b>"}, "description": {notes}, "released_at": {"2026-02-03T04:05:06"},
			"milestones_shown": {"1"}, "milestones": {"M1", ""}, "remove_link": {oldLink[1]},
			"link_name": {"New binary"}, "link_url": {"https://example.com/new"}, "link_type": {"package"}}, same).want(t, http.StatusSeeOther)
		if r.Header.Get("Location") != show {
			t.Errorf("saved: Location %q; want %q", r.Header.Get("Location"), show)
		}
		got := s.Get(t, apiRel, alice.Token).Want(t, http.StatusOK).Object(t)
		if got["name"] != "Two <b>x</b>" || got["description"] != strings.ReplaceAll(notes, "\r\n", "\n") ||
			got["released_at"] != "2026-02-03T04:05:06.000Z" {
			t.Errorf("API after the save: name %v, description %q, released_at %v", got["name"], got["description"], got["released_at"])
		}
		if ms, _ := got["milestones"].([]any); len(ms) != 1 || ms[0].(map[string]any)["title"] != "M1" {
			t.Errorf("API milestones %v; want M1", got["milestones"])
		}
		links := got["assets"].(map[string]any)["links"].([]any)
		if len(links) != 1 || links[0].(map[string]any)["name"] != "New binary" || links[0].(map[string]any)["link_type"] != "package" {
			t.Errorf("API links %v; want the new binary only", links)
		}
		// The release page tells it was saved (once) and shows the notes
		// escaped.
		var flash string
		for _, c := range (&http.Response{Header: r.Header}).Cookies() {
			if c.Name == "_quarry_flash" {
				flash = c.Name + "=" + c.Value
			}
		}
		if flash == "" {
			t.Fatal("no flash cookie after the save")
		}
		pg = ab.do(t, "GET", show, nil, map[string]string{"Cookie": web.SessionCookie + "=" + ab.cookie + "; " + flash}).
			want(t, http.StatusOK).contains(t, `data-testid="flash"`, "The release was saved.",
			`Two &lt;b&gt;x&lt;/b&gt;`, "<strong>Bold</strong>", `href="https://example.com/new"`, "Milestones: M1").
			lacks(t, "<script>alert", "onerror", "<b>x</b>", "Old binary")
		cleared := false
		for _, c := range (&http.Response{Header: pg.Header}).Cookies() {
			cleared = cleared || c.Name == "_quarry_flash" && c.MaxAge < 0
		}
		if !cleared {
			t.Error("the flash was not cleared")
		}
		ab.get(t, show).want(t, http.StatusOK).lacks(t, `data-testid="flash"`)

		// A developer may edit too; what the form leaves alone stays.
		db.get(t, edit).want(t, http.StatusOK).contains(t, `value="2026-02-03T04:05:06"`)
		db.do(t, "POST", edit, url.Values{"name": {"Three"}, "description": {"By dave"}, "released_at": {"2026-02-03T04:05:06"}}, same).
			want(t, http.StatusSeeOther)
		got = s.Get(t, apiRel, alice.Token).Want(t, http.StatusOK).Object(t)
		if got["name"] != "Three" || got["description"] != "By dave" || got["released_at"] != "2026-02-03T04:05:06.000Z" {
			t.Errorf("after dave: name %v, description %v, released_at %v", got["name"], got["description"], got["released_at"])
		}
		if ms, _ := got["milestones"].([]any); len(ms) != 1 {
			t.Errorf("a form without milestones changed them: %v", got["milestones"])
		}
		db.do(t, "POST", edit, url.Values{"name": {"Four"}}, same).want(t, http.StatusSeeOther)
		if got = s.Get(t, apiRel, alice.Token).Want(t, http.StatusOK).Object(t); got["name"] != "Four" || got["description"] != "By dave" {
			t.Errorf("a post of the title alone: name %v, description %v", got["name"], got["description"])
		}

		// A missing release, and a missing project, are 404s.
		ab.get(t, "/alice/secret/-/releases/v9/edit").want(t, http.StatusNotFound)
		ab.do(t, "POST", "/alice/secret/-/releases/v9/edit", url.Values{"name": {"x"}}, same).want(t, http.StatusNotFound)
		ab.get(t, "/alice/nothing/-/releases/v1/edit").want(t, http.StatusNotFound)
		// A tag named like the page is its own release page, not a form.
		s.Do(t, apitest.Request{Method: "POST", Path: "/projects/" + pid + "/releases", Token: alice.Token,
			JSON: map[string]any{"tag_name": "x/edit", "ref": "main", "name": "Slashed"}}).Want(t, http.StatusCreated)
		ab.get(t, "/alice/secret/-/releases/x%2Fedit").want(t, http.StatusOK).contains(t, "Slashed").lacks(t, `data-testid="release-form"`)
		ab.get(t, "/alice/secret/-/releases/x%2Fedit/edit").want(t, http.StatusOK).contains(t, `data-testid="release-form"`, `value="Slashed"`)

		// An archived project's releases are read-only: no form.
		s.Do(t, apitest.Request{Method: "POST", Path: "/projects/" + pid + "/archive", Token: alice.Token}).Want(t, http.StatusCreated)
		ab.get(t, show).want(t, http.StatusOK).lacks(t, `data-testid="release-edit"`)
		ab.get(t, edit).want(t, http.StatusNotFound)
	})
}
