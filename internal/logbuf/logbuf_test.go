package logbuf

import (
	"bytes"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"
)

// sink records each write it is given.
type sink struct {
	mu     sync.Mutex
	writes []string
	err    error
}

func (s *sink) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.writes = append(s.writes, string(p))
	return len(p), s.err
}

func (s *sink) got() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.writes...)
}

func TestWriter(t *testing.T) {
	for _, tc := range []struct {
		name  string
		run   func(w *Writer)
		wantN int    // writes that reached the sink
		want  string // everything the sink got, in order
	}{
		{"held until flushed", func(w *Writer) { w.Write([]byte("a\n")); w.Write([]byte("b\n")) }, 0, ""},
		{"flushed together", func(w *Writer) { w.Write([]byte("a\n")); w.Write([]byte("b\n")); w.Flush() }, 1, "a\nb\n"},
		{"a full buffer writes first", func(w *Writer) {
			w.Write(bytes.Repeat([]byte("x"), Size-1))
			w.Write([]byte("yz"))
			w.Flush()
		}, 2, strings.Repeat("x", Size-1) + "yz"},
		{"a line larger than the buffer at once", func(w *Writer) {
			w.Write([]byte("a\n"))
			w.Write(bytes.Repeat([]byte("x"), Size+1))
		}, 2, "a\n" + strings.Repeat("x", Size+1)},
		{"nothing to flush writes nothing", func(w *Writer) { w.Flush(); w.Flush() }, 0, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := &sink{}
			w := New(s, time.Hour)
			defer w.Close()
			tc.run(w)
			got := s.got()
			if len(got) != tc.wantN || strings.Join(got, "") != tc.want {
				t.Errorf("%d writes %q; want %d of %q", len(got), strings.Join(got, ""), tc.wantN, tc.want)
			}
		})
	}
}

func TestWriter_interval(t *testing.T) {
	s := &sink{}
	w := New(s, 10*time.Millisecond)
	defer w.Close()
	w.Write([]byte("a\n"))
	deadline := time.Now().Add(10 * time.Second)
	for len(s.got()) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the interval never wrote")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if got := strings.Join(s.got(), ""); got != "a\n" {
		t.Errorf("wrote %q", got)
	}
}

func TestWriter_closeAndErrors(t *testing.T) {
	s := &sink{err: errors.New("disk full")}
	w := New(s, time.Hour)
	if n, err := w.Write([]byte("a\n")); n != 2 || err != nil {
		t.Errorf("Write: %d %v", n, err)
	}
	if err := w.Close(); err == nil || err.Error() != "disk full" {
		t.Errorf("Close: %v; want the sink's error", err)
	}
	if err := w.Close(); err == nil {
		t.Error("a second Close forgot the error")
	}
	if got := strings.Join(s.got(), ""); got != "a\n" {
		t.Errorf("wrote %q", got)
	}
}

func TestHandler(t *testing.T) {
	s := &sink{}
	w := New(s, time.Hour)
	defer w.Close()
	log := slog.New(NewHandler(slog.NewTextHandler(w, nil), w, "request"))
	log.Info("request", "path", "/a")
	log.With("k", "v").Info("request", "path", "/b")
	if n := len(s.got()); n != 0 {
		t.Fatalf("the access log was written at once (%d writes)", n)
	}
	log.Warn("request", "path", "/slow")
	got := s.got()
	if len(got) != 1 || strings.Count(got[0], "\n") != 3 || !strings.Contains(got[0], "k=v") {
		t.Fatalf("a warning wrote %q; want the three lines at once", got)
	}
	log.Info("listening", "addr", ":1")
	log.WithGroup("g").Info("started")
	if got := s.got(); len(got) != 3 {
		t.Errorf("other lines: %d writes; want one each", len(got)-1)
	}
}
