package uploads

import (
	"bytes"
	"io"
	"strings"
	"testing"
)

func file(name, content string) *File {
	return &File{Name: name, Size: int64(len(content)), Open: func() (io.ReadCloser, error) {
		return io.NopCloser(strings.NewReader(content)), nil
	}}
}

func TestStore_saveOpenRemove(t *testing.T) {
	s := New(t.TempDir())
	rel, err := s.Save("user/avatar/1", file("../../me & you.png", "png"))
	if err != nil {
		t.Fatal(err)
	}
	if rel != "user/avatar/1/me___you.png" {
		t.Errorf("stored at %q", rel)
	}
	f, err := s.Open(rel)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(f)
	f.Close()
	if !bytes.Equal(b, []byte("png")) {
		t.Errorf("content %q", b)
	}
	// A new upload replaces the folder's earlier file.
	rel2, _ := s.Save("user/avatar/1", file("new.gif", "gif"))
	if _, err := s.Open(rel); err == nil {
		t.Error("old avatar still there")
	}
	if err := s.Remove(rel2); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Open(rel2); err == nil {
		t.Error("removed avatar still there")
	}
	for _, bad := range []string{"../x", "a/../../x", "", "/"} {
		if _, err := s.Open(bad); err == nil {
			t.Errorf("Open(%q) escaped", bad)
		}
	}
}

func TestValidateAvatar(t *testing.T) {
	if msgs := ValidateAvatar(file("a.PNG", "x")); len(msgs) != 0 {
		t.Errorf("png refused: %v", msgs)
	}
	if msgs := ValidateAvatar(file("a.txt", "x")); len(msgs) != 1 {
		t.Errorf("txt: %v", msgs)
	}
	big := &File{Name: "a.png", Size: MaxAvatarSize + 1}
	if msgs := ValidateAvatar(big); len(msgs) != 1 || !strings.Contains(msgs[0], "too big") {
		t.Errorf("big: %v", msgs)
	}
}

func FuzzSafeName(f *testing.F) {
	for _, s := range []string{"a.png", "../../etc/passwd", `..\..\x`, ".", "", "ü.png"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n := SafeName(s)
		if n == "" || strings.ContainsAny(n, `/\`) || strings.HasPrefix(n, ".") {
			t.Fatalf("SafeName(%q) = %q", s, n)
		}
	})
}
