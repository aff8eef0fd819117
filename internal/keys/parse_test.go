package keys

import (
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"strings"
	"testing"

	"golang.org/x/crypto/ssh"
)

func authorized(t testing.TB, pub any) string {
	t.Helper()
	pk, err := ssh.NewPublicKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(ssh.MarshalAuthorizedKey(pk)))
}

func TestParse(t *testing.T) {
	ed, _, _ := ed25519.GenerateKey(rand.Reader)
	r, err := rsa.GenerateKey(rand.Reader, 1024)
	if err != nil {
		t.Fatal(err)
	}
	ec, _ := ecdsa.GenerateKey(elliptic.P521(), rand.Reader)
	edKey, rsaKey, ecKey := authorized(t, ed), authorized(t, &r.PublicKey), authorized(t, ec.Public())
	for _, c := range []struct {
		name, in, text, typ string
		bits                int
	}{
		{"ed25519", edKey, edKey, "ed25519", 256},
		{"comment kept, spaces collapsed", "  " + edKey + "   me@host  there\n", edKey + " me@host there", "ed25519", 256},
		{"rsa", rsaKey, rsaKey, "rsa", 1024},
		{"ecdsa", ecKey, ecKey, "ecdsa", 521},
		{"empty", "", "", "", 0},
		{"one field", "ssh-ed25519", "ssh-ed25519", "", 0},
		{"bad base64", "ssh-ed25519 !!!", "ssh-ed25519 !!!", "", 0},
		{"type mismatch", "ssh-rsa " + strings.Fields(edKey)[1], "ssh-rsa " + strings.Fields(edKey)[1], "", 0},
		{"unknown algorithm", "ssh-foo " + strings.Fields(edKey)[1], "ssh-foo " + strings.Fields(edKey)[1], "", 0},
		{"options", `command="x" ` + edKey, `command="x" ` + edKey, "", 0},
		{"too long", edKey + " " + strings.Repeat("c", MaxKeyLength), edKey + " " + strings.Repeat("c", MaxKeyLength), "", 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := Parse(c.in)
			if p.Text != c.text || p.Type != c.typ || p.Bits != c.bits || p.Valid() != (c.typ != "") {
				t.Fatalf("Parse(%q) = text %q type %q bits %d valid %v; want %q %q %d", c.in, p.Text, p.Type, p.Bits, p.Valid(), c.text, c.typ, c.bits)
			}
			if p.Valid() && ("SHA256:"+p.SHA256 != ssh.FingerprintSHA256(p.Public) || p.MD5 != ssh.FingerprintLegacyMD5(p.Public)) {
				t.Fatalf("fingerprints %q %q", p.SHA256, p.MD5)
			}
		})
	}
}

func TestParseFingerprint(t *testing.T) {
	ed, _, _ := ed25519.GenerateKey(rand.Reader)
	pk, _ := ssh.NewPublicKey(ed)
	sha, md5 := ssh.FingerprintSHA256(pk), ssh.FingerprintLegacyMD5(pk)
	for _, c := range []struct {
		in     string
		ok     bool
		sha256 bool
		value  string
	}{
		{sha, true, true, sha[7:]},
		{"sha256:" + sha[7:] + "=", true, true, sha[7:]},
		{md5, true, false, md5},
		{strings.ToUpper(md5), true, false, md5},
		{"SHA256:abc", false, false, ""},
		{"SHA256:", false, false, ""},
		{md5[:46], false, false, ""},
		{strings.ReplaceAll(md5, ":", "-"), false, false, ""},
		{"zz" + md5[2:], false, false, ""},
		{"", false, false, ""},
	} {
		fp, ok := ParseFingerprint(c.in)
		if ok != c.ok || fp.SHA256 != c.sha256 || fp.Value != c.value {
			t.Errorf("ParseFingerprint(%q) = %+v %v; want %v %v %q", c.in, fp, ok, c.ok, c.sha256, c.value)
		}
	}
}

func TestExclusiveSentence(t *testing.T) {
	for _, c := range []struct {
		in   []string
		want string
	}{
		{nil, ""}, {[]string{"A"}, "A"}, {[]string{"A", "B"}, "A or B"}, {[]string{"A", "B", "C"}, "A, B, or C"},
	} {
		if got := exclusiveSentence(c.in); got != c.want {
			t.Errorf("exclusiveSentence(%q) = %q; want %q", c.in, got, c.want)
		}
	}
}
