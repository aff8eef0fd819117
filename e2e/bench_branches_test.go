package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"quarry/internal/apitest"
	"quarry/internal/storetest"
)

// branchBench is a server with one public project of benchBranches
// branches over the make-tree files: half of them point into main's
// history (merged), half carry a commit of their own (not merged).
var branchBench struct {
	once sync.Once
	s    *apitest.Server
	id   int64
	err  error
}

const benchBranches = 200

func branchesBenchServer(b *testing.B) (*apitest.Server, int64) {
	branchBench.once.Do(func() {
		start := time.Now()
		s := apitest.Start(&keepAlive{b}, storetest.Target{Name: "sqlite"})
		var p struct{ ID int64 }
		s.Do(b, apitest.Request{Method: "POST", Path: "/projects", Token: s.RootToken,
			JSON: map[string]any{"name": "branchy", "visibility": "public"}}).Want(b, 201).JSON(b, &p)
		branchBench.s, branchBench.id, branchBench.err = s, p.ID, seedBranches(s, "root/branchy", benchBranches)
		fmt.Fprintf(os.Stderr, "seeded %d branches in %s\n", benchBranches, time.Since(start).Round(time.Millisecond))
	})
	if branchBench.err != nil {
		b.Fatal(branchBench.err)
	}
	return branchBench.s, branchBench.id
}

// seedBranches pushes main (a few commits over the make-tree files) and n
// branches (and a tag on every fourth) to the project at path: the even ones at a commit of main's
// history, the odd ones at a commit of their own on top of main.
func seedBranches(s *apitest.Server, path string, n int) error {
	work, err := os.MkdirTemp("", "quarry-bench-branches-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	w := filepath.Join(work, "w")
	if out, err := gitRun(work, "init", "-q", "-b", "main", "w"); err != nil {
		return fmt.Errorf("%v: %s", err, out)
	}
	if _, err := writeMakeTree(w); err != nil {
		return err
	}
	run := func(args ...string) (string, error) {
		out, err := gitRun(w, args...)
		if err != nil {
			return "", fmt.Errorf("git %v: %v: %s", args, err, out)
		}
		return strings.TrimSpace(out), nil
	}
	if _, err := run("add", "."); err != nil {
		return err
	}
	var history []string
	for i := 0; i < 5; i++ {
		if _, err := run("commit", "-q", "--allow-empty", "-m", fmt.Sprintf("main %d", i)); err != nil {
			return err
		}
		id, err := run("rev-parse", "HEAD")
		if err != nil {
			return err
		}
		history = append(history, id)
	}
	tree, err := run("rev-parse", "HEAD^{tree}")
	if err != nil {
		return err
	}
	for i := 0; i < n; i++ {
		at := history[i%len(history)]
		if i%2 == 1 {
			if at, err = run("commit-tree", "-p", history[len(history)-1], "-m", fmt.Sprintf("feature %d", i), tree); err != nil {
				return err
			}
		}
		if _, err := run("update-ref", fmt.Sprintf("refs/heads/feature-%03d", i), at); err != nil {
			return err
		}
		if i%4 == 0 {
			if _, err := run("update-ref", fmt.Sprintf("refs/tags/v1.%d", i), at); err != nil {
				return err
			}
		}
	}
	_, err = run("push", "-q", cloneURL(s, path, "root", s.RootToken), "refs/heads/*:refs/heads/*", "refs/tags/*:refs/tags/*")
	return err
}

// BenchmarkBranches reads a page of 20 branches of a project with 200
// from 32 clients, as root (can_push and the rules are computed). Besides
// req/s it reports the CPU time per request of this process (server and
// clients) and of the git processes it waited for: on a shared machine
// that figure moves far less than req/s.
func BenchmarkBranches(b *testing.B) {
	s, id := branchesBenchServer(b)
	base := s.URL + "/api/v4/projects/" + itoa(id) + "/repository/branches"
	run := func(b *testing.B, u string) {
		self, children := cpuTimes()
		runParallel(b, 32, func(int) { fetch(b, u, s.RootToken) })
		self2, children2 := cpuTimes()
		b.ReportMetric(float64((self2-self).Microseconds())/float64(b.N), "cpu-µs/op")
		b.ReportMetric(float64((children2-children).Microseconds())/float64(b.N), "git-cpu-µs/op")
	}
	b.Run("page-1", func(b *testing.B) { run(b, base+"?per_page=20") })
	b.Run("page-5", func(b *testing.B) { run(b, base+"?per_page=20&page=5") })
	b.Run("search", func(b *testing.B) { run(b, base+"?per_page=20&search=feature-1") })
	b.Run("one", func(b *testing.B) { run(b, base+"/feature-101") })
	b.Run("tags", func(b *testing.B) { run(b, s.URL+"/api/v4/projects/"+itoa(id)+"/repository/tags?per_page=20") })
}

// cpuTimes is the user+system CPU time of this process and of its
// waited-for children so far.
func cpuTimes() (self, children time.Duration) {
	var ru syscall.Rusage
	tv := func(t syscall.Timeval) time.Duration { return time.Duration(t.Nano()) }
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) == nil {
		self = tv(ru.Utime) + tv(ru.Stime)
	}
	if syscall.Getrusage(syscall.RUSAGE_CHILDREN, &ru) == nil {
		children = tv(ru.Utime) + tv(ru.Stime)
	}
	return self, children
}
