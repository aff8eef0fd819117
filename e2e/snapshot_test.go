package e2e

import (
	"archive/tar"
	"bytes"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"quarry/internal/apitest"
)

// untar extracts a snapshot into a fresh folder named like a bare
// repository and returns it.
func untar(t *testing.T, data []byte) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "restored.git")
	tr := tar.NewReader(bytes.NewReader(data))
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return dir
		}
		if err != nil {
			t.Fatalf("snapshot is not a tar: %v", err)
		}
		if strings.HasPrefix(h.Name, "/") || strings.Contains(h.Name, "..") || strings.Contains(h.Name, ".lock") || strings.HasPrefix(h.Name, "hooks") {
			t.Errorf("snapshot entry %q", h.Name)
			continue
		}
		p := filepath.Join(dir, filepath.FromSlash(h.Name))
		if h.Typeflag == tar.TypeDir {
			if err := os.MkdirAll(p, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestSnapshot_restorableTarForAdmins(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		owner := s.NewUser(t, "owner")
		var p struct{ ID int64 }
		s.Do(t, apitest.Request{Method: "POST", Path: "/projects", Token: owner.Token, JSON: map[string]any{"name": "app", "initialize_with_readme": true}}).Want(t, 201).JSON(t, &p)
		tip := pushCommits(t, s, p.ID, 3)
		s.Do(t, apitest.Request{Method: "POST", Path: "/projects/" + itoa(p.ID) + "/repository/branches", Token: owner.Token,
			JSON: map[string]any{"branch": "topic", "ref": "main"}}).Want(t, 201)
		s.Do(t, apitest.Request{Method: "POST", Path: "/projects/" + itoa(p.ID) + "/repository/tags", Token: owner.Token,
			JSON: map[string]any{"tag_name": "v1", "ref": "main", "message": "release"}}).Want(t, 201)
		// Debris of a live repository stays out of the copy.
		src := repoDir(t, s, p.ID)
		writeFile(t, filepath.Join(src, "refs", "heads", "main.lock"), "0\n")

		r := s.Get(t, "/projects/"+itoa(p.ID)+"/snapshot", s.RootToken).Want(t, 200)
		for k, want := range map[string]string{"Content-Type": "application/x-tar", "Content-Disposition": `attachment; filename="snapshot.tar"`,
			"Content-Transfer-Encoding": "binary", "Cache-Control": "private", "Content-Length": ""} {
			if got := r.Header.Get(k); got != want {
				t.Errorf("%s: %q; want %q", k, got, want)
			}
		}
		dir := untar(t, r.Body)
		refs := func(repo string) string { return git(t, repo, "for-each-ref", "--format=%(objectname) %(refname)") }
		if got, want := refs(dir), refs(src); got != want || !strings.Contains(got, "refs/tags/v1") {
			t.Errorf("snapshot refs\n%s\nwant\n%s", got, want)
		}
		git(t, dir, "fsck", "--full", "--no-dangling")
		work := t.TempDir()
		git(t, work, "clone", "-q", dir, "c")
		c := filepath.Join(work, "c")
		if got := git(t, c, "rev-parse", "HEAD"); got != tip {
			t.Errorf("clone HEAD %s; want %s", got, tip)
		}
		if n := strings.Count(git(t, c, "log", "--format=%H"), "\n") + 1; n != 4 {
			t.Errorf("clone has %d commits; want 4", n)
		}
		if got := git(t, c, "cat-file", "-p", "origin/topic:README.md"); !strings.HasPrefix(got, "# app") {
			t.Errorf("README from the topic branch %q", got)
		}

		// By path, and with wiki=false.
		s.Get(t, "/projects/"+url.PathEscape("owner/app")+"/snapshot?wiki=false", s.RootToken).Want(t, 200)
		// No wiki repository: 404, as a missing repository is.
		s.Get(t, "/projects/"+itoa(p.ID)+"/snapshot?wiki=true", s.RootToken).Want(t, 404).WantBody(t, `{"message":"404 Repository Not Found"}`)
	})
}

func TestSnapshot_emptyRepository(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		owner := s.NewUser(t, "owner")
		var p struct{ ID int64 }
		s.Do(t, apitest.Request{Method: "POST", Path: "/projects", Token: owner.Token, JSON: map[string]any{"name": "empty"}}).Want(t, 201).JSON(t, &p)
		dir := untar(t, s.Get(t, "/projects/"+itoa(p.ID)+"/snapshot", s.RootToken).Want(t, 200).Body)
		out, err := gitRun(t.TempDir(), "clone", dir, "c")
		if err != nil || !strings.Contains(out, "empty repository") {
			t.Errorf("clone of an empty snapshot: %v\n%s", err, out)
		}
	})
}

func TestSnapshot_permissionsAndBadInput(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		owner, dev := s.NewUser(t, "owner"), s.NewUser(t, "dev")
		var p struct{ ID int64 }
		s.Do(t, apitest.Request{Method: "POST", Path: "/projects", Token: owner.Token, JSON: map[string]any{"name": "app", "visibility": "public"}}).Want(t, 201).JSON(t, &p)
		s.Do(t, apitest.Request{Method: "POST", Path: "/projects/" + itoa(p.ID) + "/members", Token: owner.Token,
			JSON: map[string]any{"user_id": dev.ID, "access_level": 30}}).Want(t, 201)
		path := "/projects/" + itoa(p.ID) + "/snapshot"
		s.Get(t, path, "").Want(t, 401).WantBody(t, `{"message":"401 Unauthorized"}`)
		// Even the project's owner is refused: snapshots are for administrators.
		s.Get(t, path, owner.Token).Want(t, 403).WantBody(t, `{"message":"403 Forbidden"}`)
		s.Get(t, path, dev.Token).Want(t, 403).WantBody(t, `{"message":"403 Forbidden"}`)
		s.Get(t, "/projects/"+itoa(s.AbsentID(t))+"/snapshot", owner.Token).Want(t, 403)
		// The caller is checked before the parameters (GitLab's before hook).
		s.Get(t, path+"?wiki=maybe", owner.Token).Want(t, 403)
		s.Get(t, path+"?wiki=maybe", s.RootToken).Want(t, 400).WantBody(t, `{"error":"wiki is invalid"}`)
		s.Get(t, "/projects/"+itoa(s.AbsentID(t))+"/snapshot", s.RootToken).Want(t, 404).WantBody(t, `{"message":"404 Project Not Found"}`)
		s.Get(t, "/projects/99999999999999999999999/snapshot", s.RootToken).Want(t, 404).WantBody(t, `{"message":"404 Project Not Found"}`)
		s.Get(t, "/projects/"+url.PathEscape("owner/nope")+"/snapshot", s.RootToken).Want(t, 404).WantBody(t, `{"message":"404 Project Not Found"}`)
		// A token without the api scopes is refused.
		s.Get(t, path, s.NewToken(t, s.RootID(t), "read_repository")).Want(t, 403)
		s.Get(t, path, s.NewToken(t, s.RootID(t), "read_api")).Want(t, 200)
		for _, m := range []string{"PUT", "POST"} {
			s.Do(t, apitest.Request{Method: m, Path: path, Token: s.RootToken}).Want(t, 405)
		}
	})
}
