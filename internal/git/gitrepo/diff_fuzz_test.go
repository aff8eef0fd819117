package gitrepo

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"quarry/internal/git"
)

// TestDiff_pathNames: names with spaces, non-ASCII names (which git
// quotes) and renames come out as the names of the files, from git's own
// output — the "---"/"+++" lines of a name with a space end in a tab, and
// a quoted name is unquoted in the "diff --git" line too (mode changes and
// binary files have no other).
func TestDiff_pathNames(t *testing.T) {
	ctx := context.Background()
	r, err := storages(t).Open("default", HashedPath("", 11))
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Create(ctx, "main"); err != nil {
		t.Fatal(err)
	}
	w := filepath.Join(t.TempDir(), "w")
	gitIn(t, filepath.Dir(w), "init", "-q", "-b", "main", w)
	write := func(name, content string, mode os.FileMode) {
		if err := os.WriteFile(filepath.Join(w, name), []byte(content), mode); err != nil {
			t.Fatal(err)
		}
	}
	commit := func(msg string) git.ObjectID {
		gitIn(t, w, "add", "-A")
		gitIn(t, w, "commit", "-q", "-m", msg)
		return git.ObjectID(gitIn(t, w, "rev-parse", "HEAD"))
	}
	write("my file.txt", "a\n", 0o644)
	c1 := commit("one")
	write("my file.txt", "a\nb\n", 0o644)
	write("naïve é.txt", "x\n", 0o644)
	write("bin file", "\x00\x01", 0o644)
	write("plain.txt", "p\n", 0o644)
	c2 := commit("two")
	gitIn(t, w, "mv", "my file.txt", "your file.txt")
	gitIn(t, w, "mv", "plain.txt", "ünïcode name.txt")
	if err := os.Chmod(filepath.Join(w, "naïve é.txt"), 0o755); err != nil {
		t.Fatal(err)
	}
	c3 := commit("three")
	gitIn(t, w, "push", "-q", r.Path(), "main")

	type want struct {
		oldPath, newPath string
		add, del         int
		flags            string // n(ew) r(enamed) b(inary) m(ode change)
	}
	for _, c := range []struct {
		from, to git.ObjectID
		want     []want
	}{
		{c1, c2, []want{{"bin file", "bin file", 0, 0, "nb"}, {"my file.txt", "my file.txt", 1, 0, ""},
			{"naïve é.txt", "naïve é.txt", 1, 0, "n"}, {"plain.txt", "plain.txt", 1, 0, "n"}}},
		{c2, c3, []want{{"naïve é.txt", "naïve é.txt", 0, 0, "m"}, {"my file.txt", "your file.txt", 0, 0, "r"},
			{"plain.txt", "ünïcode name.txt", 0, 0, "r"}}},
	} {
		files, overflow, err := r.Diff(ctx, c.from, c.to, DefaultDiffLimits)
		if err != nil || overflow {
			t.Fatalf("diff: %v, overflow %v", err, overflow)
		}
		if len(files) != len(c.want) {
			t.Fatalf("%d files %+v; want %d", len(files), files, len(c.want))
		}
		for i, w := range c.want {
			f := files[i]
			flags := ""
			for _, fl := range []struct {
				on bool
				c  string
			}{{f.NewFile, "n"}, {f.RenamedFile, "r"}, {f.Binary, "b"}, {f.AMode != f.BMode && !f.NewFile && !f.DeletedFile, "m"}} {
				if fl.on {
					flags += fl.c
				}
			}
			if f.OldPath != w.oldPath || f.NewPath != w.newPath || f.Additions != w.add || f.Deletions != w.del || flags != w.flags {
				t.Errorf("file %d: %q -> %q +%d -%d %q; want %q -> %q +%d -%d %q", i, f.OldPath, f.NewPath, f.Additions, f.Deletions, flags,
					w.oldPath, w.newPath, w.add, w.del, w.flags)
			}
		}
	}
}

func TestHeaderPaths(t *testing.T) {
	for _, c := range []struct{ in, a, b string }{
		{"a/x b/x", "x", "x"},
		{"a/my b/file b/my b/file", "my b/file", "my b/file"},
		{"a/x b/y", "x", "y"},
		{`"a/na\303\257ve" "b/na\303\257ve"`, "naïve", "naïve"},
		{`a/plain "b/\303\274"`, "plain", "ü"},
		{`"a/\303\274" b/plain`, "ü", "plain"},
		{`"a/unterminated`, "", ""},
		{"x y", "", ""},
		{"", "", ""},
	} {
		if a, b := headerPaths(c.in); a != c.a || b != c.b {
			t.Errorf("headerPaths(%q) = %q, %q; want %q, %q", c.in, a, b, c.a, c.b)
		}
	}
}

// TestParseDiff_hunkHeaderLimit: a file's first "@@" line counts against
// the limits like every other line of its text.
func TestParseDiff_hunkHeaderLimit(t *testing.T) {
	out := "diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1 +1 @@ " + strings.Repeat("f", 100) + "\n"
	files, overflow, err := parseDiff(strings.NewReader(out), DiffLimits{MaxFiles: 10, MaxLines: 10, MaxFileBytes: 50})
	if err != nil || len(files) != 1 {
		t.Fatalf("%+v, %v", files, err)
	}
	if files[0].Diff != "" || !files[0].TooLarge || !overflow {
		t.Errorf("kept %d bytes past a limit of 50 (too_large %v)", len(files[0].Diff), files[0].TooLarge)
	}
}

// FuzzParseDiff feeds any text with any limits: the limits hold (kept
// text per file, lines in all, files with text), a kept text is a run of
// the input's lines starting at a hunk, TooLarge means no text, and
// everything but the text — files, names, flags, line counts — is what a
// stats-only read gives.
func FuzzParseDiff(f *testing.F) {
	f.Add(diffOf("a.txt", "-a", "+b", " c"), 10, 20, 1024)
	f.Add(diffOf("x", "+1", "+2")+diffOf("y", "-1"), 1, 1, 5)
	f.Add("diff --git \"a/na\\303\\257ve\" \"b/na\\303\\257ve\"\nold mode 100644\nnew mode 100755\n", 1, 1, 1)
	f.Add("diff --git a/my file b/my file\n--- a/my file\t\n+++ b/my file\t\n@@ -1 +1 @@\n-a\n+b", 5, 5, 100)
	f.Add("diff --git a/o b/n\nsimilarity index 100%\nrename from o\nrename to n\n", 0, 0, 0)
	f.Add("diff --git a/b b/b\nnew file mode 100644\nBinary files /dev/null and b/b differ\n@@\n", 3, 0, 9)
	f.Add("@@ -1 +1 @@\n+orphan\ndiff --git a/x b/x\n@@ "+strings.Repeat("x", 70<<10)+"\n+y\n", 2, 100, 1<<20)
	f.Fuzz(func(t *testing.T, out string, maxFiles, maxLines, maxBytes int) {
		lim := DiffLimits{MaxFiles: clampLimit(maxFiles, 8), MaxLines: clampLimit(maxLines, 64), MaxFileBytes: clampLimit(maxBytes, 4096)}
		files, overflow, err := parseDiff(strings.NewReader(out), lim)
		if err != nil {
			t.Fatal(err)
		}
		stats, statsOverflow, err := parseDiff(strings.NewReader(out), StatsOnly)
		if err != nil {
			t.Fatal(err)
		}
		if statsOverflow || len(stats) != len(files) {
			t.Fatalf("stats only: %d files, overflow %v; with limits %d files", len(stats), statsOverflow, len(files))
		}
		inLines := strings.Count(out, "\n") + 1
		keptFiles, keptLines, tooLarge := 0, 0, false
		for i, fd := range files {
			s := stats[i]
			if s.Diff != "" || s.TooLarge {
				t.Fatalf("stats only kept text: %+v", s)
			}
			s.Diff, s.TooLarge = fd.Diff, fd.TooLarge
			if s != fd {
				t.Fatalf("file %d differs with limits:\n%+v\n%+v", i, fd, s)
			}
			if fd.Additions < 0 || fd.Deletions < 0 || fd.Additions+fd.Deletions > inLines {
				t.Fatalf("file %d counts +%d -%d of %d lines", i, fd.Additions, fd.Deletions, inLines)
			}
			tooLarge = tooLarge || fd.TooLarge
			if fd.TooLarge && fd.Diff != "" {
				t.Fatalf("file %d too large but kept %q", i, fd.Diff)
			}
			if fd.Diff == "" {
				continue
			}
			keptFiles++
			keptLines += strings.Count(fd.Diff, "\n")
			if len(fd.Diff) > lim.MaxFileBytes {
				t.Fatalf("file %d kept %d bytes; limit %d", i, len(fd.Diff), lim.MaxFileBytes)
			}
			if !strings.HasPrefix(fd.Diff, "@@") || !strings.HasSuffix(fd.Diff, "\n") || !strings.Contains(out+"\n", fd.Diff) {
				t.Fatalf("file %d kept %q, not a run of input lines from a hunk", i, fd.Diff)
			}
		}
		if keptFiles > lim.MaxFiles || keptLines > lim.MaxLines {
			t.Fatalf("kept %d files, %d lines; limits %d, %d", keptFiles, keptLines, lim.MaxFiles, lim.MaxLines)
		}
		if overflow != tooLarge {
			t.Fatalf("overflow %v, a file too large %v", overflow, tooLarge)
		}
	})
}

// FuzzParseDiff_roundTrip: a diff written as git writes it (with the tab
// after a name holding a space) reads back with its name, its counts and
// its text.
func FuzzParseDiff_roundTrip(f *testing.F) {
	f.Add("README.md", "a\nb\nc")
	f.Add("my file.txt", "x")
	f.Add("dir/ b/x", "")
	f.Add("a b/c b", "-\n+\n ")
	f.Fuzz(func(t *testing.T, name, body string) {
		if name == "" || strings.ContainsAny(name, "\"\n\r\t\x00") {
			return // git quotes these names
		}
		tab := ""
		if strings.Contains(name, " ") {
			tab = "\t"
		}
		var lines []string
		add, del := 0, 0
		for i, l := range strings.Split(body, "\n") {
			switch i % 3 {
			case 0:
				lines, add = append(lines, "+"+l), add+1
			case 1:
				lines, del = append(lines, "-"+l), del+1
			default:
				lines = append(lines, " "+l)
			}
		}
		hunk := "@@ -1,1 +1,1 @@\n" + strings.Join(lines, "\n") + "\n"
		out := "diff --git a/" + name + " b/" + name + "\nindex 1111111..2222222 100644\n--- a/" + name + tab +
			"\n+++ b/" + name + tab + "\n" + hunk
		lim := DiffLimits{MaxFiles: 10, MaxLines: len(lines) + 1, MaxFileBytes: len(hunk)}
		files, overflow, err := parseDiff(strings.NewReader(out), lim)
		if err != nil || overflow || len(files) != 1 {
			t.Fatalf("%q: %+v, overflow %v, %v", out, files, overflow, err)
		}
		fd := files[0]
		if fd.OldPath != name || fd.NewPath != name || fd.Additions != add || fd.Deletions != del || fd.Diff != hunk ||
			fd.AMode != "100644" || fd.BMode != "100644" {
			t.Fatalf("%q read as %+v", out, fd)
		}
	})
}

// clampLimit maps a fuzzed number to 0..max, so that limits are hit.
func clampLimit(n, max int) int {
	if n < 0 {
		n = -(n + 1)
	}
	return n % (max + 1)
}
