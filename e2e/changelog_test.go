package e2e

import (
	"fmt"
	"net/url"
	"path/filepath"
	"strings"
	"testing"

	"quarry/internal/apitest"
	"quarry/internal/git/gittest"
)

// historyRepo builds commits in a work tree with chosen authors and
// increasing dates, so that the order of history is fixed.
type historyRepo struct {
	t    *testing.T
	dir  string
	tick int
}

func (h *historyRepo) git(env []string, args ...string) string {
	h.t.Helper()
	return gittest.Run(h.t, h.dir, append([]string{"GIT_COMMITTER_NAME=CI", "GIT_COMMITTER_EMAIL=ci@example.com",
		"GIT_AUTHOR_NAME=Someone", "GIT_AUTHOR_EMAIL=someone@example.com"}, env...), args...)
}

func (h *historyRepo) dates() []string {
	h.tick++
	d := fmt.Sprintf("@%d +0000", 1700000000+h.tick*60)
	return []string{"GIT_AUTHOR_DATE=" + d, "GIT_COMMITTER_DATE=" + d}
}

// commit writes a file and commits it as author with message.
func (h *historyRepo) commit(author, file, message string) string {
	h.t.Helper()
	writeFile(h.t, filepath.Join(h.dir, file), fmt.Sprintf("%s %d\n", file, h.tick))
	h.git(nil, "add", "-A")
	env := append(h.dates(), "GIT_AUTHOR_NAME="+author, "GIT_AUTHOR_EMAIL="+author+"@example.com")
	h.git(env, "commit", "-q", "-m", message)
	return h.git(nil, "rev-parse", "HEAD")
}

func (h *historyRepo) revert(sha, extra string) string {
	h.t.Helper()
	subject := h.git(nil, "log", "-1", "--format=%s", sha)
	msg := fmt.Sprintf("Revert %q\n\nThis reverts commit %s.%s", subject, sha, extra)
	h.git(h.dates(), "revert", "--no-edit", sha)
	h.git(h.dates(), "commit", "-q", "--amend", "-m", msg)
	return h.git(nil, "rev-parse", "HEAD")
}

func TestChangelog(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		owner := s.NewUser(t, "owner")
		alice := s.NewUser(t, "alice")
		s.NewUser(t, "bob")
		reporter := s.NewUser(t, "reporter")
		var g struct{ ID int64 }
		s.Do(t, apitest.Request{Method: "POST", Path: "/groups", Token: owner.Token, JSON: map[string]any{"name": "Team", "path": "team", "visibility": "public"}}).Want(t, 201).JSON(t, &g)
		s.Do(t, apitest.Request{Method: "POST", Path: "/groups/" + itoa(g.ID) + "/members", Token: owner.Token,
			JSON: map[string]any{"user_id": alice.ID, "access_level": 30}}).Want(t, 201)
		id := newRepoProject(t, s, owner.Token, "app", "public")
		s.Do(t, apitest.Request{Method: "POST", Path: "/projects/" + itoa(id) + "/members", Token: owner.Token,
			JSON: map[string]any{"user_id": reporter.ID, "access_level": 20}}).Want(t, 201)

		work := t.TempDir()
		git(t, work, "clone", "-q", repoDir(t, s, id), "w")
		h := &historyRepo{t: t, dir: filepath.Join(work, "w")}
		writeFile(t, filepath.Join(h.dir, ".service", "changelog_config.yml"),
			"categories:\n  added: Features\n  fixed: Bug fixes\n  other: Other\ninclude_groups:\n  - team\n  - no/such/group\n")
		h.commit("owner", "first.txt", "First feature\n\nChangelog: added")
		h.git(nil, "tag", "v1.0.0")
		search := h.commit("alice", "search.txt", "Add search\n\nSome words.\n\nChangelog: added")
		crash := h.commit("bob", "crash.txt", "Fix crash\n\nChangelog: fixed")
		h.commit("alice", "docs.txt", "Tweak docs")
		export := h.commit("stranger", "export.txt", "Add export\n\nChangelog: added")
		h.revert(export, "")
		imp := h.commit("alice", "import.txt", "Add import\n\nChangelog: added")
		removed := h.revert(imp, "\n\nChangelog: removed")
		h.commit("alice", "lower.txt", "Lowercase trailer\n\nchangelog: added")
		h.git(nil, "tag", "v1.1.0-rc1")
		h.git(nil, "checkout", "-q", "-b", "feature")
		feature := h.commit("bob", "feature.txt", "Add feature branch work\n\nChangelog: added")
		h.git(nil, "checkout", "-q", "main")
		h.git(h.dates(), "merge", "-q", "--no-ff", "-m", "Merge branch 'feature'", "feature")
		security := h.commit("owner", "sec.txt", "Security fix\n\nChangelog: security")
		h.git(nil, "push", "-q", "origin", "main", "--tags")
		// (The owner made the team group, so the owner is credited too.)

		base := "/projects/" + itoa(id) + "/repository/changelog"
		link := func(sha string) string { return s.URL + "/owner/app/-/commit/" + sha }
		want := "## 1.1.0 (2024-05-01)\n\n" +
			"### Features (2 changes)\n\n" +
			"- [Add feature branch work](" + link(feature) + ")\n" +
			"- [Add search](" + link(search) + ") by @alice\n\n" +
			"### Bug fixes (1 change)\n\n" +
			"- [Fix crash](" + link(crash) + ")\n\n" +
			"### security (1 change)\n\n" +
			"- [Security fix](" + link(security) + ") by @owner\n\n" +
			"### removed (1 change)\n\n" +
			"- [Revert \"Add import\"](" + link(removed) + ")\n\n"
		var notes struct{ Notes string }
		s.Get(t, base+"?version=1.1.0&date=2024-05-01T10:00:00Z", "").Want(t, 200).JSON(t, &notes)
		if notes.Notes != want {
			t.Errorf("notes\n%s\nwant\n%s", notes.Notes, want)
		}
		// An explicit range, another trailer, and no matches.
		s.Get(t, base+"?version=2.0.0&from="+search+"&to="+crash+"&date=2024-05-01", "").Want(t, 200).JSON(t, &notes)
		if !strings.Contains(notes.Notes, "## 2.0.0 (2024-05-01)\n\n### Bug fixes (1 change)\n\n- [Fix crash]") || strings.Contains(notes.Notes, "Add search") {
			t.Errorf("ranged notes %q", notes.Notes)
		}
		s.Get(t, base+"?version=1.1.0&trailer=Type&date=2024-05-01", "").Want(t, 200).JSON(t, &notes)
		if notes.Notes != "## 1.1.0 (2024-05-01)\n\nNo changes.\n\n" {
			t.Errorf("no changes %q", notes.Notes)
		}

		// Commit into CHANGELOG.md: created, then a lower version goes
		// below, and the same version again changes nothing.
		post := func(token string, body map[string]any) *apitest.Response {
			return s.Do(t, apitest.Request{Method: "POST", Path: base, Token: token, JSON: body})
		}
		post(owner.Token, map[string]any{"version": "1.1.0", "date": "2024-05-01"}).Want(t, 200)
		file := func() string {
			return string(s.Get(t, "/projects/"+itoa(id)+"/repository/files/CHANGELOG.md/raw?ref=main", "").Want(t, 200).Body)
		}
		if got := file(); got != want {
			t.Errorf("CHANGELOG.md\n%s\nwant\n%s", got, want)
		}
		last := s.Get(t, "/projects/"+itoa(id)+"/repository/commits/main", "").Want(t, 200).Object(t)
		if last["title"] != "Add changelog for version 1.1.0" || last["author_name"] != "Owner" {
			t.Errorf("changelog commit %v %v", last["title"], last["author_name"])
		}
		post(owner.Token, map[string]any{"version": "1.0.5", "from": "v1.0.0", "to": search, "date": "2024-04-01", "message": "Notes for 1.0.5"}).Want(t, 200)
		// An older release goes to the end, after a blank line.
		want105 := "\n## 1.0.5 (2024-04-01)\n\n### Features (1 change)\n\n- [Add search](" + link(search) + ") by @alice\n"
		if got := file(); got != want+want105 {
			t.Errorf("after 1.0.5:\n%s", got)
		}
		post(owner.Token, map[string]any{"version": "1.1.0", "date": "2024-06-01"}).Want(t, 200)
		if got := file(); got != want+want105 {
			t.Errorf("a second 1.1.0 changed the file:\n%s", got)
		}
		s.Do(t, apitest.Request{Method: "POST", Path: base, Token: owner.Token, JSON: map[string]any{"version": "1.2.0", "file": "docs/CHANGES.md", "branch": "topic"}}).Want(t, 422).
			WantBody(t, `{"message":"Failed to generate the changelog: Invalid or not found commit value in the given range"}`)

		// Bad input.
		s.Get(t, base, "").Want(t, 400).WantBody(t, `{"error":"version is missing"}`)
		s.Get(t, base+"?version=1.0", "").Want(t, 400).WantBody(t, `{"error":"version is invalid"}`)
		s.Get(t, base+"?version=0.1.0", "").Want(t, 422).
			WantBody(t, `{"message":"Failed to generate the changelog: The commit start range is unspecified, and no previous tag could be found to use instead"}`)
		s.Get(t, base+"?version=2.0.0&from=nope", "").Want(t, 422).
			WantBody(t, `{"message":"Failed to generate the changelog: Invalid or not found commit value in the given range"}`)
		post(reporter.Token, map[string]any{"version": "1.2.0"}).Want(t, 403).
			WantBody(t, `{"message":"403 Forbidden - You are not allowed to commit a changelog on this branch"}`)
		post("", map[string]any{"version": "1.2.0"}).Want(t, 401)
		for cfg, msg := range map[string]string{
			"categories: [a]":                       `The \"categories\" configuration key must be a Hash`,
			"template: \"ok\\n{% if x %}\\nnever\"": `Failed to parse the template: line 2: the if statement is not closed with {% end %}`,
		} {
			s.Do(t, apitest.Request{Method: "PUT", Path: "/projects/" + itoa(id) + "/repository/files/" + url.PathEscape(".service/changelog_config.yml"), Token: owner.Token,
				JSON: map[string]any{"branch": "main", "content": cfg, "commit_message": "config"}}).Want(t, 200)
			s.Get(t, base+"?version=1.2.0", "").Want(t, 422).WantBody(t, `{"message":"Failed to generate the changelog: `+msg+`"}`)
		}
		priv := newRepoProject(t, s, owner.Token, "priv", "private")
		s.Get(t, "/projects/"+itoa(priv)+"/repository/changelog?version=1.0.0", "").Want(t, 404)
	})
}
