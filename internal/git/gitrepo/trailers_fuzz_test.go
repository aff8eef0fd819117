package gitrepo

import (
	"reflect"
	"runtime"
	"strings"
	"testing"
)

func TestParseTrailers(t *testing.T) {
	for _, c := range []struct {
		msg  string
		want map[string][]string
	}{
		{"Title\n\nChangelog: added", map[string][]string{"Changelog": {"added"}}},
		{"Title\n\nBody.\n\nChangelog: added\nSigned-off-by: A <a@example.com>\nChangelog: fixed\n",
			map[string][]string{"Changelog": {"added", "fixed"}, "Signed-off-by": {"A <a@example.com>"}}},
		{"Title\r\n\r\nKey: v\r\n", map[string][]string{"Key": {"v"}}},
		{"Title\n\n\n\nKey: v\n\n\n", map[string][]string{"Key": {"v"}}},     // several blank lines
		{"Title\n \t\nKey: v", map[string][]string{"Key": {"v"}}},            // a whitespace-only line is blank
		{"Title\n\nKey: a\n  b\n\tc", map[string][]string{"Key": {"a b c"}}}, // unfolded
		{"Title\n\nKey:\n  b", map[string][]string{"Key": {"b"}}},
		{"Title\n\nKey:", map[string][]string{"Key": {""}}},
		{"Changelog: added", map[string][]string{}},                         // only one paragraph
		{"\n\nChangelog: added", map[string][]string{}},                     // nothing before it
		{"Title\n\nChangelog: added\nnot a trailer", map[string][]string{}}, // other lines
		{"Title\n\n continued: x", map[string][]string{}},
		{"Title\n\nBad key: x", map[string][]string{}},
		{"", map[string][]string{}},
	} {
		if got := ParseTrailers(c.msg); !reflect.DeepEqual(got, c.want) {
			t.Errorf("ParseTrailers(%q) = %q; want %q", c.msg, got, c.want)
		}
	}
}

// TestParseTrailers_longFolding: a value folded over many lines costs
// linear work. Appending each piece to the value used to copy it whole
// every time: ~40 GB of copying for this 800 KB message.
func TestParseTrailers_longFolding(t *testing.T) {
	msg := "Title\n\nKey: v" + strings.Repeat("\n x", 200000)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	got := ParseTrailers(msg)
	runtime.ReadMemStats(&after)
	if v := got["Key"]; len(v) != 1 || len(v[0]) != 1+2*200000 {
		t.Fatalf("value of %d bytes", len(v))
	}
	if n := after.TotalAlloc - before.TotalAlloc; n > 64<<20 {
		t.Errorf("allocated %d MiB for a message of %d KiB", n>>20, len(msg)>>10)
	}
}

// FuzzParseTrailers: any message gives well-formed trailers (keys of
// letters, digits and '-'; single-line, trimmed values; no more text than
// the message holds), and trailers written after a body read back, also
// when folded over several lines.
func FuzzParseTrailers(f *testing.F) {
	f.Add("Title\n\nChangelog: added", "Changelog", "added")
	f.Add("Title\n\nKey: a\n b\n\n", "Signed-off-by", "A U Thor <a@example.com>")
	f.Add("T\r\n\r\nK: v\r\n \r\n", "K", "")
	f.Add("x\n\n\n \nK:\n\t y\n", "Co-authored-by", "one two  three")
	f.Add("\n\nK: v", "bad key", "v")
	f.Fuzz(func(t *testing.T, msg, key, value string) {
		got := ParseTrailers(msg)
		size := 0
		for k, vs := range got {
			if !isTrailerKey(k) || len(vs) == 0 {
				t.Fatalf("ParseTrailers(%q): key %q with %q", msg, k, vs)
			}
			for _, v := range vs {
				if strings.ContainsAny(v, "\n") || strings.TrimSpace(v) != v {
					t.Fatalf("ParseTrailers(%q): value %q of %q", msg, v, k)
				}
				size += len(k) + len(v)
			}
		}
		if size > len(msg) {
			t.Fatalf("ParseTrailers(%q): %d bytes of trailers from %d", msg, size, len(msg))
		}

		if !isTrailerKey(key) || strings.TrimSpace(value) != value || strings.ContainsAny(value, "\r\n") {
			return
		}
		for _, body := range []string{"Title", "Title\n\n" + strings.ReplaceAll(msg, "\r", "")} {
			if strings.TrimSpace(body) == "" {
				continue
			}
			want := map[string][]string{key: {value}}
			if got := ParseTrailers(body + "\n\n" + key + ": " + value + "\n"); !reflect.DeepEqual(got, want) {
				t.Fatalf("trailer %q: %q after %q", key+": "+value, got, body)
			}
			// Folded at its spaces (which needs single spaces only).
			if strings.Join(strings.Fields(value), " ") == value {
				folded := key + ":\n " + strings.ReplaceAll(value, " ", "\n\t")
				if got := ParseTrailers(body + "\n\n" + folded); !reflect.DeepEqual(got, want) {
					t.Fatalf("folded trailer %q: %q after %q", folded, got, body)
				}
			}
		}
	})
}
