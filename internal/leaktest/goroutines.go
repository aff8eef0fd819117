package leaktest

import (
	"runtime"
	"strconv"
	"strings"
)

// Goroutine is one goroutine of a stack dump.
type Goroutine struct {
	ID    int64
	State string // "chan receive", "IO wait", "select", …
	// Funcs are the function names of its frames, innermost first,
	// without arguments.
	Funcs []string
	// CreatedBy is the function that started it ("" for the main
	// goroutine).
	CreatedBy string
	Stack     string // the dump's text for this goroutine
}

// Goroutines returns every goroutine of the process (the runtime's system
// goroutines are never in the dump).
func Goroutines() []Goroutine {
	return parseStacks(stacks(true))
}

func stacks(all bool) string {
	buf := make([]byte, 64<<10)
	for {
		n := runtime.Stack(buf, all)
		if n < len(buf) {
			return string(buf[:n])
		}
		buf = make([]byte, 2*len(buf))
	}
}

// currentID is the id of the calling goroutine.
func currentID() int64 {
	gs := parseStacks(stacks(false))
	if len(gs) == 0 {
		return 0
	}
	return gs[0].ID
}

// parseStacks reads runtime.Stack's text: blocks separated by blank lines,
// each a header "goroutine 7 [chan receive, 3 minutes]:", then function
// lines "pkg.(*T).m(0x1, …)" each followed by a tab-indented file line,
// and a last "created by pkg.f in goroutine 1".
func parseStacks(dump string) []Goroutine {
	var out []Goroutine
	for _, block := range strings.Split(strings.TrimSpace(dump), "\n\n") {
		lines := strings.Split(block, "\n")
		g, ok := parseHeader(lines[0])
		if !ok {
			continue
		}
		g.Stack = block
		for _, l := range lines[1:] {
			switch {
			case l == "" || strings.HasPrefix(l, "\t") || strings.HasPrefix(l, "..."):
			case strings.HasPrefix(l, "created by "):
				fn := strings.TrimPrefix(l, "created by ")
				if i := strings.Index(fn, " in goroutine "); i >= 0 {
					fn = fn[:i]
				}
				g.CreatedBy = fn
			default:
				g.Funcs = append(g.Funcs, funcName(l))
			}
		}
		out = append(out, g)
	}
	return out
}

func parseHeader(l string) (Goroutine, bool) {
	rest, ok := strings.CutPrefix(l, "goroutine ")
	if !ok {
		return Goroutine{}, false
	}
	idText, rest, ok := strings.Cut(rest, " ")
	if !ok {
		return Goroutine{}, false
	}
	id, err := strconv.ParseInt(idText, 10, 64)
	if err != nil {
		return Goroutine{}, false
	}
	// Debug builds add fields ("gp=0x… m=…") before the state.
	i, j := strings.Index(rest, "["), strings.LastIndex(rest, "]")
	if i < 0 || j < i {
		return Goroutine{}, false
	}
	state, _, _ := strings.Cut(rest[i+1:j], ",")
	return Goroutine{ID: id, State: state}, true
}

// funcName strips the argument list from a frame line:
// "net/http.(*Server).Serve(0xc000)" → "net/http.(*Server).Serve".
func funcName(l string) string {
	if strings.HasSuffix(l, ")") {
		if i := strings.LastIndex(l, "("); i > 0 {
			return l[:i]
		}
	}
	return l
}

// in reports a frame or the creator in a function starting with one of
// prefixes.
func (g *Goroutine) in(prefixes []string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(g.CreatedBy, p) {
			return true
		}
		for _, f := range g.Funcs {
			if strings.HasPrefix(f, p) {
				return true
			}
		}
	}
	return false
}

// signature groups goroutines with the same stack and state.
func (g *Goroutine) signature() string {
	return g.State + "|" + strings.Join(g.Funcs, "|") + "|" + g.CreatedBy
}

// CountCreatedBy counts the goroutines that fn started (a full function
// name, as "created by" lines give it): what a test of one background
// worker's lifetime counts.
func CountCreatedBy(fn string) int {
	n := 0
	for _, g := range Goroutines() {
		if g.CreatedBy == fn {
			n++
		}
	}
	return n
}
