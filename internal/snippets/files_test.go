package snippets

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"quarry/internal/model"
)

func TestValidPath(t *testing.T) {
	for _, c := range []struct {
		path string
		ok   bool
	}{
		{"a.txt", true},
		{"dir/sub/a.go", true},
		{"a b.txt", true},
		{".gitignore", true},
		{"..a", true},
		{"a..b", true},
		{"dir/.git-config", true},
		{"ünïcødé.md", true},
		{"", false},
		{"/etc/passwd", false},
		{"../a", false},
		{"a/../b", false},
		{"a/..", false},
		{"..", false},
		{".", false},
		{"./a", false},
		{"a//b", false},
		{"a/", false},
		{"a/./b", false},
		{".git", false},
		{"x/.GIT/config", false},
		{"..%2Fa", false},
		{"%2e%2e/a", false},
		{"a\\..\\b", false},
		{"..\\a", false},
		{"%2Fetc", false},
		{"a\x00b", false},
	} {
		if got := ValidPath(c.path); got != c.ok {
			t.Errorf("ValidPath(%q) = %v; want %v", c.path, got, c.ok)
		}
	}
}

func str(s string) *string { return &s }

func TestParseFiles(t *testing.T) {
	for _, c := range []struct {
		name    string
		objects []string
		update  bool
		want    []Action
		err     string // the 400's message, or "422"
	}{
		{name: "create", objects: []string{`{"file_path":"a.txt","content":"x"}`, `{"file_path":"d/b","content":"y","extra":1}`},
			want: []Action{{Kind: "create", Path: "a.txt", Content: str("x")}, {Kind: "create", Path: "d/b", Content: str("y")}}},
		{name: "create needs both", objects: []string{`{}`, `{"file_path":"a"}`},
			err: "files[0][file_path] is missing, files[0][content] is missing, files[1][content] is missing"},
		{name: "create refuses blanks", objects: []string{`{"file_path":" ","content":"\n"}`},
			err: "files[0][file_path] is empty, files[0][content] is empty"},
		{name: "create refuses traversal", objects: []string{`{"file_path":"../x","content":"x"}`, `{"file_path":"/abs","content":"x"}`},
			err: "files[0][file_path] should be a valid file path, files[1][file_path] should be a valid file path"},
		{name: "wrong types", objects: []string{`{"file_path":1,"content":["x"]}`},
			err: "files[0][file_path] is invalid, files[0][content] is invalid"},
		{name: "not an object", objects: []string{`"x"`}, err: "files is invalid"},
		{name: "two values", objects: []string{`{"file_path":"a","content":"b"} {}`}, err: "files is invalid"},
		{name: "null is absent", objects: []string{`{"file_path":null,"content":"x"}`}, err: "files[0][file_path] is missing"},
		{name: "update", update: true, objects: []string{
			`{"action":"create","file_path":"n","content":"c"}`, `{"action":"update","file_path":"u","content":"c"}`,
			`{"action":"delete","file_path":"d"}`, `{"action":"move","previous_path":"a","file_path":"b"}`,
			`{"action":"update","file_path":"u","previous_path":"u","content":"c"}`, `{"action":"create","content":"c"}`},
			want: []Action{{Kind: "create", Path: "n", Content: str("c")}, {Kind: "update", Path: "u", Content: str("c")},
				{Kind: "delete", Path: "d"}, {Kind: "move", PreviousPath: "a", Path: "b"},
				{Kind: "update", Path: "u", PreviousPath: "u", Content: str("c")}, {Kind: "create", Content: str("c")}}},
		{name: "update needs an action", update: true, objects: []string{`{"file_path":"a"}`, `{"action":"rename","file_path":"a"}`},
			err: "files[0][action] is missing, files[1][action] does not have a valid value"},
		{name: "update paths are checked", update: true, objects: []string{`{"action":"move","previous_path":"../a","file_path":"b"}`},
			err: "files[0][previous_path] should be a valid file path"},
		{name: "move without previous path", update: true, objects: []string{`{"action":"move","file_path":"b"}`}, err: "422"},
		{name: "move in place", update: true, objects: []string{`{"action":"move","file_path":"b","previous_path":"b"}`}, err: "422"},
		{name: "update elsewhere", update: true, objects: []string{`{"action":"update","file_path":"b","previous_path":"a","content":"x"}`}, err: "422"},
		{name: "update without content", update: true, objects: []string{`{"action":"update","file_path":"b"}`}, err: "422"},
		{name: "create with blank content", update: true, objects: []string{`{"action":"create","file_path":"b","content":" "}`}, err: "422"},
		{name: "delete without path", update: true, objects: []string{`{"action":"delete"}`}, err: "422"},
		{name: "too many", objects: make([]string, MaxActions+1), err: "files has too many elements (at most 100)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := ParseFiles(c.objects, c.update)
			switch {
			case c.err == "422":
				if !errors.Is(err, model.ErrInvalid) && model.KindOf(err) != model.KindUnprocessable {
					t.Fatalf("err %v; want a 422", err)
				}
			case c.err != "":
				if model.KindOf(err) != model.KindParam || err.Error() != c.err {
					t.Fatalf("err %v; want the 400 %q", err, c.err)
				}
			case err != nil:
				t.Fatal(err)
			case !reflect.DeepEqual(got, c.want):
				t.Fatalf("got %+v; want %+v", got, c.want)
			}
		})
	}
}

func TestApply(t *testing.T) {
	for _, c := range []struct {
		name    string
		current []string
		actions []Action
		files   []string
		written map[string]int64
		kept    map[string]string
		err     string
	}{
		{name: "create", actions: []Action{{Kind: "create", Path: "b", Content: str("12")}, {Kind: "create", Path: "a/c", Content: str("1")}},
			files: []string{"a/c", "b"}, written: map[string]int64{"b": 2, "a/c": 1}, kept: map[string]string{}},
		{name: "duplicate", actions: []Action{{Kind: "create", Path: "a", Content: str("1")}, {Kind: "create", Path: "a", Content: str("2")}},
			err: "A file with this name already exists"},
		{name: "file where a folder is", current: []string{"d/x"}, actions: []Action{{Kind: "create", Path: "d", Content: str("1")}},
			err: "A directory with this name already exists"},
		{name: "folder where a file is", current: []string{"d"}, actions: []Action{{Kind: "create", Path: "d/x", Content: str("1")}},
			err: "A file with this name already exists: d"},
		{name: "made-up names", current: []string{"snippetfile3.txt"}, actions: []Action{{Kind: "create", Content: str("1")}, {Kind: "create", Content: str("2")}},
			files: []string{"snippetfile3.txt", "snippetfile4.txt", "snippetfile5.txt"}, written: map[string]int64{"snippetfile4.txt": 1, "snippetfile5.txt": 1},
			kept: map[string]string{"snippetfile3.txt": "snippetfile3.txt"}},
		{name: "update, move, delete", current: []string{"a", "b", "c"}, actions: []Action{
			{Kind: "update", Path: "a", Content: str("123")}, {Kind: "move", PreviousPath: "b", Path: "z/b"}, {Kind: "delete", Path: "c"}},
			files: []string{"a", "z/b"}, written: map[string]int64{"a": 3}, kept: map[string]string{"z/b": "b"}},
		{name: "move with content", current: []string{"a"}, actions: []Action{{Kind: "move", PreviousPath: "a", Path: "b", Content: str("xy")}},
			files: []string{"b"}, written: map[string]int64{"b": 2}, kept: map[string]string{}},
		{name: "move what was written", current: []string{"a"}, actions: []Action{{Kind: "update", Path: "a", Content: str("xyz")},
			{Kind: "move", PreviousPath: "a", Path: "b"}}, files: []string{"b"}, written: map[string]int64{"b": 3}, kept: map[string]string{}},
		{name: "update a missing file", current: []string{"a"}, actions: []Action{{Kind: "update", Path: "b", Content: str("1")}},
			err: "A file with this name doesn't exist"},
		{name: "delete a missing file", current: []string{"a"}, actions: []Action{{Kind: "delete", Path: "b"}},
			err: "A file with this name doesn't exist"},
		{name: "move a missing file", current: []string{"a"}, actions: []Action{{Kind: "move", PreviousPath: "b", Path: "c"}},
			err: "A file with this name doesn't exist"},
		{name: "move onto a file", current: []string{"a", "b"}, actions: []Action{{Kind: "move", PreviousPath: "a", Path: "b"}},
			err: "A file with this name already exists"},
		{name: "nothing left", current: []string{"a"}, actions: []Action{{Kind: "delete", Path: "a"}},
			err: "The repository must contain at least 1 file."},
		{name: "too many", actions: createN(model.SnippetMaxFiles + 1), err: "The repository can contain at most 10 file(s)."},
		{name: "bad path", actions: []Action{{Kind: "create", Path: "../x", Content: str("1")}}, err: `Invalid file path: "../x"`},
		{name: "unknown action", current: []string{"a"}, actions: []Action{{Kind: "chmod", Path: "a"}}, err: "Unknown action 'chmod'"},
		{name: "no actions", current: []string{"b", "a"}, files: []string{"a", "b"}, written: map[string]int64{},
			kept: map[string]string{"a": "a", "b": "b"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			plan, err := Apply(c.current, c.actions)
			if c.err != "" {
				var ce *ChangeError
				if !errors.As(err, &ce) || ce.Message != c.err {
					t.Fatalf("err %v; want %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(plan.Files, c.files) || !reflect.DeepEqual(plan.Written, c.written) || !reflect.DeepEqual(plan.Kept, c.kept) {
				t.Fatalf("files %v written %v kept %v; want %v %v %v", plan.Files, plan.Written, plan.Kept, c.files, c.written, c.kept)
			}
			if len(plan.Actions) != len(c.actions) {
				t.Fatalf("%d commit actions for %d", len(plan.Actions), len(c.actions))
			}
		})
	}
}

func createN(n int) []Action {
	out := make([]Action, n)
	for i := range out {
		out[i] = Action{Kind: "create", Path: "f" + strings.Repeat("x", i), Content: str("1")}
	}
	return out
}

func TestParseRepositoryPath(t *testing.T) {
	for _, c := range []struct {
		path    string
		project string
		id      int64
		ok      bool
	}{
		{"snippets/12", "", 12, true},
		{"grp/proj/snippets/3", "grp/proj", 3, true},
		{"a/b/c/snippets/9", "a/b/c", 9, true},
		{"12/snippets/3", "", 0, false},
		{"snippets/012", "", 0, false},
		{"snippets/0", "", 0, false},
		{"snippets/-1", "", 0, false},
		{"snippets/1x", "", 0, false},
		{"snippets/", "", 0, false},
		{"mysnippets/1", "", 0, false},
		{"grp/proj/snippets/99999999999999999999", "", 0, false},
		{"grp/proj", "", 0, false},
	} {
		project, id, ok := ParseRepositoryPath(c.path)
		if project != c.project || id != c.id || ok != c.ok {
			t.Errorf("ParseRepositoryPath(%q) = %q, %d, %v; want %q, %d, %v", c.path, project, id, ok, c.project, c.id, c.ok)
		}
	}
}
