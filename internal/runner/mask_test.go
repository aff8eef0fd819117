package runner

import (
	"bytes"
	"strings"
	"testing"
)

// maskChunks writes chunks through a masker and returns what came out.
func maskChunks(secrets []string, chunks ...string) string {
	var out bytes.Buffer
	m := newMasker(&out, secrets)
	for _, c := range chunks {
		m.Write([]byte(c))
	}
	m.Close()
	return out.String()
}

func TestMasker(t *testing.T) {
	for _, tc := range []struct {
		name    string
		secrets []string
		chunks  []string
		want    string
	}{
		{"no secrets", nil, []string{"plain ", "text"}, "plain text"},
		{"whole", []string{"s3cr3t-value"}, []string{"a s3cr3t-value b"}, "a [MASKED] b"},
		{"twice", []string{"s3cr3t-value"}, []string{"s3cr3t-values3cr3t-value!"}, "[MASKED][MASKED]!"},
		{"split in two", []string{"s3cr3t-value"}, []string{"a s3cr", "3t-value b"}, "a [MASKED] b"},
		{"split byte by byte", []string{"s3cr3t-value"}, strings.Split("x s3cr3t-value y", ""), "x [MASKED] y"},
		{"split at the end", []string{"s3cr3t-value"}, []string{"a s3cr3t-valu", "e"}, "a [MASKED]"},
		{"prefix only at the end", []string{"s3cr3t-value"}, []string{"a s3cr3t"}, "a s3cr3t"},
		{"prefix then other text", []string{"s3cr3t-value"}, []string{"a s3cr", "ab"}, "a s3crab"},
		{"false start then match", []string{"abcabd12"}, []string{"abcab", "cabd12"}, "abc[MASKED]"},
		{"longest wins", []string{"token123", "token12345"}, []string{"token12345 token1234"}, "[MASKED] [MASKED]4"},
		{"longest wins across writes", []string{"token123", "token12345"}, []string{"token123", "45!"}, "[MASKED]!"},
		{"shorter when the longer fails", []string{"token123", "token12345"}, []string{"token123", "4x"}, "[MASKED]4x"},
		{"overlapping secrets", []string{"abcdefgh", "efghijkl"}, []string{"abcdefghijkl"}, "[MASKED]ijkl"},
		{"two secrets", []string{"first-secret", "second-secret"}, []string{"first-secret second-", "secret"}, "[MASKED] [MASKED]"},
		{"empty secret ignored", []string{""}, []string{"text"}, "text"},
		{"newlines", []string{"pass/word+1"}, []string{"line1\npass/wo", "rd+1\nline3\n"}, "line1\n[MASKED]\nline3\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := maskChunks(tc.secrets, tc.chunks...); got != tc.want {
				t.Errorf("got %q; want %q", got, tc.want)
			}
		})
	}
}

// A write passes on at once everything that cannot begin a secret, and
// holds back less than the longest secret.
func TestMasker_holdsBackOnlyAPossibleStart(t *testing.T) {
	var out bytes.Buffer
	m := newMasker(&out, []string{"s3cr3t-value"})
	m.Write([]byte("hello s3cr3t-va"))
	if out.String() != "hello " {
		t.Errorf("passed on %q; want %q", out.String(), "hello ")
	}
	m.Write([]byte("lu"))
	m.Write([]byte("!"))
	if out.String() != "hello s3cr3t-valu!" {
		t.Errorf("passed on %q", out.String())
	}
	m.Write([]byte("s"))
	if out.String() != "hello s3cr3t-valu!" {
		t.Errorf("passed on %q before knowing", out.String())
	}
	m.Close()
	if out.String() != "hello s3cr3t-valu!s" {
		t.Errorf("after Close %q", out.String())
	}
}

// maskable reports whether s is a value GitLab lets mask that the fuzz
// property can hold for: 8 characters or more of the masked alphabet
// (brackets excluded, so "[MASKED]" cannot complete a secret).
func maskable(s string) bool {
	if len(s) < 8 {
		return false
	}
	for _, c := range []byte(s) {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("_+=/@:.~-", c) >= 0) {
			return false
		}
	}
	return true
}

func FuzzMask(f *testing.F) {
	f.Add([]byte("echo s3cr3t-value and token123456 done"), "s3cr3t-value", "token123456", uint16(7), uint16(3))
	f.Add([]byte("aaaaaaaaaaaaaaaaaaaa"), "aaaaaaaa", "aaaaaaaaaa", uint16(1), uint16(5))
	f.Add([]byte("abcabcabcabd1234"), "abcabd1234", "cabcabd1", uint16(4), uint16(9))
	f.Fuzz(func(t *testing.T, data []byte, s1, s2 string, cut1, cut2 uint16) {
		var secrets []string
		for _, s := range []string{s1, s2} {
			if maskable(s) {
				secrets = append(secrets, s)
			}
		}
		whole := maskChunks(secrets, string(data))
		// The same input cut anywhere gives the same output.
		a, b := int(cut1)%(len(data)+1), int(cut2)%(len(data)+1)
		if a > b {
			a, b = b, a
		}
		if cut := maskChunks(secrets, string(data[:a]), string(data[a:b]), string(data[b:])); cut != whole {
			t.Fatalf("cut at %d,%d: %q; whole: %q", a, b, cut, whole)
		}
		for _, s := range secrets {
			if strings.Contains(whole, s) {
				t.Fatalf("output %q holds secret %q", whole, s)
			}
		}
		// Text holding no secret passes through unchanged.
		holds := false
		for _, s := range secrets {
			holds = holds || bytes.Contains(data, []byte(s))
		}
		if !holds && whole != string(data) {
			t.Fatalf("output %q; input %q holds no secret", whole, data)
		}
		// Putting the secrets back gives the input when nothing else
		// looks like a mask.
		if !bytes.Contains(data, []byte(maskText)) && len(secrets) == 1 {
			if back := strings.ReplaceAll(whole, maskText, secrets[0]); back != string(data) {
				t.Fatalf("unmasked %q; input %q", back, data)
			}
		}
	})
}
