package web

import (
	"fmt"
	"strings"
	"testing"

	"quarry/internal/repofiles"
)

func TestHunkStart(t *testing.T) {
	for _, c := range []struct {
		in       string
		old, new int
	}{
		{"@@ -3,5 +3,6 @@ package main", 3, 3},
		{"@@ -1 +1 @@", 1, 1},
		{"@@ -0,0 +1,2 @@", 0, 1},
		{"@@ -10,2 +12 @@", 10, 12},
		{"@@ junk", 0, 0},
		{"@@", 0, 0},
		{"@@ -x,1 +-4,1 @@", 0, 0},
	} {
		if o, n := hunkStart(c.in); o != c.old || n != c.new {
			t.Errorf("hunkStart(%q) = %d, %d; want %d, %d", c.in, o, n, c.old, c.new)
		}
	}
}

// show writes lines or rows compactly: kind:old:new:text.
func showLines(ls []diffLine) string {
	var b strings.Builder
	for _, l := range ls {
		fmt.Fprintf(&b, "%s:%d:%d:%s|", l.Kind, l.Old, l.New, l.Text)
	}
	return b.String()
}

func showRows(rs []diffRow) string {
	side := func(l *diffLine) string {
		if l == nil {
			return "-"
		}
		return fmt.Sprintf("%s:%d:%d:%s", l.Kind, l.Old, l.New, l.Text)
	}
	var b strings.Builder
	for _, r := range rs {
		if r.Hunk != "" {
			fmt.Fprintf(&b, "[%s]|", r.Hunk)
			continue
		}
		fmt.Fprintf(&b, "%s / %s|", side(r.Left), side(r.Right))
	}
	return b.String()
}

func TestParseHunksAndSideBySide(t *testing.T) {
	for _, c := range []struct {
		name, diff, lines, rows string
	}{
		{"change", "@@ -2,3 +2,3 @@ f\n a\n-b\n+B\n c\n",
			"hunk:0:0:@@ -2,3 +2,3 @@ f|ctx:2:2:a|del:3:0:b|add:0:3:B|ctx:4:4:c|",
			"[@@ -2,3 +2,3 @@ f]|ctx:2:2:a / ctx:2:2:a|del:3:0:b / add:0:3:B|ctx:4:4:c / ctx:4:4:c|"},
		{"more added than removed", "@@ -1,1 +1,3 @@\n-x\n+y\n+z\n+w\n",
			"hunk:0:0:@@ -1,1 +1,3 @@|del:1:0:x|add:0:1:y|add:0:2:z|add:0:3:w|",
			"[@@ -1,1 +1,3 @@]|del:1:0:x / add:0:1:y|- / add:0:2:z|- / add:0:3:w|"},
		{"only removed, no newline", "@@ -1,2 +0,0 @@\n-x\n-y\n\\ No newline at end of file",
			"hunk:0:0:@@ -1,2 +0,0 @@|del:1:0:x|del:2:0:y|note:0:0:\\ No newline at end of file|",
			"[@@ -1,2 +0,0 @@]|del:1:0:x / -|del:2:0:y / -|note:0:0:\\ No newline at end of file / -|"},
		{"two hunks", "@@ -1 +1 @@\n-a\n+b\n@@ -9 +9 @@\n-c\n+d",
			"hunk:0:0:@@ -1 +1 @@|del:1:0:a|add:0:1:b|hunk:0:0:@@ -9 +9 @@|del:9:0:c|add:0:9:d|",
			"[@@ -1 +1 @@]|del:1:0:a / add:0:1:b|[@@ -9 +9 @@]|del:9:0:c / add:0:9:d|"},
	} {
		ls := parseHunks(c.diff)
		if got := showLines(ls); got != c.lines {
			t.Errorf("%s: lines\n%s\nwant\n%s", c.name, got, c.lines)
		}
		if got := showRows(sideBySide(ls)); got != c.rows {
			t.Errorf("%s: rows\n%s\nwant\n%s", c.name, got, c.rows)
		}
	}
}

func TestBuildDiffBounds(t *testing.T) {
	var big strings.Builder
	big.WriteString("@@ -0,0 +1,600 @@\n")
	for i := range 600 {
		fmt.Fprintf(&big, "+%d\n", i)
	}
	files := []repofiles.FileDiff{
		{NewPath: "small", Diff: "@@ -1 +1 @@\n-a\n+b\n", Additions: 1, Deletions: 1},
		{NewPath: "big", NewFile: true, Diff: big.String(), Additions: 600},
		{NewPath: "bin", Binary: true},
		{NewPath: "huge", TooLarge: true, Additions: 9},
	}
	for i := range maxDiffLines / 600 {
		files = append(files, repofiles.FileDiff{NewPath: fmt.Sprint("more", i), Diff: big.String()})
	}
	for _, parallel := range []bool{false, true} {
		dv := buildDiff(files, parallel)
		if dv.Additions != 610 || dv.Deletions != 1 || len(dv.Files) != len(files) {
			t.Fatalf("parallel %v: totals +%d -%d, %d files", parallel, dv.Additions, dv.Deletions, len(dv.Files))
		}
		small, bigf := dv.Files[0], dv.Files[1]
		if small.Collapsed || !bigf.Collapsed || small.Omitted || bigf.Omitted {
			t.Errorf("parallel %v: collapsed %v %v, omitted %v %v", parallel, small.Collapsed, bigf.Collapsed, small.Omitted, bigf.Omitted)
		}
		if parallel != (len(small.Rows) > 0) || parallel == (len(small.Lines) > 0) {
			t.Errorf("parallel %v: %d lines, %d rows", parallel, len(small.Lines), len(small.Rows))
		}
		if last := dv.Files[len(dv.Files)-1]; !last.Omitted || len(last.Lines)+len(last.Rows) != 0 {
			t.Errorf("parallel %v: past the page's line budget a file is still shown", parallel)
		}
		if !dv.Files[2].Binary || !dv.Files[3].TooLarge {
			t.Errorf("parallel %v: binary and too large files lost their marks", parallel)
		}
	}
}
