package model

import "testing"

func TestValidateNamespacePath(t *testing.T) {
	cases := []struct {
		path string
		ok   bool
	}{
		{"alice", true},
		{"a", true},
		{"alice.smith", true},
		{"alice_smith-2", true},
		{"Alice", true},
		{"", false},
		{"-alice", false},
		{"alice.", false},
		{"alice.git", false},
		{"alice.atom", false},
		{"al..ice", false},
		{"al ice", false},
		{"alicé", false},
		{"admin", false},
		{"users", false},
		{"a/b", false},
	}
	for _, c := range cases {
		msgs := ValidateNamespacePath(c.path, true)
		if got := len(msgs) == 0; got != c.ok {
			t.Errorf("ValidateNamespacePath(%q) = %v; want ok=%v", c.path, msgs, c.ok)
		}
	}
}

func TestValidEmail(t *testing.T) {
	for s, want := range map[string]bool{"a@b": true, "a.b@example.com": true, "ab": false, "a b@c": false, "@c": false, "a@": false} {
		if got := ValidEmail(s); got != want {
			t.Errorf("ValidEmail(%q) = %v; want %v", s, got, want)
		}
	}
}

func FuzzValidateNamespacePath(f *testing.F) {
	for _, s := range []string{"alice", "-x", "a..b", "x.git", "ü"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		msgs := ValidateNamespacePath(s, true)
		if len(msgs) == 0 {
			for _, r := range s {
				if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-' || r == '.') {
					t.Fatalf("accepted %q with character %q", s, r)
				}
			}
		}
	})
}
