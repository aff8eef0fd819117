package gitrepo

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"quarry/internal/git"
	"quarry/internal/git/gittest"
)

func TestPickWeighted(t *testing.T) {
	all := func(string) bool { return true }
	none := func(string) bool { return false }
	notB := func(n string) bool { return n != "b" }
	w := map[string]int64{"a": 1, "b": 3, "c": 0}
	for _, c := range []struct {
		name     string
		weights  map[string]int64
		r        uint64
		eligible func(string) bool
		want     string
	}{
		{"first share", w, 0, all, "a"},
		{"second share starts after the first", w, 1, all, "b"},
		{"end of the second share", w, 3, all, "b"},
		{"wraps around the total", w, 4, all, "a"},
		{"largest r", w, math.MaxUint64, all, "b"}, // MaxUint64 % 4 == 3
		{"zero weight never", map[string]int64{"a": 0, "b": 5}, 0, all, "b"},
		{"negative weight never", map[string]int64{"a": -5, "b": 5}, 0, all, "b"},
		{"ineligible left out", w, 3, notB, "a"},
		{"nothing eligible", w, 0, none, ""},
		{"no weights", nil, 0, all, ""},
		{"all zero", map[string]int64{"a": 0}, 0, all, ""},
	} {
		if got := PickWeighted(c.weights, c.r, c.eligible); got != c.want {
			t.Errorf("%s: got %q; want %q", c.name, got, c.want)
		}
	}
	// Over the whole range each name gets its share.
	counts := map[string]int{}
	for r := uint64(0); r < 400; r++ {
		counts[PickWeighted(w, r, all)]++
	}
	if counts["a"] != 100 || counts["b"] != 300 || counts["c"] != 0 {
		t.Errorf("shares %v; want a 100, b 300", counts)
	}
}

// twoStorages are storages "default" and "second" in a temp folder, and
// "broken", whose root is under a file (unusable even for root).
func twoStorages(t *testing.T) (*Storages, string) {
	t.Helper()
	dir := t.TempDir()
	r, err := git.NewRunner("", filepath.Join(dir, "home"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "file"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := NewStorages(r, map[string]string{"default": filepath.Join(dir, "repos"), "second": filepath.Join(dir, "second"),
		"broken": filepath.Join(dir, "file", "repos"), "alias": filepath.Join(dir, "repos"), "deep": filepath.Join(dir, "no", "such")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s, dir
}

func TestStorages_usableAndPick(t *testing.T) {
	s, dir := twoStorages(t)
	bad := s.Unusable()
	if len(bad) != 2 || bad["broken"] == nil || bad["deep"] == nil {
		t.Fatalf("unusable %v; want broken and deep", bad)
	}
	if msg := bad["deep"].Error(); !strings.Contains(msg, "missing and cannot be made") {
		t.Errorf("deep: %s", msg)
	}
	if _, err := os.Stat(filepath.Join(dir, "no")); !os.IsNotExist(err) {
		t.Errorf("a storage's missing parent was made: %v", err)
	}
	if err := s.Usable("second"); err != nil {
		t.Errorf("second: %v", err)
	}
	if err := s.Usable("nowhere"); err == nil {
		t.Error("an unknown storage is usable")
	}
	for i := 0; i < 50; i++ {
		got, err := s.Pick(map[string]int64{"default": 0, "second": 10, "broken": 100, "deep": 100})
		if err != nil || got != "second" {
			t.Fatalf("pick: %q, %v; want second", got, err)
		}
	}
	if got, err := s.Pick(map[string]int64{"default": 10, "second": 10}, "second"); err != nil || got != "default" {
		t.Errorf("pick excluding second: %q, %v", got, err)
	}
	if _, err := s.Pick(map[string]int64{"broken": 10, "unknown": 10}); err != ErrNoStorage {
		t.Errorf("pick with nothing usable: %v", err)
	}
	if !s.SameRoot("default", "alias") || s.SameRoot("default", "second") || s.SameRoot("default", "unknown") {
		t.Error("SameRoot")
	}
}

func TestRepo_replicateTo(t *testing.T) {
	ctx := context.Background()
	s, _ := twoStorages(t)
	rel := HashedPath("", 42)
	src, _ := s.Open("default", rel)
	if err := src.Create(ctx, "main"); err != nil {
		t.Fatal(err)
	}
	tip := gittest.Commit(t, src.Path(), gittest.Files{"a.txt": "a\n"}, gittest.Branch("main"))
	gittest.Commit(t, src.Path(), gittest.Files{"b.txt": "b\n"}, gittest.Branch("feature"), gittest.Parents(tip))
	gittest.Run(t, src.Path(), nil, "update-ref", "refs/merge-requests/1/head", tip)
	gittest.Run(t, src.Path(), nil, "tag", "-a", "-m", "v1", "v1", tip)
	gittest.Run(t, src.Path(), nil, "symbolic-ref", "HEAD", "refs/heads/feature")

	dst, _ := s.Open("second", rel)
	// A stale copy from an earlier move is replaced.
	if err := os.MkdirAll(filepath.Join(dst.Path(), "stale"), 0o750); err != nil {
		t.Fatal(err)
	}
	if err := src.ReplicateTo(ctx, dst); err != nil {
		t.Fatal(err)
	}
	want, _ := src.refList(ctx)
	if got, _ := dst.refList(ctx); got != want || !strings.Contains(got, "refs/merge-requests/1/head") {
		t.Errorf("refs of the copy:\n%s\nwant\n%s", got, want)
	}
	if h, _ := dst.HeadBranch(ctx); h != "feature" {
		t.Errorf("HEAD of the copy %q", h)
	}
	if _, err := os.Stat(filepath.Join(dst.Path(), "stale")); !os.IsNotExist(err) {
		t.Error("the stale copy's content is still there")
	}
	if got := gittest.Run(t, dst.Path(), nil, "config", "receive.advertisePushOptions"); got != "true" {
		t.Errorf("the copy is not configured: %q", got)
	}
	if m, _ := filepath.Glob(dst.Path() + movingSuffix + "*"); len(m) != 0 {
		t.Errorf("left aside: %v", m)
	}

	// A source that does not exist (a wiki never written) removes what
	// is at the destination.
	wikiSrc, _ := s.Open("default", WikiPath(rel))
	wikiDst, _ := s.Open("second", WikiPath(rel))
	if err := wikiDst.Create(ctx, "main"); err != nil {
		t.Fatal(err)
	}
	if err := wikiSrc.ReplicateTo(ctx, wikiDst); err != nil || wikiDst.Exists() {
		t.Errorf("absent source: %v, destination exists %v", err, wikiDst.Exists())
	}

	// An empty repository copies.
	empty, _ := s.Open("default", HashedPath("", 43))
	if err := empty.Create(ctx, "trunk"); err != nil {
		t.Fatal(err)
	}
	emptyDst, _ := s.Open("second", HashedPath("", 43))
	if err := empty.ReplicateTo(ctx, emptyDst); err != nil {
		t.Fatal(err)
	}
	if h, _ := emptyDst.HeadBranch(ctx); h != "trunk" {
		t.Errorf("HEAD of the empty copy %q", h)
	}

	// A destination that cannot be written fails, and leaves nothing.
	broken, _ := s.Open("broken", rel)
	if err := src.ReplicateTo(ctx, broken); err == nil {
		t.Error("copy to a storage under a file succeeded")
	}

	// A corrupt source fails the check and leaves nothing aside.
	corrupt, _ := s.Open("default", HashedPath("", 44))
	if err := corrupt.Create(ctx, "main"); err != nil {
		t.Fatal(err)
	}
	gittest.Commit(t, corrupt.Path(), gittest.Files{"x.txt": "x\n"}, gittest.Branch("main"))
	tree := gittest.Run(t, corrupt.Path(), nil, "rev-parse", "main^{tree}")
	if err := os.Remove(filepath.Join(corrupt.Path(), "objects", tree[:2], tree[2:])); err != nil {
		t.Fatal(err)
	}
	corruptDst, _ := s.Open("second", HashedPath("", 44))
	// A missing object cannot be copied: the move fails.
	if err := corrupt.ReplicateTo(ctx, corruptDst); err == nil {
		t.Error("a source with a ref to a missing object copied")
	}
	if corruptDst.Exists() {
		t.Error("a failed copy is in place")
	}
	if m, _ := filepath.Glob(corruptDst.Path() + movingSuffix + "*"); len(m) != 0 {
		t.Errorf("left aside: %v", m)
	}

	// Leftovers of a move cut short are removed.
	left := dst.Path() + movingSuffix + "0123"
	if err := os.MkdirAll(left, 0o750); err != nil {
		t.Fatal(err)
	}
	if err := dst.RemoveMoveLeftovers(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(left); !os.IsNotExist(err) || !dst.Exists() {
		t.Errorf("leftover still there (%v) or the copy gone (%v)", err, dst.Exists())
	}
}

func TestRepo_carryRefs(t *testing.T) {
	ctx := context.Background()
	s, _ := twoStorages(t)
	rel := HashedPath("", 50)
	src, _ := s.Open("default", rel)
	if err := src.Create(ctx, "main"); err != nil {
		t.Fatal(err)
	}
	c1 := gittest.Commit(t, src.Path(), gittest.Files{"a.txt": "a\n"}, gittest.Branch("main"))
	dst, _ := s.Open("second", rel)
	if err := src.ReplicateTo(ctx, dst); err != nil {
		t.Fatal(err)
	}
	// After the copy: a pipeline ref on a new commit, a merge request ref
	// the destination moved itself, a branch.
	c2 := gittest.Commit(t, src.Path(), gittest.Files{"b.txt": "b\n"}, gittest.Branch("side"), gittest.Parents(c1))
	gittest.Run(t, src.Path(), nil, "update-ref", "refs/pipelines/7", c2)
	gittest.Run(t, src.Path(), nil, "update-ref", "refs/merge-requests/1/head", c2)
	gittest.Run(t, dst.Path(), nil, "update-ref", "refs/merge-requests/1/head", c1)
	n, err := src.CarryRefs(ctx, dst, "refs/pipelines/", "refs/merge-requests/")
	if err != nil || n != 1 {
		t.Fatalf("carried %d, %v; want 1", n, err)
	}
	if got := gittest.Run(t, dst.Path(), nil, "rev-parse", "refs/pipelines/7"); got != c2 {
		t.Errorf("pipeline ref %s; want %s", got, c2)
	}
	if got := gittest.Run(t, dst.Path(), nil, "rev-parse", "refs/merge-requests/1/head"); got != c1 {
		t.Errorf("the destination's own ref was overwritten: %s", got)
	}
	if _, ok, _ := dst.ResolveCommit(ctx, "refs/heads/side"); ok {
		t.Error("a branch was carried")
	}
}
