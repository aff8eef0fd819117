package e2e

import (
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"quarry/internal/apitest"
	"quarry/internal/git/gitrepo"
	"quarry/internal/model"
)

// Repository storage moves, end to end: a server with two storages,
// "default" (<data>/repositories) and "second" (<data>/second), and
// "broken", configured under a file (so unusable even for root).

// moveOpts are the storages and short intervals of these tests; the wait
// for writes in flight is long, so a test holding a push open decides
// when a move goes on.
func moveOpts(c *config) {
	broken := filepath.Join(c.DataDir, "not-a-folder")
	if err := os.WriteFile(broken, nil, 0o600); err != nil {
		panic(err)
	}
	c.Storages = "second=" + filepath.Join(c.DataDir, "second") + ",broken=" + filepath.Join(broken, "repos")
	c.StorageMoveWriteWait = time.Minute
	c.StorageMoveCleanupDelay = 50 * time.Millisecond
	c.StorageMoveConcurrency = 3
}

type smProject struct {
	ID                int64  `json:"id"`
	PathWithNamespace string `json:"path_with_namespace"`
	RepositoryStorage string `json:"repository_storage"`
}

type smMove struct {
	ID                     int64          `json:"id"`
	State                  string         `json:"state"`
	SourceStorageName      string         `json:"source_storage_name"`
	DestinationStorageName string         `json:"destination_storage_name"`
	ErrorMessage           *string        `json:"error_message"`
	Project                map[string]any `json:"project"`
	Group                  map[string]any `json:"group"`
}

// smNewProject creates a project with a README as owner.
func smNewProject(t *testing.T, s *apitest.Server, owner apitest.User, name string) smProject {
	t.Helper()
	var p smProject
	s.Do(t, apitest.Request{Method: "POST", Path: "/projects", Token: owner.Token,
		JSON: map[string]any{"name": name, "initialize_with_readme": true}}).Want(t, http.StatusCreated).JSON(t, &p)
	return smGetProject(t, s, p.ID)
}

// smGetProject reads a project as the administrator (who sees its
// repository_storage).
func smGetProject(t *testing.T, s *apitest.Server, id int64) smProject {
	t.Helper()
	var p smProject
	s.Get(t, fmt.Sprintf("/projects/%d", id), s.RootToken).Want(t, http.StatusOK).JSON(t, &p)
	return p
}

// smDiskPath is the project's repository path below a storage root.
func smDiskPath(t *testing.T, s *apitest.Server, id int64) string {
	t.Helper()
	p, err := s.App.DB.ProjectByID(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return p.DiskPath
}

// smRoot is a storage's folder.
func smRoot(s *apitest.Server, storage string) string {
	if storage == "default" {
		return filepath.Join(s.DataDir, "repositories")
	}
	return filepath.Join(s.DataDir, storage)
}

func smExists(root, rel string) bool {
	_, err := os.Stat(filepath.Join(root, rel, "HEAD"))
	return err == nil
}

// smWaitMove polls a move until cond holds (at most 30 s).
func smWaitMove(t *testing.T, s *apitest.Server, path string, cond func(m smMove) bool) smMove {
	t.Helper()
	var m smMove
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		s.Get(t, path, s.RootToken).Want(t, http.StatusOK).JSON(t, &m)
		if cond(m) {
			return m
		}
		if time.Now().After(deadline) {
			t.Fatalf("move %s: still %s (error %v)", path, m.State, m.ErrorMessage)
		}
	}
}

func inState(states ...string) func(m smMove) bool {
	return func(m smMove) bool {
		for _, st := range states {
			if m.State == st {
				return true
			}
		}
		return false
	}
}

// smLiveLeases counts the live write leases of a container.
func smLiveLeases(t *testing.T, s *apitest.Server, kind model.ContainerKind, id int64) int {
	t.Helper()
	var n int
	ctx := context.Background()
	if err := s.App.DB.InTx(ctx, func(tx *storeTx) error {
		var err error
		n, err = tx.LiveWriteLeases(ctx, kind, id, tx.Now())
		return err
	}); err != nil {
		t.Fatal(err)
	}
	return n
}

// holdPush starts a push (a git-receive-pack request) whose body stays
// open until the returned release is called: a write in flight, as a long
// push over a slow link is.
func holdPush(t *testing.T, s *apitest.Server, path, token string) (release func()) {
	t.Helper()
	pr, pw := io.Pipe()
	req, err := http.NewRequest(http.MethodPost, s.URL+"/"+path+".git/git-receive-pack", pr)
	if err != nil {
		t.Fatal(err)
	}
	req.SetBasicAuth("owner", token)
	req.Header.Set("Content-Type", "application/x-git-receive-pack-request")
	done := make(chan struct{})
	go func() {
		defer close(done)
		if resp, err := http.DefaultClient.Do(req); err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
	}()
	released := false
	release = func() {
		if !released {
			released = true
			_, _ = pw.Write([]byte("0000"))
			pw.Close()
			<-done
		}
	}
	t.Cleanup(release)
	return release
}

// smCommit makes a commit in the clone at dir.
func smCommit(t *testing.T, dir, name string) {
	t.Helper()
	writeFile(t, filepath.Join(dir, name), name+"\n")
	gitOut(t, dir, "add", ".")
	gitOut(t, dir, "commit", "-q", "-m", name)
}

// TestStorageMoves_projectWithPushInFlight: a project's move waits for a
// push in flight (its lease); meanwhile the project is read-only — a new
// push and API writes are refused with GitLab's message, clones and
// reads are served — and once the push ends the repository moves: on the
// destination's disk, gone from the source's, pushed to and cloned from
// there, the project's repository_storage the destination. The records
// have GitLab's shape, in every list.
func TestStorageMoves_projectWithPushInFlight(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		owner := s.NewUser(t, "owner")
		p := smNewProject(t, s, owner, "moving")
		if p.RepositoryStorage != "default" {
			t.Fatalf("a new project on %q; want default (the only storage with weight)", p.RepositoryStorage)
		}
		rel := smDiskPath(t, s, p.ID)
		work := t.TempDir()
		url := cloneURL(s, p.PathWithNamespace, "owner", owner.Token)
		gitOut(t, work, "clone", "-q", url, "w")
		w := filepath.Join(work, "w")
		smCommit(t, w, "before.txt")
		gitOut(t, w, "push", "-q", "origin", "HEAD:main")

		release := holdPush(t, s, p.PathWithNamespace, owner.Token)
		eventually(t, "the push's lease", func() bool { return smLiveLeases(t, s, model.ContainerProject, p.ID) == 1 })

		var m smMove
		s.Do(t, apitest.Request{Method: "POST", Path: fmt.Sprintf("/projects/%d/repository_storage_moves", p.ID), Token: s.RootToken,
			JSON: map[string]any{"destination_storage_name": "second"}}).Want(t, http.StatusCreated).JSON(t, &m)
		if m.State != "scheduled" || m.SourceStorageName != "default" || m.DestinationStorageName != "second" || m.ErrorMessage != nil {
			t.Errorf("scheduled move %+v", m)
		}
		movePath := fmt.Sprintf("/projects/%d/repository_storage_moves/%d", p.ID, m.ID)
		m = smWaitMove(t, s, movePath, inState("started"))

		// Read-only while the move waits for the push.
		smCommit(t, w, "during.txt")
		if out, err := gitRun(w, "push", "origin", "HEAD:main"); err == nil || !strings.Contains(out, model.RepositoryReadOnlyMessage) {
			t.Errorf("push during the move: %v\n%s", err, out)
		}
		gitOut(t, work, "clone", "-q", url, "during")
		readOnly := `{"message":"` + model.RepositoryReadOnlyMessage + `"}`
		s.Do(t, apitest.Request{Method: "POST", Path: fmt.Sprintf("/projects/%d/repository/files/x.txt", p.ID), Token: owner.Token,
			JSON: map[string]any{"branch": "main", "content": "x", "commit_message": "x"}}).Want(t, http.StatusForbidden).WantBody(t, readOnly)
		s.Get(t, fmt.Sprintf("/projects/%d/repository/files/README.md/raw?ref=main", p.ID), owner.Token).Want(t, http.StatusOK)
		if got := smGetProject(t, s, p.ID); got.RepositoryStorage != "default" {
			t.Errorf("during the move the project is on %q", got.RepositoryStorage)
		}

		release()
		m = smWaitMove(t, s, movePath, inState("finished", "failed"))
		if m.State != "finished" || m.ErrorMessage != nil {
			t.Fatalf("move ended %s: %v", m.State, m.ErrorMessage)
		}
		if got := smGetProject(t, s, p.ID); got.RepositoryStorage != "second" {
			t.Errorf("after the move the project is on %q", got.RepositoryStorage)
		}
		if !smExists(smRoot(s, "second"), rel) || smExists(smRoot(s, "default"), rel) {
			t.Errorf("on disk: second %v, default %v; want only second", smExists(smRoot(s, "second"), rel), smExists(smRoot(s, "default"), rel))
		}
		gitOut(t, w, "push", "-q", "origin", "HEAD:main")
		gitOut(t, work, "clone", "-q", url, "after")
		if _, err := os.Stat(filepath.Join(work, "after", "during.txt")); err != nil {
			t.Errorf("the push after the move is not in a clone: %v", err)
		}
		if got := gitOut(t, smRoot(s, "second"), "--git-dir", rel, "rev-parse", "main"); strings.TrimSpace(got) != strings.TrimSpace(gitOut(t, w, "rev-parse", "HEAD")) {
			t.Errorf("main on the destination %s", got)
		}
		s.Do(t, apitest.Request{Method: "POST", Path: fmt.Sprintf("/projects/%d/repository/files/x.txt", p.ID), Token: owner.Token,
			JSON: map[string]any{"branch": "main", "content": "x", "commit_message": "x"}}).Want(t, http.StatusCreated)

		// The record, as each list and read shows it.
		want := map[string]any{"id": m.ID, "state": "finished", "source_storage_name": "default", "destination_storage_name": "second",
			"error_message": nil}
		for _, path := range []string{movePath, fmt.Sprintf("/project_repository_storage_moves/%d", m.ID)} {
			rec := s.Get(t, path, s.RootToken).Want(t, http.StatusOK).Object(t)
			smCheckRecord(t, rec, want, "project", []string{"id", "description", "name", "name_with_namespace", "path",
				"path_with_namespace", "created_at"})
		}
		for _, path := range []string{fmt.Sprintf("/projects/%d/repository_storage_moves", p.ID), "/project_repository_storage_moves"} {
			list := s.Get(t, path, s.RootToken).Want(t, http.StatusOK).Array(t)
			if len(list) != 1 || list[0]["id"] != float64(m.ID) {
				t.Errorf("%s: %v", path, list)
			}
		}
		if list := s.Get(t, "/group_repository_storage_moves", s.RootToken).Want(t, http.StatusOK).Array(t); len(list) != 0 {
			t.Errorf("group moves list project moves: %v", list)
		}
	}, moveOpts)
}

// smCheckRecord checks a move record's attributes, their order, and the
// container's keys.
func smCheckRecord(t *testing.T, rec map[string]any, want map[string]any, key string, containerKeys []string) {
	t.Helper()
	for k, v := range want {
		if fmt.Sprint(rec[k]) != fmt.Sprint(v) {
			t.Errorf("%s = %v; want %v", k, rec[k], v)
		}
	}
	if _, ok := rec["created_at"].(string); !ok {
		t.Errorf("created_at %v", rec["created_at"])
	}
	c, ok := rec[key].(map[string]any)
	if !ok {
		t.Fatalf("%s: %v", key, rec[key])
	}
	var keys []string
	for k := range c {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	exp := append([]string(nil), containerKeys...)
	sort.Strings(exp)
	if fmt.Sprint(keys) != fmt.Sprint(exp) {
		t.Errorf("%s keys %v; want %v", key, keys, exp)
	}
	if len(rec) != 7 {
		t.Errorf("record keys: %v", rec)
	}
}

// TestStorageMoves_readOnlyRefusesWrites: while a move holds a project
// (its read-only flag, as a move sets it), every API write to its
// repository is refused with GitLab's message, git pushes too (the
// repository's and the wiki's), and reads go on.
func TestStorageMoves_readOnlyRefusesWrites(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		owner := s.NewUser(t, "owner")
		p := smNewProject(t, s, owner, "frozen")
		pp := fmt.Sprintf("/projects/%d", p.ID)
		s.Do(t, apitest.Request{Method: "POST", Path: pp + "/repository/branches", Token: owner.Token,
			JSON: map[string]any{"branch": "topic", "ref": "main"}}).Want(t, http.StatusCreated)
		s.Do(t, apitest.Request{Method: "POST", Path: pp + "/repository/files/topic.txt", Token: owner.Token,
			JSON: map[string]any{"branch": "topic", "content": "t", "commit_message": "topic"}}).Want(t, http.StatusCreated)
		s.Do(t, apitest.Request{Method: "POST", Path: pp + "/repository/tags", Token: owner.Token,
			JSON: map[string]any{"tag_name": "v1.0.0", "ref": "main"}}).Want(t, http.StatusCreated)
		s.Do(t, apitest.Request{Method: "POST", Path: pp + "/wikis", Token: owner.Token,
			JSON: map[string]any{"title": "Home", "content": "home"}}).Want(t, http.StatusCreated)
		var mr struct{ IID int64 }
		s.Do(t, apitest.Request{Method: "POST", Path: pp + "/merge_requests", Token: owner.Token,
			JSON: map[string]any{"source_branch": "topic", "target_branch": "main", "title": "t"}}).Want(t, http.StatusCreated).JSON(t, &mr)
		work := t.TempDir()
		url := cloneURL(s, p.PathWithNamespace, "owner", owner.Token)
		gitOut(t, work, "clone", "-q", url, "w")
		w := filepath.Join(work, "w")
		smCommit(t, w, "late.txt")
		wikiURL := strings.TrimSuffix(url, ".git") + ".wiki.git"
		gitOut(t, work, "clone", "-q", wikiURL, "wiki")
		wiki := filepath.Join(work, "wiki")
		smCommit(t, wiki, "Late.md")

		ctx := context.Background()
		if err := s.App.DB.InTx(ctx, func(tx *storeTx) error {
			_, err := tx.SetContainerReadOnly(ctx, model.ContainerProject, p.ID, true)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		readOnly := `{"message":"` + model.RepositoryReadOnlyMessage + `"}`
		content := base64.StdEncoding.EncodeToString([]byte("c"))
		for _, r := range []apitest.Request{
			{Method: "POST", Path: pp + "/repository/files/new.txt", JSON: map[string]any{"branch": "main", "content": "n", "commit_message": "n"}},
			{Method: "PUT", Path: pp + "/repository/files/README.md", JSON: map[string]any{"branch": "main", "content": "n", "commit_message": "n"}},
			{Method: "DELETE", Path: pp + "/repository/files/README.md", JSON: map[string]any{"branch": "main", "commit_message": "n"}},
			{Method: "POST", Path: pp + "/repository/commits", JSON: map[string]any{"branch": "main", "commit_message": "c",
				"actions": []map[string]any{{"action": "create", "file_path": "c.txt", "content": content, "encoding": "base64"}}}},
			{Method: "POST", Path: pp + "/repository/branches", JSON: map[string]any{"branch": "other", "ref": "main"}},
			{Method: "DELETE", Path: pp + "/repository/branches/topic"},
			{Method: "DELETE", Path: pp + "/repository/merged_branches"},
			{Method: "POST", Path: pp + "/repository/tags", JSON: map[string]any{"tag_name": "v2.0.0", "ref": "main"}},
			{Method: "DELETE", Path: pp + "/repository/tags/v1.0.0"},
			{Method: "POST", Path: pp + "/repository/changelog", JSON: map[string]any{"version": "1.1.0"}},
			{Method: "PUT", Path: fmt.Sprintf("%s/merge_requests/%d/merge", pp, mr.IID)},
			{Method: "PUT", Path: fmt.Sprintf("%s/merge_requests/%d/rebase", pp, mr.IID)},
			{Method: "POST", Path: pp + "/wikis", JSON: map[string]any{"title": "New", "content": "x"}},
			{Method: "PUT", Path: pp + "/wikis/Home", JSON: map[string]any{"content": "changed"}},
			{Method: "DELETE", Path: pp + "/wikis/Home"},
			{Method: "POST", Path: pp + "/wikis/attachments", Files: map[string]apitest.File{"file": {Name: "a.txt", Content: []byte("a")}}},
		} {
			r.Token = owner.Token
			if got := s.Do(t, r); got.Status != http.StatusForbidden || !strings.Contains(string(got.Body), model.RepositoryReadOnlyMessage) {
				t.Errorf("%s %s: %d %s; want 403 %s", r.Method, r.Path, got.Status, got.Body, readOnly)
			}
		}
		for _, dir := range []string{w, wiki} {
			if out, err := gitRun(dir, "push", "origin", "HEAD"); err == nil || !strings.Contains(out, model.RepositoryReadOnlyMessage) {
				t.Errorf("push from %s: %v\n%s", filepath.Base(dir), err, out)
			}
		}
		// Reads go on.
		gitOut(t, work, "clone", "-q", url, "again")
		gitOut(t, work, "clone", "-q", wikiURL, "wiki-again")
		for _, path := range []string{pp + "/repository/files/README.md?ref=main", pp + "/repository/tree", pp + "/repository/branches",
			pp + "/repository/tags", pp + "/wikis/Home", pp + "/repository/commits"} {
			s.Get(t, path, owner.Token).Want(t, http.StatusOK)
		}
		// A move of a read-only project is refused.
		s.Do(t, apitest.Request{Method: "POST", Path: pp + "/repository_storage_moves", Token: s.RootToken,
			JSON: map[string]any{"destination_storage_name": "second"}}).Want(t, http.StatusBadRequest).
			WantBody(t, `{"message":{"project":["is read-only"]}}`)
		if err := s.App.DB.InTx(ctx, func(tx *storeTx) error {
			_, err := tx.SetContainerReadOnly(ctx, model.ContainerProject, p.ID, false)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		gitOut(t, w, "push", "-q", "origin", "HEAD:main")
		gitOut(t, wiki, "push", "-q", "origin", "HEAD")
	}, moveOpts)
}

// TestStorageMoves_bulk: a bulk move of 50 projects is accepted at once
// and scheduled in the background; afterwards no project is on the old
// storage, every move finished, and every project clones from the new
// one.
func TestStorageMoves_bulk(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		owner := s.NewUser(t, "owner")
		var ps []smProject
		for i := 0; i < 50; i++ {
			ps = append(ps, smNewProject(t, s, owner, fmt.Sprintf("bulk-%02d", i)))
		}
		s.Do(t, apitest.Request{Method: "POST", Path: "/project_repository_storage_moves", Token: s.RootToken,
			JSON: map[string]any{"source_storage_name": "default", "destination_storage_name": "second"}}).
			Want(t, http.StatusAccepted).WantBody(t, `{"message":"202 Accepted"}`)
		finished := func() int {
			n := 0
			s.Walk(t, "/project_repository_storage_moves?per_page=100", s.RootToken, func(r *apitest.Response) {
				for _, m := range r.Array(t) {
					if m["state"] == "finished" {
						n++
					} else if m["state"] == "failed" {
						t.Fatalf("a move failed: %v", m)
					}
				}
			})
			return n
		}
		for deadline := time.Now().Add(90 * time.Second); finished() < len(ps); time.Sleep(100 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("after 90s %d of %d moves finished", finished(), len(ps))
			}
		}
		if left := s.Get(t, "/projects?repository_storage=default", s.RootToken).Want(t, http.StatusOK).Array(t); len(left) != 0 {
			t.Errorf("%d projects still on default", len(left))
		}
		if on := s.Get(t, "/projects?repository_storage=second&per_page=100", s.RootToken).Want(t, http.StatusOK).Array(t); len(on) != len(ps) {
			t.Errorf("%d projects on second; want %d", len(on), len(ps))
		}
		work := t.TempDir()
		for i, p := range []smProject{ps[0], ps[len(ps)-1]} {
			gitOut(t, work, "clone", "-q", cloneURL(s, p.PathWithNamespace, "owner", owner.Token), fmt.Sprint(i))
			if rel := smDiskPath(t, s, p.ID); !smExists(smRoot(s, "second"), rel) || smExists(smRoot(s, "default"), rel) {
				t.Errorf("project %d not only on second", p.ID)
			}
		}
		// A bulk move from a storage that is not configured is refused.
		s.Do(t, apitest.Request{Method: "POST", Path: "/project_repository_storage_moves", Token: s.RootToken,
			JSON: map[string]any{"source_storage_name": "nowhere"}}).Want(t, http.StatusBadRequest).
			WantBody(t, `{"error":"source_storage_name does not have a valid value"}`)
		s.Do(t, apitest.Request{Method: "POST", Path: "/project_repository_storage_moves", Token: s.RootToken,
			JSON: map[string]any{}}).Want(t, http.StatusBadRequest).WantBody(t, `{"error":"source_storage_name is missing"}`)
	}, moveOpts)
}

// TestStorageMoves_groupWiki: a group's wiki moves with the group; its
// pages read and write from the new storage.
func TestStorageMoves_groupWiki(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		var g struct {
			ID int64 `json:"id"`
		}
		s.Do(t, apitest.Request{Method: "POST", Path: "/groups", Token: s.RootToken,
			JSON: map[string]any{"name": "wikigroup", "path": "wikigroup"}}).Want(t, http.StatusCreated).JSON(t, &g)
		gp := fmt.Sprintf("/groups/%d", g.ID)
		s.Do(t, apitest.Request{Method: "POST", Path: gp + "/wikis", Token: s.RootToken,
			JSON: map[string]any{"title": "Home", "content": "home page"}}).Want(t, http.StatusCreated)
		var m smMove
		s.Do(t, apitest.Request{Method: "POST", Path: gp + "/repository_storage_moves", Token: s.RootToken,
			JSON: map[string]any{"destination_storage_name": "second"}}).Want(t, http.StatusCreated).JSON(t, &m)
		m = smWaitMove(t, s, fmt.Sprintf("/group_repository_storage_moves/%d", m.ID), inState("finished", "failed"))
		if m.State != "finished" {
			t.Fatalf("group move %s: %v", m.State, m.ErrorMessage)
		}
		rec := s.Get(t, fmt.Sprintf("%s/repository_storage_moves/%d", gp, m.ID), s.RootToken).Want(t, http.StatusOK).Object(t)
		smCheckRecord(t, rec, map[string]any{"state": "finished", "destination_storage_name": "second"}, "group",
			[]string{"id", "web_url", "name"})
		rel := gitrepo.GroupWikiPath(g.ID)
		if !smExists(smRoot(s, "second"), rel) || smExists(smRoot(s, "default"), rel) {
			t.Errorf("group wiki on disk: second %v, default %v", smExists(smRoot(s, "second"), rel), smExists(smRoot(s, "default"), rel))
		}
		s.Get(t, gp+"/wikis/Home", s.RootToken).Want(t, http.StatusOK)
		s.Do(t, apitest.Request{Method: "PUT", Path: gp + "/wikis/Home", Token: s.RootToken,
			JSON: map[string]any{"content": "moved"}}).Want(t, http.StatusOK)
		if got := gitOut(t, smRoot(s, "second"), "--git-dir", rel, "log", "--format=%s", "-1"); !strings.Contains(got, "Home") {
			t.Errorf("the wiki write after the move is not on the destination: %q", got)
		}
	}, moveOpts)
}

// TestStorageMoves_unusableDestination: a move to a storage that cannot
// be written fails with the reason, and leaves the project writable on
// its source.
func TestStorageMoves_unusableDestination(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		owner := s.NewUser(t, "owner")
		p := smNewProject(t, s, owner, "stuck")
		var m smMove
		s.Do(t, apitest.Request{Method: "POST", Path: fmt.Sprintf("/projects/%d/repository_storage_moves", p.ID), Token: s.RootToken,
			JSON: map[string]any{"destination_storage_name": "broken"}}).Want(t, http.StatusCreated).JSON(t, &m)
		m = smWaitMove(t, s, fmt.Sprintf("/project_repository_storage_moves/%d", m.ID), inState("finished", "failed"))
		if m.State != "failed" || m.ErrorMessage == nil || !strings.Contains(*m.ErrorMessage, "repository storage broken") ||
			!strings.Contains(*m.ErrorMessage, "not usable") || len(*m.ErrorMessage) > 256 {
			t.Errorf("move to broken: %s %v", m.State, m.ErrorMessage)
		}
		if got := smGetProject(t, s, p.ID); got.RepositoryStorage != "default" {
			t.Errorf("project on %q", got.RepositoryStorage)
		}
		s.Do(t, apitest.Request{Method: "POST", Path: fmt.Sprintf("/projects/%d/repository/files/x.txt", p.ID), Token: owner.Token,
			JSON: map[string]any{"branch": "main", "content": "x", "commit_message": "x"}}).Want(t, http.StatusCreated)
		// It can be retried, here elsewhere.
		s.Do(t, apitest.Request{Method: "POST", Path: fmt.Sprintf("/projects/%d/repository_storage_moves", p.ID), Token: s.RootToken,
			JSON: map[string]any{"destination_storage_name": "second"}}).Want(t, http.StatusCreated).JSON(t, &m)
		m = smWaitMove(t, s, fmt.Sprintf("/project_repository_storage_moves/%d", m.ID), inState("finished", "failed"))
		if m.State != "finished" {
			t.Errorf("retry: %s %v", m.State, m.ErrorMessage)
		}
		// An administrator's PUT with another storage moves it back.
		var up smProject
		s.Do(t, apitest.Request{Method: "PUT", Path: fmt.Sprintf("/projects/%d", p.ID), Token: s.RootToken,
			JSON: map[string]any{"repository_storage": "default"}}).Want(t, http.StatusOK).JSON(t, &up)
		list := s.Get(t, fmt.Sprintf("/projects/%d/repository_storage_moves", p.ID), s.RootToken).Want(t, http.StatusOK).Array(t)
		if len(list) != 3 || list[0]["destination_storage_name"] != "default" {
			t.Fatalf("moves after the PUT: %v", list)
		}
		smWaitMove(t, s, fmt.Sprintf("/project_repository_storage_moves/%v", list[0]["id"]), inState("finished"))
		if got := smGetProject(t, s, p.ID); got.RepositoryStorage != "default" {
			t.Errorf("after the PUT the project is on %q", got.RepositoryStorage)
		}
	}, moveOpts)
}

// TestStorageMoves_validationAndAccess: GitLab's refusals — unknown and
// equal storages, non-administrators (403 on every route), a move of
// another project (404 Not found).
func TestStorageMoves_validationAndAccess(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		owner := s.NewUser(t, "owner")
		p := smNewProject(t, s, owner, "one")
		q := smNewProject(t, s, owner, "two")
		pp := fmt.Sprintf("/projects/%d/repository_storage_moves", p.ID)
		for _, c := range []struct {
			body map[string]any
			want string
		}{
			{map[string]any{"destination_storage_name": "nowhere"}, `{"message":{"destination_storage_name":["is not included in the list"]}}`},
			{map[string]any{"destination_storage_name": "default"}, `{"message":{"destination_storage_name":["must differ from source_storage_name"]}}`},
		} {
			s.Do(t, apitest.Request{Method: "POST", Path: pp, Token: s.RootToken, JSON: c.body}).Want(t, http.StatusBadRequest).WantBody(t, c.want)
		}
		if got := smGetProject(t, s, p.ID); got.RepositoryStorage != "default" {
			t.Fatal("a refused move moved")
		}
		// Without a destination, the weights choose one other than the
		// source: give second some.
		s.Do(t, apitest.Request{Method: "PUT", Path: "/application/settings", Token: s.RootToken,
			JSON: map[string]any{"repository_storages_weighted": map[string]any{"default": 100, "second": 50, "broken": 100}}}).
			Want(t, http.StatusOK)
		var m smMove
		s.Do(t, apitest.Request{Method: "POST", Path: pp, Token: s.RootToken, JSON: map[string]any{}}).Want(t, http.StatusCreated).JSON(t, &m)
		if m.DestinationStorageName != "second" {
			t.Errorf("picked %q; want second (default is the source, broken unusable)", m.DestinationStorageName)
		}
		smWaitMove(t, s, fmt.Sprintf("/project_repository_storage_moves/%d", m.ID), inState("finished"))
		qp := fmt.Sprintf("/projects/%d/repository_storage_moves", q.ID)
		s.Get(t, fmt.Sprintf("%s/%d", qp, m.ID), s.RootToken).Want(t, http.StatusNotFound).WantBody(t, `{"message":"404 Not found"}`)
		s.Get(t, fmt.Sprintf("/group_repository_storage_moves/%d", m.ID), s.RootToken).Want(t, http.StatusNotFound)
		s.Get(t, fmt.Sprintf("/project_repository_storage_moves/%d", s.AbsentID(t)), s.RootToken).Want(t, http.StatusNotFound).
			WantBody(t, `{"message":"404 Not found"}`)
		s.Get(t, fmt.Sprintf("/projects/%d/repository_storage_moves", s.AbsentID(t)), s.RootToken).Want(t, http.StatusNotFound).
			WantBody(t, `{"message":"404 Project Not Found"}`)
		if l := s.Get(t, qp, s.RootToken).Want(t, http.StatusOK).Array(t); len(l) != 0 {
			t.Errorf("moves of another project: %v", l)
		}

		// Only administrators: 403, whatever the parameters; 401 without
		// a token.
		for _, r := range []apitest.Request{
			{Method: "GET", Path: "/project_repository_storage_moves"},
			{Method: "POST", Path: "/project_repository_storage_moves"},
			{Method: "GET", Path: fmt.Sprintf("/project_repository_storage_moves/%d", m.ID)},
			{Method: "GET", Path: pp},
			{Method: "POST", Path: pp, JSON: map[string]any{"destination_storage_name": "default"}},
			{Method: "GET", Path: fmt.Sprintf("%s/%d", pp, m.ID)},
			{Method: "GET", Path: "/group_repository_storage_moves"},
			{Method: "POST", Path: "/group_repository_storage_moves", JSON: map[string]any{"source_storage_name": "default"}},
		} {
			r.Token = owner.Token
			s.Do(t, r).Want(t, http.StatusForbidden).WantBody(t, `{"message":"403 Forbidden"}`)
			r.Token = ""
			s.Do(t, r).Want(t, http.StatusUnauthorized)
		}
		// The project's storage shows to administrators only; its filter
		// is theirs too.
		var seen map[string]any
		s.Get(t, fmt.Sprintf("/projects/%d", p.ID), owner.Token).Want(t, http.StatusOK).JSON(t, &seen)
		if _, ok := seen["repository_storage"]; ok {
			t.Error("a non-administrator sees repository_storage")
		}
		if l := s.Get(t, "/projects?repository_storage=second", owner.Token).Want(t, http.StatusOK).Array(t); len(l) != 2 {
			t.Errorf("the filter applies to a non-administrator: %d", len(l))
		}
		settings := s.Get(t, "/application/settings", s.RootToken).Want(t, http.StatusOK).Object(t)
		if fmt.Sprint(settings["repository_storages"]) != "[broken default second]" {
			t.Errorf("repository_storages %v", settings["repository_storages"])
		}

		// New projects and group wikis go where the weights say, never to
		// an unusable storage.
		s.Do(t, apitest.Request{Method: "PUT", Path: "/application/settings", Token: s.RootToken,
			JSON: map[string]any{"repository_storages_weighted": map[string]any{"default": 0, "second": 100, "broken": 100}}}).
			Want(t, http.StatusOK)
		for i := 0; i < 5; i++ {
			np := smNewProject(t, s, owner, fmt.Sprintf("weighed-%d", i))
			if np.RepositoryStorage != "second" {
				t.Errorf("a new project on %q; want second", np.RepositoryStorage)
			}
			if rel := smDiskPath(t, s, np.ID); !smExists(smRoot(s, "second"), rel) {
				t.Errorf("project %d's repository is not on second", np.ID)
			}
		}
		// An administrator may name the storage of a new project, one
		// that is usable.
		var named smProject
		s.Do(t, apitest.Request{Method: "POST", Path: "/projects", Token: s.RootToken,
			JSON: map[string]any{"name": "named", "repository_storage": "default"}}).Want(t, http.StatusCreated).JSON(t, &named)
		if named = smGetProject(t, s, named.ID); named.RepositoryStorage != "default" {
			t.Errorf("named storage: %q", named.RepositoryStorage)
		}
		s.Do(t, apitest.Request{Method: "POST", Path: "/projects", Token: s.RootToken,
			JSON: map[string]any{"name": "nowhere", "repository_storage": "broken"}}).Want(t, http.StatusBadRequest).
			WantBody(t, `{"message":{"repository_storage":["is not usable"]}}`)
		var g struct {
			ID int64 `json:"id"`
		}
		s.Do(t, apitest.Request{Method: "POST", Path: "/groups", Token: s.RootToken,
			JSON: map[string]any{"name": "weighed", "path": "weighed"}}).Want(t, http.StatusCreated).JSON(t, &g)
		s.Do(t, apitest.Request{Method: "POST", Path: fmt.Sprintf("/groups/%d/wikis", g.ID), Token: s.RootToken,
			JSON: map[string]any{"title": "Home", "content": "home"}}).Want(t, http.StatusCreated)
		if !smExists(smRoot(s, "second"), gitrepo.GroupWikiPath(g.ID)) {
			t.Error("the new group's wiki is not on second")
		}
	}, moveOpts)
}

// TestStorageMoves_pushOutlastsTheWait: a push still in flight when the
// wait for writes runs out fails the move with GitLab's message; the
// project is writable again on its source, and the push lands there.
func TestStorageMoves_pushOutlastsTheWait(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		owner := s.NewUser(t, "owner")
		p := smNewProject(t, s, owner, "busy")
		release := holdPush(t, s, p.PathWithNamespace, owner.Token)
		eventually(t, "the push's lease", func() bool { return smLiveLeases(t, s, model.ContainerProject, p.ID) == 1 })
		var m smMove
		s.Do(t, apitest.Request{Method: "POST", Path: fmt.Sprintf("/projects/%d/repository_storage_moves", p.ID), Token: s.RootToken,
			JSON: map[string]any{"destination_storage_name": "second"}}).Want(t, http.StatusCreated).JSON(t, &m)
		m = smWaitMove(t, s, fmt.Sprintf("/project_repository_storage_moves/%d", m.ID), inState("finished", "failed"))
		if m.State != "failed" || m.ErrorMessage == nil || *m.ErrorMessage != "Timeout waiting for project repository pushes" {
			t.Errorf("move %s: %v", m.State, m.ErrorMessage)
		}
		release()
		if got := smGetProject(t, s, p.ID); got.RepositoryStorage != "default" {
			t.Errorf("project on %q", got.RepositoryStorage)
		}
		if rel := smDiskPath(t, s, p.ID); smExists(smRoot(s, "second"), rel) {
			t.Error("a copy on the destination")
		}
		work := t.TempDir()
		gitOut(t, work, "clone", "-q", cloneURL(s, p.PathWithNamespace, "owner", owner.Token), "w")
		w := filepath.Join(work, "w")
		smCommit(t, w, "later.txt")
		gitOut(t, w, "push", "-q", "origin", "HEAD:main")
	}, moveOpts, func(c *config) { c.StorageMoveWriteWait = 300 * time.Millisecond })
}
