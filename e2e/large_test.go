package e2e

import (
	"crypto/sha256"
	"encoding/hex"
	"io"
	"math/rand"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"
	"time"

	"quarry/internal/apitest"
	"quarry/internal/storetest"
)

// allocatedDuring reports how many bytes the whole process allocated on
// the heap while f ran: a request that buffers a body allocates at least
// the body's size.
func allocatedDuring(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// TestLargeFile_streams pushes a 50 MB file over HTTP, downloads it raw and
// clones it: each step streams, so the server allocates a small fraction
// of the file's size.
//
// Not parallel: allocatedDuring counts what the whole process allocates,
// and other tests' servers running alongside would add to it.
func TestLargeFile_streams(t *testing.T) {
	const size = 50 << 20
	const budget = size / 4
	// Streaming is the same on every database: SQLite is enough.
	s := apitest.Start(t, storetest.Target{Name: "sqlite"})
	owner := s.NewUser(t, "owner")
	var p struct {
		ID             int64
		LastActivityAt string `json:"last_activity_at"`
	}
	s.Do(t, apitest.Request{Method: "POST", Path: "/projects", Token: owner.Token, JSON: map[string]any{"name": "big", "visibility": "private"}}).Want(t, 201).JSON(t, &p)

	work := t.TempDir()
	w := filepath.Join(work, "w")
	if out, err := gitRun(work, "init", "-q", "-b", "main", "w"); err != nil {
		t.Fatal(out)
	}
	// Random bytes do not compress: the pack is as large as the file.
	data := make([]byte, size)
	rand.New(rand.NewSource(1)).Read(data)
	if err := os.WriteFile(filepath.Join(w, "big.bin"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(data)
	data = nil
	gitRun(w, "add", ".")
	if out, err := gitRun(w, "commit", "-q", "-m", "big"); err != nil {
		t.Fatal(out)
	}
	time.Sleep(1100 * time.Millisecond) // last_activity_at has second precision in JSON

	remote := cloneURL(s, "owner/big", "owner", owner.Token)
	var out string
	var err error
	pushAlloc := allocatedDuring(func() { out, err = gitRun(w, "push", "-q", remote, "main") })
	if err != nil {
		t.Fatalf("push: %v\n%s", err, out)
	}
	t.Logf("push of %d MB: server and test allocated %d KB", size>>20, pushAlloc>>10)
	if pushAlloc > budget {
		t.Errorf("push allocated %d bytes for a %d byte file", pushAlloc, size)
	}

	raw := s.URL + "/api/v4/projects/" + itoa(p.ID) + "/repository/files/big.bin/raw?ref=main"
	var got [sha256.Size]byte
	var length string
	rawAlloc := allocatedDuring(func() {
		req, _ := http.NewRequest("GET", raw, nil)
		req.Header.Set("PRIVATE-TOKEN", owner.Token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		length = resp.Header.Get("Content-Length")
		h := sha256.New()
		if _, err := io.Copy(h, resp.Body); err != nil {
			t.Fatal(err)
		}
		copy(got[:], h.Sum(nil))
	})
	t.Logf("raw download of %d MB: allocated %d KB", size>>20, rawAlloc>>10)
	if got != sum || length != strconv.Itoa(size) {
		t.Errorf("raw download: sha256 %s length %s", hex.EncodeToString(got[:]), length)
	}
	if rawAlloc > budget {
		t.Errorf("raw download allocated %d bytes for a %d byte file", rawAlloc, size)
	}
	// The metadata names the same content.
	hd := s.Do(t, apitest.Request{Method: "HEAD", Path: "/projects/" + itoa(p.ID) + "/repository/files/big.bin?ref=main", Token: owner.Token})
	if hd.Header.Get("X-Service-Content-Sha256") != hex.EncodeToString(sum[:]) || hd.Header.Get("X-Service-Size") != strconv.Itoa(size) {
		t.Errorf("HEAD metadata %v", hd.Header)
	}

	cloneAlloc := allocatedDuring(func() { out, err = gitRun(work, "clone", "-q", remote, "copy") })
	if err != nil {
		t.Fatalf("clone: %v\n%s", err, out)
	}
	t.Logf("clone of %d MB: allocated %d KB", size>>20, cloneAlloc>>10)
	if cloneAlloc > budget {
		t.Errorf("clone allocated %d bytes for a %d byte file", cloneAlloc, size)
	}
	f, err := os.Open(filepath.Join(work, "copy", "big.bin"))
	if err != nil {
		t.Fatal(err)
	}
	h := sha256.New()
	io.Copy(h, f)
	f.Close()
	if hex.EncodeToString(h.Sum(nil)) != hex.EncodeToString(sum[:]) {
		t.Errorf("cloned file differs")
	}

	// The push counted as activity on the project.
	var after struct {
		LastActivityAt string `json:"last_activity_at"`
		EmptyRepo      bool   `json:"empty_repo"`
	}
	s.Get(t, "/projects/"+itoa(p.ID), owner.Token).Want(t, 200).JSON(t, &after)
	if after.EmptyRepo || after.LastActivityAt <= p.LastActivityAt {
		t.Errorf("after push: empty_repo %v, last_activity_at %s (was %s)", after.EmptyRepo, after.LastActivityAt, p.LastActivityAt)
	}
}
