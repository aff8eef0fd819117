package e2e

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	gitlab "gitlab.com/gitlab-org/api/client-go"

	"quarry/internal/apitest"
	cfgpkg "quarry/internal/config"
	"quarry/internal/git/gitrepo"
	"quarry/internal/storetest"
)

// hkGit runs git on the server's bare repository at dir.
func hkGit(t testing.TB, dir string, args ...string) (string, error) {
	t.Helper()
	return gitRun(dir, append([]string{"--git-dir", dir}, args...)...)
}

// hkUnreachable lists the unreachable objects of the repository at dir
// (reflogs do not count: the server keeps none).
func hkUnreachable(t testing.TB, dir string) []string {
	t.Helper()
	out, err := hkGit(t, dir, "fsck", "--unreachable", "--no-reflogs", "--no-progress")
	if err != nil {
		t.Fatalf("fsck --unreachable: %v\n%s", err, out)
	}
	var objs []string
	for _, line := range strings.Split(out, "\n") {
		if f := strings.Fields(line); len(f) == 3 && f[0] == "unreachable" {
			objs = append(objs, f[2])
		}
	}
	return objs
}

// hkCount is `git count-objects -v` of the repository at dir.
func hkCount(t *testing.T, dir string) map[string]int {
	t.Helper()
	out, err := hkGit(t, dir, "count-objects", "-v")
	if err != nil {
		t.Fatalf("count-objects: %v\n%s", err, out)
	}
	m := map[string]int{}
	for _, line := range strings.Split(out, "\n") {
		if k, v, ok := strings.Cut(line, ": "); ok {
			m[k], _ = strconv.Atoi(strings.TrimSpace(v))
		}
	}
	return m
}

// hkCommitGraph reports whether the repository at dir has a commit-graph.
func hkCommitGraph(dir string) bool {
	for _, p := range []string{"objects/info/commit-graph", "objects/info/commit-graphs/commit-graph-chain"} {
		if _, err := os.Stat(filepath.Join(dir, p)); err == nil {
			return true
		}
	}
	return false
}

// hkRow is a repository's housekeeping row (ok false: none yet).
type hkRow struct {
	writes, leaseUntil, lastRun int64
	ok                          bool
}

func hkRead(t *testing.T, db *sql.DB, q func(string) string, key string) hkRow {
	t.Helper()
	var r hkRow
	err := db.QueryRow(q("SELECT writes, lease_until, last_run_at FROM repository_housekeeping WHERE repository = ?"), key).
		Scan(&r.writes, &r.leaseUntil, &r.lastRun)
	if errors.Is(err, sql.ErrNoRows) {
		return r
	}
	if err != nil {
		t.Fatal(err)
	}
	r.ok = true
	return r
}

// hkTasks are the states and payloads of the housekeeping tasks of key.
func hkTasks(t *testing.T, db *sql.DB, q func(string) string, key string) []string {
	t.Helper()
	rows, err := db.Query(q("SELECT state, payload FROM tasks WHERE kind = 'repository_housekeeping' AND payload LIKE ? ORDER BY id"),
		`%"`+key+`"%`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var state, payload string
		if err := rows.Scan(&state, &payload); err != nil {
			t.Fatal(err)
		}
		out = append(out, state+" "+payload)
	}
	return out
}

// TestHousekeeping_gcPrunesPastGrace: a rebase and a squashed merge leave
// unreachable objects in the project's repository, a wiki page edited
// twice leaves loose objects in the wiki; once the clock has passed the
// prune grace, a housekeeping started through the API removes the
// unreachable objects, packs everything into one pack with a bitmap and
// writes the commit-graph, git fsck finds nothing wrong, and clones made
// all the while succeed.
func TestHousekeeping_gcPrunesPastGrace(t *testing.T) {
	t.Parallel()
	apitest.EachTarget(t, func(t *testing.T, target storetest.Target) {
		clock := &testClock{now: time.Now().UTC()}
		s := apitest.Start(t, target, func(c *cfgpkg.Config) { c.Clock = clock.Now })
		owner := s.NewUser(t, "hkowner")
		p := mrProject(t, s, owner, "tidy", "private")
		head := p.commit(t, "feature", map[string]string{"f.txt": "f\n"})
		p.commit(t, "main", map[string]string{"m.txt": "m\n"})
		mrOpen(t, p, "feature", "main", "Tidy me")
		rebased := mrRebase(t, p, 1, "feature", head)
		merged := mrMerge(t, p, owner.Token, 1, map[string]any{"sha": rebased, "squash": true, "should_remove_source_branch": true})
		if merged.State != "merged" || merged.SquashCommitSHA == "" {
			t.Fatalf("merged %+v", merged)
		}
		s.Do(t, apitest.Request{Method: "POST", Path: fmt.Sprintf("/projects/%d/wikis", p.ID), Token: owner.Token,
			JSON: map[string]any{"title": "Home", "content": "one"}}).Want(t, http.StatusCreated)
		for _, content := range []string{"two", "three"} {
			s.Do(t, apitest.Request{Method: "PUT", Path: fmt.Sprintf("/projects/%d/wikis/home", p.ID), Token: owner.Token,
				JSON: map[string]any{"content": content}}).Want(t, http.StatusOK)
		}

		dir := repoDir(t, s, p.ID)
		before := hkUnreachable(t, dir)
		if !strings.Contains(strings.Join(before, " "), head) {
			t.Fatalf("unreachable before housekeeping %v; want the commit the rebase left behind (%s)", before, head)
		}
		countBefore := hkCount(t, dir)
		wikiDir := strings.TrimSuffix(dir, ".git") + ".wiki.git"
		if c := hkCount(t, wikiDir); c["count"] == 0 {
			t.Errorf("wiki objects %v; want loose objects from the edits", c)
		}

		// Within the grace, nothing unreachable goes.
		db, q := rawDB(t, s)
		key := "project/" + itoa(p.ID)
		waitRun := func() {
			eventuallyFor(t, 60*time.Second, "the housekeeping ends", func() bool {
				r := hkRead(t, db, q, key)
				return r.ok && r.leaseUntil == 0 && r.lastRun != 0
			})
		}
		hk := s.Client(t, owner.Token)
		resp, err := hk.Projects.StartHousekeepingProject(p.ID)
		if err != nil || resp.StatusCode != http.StatusCreated {
			t.Fatalf("start housekeeping: %v, %v", resp, err)
		}
		waitRun()
		if got := hkUnreachable(t, dir); !strings.Contains(strings.Join(got, " "), head) {
			t.Fatalf("a gc within the grace pruned %s: unreachable now %v", head, got)
		}
		first := hkRead(t, db, q, key).lastRun

		// Past the grace, with clones all the while.
		clock.Set(clock.Now().Add(15 * 24 * time.Hour))
		ctx, stop := context.WithTimeout(context.Background(), 2*time.Minute)
		defer stop()
		var wg sync.WaitGroup
		var mu sync.Mutex
		clones, failures := 0, []string{}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ctx.Err() == nil; i++ {
				work := t.TempDir()
				out, err := gitRun(work, "clone", "-q", "--bare", cloneURL(s, p.Path, "owner", p.Token), "c.git")
				mu.Lock()
				clones++
				if err != nil {
					failures = append(failures, fmt.Sprintf("%v: %s", err, out))
				}
				mu.Unlock()
			}
		}()
		eventuallyFor(t, 30*time.Second, "clones start", func() bool { mu.Lock(); defer mu.Unlock(); return clones > 0 })
		start := time.Now()
		s.Do(t, apitest.Request{Method: "POST", Path: fmt.Sprintf("/projects/%d/housekeeping?task=prune", p.ID), Token: owner.Token}).
			Want(t, http.StatusCreated)
		eventuallyFor(t, 60*time.Second, "the second housekeeping ends", func() bool {
			r := hkRead(t, db, q, key)
			return r.leaseUntil == 0 && r.lastRun > first
		})
		took := time.Since(start)
		mu.Lock()
		n := clones
		mu.Unlock()
		eventuallyFor(t, 30*time.Second, "a clone after the housekeeping", func() bool { mu.Lock(); defer mu.Unlock(); return clones >= n+2 })
		stop()
		wg.Wait()
		if len(failures) > 0 {
			t.Errorf("%d of %d clones failed during housekeeping: %v", len(failures), clones, failures)
		}

		if got := hkUnreachable(t, dir); len(got) != 0 {
			t.Errorf("unreachable after a gc past the grace: %v", got)
		}
		if out, err := hkGit(t, dir, "cat-file", "-e", head); err == nil {
			t.Errorf("the rebased-away commit %s is still there (%s)", head, out)
		}
		if out, err := hkGit(t, dir, "fsck", "--strict", "--no-dangling", "--no-progress"); err != nil {
			t.Errorf("fsck after housekeeping: %v\n%s", err, out)
		}
		countAfter := hkCount(t, dir)
		if countAfter["count"] != 0 || countAfter["packs"] != 1 || countAfter["garbage"] != 0 {
			t.Errorf("objects after housekeeping %v; want none loose, one pack", countAfter)
		}
		if !hkCommitGraph(dir) {
			t.Error("no commit-graph after housekeeping")
		}
		if bitmaps, _ := filepath.Glob(filepath.Join(dir, "objects", "pack", "*.bitmap")); len(bitmaps) != 1 {
			t.Errorf("bitmaps %v; want one", bitmaps)
		}
		t.Logf("objects before: %d unreachable, %v; after: %v; gc took %v with %d clones meanwhile",
			len(before), countBefore, countAfter, took, clones)

		// What is reachable is served: the squash, the merge request.
		c := mrCloneOf(t, p)
		if !c.contains(t, "main", merged.SquashCommitSHA) {
			t.Errorf("main lost the squash commit %s", merged.SquashCommitSHA)
		}
		c.git(t, "fsck", "--strict", "--no-progress")
		if got := mrGet(t, p, owner.Token, 1); got.State != "merged" {
			t.Errorf("merge request after housekeeping: %s", got.State)
		}
		var mrCommits []map[string]any
		mrDo(t, p, "GET", owner.Token, 1, "/commits", nil).Want(t, http.StatusOK).JSON(t, &mrCommits)
		if len(mrCommits) != 1 || mrCommits[0]["id"] != rebased {
			t.Errorf("merge request commits after housekeeping %v; want the rebased %s", mrCommits, rebased)
		}
	})
}

// TestHousekeeping_writeCountTrigger: every write to a repository counts
// (GitLab's pushes_since_gc): nine writes enqueue nothing, the tenth
// (housekeeping_incremental_repack_period) enqueues one incremental
// housekeeping, which writes the commit-graph and gives the lease back.
// Wiki writes count for the wiki's repository, a snippet's for the
// snippet's (its tenth housekeeps it); with housekeeping_enabled
// false, writes are counted and nothing is enqueued.
func TestHousekeeping_writeCountTrigger(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		owner := s.NewUser(t, "hkpusher")
		p := mrProject(t, s, owner, "pushed", "private")
		db, q := rawDB(t, s)
		key := "project/" + itoa(p.ID)
		dir := repoDir(t, s, p.ID)
		work := t.TempDir()
		if out, err := gitRun(work, "clone", "-q", cloneURL(s, p.Path, "owner", p.Token), "w"); err != nil {
			t.Fatalf("clone: %v\n%s", err, out)
		}
		w := filepath.Join(work, "w")
		push := func(i int) {
			t.Helper()
			writeFile(t, filepath.Join(w, "n.txt"), strconv.Itoa(i))
			for _, args := range [][]string{{"add", "n.txt"}, {"commit", "-qm", "push " + strconv.Itoa(i)}, {"push", "-q", "origin", "main"}} {
				if out, err := gitRun(w, args...); err != nil {
					t.Fatalf("git %v: %v\n%s", args, err, out)
				}
			}
		}
		// The README was the first write.
		for i := 2; i <= 9; i++ {
			push(i)
		}
		eventually(t, "nine writes counted", func() bool { return hkRead(t, db, q, key).writes == 9 })
		if got := hkTasks(t, db, q, key); len(got) != 0 {
			t.Errorf("housekeeping tasks after nine writes: %v", got)
		}
		if hkCommitGraph(dir) {
			t.Error("a commit-graph before any housekeeping")
		}
		push(10)
		// The task is marked done by the queue after the housekeeping's
		// own commit: wait for both.
		eventuallyFor(t, 30*time.Second, "the tenth write's housekeeping ran", func() bool {
			r := hkRead(t, db, q, key)
			if r.writes != 10 || r.lastRun == 0 || r.leaseUntil != 0 {
				return false
			}
			got := hkTasks(t, db, q, key)
			return len(got) == 1 && strings.HasPrefix(got[0], "done ")
		})
		got := hkTasks(t, db, q, key)
		if len(got) != 1 || got[0] != `done {"repository":"`+key+`","strategy":"incremental"}` {
			t.Errorf("housekeeping tasks after ten writes: %v; want one incremental, done", got)
		}
		if !hkCommitGraph(dir) {
			t.Error("no commit-graph after the incremental housekeeping")
		}
		if out, err := hkGit(t, dir, "fsck", "--no-progress"); err != nil {
			t.Errorf("fsck: %v\n%s", err, out)
		}

		// The wiki's writes count for the wiki.
		s.Do(t, apitest.Request{Method: "POST", Path: fmt.Sprintf("/projects/%d/wikis", p.ID), Token: owner.Token,
			JSON: map[string]any{"title": "Home", "content": "one"}}).Want(t, http.StatusCreated)
		s.Do(t, apitest.Request{Method: "PUT", Path: fmt.Sprintf("/projects/%d/wikis/home", p.ID), Token: owner.Token,
			JSON: map[string]any{"content": "two"}}).Want(t, http.StatusOK)
		if r := hkRead(t, db, q, "project_wiki/"+itoa(p.ID)); r.writes != 2 {
			t.Errorf("wiki writes counted %d; want 2", r.writes)
		}

		// A snippet's file updates count for its repository, and the tenth
		// housekeeps it.
		var sn struct{ ID int64 }
		s.Do(t, apitest.Request{Method: "POST", Path: "/snippets", Token: owner.Token, JSON: map[string]any{"title": "hk",
			"file_name": "a.txt", "content": "0", "visibility": "private"}}).Want(t, http.StatusCreated).JSON(t, &sn)
		snKey := "snippet/" + itoa(sn.ID)
		for i := 1; i <= 10; i++ {
			s.Do(t, apitest.Request{Method: "PUT", Path: "/snippets/" + itoa(sn.ID), Token: owner.Token,
				JSON: map[string]any{"content": strconv.Itoa(i)}}).Want(t, http.StatusOK)
		}
		eventuallyFor(t, 30*time.Second, "the snippet's housekeeping ran", func() bool {
			r := hkRead(t, db, q, snKey)
			if r.writes != 10 || r.lastRun == 0 || r.leaseUntil != 0 {
				return false
			}
			got := hkTasks(t, db, q, snKey)
			return len(got) == 1 && strings.HasPrefix(got[0], "done ")
		})
		if got := hkTasks(t, db, q, snKey); len(got) != 1 || got[0] != `done {"repository":"`+snKey+`","strategy":"incremental"}` {
			t.Errorf("snippet housekeeping tasks %v", got)
		}
		if snDir := filepath.Join(s.DataDir, "repositories", gitrepo.SnippetPath(sn.ID)); !hkCommitGraph(snDir) {
			t.Errorf("no commit-graph in the snippet's repository %s", snDir)
		}

		// Disabled: counted, nothing enqueued.
		s.Do(t, apitest.Request{Method: "PUT", Path: "/application/settings", Token: s.RootToken,
			JSON: map[string]any{"housekeeping_enabled": false}}).Want(t, http.StatusOK)
		for i := 11; i <= 20; i++ {
			push(i)
		}
		eventually(t, "twenty writes counted", func() bool { return hkRead(t, db, q, key).writes == 20 })
		if got := hkTasks(t, db, q, key); len(got) != 1 {
			t.Errorf("housekeeping tasks with housekeeping disabled: %v; want only the earlier one", got)
		}
	})
}

// TestHousekeeping_api: POST /projects/:id/housekeeping is for
// maintainers (GitLab's authorize_admin_project): 401 without a token, 404
// for who cannot see the project, 403 for a developer, 400 for an unknown
// task (before the project is looked at, as Grape checks parameters
// first), 201 for a maintainer and an administrator, 409 while the
// repository's housekeeping is pending (no worker runs here).
func TestHousekeeping_api(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		owner, maint, dev, outsider := s.NewUser(t, "hkapiowner"), s.NewUser(t, "hkapimaint"), s.NewUser(t, "hkapidev"), s.NewUser(t, "hkapiout")
		p := mrProject(t, s, owner, "hkapi", "private")
		agMember(t, s, p, maint, 40)
		agMember(t, s, p, dev, 30)
		path := fmt.Sprintf("/projects/%d/housekeeping", p.ID)
		post := func(token, query string) *apitest.Response {
			return s.Do(t, apitest.Request{Method: "POST", Path: path + query, Token: token})
		}
		post("", "").Want(t, http.StatusUnauthorized)
		post(outsider.Token, "").Want(t, http.StatusNotFound).WantBody(t, `{"message":"404 Project Not Found"}`)
		post(dev.Token, "").Want(t, http.StatusForbidden).WantBody(t, `{"message":"403 Forbidden"}`)
		post(dev.Token, "?task=gc").Want(t, http.StatusBadRequest).WantBody(t, `{"error":"task does not have a valid value"}`)
		post(maint.Token, "?task=").Want(t, http.StatusBadRequest).WantBody(t, `{"error":"task does not have a valid value"}`)
		s.Do(t, apitest.Request{Method: "POST", Path: fmt.Sprintf("/projects/%d/housekeeping", s.AbsentID(t)), Token: s.RootToken}).
			Want(t, http.StatusNotFound)

		resp, err := s.Client(t, maint.Token).Projects.StartHousekeepingProject(p.Path)
		if err != nil || resp.StatusCode != http.StatusCreated {
			t.Fatalf("maintainer starts housekeeping: %v, %v", resp, err)
		}
		post(owner.Token, "?task=prune").Want(t, http.StatusConflict).
			WantBody(t, `{"message":"Somebody already triggered housekeeping for this resource in the past 1440 minutes"}`)
		db, q := rawDB(t, s)
		key := "project/" + itoa(p.ID)
		if got := hkTasks(t, db, q, key); len(got) != 1 || got[0] != `pending {"repository":"`+key+`","strategy":"gc"}` {
			t.Errorf("tasks %v; want one pending gc", got)
		}

		// An administrator may, whoever's project it is; the answer is the
		// task's id.
		other := mrProject(t, s, owner, "hkapi2", "private")
		var id string
		post2 := s.Do(t, apitest.Request{Method: "POST", Path: fmt.Sprintf("/projects/%d/housekeeping", other.ID), Token: s.RootToken,
			JSON: map[string]any{"task": "prune"}}).Want(t, http.StatusCreated)
		post2.JSON(t, &id)
		if n, err := strconv.ParseInt(id, 10, 64); err != nil || n <= 0 {
			t.Errorf("answer %q; want a task id", id)
		}
	}, func(c *cfgpkg.Config) { c.HousekeepingConcurrency = 0 })
}

// TestMergeRequests_commitsPaginated: a merge request's commits come in
// GitLab's offset pages (per_page default 20, at most 100) with the
// X-Total headers and Link, read with the official client.
func TestMergeRequests_commitsPaginated(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		owner := s.NewUser(t, "mrpager")
		p := mrProject(t, s, owner, "paged", "private")
		var want []string
		for i := 0; i < 25; i++ {
			want = append([]string{p.commit(t, "feature", map[string]string{"f.txt": strconv.Itoa(i)})}, want...)
		}
		mrOpen(t, p, "feature", "main", "Many commits")
		gl := s.Client(t, owner.Token)
		ids := func(cs []*gitlab.Commit) []string {
			out := make([]string, len(cs))
			for i, c := range cs {
				out[i] = c.ID
			}
			return out
		}
		for _, tc := range []struct {
			page, perPage        int64
			want                 []string
			next, prev, lastPage int64
		}{
			{0, 0, want[:20], 2, 0, 2},
			{1, 10, want[:10], 2, 0, 3},
			{2, 10, want[10:20], 3, 1, 3},
			{3, 10, want[20:], 0, 2, 3},
			{4, 10, []string{}, 0, 3, 3},
			{1, 100, want, 0, 0, 1},
		} {
			cs, resp, err := gl.MergeRequests.GetMergeRequestCommits(p.ID, 1, &gitlab.GetMergeRequestCommitsOptions{
				ListOptions: gitlab.ListOptions{Page: tc.page, PerPage: tc.perPage}})
			if err != nil {
				t.Fatalf("page %d per %d: %v", tc.page, tc.perPage, err)
			}
			mrWant(t, fmt.Sprintf("page %d per %d", tc.page, tc.perPage), ids(cs), tc.want)
			if resp.TotalItems != 25 || resp.TotalPages != tc.lastPage || resp.NextPage != tc.next || resp.PreviousPage != tc.prev {
				t.Errorf("page %d per %d: total %d pages %d next %d prev %d", tc.page, tc.perPage, resp.TotalItems, resp.TotalPages,
					resp.NextPage, resp.PreviousPage)
			}
		}
		if len(want) == 25 {
			cs, _, err := gl.MergeRequests.GetMergeRequestCommits(p.ID, 1, &gitlab.GetMergeRequestCommitsOptions{ListOptions: gitlab.ListOptions{PerPage: 1}})
			if err != nil || len(cs) != 1 || cs[0].Title != "ci files" || !strings.HasPrefix(want[0], cs[0].ShortID) || cs[0].WebURL == "" {
				t.Errorf("first commit %+v, %v", cs, err)
			}
		}
		r := mrDo(t, p, "GET", owner.Token, 1, "/commits?per_page=1000", nil).Want(t, http.StatusOK)
		if r.Header.Get("X-Per-Page") != "100" || r.Header.Get("X-Total") != "25" || !strings.Contains(r.Header.Get("Link"), `rel="first"`) {
			t.Errorf("per_page=1000 headers %v", r.Header)
		}
		mrDo(t, p, "GET", owner.Token, 1, "/commits?page=x", nil).Want(t, http.StatusBadRequest).WantBody(t, `{"error":"page is invalid"}`)
		mrDo(t, p, "GET", owner.Token, 99, "/commits", nil).Want(t, http.StatusNotFound)
	})
}
