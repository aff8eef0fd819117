package e2e

import (
	"encoding/base64"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"testing"

	"quarry/internal/apitest"
)

func TestFiles_write(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		owner := s.NewUser(t, "owner")
		var p struct{ ID int64 }
		s.Do(t, apitest.Request{Method: "POST", Path: "/projects", Token: owner.Token, JSON: map[string]any{"name": "w", "visibility": "public"}}).Want(t, 201).JSON(t, &p)
		base := "/projects/" + itoa(p.ID) + "/repository/files/"
		do := func(method, path, token string, body map[string]any) *apitest.Response {
			return s.Do(t, apitest.Request{Method: method, Path: base + url.PathEscape(path), Token: token, JSON: body})
		}
		// The first commit creates the branch of an empty repository.
		do("POST", "src/main.go", owner.Token, map[string]any{"branch": "main", "content": "package main\n", "commit_message": "first"}).Want(t, 201).
			WantBody(t, `{"file_path":"src/main.go","branch":"main"}`)
		proj := s.Get(t, "/projects/"+itoa(p.ID), owner.Token).Object(t)
		if proj["empty_repo"] != false || proj["default_branch"] != "main" {
			t.Errorf("after first commit %v %v", proj["empty_repo"], proj["default_branch"])
		}
		f := s.Get(t, base+url.PathEscape("src/main.go")+"?ref=main", "").Want(t, 200).Object(t)
		first := f["last_commit_id"].(string)
		// Base64, author fields.
		do("POST", "bin/x.bin", owner.Token, map[string]any{"branch": "main", "content": base64.StdEncoding.EncodeToString([]byte{0, 1, 2}),
			"encoding": "base64", "commit_message": "bin", "author_name": "Ada", "author_email": "ada@example.com"}).Want(t, 201)
		raw := s.Get(t, base+"bin%2Fx.bin/raw?ref=main", "").Want(t, 200)
		if string(raw.Body) != "\x00\x01\x02" {
			t.Errorf("base64 content %q", raw.Body)
		}
		// Update with the right and a stale last_commit_id.
		do("PUT", "src/main.go", owner.Token, map[string]any{"branch": "main", "content": "package main // v2\n", "commit_message": "v2", "last_commit_id": first}).Want(t, 200).
			WantBody(t, `{"file_path":"src/main.go","branch":"main"}`)
		do("PUT", "src/main.go", owner.Token, map[string]any{"branch": "main", "content": "v3", "commit_message": "v3", "last_commit_id": first}).Want(t, 400).
			WantBody(t, `{"message":"You are attempting to update a file that has changed since you started editing it."}`)
		do("PUT", "src/main.go", owner.Token, map[string]any{"branch": "main", "content": "package main // v2\n", "commit_message": "same"}).Want(t, 400)
		do("POST", "src/main.go", owner.Token, map[string]any{"branch": "main", "content": "x", "commit_message": "dup"}).Want(t, 400).
			WantBody(t, `{"message":"A file with this name already exists"}`)
		do("PUT", "nope.txt", owner.Token, map[string]any{"branch": "main", "content": "x", "commit_message": "m"}).Want(t, 400).
			WantBody(t, `{"message":"A file with this name doesn't exist"}`)
		do("POST", "src", owner.Token, map[string]any{"branch": "main", "content": "x", "commit_message": "m"}).Want(t, 400).
			WantBody(t, `{"message":"A directory with this name already exists"}`)
		do("POST", "a/../../x", owner.Token, map[string]any{"branch": "main", "content": "x", "commit_message": "m"}).Want(t, 400).
			WantBody(t, `{"error":"file_path should be a valid file path"}`)
		do("POST", "x.txt", owner.Token, map[string]any{"branch": "main", "commit_message": "m"}).Want(t, 400).WantBody(t, `{"error":"content is missing"}`)
		do("POST", "x.txt", owner.Token, map[string]any{"content": "x"}).Want(t, 400).WantBody(t, `{"error":"branch is missing, commit_message is missing"}`)
		do("POST", "x.txt", owner.Token, map[string]any{"branch": "main", "content": "!!", "encoding": "base64", "commit_message": "m"}).Want(t, 400)
		do("POST", "x.txt", "", map[string]any{"branch": "main", "content": "x", "commit_message": "m"}).Want(t, 401)
		// start_branch creates a branch; an existing target is refused.
		do("POST", "feature.txt", owner.Token, map[string]any{"branch": "feature", "start_branch": "main", "content": "f", "commit_message": "f"}).Want(t, 201)
		s.Get(t, base+"feature.txt?ref=feature", "").Want(t, 200)
		s.Get(t, base+"feature.txt?ref=main", "").Want(t, 404)
		do("POST", "g.txt", owner.Token, map[string]any{"branch": "feature", "start_branch": "main", "content": "g", "commit_message": "g"}).Want(t, 400).
			WantBody(t, `{"message":"A branch called 'feature' already exists. Switch to that branch in order to make changes"}`)
		do("POST", "g.txt", owner.Token, map[string]any{"branch": "other", "start_branch": "ghost", "content": "g", "commit_message": "g"}).Want(t, 400).
			WantBody(t, `{"message":"You can only create or edit files when you are on a branch"}`)
		do("POST", "g.txt", owner.Token, map[string]any{"branch": "bad..name", "start_branch": "main", "content": "g", "commit_message": "g"}).Want(t, 400)
		// Delete, with a stale last_commit_id refused.
		do("DELETE", "feature.txt", owner.Token, map[string]any{"branch": "feature", "commit_message": "rm", "last_commit_id": first}).Want(t, 400).
			WantBody(t, `{"message":"You are attempting to delete a file that has been previously updated."}`)
		do("DELETE", "feature.txt", owner.Token, map[string]any{"branch": "feature", "commit_message": "rm"}).Want(t, 204)
		s.Get(t, base+"feature.txt?ref=feature", "").Want(t, 404)
		// Protected default branch: developers write elsewhere only.
		dev := s.NewUser(t, "dev")
		reporter := s.NewUser(t, "rep")
		s.Do(t, apitest.Request{Method: "POST", Path: "/projects/" + itoa(p.ID) + "/members", Token: owner.Token, JSON: map[string]any{"user_id": dev.ID, "access_level": 30}}).Want(t, 201)
		s.Do(t, apitest.Request{Method: "POST", Path: "/projects/" + itoa(p.ID) + "/members", Token: owner.Token, JSON: map[string]any{"user_id": reporter.ID, "access_level": 20}}).Want(t, 201)
		do("POST", "dev.txt", dev.Token, map[string]any{"branch": "main", "content": "d", "commit_message": "d"}).Want(t, 403).
			WantBody(t, `{"message":"403 Forbidden - You are not allowed to push into this branch"}`)
		do("POST", "dev.txt", dev.Token, map[string]any{"branch": "dev-branch", "start_branch": "main", "content": "d", "commit_message": "d"}).Want(t, 201)
		do("POST", "rep.txt", reporter.Token, map[string]any{"branch": "rep-branch", "start_branch": "main", "content": "r", "commit_message": "r"}).Want(t, 403)
		outsider := s.NewUser(t, "outsider")
		do("POST", "o.txt", outsider.Token, map[string]any{"branch": "o", "start_branch": "main", "content": "o", "commit_message": "o"}).Want(t, 403)
	})
}

// Eight writers on one branch: different files all land, each once; the
// same file lands once per accepted request and the rest are refused.
func TestFiles_concurrentWriters(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		owner := s.NewUser(t, "owner")
		var p struct{ ID int64 }
		s.Do(t, apitest.Request{Method: "POST", Path: "/projects", Token: owner.Token, JSON: map[string]any{"name": "c", "initialize_with_readme": true}}).Want(t, 201).JSON(t, &p)
		base := "/projects/" + itoa(p.ID) + "/repository/files/"
		count := func() int {
			return len(strings.Fields(git(t, repoDir(t, s, p.ID), "rev-list", "main")))
		}
		before := count()
		var wg sync.WaitGroup
		statuses := make([]int, 8)
		for i := 0; i < 8; i++ {
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				statuses[i] = s.Do(t, apitest.Request{Method: "POST", Path: base + fmt.Sprintf("f%d.txt", i), Token: owner.Token,
					JSON: map[string]any{"branch": "main", "content": fmt.Sprint(i), "commit_message": fmt.Sprint("add ", i)}}).Status
			}(i)
		}
		wg.Wait()
		for i, st := range statuses {
			if st != 201 {
				t.Errorf("writer %d: %d", i, st)
			}
		}
		if got := count() - before; got != 8 {
			t.Errorf("%d commits for 8 different files", got)
		}
		// All eight files are there.
		for i := 0; i < 8; i++ {
			s.Get(t, base+fmt.Sprintf("f%d.txt?ref=main", i), owner.Token).Want(t, 200)
		}
		// One file, eight writers.
		before = count()
		accepted := 0
		var mu sync.Mutex
		for i := 0; i < 8; i++ {
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				st := s.Do(t, apitest.Request{Method: "PUT", Path: base + "README.md", Token: owner.Token,
					JSON: map[string]any{"branch": "main", "content": fmt.Sprint("version ", i), "commit_message": "edit"}}).Status
				mu.Lock()
				defer mu.Unlock()
				switch st {
				case 200:
					accepted++
				case 400:
				default:
					t.Errorf("same-file writer %d: %d", i, st)
				}
			}(i)
		}
		wg.Wait()
		if accepted < 1 {
			t.Error("no update accepted")
		}
		if got := count() - before; got != accepted {
			t.Errorf("%d commits for %d accepted updates", got, accepted)
		}
	})
}
