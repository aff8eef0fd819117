package e2e

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"regexp"
	"testing"

	"github.com/andybalholm/brotli"

	"quarry/internal/apitest"
)

// TestWeb_assetEncodings: each asset goes brotli-compressed to a client
// that takes br (preferred over gzip whatever the order or weights),
// gzip-compressed to one that takes only gzip, and as itself otherwise;
// every coding decodes to the same bytes, every answer says it varies by
// Accept-Encoding and may be cached for a year, and its ETag names the
// asset's content.
func TestWeb_assetEncodings(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		b := newBrowser(s)
		home := b.get(t, "/").want(t, http.StatusOK)
		urls := regexp.MustCompile(`(?:href|src)="(/assets/app-[0-9a-f]{16}\.(?:css|js))"`).FindAllStringSubmatch(home.Body, -1)
		if len(urls) < 2 {
			t.Fatalf("no fingerprinted assets in the page:\n%s", home.Body)
		}
		decoders := map[string]func(io.Reader) (io.Reader, error){
			"":     func(r io.Reader) (io.Reader, error) { return r, nil },
			"gzip": func(r io.Reader) (io.Reader, error) { return gzip.NewReader(r) },
			"br":   func(r io.Reader) (io.Reader, error) { return brotli.NewReader(r), nil },
		}
		for _, u := range urls {
			path := u[1]
			plain := b.do(t, "GET", path, nil, map[string]string{"Accept-Encoding": "identity"}).want(t, http.StatusOK)
			if len(plain.Body) == 0 {
				t.Fatalf("%s: empty", path)
			}
			for _, c := range []struct{ accept, want string }{
				{"br", "br"},
				{"gzip, deflate, br", "br"},
				{"gzip;q=1.0, br;q=0.1", "br"},
				{"br;q=0, gzip", "gzip"},
				{"gzip", "gzip"},
				{"*", "br"},
				{"identity", ""},
				{"deflate", ""},
				{"gzip;q=0, br;q=0", ""},
			} {
				p := b.do(t, "GET", path, nil, map[string]string{"Accept-Encoding": c.accept}).want(t, http.StatusOK)
				if got := p.Header.Get("Content-Encoding"); got != c.want {
					t.Errorf("%s, Accept-Encoding %q: Content-Encoding %q; want %q", path, c.accept, got, c.want)
					continue
				}
				for h, want := range map[string]string{"Vary": "Accept-Encoding", "Cache-Control": "public, max-age=31536000, immutable",
					"ETag": plain.Header.Get("ETag")} {
					if got := p.Header.Get(h); got != want {
						t.Errorf("%s, Accept-Encoding %q: %s %q; want %q", path, c.accept, h, got, want)
					}
				}
				if c.want != "" && len(p.Body) >= len(plain.Body) {
					t.Errorf("%s %s: %d bytes, not smaller than %d", path, c.want, len(p.Body), len(plain.Body))
				}
				r, err := decoders[c.want](bytes.NewReader([]byte(p.Body)))
				if err != nil {
					t.Fatalf("%s %s: %v", path, c.want, err)
				}
				got, err := io.ReadAll(r)
				if err != nil {
					t.Fatalf("%s %s: %v", path, c.want, err)
				}
				if !bytes.Equal(got, []byte(plain.Body)) {
					t.Errorf("%s %s: decodes to %d bytes, not the asset's %d", path, c.want, len(got), len(plain.Body))
				}
			}
		}
	})
}
