package smarthttp

import (
	"net/http/httptest"
	"testing"
)

func TestHeaderEnd(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int
	}{
		{"", -1},
		{"Content-Type: x\r\n", -1},
		{"Content-Type: x\r\n\r\nbody", 19},
		{"Content-Type: x\n\nbody", 17},
		{"\r\n", -1},
	} {
		if got := headerEnd([]byte(tc.in)); got != tc.want {
			t.Errorf("headerEnd(%q) = %d; want %d", tc.in, got, tc.want)
		}
	}
}

// TestCGIWriter: a CGI answer written in pieces, split anywhere, becomes
// the same HTTP answer.
func TestCGIWriter(t *testing.T) {
	const cgi = "Status: 403 Forbidden\r\nContent-Type: text/plain\r\n\r\nno access"
	for split := 0; split <= len(cgi); split++ {
		rec := httptest.NewRecorder()
		w := &cgiWriter{w: rec}
		for _, part := range []string{cgi[:split], cgi[split:]} {
			if n, err := w.writeNoFlush([]byte(part)); err != nil || n != len(part) {
				t.Fatalf("split %d: wrote %d, %v", split, n, err)
			}
		}
		if rec.Code != 403 || rec.Header().Get("Content-Type") != "text/plain" || rec.Body.String() != "no access" || rec.Header().Get("Status") != "" {
			t.Errorf("split %d: %d %v %q", split, rec.Code, rec.Header(), rec.Body.String())
		}
	}
}
