package web

import (
	"os"
	"strings"
	"testing"
)

// TestAppCSS_blocks checks the style sheet's blocks close where they
// open: one brace left open (a merge of two additions at the end of the
// sheet) swallows every rule after it, the highlighter's included.
func TestAppCSS_blocks(t *testing.T) {
	b, err := os.ReadFile("static/app.css")
	if err != nil {
		t.Fatal(err)
	}
	depth := 0
	for i, line := range strings.Split(string(b), "\n") {
		depth += strings.Count(line, "{") - strings.Count(line, "}")
		if depth < 0 {
			t.Fatalf("line %d closes a block that is not open", i+1)
		}
		// Rules at the top level start a line; a line starting with a
		// comment or a selector inside an @media block is indented.
		if depth > 0 && strings.HasPrefix(line, "/*") {
			t.Fatalf("line %d: a top-level comment inside an open block (depth %d)", i+1, depth)
		}
	}
	if depth != 0 {
		t.Fatalf("%d blocks left open at the end", depth)
	}
}
