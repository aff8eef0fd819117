package codeowners

import (
	"bytes"
	"errors"
	"path"
	"reflect"
	"strings"
	"testing"
	"time"
)

// FuzzParse feeds arbitrary bytes as a CODEOWNERS file: Parse never
// panics, stays within its bounds (a file past one is invalid: no
// sections, one *LimitError), numbers every error with a line of the
// input, keeps only well-formed owners, and OwnersFor keeps its contract
// and answers as trying every entry on every path does.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"",
		"* @a\n*.rb @b @c\n",
		"# c\n\n[Docs][2] @docs-team\ndocs/\nREADME.md @x y@example.com\n^[DB] @db\nmodel/db/ @@maintainer\n",
		"[Docs\nx @a\n[]\n[S][x]\n[T][0]\n[U][99999999999999999999]\n[V][2\n!a\n",
		"path\\ with\\ spaces/ @a\n\\#file @b\nx bob # note\r\n\xef\xbb\xbf",
		"[a]\n[A]\n^[a][3] @g/s\n/**/x/ @u\n/[a-z]?*.go @v\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		start := time.Now()
		file, errs := Parse(data)
		lines := bytes.Count(data, []byte("\n")) + 1
		if len(errs) > maxErrors+1 {
			t.Errorf("%d errors; at most %d", len(errs), maxErrors+1)
		}
		var limit *LimitError
		if len(errs) > 0 && errors.As(errs[0], &limit) {
			if len(errs) != 1 || len(file.Sections) != 0 || limit.Line < 0 || limit.Line > lines || limit.Msg == "" ||
				limit.Line == 0 && len(data) <= MaxFileBytes {
				t.Errorf("invalid file: %d sections, errors %v", len(file.Sections), errs)
			}
			return
		}
		for _, err := range errs {
			var le *LineError
			if !errors.As(err, &le) {
				t.Fatalf("error %v is %T; want *LineError", err, err)
			}
			if le.Line < 1 || le.Line > lines+1 || le.Msg == "" {
				t.Errorf("error %q: line %d of %d", err, le.Line, lines)
			}
		}
		if len(file.Sections) > MaxSections+1 {
			t.Errorf("%d sections", len(file.Sections))
		}
		names := map[string]bool{}
		entries := 0
		var paths []string
		for _, s := range file.Sections {
			key := strings.ToLower(s.Name)
			if s.Name == "" || names[key] {
				t.Errorf("section name %q empty or repeated", s.Name)
			}
			names[key] = true
			if s.ApprovalsRequired < 1 || s.ApprovalsRequired > maxApprovals {
				t.Errorf("section %q requires %d approvals", s.Name, s.ApprovalsRequired)
			}
			checkOwners(t, s.DefaultOwners)
			last := 0
			for _, e := range s.Entries {
				entries++
				if e.Line <= last || e.Line > lines {
					t.Errorf("entry %+v after line %d of %d", e, last, lines)
				}
				last = e.Line
				if e.Pattern == "" || e.Pattern[0] == '!' || e.Pattern[0] == '#' || len(e.Pattern) > maxPatternBytes {
					t.Errorf("entry pattern %q", e.Pattern)
				}
				checkOwners(t, e.Owners)
				if len(paths) < 16 && len(e.Pattern) <= 256 {
					p := strings.ReplaceAll(strings.Trim(e.Pattern, "/"), `\`, "")
					paths = append(paths, p, "x/"+p+"/y")
				}
			}
		}
		if entries > MaxEntries {
			t.Errorf("%d entries", entries)
		}
		paths = append(paths, "a", "docs/x.md", ".gitignore")
		if len(data) > 16<<10 {
			paths = paths[len(paths)-3:] // keep the time per input short
		}
		got := file.OwnersFor(paths)
		for _, so := range got {
			if len(so.Owners) == 0 || len(so.Patterns) == 0 {
				t.Errorf("section owners %+v without owners or patterns", so)
			}
			checkOwners(t, so.Owners)
		}
		if want := ownersForNaive(file, paths); !reflect.DeepEqual(got, want) {
			t.Errorf("OwnersFor(%q) = %+v; trying every entry gives %+v", paths, got, want)
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("Parse and OwnersFor of %d bytes took %v", len(data), d)
		}
	})
}

// checkOwners: every owner is well-formed and none repeats.
func checkOwners(t *testing.T, owners []string) {
	t.Helper()
	for i, o := range owners {
		if kind, _ := Classify(o); kind == "" {
			t.Errorf("malformed owner %q kept", o)
		}
		for _, prev := range owners[:i] {
			if strings.EqualFold(prev, o) {
				t.Errorf("owner %q repeated in %q", o, owners)
			}
		}
	}
}

// FuzzMatch: Match never panics; a pattern without wildcards matches the
// path it spells (anchored or not, at any depth, and the directory form
// matches below it); a leading / on the path changes nothing; and anchored
// patterns with * or ? but no ** or classes agree with path.Match on
// ASCII paths.
func FuzzMatch(f *testing.F) {
	for _, s := range [][2]string{
		{"README.md", "a/README.md"},
		{"/docs/", "docs/a.md"},
		{"docs/*.md", "x/docs/a.md"},
		{"/docs/**/index.md", "docs/index.md"},
		{`path\ with\ spaces/*.md`, "path with spaces/a.md"},
		{"/[!a-c]?x*", "dzx.go"},
		{"**", ".hidden/x"},
		{"a/b c/d", "a/b c/d"},
	} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, pattern, name string) {
		if len(pattern) > maxPatternBytes && Match(pattern, name) {
			t.Fatalf("a pattern of %d bytes matched", len(pattern))
		}
		if len(pattern)*len(name) > 1<<20 {
			// The cost grows with len(pattern) × len(name): keep each
			// input fast; TestMatch_hostile runs the long ones.
			t.Skip()
		}
		got := Match(pattern, name)
		if Match(pattern, "/"+name) != got {
			t.Errorf("Match(%q, %q) = %v; with a leading / it differs", clip(pattern), clip(name), got)
		}
		for _, p := range []string{pattern, name} {
			if !clean(p) || strings.ContainsAny(p, `*?[\`) || len(p)+2 > maxPatternBytes {
				continue
			}
			if !Match(p, p) || !Match("/"+p, p) || !Match(p, "x/"+p) || !Match(p, p+"/y") {
				t.Errorf("literal pattern %q does not match itself, at depth or below", clip(p))
			}
			if Match(p+"/", p) || !Match(p+"/", p+"/y") || !Match("/"+p+"/", p+"/y") {
				t.Errorf("directory pattern %q/ matches the file or misses what is below", clip(p))
			}
		}
		// path.Match's * steps over bytes, not characters: compare on
		// ASCII names only.
		if clean(name) && ascii(name) && pattern != "" && !strings.HasPrefix(pattern, "/") && !strings.Contains(pattern, "**") &&
			!strings.Contains(pattern, "[") && !strings.HasSuffix(pattern, "/") && !compile("/"+pattern).under {
			want, err := path.Match(pattern, name)
			if err == nil && Match("/"+pattern, name) != want {
				t.Errorf("Match(%q, %q) = %v; path.Match says %v", clip("/"+pattern), clip(name), !want, want)
			}
		}
	})
}

func ascii(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}
