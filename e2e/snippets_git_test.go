package e2e

import (
	"context"
	"database/sql"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"quarry/internal/apitest"
)

// Snippets over git: clones by who may read, pushes by who may edit, a
// push that changes what the API shows, GitLab's refusals of pushes that
// would make a snippet invalid, and the read-only flag of a storage move.

// setSnippetReadOnly sets a snippet's repository_read_only flag in the
// server's database, as a storage move does.
func setSnippetReadOnly(t *testing.T, s *apitest.Server, id int64, readOnly bool) {
	t.Helper()
	driver, dsn := "sqlite", "file:"+s.SQLitePath()+"?_pragma=busy_timeout(10000)"
	q := "UPDATE snippets SET repository_read_only = ? WHERE id = ?"
	if s.Target.DatabaseURL != "" {
		driver, dsn, q = "pgx", s.Target.DatabaseURL, "UPDATE snippets SET repository_read_only = $1 WHERE id = $2"
	}
	db, err := sql.Open(driver, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := db.ExecContext(ctx, q, readOnly, id); err != nil {
		t.Fatalf("set read-only: %v", err)
	}
}

// gitFails runs git expecting it to fail with msg in its output.
func gitFails(t *testing.T, dir, msg string, args ...string) {
	t.Helper()
	out, err := gitRun(dir, args...)
	if err == nil {
		t.Fatalf("git %v succeeded; want %q\n%s", args, msg, out)
	}
	if !strings.Contains(out, msg) {
		t.Fatalf("git %v: %s\nwant %q", args, out, msg)
	}
}

func TestSnippets_gitCloneAndPush(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		owner, other := s.NewUser(t, "owner"), s.NewUser(t, "other")
		priv := newSnippet(t, s, owner.Token, "/snippets", "Priv", "private", "a.txt", "one\n", "b/c.txt", "two\n")
		pub := newSnippet(t, s, owner.Token, "/snippets", "Pub", "public", "p.txt", "public\n")
		work := t.TempDir()
		path := fmt.Sprintf("snippets/%d", priv)

		// Clones: the author, not anonymous callers (asked for
		// credentials) nor other users (nothing there).
		w := filepath.Join(work, "w")
		gitOut(t, work, "clone", "-q", cloneURL(s, path, "owner", owner.Token), "w")
		if b, err := os.ReadFile(filepath.Join(w, "b", "c.txt")); err != nil || string(b) != "two\n" {
			t.Fatalf("cloned %q, %v", b, err)
		}
		if br := strings.TrimSpace(gitOut(t, w, "branch", "--show-current")); br != "main" {
			t.Errorf("branch %q", br)
		}
		gitFails(t, work, "could not read Username", "clone", "-q", cloneURL(s, path, "", ""), "anon")
		gitFails(t, work, "The snippet you were looking for could not be found.", "clone", "-q", cloneURL(s, path, "other", other.Token), "other")
		gitFails(t, work, "The snippet you were looking for could not be found.", "clone", "-q", cloneURL(s, "snippets/"+itoa(s.AbsentID(t)), "owner", owner.Token), "none")
		gitOut(t, work, "clone", "-q", cloneURL(s, fmt.Sprintf("snippets/%d", pub), "", ""), "pubanon")

		// A push changes what the API shows: files, file_name, content.
		writeFile(t, filepath.Join(w, "0.md"), "zero\n")
		writeFile(t, filepath.Join(w, "a.txt"), "one, pushed\n")
		gitOut(t, w, "add", "-A")
		gitOut(t, w, "commit", "-q", "-m", "pushed")
		gitOut(t, w, "push", "-q", "origin", "main")
		m := s.Get(t, "/snippets/"+itoa(priv), owner.Token).Want(t, http.StatusOK).Object(t)
		if m["file_name"] != "0.md" || len(m["files"].([]any)) != 3 {
			t.Errorf("after push: file_name %v files %v", m["file_name"], m["files"])
		}
		s.Get(t, "/snippets/"+itoa(priv)+"/files/main/a.txt/raw", owner.Token).Want(t, http.StatusOK).WantText(t, "one, pushed\n")
		s.Get(t, "/snippets/"+itoa(priv)+"/raw", owner.Token).Want(t, http.StatusOK).WantText(t, "zero\n")
		// An API write lands on top of the pushed commit.
		s.Do(t, apitest.Request{Method: "PUT", Path: "/snippets/" + itoa(priv), Token: owner.Token,
			JSON: map[string]any{"files": []map[string]any{{"action": "delete", "file_path": "0.md"}}}}).Want(t, http.StatusOK)
		gitOut(t, w, "pull", "-q", "origin", "main")
		if _, err := os.Stat(filepath.Join(w, "0.md")); !os.IsNotExist(err) {
			t.Errorf("the API's delete did not reach the clone: %v", err)
		}

		// Pushes GitLab's snippet checks refuse.
		const noBranches = "You can not create or delete branches."
		gitOut(t, w, "checkout", "-q", "-b", "feature")
		gitFails(t, w, noBranches, "push", "origin", "feature")
		gitOut(t, w, "checkout", "-q", "main")
		gitOut(t, w, "tag", "v1")
		gitFails(t, w, noBranches, "push", "origin", "v1")
		gitFails(t, w, noBranches, "push", "origin", ":main")
		for i := 0; i < 9; i++ {
			writeFile(t, filepath.Join(w, fmt.Sprintf("many/%d.txt", i)), "x\n")
		}
		gitOut(t, w, "add", "-A")
		gitOut(t, w, "commit", "-q", "-m", "eleven files")
		gitFails(t, w, "The repository can contain at most 10 file(s).", "push", "origin", "main")
		gitOut(t, w, "reset", "-q", "--hard", "origin/main")
		gitOut(t, w, "rm", "-q", "-r", ".")
		gitOut(t, w, "commit", "-q", "-m", "empty")
		gitFails(t, w, "The repository must contain at least 1 file.", "push", "origin", "main")
		gitOut(t, w, "reset", "-q", "--hard", "origin/main")
		s.Do(t, apitest.Request{Method: "PUT", Path: "/application/settings", Token: s.RootToken, JSON: map[string]any{"snippet_size_limit": 100}}).Want(t, 200)
		writeFile(t, filepath.Join(w, "big.txt"), strings.Repeat("x", 200))
		gitOut(t, w, "add", "-A")
		gitOut(t, w, "commit", "-q", "-m", "big")
		gitFails(t, w, "exceeded the allocated storage", "push", "origin", "main")
		gitOut(t, w, "reset", "-q", "--hard", "origin/main")
		// None of them changed anything.
		if m := s.Get(t, "/snippets/"+itoa(priv), owner.Token).Object(t); len(m["files"].([]any)) != 2 {
			t.Errorf("refused pushes changed the files: %v", m["files"])
		}

		// Pushes by who may not edit.
		p := filepath.Join(work, "pubanon")
		writeFile(t, filepath.Join(p, "p.txt"), "changed\n")
		gitOut(t, p, "commit", "-q", "-am", "x")
		gitFails(t, p, "could not read Username", "push", cloneURL(s, fmt.Sprintf("snippets/%d", pub), "", ""), "main")
		gitFails(t, p, "You are not allowed to update this snippet.", "push", cloneURL(s, fmt.Sprintf("snippets/%d", pub), "other", other.Token), "main")
		gitOut(t, p, "push", "-q", cloneURL(s, fmt.Sprintf("snippets/%d", pub), "owner", owner.Token), "main")
		// A token without write_repository clones but does not push.
		ro := s.NewToken(t, owner.ID, "read_repository")
		gitOut(t, work, "clone", "-q", cloneURL(s, path, "owner", ro), "ro")
		gitFails(t, p, "does not have the scope", "push", cloneURL(s, fmt.Sprintf("snippets/%d", pub), "owner", ro), "main")

		// While the repository moves between storages it takes no writes,
		// over git or the API; it is read as before.
		setSnippetReadOnly(t, s, priv, true)
		const readOnly = "The repository is temporarily read-only. Please try again later."
		writeFile(t, filepath.Join(w, "a.txt"), "during the move\n")
		gitOut(t, w, "commit", "-q", "-am", "during the move")
		gitFails(t, w, readOnly, "push", "origin", "main")
		s.Do(t, apitest.Request{Method: "PUT", Path: "/snippets/" + itoa(priv), Token: owner.Token, JSON: map[string]any{"title": "x"}}).
			Want(t, http.StatusForbidden).WantBody(t, `{"message":"`+readOnly+`"}`)
		s.Do(t, apitest.Request{Method: "DELETE", Path: "/snippets/" + itoa(priv), Token: owner.Token}).Want(t, http.StatusForbidden).
			WantBody(t, `{"message":"`+readOnly+`"}`)
		s.Get(t, "/snippets/"+itoa(priv)+"/raw", owner.Token).Want(t, http.StatusOK)
		gitOut(t, work, "clone", "-q", cloneURL(s, path, "owner", owner.Token), "during")
		setSnippetReadOnly(t, s, priv, false)
		gitOut(t, w, "push", "-q", "origin", "main")
		s.Get(t, "/snippets/"+itoa(priv)+"/files/main/a.txt/raw", owner.Token).Want(t, http.StatusOK).WantText(t, "during the move\n")
	})
}

// TestSnippets_gitProjectSnippets clones and pushes projects' snippets at
// <project path>/snippets/<id>.git: members by role, the project's own
// repository untouched beside them.
func TestSnippets_gitProjectSnippets(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		owner, dev, maint, guest, outsider := s.NewUser(t, "owner"), s.NewUser(t, "dev"), s.NewUser(t, "maint"), s.NewUser(t, "guest"), s.NewUser(t, "outsider")
		var p struct{ ID int64 }
		s.Do(t, apitest.Request{Method: "POST", Path: "/projects", Token: owner.Token, JSON: map[string]any{"name": "proj", "visibility": "private",
			"initialize_with_readme": true}}).Want(t, 201).JSON(t, &p)
		for u, lvl := range map[apitest.User]int{dev: 30, maint: 40, guest: 10} {
			s.Do(t, apitest.Request{Method: "POST", Path: "/projects/" + itoa(p.ID) + "/members", Token: owner.Token,
				JSON: map[string]any{"user_id": u.ID, "access_level": lvl}}).Want(t, 201)
		}
		priv := newSnippet(t, s, dev.Token, "/projects/"+itoa(p.ID)+"/snippets", "Dev's", "private", "d.txt", "dev\n")
		internal := newSnippet(t, s, dev.Token, "/projects/"+itoa(p.ID)+"/snippets", "Internal", "internal", "i.txt", "int\n")
		work := t.TempDir()
		path := fmt.Sprintf("owner/proj/snippets/%d", priv)

		// Members clone; others see nothing.
		gitOut(t, work, "clone", "-q", cloneURL(s, path, "guest", guest.Token), "guest")
		gitFails(t, work, "The snippet you were looking for could not be found.", "clone", "-q", cloneURL(s, path, "x", outsider.Token), "out")
		gitFails(t, work, "could not be found", "clone", "-q", cloneURL(s, fmt.Sprintf("owner/proj/snippets/%d", s.AbsentID(t)), "x", owner.Token), "none")
		// Another project's path, or a personal snippet's id under a
		// project, names nothing.
		personal := newSnippet(t, s, owner.Token, "/snippets", "P", "public", "x", "y")
		gitFails(t, work, "could not be found", "clone", "-q", cloneURL(s, fmt.Sprintf("owner/proj/snippets/%d", personal), "x", owner.Token), "wrong")
		gitFails(t, work, "could not be found", "clone", "-q", cloneURL(s, fmt.Sprintf("snippets/%d", priv), "x", outsider.Token), "wrong2")

		// The author and maintainers push; a guest does not; a
		// maintainer does not push to an internal snippet of another
		// (GitLab keeps internal snippets to their authors).
		g := filepath.Join(work, "guest")
		writeFile(t, filepath.Join(g, "d.txt"), "by guest\n")
		gitOut(t, g, "commit", "-q", "-am", "guest")
		gitFails(t, g, "You are not allowed to update this snippet.", "push", "origin", "main")
		gitOut(t, g, "push", "-q", cloneURL(s, path, "maint", maint.Token), "main")
		writeFile(t, filepath.Join(g, "d.txt"), "by dev\n")
		gitOut(t, g, "commit", "-q", "-am", "dev")
		gitOut(t, g, "push", "-q", cloneURL(s, path, "dev", dev.Token), "main")
		s.Get(t, "/projects/"+itoa(p.ID)+"/snippets/"+itoa(priv)+"/raw", guest.Token).Want(t, http.StatusOK).WantText(t, "by dev\n")
		ipath := fmt.Sprintf("owner/proj/snippets/%d", internal)
		gitOut(t, work, "clone", "-q", cloneURL(s, ipath, "maint", maint.Token), "int")
		i := filepath.Join(work, "int")
		writeFile(t, filepath.Join(i, "i.txt"), "by maint\n")
		gitOut(t, i, "commit", "-q", "-am", "maint")
		gitFails(t, i, "You are not allowed to update this snippet.", "push", "origin", "main")
		// The project's own repository is still the project's.
		gitOut(t, work, "clone", "-q", cloneURL(s, "owner/proj", "dev", dev.Token), "project")
		if _, err := os.Stat(filepath.Join(work, "project", "README.md")); err != nil {
			t.Errorf("project clone: %v", err)
		}
	})
}

// TestSnippets_concurrentWrites: API writes racing each other and a push
// all land, each as its own commit (the branch moves by compare-and-swap).
func TestSnippets_concurrentWrites(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		owner := s.NewUser(t, "owner")
		id := newSnippet(t, s, owner.Token, "/snippets", "Busy", "private", "base.txt", "base\n")
		work := t.TempDir()
		w := filepath.Join(work, "w")
		gitOut(t, work, "clone", "-q", cloneURL(s, fmt.Sprintf("snippets/%d", id), "owner", owner.Token), "w")
		writeFile(t, filepath.Join(w, "pushed.txt"), "pushed\n")
		gitOut(t, w, "add", "-A")
		gitOut(t, w, "commit", "-q", "-m", "pushed")
		const writers = 4
		done := make(chan int, writers+1)
		for i := 0; i < writers; i++ {
			go func(i int) {
				r := s.Do(t, apitest.Request{Method: "PUT", Path: "/snippets/" + itoa(id), Token: owner.Token,
					JSON: map[string]any{"files": []map[string]any{{"action": "create", "file_path": fmt.Sprintf("api%d.txt", i), "content": "x"}}}})
				done <- r.Status
			}(i)
		}
		go func() {
			// The push may lose to an API write that moved the branch
			// first: then it is fetched, rebased and pushed again.
			for try := 0; try < 10; try++ {
				if _, err := gitRun(w, "push", "-q", "origin", "main"); err == nil {
					done <- http.StatusOK
					return
				}
				gitRun(w, "pull", "-q", "--rebase", "origin", "main")
			}
			done <- 0
		}()
		for i := 0; i < writers+1; i++ {
			if st := <-done; st != http.StatusOK {
				t.Errorf("a writer got %d", st)
			}
		}
		m := s.Get(t, "/snippets/"+itoa(id), owner.Token).Want(t, http.StatusOK).Object(t)
		if n := len(m["files"].([]any)); n != writers+2 {
			t.Errorf("%d files after %d writers and a push: %v", n, writers, m["files"])
		}
		if n := strings.Count(gitOut(t, snippetRepoDir(s, id), "log", "--format=%s", "main"), "\n"); n != writers+2 {
			t.Errorf("%d commits; want %d", n, writers+2)
		}
	})
}
