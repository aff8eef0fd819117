package e2e

import (
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"quarry/internal/apitest"
)

// gitRun runs git with no credential helpers or prompts and returns its
// output and error.
func gitRun(dir string, args ...string) (string, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_TERMINAL_PROMPT=0", "GIT_ASKPASS=/bin/false", "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null",
		"GIT_AUTHOR_NAME=T", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=T", "GIT_COMMITTER_EMAIL=t@example.com")
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func cloneURL(s *apitest.Server, path, user, token string) string {
	u, _ := url.Parse(s.URL + "/" + path + ".git")
	if token != "" {
		u.User = url.UserPassword(user, token)
	}
	return u.String()
}

func TestGitHTTP_cloneAndPush(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		owner := s.NewUser(t, "owner")
		dev := s.NewUser(t, "dev")
		var p struct{ ID int64 }
		s.Do(t, apitest.Request{Method: "POST", Path: "/projects", Token: owner.Token, JSON: map[string]any{"name": "repo", "visibility": "private"}}).Want(t, 201).JSON(t, &p)
		s.Do(t, apitest.Request{Method: "POST", Path: "/projects/" + itoa(p.ID) + "/members", Token: owner.Token, JSON: map[string]any{"user_id": dev.ID, "access_level": 30}}).Want(t, 201)
		work := t.TempDir()
		// Owner pushes the first commit of an empty repository, on "trunk".
		w := filepath.Join(work, "w")
		if out, err := gitRun(work, "init", "-q", "-b", "trunk", "w"); err != nil {
			t.Fatal(out)
		}
		writeFile(t, filepath.Join(w, "README.md"), "hello\n")
		gitRun(w, "add", ".")
		gitRun(w, "commit", "-q", "-m", "first")
		if out, err := gitRun(w, "push", "-q", cloneURL(s, "owner/repo", "owner", owner.Token), "trunk"); err != nil {
			t.Fatalf("first push: %v\n%s", err, out)
		}
		proj := s.Get(t, "/projects/"+itoa(p.ID), owner.Token).Object(t)
		if proj["empty_repo"] != false || proj["default_branch"] != "trunk" {
			t.Errorf("after first push: empty %v default %v", proj["empty_repo"], proj["default_branch"])
		}
		// Anonymous clone of a private project fails; with a token it works.
		if out, err := gitRun(work, "clone", "-q", cloneURL(s, "owner/repo", "", ""), "anon"); err == nil {
			t.Fatalf("anonymous clone of a private project: %s", out)
		}
		if out, err := gitRun(work, "clone", "-q", cloneURL(s, "owner/repo", "x", dev.Token), "devclone"); err != nil {
			t.Fatalf("developer clone: %v\n%s", err, out)
		}
		dc := filepath.Join(work, "devclone")
		// Developer: a feature branch is fine, the protected default is not.
		writeFile(t, filepath.Join(dc, "f.txt"), "f\n")
		gitRun(dc, "add", ".")
		gitRun(dc, "commit", "-q", "-m", "feature")
		if out, err := gitRun(dc, "push", "-q", "origin", "HEAD:feature"); err != nil {
			t.Fatalf("developer push to a feature branch: %v\n%s", err, out)
		}
		out, err := gitRun(dc, "push", "origin", "HEAD:trunk")
		if err == nil || !strings.Contains(out, "not allowed to push code to protected branches") {
			t.Errorf("developer push to the protected branch: %v\n%s", err, out)
		}
		// The owner may; a force push and a deletion of it are refused.
		oc := filepath.Join(work, "ownerclone")
		gitRun(work, "clone", "-q", cloneURL(s, "owner/repo", "owner", owner.Token), "ownerclone")
		writeFile(t, filepath.Join(oc, "o.txt"), "o\n")
		gitRun(oc, "add", ".")
		gitRun(oc, "commit", "-q", "-m", "owner change")
		if out, err := gitRun(oc, "push", "-q", "origin", "trunk"); err != nil {
			t.Fatalf("owner push: %v\n%s", err, out)
		}
		gitRun(oc, "reset", "-q", "--hard", "HEAD~1")
		writeFile(t, filepath.Join(oc, "x.txt"), "x\n")
		gitRun(oc, "add", ".")
		gitRun(oc, "commit", "-q", "-m", "rewrite")
		if out, err := gitRun(oc, "push", "-f", "origin", "trunk"); err == nil || !strings.Contains(out, "force push") {
			t.Errorf("force push to the protected branch: %v\n%s", err, out)
		}
		if out, err := gitRun(oc, "push", "origin", ":trunk"); err == nil {
			t.Errorf("deleting the protected branch: %s", out)
		}
		// Token scopes: read_repository clones, cannot push.
		ro := s.NewToken(t, owner.ID, "read_repository")
		if out, err := gitRun(work, "clone", "-q", cloneURL(s, "owner/repo", "owner", ro), "roclone"); err != nil {
			t.Fatalf("read_repository clone: %v\n%s", err, out)
		}
		rc := filepath.Join(work, "roclone")
		writeFile(t, filepath.Join(rc, "r.txt"), "r\n")
		gitRun(rc, "add", ".")
		gitRun(rc, "commit", "-q", "-m", "r")
		if out, err := gitRun(rc, "push", "origin", "HEAD:ro-branch"); err == nil {
			t.Errorf("read_repository push: %s", out)
		}
		// read_api reads over git too (GitLab gives it download_code), and
		// pushes nothing.
		api := s.NewToken(t, owner.ID, "read_api")
		if out, err := gitRun(work, "clone", "-q", cloneURL(s, "owner/repo", "owner", api), "apiclone"); err != nil {
			t.Fatalf("read_api clone: %v\n%s", err, out)
		}
		ac := filepath.Join(work, "apiclone")
		writeFile(t, filepath.Join(ac, "a.txt"), "a\n")
		gitRun(ac, "add", ".")
		gitRun(ac, "commit", "-q", "-m", "a")
		if out, err := gitRun(ac, "push", "origin", "HEAD:api-branch"); err == nil {
			t.Errorf("read_api push: %s", out)
		}
		// A stranger sees nothing; a bad token is refused.
		stranger := s.NewUser(t, "stranger")
		if out, err := gitRun(work, "clone", "-q", cloneURL(s, "owner/repo", "s", stranger.Token), "sclone"); err == nil {
			t.Errorf("stranger clone: %s", out)
		}
		if out, err := gitRun(work, "clone", "-q", cloneURL(s, "owner/repo", "owner", "glpat-wrong"), "bad"); err == nil {
			t.Errorf("bad token clone: %s", out)
		}
		// The account password works too.
		if out, err := gitRun(work, "clone", "-q", cloneURL(s, "owner/repo", "owner", "Quarry-test-pass-1"), "pwclone"); err != nil {
			t.Errorf("password clone: %v\n%s", err, out)
		}
	})
}

func TestGitHTTP_publicAnonymousAndProtocolV2(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		owner := s.NewUser(t, "owner")
		s.Do(t, apitest.Request{Method: "POST", Path: "/projects", Token: owner.Token, JSON: map[string]any{"name": "pub", "visibility": "public", "initialize_with_readme": true}}).Want(t, 201)
		work := t.TempDir()
		for _, proto := range []string{"1", "2"} {
			dir := "c" + proto
			if out, err := gitRun(work, "-c", "protocol.version="+proto, "clone", "-q", cloneURL(s, "owner/pub", "", ""), dir); err != nil {
				t.Fatalf("anonymous clone (protocol %s): %v\n%s", proto, err, out)
			}
			if _, err := os.Stat(filepath.Join(work, dir, "README.md")); err != nil {
				t.Errorf("clone %s lacks README.md", proto)
			}
		}
		// Anonymous pushes need credentials.
		c := filepath.Join(work, "c2")
		writeFile(t, filepath.Join(c, "a.txt"), "a\n")
		gitRun(c, "add", ".")
		gitRun(c, "commit", "-q", "-m", "a")
		if out, err := gitRun(c, "push", "origin", "HEAD:anon"); err == nil {
			t.Errorf("anonymous push: %s", out)
		}
		r := s.Get(t, s.URL+"/owner/pub.git/info/refs?service=git-upload-pack", "")
		if r.Status != 200 || r.Header.Get("Content-Type") != "application/x-git-upload-pack-advertisement" {
			t.Errorf("info/refs %d %s", r.Status, r.Header.Get("Content-Type"))
		}
		s.Get(t, s.URL+"/owner/nothing.git/info/refs?service=git-upload-pack", "").Want(t, 401)
		s.Get(t, s.URL+"/owner/pub.git/info/refs?service=git-bogus", "").Want(t, 404)
	})
}

// TestGitHTTP_idIsNoPath: "<id>.git" is not project <id>'s repository —
// clone URLs name full paths only.
func TestGitHTTP_idIsNoPath(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		owner := s.NewUser(t, "owner")
		var p struct{ ID int64 }
		s.Do(t, apitest.Request{Method: "POST", Path: "/projects", Token: owner.Token,
			JSON: map[string]any{"name": "repo", "initialize_with_readme": true}}).Want(t, 201).JSON(t, &p)
		work := t.TempDir()
		if out, err := gitRun(work, "ls-remote", cloneURL(s, "owner/repo", "o", owner.Token)); err != nil {
			t.Fatalf("by path: %v\n%s", err, out)
		}
		out, err := gitRun(work, "ls-remote", cloneURL(s, itoa(p.ID), "o", owner.Token))
		if err == nil || !strings.Contains(out, "could not be found") {
			t.Errorf("by id: %v\n%s", err, out)
		}
	})
}
