package memtrim

import (
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

const smaps = `00400000-014ae000 r-xp 00000000 fe:00 10369983                           /usr/bin/quarry
Size:              17080 kB
Rss:               13492 kB
Private_Dirty:         0 kB
Anonymous:             0 kB
014ae000-0275d000 r--p 010ae000 fe:00 10369983                           /usr/bin/quarry
Rss:               17852 kB
Anonymous:             0 kB
0275d000-02836000 rw-p 0235d000 fe:00 10369983                           /usr/bin/quarry
Rss:                 740 kB
Anonymous:           236 kB
02836000-02900000 r--p 02436000 fe:00 10369983                           /usr/bin/quarry
Anonymous:             4 kB
c000000000-c004000000 rw-p 00000000 00:00 0
Anonymous:          4000 kB
7f0000000000-7f0000001000 r--p 00000000 fe:00 1234                       /usr/lib/x86_64-linux-gnu/libc.so.6
Anonymous:             0 kB
7f0000002000-7f0000003000 r-xp 00000000 fe:00 10369983                   /usr/bin/quarry
Anonymous:             0 kB`

func TestReadOnlyMappings(t *testing.T) {
	for _, tc := range []struct {
		name, path string
		want       []mapping
	}{
		{"the executable's clean read-only segments", "/usr/bin/quarry", []mapping{
			{0x400000, 0x14ae000}, {0x14ae000, 0x275d000}, {0x7f0000002000, 0x7f0000003000}}},
		{"another file", "/usr/lib/x86_64-linux-gnu/libc.so.6", []mapping{{0x7f0000000000, 0x7f0000001000}}},
		{"no such file", "/nowhere", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := readOnlyMappings(strings.NewReader(smaps), tc.path)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, tc.want) {
				t.Fatalf("got %x, want %x", got, tc.want)
			}
		})
	}
}

// TestExecutable drops the test binary's read-only pages and goes on
// running code and reading data from them.
func TestExecutable(t *testing.T) {
	before := rssFile(t)
	n, err := Executable()
	if err != nil {
		t.Fatal(err)
	}
	if n == 0 {
		t.Fatal("no mapping of the executable was dropped")
	}
	after := rssFile(t)
	if after >= before {
		t.Fatalf("file pages %d kB before, %d kB after", before, after)
	}
	// Code and read-only data still work: a regular expression compiled
	// now runs the regexp package's code and reads its tables again.
	if !regexp.MustCompile(`^a+b$`).MatchString("aaab") {
		t.Fatal("the regular expression does not match")
	}
	t.Logf("dropped %d MiB of mappings: file pages %d → %d kB", n>>20, before, after)
}

func rssFile(t *testing.T) int {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "RssFile:"); ok {
			n, err := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(v), " kB"))
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	t.Fatal("no RssFile in /proc/self/status")
	return 0
}
