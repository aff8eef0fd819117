package badges

import (
	"strconv"
	"strings"
	"testing"
)

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// FuzzRender checks the renderer's contract on any input: without values
// nothing changes; with values every placeholder is replaced and nothing
// else is; the value function is asked only for known names.
func FuzzRender(f *testing.F) {
	for _, s := range []string{"", "https://x/%{project_path}", "%25%7Bcommit_sha%7D", "%{project_id%7D%{", "%%{{project_name}}", "%{latest_tag}%{latest_tag}"} {
		f.Add(s)
	}
	known := map[string]bool{}
	for _, n := range Placeholders {
		known[n] = true
	}
	f.Fuzz(func(t *testing.T, url string) {
		if got := Render(url, func(name string) (string, bool) {
			if !known[name] {
				t.Fatalf("asked for unknown placeholder %q", name)
			}
			return "", false
		}); got != url {
			t.Fatalf("Render without values changed %q into %q", url, got)
		}
		// Values free of '%' cannot form new placeholders, so after
		// rendering none is left.
		got := Render(url, func(name string) (string, bool) { return "<" + name + ">", true })
		if len(Names(got)) != 0 {
			t.Fatalf("Render(%q) = %q still holds placeholders", url, got)
		}
		// Removing the rendered values gives back the input with its
		// placeholders removed.
		want := placeholder.ReplaceAllString(url, "")
		stripped := got
		for _, n := range Placeholders {
			stripped = strings.ReplaceAll(stripped, "<"+n+">", "")
		}
		if !strings.Contains(url, "<") && stripped != want {
			t.Fatalf("Render(%q) = %q; stripped %q, want %q", url, got, stripped, want)
		}
	})
}

// FuzzCheckURL checks that validation never panics, strips only the
// outer white space, and accepts only http and https.
func FuzzCheckURL(f *testing.F) {
	for _, s := range []string{"https://x", " http://[::1]:80/ ", "ftp://x", "http://", "http://a@b:c"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		v, msg := CheckURL(raw)
		if v != strings.TrimSpace(raw) {
			t.Fatalf("CheckURL(%q) returned %q", raw, v)
		}
		if msg == "" {
			s := strings.ToLower(v)
			if !strings.HasPrefix(s, "http://") && !strings.HasPrefix(s, "https://") {
				t.Fatalf("CheckURL accepted %q", raw)
			}
		}
	})
}
