package snippets

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"unicode"

	"quarry/internal/git/gitrepo"
	"quarry/internal/model"
)

// Action is one change of a snippet's files, as the API's files[] (or
// the legacy content and file_name) asks for it.
type Action struct {
	Kind         string // create, update, delete, move
	Path         string // file_path; "" on create: a name is made up
	PreviousPath string
	Content      *string // nil: not given
}

// MaxActions bounds the files[] of one request: a snippet holds at most
// model.SnippetMaxFiles files, so a change needs a few times that at most.
const MaxActions = 100

// actionKinds are the actions files[] may ask for on an update.
var actionKinds = []string{"create", "update", "delete", "move"}

// errInvalidActions is GitLab's answer to files[] that passed the
// parameter checks but do not make sense together (a move without
// previous_path, an update without content, …).
var errInvalidActions = model.WrappedError(model.KindUnprocessable, "Snippet actions have invalid data")

// ParseFiles reads files[] as the request sent it, one JSON object text
// per element: on a create (update false) each is a file with file_path
// and content, on an update each has its action too. Unknown keys are
// ignored. A parameter problem is Grape's 400 ({"error":"files[0][file_path]
// is missing"}, all of them at once); actions whose parameters are fine
// but that do not fit together are GitLab's 422.
func ParseFiles(objects []string, update bool) ([]Action, error) {
	if len(objects) > MaxActions {
		return nil, model.Param(fmt.Sprintf("files has too many elements (at most %d)", MaxActions))
	}
	var errs []string
	fail := func(format string, args ...any) { errs = append(errs, fmt.Sprintf(format, args...)) }
	out := make([]Action, 0, len(objects))
	for i, text := range objects {
		name := func(key string) string { return "files[" + strconv.Itoa(i) + "][" + key + "]" }
		var raw map[string]json.RawMessage
		d := json.NewDecoder(strings.NewReader(text))
		if err := d.Decode(&raw); err != nil || raw == nil || d.More() {
			fail("files is invalid")
			break
		}
		field := func(key string) (*string, bool) {
			v, ok := raw[key]
			if !ok || bytes.Equal(bytes.TrimSpace(v), []byte("null")) {
				return nil, true
			}
			var s string
			if err := json.Unmarshal(v, &s); err != nil {
				fail("%s is invalid", name(key))
				return nil, false
			}
			return &s, true
		}
		a := Action{Kind: "create"}
		kind, kindOK := field("action")
		path, pathOK := field("file_path")
		prev, prevOK := field("previous_path")
		content, contentOK := field("content")
		if update {
			switch {
			case !kindOK:
			case kind == nil:
				fail("%s is missing", name("action"))
			case !contains(actionKinds, *kind):
				fail("%s does not have a valid value", name("action"))
			default:
				a.Kind = *kind
			}
		}
		if pathOK {
			switch {
			case path == nil && !update:
				fail("%s is missing", name("file_path"))
			case path != nil && blank(*path) && !update:
				fail("%s is empty", name("file_path"))
			case path != nil && *path != "" && !ValidPath(*path):
				fail("%s should be a valid file path", name("file_path"))
			case path != nil:
				a.Path = *path
			}
		}
		if prevOK && prev != nil {
			if *prev != "" && !ValidPath(*prev) {
				fail("%s should be a valid file path", name("previous_path"))
			}
			a.PreviousPath = *prev
		}
		if contentOK {
			switch {
			case content == nil && !update:
				fail("%s is missing", name("content"))
			case content != nil && blank(*content) && !update:
				fail("%s is empty", name("content"))
			}
			a.Content = content
		}
		out = append(out, a)
	}
	if len(errs) > 0 {
		return nil, model.Param(strings.Join(errs, ", "))
	}
	if update {
		for _, a := range out {
			if !validAction(a) {
				return nil, errInvalidActions
			}
		}
	}
	return out, nil
}

// validAction is GitLab's SnippetInputAction validation: every action but
// a create names its file, a move the file it moves (elsewhere), an
// update no other file than its own, and creates and updates carry
// content.
func validAction(a Action) bool {
	switch {
	case a.Kind != "create" && blank(a.Path):
		return false
	case a.Kind == "move" && (blank(a.PreviousPath) || a.PreviousPath == a.Path):
		return false
	case a.Kind == "update" && !blank(a.PreviousPath) && a.PreviousPath != a.Path:
		return false
	case (a.Kind == "create" || a.Kind == "update") && (a.Content == nil || blank(*a.Content)):
		return false
	}
	return true
}

// blank is Ruby's blank?: empty or white space only.
func blank(s string) bool { return strings.TrimFunc(s, unicode.IsSpace) == "" }

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// ValidPath reports whether p may name a file of a snippet: a relative
// path of non-empty segments, none of them "." or ".." (also URL-encoded,
// or split at backslashes, as GitLab's path traversal check reads them)
// nor ".git", without NUL.
func ValidPath(p string) bool {
	if p == "" || strings.HasPrefix(p, "/") || strings.ContainsRune(p, 0) {
		return false
	}
	for _, s := range strings.Split(p, "/") {
		switch {
		case s == "", s == ".", s == "..", strings.EqualFold(s, ".git"):
			return false
		}
	}
	decoded := p
	if d, err := url.PathUnescape(p); err == nil {
		decoded = d
	}
	for _, s := range strings.FieldsFunc(decoded, func(r rune) bool { return r == '/' || r == '\\' }) {
		if s == ".." {
			return false
		}
	}
	return !strings.HasPrefix(decoded, "/")
}

// ChangeError is a change that does not fit the files it applies to (a
// file that is there already, or is not; too many files, none left). Its
// message is the one the API gives.
type ChangeError struct{ Message string }

func (e *ChangeError) Error() string { return e.Message }

// Plan is what a change does to a snippet's files.
type Plan struct {
	// Files are the snippet's files after the change, sorted as git
	// lists them.
	Files []string
	// Actions are the change as commit actions.
	Actions []gitrepo.Action
	// Written is the size of the content each file of Files gets from
	// the change; Kept names, for every other file, the file of the
	// snippet before the change whose content it keeps (itself, or where
	// it was moved from).
	Written map[string]int64
	Kept    map[string]string
}

// Apply plans actions on a snippet whose files are current (in any
// order): each action is checked against the files as the ones before it
// left them, as a commit applies them in turn. A create without a path
// gets the name GitLab makes up, snippetfile<n>.txt.
func Apply(current []string, actions []Action) (Plan, error) {
	files := map[string]bool{}
	kept := map[string]string{}
	for _, f := range current {
		files[f] = true
		kept[f] = f
	}
	written := map[string]int64{}
	plan := Plan{}
	for _, a := range actions {
		if a.Kind == "create" && a.Path == "" {
			a.Path = madeUpName(files)
		}
		for _, p := range []string{a.Path, a.PreviousPath} {
			if p != "" && !ValidPath(p) {
				return Plan{}, &ChangeError{fmt.Sprintf("Invalid file path: %q", p)}
			}
		}
		ga := gitrepo.Action{Kind: a.Kind, Path: a.Path}
		if a.Content != nil {
			ga.Content, ga.HasContent = []byte(*a.Content), true
		}
		switch a.Kind {
		case "create":
			if err := free(files, a.Path); err != nil {
				return Plan{}, err
			}
			files[a.Path] = true
		case "update", "delete":
			if !files[a.Path] {
				return Plan{}, &ChangeError{"A file with this name doesn't exist"}
			}
			if a.Kind == "delete" {
				delete(files, a.Path)
				delete(written, a.Path)
				delete(kept, a.Path)
				ga.Content, ga.HasContent = nil, false
			}
		case "move":
			if !files[a.PreviousPath] {
				return Plan{}, &ChangeError{"A file with this name doesn't exist"}
			}
			delete(files, a.PreviousPath)
			if err := free(files, a.Path); err != nil {
				return Plan{}, err
			}
			files[a.Path] = true
			ga.PreviousPath = a.PreviousPath
			if n, ok := written[a.PreviousPath]; ok {
				written[a.Path] = n
			}
			if k, ok := kept[a.PreviousPath]; ok {
				kept[a.Path] = k
			}
			delete(written, a.PreviousPath)
			delete(kept, a.PreviousPath)
		default:
			return Plan{}, &ChangeError{fmt.Sprintf("Unknown action '%s'", a.Kind)}
		}
		if a.Content != nil && a.Kind != "delete" {
			written[a.Path] = int64(len(*a.Content))
			delete(kept, a.Path)
		}
		plan.Actions = append(plan.Actions, ga)
	}
	switch n := len(files); {
	case n == 0:
		return Plan{}, &ChangeError{"The repository must contain at least 1 file."}
	case n > model.SnippetMaxFiles:
		return Plan{}, &ChangeError{fmt.Sprintf("The repository can contain at most %d file(s).", model.SnippetMaxFiles)}
	}
	for f := range files {
		plan.Files = append(plan.Files, f)
	}
	sort.Strings(plan.Files)
	plan.Written, plan.Kept = written, kept
	return plan, nil
}

// free checks that a file may be added at p: no file there, no folder
// there, no file where p needs a folder.
func free(files map[string]bool, p string) error {
	if files[p] {
		return &ChangeError{"A file with this name already exists"}
	}
	for f := range files {
		switch {
		case strings.HasPrefix(f, p+"/"):
			return &ChangeError{"A directory with this name already exists"}
		case strings.HasPrefix(p, f+"/"):
			return &ChangeError{"A file with this name already exists: " + f}
		}
	}
	return nil
}

// madeUpName is the name GitLab gives a file created without one:
// snippetfile<n>.txt, n one more than the highest such file has.
func madeUpName(files map[string]bool) string {
	n := 0
	for f := range files {
		if v, ok := strings.CutPrefix(f, "snippetfile"); ok {
			if d, ok := strings.CutSuffix(v, ".txt"); ok {
				if k, err := strconv.Atoi(d); err == nil && k > n && k < 1<<20 {
					n = k
				}
			}
		}
	}
	return "snippetfile" + strconv.Itoa(n+1) + ".txt"
}
