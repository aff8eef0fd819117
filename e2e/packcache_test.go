package e2e

import (
	"bufio"
	"context"
	"crypto/rand"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"quarry/internal/apitest"
	"quarry/internal/storetest"
)

// withPackCache bounds the server's pack cache to maxBytes (0: none).
func withPackCache(maxBytes int64) apitest.Option {
	return func(c *config) { c.PackObjectsCacheBytes = maxBytes }
}

// gitAgent is what the git client names itself in protocol v2
// ("git/2.39.5").
func gitAgent() string {
	out, _ := exec.Command("git", "version").Output()
	return "git/" + strings.TrimPrefix(strings.TrimSpace(string(out)), "git version ")
}

// cloneRequest is the fetch request (protocol v2) of
// `git clone -q --bare` of a repository whose HEAD is main at head.
func cloneRequest(head string) string {
	pkt := func(l string) string { return fmt.Sprintf("%04x%s", len(l)+4, l) }
	return pkt("command=fetch") + pkt("agent="+gitAgent()) + pkt("object-format=sha1") + "0001" +
		pkt("thin-pack") + pkt("no-progress") + pkt("ofs-delta") + pkt("want "+head+"\n") + pkt("want "+head+"\n") + pkt("done\n") + "0000"
}

// packCacheDir is where the server keeps its cached packs.
func packCacheDir(s *apitest.Server) string { return filepath.Join(s.DataDir, "cache", "pack-objects") }

// packCounters reads the pack cache's counters from the metrics endpoint.
func packCounters(t *testing.T, s *apitest.Server) map[string]int64 {
	t.Helper()
	r := s.Do(t, apitest.Request{Method: "GET", Path: "/-/metrics"})
	r.Want(t, 200)
	out := map[string]int64{}
	sc := bufio.NewScanner(strings.NewReader(string(r.Body)))
	for sc.Scan() {
		name, v, ok := strings.Cut(sc.Text(), " ")
		if !ok || !strings.HasPrefix(name, "quarry_pack_objects_cache_") {
			continue
		}
		n, err := strconv.ParseFloat(v, 64)
		if err != nil {
			t.Fatalf("metric %s: %v", sc.Text(), err)
		}
		out[strings.TrimSuffix(strings.TrimPrefix(name, "quarry_pack_objects_cache_"), "_total")] = int64(n)
	}
	for _, k := range []string{"hits", "misses", "fallbacks", "evictions"} {
		if _, ok := out[k]; !ok {
			t.Fatalf("metrics lack quarry_pack_objects_cache_%s_total:\n%s", k, r.Body)
		}
	}
	return out
}

// seedPackRepo creates a public project of the root user and pushes a
// commit of files files of size random bytes each; it returns the work
// tree and the commit.
func seedPackRepo(t *testing.T, s *apitest.Server, name string, files, size int) (string, string) {
	t.Helper()
	s.Do(t, apitest.Request{Method: "POST", Path: "/projects", Token: s.RootToken,
		JSON: map[string]any{"name": name, "visibility": "public"}}).Want(t, 201)
	w := filepath.Join(t.TempDir(), "w")
	if out, err := gitRun(filepath.Dir(w), "init", "-q", "-b", "main", "w"); err != nil {
		t.Fatalf("git init: %v: %s", err, out)
	}
	buf := make([]byte, size)
	for i := 0; i < files; i++ {
		if _, err := rand.Read(buf); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(w, fmt.Sprintf("f%03d.bin", i)), buf, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, args := range [][]string{{"add", "."}, {"commit", "-q", "-m", "seed"},
		{"push", "-q", cloneURL(s, "root/"+name, "root", s.RootToken), "main"}} {
		if out, err := gitRun(w, args...); err != nil {
			t.Fatalf("git %v: %v: %s", args, err, out)
		}
	}
	head, err := gitRun(w, "rev-parse", "HEAD")
	if err != nil {
		t.Fatal(err)
	}
	return w, strings.TrimSpace(head)
}

// cloneAndCheck clones the project (bare) and checks the copy with
// git fsck; it returns the clone's main commit.
func cloneAndCheck(s *apitest.Server, path, dir string) (string, error) {
	if out, err := gitRun(filepath.Dir(dir), "clone", "-q", "--bare", cloneURL(s, path, "", ""), dir); err != nil {
		return "", fmt.Errorf("clone: %v: %s", err, out)
	}
	if out, err := gitRun(dir, "fsck", "--strict", "--no-dangling"); err != nil {
		return "", fmt.Errorf("fsck: %v: %s", err, out)
	}
	head, err := gitRun(dir, "rev-parse", "refs/heads/main")
	return strings.TrimSpace(head), err
}

// cloneMany runs n clones at once and fails the test unless each
// succeeds, passes fsck and has want at main.
func cloneMany(t *testing.T, s *apitest.Server, path string, n int, want string) {
	t.Helper()
	base := t.TempDir()
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			head, err := cloneAndCheck(s, path, filepath.Join(base, fmt.Sprintf("c%d", i)))
			if err == nil && head != want {
				err = fmt.Errorf("main is %s; want %s", head, want)
			}
			errs[i] = err
		}(i)
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("clone %d: %v", i, err)
		}
	}
}

func TestPackCache_concurrentClonesShareOnePack(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		_, head := seedPackRepo(t, s, "storm", 40, 32<<10)
		before := packCounters(t, s)
		cloneMany(t, s, "root/storm", 20, head)
		after := packCounters(t, s)
		if got := after["misses"] - before["misses"]; got != 1 {
			t.Errorf("packs built: %d; want 1 (counters %v)", got, after)
		}
		if got := after["hits"] - before["hits"]; got != 19 {
			t.Errorf("cache hits: %d; want 19 (counters %v)", got, after)
		}
		if got := after["fallbacks"] - before["fallbacks"]; got != 0 {
			t.Errorf("fallbacks: %d; want 0", got)
		}
	}, withPackCache(1<<30))
}

func TestPackCache_pushChangesTheKey(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, storetest.Target{Name: "sqlite"}, withPackCache(1<<30))
	w, first := seedPackRepo(t, s, "moving", 5, 4<<10)
	cloneMany(t, s, "root/moving", 2, first)
	c := packCounters(t, s)
	if c["misses"] != 1 || c["hits"] != 1 {
		t.Fatalf("counters after two clones: %v; want 1 miss and 1 hit", c)
	}
	if err := os.WriteFile(filepath.Join(w, "new.txt"), []byte("new\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"add", "."}, {"commit", "-q", "-m", "second"},
		{"push", "-q", cloneURL(s, "root/moving", "root", s.RootToken), "main"}} {
		if out, err := gitRun(w, args...); err != nil {
			t.Fatalf("git %v: %v: %s", args, err, out)
		}
	}
	second, _ := gitRun(w, "rev-parse", "HEAD")
	second = strings.TrimSpace(second)
	cloneMany(t, s, "root/moving", 1, second)
	if c := packCounters(t, s); c["misses"] != 2 || c["hits"] != 1 {
		t.Errorf("counters after the push and a clone: %v; want 2 misses and 1 hit", c)
	}
	// A fetch into the first clone asks for the new objects only: another key.
	dir := filepath.Join(t.TempDir(), "c")
	if _, err := cloneAndCheck(s, "root/moving", dir); err != nil {
		t.Fatal(err)
	}
	if c := packCounters(t, s); c["hits"] != 2 {
		t.Errorf("counters after a second clone of the new head: %v; want 2 hits", c)
	}
}

// TestPackCache_producerClientGone: the client whose request builds the
// pack goes away mid-stream; the clones following the pack finish, and so
// does the pack.
func TestPackCache_producerClientGone(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, storetest.Target{Name: "sqlite"}, withPackCache(1<<30))
	_, head := seedPackRepo(t, s, "gone", 200, 64<<10) // a ~13 MB pack, more than the buffers on the way
	// The producer's client asks what `git clone --bare` asks (protocol
	// v2), reads the start of the pack, stops reading, then hangs up.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	body := cloneRequest(head)
	req, _ := http.NewRequestWithContext(ctx, "POST", s.URL+"/root/gone.git/git-upload-pack", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/x-git-upload-pack-request")
	req.Header.Set("Git-Protocol", "version=2")
	resp, err := (&http.Client{Transport: &http.Transport{}}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 200 {
		t.Fatalf("upload-pack: %d", resp.StatusCode)
	}
	if _, err := io.ReadFull(resp.Body, make([]byte, 16<<10)); err != nil {
		t.Fatalf("start of the pack: %v", err)
	}
	// The entry is being written: the others follow it.
	deadline := time.Now().Add(30 * time.Second)
	for {
		parts, _ := filepath.Glob(filepath.Join(packCacheDir(s), "*.part"))
		packs, _ := filepath.Glob(filepath.Join(packCacheDir(s), "*.pack"))
		if len(parts)+len(packs) > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no pack cache entry 30s after the first request")
		}
		time.Sleep(10 * time.Millisecond)
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		time.Sleep(200 * time.Millisecond) // let the followers start
		cancel()
		resp.Body.Close()
	}()
	cloneMany(t, s, "root/gone", 5, head)
	wg.Wait()
	// The producer finished the pack though its client left.
	deadline = time.Now().Add(30 * time.Second)
	for {
		packs, _ := filepath.Glob(filepath.Join(packCacheDir(s), "*.pack"))
		c := packCounters(t, s)
		if len(packs) == 1 && c["misses"] == 1 {
			if c["fallbacks"] != 0 || c["hits"] != 5 {
				t.Errorf("counters %v; want 5 hits and no fallback", c)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the pack was not finished after its client left: %d packs, counters %v", len(packs), c)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestPackCache_diskBound: entries past the byte bound evict the oldest;
// an entry larger than the whole bound is not kept, and its clone still
// succeeds.
func TestPackCache_diskBound(t *testing.T) {
	t.Parallel()
	const bound = 600 << 10
	s := apitest.Start(t, storetest.Target{Name: "sqlite"}, withPackCache(bound))
	_, a := seedPackRepo(t, s, "a", 4, 100<<10) // ~400 KB packs
	_, b := seedPackRepo(t, s, "b", 4, 100<<10)
	_, big := seedPackRepo(t, s, "big", 8, 100<<10) // ~800 KB: more than the bound
	cloneMany(t, s, "root/a", 1, a)
	cloneMany(t, s, "root/b", 1, b)
	c := packCounters(t, s)
	if c["misses"] != 2 || c["evictions"] != 1 {
		t.Errorf("counters after two packs: %v; want 2 misses, 1 eviction", c)
	}
	var total int64
	packs, _ := filepath.Glob(filepath.Join(packCacheDir(s), "*.pack"))
	for _, p := range packs {
		st, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		total += st.Size()
	}
	if len(packs) != 1 || total > bound {
		t.Errorf("cached packs: %d of %d bytes; want 1 within %d", len(packs), total, bound)
	}
	cloneMany(t, s, "root/big", 1, big)
	c = packCounters(t, s)
	if c["misses"] != 2 || c["fallbacks"] != 1 {
		t.Errorf("counters after a pack past the bound: %v; want 2 misses, 1 fallback", c)
	}
	if parts, _ := filepath.Glob(filepath.Join(packCacheDir(s), "*.part")); len(parts) != 0 {
		t.Errorf("left entries: %v", parts)
	}
}
