package e2e

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"quarry/internal/apitest"
	"quarry/internal/git/gittest"
	"quarry/internal/model"
)

// repoDir is a project's bare repository on the default storage.
func repoDir(t *testing.T, s *apitest.Server, id int64) string {
	t.Helper()
	p, err := s.App.DB.ProjectByID(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Join(s.DataDir, "repositories", p.DiskPath)
}

func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	return gittest.Run(t, dir, nil, args...)
}

// pushCommits adds n commits to the project's main branch with the real git
// through the filesystem, and returns the new tip.
func pushCommits(t *testing.T, s *apitest.Server, projectID int64, n int) string {
	t.Helper()
	work := t.TempDir()
	git(t, work, "clone", "-q", repoDir(t, s, projectID), "w")
	w := filepath.Join(work, "w")
	for i := 0; i < n; i++ {
		if err := os.WriteFile(filepath.Join(w, "file.txt"), []byte(strings.Repeat("x", i+1)), 0o644); err != nil {
			t.Fatal(err)
		}
		git(t, w, "add", ".")
		git(t, w, "commit", "-q", "-m", "change")
	}
	git(t, w, "push", "-q", "origin", "HEAD:main")
	if err := s.App.Projects.RepositoryChanged(context.Background(), projectID); err != nil {
		t.Fatal(err)
	}
	return git(t, w, "rev-parse", "HEAD")
}

func waitImport(t *testing.T, s *apitest.Server, token string, id int64, want string) map[string]any {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		p := s.Get(t, "/projects/"+itoa(id), token).Want(t, 200).Object(t)
		if p["import_status"] == want {
			return p
		}
		if time.Now().After(deadline) {
			t.Fatalf("import_status %v; want %s (error %v)", p["import_status"], want, p["import_error"])
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestForks_copyRepositoryInBackground(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		owner := s.NewUser(t, "upstream")
		forker := s.NewUser(t, "forker")
		var src struct{ ID int64 }
		s.Do(t, apitest.Request{Method: "POST", Path: "/projects", Token: owner.Token, JSON: map[string]any{
			"name": "lib", "visibility": "public", "initialize_with_readme": true, "topics": []string{"go"}}}).Want(t, 201).JSON(t, &src)
		tip := pushCommits(t, s, src.ID, 3)

		r := s.Do(t, apitest.Request{Method: "POST", Path: "/projects/" + itoa(src.ID) + "/fork", Token: forker.Token,
			JSON: map[string]any{"name": "my lib", "path": "my-lib"}}).Want(t, 201).Object(t)
		if st := r["import_status"]; st != "scheduled" && st != "started" && st != "finished" {
			t.Errorf("fork import_status %v", st)
		}
		if ff, _ := r["forked_from_project"].(map[string]any); ff == nil || ff["id"].(float64) != float64(src.ID) {
			t.Errorf("forked_from_project %v", r["forked_from_project"])
		}
		forkID := int64(r["id"].(float64))
		p := waitImport(t, s, forker.Token, forkID, "finished")
		if p["empty_repo"] != false || p["path_with_namespace"] != "forker/my-lib" {
			t.Errorf("fork %v %v", p["empty_repo"], p["path_with_namespace"])
		}
		// A fork starts without the source's topics, as GitLab's do.
		if topics, _ := p["topics"].([]any); len(topics) != 0 {
			t.Errorf("fork topics %v; want none", p["topics"])
		}
		if got := s.Get(t, "/projects/"+itoa(src.ID), owner.Token).Object(t); len(got["topics"].([]any)) != 1 {
			t.Errorf("source topics %v", got["topics"])
		}
		// The fork is a real repository with the source's history.
		clone := filepath.Join(t.TempDir(), "c")
		git(t, filepath.Dir(clone), "clone", "-q", repoDir(t, s, forkID), clone)
		if got := git(t, clone, "rev-parse", "HEAD"); got != tip {
			t.Errorf("fork HEAD %s; want %s", got, tip)
		}
		if n := git(t, clone, "rev-list", "--count", "HEAD"); n != "4" {
			t.Errorf("fork has %s commits; want 4", n)
		}
		srcNow := s.Get(t, "/projects/"+itoa(src.ID), owner.Token).Object(t)
		if srcNow["forks_count"] != float64(1) {
			t.Errorf("forks_count %v", srcNow["forks_count"])
		}
		forks := s.Get(t, "/projects/"+itoa(src.ID)+"/forks", "").Want(t, 200).Array(t)
		if len(forks) != 1 || forks[0]["id"] != float64(forkID) {
			t.Errorf("forks %v", forks)
		}
		// Same name and path again in the same namespace: a conflict.
		s.Do(t, apitest.Request{Method: "POST", Path: "/projects/" + itoa(src.ID) + "/fork", Token: forker.Token,
			JSON: map[string]any{"name": "my lib", "path": "my-lib"}}).Want(t, 409)
		// An unknown target namespace.
		s.Do(t, apitest.Request{Method: "POST", Path: "/projects/" + itoa(src.ID) + "/fork", Token: forker.Token,
			JSON: map[string]any{"namespace_path": "nowhere"}}).Want(t, 404).WantBody(t, `{"message":"404 Target Namespace Not Found"}`)
		// Unlinking the fork.
		s.Do(t, apitest.Request{Method: "DELETE", Path: "/projects/" + itoa(forkID) + "/fork", Token: forker.Token}).Want(t, 204)
		s.Do(t, apitest.Request{Method: "DELETE", Path: "/projects/" + itoa(forkID) + "/fork", Token: forker.Token}).Want(t, 304)
		if got := s.Get(t, "/projects/"+itoa(forkID), forker.Token).Object(t); got["forked_from_project"] != nil {
			t.Error("fork relation still shown")
		}
		// Anonymous callers cannot fork.
		s.Do(t, apitest.Request{Method: "POST", Path: "/projects/" + itoa(src.ID) + "/fork"}).Want(t, 401)
	})
}

// A fork whose worker died mid-copy is taken up again after a restart and
// finishes; it never stays "started".
func TestForks_resumeAfterCrash(t *testing.T) {
	apitest.Each(t, func(t *testing.T, first *apitest.Server) {
		dir := first.DataDir
		// This process runs no background work, like a crashed one.
		first.Stop()
		a := apitest.StartIn(t, first.Target, dir, func(c *config) { c.TaskWorkers = 0 })
		owner := a.NewUser(t, "crashy")
		var src struct{ ID int64 }
		a.Do(t, apitest.Request{Method: "POST", Path: "/projects", Token: owner.Token, JSON: map[string]any{
			"name": "src", "initialize_with_readme": true}}).Want(t, 201).JSON(t, &src)
		tip := pushCommits(t, a, src.ID, 2)
		r := a.Do(t, apitest.Request{Method: "POST", Path: "/projects/" + itoa(src.ID) + "/fork", Token: owner.Token,
			JSON: map[string]any{"path": "src-fork", "name": "src fork"}}).Want(t, 201).Object(t)
		forkID := int64(r["id"].(float64))
		// A worker claimed the fork, marked it started and died.
		ctx := context.Background()
		claimed, ok, err := a.App.DB.ClaimTask(ctx, "crashed-worker", time.Now(), time.Now().Add(-time.Second), "fork_project")
		if err != nil || !ok {
			t.Fatalf("claim: %v %v", ok, err)
		}
		if err := a.App.DB.InTx(ctx, func(tx *storeTx) error { return tx.SetImportStatus(ctx, forkID, "started", "") }); err != nil {
			t.Fatal(err)
		}
		a.Stop()

		b := apitest.StartIn(t, first.Target, dir)
		p := waitImport(t, b, b.RootToken, forkID, "finished")
		if p["empty_repo"] != false {
			t.Error("fork is empty after resuming")
		}
		clone := filepath.Join(t.TempDir(), "c")
		git(t, filepath.Dir(clone), "clone", "-q", repoDir(t, b, forkID), clone)
		if got := git(t, clone, "rev-parse", "HEAD"); got != tip {
			t.Errorf("fork HEAD %s; want %s", got, tip)
		}
		task, err := b.App.DB.TaskByID(ctx, claimed.ID)
		if err == nil && task.State != model.TaskDone {
			t.Errorf("fork task state %s", task.State)
		}
	})
}
