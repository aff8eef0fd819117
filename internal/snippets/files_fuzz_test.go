package snippets

import (
	"encoding/json"
	"sort"
	"testing"

	"quarry/internal/model"
)

// FuzzFiles feeds files[] as a client may send it — any JSON array —
// through the parser and the planner, for a create and an update of a
// snippet of a few files: nothing panics, every refusal is classified,
// and an accepted change leaves one to model.SnippetMaxFiles files, each
// at a valid path, sorted and unique, with a size for every file the
// change wrote and an origin among the old files for every other.
func FuzzFiles(f *testing.F) {
	for _, seed := range []string{
		`[{"file_path":"a.txt","content":"x"}]`,
		`[{"action":"create","content":"c"},{"action":"move","previous_path":"a","file_path":"d/a"}]`,
		`[{"action":"delete","file_path":"b"},{"action":"update","file_path":"a","content":"y"}]`,
		`[{"action":"move","previous_path":"a","file_path":"a/b"}]`,
		`[{"file_path":"../x","content":"x"},{"file_path":"/x"}]`,
		`[{"action":"create","file_path":"a","content":"1"},{"action":"delete","file_path":"a"}]`,
		`["x",1,null,{"file_path":{"a":1}}]`,
		`[{"file_path":"%2e%2e/x","content":"x"}]`,
	} {
		f.Add(seed, false)
		f.Add(seed, true)
	}
	current := []string{"a", "b", "dir/c"}
	f.Fuzz(func(t *testing.T, body string, update bool) {
		var raw []json.RawMessage
		if err := json.Unmarshal([]byte(body), &raw); err != nil {
			return
		}
		objects := make([]string, len(raw))
		for i, r := range raw {
			objects[i] = string(r)
		}
		actions, err := ParseFiles(objects, update)
		if err != nil {
			if model.KindOf(err) == 0 {
				t.Fatalf("unclassified refusal %v", err)
			}
			return
		}
		base := current
		if !update {
			base = nil
		}
		plan, err := Apply(base, actions)
		if err != nil {
			var ce *ChangeError
			if ce, _ = err.(*ChangeError); ce == nil || ce.Message == "" {
				t.Fatalf("refusal %v is no ChangeError", err)
			}
			return
		}
		if n := len(plan.Files); n < 1 || n > model.SnippetMaxFiles {
			t.Fatalf("%d files", n)
		}
		if !sort.StringsAreSorted(plan.Files) {
			t.Fatalf("files not sorted: %q", plan.Files)
		}
		old := map[string]bool{}
		for _, p := range base {
			old[p] = true
		}
		for i, p := range plan.Files {
			if !ValidPath(p) {
				t.Fatalf("invalid path %q in %q", p, plan.Files)
			}
			if i > 0 && plan.Files[i-1] == p {
				t.Fatalf("duplicate %q", p)
			}
			_, written := plan.Written[p]
			from, kept := plan.Kept[p]
			if written == kept || (kept && !old[from]) {
				t.Fatalf("%q: written %v, kept from %q (%v)", p, written, from, kept)
			}
		}
		if len(plan.Written)+len(plan.Kept) != len(plan.Files) {
			t.Fatalf("written %v kept %v for files %q", plan.Written, plan.Kept, plan.Files)
		}
	})
}
