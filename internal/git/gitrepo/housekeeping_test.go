package gitrepo

import (
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"

	"quarry/internal/git"
)

// gitRun runs git in the repository (the test's own checks).
func gitRun(t *testing.T, r *Repo, args ...string) (string, error) {
	t.Helper()
	out, err := exec.Command("git", append([]string{"--git-dir", r.path}, args...)...).CombinedOutput()
	return strings.TrimSpace(string(out)), err
}

// unreachableRepo is a repository with a reachable history, a commit that
// was packed while reachable and then left behind by its branch (a
// rebase's or a squash's leftovers), and a dangling loose blob.
func unreachableRepo(t *testing.T) (r *Repo, packed git.ObjectID, loose string) {
	t.Helper()
	ctx := context.Background()
	r, err := storages(t).Open("default", HashedPath("", 1))
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Create(ctx, "main"); err != nil {
		t.Fatal(err)
	}
	sig := Signature{Name: "A", Email: "a@example.com", When: time.Unix(1700000000, 0)}
	var tip git.ObjectID
	for i, body := range []string{"one", "two"} {
		tip, err = r.Commit(ctx, CommitRequest{Branch: "main", Parent: tip, Files: []FileWrite{{Path: "f", Content: []byte(body)}},
			Author: sig, Committer: sig, Message: "c" + string(rune('0'+i))})
		if err != nil {
			t.Fatal(err)
		}
	}
	if out, err := gitRun(t, r, "update-ref", "refs/heads/topic", string(tip)); err != nil {
		t.Fatal(out)
	}
	packed, err = r.Commit(ctx, CommitRequest{Branch: "topic", Parent: tip, Files: []FileWrite{{Path: "g", Content: []byte("left behind")}},
		Author: sig, Committer: sig, Message: "left"})
	if err != nil {
		t.Fatal(err)
	}
	if out, err := gitRun(t, r, "repack", "-a", "-d", "-q"); err != nil {
		t.Fatal(out)
	}
	if out, err := gitRun(t, r, "update-ref", "-d", "refs/heads/topic"); err != nil {
		t.Fatal(out)
	}
	cmd := exec.Command("git", "--git-dir", r.path, "hash-object", "-w", "--stdin")
	cmd.Stdin = strings.NewReader("dangling")
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	return r, packed, strings.TrimSpace(string(out))
}

func TestRepo_Optimize(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name        string
		o           OptimizeOptions
		wantRepack  string
		wantPruned  bool
		wantObjects bool // the unreachable objects are still there
		wantBitmap  bool
	}{
		{"incremental leaves few loose objects", OptimizeOptions{Strategy: Incremental}, "", false, true, true}, // the setup's repack -a wrote one (bare repositories do)
		{"full keeps unreachable objects loose", OptimizeOptions{Strategy: Full}, "full", false, true, true},
		{"gc within the grace keeps them", OptimizeOptions{Strategy: GC, PruneBefore: time.Now().Add(-time.Hour)}, "full", true, true, true},
		{"gc past the grace prunes them", OptimizeOptions{Strategy: GC, PruneBefore: time.Now().Add(time.Hour)}, "full", true, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, packed, loose := unreachableRepo(t)
			done, err := r.Optimize(ctx, tc.o)
			if err != nil {
				t.Fatal(err)
			}
			if done.Repack != tc.wantRepack || done.Pruned != tc.wantPruned || !done.CommitGraph {
				t.Errorf("optimized %+v; want repack %q, pruned %v, commit-graph", done, tc.wantRepack, tc.wantPruned)
			}
			for _, oid := range []string{string(packed), loose} {
				_, err := gitRun(t, r, "cat-file", "-e", oid)
				if got := err == nil; got != tc.wantObjects {
					t.Errorf("object %s present %v; want %v", oid, got, tc.wantObjects)
				}
			}
			st, err := r.Stats(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if st.Bitmap != tc.wantBitmap || !st.CommitGraph {
				t.Errorf("stats %+v; want bitmap %v and a commit-graph", st, tc.wantBitmap)
			}
			if out, err := gitRun(t, r, "fsck", "--no-dangling", "--strict"); err != nil {
				t.Errorf("fsck: %v: %s", err, out)
			}
			if tip, err := r.BranchTip(ctx, "main"); err != nil || tip == "" {
				t.Errorf("main after optimize: %q, %v", tip, err)
			}
		})
	}
}

func TestRepo_Optimize_incrementalPacksLooseObjects(t *testing.T) {
	ctx := context.Background()
	r, _, _ := unreachableRepo(t)
	for i := 0; i < looseLimit; i++ {
		cmd := exec.Command("git", "--git-dir", r.path, "hash-object", "-w", "--stdin")
		cmd.Stdin = strings.NewReader("blob " + string(rune('a'+i%26)) + strings.Repeat("x", i))
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatal(string(out))
		}
	}
	before, _ := r.Stats(ctx)
	done, err := r.Optimize(ctx, OptimizeOptions{Strategy: Incremental})
	if err != nil {
		t.Fatal(err)
	}
	after, _ := r.Stats(ctx)
	if done.Repack != "incremental" || before.Loose < looseLimit {
		t.Fatalf("optimized %+v with %d loose; want an incremental repack", done, before.Loose)
	}
	// A geometric repack packs what is reachable and leaves unreachable
	// loose objects to a gc.
	if after.Packs < 1 || after.Loose > before.Loose {
		t.Errorf("after: %+v (before %+v)", after, before)
	}
}

func TestParseStrategy(t *testing.T) {
	for _, s := range []Strategy{Incremental, Full, GC} {
		if got, ok := ParseStrategy(s.String()); !ok || got != s {
			t.Errorf("ParseStrategy(%q) = %v, %v", s.String(), got, ok)
		}
	}
	if _, ok := ParseStrategy("eager"); ok {
		t.Error(`ParseStrategy("eager") accepted`)
	}
}

// TestRepo_Optimize_inFlightWrite: the objects of a commit built for a
// compare-and-swap (or of a push whose refs are not moved yet) are
// unreachable while a gc runs; the grace keeps them, so the ref moved
// afterwards points at a whole commit.
func TestRepo_Optimize_inFlightWrite(t *testing.T) {
	ctx := context.Background()
	r, _, _ := unreachableRepo(t)
	tip, err := r.BranchTip(ctx, "main")
	if err != nil {
		t.Fatal(err)
	}
	sig := Signature{Name: "A", Email: "a@example.com", When: time.Unix(1700000100, 0)}
	id, err := r.BuildCommit(ctx, tip, []Action{{Kind: "create", Path: "in-flight.txt", Content: []byte("written before the gc"), HasContent: true}},
		sig, sig, "in flight")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Optimize(ctx, OptimizeOptions{Strategy: GC, PruneBefore: time.Now().Add(-time.Hour)}); err != nil {
		t.Fatal(err)
	}
	if err := r.UpdateRef(ctx, "refs/heads/main", id, tip); err != nil {
		t.Fatal(err)
	}
	if out, err := gitRun(t, r, "fsck", "--strict", "--no-dangling"); err != nil {
		t.Fatalf("fsck after the in-flight commit landed: %v\n%s", err, out)
	}
	if out, err := gitRun(t, r, "cat-file", "-p", string(id)+":in-flight.txt"); err != nil || out != "written before the gc" {
		t.Errorf("in-flight file: %q, %v", out, err)
	}
}
