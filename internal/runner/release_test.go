package runner

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDescriptionFile: a release description naming a file of the work
// tree is the file's text; nothing outside the work tree is read.
func TestDescriptionFile(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "work")
	if err := os.MkdirAll(filepath.Join(dir, "docs"), 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(p, s string) {
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(dir, "docs", "notes.md"), "# Notes\n")
	write(filepath.Join(root, "secret"), "outside")
	write(filepath.Join(dir, "big"), strings.Repeat("x", maxDescriptionFile+1))
	if err := os.Symlink(filepath.Join(root, "secret"), filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	b := &build{dir: dir}
	for _, c := range []struct {
		desc, want string
		file, fail bool
	}{
		{desc: "docs/notes.md", want: "# Notes\n", file: true},
		{desc: "Plain text notes"},
		{desc: "../secret"},
		{desc: filepath.Join(root, "secret")},
		{desc: "link"},
		{desc: "docs"},
		{desc: "missing.md"},
		{desc: "big", fail: true},
		{desc: ""},
	} {
		got, ok, err := b.descriptionFile(c.desc)
		if (err != nil) != c.fail || ok != c.file || got != c.want {
			t.Errorf("descriptionFile(%q) = %q, %v, %v; want %q, %v (error %v)", c.desc, got, ok, err, c.want, c.file, c.fail)
		}
	}
}
