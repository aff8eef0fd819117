package gitrepo

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"quarry/internal/git/gittest"
)

// snapshotRepo is a repository with packed and loose objects, a tag, a
// second branch, and the debris a live repository carries (lock files,
// temporary objects, a quarantine, hooks).
func snapshotRepo(t *testing.T) *Repo {
	t.Helper()
	ctx := context.Background()
	r, err := storages(t).Open("default", HashedPath("", 42))
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Create(ctx, "main"); err != nil {
		t.Fatal(err)
	}
	for i, f := range []string{"a", "b", "c"} {
		gittest.Commit(t, r.Path(), gittest.Files{f + ".txt": strings.Repeat(f, i+1) + "\n"}, gittest.Branch("main"))
	}
	gittest.Tag(t, r.Path(), "v1", "main", "first release")
	gittest.Run(t, r.Path(), nil, "repack", "-a", "-d", "-q")
	gittest.Commit(t, r.Path(), gittest.Files{"d.txt": "loose\n"}, gittest.Branch("main"))
	gittest.Commit(t, r.Path(), gittest.Files{"e.txt": "topic\n"}, gittest.Branch("topic"))
	for name, content := range map[string]string{
		"refs/heads/main.lock":               "0000\n",
		"packed-refs.lock":                   "",
		"objects/pack/tmp_pack_abc123":       "partial",
		"objects/ab/tmp_obj_xyz":             "partial",
		"objects/incoming-Qx1/ab/cdef":       "quarantined",
		"hooks/pre-receive":                  "#!/bin/sh\nexit 1\n",
		"objects/info/commit-graph":          "stale",
		"objects/pack/pack-0123abcd.pack":    "a pack without its index",
		"refs/heads/feature/unfinished.lock": "0000\n",
	} {
		p := filepath.Join(r.Path(), filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return r
}

// snapshotTar takes a snapshot of r, running between (if set) after the
// snapshot is opened and before it is written, and returns the tar.
func snapshotTar(t *testing.T, r *Repo, between func()) []byte {
	t.Helper()
	ctx := context.Background()
	s, err := r.OpenSnapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if between != nil {
		between()
	}
	var buf bytes.Buffer
	if err := s.WriteTar(ctx, &buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// extract unpacks a tar into a fresh folder and returns it with the
// names of its entries.
func extract(t *testing.T, data []byte) (string, []string) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "restored.git")
	var names []string
	tr := tar.NewReader(bytes.NewReader(data))
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, h.Name)
		if strings.HasPrefix(h.Name, "/") || strings.Contains(h.Name, "..") {
			t.Fatalf("entry %q leaves the folder", h.Name)
		}
		p := filepath.Join(dir, filepath.FromSlash(h.Name))
		switch h.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(p, 0o755); err != nil {
				t.Fatal(err)
			}
		case tar.TypeReg:
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			b, err := io.ReadAll(tr)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, b, 0o644); err != nil {
				t.Fatal(err)
			}
		default:
			t.Fatalf("entry %q of type %c", h.Name, h.Typeflag)
		}
	}
	return dir, names
}

// checkRestored: the extracted folder is a sound repository with the
// source's refs, and a clone of it has the history.
func checkRestored(t *testing.T, src *Repo, dir string) {
	t.Helper()
	refs := func(repo string) string {
		return gittest.Run(t, repo, nil, "for-each-ref", "--format=%(objectname) %(refname)")
	}
	if got, want := refs(dir), refs(src.Path()); got != want {
		t.Errorf("restored refs\n%s\nwant\n%s", got, want)
	}
	gittest.Run(t, dir, nil, "fsck", "--full", "--strict", "--no-dangling")
	work := filepath.Join(t.TempDir(), "clone")
	gittest.Run(t, filepath.Dir(dir), nil, "clone", "-q", dir, work)
	if got := gittest.Run(t, work, nil, "log", "--format=%s", "main"); strings.Count(got, "\n") != 3 {
		t.Errorf("cloned history of main:\n%s", got)
	}
	if got := gittest.Run(t, work, nil, "rev-parse", "HEAD"); got != gittest.Ref(t, src.Path(), "main") {
		t.Errorf("cloned HEAD %s; want main's tip", got)
	}
	if got := gittest.Run(t, work, nil, "cat-file", "-p", "origin/topic:e.txt"); got != "topic" {
		t.Errorf("topic file %q", got)
	}
}

func TestSnapshot_restorableWithoutDebris(t *testing.T) {
	r := snapshotRepo(t)
	dir, names := extract(t, snapshotTar(t, r, nil))
	checkRestored(t, r, dir)
	var loose, packs int
	for _, n := range names {
		for _, bad := range []string{".lock", "tmp_", "incoming-", "hooks", "commit-graph", "pack-0123abcd"} {
			if strings.Contains(n, bad) {
				t.Errorf("snapshot holds %q", n)
			}
		}
		if strings.HasPrefix(n, "objects/pack/pack-") && strings.HasSuffix(n, ".pack") {
			packs++
		} else if len(n) == len("objects/ab/")+38 {
			loose++
		}
	}
	if packs != 1 || loose == 0 {
		t.Errorf("%d packs and %d loose objects in %v", packs, loose, names)
	}
	for _, want := range []string{"HEAD", "config", "packed-refs", "refs/heads/", "objects/pack/"} {
		if !contains(names, want) {
			t.Errorf("snapshot lacks %q: %v", want, names)
		}
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// A repack between listing and writing deletes the loose objects and the
// old pack; the snapshot still holds every object (the old pack through
// the open file, the loose ones through the new pack).
func TestSnapshot_consistentAcrossRepack(t *testing.T) {
	r := snapshotRepo(t)
	data := snapshotTar(t, r, func() {
		gittest.Commit(t, r.Path(), gittest.Files{"f.txt": "after the snapshot began\n"}, gittest.Branch("later"))
		gittest.Run(t, r.Path(), nil, "repack", "-a", "-d", "-q")
		if out := gittest.Run(t, r.Path(), nil, "count-objects"); !strings.HasPrefix(out, "0 objects") {
			t.Fatalf("loose objects left after the repack: %s", out)
		}
	})
	dir, _ := extract(t, data)
	// The snapshot's refs are those of the moment it began.
	if gittest.Ref(t, dir, "refs/heads/later") != "" {
		t.Error("a branch made after the snapshot began is in it")
	}
	if err := os.Remove(filepath.Join(r.Path(), "packed-refs.lock")); err != nil {
		t.Fatal(err)
	}
	gittest.DeleteRef(t, r.Path(), "refs/heads/later")
	checkRestored(t, r, dir)
}

func TestSnapshot_emptyAndMissingRepository(t *testing.T) {
	ctx := context.Background()
	st := storages(t)
	missing, err := st.Open("default", HashedPath("", 1))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := missing.OpenSnapshot(ctx); !errors.Is(err, ErrNoRepository) {
		t.Errorf("snapshot of a missing repository: %v", err)
	}
	empty, err := st.Open("default", HashedPath("", 2))
	if err != nil {
		t.Fatal(err)
	}
	if err := empty.Create(ctx, "main"); err != nil {
		t.Fatal(err)
	}
	dir, _ := extract(t, snapshotTar(t, empty, nil))
	out, err := exec.Command("git", "clone", dir, filepath.Join(t.TempDir(), "c")).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "empty repository") {
		t.Errorf("clone of an empty snapshot: %v\n%s", err, out)
	}
}

// A copy stops when its context ends.
func TestSnapshot_canceled(t *testing.T) {
	r := snapshotRepo(t)
	ctx, cancel := context.WithCancel(context.Background())
	s, err := r.OpenSnapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	cancel()
	if err := s.WriteTar(ctx, io.Discard); !errors.Is(err, context.Canceled) {
		t.Errorf("write after cancel: %v", err)
	}
}
