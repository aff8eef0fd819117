package repofiles

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

type failingReader struct{ n int }

func (f *failingReader) Read(p []byte) (int, error) {
	if f.n == 0 {
		return 0, errors.New("build failed")
	}
	f.n--
	return copy(p, "data"), nil
}

func (f *failingReader) Close() error { return nil }

func TestArchiveCache(t *testing.T) {
	dir := t.TempDir()
	c := newArchiveCache(dir, 10)
	fill := func(key, content string) {
		rd := c.fill(key, io.NopCloser(strings.NewReader(content)))
		if got, err := io.ReadAll(rd); err != nil || string(got) != content {
			t.Fatalf("read through fill: %q %v", got, err)
		}
		if err := rd.Close(); err != nil {
			t.Fatal(err)
		}
	}
	a, b, d := c.path("repo", "a"), c.path("repo", "b"), c.path("repo", "d")
	fill(a, "aaaa")
	if f, size, ok := c.open(a); !ok || size != 4 {
		t.Fatalf("cached a: %v %d", ok, size)
	} else {
		f.Close()
	}
	// Make a the oldest, then go past 10 bytes: a goes first.
	old := time.Now().Add(-time.Hour)
	os.Chtimes(a, old, old)
	fill(b, "bbbb")
	fill(d, "dddd")
	if _, _, ok := c.open(a); ok {
		t.Errorf("least recently used archive kept past the size")
	}
	for _, k := range []string{b, d} {
		if f, _, ok := c.open(k); !ok {
			t.Errorf("recent archive dropped")
		} else {
			f.Close()
		}
	}
	// A build that fails, or a client that stops reading, leaves nothing.
	e := c.path("repo", "e")
	rd := c.fill(e, &failingReader{n: 2})
	if _, err := io.ReadAll(rd); err == nil {
		t.Fatal("failing build read without error")
	}
	rd.Close()
	half := c.fill(c.path("repo", "f"), io.NopCloser(strings.NewReader("ffffffff")))
	half.Read(make([]byte, 2))
	half.Close()
	left, _ := filepath.Glob(filepath.Join(dir, "*"))
	if len(left) != 2 {
		t.Errorf("files left: %v", left)
	}
}
