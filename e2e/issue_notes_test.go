package e2e

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"quarry/internal/apitest"
	"quarry/internal/model"
)

// Issue notes end to end: GitLab's Notes and Award Emoji APIs on an
// issue, on both databases — the entities, create, list, read, edit and
// delete with members' roles, non-members, anonymous callers, private
// projects, locked discussions, internal notes, bad input, the issue's
// counts, and an issue's deletion.

// noteWorld is issWorld with a maintainer and one issue (iid 1) opened
// by the guest.
type noteWorld struct {
	issWorld
	maintainer apitest.User
	notes      string // /projects/:id/issues/1/notes
	awards     string // /projects/:id/issues/1/award_emoji
}

func newNoteWorld(t *testing.T, s *apitest.Server, vis string) noteWorld {
	t.Helper()
	w := noteWorld{issWorld: newIssWorld(t, s, vis), maintainer: s.NewUser(t, "notemaintainer")}
	s.Do(t, apitest.Request{Method: "POST", Path: "/projects/" + itoa(w.project) + "/members", Token: w.owner.Token,
		JSON: map[string]any{"user_id": w.maintainer.ID, "access_level": 40}}).Want(t, 201)
	w.create(t, w.guest.Token, map[string]any{"title": "discuss"})
	w.notes, w.awards = w.base+"/1/notes", w.base+"/1/award_emoji"
	return w
}

func (w noteWorld) req(t *testing.T, method, path, token string, body map[string]any) *apitest.Response {
	t.Helper()
	return w.s.Do(t, apitest.Request{Method: method, Path: path, Token: token, JSON: body})
}

// comment adds a note as token and returns it.
func (w noteWorld) comment(t *testing.T, token, body string, extra ...any) map[string]any {
	t.Helper()
	in := map[string]any{"body": body}
	for k := 0; k+1 < len(extra); k += 2 {
		in[extra[k].(string)] = extra[k+1]
	}
	return w.req(t, "POST", w.notes, token, in).Want(t, http.StatusCreated).Object(t)
}

// issue reads issue 1 as token.
func (w noteWorld) issue(t *testing.T, token string) map[string]any {
	t.Helper()
	return w.req(t, "GET", w.base+"/1", token, nil).Want(t, http.StatusOK).Object(t)
}

func noteBodies(t *testing.T, r *apitest.Response) string {
	t.Helper()
	var out []string
	for _, n := range r.Array(t) {
		out = append(out, fmt.Sprint(n["body"]))
	}
	return strings.Join(out, ",")
}

func TestIssueNotes_entity(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		w := newNoteWorld(t, s, "public")
		n := w.comment(t, w.stranger.Token, "first **comment**")
		want := "attachment,author,body,commands_changes,confidential,created_at,id,imported,imported_from,internal,noteable_id," +
			"noteable_iid,noteable_type,project_id,resolvable,system,type,updated_at"
		if got := issSortedKeys(n); got != want {
			t.Errorf("keys %s;\nwant %s", got, want)
		}
		issue := w.issue(t, w.owner.Token)
		for k, v := range map[string]any{"body": "first **comment**", "type": nil, "attachment": nil, "system": false,
			"noteable_type": "Issue", "noteable_id": issue["id"], "noteable_iid": float64(1), "project_id": float64(w.project),
			"resolvable": false, "confidential": false, "internal": false} {
			if fmt.Sprint(n[k]) != fmt.Sprint(v) {
				t.Errorf("%s %v; want %v", k, n[k], v)
			}
		}
		if a, _ := n["author"].(map[string]any); a["username"] != w.stranger.Username || a["id"] != float64(w.stranger.ID) {
			t.Errorf("author %v", n["author"])
		}
		if c, ok := n["commands_changes"].(map[string]any); !ok || len(c) != 0 {
			t.Errorf("commands_changes %v", n["commands_changes"])
		}
		if n["created_at"] != n["updated_at"] || n["created_at"] == nil {
			t.Errorf("times %v %v", n["created_at"], n["updated_at"])
		}
		got := w.req(t, "GET", fmt.Sprintf("%s/%v", w.notes, n["id"]), w.guest.Token, nil).Want(t, 200).Object(t)
		if got["id"] != n["id"] || got["body"] != n["body"] {
			t.Errorf("get %v; want %v", got, n)
		}
		e := w.req(t, "POST", w.awards, w.stranger.Token, map[string]any{"name": "thumbsup"}).Want(t, 201).Object(t)
		want = "awardable_id,awardable_type,created_at,id,name,updated_at,url,user"
		if got := issSortedKeys(e); got != want {
			t.Errorf("award keys %s;\nwant %s", got, want)
		}
		if e["name"] != "thumbsup" || e["awardable_type"] != "Issue" || e["awardable_id"] != issue["id"] || e["url"] != nil {
			t.Errorf("award %v", e)
		}
		if u, _ := e["user"].(map[string]any); u["username"] != w.stranger.Username {
			t.Errorf("award user %v", e["user"])
		}
		got = w.req(t, "GET", fmt.Sprintf("%s/%v", w.awards, e["id"]), w.owner.Token, nil).Want(t, 200).Object(t)
		if got["id"] != e["id"] || got["name"] != "thumbsup" {
			t.Errorf("get award %v", got)
		}
	})
}

func TestIssueNotes_listOrderAndPages(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		w := newNoteWorld(t, s, "public")
		for _, b := range []string{"a", "b", "c"} {
			w.comment(t, w.reporter.Token, b)
		}
		if got := noteBodies(t, w.req(t, "GET", w.notes, w.guest.Token, nil).Want(t, 200)); got != "c,b,a" {
			t.Errorf("default order %s; want c,b,a", got)
		}
		if got := noteBodies(t, w.req(t, "GET", w.notes+"?sort=asc", w.guest.Token, nil).Want(t, 200)); got != "a,b,c" {
			t.Errorf("asc %s; want a,b,c", got)
		}
		first := w.req(t, "GET", w.notes+"?sort=asc", w.guest.Token, nil).Want(t, 200).Array(t)[0]
		w.req(t, "PUT", fmt.Sprintf("%s/%v", w.notes, first["id"]), w.reporter.Token, map[string]any{"body": "a2"}).Want(t, 200)
		if got := noteBodies(t, w.req(t, "GET", w.notes+"?order_by=updated_at", w.guest.Token, nil).Want(t, 200)); got != "a2,c,b" {
			t.Errorf("by updated_at %s; want a2,c,b", got)
		}
		r := w.req(t, "GET", w.notes+"?sort=asc&per_page=2&page=2", w.guest.Token, nil).Want(t, 200)
		if got := noteBodies(t, r); got != "c" || r.Header.Get("X-Total") != "3" || r.Header.Get("X-Page") != "2" {
			t.Errorf("page 2: %s, total %q, page %q", got, r.Header.Get("X-Total"), r.Header.Get("X-Page"))
		}
		if got := noteBodies(t, w.req(t, "GET", w.notes+"?activity_filter=only_comments&sort=asc", w.guest.Token, nil).Want(t, 200)); got != "a2,b,c" {
			t.Errorf("only_comments %s; want a2,b,c", got)
		}
		w.req(t, "GET", w.notes+"?activity_filter=only_activity", w.guest.Token, nil).Want(t, 200).WantBody(t, `[]`)
		for _, q := range []string{"?sort=up", "?order_by=title", "?per_page=x", "?activity_filter=some"} {
			if st := w.req(t, "GET", w.notes+q, w.guest.Token, nil).Status; st != 400 {
				t.Errorf("GET notes%s: %d; want 400", q, st)
			}
		}
	})
}

// TestIssueNotes_permissions: who reads, writes, edits and deletes notes
// and award emoji on a public and on a private project.
func TestIssueNotes_permissions(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		w := newNoteWorld(t, s, "public")
		// Anonymous callers: GitLab's notes and award emoji APIs need a
		// signed-in caller, reads included.
		w.req(t, "GET", w.notes, "", nil).Want(t, 401).WantBody(t, `{"message":"401 Unauthorized"}`)
		w.req(t, "POST", w.notes, "", map[string]any{"body": "x"}).Want(t, 401)
		w.req(t, "GET", w.awards, "", nil).Want(t, 401)
		// Anyone signed in comments on a public project's issue.
		byStranger := w.comment(t, w.stranger.Token, "outsider")
		byGuest := w.comment(t, w.guest.Token, "guest")
		sn, gn := fmt.Sprintf("%s/%v", w.notes, byStranger["id"]), fmt.Sprintf("%s/%v", w.notes, byGuest["id"])
		// The author edits their note; a guest or reporter not the author
		// may not (403); a maintainer may (GitLab's admin_note).
		w.req(t, "PUT", sn, w.stranger.Token, map[string]any{"body": "outsider, edited"}).Want(t, 200)
		w.req(t, "PUT", sn, w.guest.Token, map[string]any{"body": "no"}).Want(t, 403).WantBody(t, `{"message":"403 Forbidden"}`)
		w.req(t, "PUT", sn, w.reporter.Token, map[string]any{"body": "no"}).Want(t, 403)
		e := w.req(t, "PUT", sn, w.maintainer.Token, map[string]any{"body": "moderated"}).Want(t, 200).Object(t)
		if e["body"] != "moderated" {
			t.Errorf("edited body %v", e["body"])
		}
		if a, _ := e["author"].(map[string]any); a["username"] != w.stranger.Username {
			t.Errorf("author after a maintainer's edit %v", e["author"])
		}
		// PUT without a body changes nothing; a blank body is refused.
		w.req(t, "PUT", sn, w.stranger.Token, map[string]any{}).Want(t, 200)
		w.req(t, "PUT", sn, w.stranger.Token, map[string]any{"body": ""}).Want(t, 400).WantBody(t, `{"error":"body is empty"}`)
		// Deleting: the stranger may not delete the guest's note; the
		// author and maintainers may.
		w.req(t, "DELETE", gn, w.stranger.Token, nil).Want(t, 403)
		w.req(t, "DELETE", gn, w.reporter.Token, nil).Want(t, 403)
		w.req(t, "DELETE", gn, w.guest.Token, nil).Want(t, 204)
		w.req(t, "GET", gn, w.guest.Token, nil).Want(t, 404).WantBody(t, `{"message":"404 Note Not Found"}`)
		w.req(t, "DELETE", sn, w.maintainer.Token, nil).Want(t, 204)
		if got := noteBodies(t, w.req(t, "GET", w.notes, w.owner.Token, nil).Want(t, 200)); got != "" {
			t.Errorf("notes left %q", got)
		}
		// Award emoji: anyone signed in awards; only the awarder (or an
		// administrator) takes it back (GitLab's 401 for others).
		e = w.req(t, "POST", w.awards, w.stranger.Token, map[string]any{"name": "tada"}).Want(t, 201).Object(t)
		an := fmt.Sprintf("%s/%v", w.awards, e["id"])
		w.req(t, "DELETE", an, w.owner.Token, nil).Want(t, 401).WantBody(t, `{"message":"401 Unauthorized"}`)
		w.req(t, "DELETE", an, w.stranger.Token, nil).Want(t, 204)
		w.req(t, "GET", an, w.stranger.Token, nil).Want(t, 404).WantBody(t, `{"message":"404 Not found"}`)
		e = w.req(t, "POST", w.awards, w.guest.Token, map[string]any{"name": "tada"}).Want(t, 201).Object(t)
		w.req(t, "DELETE", fmt.Sprintf("%s/%v", w.awards, e["id"]), s.RootToken, nil).Want(t, 204)

		// A private project: non-members see no issue (404), members do.
		p := newNoteWorldNamed(t, s, "private")
		p.req(t, "GET", p.notes, p.stranger.Token, nil).Want(t, 404).WantBody(t, `{"message":"404 Project Not Found"}`)
		p.req(t, "POST", p.notes, p.stranger.Token, map[string]any{"body": "x"}).Want(t, 404)
		p.req(t, "POST", p.awards, p.stranger.Token, map[string]any{"name": "tada"}).Want(t, 404)
		n := p.comment(t, p.guest.Token, "member")
		p.req(t, "GET", fmt.Sprintf("%s/%v", p.notes, n["id"]), p.stranger.Token, nil).Want(t, 404)
		p.req(t, "GET", fmt.Sprintf("%s/%v", p.notes, n["id"]), p.reporter.Token, nil).Want(t, 200)
		p.req(t, "POST", p.awards, p.guest.Token, map[string]any{"name": "thumbsdown"}).Want(t, 201)
	})
}

// newNoteWorldNamed is a noteWorld in a second group (a test's second
// world needs other paths and users).
func newNoteWorldNamed(t *testing.T, s *apitest.Server, vis string) noteWorld {
	t.Helper()
	w := noteWorld{issWorld: issWorld{s: s, owner: s.NewUser(t, "pnowner"), reporter: s.NewUser(t, "pnreporter"),
		guest: s.NewUser(t, "pnguest"), stranger: s.NewUser(t, "pnstranger")}, maintainer: s.NewUser(t, "pnmaintainer")}
	var g, p struct{ ID int64 }
	s.Do(t, apitest.Request{Method: "POST", Path: "/groups", Token: w.owner.Token,
		JSON: map[string]any{"name": "pn", "path": "pn", "visibility": vis}}).Want(t, 201).JSON(t, &g)
	s.Do(t, apitest.Request{Method: "POST", Path: "/projects", Token: w.owner.Token,
		JSON: map[string]any{"name": "app", "namespace_id": g.ID, "visibility": vis}}).Want(t, 201).JSON(t, &p)
	w.group, w.project, w.base = g.ID, p.ID, "/projects/"+itoa(p.ID)+"/issues"
	for _, m := range []struct {
		u     apitest.User
		level int
	}{{w.reporter, 20}, {w.guest, 10}, {w.maintainer, 40}} {
		s.Do(t, apitest.Request{Method: "POST", Path: "/projects/" + itoa(p.ID) + "/members", Token: w.owner.Token,
			JSON: map[string]any{"user_id": m.u.ID, "access_level": m.level}}).Want(t, 201)
	}
	w.create(t, w.guest.Token, map[string]any{"title": "discuss"})
	w.notes, w.awards = w.base+"/1/notes", w.base+"/1/award_emoji"
	return w
}

// TestIssueNotes_lockedAndArchived: a locked discussion takes members'
// comments only (GitLab's is_project_member); an archived project none.
func TestIssueNotes_lockedAndArchived(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		w := newNoteWorld(t, s, "public")
		own := w.comment(t, w.stranger.Token, "before the lock")
		w.req(t, "PUT", w.base+"/1", w.reporter.Token, map[string]any{"discussion_locked": true}).Want(t, 200)
		w.req(t, "POST", w.notes, w.stranger.Token, map[string]any{"body": "locked out"}).Want(t, 403).
			WantBody(t, `{"message":"403 Forbidden"}`)
		w.req(t, "PUT", fmt.Sprintf("%s/%v", w.notes, own["id"]), w.stranger.Token, map[string]any{"body": "edit"}).Want(t, 403)
		w.req(t, "POST", w.awards, w.stranger.Token, map[string]any{"name": "tada"}).Want(t, 404).
			WantBody(t, `{"message":"404 Award Emoji Not Found"}`)
		// Reading stays open.
		w.req(t, "GET", w.notes, w.stranger.Token, nil).Want(t, 200)
		w.comment(t, w.guest.Token, "a member still comments")
		w.comment(t, w.reporter.Token, "so does a reporter")
		w.req(t, "PUT", w.base+"/1", w.reporter.Token, map[string]any{"discussion_locked": false}).Want(t, 200)
		w.comment(t, w.stranger.Token, "unlocked")

		w.req(t, "POST", "/projects/"+itoa(w.project)+"/archive", w.owner.Token, nil).Want(t, 201)
		w.req(t, "POST", w.notes, w.owner.Token, map[string]any{"body": "archived"}).Want(t, 403)
		w.req(t, "POST", w.awards, w.owner.Token, map[string]any{"name": "tada"}).Want(t, 404)
		w.req(t, "GET", w.notes, w.owner.Token, nil).Want(t, 200)
	})
}

// TestIssueNotes_internal: internal notes are made by reporters up and
// seen by them only; a guest's internal flag is dropped (GitLab saves
// the note public).
func TestIssueNotes_internal(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		w := newNoteWorld(t, s, "public")
		in := w.comment(t, w.reporter.Token, "secret", "internal", true)
		if in["internal"] != true || in["confidential"] != true {
			t.Errorf("internal note %v %v", in["internal"], in["confidential"])
		}
		old := w.comment(t, w.maintainer.Token, "secret too", "confidential", true)
		if old["internal"] != true {
			t.Errorf("confidential=true note internal %v", old["internal"])
		}
		pub := w.comment(t, w.guest.Token, "guest tries", "internal", true)
		if pub["internal"] != false {
			t.Errorf("guest's internal note internal %v; want false", pub["internal"])
		}
		for _, c := range []struct {
			who   apitest.User
			notes string
			count float64
		}{{w.guest, "guest tries", 1}, {w.stranger, "guest tries", 1}, {w.reporter, "guest tries,secret too,secret", 3},
			{w.owner, "guest tries,secret too,secret", 3}} {
			if got := noteBodies(t, w.req(t, "GET", w.notes, c.who.Token, nil).Want(t, 200)); got != c.notes {
				t.Errorf("%s sees %q; want %q", c.who.Username, got, c.notes)
			}
			if got := w.issue(t, c.who.Token)["user_notes_count"]; got != c.count {
				t.Errorf("%s: user_notes_count %v; want %v", c.who.Username, got, c.count)
			}
			list := w.req(t, "GET", w.base, c.who.Token, nil).Want(t, 200).Array(t)
			if len(list) != 1 || list[0]["user_notes_count"] != c.count {
				t.Errorf("%s: list's user_notes_count %v; want %v", c.who.Username, list, c.count)
			}
		}
		id := fmt.Sprintf("%s/%v", w.notes, in["id"])
		w.req(t, "GET", id, w.guest.Token, nil).Want(t, 404).WantBody(t, `{"message":"404 Note Not Found"}`)
		w.req(t, "PUT", id, w.guest.Token, map[string]any{"body": "x"}).Want(t, 404)
		w.req(t, "DELETE", id, w.stranger.Token, nil).Want(t, 404)
		w.req(t, "GET", id, w.reporter.Token, nil).Want(t, 200)
	})
}

// TestIssueNotes_counts: the issue's user_notes_count, upvotes and
// downvotes, in the single issue and in lists.
func TestIssueNotes_counts(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		w := newNoteWorld(t, s, "public")
		w.create(t, w.owner.Token, map[string]any{"title": "other"})
		for _, u := range []apitest.User{w.owner, w.reporter, w.stranger} {
			w.req(t, "POST", w.awards, u.Token, map[string]any{"name": "thumbsup"}).Want(t, 201)
		}
		w.req(t, "POST", w.awards, w.guest.Token, map[string]any{"name": "thumbsdown"}).Want(t, 201)
		w.req(t, "POST", w.awards, w.guest.Token, map[string]any{"name": "tada"}).Want(t, 201)
		before := w.issue(t, w.stranger.Token)["updated_at"]
		time.Sleep(5 * time.Millisecond)
		w.comment(t, w.owner.Token, "one")
		w.comment(t, w.guest.Token, "two")
		i := w.issue(t, w.stranger.Token)
		// A comment is the issue's activity (GitLab's touch_noteable).
		if fmt.Sprint(i["updated_at"]) <= fmt.Sprint(before) {
			t.Errorf("updated_at %v after comments; before %v", i["updated_at"], before)
		}
		if i["upvotes"] != float64(3) || i["downvotes"] != float64(1) || i["user_notes_count"] != float64(2) {
			t.Errorf("counts up %v down %v notes %v; want 3 1 2", i["upvotes"], i["downvotes"], i["user_notes_count"])
		}
		list := w.req(t, "GET", w.base+"?sort=asc", w.stranger.Token, nil).Want(t, 200).Array(t)
		if len(list) != 2 || list[0]["upvotes"] != float64(3) || list[0]["user_notes_count"] != float64(2) ||
			list[1]["upvotes"] != float64(0) || list[1]["user_notes_count"] != float64(0) {
			t.Errorf("list counts %v", list)
		}
		if got := len(w.req(t, "GET", w.awards, w.stranger.Token, nil).Want(t, 200).Array(t)); got != 5 {
			t.Errorf("%d award emoji; want 5", got)
		}
	})
}

// TestIssueNotes_badInput: missing, blank and huge bodies, unknown and
// repeated emoji, bad and foreign ids — GitLab's answers, never a 500.
func TestIssueNotes_badInput(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		w := newNoteWorld(t, s, "public")
		tok := w.reporter.Token
		w.req(t, "POST", w.notes, tok, map[string]any{}).Want(t, 400).WantBody(t, `{"error":"body is missing"}`)
		w.req(t, "POST", w.notes, tok, map[string]any{"body": "   "}).Want(t, 400).
			WantBody(t, `{"message":"400 Bad request - Note {:note=>[\"can't be blank\"]}"}`)
		w.req(t, "POST", w.notes, tok, map[string]any{"body": strings.Repeat("é", 1_000_001)}).Want(t, 400).
			WantBody(t, `{"message":"400 Bad request - Note {:note=>[\"is too long (maximum is 1000000 characters)\"]}"}`)
		w.comment(t, tok, strings.Repeat("é", 1_000_000))
		w.req(t, "POST", w.notes, tok, map[string]any{"body": strings.Repeat("x", 11<<20)}).Want(t, 413)
		n := w.comment(t, tok, "ok")
		w.req(t, "PUT", fmt.Sprintf("%s/%v", w.notes, n["id"]), tok, map[string]any{"body": strings.Repeat("x", 1_000_001)}).Want(t, 400)
		w.req(t, "POST", w.notes, tok, map[string]any{"body": "x", "created_at": "yesterday"}).Want(t, 400)

		w.req(t, "POST", w.awards, tok, map[string]any{}).Want(t, 400).WantBody(t, `{"error":"name is missing"}`)
		for _, name := range []string{"no_such_emoji", ":tada:", strings.Repeat("a", 300), "../x"} {
			w.req(t, "POST", w.awards, tok, map[string]any{"name": name}).Want(t, 404).
				WantBody(t, `{"message":"404 Award Emoji [\"Name is not a valid emoji name\"] Not Found"}`)
		}
		w.req(t, "POST", w.awards, tok, map[string]any{"name": "thumbsup"}).Want(t, 201)
		w.req(t, "POST", w.awards, tok, map[string]any{"name": "thumbsup"}).Want(t, 404).
			WantBody(t, `{"message":"404 Award Emoji [\"Name has already been taken\"] Not Found"}`)

		for _, p := range []string{w.notes + "/999999", w.notes + "/0", w.base + "/99/notes", w.awards + "/999999",
			w.base + "/99/award_emoji", "/projects/999999/issues/1/notes"} {
			if r := w.req(t, "GET", p, tok, nil); r.Status != 404 {
				t.Errorf("GET %s: %d %s; want 404", p, r.Status, r.Body)
			}
		}
		w.req(t, "GET", w.notes+"/999999", tok, nil).WantBody(t, `{"message":"404 Note Not Found"}`)
		w.req(t, "GET", w.base+"/99/notes", tok, nil).WantBody(t, `{"message":"404 Issue Not Found"}`)
		w.req(t, "DELETE", w.awards+"/999999", tok, nil).Want(t, 404)
		w.req(t, "PUT", w.notes+"/999999", tok, map[string]any{"body": "x"}).Want(t, 404)
		for _, p := range []string{w.notes + "/abc", w.awards + "/abc", w.base + "/x/notes"} {
			if r := w.req(t, "GET", p, tok, nil); r.Status != 404 {
				t.Errorf("GET %s: %d; want 404", p, r.Status)
			}
		}
		// A note of another issue is not this issue's.
		w.create(t, tok, map[string]any{"title": "other"})
		other := w.req(t, "POST", w.base+"/2/notes", tok, map[string]any{"body": "elsewhere"}).Want(t, 201).Object(t)
		w.req(t, "GET", fmt.Sprintf("%s/%v", w.notes, other["id"]), tok, nil).Want(t, 404)
		w.req(t, "DELETE", fmt.Sprintf("%s/%v", w.notes, other["id"]), tok, nil).Want(t, 404)
	})
}

// TestIssueNotes_createdAt: an owner's or administrator's backdated note
// keeps its date; others' created_at is ignored.
func TestIssueNotes_createdAt(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		w := newNoteWorld(t, s, "public")
		n := w.comment(t, w.owner.Token, "old", "created_at", "2020-01-02T03:04:05Z")
		if n["created_at"] != "2020-01-02T03:04:05.000Z" || n["updated_at"] != n["created_at"] {
			t.Errorf("owner's created_at %v updated_at %v", n["created_at"], n["updated_at"])
		}
		n = w.comment(t, w.reporter.Token, "new", "created_at", "2020-01-02T03:04:05Z")
		if strings.HasPrefix(fmt.Sprint(n["created_at"]), "2020") {
			t.Errorf("reporter's created_at %v kept", n["created_at"])
		}
	})
}

// TestIssueNotes_deletedIssue: an issue's deletion takes its notes and
// award emoji with it.
func TestIssueNotes_deletedIssue(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		w := newNoteWorld(t, s, "public")
		issue := w.issue(t, w.owner.Token)
		w.comment(t, w.guest.Token, "gone soon")
		w.req(t, "POST", w.awards, w.guest.Token, map[string]any{"name": "thumbsup"}).Want(t, 201)
		w.req(t, "DELETE", w.base+"/1", w.owner.Token, nil).Want(t, 204)
		w.req(t, "GET", w.notes, w.owner.Token, nil).Want(t, 404).WantBody(t, `{"message":"404 Issue Not Found"}`)
		c, err := s.App.DB.NoteCountsOf(context.Background(), model.NoteableIssue, []int64{int64(issue["id"].(float64))})
		if err != nil || len(c) != 0 {
			t.Errorf("the deleted issue's notes and votes %v (%v); want none", c, err)
		}
	})
}

// TestIssueNotes_queryCounts: a page of notes costs the same statements
// whatever its size.
func TestIssueNotes_queryCounts(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		qc := newQueryCounter(t, s)
		w := newNoteWorld(t, s, "public")
		users := []apitest.User{w.owner, w.reporter, w.guest, w.stranger}
		for i := 0; i < listRows; i++ {
			w.comment(t, users[i%len(users)].Token, fmt.Sprintf("note %d", i))
		}
		qc.same(t, w.notes, w.owner.Token)
		qc.same(t, w.notes+"?order_by=updated_at&sort=asc", w.stranger.Token)
	})
}

// TestIssueNotes_removal: a removed user's notes stay (no author), their
// award emoji go; a removed project takes its issues' notes and emoji.
func TestIssueNotes_removal(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		w := newNoteWorld(t, s, "public")
		issue := w.issue(t, w.owner.Token)
		w.comment(t, w.stranger.Token, "from a passer-by")
		w.req(t, "POST", w.awards, w.stranger.Token, map[string]any{"name": "thumbsup"}).Want(t, 201)
		w.req(t, "POST", w.awards, w.owner.Token, map[string]any{"name": "thumbsup"}).Want(t, 201)
		w.comment(t, w.owner.Token, "from the owner")
		s.Do(t, apitest.Request{Method: "DELETE", Path: "/users/" + itoa(w.stranger.ID), Token: s.RootToken}).Want(t, 204)
		eventually(t, "the user gone", func() bool { return s.Get(t, "/users/"+itoa(w.stranger.ID), s.RootToken).Status == 404 })
		list := w.req(t, "GET", w.notes+"?sort=asc", w.owner.Token, nil).Want(t, 200).Array(t)
		if len(list) != 2 || list[0]["body"] != "from a passer-by" || list[0]["author"] != nil {
			t.Errorf("notes after the author's removal: %v", list)
		}
		if i := w.issue(t, w.owner.Token); i["upvotes"] != float64(1) || i["user_notes_count"] != float64(2) {
			t.Errorf("counts after a removal: up %v notes %v; want 1 2", i["upvotes"], i["user_notes_count"])
		}
		s.Do(t, apitest.Request{Method: "DELETE", Path: "/projects/" + itoa(w.project), Token: w.owner.Token}).Want(t, 202)
		eventually(t, "the project gone", func() bool { return s.Get(t, "/projects/"+itoa(w.project), w.owner.Token).Status == 404 })
		// The project's row goes after its repository, in the background.
		eventually(t, "the removed project's notes and votes gone", func() bool {
			c, err := s.App.DB.NoteCountsOf(context.Background(), model.NoteableIssue, []int64{int64(issue["id"].(float64))})
			if err != nil {
				t.Fatal(err)
			}
			return len(c) == 0
		})
	})
}

// TestIssueNotes_participants: an issue's participants are its author,
// its assignees and the authors of the comments the caller sees.
func TestIssueNotes_participants(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		w := newNoteWorld(t, s, "public")
		w.comment(t, w.stranger.Token, "one")
		w.comment(t, w.stranger.Token, "two")
		w.comment(t, w.maintainer.Token, "hidden", "internal", true)
		w.comment(t, w.guest.Token, "the author again")
		names := func(token string) string {
			var out []string
			for _, u := range w.req(t, "GET", w.base+"/1/participants", token, nil).Want(t, 200).Array(t) {
				out = append(out, fmt.Sprint(u["username"]))
			}
			return strings.Join(out, ",")
		}
		if got, want := names(w.reporter.Token), w.guest.Username+","+w.stranger.Username+","+w.maintainer.Username; got != want {
			t.Errorf("participants for a reporter %s; want %s", got, want)
		}
		if got, want := names(w.guest.Token), w.guest.Username+","+w.stranger.Username; got != want {
			t.Errorf("participants for a guest %s; want %s", got, want)
		}
	})
}
