package endpoint

import (
	"net/http/httptest"
	"strconv"
	"testing"
)

func TestWriteJSON_buffer(t *testing.T) {
	for _, tc := range []struct {
		name string
		body []byte
	}{
		{"small", []byte(`[{"id":1}]`)},
		{"over the pool's bound", make([]byte, maxPooledBuffer+1)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := NewBuffer()
			if len(b.B) != 0 {
				t.Fatalf("a new buffer holds %d bytes", len(b.B))
			}
			b.B = append(b.B, tc.body...)
			w := httptest.NewRecorder()
			WriteJSON(w, 200, b)
			if got := w.Body.String(); got != string(tc.body) {
				t.Fatalf("body %.40q, want %.40q", got, tc.body)
			}
			if got, want := w.Header().Get("Content-Length"), len(tc.body); got != strconv.Itoa(want) {
				t.Fatalf("Content-Length %s, want %d", got, want)
			}
			if w.Header().Get("Content-Type") != "application/json" {
				t.Fatalf("Content-Type %q", w.Header().Get("Content-Type"))
			}
			// A buffer taken after the write starts empty whichever it is.
			if n := NewBuffer(); len(n.B) != 0 {
				t.Fatalf("a reused buffer holds %d bytes", len(n.B))
			}
		})
	}
}
