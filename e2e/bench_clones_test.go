package e2e

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"quarry/internal/apitest"
	"quarry/internal/storetest"
)

// BenchmarkCloneStorm clones the make-tree repository (benchFiles files,
// see writeMakeTree) from 1 and from 50 clients at once, on a server
// without the pack cache and one with it, interleaved. A client is
// `git clone --bare` (client=git) or, to see the server's share alone, an
// HTTP client sending the fetch request of such a clone and reading the
// answer to the end (client=http). Every iteration starts cold: the cache
// is emptied first. It reports the seconds an iteration (all its clones)
// took.
//
//	go test ./e2e -run '^$' -bench CloneStorm -benchtime 3x
func BenchmarkCloneStorm(b *testing.B) {
	servers := map[string]*apitest.Server{}
	heads := map[string]string{}
	for _, mode := range []string{"nocache", "cache"} {
		bound := int64(0)
		if mode == "cache" {
			bound = 1 << 30
		}
		s := apitest.Start(b, storetest.Target{Name: "sqlite"}, withPackCache(bound))
		heads[mode] = seedMakeTree(b, s, "big-repo")
		servers[mode] = s
	}
	for _, client := range []string{"git", "http"} {
		for _, clients := range []int{1, 50} {
			for _, mode := range []string{"nocache", "cache"} {
				s, head := servers[mode], heads[mode]
				clone := func(base string, c int) error {
					if client == "http" {
						return fetchPack(s, "root/big-repo", head)
					}
					dir := filepath.Join(base, fmt.Sprintf("c%d", c))
					if out, err := gitRun(base, "clone", "-q", "--bare", cloneURL(s, "root/big-repo", "", ""), dir); err != nil {
						return fmt.Errorf("clone: %v: %s", err, out)
					}
					return nil
				}
				b.Run(fmt.Sprintf("client=%s/clients=%d/%s", client, clients, mode), func(b *testing.B) {
					cloneStorm(b, s, clients, clone)
				})
			}
		}
	}
}

// cloneStorm runs clone from clients goroutines at once, b.N times, each
// time with the pack cache of s emptied first.
func cloneStorm(b *testing.B, s *apitest.Server, clients int, clone func(base string, c int) error) {
	var total time.Duration
	var peak atomic.Int64
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		packs, _ := filepath.Glob(filepath.Join(packCacheDir(s), "*.pack"))
		for _, p := range packs {
			os.Remove(p)
		}
		base := b.TempDir()
		b.StartTimer()
		start := time.Now()
		stopSampling := sampleServerRSS(&peak)
		var wg sync.WaitGroup
		errs := make(chan error, clients)
		for c := 0; c < clients; c++ {
			wg.Add(1)
			go func(c int) {
				defer wg.Done()
				if err := clone(base, c); err != nil {
					errs <- err
				}
			}(c)
		}
		wg.Wait()
		total += time.Since(start)
		stopSampling()
		close(errs)
		for err := range errs {
			b.Fatal(err)
		}
		b.StopTimer()
		os.RemoveAll(base)
		b.StartTimer()
	}
	b.ReportMetric(float64(clients*b.N)/total.Seconds(), "clones/s")
	b.ReportMetric(float64(peak.Load())/1024, "peak-server-MiB")
}

// sampleServerRSS notes in peak, every 20 ms until stopped, the largest
// resident memory of the server's side of the clones: this process (the
// server, and the clients when they are goroutines) and the git
// upload-pack processes below it (a client's git clone and ssh are left
// out).
func sampleServerRSS(peak *atomic.Int64) (stop func()) {
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(20 * time.Millisecond)
		defer t.Stop()
		for {
			if kb := serverTreeRSSKB(); kb > peak.Load() {
				peak.Store(kb)
			}
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	}()
	return func() { close(done); <-finished }
}

// serverTreeRSSKB is this process's resident set size and that of every
// process below it running git upload-pack.
func serverTreeRSSKB() int64 {
	self := os.Getpid()
	children := map[int][]int{}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// pid (comm) state ppid …: comm may hold spaces and parentheses.
		if f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:])); len(f) > 1 {
			if ppid, err := strconv.Atoi(f[1]); err == nil {
				children[ppid] = append(children[ppid], pid)
			}
		}
	}
	total := procRSSKB(self)
	for todo := children[self]; len(todo) > 0; {
		p := todo[len(todo)-1]
		todo = append(todo[:len(todo)-1], children[p]...)
		if cmd, err := os.ReadFile("/proc/" + strconv.Itoa(p) + "/cmdline"); err == nil && serverGit(cmd) {
			total += procRSSKB(p)
		}
	}
	return total
}

// serverGit reports whether a command line (NUL-separated) is the
// server's git upload-pack: git with the upload-pack subcommand (a
// client's ssh names git-upload-pack in its remote command, and its git
// clone has no such argument).
func serverGit(cmdline []byte) bool {
	args := bytes.Split(cmdline, []byte{0})
	return len(args) > 1 && filepath.Base(string(args[0])) == "git" &&
		slices.ContainsFunc(args[1:], func(a []byte) bool { return string(a) == "upload-pack" })
}

// procRSSKB reads a process's resident set size from /proc.
func procRSSKB(pid int) int64 {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			n, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return n
		}
	}
	return 0
}

// fetchPack sends the fetch request of `git clone --bare` of want
// (protocol v2) and reads the answer to the end.
func fetchPack(s *apitest.Server, path, want string) error {
	body := cloneRequest(want)
	req, _ := http.NewRequest("POST", s.URL+"/"+path+".git/git-upload-pack", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/x-git-upload-pack-request")
	req.Header.Set("Git-Protocol", "version=2")
	resp, err := benchClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	n, err := io.Copy(io.Discard, resp.Body)
	if err != nil || resp.StatusCode != 200 || n < 1<<20 {
		return fmt.Errorf("fetch: %d, %d bytes, %v", resp.StatusCode, n, err)
	}
	return nil
}

// seedMakeTree creates a public project of root named name holding the
// make-tree files in one commit.
func seedMakeTree(b *testing.B, s *apitest.Server, name string) string {
	b.Helper()
	s.Do(b, apitest.Request{Method: "POST", Path: "/projects", Token: s.RootToken,
		JSON: map[string]any{"name": name, "visibility": "public"}}).Want(b, 201)
	work := b.TempDir()
	w := filepath.Join(work, "w")
	if out, err := gitRun(work, "init", "-q", "-b", "main", "w"); err != nil {
		b.Fatalf("%v: %s", err, out)
	}
	if _, err := writeMakeTree(w); err != nil {
		b.Fatal(err)
	}
	for _, args := range [][]string{{"add", "."}, {"commit", "-q", "-m", "seed"},
		{"push", "-q", cloneURL(s, "root/"+name, "root", s.RootToken), "main"}} {
		if out, err := gitRun(w, args...); err != nil {
			b.Fatalf("git %v: %v: %s", args, err, out)
		}
	}
	head, err := gitRun(w, "rev-parse", "HEAD")
	if err != nil {
		b.Fatal(err)
	}
	return strings.TrimSpace(head)
}
