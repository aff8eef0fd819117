package keys

import (
	"crypto/ed25519"
	"crypto/rand"
	"strings"
	"testing"

	"golang.org/x/crypto/ssh"
)

// FuzzParse checks the parser's contract on any input: it never panics;
// a key it reads is one golang.org/x/crypto/ssh reads too, of a known
// family and size, whose text parses again to the same key; the text it
// keeps is bounded by the input.
func FuzzParse(f *testing.F) {
	ed, _, _ := ed25519.GenerateKey(rand.Reader)
	pk, _ := ssh.NewPublicKey(ed)
	good := strings.TrimSpace(string(ssh.MarshalAuthorizedKey(pk)))
	for _, s := range []string{"", good, good + " a comment", "ssh-rsa AAAA", "ssh-dss AAAAB3NzaC1kc3M=", "ecdsa-sha2-nistp256 AAAA====",
		"sk-ssh-ed25519@openssh.com AAAA", "ssh-ed25519 " + strings.Repeat("A", 100), "\x00\xff ssh-ed25519"} {
		f.Add(s)
	}
	families := map[string]bool{}
	for _, t := range Types {
		families[t] = true
	}
	f.Fuzz(func(t *testing.T, in string) {
		p := Parse(in)
		if len(p.Text) > len(in) {
			t.Fatalf("text %q longer than input %q", p.Text, in)
		}
		if !p.Valid() {
			if p.Type != "" || p.SHA256 != "" {
				t.Fatalf("invalid key with type %q fingerprint %q", p.Type, p.SHA256)
			}
			return
		}
		if !families[p.Type] || p.Bits <= 0 || len(p.Text) > MaxKeyLength {
			t.Fatalf("key of type %q bits %d text length %d", p.Type, p.Bits, len(p.Text))
		}
		if !KnownAlgorithmPrefix(p.Text) {
			t.Fatalf("valid key %q without a known algorithm", p.Text)
		}
		again := Parse(p.Text)
		if again.Text != p.Text || again.SHA256 != p.SHA256 || again.MD5 != p.MD5 || again.Bits != p.Bits {
			t.Fatalf("reparse of %q differs", p.Text)
		}
		if _, _, _, _, err := ssh.ParseAuthorizedKey([]byte(p.Text)); err != nil {
			t.Fatalf("x/crypto/ssh refuses %q: %v", p.Text, err)
		}
	})
}

// FuzzParseFingerprint checks that a fingerprint it accepts is in the
// stored form: 43 characters of base64 for SHA256, 47 of lower-case
// colon hex for MD5.
func FuzzParseFingerprint(f *testing.F) {
	for _, s := range []string{"", "SHA256:Jrs3LD1Ji30xNLtTVf9NDCj7kkBgPBb2pjvTZ3HfIgU", "4a:9d:64:15:ed:3a:e6:07:6e:89:36:b3:3b:03:05:d9", "sha256:=", "SHA256:////"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		fp, ok := ParseFingerprint(in)
		if !ok {
			return
		}
		if fp.SHA256 && len(fp.Value) != 43 || !fp.SHA256 && (len(fp.Value) != 47 || strings.ToLower(fp.Value) != fp.Value) {
			t.Fatalf("ParseFingerprint(%q) = %+v", in, fp)
		}
	})
}
