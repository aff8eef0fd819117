package sshd

import (
	"strings"
	"testing"

	"quarry/internal/git/smarthttp"
)

func TestParseCommand(t *testing.T) {
	for _, c := range []struct {
		in   string
		svc  smarthttp.Service
		path string
	}{
		{"git-upload-pack 'alice/demo.git'", smarthttp.UploadPack, "alice/demo"},
		{"git-upload-pack '/alice/demo.git'", smarthttp.UploadPack, "alice/demo"},
		{"git-receive-pack 'g/sub/p.git'", smarthttp.ReceivePack, "g/sub/p"},
		{"git upload-pack 'alice/demo.git'", smarthttp.UploadPack, "alice/demo"},
		{"git-upload-archive 'alice/demo.git'", smarthttp.UploadArchive, "alice/demo"},
		{"git-upload-pack alice/demo", smarthttp.UploadPack, "alice/demo"},
		{`git-upload-pack "alice/demo.wiki.git"`, smarthttp.UploadPack, "alice/demo.wiki"},
		{`git-upload-pack 'it'\''s/p.git'`, smarthttp.UploadPack, "it's/p"},
		{"git-upload-pack '~/alice/demo.git/'", smarthttp.UploadPack, "alice/demo"},
		{"", "", ""},
		{"ls -la", "", ""},
		{"git-upload-pack", "", ""},
		{"git-upload-pack 'a/b' extra", "", ""},
		{"git-upload-pack '../etc/passwd'", "", ""},
		{"git-upload-pack 'a/../b'", "", ""},
		{"git-upload-pack '--help'", "", ""},
		{"git-upload-pack 'a//b'", "", ""},
		{"git-upload-pack 'unterminated", "", ""},
		{"git-upload-pack a\\", "", ""},
		{"git-upload-pack 'a/b\x01'", "", ""},
		{"git-lfs-authenticate a/b download", "", ""},
		{"git-upload-pack '" + strings.Repeat("a", maxCommand) + "'", "", ""},
	} {
		got, err := ParseCommand(c.in)
		if c.svc == "" {
			if err == nil {
				t.Errorf("ParseCommand(%q) = %+v; want refused", c.in, got)
			}
			continue
		}
		if err != nil || got.Service != c.svc || got.Path != c.path {
			t.Errorf("ParseCommand(%q) = %+v, %v; want %s %q", c.in, got, err, c.svc, c.path)
		}
	}
}

// FuzzParseCommand checks the parser's contract on any input: a command
// it accepts is one of the three git services on a path with no empty,
// "." or ".." segment, no control character, no leading "-" or "/"; it
// never panics.
func FuzzParseCommand(f *testing.F) {
	for _, s := range []string{"git-upload-pack 'a/b.git'", "git receive-pack \"/a/b\"", `git-upload-archive 'x'\''y/z'`, "a\\ b", "''", `"\"`, "git-upload-pack '/.git'"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		c, err := ParseCommand(in)
		if err != nil {
			return
		}
		switch c.Service {
		case smarthttp.UploadPack, smarthttp.ReceivePack, smarthttp.UploadArchive:
		default:
			t.Fatalf("service %q from %q", c.Service, in)
		}
		p := c.Path
		if p == "" || strings.HasPrefix(p, "-") || strings.HasPrefix(p, "/") || strings.HasSuffix(p, "/") {
			t.Fatalf("path %q from %q", p, in)
		}
		for _, seg := range strings.Split(p, "/") {
			if seg == "" || seg == "." || seg == ".." {
				t.Fatalf("segment %q in %q from %q", seg, p, in)
			}
		}
		for _, r := range p {
			if r < ' ' || r == 0x7f {
				t.Fatalf("control character in %q from %q", p, in)
			}
		}
	})
}
