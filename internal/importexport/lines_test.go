package importexport

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

type gotLine struct {
	n   int
	raw string
}

func readLines(t testing.TB, content string, maxLine int) ([]gotLine, error) {
	t.Helper()
	p := filepath.Join(t.TempDir(), "labels.ndjson")
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	var got []gotLine
	err := Lines(p, "tree/groups/1/labels.ndjson", maxLine, func(n int, raw json.RawMessage) error {
		got = append(got, gotLine{n, string(raw)})
		return nil
	})
	return got, err
}

func TestLines(t *testing.T) {
	for _, c := range []struct {
		name, content string
		maxLine       int
		want          []gotLine
		wantErr       string
	}{
		{"good", "{\"id\":1}\n{\"id\":2}\n", 64, []gotLine{{1, `{"id":1}`}, {2, `{"id":2}`}}, ""},
		{"no final newline", "{\"id\":1}\n[2]", 64, []gotLine{{1, `{"id":1}`}, {2, `[2]`}}, ""},
		{"empty lines", "\n{\"a\":1}\n\n  \r\n\"s\"\n\n", 64, []gotLine{{2, `{"a":1}`}, {5, `"s"`}}, ""},
		{"crlf", "{\"a\":1}\r\n2\r\n", 64, []gotLine{{1, `{"a":1}`}, {2, `2`}}, ""},
		{"empty file", "", 64, nil, ""},
		{"exactly max", strings.Repeat("1", 8) + "\n", 8, []gotLine{{1, strings.Repeat("1", 8)}}, ""},
		{"long line", "1\n" + strings.Repeat("1", 9) + "\n", 8, []gotLine{{1, "1"}}, "tree/groups/1/labels.ndjson: line 2 is longer than 8 bytes"},
		{"very long last line", "1\n\"" + strings.Repeat("x", 200<<10), 1024, []gotLine{{1, "1"}}, "line 2 is longer than 1024 bytes"},
		{"invalid JSON", "{\"a\":1}\n{\"a\":\n", 64, []gotLine{{1, `{"a":1}`}}, "tree/groups/1/labels.ndjson: line 2 is not valid JSON"},
		{"two values", "{} {}\n", 64, nil, "line 1 is not valid JSON"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := readLines(t, c.content, c.maxLine)
			if c.wantErr == "" && err != nil {
				t.Fatalf("Lines: %v", err)
			}
			if c.wantErr != "" {
				var fe *FormatError
				if !errors.As(err, &fe) || !strings.Contains(fe.Reason, c.wantErr) {
					t.Fatalf("Lines: %v; want a *FormatError with %q", err, c.wantErr)
				}
			}
			if len(got) != len(c.want) {
				t.Fatalf("got %d lines %+v; want %+v", len(got), got, c.want)
			}
			for i := range got {
				if got[i] != c.want[i] {
					t.Errorf("line %d: got %+v; want %+v", i, got[i], c.want[i])
				}
			}
		})
	}
}

func TestLines_fnError(t *testing.T) {
	p := filepath.Join(t.TempDir(), "x.ndjson")
	if err := os.WriteFile(p, []byte("1\n2\n3\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	stop := errors.New("stop")
	calls := 0
	err := Lines(p, "x.ndjson", 0, func(n int, raw json.RawMessage) error {
		calls++
		if n == 2 {
			return stop
		}
		return nil
	})
	if err != stop || calls != 2 {
		t.Errorf("err %v after %d calls; want stop after 2", err, calls)
	}
	if err := Lines(filepath.Join(t.TempDir(), "nope"), "nope", 0, nil); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
}

func FuzzLines(f *testing.F) {
	f.Add([]byte("{\"id\":1}\n{\"id\":2}\n"))
	f.Add([]byte("\n\n[1,2]\r\n\"x\""))
	f.Add([]byte("{\"a\":\n"))
	f.Add([]byte(strings.Repeat("1", 100)))
	f.Fuzz(func(t *testing.T, data []byte) {
		const maxLine = 64
		last := 0
		p := filepath.Join(t.TempDir(), "f.ndjson")
		if err := os.WriteFile(p, data, 0o600); err != nil {
			t.Fatal(err)
		}
		err := Lines(p, "f.ndjson", maxLine, func(n int, raw json.RawMessage) error {
			if n <= last {
				t.Fatalf("line %d after %d", n, last)
			}
			last = n
			if len(raw) > maxLine || !json.Valid(raw) {
				t.Fatalf("line %d: %q", n, raw)
			}
			return nil
		})
		var fe *FormatError
		if err != nil && !errors.As(err, &fe) {
			t.Fatalf("Lines: %v", err)
		}
	})
}
