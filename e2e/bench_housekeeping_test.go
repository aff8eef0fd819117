package e2e

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"testing"
	"time"

	"quarry/internal/apitest"
	"quarry/internal/git/gitrepo"
	"quarry/internal/housekeeping"
	"quarry/internal/storetest"
)

// BenchmarkHousekeeping times housekeeping on the make-tree repository
// (benchFiles files pushed in one commit) after churn: each iteration
// first writes 20 commits through the files API and force-pushes a
// rewritten branch (its old commits become unreachable), untimed, then
// runs one housekeeping of the given strategy, timed. It reports the
// loose objects, packs and unreachable objects before and after the last
// run. Clones of the repository as pushed (the push's pack, no bitmap)
// and of a twin after a gc (one pack, a bitmap, a commit-graph) are timed
// in alternation.
func BenchmarkHousekeeping(b *testing.B) {
	// The clock runs two weeks and a day ahead of the files' times, so a
	// gc finds every unreachable object past the grace, as it would two
	// weeks after the churn.
	s := apitest.Start(&keepAlive{b}, storetest.Target{Name: "sqlite"}, func(c *config) {
		c.HousekeepingConcurrency = 0
		c.Clock = func() time.Time { return time.Now().Add(15 * 24 * time.Hour) }
	})
	var p struct {
		ID                int64
		PathWithNamespace string `json:"path_with_namespace"`
	}
	s.Do(b, apitest.Request{Method: "POST", Path: "/projects", Token: s.RootToken, JSON: map[string]any{"name": "hk-repo", "visibility": "public"}}).
		Want(b, 201).JSON(b, &p)
	work := b.TempDir()
	w := filepath.Join(work, "w")
	if out, err := gitRun(work, "init", "-q", "-b", "main", "w"); err != nil {
		b.Fatalf("%v: %s", err, out)
	}
	if _, err := writeMakeTree(w); err != nil {
		b.Fatal(err)
	}
	remote := cloneURL(s, p.PathWithNamespace, "root", s.RootToken)
	git := func(args ...string) {
		b.Helper()
		if out, err := gitRun(w, args...); err != nil {
			b.Fatalf("git %v: %v: %s", args, err, out)
		}
	}
	git("add", ".")
	git("commit", "-q", "-m", "seed")
	git("push", "-q", remote, "main")
	dir := filepath.Join(s.DataDir, "repositories", projectDiskPath(b, s, p.ID))
	target := housekeeping.ProjectRepository(p.ID)
	ctx := context.Background()

	// A twin project with the same push, housekept at once: clones of
	// the two alternate, so both see the same load.
	var twin struct {
		ID                int64
		PathWithNamespace string `json:"path_with_namespace"`
	}
	s.Do(b, apitest.Request{Method: "POST", Path: "/projects", Token: s.RootToken, JSON: map[string]any{"name": "hk-twin", "visibility": "public"}}).
		Want(b, 201).JSON(b, &twin)
	git("push", "-q", cloneURL(s, twin.PathWithNamespace, "root", s.RootToken), "main")
	if _, err := s.App.Housekeeping.Run(ctx, housekeeping.ProjectRepository(twin.ID), gitrepo.GC); err != nil {
		b.Fatal(err)
	}
	b.Run("clone-interleaved", func(b *testing.B) {
		var pushed, housekept time.Duration
		for i := 0; i < b.N; i++ {
			for _, c := range []struct {
				path string
				sum  *time.Duration
			}{{p.PathWithNamespace, &pushed}, {twin.PathWithNamespace, &housekept}} {
				d := b.TempDir()
				start := time.Now()
				if out, err := gitRun(d, "clone", "-q", "--bare", cloneURL(s, c.path, "", ""), "c.git"); err != nil {
					b.Fatalf("clone: %v: %s", err, out)
				}
				*c.sum += time.Since(start)
				os.RemoveAll(d)
			}
		}
		b.ReportMetric(float64(pushed.Milliseconds())/float64(b.N), "ms/clone-as-pushed")
		b.ReportMetric(float64(housekept.Milliseconds())/float64(b.N), "ms/clone-housekept")
	})

	churn := func(b *testing.B, round int) {
		b.Helper()
		for i := 0; i < 20; i++ {
			u := s.URL + "/api/v4/projects/" + itoa(p.ID) + "/repository/files/" + url.PathEscape(fmt.Sprintf("churn/%d/%d.txt", round, i))
			if !postCreated(b, u, s.RootToken, map[string]any{"branch": "main", "content": fmt.Sprintf("round %d file %d\n", round, i),
				"commit_message": "churn"}) {
				b.Fatal("churn commit refused")
			}
		}
		// A branch rewritten by a force push: its first commit becomes
		// unreachable.
		git("checkout", "-q", "-B", "topic")
		if err := os.WriteFile(filepath.Join(w, "topic.txt"), []byte(fmt.Sprintf("round %d\n", round)), 0o644); err != nil {
			b.Fatal(err)
		}
		git("add", "topic.txt")
		git("commit", "-q", "-m", "topic")
		git("push", "-q", "-f", remote, "topic")
		git("commit", "-q", "--amend", "-m", "topic, amended")
		git("push", "-q", "-f", remote, "topic")
		git("checkout", "-q", "main")
	}
	round := 0
	for _, strategy := range []gitrepo.Strategy{gitrepo.Incremental, gitrepo.Full, gitrepo.GC} {
		b.Run(strategy.String(), func(b *testing.B) {
			var res housekeeping.Result
			var unreachableBefore int
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				round++
				churn(b, round)
				unreachableBefore = len(hkUnreachable(b, dir))
				b.StartTimer()
				var err error
				if res, err = s.App.Housekeeping.Run(ctx, target, strategy); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			b.ReportMetric(float64(res.Before.Loose), "loose-before")
			b.ReportMetric(float64(res.After.Loose), "loose-after")
			b.ReportMetric(float64(res.Before.Packs), "packs-before")
			b.ReportMetric(float64(res.After.Packs), "packs-after")
			b.ReportMetric(float64(unreachableBefore), "unreachable-before")
			b.ReportMetric(float64(len(hkUnreachable(b, dir))), "unreachable-after")
			b.ReportMetric(float64(res.After.SizePack), "KiB-packed")
		})
	}
}

// projectDiskPath is a project's repository path on its storage.
func projectDiskPath(b *testing.B, s *apitest.Server, id int64) string {
	p, err := s.App.DB.ProjectByID(context.Background(), id)
	if err != nil {
		b.Fatal(err)
	}
	return p.DiskPath
}
