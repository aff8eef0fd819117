package model

import (
	"net/url"
	"path"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

func TestValidateProjectPath(t *testing.T) {
	for p, ok := range map[string]bool{
		"project": true, "my-project": true, "my_project.v2": true, "P1": true, "a": true,
		"": false, "-x": false, ".x": false, "x.": false, "x.git": false, "x.ATOM": false, "a..b": false, "a/b": false,
		"a b": false, "é": false, "tree": false, "Raw": false, ".": false, "..": false, strings.Repeat("a", 256): false,
	} {
		if got := len(ValidateProjectPath(p)) == 0; got != ok {
			t.Errorf("ValidateProjectPath(%q) = %v; want ok=%v", p, ValidateProjectPath(p), ok)
		}
	}
}

func TestValidNames_invalidUTF8(t *testing.T) {
	for _, s := range []string{"\xff", "Group \xfe", "a\xc3"} {
		if ValidGroupName(s) || ValidProjectName(s) {
			t.Errorf("name %q accepted", s)
		}
	}
	for _, s := range []string{"Group 1", "Ünïcode ✨", "\uFFFD"} {
		if !ValidGroupName(s) || !ValidProjectName(s) {
			t.Errorf("name %q refused", s)
		}
	}
	for _, s := range []string{"a\x00@example.com", "a@exa\x7fmple.com", "\xff@example.com"} {
		if ValidEmail(s) {
			t.Errorf("email %q accepted", s)
		}
	}
}

// pathSafe fails unless p is a path segment that needs no escaping in a
// URL and cannot step out of a folder or pass for an option.
func pathSafe(t *testing.T, what, p string) {
	t.Helper()
	if len(p) == 0 || len(p) > 255 || url.PathEscape(p) != p || path.Clean("x/"+p) != "x/"+p || strings.HasPrefix(p, "-") {
		t.Fatalf("%s %q accepted", what, p)
	}
	for _, r := range p {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-' || r == '.') {
			t.Fatalf("%s %q accepted with %q", what, p, r)
		}
	}
	lp := strings.ToLower(p)
	if strings.HasSuffix(lp, ".git") || strings.HasSuffix(lp, ".atom") || strings.HasSuffix(p, ".") || strings.Contains(p, "..") {
		t.Fatalf("%s %q accepted", what, p)
	}
}

// FuzzValidateProjectPath: an accepted project path is a safe, URL-clean
// segment that is no reserved route; a refused one says why.
func FuzzValidateProjectPath(f *testing.F) {
	for _, s := range []string{"project", "my-project.v2", "-x", "x.git", "a..b", "tree", "a/b", "..", "é", "a__b", "a--b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, p string) {
		msgs := ValidateProjectPath(p)
		for _, m := range msgs {
			if m == "" {
				t.Fatalf("ValidateProjectPath(%q): empty message in %q", p, msgs)
			}
		}
		if len(msgs) > 0 {
			return
		}
		pathSafe(t, "project path", p)
		if reservedProjectPaths[strings.ToLower(p)] {
			t.Fatalf("reserved project path %q accepted", p)
		}
	})
}

// FuzzValidateNamespacePath_levels: a subgroup path follows the rules of a
// top-level one except the reserved names; any accepted path is safe.
func FuzzValidateNamespacePath_levels(f *testing.F) {
	for _, s := range []string{"alice", "admin", "api", "-x", "x.", "x.atom", "a_.b", "Users", "a", "."} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, p string) {
		top := len(ValidateNamespacePath(p, true)) == 0
		sub := len(ValidateNamespacePath(p, false)) == 0
		if top && !sub {
			t.Fatalf("%q accepted at the top, refused below", p)
		}
		if sub && !top && !reservedTopLevel[strings.ToLower(p)] {
			t.Fatalf("%q refused at the top but not reserved", p)
		}
		if sub {
			pathSafe(t, "namespace path", p)
		}
	})
}

// FuzzParameterize: a path made from a name is idempotent, no longer than
// the name, of lower-case letters, digits, '_' and single '-' between
// them, and passes the path format rules (only length, reserved names and
// runs of '_' may still be refused).
func FuzzParameterize(f *testing.F) {
	for _, s := range []string{"My Project", "  --Hello, World!--  ", "naïve café", "a___b", "_x_", "İstanbul", "K", "v1.2"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		p := Parameterize(name)
		if Parameterize(p) != p {
			t.Fatalf("Parameterize(%q) = %q, then %q", name, p, Parameterize(p))
		}
		if len(p) > len(name) || strings.Contains(p, "--") {
			t.Fatalf("Parameterize(%q) = %q", name, p)
		}
		if p == "" {
			return
		}
		for _, r := range p {
			if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_' || r == '-') {
				t.Fatalf("Parameterize(%q) = %q, with %q", name, p, r)
			}
		}
		if strings.Trim(p, "-_") != p {
			t.Fatalf("Parameterize(%q) = %q, not trimmed", name, p)
		}
		for _, m := range ValidateProjectPath(p) {
			if m == ProjectPathMessage {
				t.Fatalf("Parameterize(%q) = %q, refused: %s", name, p, m)
			}
		}
		for _, m := range ValidateNamespacePath(p, false) {
			if m == NamespacePathFormatMessage {
				t.Fatalf("Parameterize(%q) = %q, refused: %s", name, p, m)
			}
		}
	})
}

// FuzzValidNames: an accepted group or project name, or e-mail address,
// is valid UTF-8 without control characters (so every database stores
// it); a name starts with a letter, digit, symbol or '_'; an address has
// one '@' and no ASCII space (Unicode spaces pass, as in GitLab).
func FuzzValidNames(f *testing.F) {
	for _, s := range []string{"Group (1)", "My project+", "\xff", "a\x00b", " x", "✨", "a@b", "a\x00@b", "\uFFFD"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		clean := utf8.ValidString(s) && !strings.ContainsFunc(s, unicode.IsControl)
		for _, c := range []struct {
			what string
			ok   bool
		}{{"group name", ValidGroupName(s)}, {"project name", ValidProjectName(s)}} {
			if !c.ok {
				continue
			}
			first, _ := utf8.DecodeRuneInString(s)
			if !clean || strings.ContainsAny(s, "/\\<>\"'&:") || strings.ContainsRune("-. ()+", first) {
				t.Fatalf("%s %q accepted", c.what, s)
			}
		}
		if ValidEmail(s) && (!clean || strings.Count(s, "@") != 1 || strings.ContainsAny(s, " \t\n\v\f\r") || len(s) > 255) {
			t.Fatalf("email %q accepted", s)
		}
	})
}
