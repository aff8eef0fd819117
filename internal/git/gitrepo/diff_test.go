package gitrepo

import (
	"strings"
	"testing"
)

func diffOf(path string, lines ...string) string {
	return "diff --git a/" + path + " b/" + path + "\nindex 1111111..2222222 100644\n--- a/" + path + "\n+++ b/" + path +
		"\n@@ -1,1 +1," + "1 @@\n" + strings.Join(lines, "\n") + "\n"
}

// TestParseDiff_limits: text is kept within the limits and dropped past
// them (too_large), while line counts stay right and no line is held
// whole.
func TestParseDiff_limits(t *testing.T) {
	long := "+" + strings.Repeat("x", 200<<10) // one line longer than the read buffer
	many := make([]string, 30)
	for i := range many {
		many[i] = "+line"
	}
	out := diffOf("small.txt", "-a", "+b") + diffOf("long.txt", long, "+tail") + diffOf("many.txt", many...) + diffOf("after.txt", "+c")
	lim := DiffLimits{MaxFiles: 10, MaxLines: 20, MaxFileBytes: 1 << 10}
	files, overflow, err := parseDiff(strings.NewReader(out), lim)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 4 || !overflow {
		t.Fatalf("%d files, overflow %v", len(files), overflow)
	}
	want := []struct {
		path     string
		kept     bool
		add, del int
	}{{"small.txt", true, 1, 1}, {"long.txt", false, 2, 0}, {"many.txt", false, 30, 0}, {"after.txt", true, 1, 0}}
	for i, w := range want {
		f := files[i]
		if f.NewPath != w.path || (f.Diff != "") != w.kept || f.TooLarge == w.kept || f.Additions != w.add || f.Deletions != w.del {
			t.Errorf("%s: kept %v too_large %v +%d -%d", f.NewPath, f.Diff != "", f.TooLarge, f.Additions, f.Deletions)
		}
	}
	if files[0].Diff != "@@ -1,1 +1,1 @@\n-a\n+b\n" {
		t.Errorf("small diff %q", files[0].Diff)
	}
	stats, overflow, _ := parseDiff(strings.NewReader(out), StatsOnly)
	if overflow || stats[2].Additions != 30 || stats[0].Diff != "" || stats[0].TooLarge {
		t.Errorf("stats only: overflow %v %+v", overflow, stats[0])
	}
}
