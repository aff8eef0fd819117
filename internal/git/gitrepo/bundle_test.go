package gitrepo

import (
	"context"
	"path/filepath"
	"testing"

	"quarry/internal/git/gittest"
)

func TestBundleHead(t *testing.T) {
	for _, c := range []struct{ name, listing, prefer, want string }{
		{"HEAD's branch", "a1 refs/heads/main\nb2 refs/heads/dev\nb2 HEAD\n", "main", "dev"},
		{"preferred among equals", "a1 refs/heads/x\na1 refs/heads/main\na1 HEAD\n", "main", "main"},
		{"first among equals", "a1 refs/heads/x\na1 refs/heads/y\na1 HEAD\n", "main", "x"},
		{"no HEAD", "a1 refs/heads/x\n", "main", ""},
		{"HEAD at a tag only", "a1 refs/tags/v1\na1 HEAD\n", "main", ""},
		{"empty", "", "main", ""},
	} {
		if got := bundleHead(c.listing, c.prefer); got != c.want {
			t.Errorf("%s: got %q; want %q", c.name, got, c.want)
		}
	}
}

// A repository written to a bundle and restored from it is the same:
// every ref at the same object, HEAD on the same branch; a repository
// with no refs writes no bundle.
func TestRepo_bundleRoundTrip(t *testing.T) {
	s, _ := twoStorages(t)
	ctx := context.Background()
	src, _ := s.Open("default", "@groups/src.wiki.git")
	if err := src.Create(ctx, "main"); err != nil {
		t.Fatal(err)
	}
	bundle := filepath.Join(t.TempDir(), "w.bundle")
	if ok, err := src.WriteBundle(ctx, bundle); ok || err != nil {
		t.Fatalf("empty repository bundled: %v %v", ok, err)
	}
	tip := gittest.Commit(t, src.Path(), gittest.Files{"Home.md": "home\n"}, gittest.Branch("main"))
	gittest.Commit(t, src.Path(), gittest.Files{"uploads/a/pic.png": "png"}, gittest.Branch("drafts"), gittest.Parents(tip))
	gittest.Run(t, src.Path(), nil, "tag", "-a", "-m", "v1", "v1", tip)
	gittest.Run(t, src.Path(), nil, "symbolic-ref", "HEAD", "refs/heads/drafts")
	if ok, err := src.WriteBundle(ctx, bundle); !ok || err != nil {
		t.Fatalf("bundle: %v %v", ok, err)
	}
	dst, _ := s.Open("second", "@groups/dst.wiki.git")
	if err := dst.RestoreBundle(ctx, bundle, "main"); err != nil {
		t.Fatal(err)
	}
	want, _ := src.refList(ctx)
	if got, _ := dst.refList(ctx); got != want {
		t.Errorf("refs:\n%s\nwant\n%s", got, want)
	}
	if head, _ := dst.HeadBranch(ctx); head != "drafts" {
		t.Errorf("HEAD %q; want drafts", head)
	}
	// A corrupt bundle restores nothing and leaves the repository as it
	// was.
	if err := dst.RestoreBundle(ctx, filepath.Join(t.TempDir(), "missing.bundle"), "main"); err == nil {
		t.Fatal("restored a missing bundle")
	}
	if got, _ := dst.refList(ctx); got != want {
		t.Errorf("after a failed restore, refs:\n%s", got)
	}
}
