package ciconfig

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
)

// laughs is a "billion laughs" document: ten levels of ten aliases each,
// 10^9 strings when expanded, a few hundred bytes written.
func laughs() string {
	var b strings.Builder
	b.WriteString("l0: &l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]\n")
	for i := 1; i < 10; i++ {
		fmt.Fprintf(&b, "l%d: &l%d [", i, i)
		for range 10 {
			fmt.Fprintf(&b, "*l%d, ", i-1)
		}
		b.WriteString("]\n")
	}
	b.WriteString("job:\n  script: *l9\n")
	return b.String()
}

// nested is a configuration whose hidden job nests n levels deep.
func nested(n int) string {
	return "job: {script: x}\n.template: {kept: " + strings.Repeat("{a: ", n) + "b" + strings.Repeat("}", n) + "}"
}

// amplified is a template of many lines that many jobs extend (or
// reference): small to write, large to decode.
func amplified(reference bool) string {
	var b strings.Builder
	b.WriteString(".t:\n  script:\n")
	for i := range 20000 {
		fmt.Fprintf(&b, "    - echo %d\n", i)
	}
	for i := range 2000 {
		if reference {
			fmt.Fprintf(&b, "j%d: {script: !reference [.t, script]}\n", i)
		} else {
			fmt.Fprintf(&b, "j%d: {extends: .t}\n", i)
		}
	}
	return b.String()
}

// TestLoad_hostile: documents made to exhaust time or memory are refused
// with GitLab's messages, in little memory. Their time is bounded by the
// work budget, which counts work rather than seconds, so the refusal does
// not depend on how busy the machine is (a timed assertion here failed on
// a loaded one).
func TestLoad_hostile(t *testing.T) {
	for _, c := range []struct {
		name, src, err string
	}{
		{"billion laughs", laughs(), "The parsed YAML is too big"},
		{"200 levels", nested(200), "The parsed YAML is too big"},
		{"200 levels of lists", "job: {script: " + strings.Repeat("[", 200) + strings.Repeat("]", 200) + "}", "The parsed YAML is too big"},
		{"self-enclosing anchors", "a: &a {b: *a}\njob: {script: x}", "The parsed YAML is too big"},
		{"extends amplification", amplified(false), "Resolving config took longer than expected"},
		{"reference amplification", amplified(true), "Resolving config took longer than expected"},
		{"too big", "a: '" + strings.Repeat("x", 1<<20) + "'", "The parsed YAML is too big"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			_, err := Load([]byte(c.src), Options{})
			runtime.ReadMemStats(&after)
			if err == nil || err.Error() != c.err {
				t.Fatalf("Load: %v; want %q", err, c.err)
			}
			limit := uint64(64 << 20)
			if raceEnabled {
				limit *= 10
			}
			if alloc := after.TotalAlloc - before.TotalAlloc; alloc > limit {
				t.Errorf("allocated %d MiB; want at most %d", alloc>>20, limit>>20)
			}
		})
	}
	if _, err := Load([]byte(nested(98)), Options{}); err != nil { // 100 levels, root and job included
		t.Errorf("100 levels: %v", err)
	}
}
