package runner

import (
	"archive/zip"
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// buildTree makes a folder with files (content by slash path) and links
// (target by slash path).
func buildTree(t *testing.T, files map[string]string, links map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for name, target := range links {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(target, p); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestMatchSegments(t *testing.T) {
	for _, tc := range []struct {
		pattern, name string
		want          bool
	}{
		{"a/b", "a/b", true},
		{"a/*", "a/b", true},
		{"a/*", "a/b/c", false},
		{"*.txt", "x.txt", true},
		{"*.txt", "d/x.txt", false},
		{"**/*.txt", "x.txt", true},
		{"**/*.txt", "d/e/x.txt", true},
		{"**", "anything/at/all", true},
		{"a/**", "a", true},
		{"a/**", "a/b/c", true},
		{"a/**/c", "a/c", true},
		{"a/**/c", "a/x/y/c", true},
		{"a/**/c", "a/x/y/d", false},
		{"a/**/**/c", "a/c", true},
		{"a/?/c", "a/b/c", true},
		{"a/[bc]", "a/c", true},
		{"a/[bc]", "a/d", false},
		{"a", "a/b", false},
	} {
		if got := matchSegments(segments(tc.pattern), segments(tc.name)); got != tc.want {
			t.Errorf("match(%q, %q) = %v; want %v", tc.pattern, tc.name, got, tc.want)
		}
	}
}

func TestSelectArtifacts(t *testing.T) {
	dir := buildTree(t, map[string]string{
		"README.md":            "r",
		"build/app":            "a",
		"build/app.debug":      "d",
		"build/sub/deep/x.txt": "x",
		"build/sub/y.log":      "y",
		"logs/a.log":           "l",
		"logs/b.txt":           "b",
		"docs/a/b/c.md":        "c",
	}, map[string]string{
		"link":      "build/sub",
		"escape":    "../../etc",
		"abs":       "/etc",
		"docs/up":   "../README.md",
		"docs/away": "../../x",
	})
	build := []string{"build", "build/app", "build/app.debug", "build/sub", "build/sub/deep", "build/sub/deep/x.txt", "build/sub/y.log"}
	for _, tc := range []struct {
		name          string
		paths, excl   []string
		untracked     []string // what git listed
		want          []string
		found, exclN  []int
		untrackedN    int
		warnings      int
		warningSubstr string
	}{
		{name: "folder", paths: []string{"build/"}, want: build, found: []int{7}},
		{name: "folder with ./", paths: []string{"./build"}, want: build, found: []int{7}},
		{name: "exclude", paths: []string{"build/"}, excl: []string{"build/*.debug", "**/*.log"},
			want: []string{"build", "build/app", "build/sub", "build/sub/deep", "build/sub/deep/x.txt"}, found: []int{7}, exclN: []int{1, 1}},
		{name: "exclude a folder", paths: []string{"build"}, excl: []string{"build/sub"},
			want: []string{"build", "build/app", "build/app.debug"}, found: []int{7}, exclN: []int{4}},
		{name: "top-level glob", paths: []string{"*.md"}, want: []string{"README.md"}, found: []int{1}},
		{name: "double star", paths: []string{"**/*.md"}, want: []string{"README.md", "docs/a/b/c.md"}, found: []int{2}},
		{name: "everything below", paths: []string{"docs/**"},
			want: []string{"docs", "docs/a", "docs/a/b", "docs/a/b/c.md", "docs/up"}, found: []int{6}, warnings: 1, warningSubstr: "docs/away"},
		{name: "glob in the middle", paths: []string{"build/sub/*/x.txt"}, want: []string{"build/sub/deep/x.txt"}, found: []int{1}},
		{name: "two patterns overlapping", paths: []string{"logs/*.txt", "logs/"},
			want: []string{"logs", "logs/a.log", "logs/b.txt"}, found: []int{1, 3}},
		{name: "nothing", paths: []string{"missing/**", "nope.txt", "*.none"}, found: []int{0, 0, 0}},
		{name: "outside", paths: []string{"../outside", "/etc/passwd", "build/../../x"}, found: []int{0, 0, 0}, warnings: 3,
			warningSubstr: "not a subpath of project directory"},
		{name: "absolute inside", paths: []string{filepath.Join(dir, "README.md")}, want: []string{"README.md"}, found: []int{1}},
		{name: "through a link inside", paths: []string{"link/deep/x.txt"}, want: []string{"link/deep/x.txt"}, found: []int{1}},
		{name: "link to a folder walked", paths: []string{"link"},
			want: []string{"link", "link/deep", "link/deep/x.txt", "link/y.log"}, found: []int{4}},
		{name: "through links out", paths: []string{"escape/passwd", "abs/passwd", "escape", "abs"}, found: []int{0, 0, 0, 0}},
		{name: "whole folder", paths: []string{"."}, excl: []string{"build/**", "docs/**", "logs"},
			want: []string{"README.md", "link"}, found: []int{20}, exclN: []int{7, 6, 3}, warnings: 2},
		// Untracked files: what git listed, as files (no folder brings
		// its contents), with the paths' selection, less exclude.
		{name: "untracked only", untracked: []string{"build/app", "logs/a.log", "README.md"},
			want: []string{"README.md", "build/app", "logs/a.log"}, untrackedN: 3},
		{name: "untracked with paths", paths: []string{"docs/"}, untracked: []string{"logs/b.txt", "docs/a/b/c.md"},
			want: []string{"docs", "docs/a", "docs/a/b", "docs/a/b/c.md", "docs/up", "logs/b.txt"}, found: []int{6}, untrackedN: 2,
			warnings: 1, warningSubstr: "docs/away"},
		{name: "untracked excluded", paths: []string{"build/app"}, excl: []string{"*.md", "logs/**", "build/sub"},
			untracked: []string{"README.md", "logs/a.log", "logs/b.txt", "build/sub/y.log", "build/app.debug"},
			want:      []string{"build/app", "build/app.debug"}, found: []int{1}, exclN: []int{1, 2, 1}, untrackedN: 1},
		{name: "untracked excluded by a folder", excl: []string{"build"},
			untracked: []string{"build/app", "build/sub/deep/x.txt", "logs/a.log"}, want: []string{"logs/a.log"}, exclN: []int{2},
			untrackedN: 1},
		{name: "untracked gone or bad", untracked: []string{"vanished.txt", "../outside", "/etc/passwd", ".", "", "logs/../README.md"},
			want: []string{"README.md"}, untrackedN: 1},
		{name: "untracked link leading out", untracked: []string{"escape", "docs/up", "link"},
			want: []string{"docs/up", "link"}, untrackedN: 2, warnings: 1, warningSubstr: "escape"},
		{name: "untracked nothing", untracked: []string{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root, err := os.OpenRoot(dir)
			if err != nil {
				t.Fatal(err)
			}
			defer root.Close()
			sel := selectArtifacts(root.FS(), dir, tc.paths, tc.untracked, tc.excl)
			if strings.Join(sel.Names, ",") != strings.Join(tc.want, ",") {
				t.Errorf("names %q; want %q", sel.Names, tc.want)
			}
			if sel.Untracked != tc.untrackedN {
				t.Errorf("untracked %d; want %d", sel.Untracked, tc.untrackedN)
			}
			if fmtInts(sel.Found) != fmtInts(tc.found) {
				t.Errorf("found %v; want %v", sel.Found, tc.found)
			}
			if tc.exclN == nil {
				tc.exclN = make([]int, len(tc.excl))
			}
			if fmtInts(sel.Excluded) != fmtInts(tc.exclN) {
				t.Errorf("excluded %v; want %v", sel.Excluded, tc.exclN)
			}
			if len(sel.Warnings) != tc.warnings || tc.warningSubstr != "" && !strings.Contains(strings.Join(sel.Warnings, "\n"), tc.warningSubstr) {
				t.Errorf("warnings %q; want %d with %q", sel.Warnings, tc.warnings, tc.warningSubstr)
			}
		})
	}
}

func TestParseUntracked(t *testing.T) {
	for _, tc := range []struct {
		out  string
		want []string
	}{
		{"", nil},
		{"a.txt\x00", []string{"a.txt"}},
		{"a.txt\x00dir/b c.txt\x00nested/\x00", []string{"a.txt", "dir/b c.txt", "nested"}},
		{"new\nline\x00\x00tab\tname", []string{"new\nline", "tab\tname"}},
	} {
		if got := parseUntracked([]byte(tc.out)); strings.Join(got, "|") != strings.Join(tc.want, "|") || len(got) != len(tc.want) {
			t.Errorf("parseUntracked(%q) = %q; want %q", tc.out, got, tc.want)
		}
	}
}

func fmtInts(a []int) string {
	var b strings.Builder
	for _, n := range a {
		b.WriteString(strings.Repeat("|", n) + ",")
	}
	return b.String()
}

// An archive written by writeZip unpacks into the same tree.
func TestWriteZip_extractRoundTrip(t *testing.T) {
	src := buildTree(t, map[string]string{"out/a.txt": "alpha", "out/sub/b.bin": "\x00\x01beta", "top.txt": "top"},
		map[string]string{"out/link": "a.txt", "out/sub/up": "../a.txt"})
	if err := os.Chmod(filepath.Join(src, "out/sub/b.bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	root, err := os.OpenRoot(src)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	sel := selectArtifacts(root.FS(), src, []string{"out"}, nil, nil)
	var buf bytes.Buffer
	if err := writeZip(&buf, root, sel.Names); err != nil {
		t.Fatal(err)
	}

	dst := t.TempDir()
	n, err := extractZip(bytes.NewReader(buf.Bytes()), int64(buf.Len()), dst)
	if err != nil {
		t.Fatal(err)
	}
	if n != 6 {
		t.Errorf("%d entries extracted; want 6", n)
	}
	for name, want := range map[string]string{"out/a.txt": "alpha", "out/sub/b.bin": "\x00\x01beta", "out/link": "alpha", "out/sub/up": "alpha"} {
		if b, err := os.ReadFile(filepath.Join(dst, name)); err != nil || string(b) != want {
			t.Errorf("%s: %q, %v; want %q", name, b, err, want)
		}
	}
	if target, err := os.Readlink(filepath.Join(dst, "out/sub/up")); err != nil || target != "../a.txt" {
		t.Errorf("link out/sub/up: %q, %v", target, err)
	}
	if fi, err := os.Stat(filepath.Join(dst, "out/sub/b.bin")); err != nil || fi.Mode().Perm() != 0o755 {
		t.Errorf("mode of b.bin: %v, %v", fi.Mode(), err)
	}
	if _, err := os.Stat(filepath.Join(dst, "top.txt")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("top.txt was not selected but exists: %v", err)
	}
}

func TestWriteGzipMembers(t *testing.T) {
	src := buildTree(t, map[string]string{"r/one.xml": "<one/>", "r/two.xml": "<two/>"}, nil)
	root, err := os.OpenRoot(src)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	var buf bytes.Buffer
	if err := writeGzipMembers(&buf, root, regularFiles(root, []string{"r", "r/one.xml", "r/two.xml"})); err != nil {
		t.Fatal(err)
	}
	zr, err := gzip.NewReader(&buf)
	if err != nil {
		t.Fatal(err)
	}
	var members []string
	for {
		zr.Multistream(false)
		b, err := io.ReadAll(zr)
		if err != nil {
			t.Fatal(err)
		}
		members = append(members, zr.Name+"="+string(b))
		if err := zr.Reset(&buf); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
	}
	if strings.Join(members, " ") != "r/one.xml=<one/> r/two.xml=<two/>" {
		t.Errorf("members %q", members)
	}
}

type zipEntry struct {
	name, content string
	mode          fs.FileMode
}

func makeZip(t testing.TB, entries []zipEntry) []byte {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, e := range entries {
		h := &zip.FileHeader{Name: e.name, Method: zip.Store}
		mode := e.mode
		if mode == 0 {
			mode = 0o644
		}
		h.SetMode(mode)
		w, err := zw.CreateHeader(h)
		if err != nil {
			t.Fatal(err)
		}
		io.WriteString(w, e.content)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestExtractZip_refusesEscapes(t *testing.T) {
	link := fs.ModeSymlink | 0o777
	for _, tc := range []struct {
		name    string
		entries []zipEntry
		links   map[string]string // already in the build folder
	}{
		{name: "dot-dot", entries: []zipEntry{{name: "../evil", content: "x"}}},
		{name: "dot-dot inside", entries: []zipEntry{{name: "a/../../evil", content: "x"}}},
		{name: "backslash dot-dot", entries: []zipEntry{{name: `..\evil`, content: "x"}}},
		{name: "absolute", entries: []zipEntry{{name: "/tmp/evil", content: "x"}}},
		{name: "link absolute", entries: []zipEntry{{name: "l", content: "/etc", mode: link}}},
		{name: "link climbing out", entries: []zipEntry{{name: "a/l", content: "../../x", mode: link}}},
		{name: "link then write through it", entries: []zipEntry{{name: "l", content: "..", mode: link}, {name: "l/evil", content: "x"}}},
		{name: "file through a link already there", links: map[string]string{"out": "../outside"},
			entries: []zipEntry{{name: "out/evil", content: "x"}}},
		{name: "link through a link already there", links: map[string]string{"out": "../outside"},
			entries: []zipEntry{{name: "l", content: "out/x", mode: link}}},
		{name: "link in a folder reached by a link", links: map[string]string{"here": "."},
			entries: []zipEntry{{name: "d/", mode: fs.ModeDir | 0o755}, {name: "here/d/l", content: "../../x", mode: link}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			parent := t.TempDir()
			dir := filepath.Join(parent, "build")
			outside := filepath.Join(parent, "outside")
			for _, d := range []string{dir, outside} {
				if err := os.Mkdir(d, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			for name, target := range tc.links {
				if err := os.Symlink(target, filepath.Join(dir, name)); err != nil {
					t.Fatal(err)
				}
			}
			b := makeZip(t, tc.entries)
			if _, err := extractZip(bytes.NewReader(b), int64(len(b)), dir); err == nil {
				t.Error("extracted")
			}
			checkContained(t, parent, dir)
		})
	}
}

// checkContained fails when anything but dir and an empty "outside"
// exists in parent, or a link under dir resolves out of it.
func checkContained(t *testing.T, parent, dir string) {
	t.Helper()
	entries, err := os.ReadDir(parent)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	sort.Strings(names)
	if strings.Join(names, ",") != "build,outside" {
		t.Fatalf("written next to the build folder: %v", names)
	}
	if out, _ := os.ReadDir(filepath.Join(parent, "outside")); len(out) != 0 {
		t.Fatalf("written outside: %v", out)
	}
	realDir, err := filepath.EvalSymlinks(dir)
	if err != nil {
		t.Fatal(err)
	}
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.Type()&fs.ModeSymlink == 0 {
			return nil
		}
		if rel, _ := filepath.Rel(dir, p); rel == "out" || rel == "here" {
			return nil // planted by the test
		}
		if real, err := filepath.EvalSymlinks(p); err == nil {
			if r, err := filepath.Rel(realDir, real); err != nil || !filepath.IsLocal(r) && r != "." {
				t.Fatalf("link %s resolves to %s, outside", p, real)
			}
		}
		return nil
	})
}

func FuzzExtract(f *testing.F) {
	link := fs.ModeSymlink | 0o777
	f.Add(makeZip(f, []zipEntry{{name: "a/b.txt", content: "hi"}, {name: "a/l", content: "b.txt", mode: link}}))
	f.Add(makeZip(f, []zipEntry{{name: "../x", content: "hi"}}))
	f.Add(makeZip(f, []zipEntry{{name: "l", content: "..", mode: link}, {name: "l/x", content: "hi"}}))
	f.Add(makeZip(f, []zipEntry{{name: "d/", mode: fs.ModeDir | 0o755}, {name: "d/l", content: "../../outside", mode: link}}))
	f.Add(makeZip(f, []zipEntry{{name: "x", content: "1"}, {name: "x/", mode: fs.ModeDir | 0o700}, {name: "x", content: "2"}}))
	f.Add([]byte("PK\x03\x04garbage"))
	f.Fuzz(func(t *testing.T, data []byte) {
		parent := t.TempDir()
		dir := filepath.Join(parent, "build")
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Mkdir(filepath.Join(parent, "outside"), 0o755); err != nil {
			t.Fatal(err)
		}
		extractZip(bytes.NewReader(data), int64(len(data)), dir) // an error is fine; escaping or panicking is not
		checkContained(t, parent, dir)
	})
}

// FuzzExtractEntries builds archives from a description, one entry per
// line: "f <name> <content>", "d <name>" or "l <name> <target>", to reach
// the path rules more often than random bytes do.
func FuzzExtractEntries(f *testing.F) {
	f.Add("f a/b.txt hi\nl a/l b.txt\nl c ../a")
	f.Add("d x\nl x/y ../..\nf x/y/z hi")
	f.Add("l up ..\nf up/evil x")
	f.Add("d a\nl a/b .\nl a/b/c ../../..\nf a/b/c/d x")
	f.Fuzz(func(t *testing.T, spec string) {
		var entries []zipEntry
		for _, line := range strings.Split(spec, "\n") {
			fields := strings.SplitN(line, " ", 3)
			if len(fields) < 2 {
				continue
			}
			e := zipEntry{name: fields[1]}
			if len(fields) == 3 {
				e.content = fields[2]
			}
			switch fields[0] {
			case "f":
			case "d":
				e.mode, e.name = fs.ModeDir|0o755, strings.TrimSuffix(e.name, "/")+"/"
			case "l":
				e.mode = fs.ModeSymlink | 0o777
			default:
				continue
			}
			entries = append(entries, e)
		}
		data := makeZip(t, entries)
		parent := t.TempDir()
		dir := filepath.Join(parent, "build")
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Mkdir(filepath.Join(parent, "outside"), 0o755); err != nil {
			t.Fatal(err)
		}
		extractZip(bytes.NewReader(data), int64(len(data)), dir)
		checkContained(t, parent, dir)
	})
}
