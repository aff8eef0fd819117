package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math/rand"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"quarry/internal/apitest"
	"quarry/internal/storetest"
)

// benchClient keeps a connection per concurrent client alive (the
// default client keeps two and reconnects the rest on every request).
var benchClient = &http.Client{Transport: &http.Transport{MaxIdleConns: 256, MaxIdleConnsPerHost: 256}}

// repoBench is a server with one public project whose repository has
// benchFiles files in nested folders (median size ~6.5 KB).
var repoBench struct {
	once  sync.Once
	s     *apitest.Server
	id    int64
	paths []string // every file, for the readers to pick from
	err   error
}

const benchFiles = 2000

func repositoryBenchServer(b *testing.B) (*apitest.Server, int64, []string) {
	repoBench.once.Do(func() {
		start := time.Now()
		s := apitest.Start(&keepAlive{b}, storetest.Target{Name: "sqlite"}, func(c *config) { c.ArchiveRateLimit = 0 })
		var p struct{ ID int64 }
		r := s.Do(b, apitest.Request{Method: "POST", Path: "/projects", Token: s.RootToken, JSON: map[string]any{"name": "big-repo", "visibility": "public"}})
		r.Want(b, 201).JSON(b, &p)
		work, err := os.MkdirTemp("", "quarry-bench-repo-")
		if err != nil {
			repoBench.err = err
			return
		}
		w := filepath.Join(work, "w")
		if out, err := gitRun(work, "init", "-q", "-b", "main", "w"); err != nil {
			repoBench.err = fmt.Errorf("%v: %s", err, out)
			return
		}
		paths, err := writeMakeTree(w)
		if err != nil {
			repoBench.err = err
			return
		}
		for _, args := range [][]string{{"add", "."}, {"commit", "-q", "-m", "seed"},
			{"push", "-q", cloneURL(s, "root/big-repo", "root", s.RootToken), "main"}} {
			if out, err := gitRun(w, args...); err != nil {
				repoBench.err = fmt.Errorf("git %v: %v: %s", args, err, out)
				return
			}
		}
		os.RemoveAll(work)
		repoBench.s, repoBench.id, repoBench.paths = s, p.ID, paths
		fmt.Fprintf(os.Stderr, "seeded a repository of %d files in %s\n", benchFiles, time.Since(start).Round(time.Millisecond))
	})
	if repoBench.err != nil {
		b.Fatal(repoBench.err)
	}
	return repoBench.s, repoBench.id, repoBench.paths
}

// runParallel runs get from `clients` goroutines and reports req/s and
// the 90th percentile latency.
func runParallel(b *testing.B, clients int, get func(i int)) {
	b.SetParallelism((clients + 1) / 2) // GOMAXPROCS is 2 on the target machine
	b.ReportAllocs()
	var n atomic.Int64
	var mu sync.Mutex
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			start := time.Now()
			get(int(n.Add(1)))
			d := time.Since(start)
			mu.Lock()
			lat = append(lat, d)
			mu.Unlock()
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "req/s")
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	if len(lat) > 0 {
		b.ReportMetric(float64(lat[len(lat)*9/10].Microseconds())/1000, "p90-ms")
	}
}

func fetch(b *testing.B, u, token string) int64 {
	req, _ := http.NewRequest("GET", u, nil)
	if token != "" {
		req.Header.Set("PRIVATE-TOKEN", token)
	}
	resp, err := benchClient.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	n, _ := io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 {
		b.Fatalf("GET %s: %d", u, resp.StatusCode)
	}
	return n
}

// postCreated POSTs body as JSON and reports whether the answer was 201
// (logging any other).
func postCreated(b *testing.B, u, token string, body any) bool {
	data, _ := json.Marshal(body)
	req, _ := http.NewRequest("POST", u, bytes.NewReader(data))
	req.Header.Set("PRIVATE-TOKEN", token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := benchClient.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	msg, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		b.Logf("POST %s: %d %s", u, resp.StatusCode, msg)
		return false
	}
	return true
}

// runWriters runs write b.N times from `clients` goroutines (one: in
// turn) and reports the rate in unit and the writes that failed.
func runWriters(b *testing.B, clients int, unit string, write func(b *testing.B) bool) {
	var failed atomic.Int64
	b.SetParallelism((clients + 1) / 2) // GOMAXPROCS is 2 on the target machine
	b.ResetTimer()
	if clients == 1 {
		for i := 0; i < b.N; i++ {
			if !write(b) {
				failed.Add(1)
			}
		}
	} else {
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if !write(b) {
					failed.Add(1)
				}
			}
		})
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), unit)
	b.ReportMetric(float64(failed.Load()), "failed")
}

// writeMakeTree writes the make-tree files into the work tree w:
// benchFiles files in ~240 folders three levels deep, ~8 files each, of
// 1–12 KB of words (median ~6.5 KB), the same every time. It returns
// their paths.
func writeMakeTree(w string) ([]string, error) {
	rnd := rand.New(rand.NewSource(7))
	words := strings.Fields("alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron pi rho sigma tau upsilon")
	var paths []string
	for i := 0; i < benchFiles; i++ {
		dir := fmt.Sprintf("pkg%02d/sub%d/leaf%d", i%16, (i/16)%5, (i/80)%3)
		name := fmt.Sprintf("%s/file_%04d.go", dir, i)
		var sb strings.Builder
		size := 1000 + rnd.Intn(11000) // 1–12 KB, median ~6.5 KB
		for sb.Len() < size {
			sb.WriteString(words[rnd.Intn(len(words))])
			if rnd.Intn(8) == 0 {
				sb.WriteByte('\n')
			} else {
				sb.WriteByte(' ')
			}
		}
		if err := os.MkdirAll(filepath.Join(w, dir), 0o755); err != nil {
			return nil, err
		}
		if err := os.WriteFile(filepath.Join(w, name), []byte(sb.String()), 0o644); err != nil {
			return nil, err
		}
		paths = append(paths, name)
	}
	return paths, nil
}

// BenchmarkRepositoryReads reads a repository of ~2,000 files from 32
// clients: file JSON (with last_commit_id), raw file, a recursive tree
// page, and tar.gz archives from 4 clients.
func BenchmarkRepositoryReads(b *testing.B) {
	s, id, paths := repositoryBenchServer(b)
	base := s.URL + "/api/v4/projects/" + itoa(id) + "/repository/"
	fileURL := func(i int) string { return base + "files/" + url.PathEscape(paths[(i*7919)%len(paths)]) + "?ref=main" }
	rawURL := func(i int) string {
		return base + "files/" + url.PathEscape(paths[(i*7919)%len(paths)]) + "/raw?ref=main"
	}
	b.Run("file", func(b *testing.B) { runParallel(b, 32, func(i int) { fetch(b, fileURL(i), "") }) })
	b.Run("raw", func(b *testing.B) { runParallel(b, 32, func(i int) { fetch(b, rawURL(i), "") }) })
	b.Run("tree-recursive-100", func(b *testing.B) {
		runParallel(b, 32, func(i int) { fetch(b, base+"tree?recursive=true&per_page=100&page="+itoa(int64(1+i%20)), "") })
	})
	b.Run("archive-tar.gz-4-clients", func(b *testing.B) {
		var bytes atomic.Int64
		runParallel(b, 4, func(int) { bytes.Add(fetch(b, base+"archive.tar.gz", "")) })
		b.ReportMetric(float64(bytes.Load())/float64(b.N)/(1<<20), "MB/archive")
	})
}

// BenchmarkRepositoryCommits creates files through the files API: one
// client, then 8 clients writing different files on the same branch.
func BenchmarkRepositoryCommits(b *testing.B) {
	s, id, _ := repositoryBenchServer(b)
	var seq atomic.Int64
	create := func(b *testing.B) bool {
		n := seq.Add(1)
		u := s.URL + "/api/v4/projects/" + itoa(id) + "/repository/files/" + url.PathEscape(fmt.Sprintf("bench/%d/new_%d.txt", n%50, n))
		return postCreated(b, u, s.RootToken, map[string]any{"branch": "main", "content": fmt.Sprintf("file %d\n", n), "commit_message": "bench"})
	}
	for _, clients := range []int{1, 8} {
		b.Run(fmt.Sprintf("clients=%d", clients), func(b *testing.B) { runWriters(b, clients, "commits/s", create) })
	}
	// Reads stay as fast with a longer history on the branch.
	b.Run("file-after-commits", func(b *testing.B) {
		base := s.URL + "/api/v4/projects/" + itoa(id) + "/repository/files/"
		_, _, paths := repositoryBenchServer(b)
		runParallel(b, 32, func(i int) { fetch(b, base+url.PathEscape(paths[(i*7919)%len(paths)])+"?ref=main", "") })
	})
}
