package main

import (
	"fmt"
	"io"
	"sort"
	"sync"
)

// class is what is wrong with an item.
type class int

const (
	// lost: an acknowledged write is not there.
	lost class = iota
	// corrupt: it is there with other content, or a repository or the
	// database fails its integrity check.
	corrupt
	// stuck: work that should have finished by itself did not (a task
	// past its due time, a fork still copying, a pipeline, job or merge
	// that never ends).
	stuck
)

func (c class) String() string {
	switch c {
	case lost:
		return "lost"
	case corrupt:
		return "corrupt"
	default:
		return "stuck"
	}
}

// finding is one lost, corrupt or stuck item.
type finding struct {
	class class
	key   string // names the item: one finding per key
	what  string
}

// verdict gathers the findings of a run. It is safe for concurrent
// checkers.
type verdict struct {
	mu           sync.Mutex
	acknowledged int
	findings     []finding
	keys         map[string]bool
}

func newVerdict(acknowledged int) *verdict {
	return &verdict{acknowledged: acknowledged, keys: map[string]bool{}}
}

// add records a finding about the item key; a second finding about the
// same item (the API and the database both see a stuck pipeline) is
// dropped.
func (v *verdict) add(c class, key, format string, args ...any) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.keys[key] {
		return
	}
	v.keys[key] = true
	v.findings = append(v.findings, finding{class: c, key: key, what: fmt.Sprintf(format, args...)})
}

// counts returns the number of lost, corrupt and stuck items.
func (v *verdict) counts() (l, c, s int) {
	v.mu.Lock()
	defer v.mu.Unlock()
	for _, f := range v.findings {
		switch f.class {
		case lost:
			l++
		case corrupt:
			c++
		case stuck:
			s++
		}
	}
	return l, c, s
}

// ok reports whether nothing was lost, corrupt or stuck.
func (v *verdict) ok() bool {
	l, c, s := v.counts()
	return l == 0 && c == 0 && s == 0
}

// line is the verdict's last line.
func (v *verdict) line() string {
	l, c, s := v.counts()
	return fmt.Sprintf("crashtest: %d acknowledged, %d lost, %d corrupt, %d stuck", v.acknowledged, l, c, s)
}

// write prints every finding, lost first, then the verdict line last.
func (v *verdict) write(w io.Writer) {
	v.mu.Lock()
	fs := append([]finding(nil), v.findings...)
	v.mu.Unlock()
	sort.SliceStable(fs, func(i, j int) bool {
		if fs[i].class != fs[j].class {
			return fs[i].class < fs[j].class
		}
		return fs[i].key < fs[j].key
	})
	for _, f := range fs {
		fmt.Fprintf(w, "%s: %s\n", f.class, f.what)
	}
	fmt.Fprintln(w, v.line())
}
