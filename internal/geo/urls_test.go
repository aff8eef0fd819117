package geo

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestNormalizeURL(t *testing.T) {
	for _, c := range []struct {
		in, want, problem string
	}{
		{"https://geo.example.com", "https://geo.example.com/", ""},
		{"https://geo.example.com/", "https://geo.example.com/", ""},
		{"  http://geo.example.com:8080/gitlab  ", "http://geo.example.com:8080/gitlab/", ""},
		{"HTTP://Geo.Example.com", "HTTP://Geo.Example.com/", ""},
		{"http://127.0.0.1:3000", "http://127.0.0.1:3000/", ""},
		{"http://[::1]:3000/", "http://[::1]:3000/", ""},
		{"http://user:pw@geo.example.com", "http://user:pw@geo.example.com/", ""},
		{"http://bücher.example", "http://bücher.example/", ""},
		{"http://under_score.example", "http://under_score.example/", ""},
		{"", "", msgInvalidURL},
		{"   ", "", msgInvalidURL},
		{"ftp://geo.example.com", "", msgBlockedScheme},
		{"javascript:alert(1)", "", msgBlockedScheme},
		{"geo.example.com", "", msgBlockedScheme},
		{"//geo.example.com", "", msgBlockedScheme},
		{"gopher ://x", "", msgBlockedScheme},
		{"http://a b", "", msgBlockedURI},
		{"http://", "", msgUnresolvable},
		{"http:///path", "", msgUnresolvable},
		{"http://-geo.example.com", "", msgBlockedHost},
		{"http://.geo.example.com", "", msgBlockedHost},
		{"http://geo example.com", "", msgBlockedURI},
		{"http://geo.example.com:0", "", msgBlockedURI},
		{"http://geo.example.com:65536", "", msgBlockedURI},
		{"http://geo.example.com:", "", msgBlockedURI},
		{"http://geo.example.com/%0d%0aX: y", "", msgBlockedURI},
		{"http://geo.example.com/%zz", "", msgBlockedURI},
		{"http://geo.example.com/\x7f", "", msgBlockedURI},
		{"http://geo.example.com/?q=1", "", msgInvalidURL},
		{"http://geo.example.com/?", "", msgInvalidURL},
		{"http://geo.example.com/#top", "", msgInvalidURL},
		{"http://geo.example.com/" + strings.Repeat("a", MaxURLLength), "", msgURLTooLong},
		{"http://geo.example.com/\xff", "", msgBlockedURI},
	} {
		got, problem := NormalizeURL(c.in)
		if got != c.want || problem != c.problem {
			t.Errorf("NormalizeURL(%q) = %q, %q; want %q, %q", c.in, got, problem, c.want, c.problem)
		}
	}
}

func TestSameURL(t *testing.T) {
	if !SameURL("https://A.example.com/", "https://a.EXAMPLE.com/") || SameURL("https://a.example.com/x/", "https://a.example.com/") {
		t.Error("SameURL compares URLs regardless of case, and only so")
	}
}

// FuzzNormalizeURL: whatever the input, a URL accepted is http(s), ends
// with "/", is bounded, normalises to itself, and holds no line break.
func FuzzNormalizeURL(f *testing.F) {
	for _, s := range []string{"https://geo.example.com", "http://[::1]:80/a", "ftp://x", "http://a/%0a", "http://a:99999", " http://x/y "} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		got, problem := NormalizeURL(in)
		if (got == "") == (problem == "") {
			t.Fatalf("NormalizeURL(%q) = %q, %q: want exactly one of them", in, got, problem)
		}
		if got == "" {
			return
		}
		lower := strings.ToLower(got)
		if !strings.HasPrefix(lower, "http://") && !strings.HasPrefix(lower, "https://") || !strings.HasSuffix(got, "/") {
			t.Fatalf("NormalizeURL(%q) = %q: not an http(s) URL ending with /", in, got)
		}
		if strings.ContainsAny(got, "\r\n?#") || utf8.RuneCountInString(got) > MaxURLLength+1 {
			t.Fatalf("NormalizeURL(%q) = %q", in, got)
		}
		if again, p := NormalizeURL(got); again != got || p != "" {
			t.Fatalf("NormalizeURL(%q) = %q, %q; want it unchanged", got, again, p)
		}
	})
}
