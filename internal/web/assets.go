package web

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"mime"
	"net/http"
	"path"
	"strconv"
	"strings"
	"sync"

	"github.com/alecthomas/chroma/v2/formatters/html"
	"github.com/alecthomas/chroma/v2/styles"
	"github.com/andybalholm/brotli"
)

//go:embed static
var staticFS embed.FS

// assetPrefix is where the assets are served ("/assets/app-<hash>.css",
// as GitLab's).
const assetPrefix = "/assets/"

// asset is one file, fingerprinted: its name carries a digest of its
// bytes, so a name is never served two ways and may be cached forever.
type asset struct {
	name        string // "app-0123456789abcdef.css"
	contentType string
	plain       []byte
	gz, br      []byte // compressed, or nil when no smaller
}

// assets are the embedded files by fingerprinted name, and the URL of
// each by its plain name ("app.css").
type assets struct {
	byName map[string]*asset
	urls   map[string]string
}

// loadAssets is the process's assets, built by the first handler: they
// are embedded, so every handler (several servers in one process, as in
// the tests) serves the same bytes, and brotli's best level costs
// hundreds of milliseconds.
var loadAssets = sync.OnceValues(buildAssets)

// buildAssets reads the embedded files, adds the highlighting styles to
// the style sheet, and fingerprints and compresses each once.
func buildAssets() (*assets, error) {
	as := &assets{byName: map[string]*asset{}, urls: map[string]string{}}
	err := fs.WalkDir(staticFS, "static", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := staticFS.ReadFile(p)
		if err != nil {
			return err
		}
		base := path.Base(p)
		if base == "app.css" {
			css, err := highlightCSS()
			if err != nil {
				return err
			}
			b = append(b, css...)
			b = append(b, languageCSS()...)
		}
		return as.add(base, b)
	})
	if err != nil {
		return nil, err
	}
	for _, want := range []string{"app.css", "app.js"} {
		if as.urls[want] == "" {
			return nil, fmt.Errorf("web: asset %s missing", want)
		}
	}
	return as, nil
}

func (as *assets) add(base string, b []byte) error {
	sum := sha256.Sum256(b)
	ext := path.Ext(base)
	name := strings.TrimSuffix(base, ext) + "-" + hex.EncodeToString(sum[:8]) + ext
	gz, err := compress(b, func(w io.Writer) (io.WriteCloser, error) { return gzip.NewWriterLevel(w, gzip.BestCompression) })
	if err != nil {
		return err
	}
	br, err := compress(b, func(w io.Writer) (io.WriteCloser, error) {
		return brotli.NewWriterLevel(w, brotli.BestCompression), nil
	})
	if err != nil {
		return err
	}
	ct := mime.TypeByExtension(ext)
	if ct == "" {
		ct = "application/octet-stream"
	}
	a := &asset{name: name, contentType: ct, plain: b}
	if len(gz) < len(b) {
		a.gz = gz
	}
	if len(br) < len(b) {
		a.br = br
	}
	as.byName[name] = a
	as.urls[base] = assetPrefix + name
	return nil
}

// compress is b written through the compressor newWriter makes.
func compress(b []byte, newWriter func(io.Writer) (io.WriteCloser, error)) ([]byte, error) {
	var out bytes.Buffer
	zw, err := newWriter(&out)
	if err != nil {
		return nil, err
	}
	if _, err := zw.Write(b); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

// url is the fingerprinted URL of an asset by its plain name.
func (as *assets) url(base string) string { return as.urls[base] }

// serve answers GET /assets/<fingerprinted name>: cached for a year,
// compressed with brotli or gzip when the client takes it (brotli first:
// smaller), compressed once at start.
func (as *assets) serve(w http.ResponseWriter, r *http.Request) {
	a := as.byName[strings.TrimPrefix(r.URL.Path, assetPrefix)]
	if a == nil || (r.Method != http.MethodGet && r.Method != http.MethodHead) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Header().Set("Cache-Control", "no-cache")
		w.WriteHeader(http.StatusNotFound)
		_, _ = w.Write([]byte("404 Not Found\n"))
		return
	}
	hd := w.Header()
	hd.Set("Content-Type", a.contentType)
	hd.Set("Cache-Control", "public, max-age=31536000, immutable")
	hd.Set("Vary", "Accept-Encoding")
	hd.Set("ETag", `"`+a.name+`"`)
	body := a.plain
	switch acceptEncoding(r.Header.Get("Accept-Encoding"), a.br != nil, a.gz != nil) {
	case "br":
		hd.Set("Content-Encoding", "br")
		body = a.br
	case "gzip":
		hd.Set("Content-Encoding", "gzip")
		body = a.gz
	}
	if r.Header.Get("If-None-Match") == `"`+a.name+`"` {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	hd.Set("Content-Length", strconv.Itoa(len(body)))
	if r.Method == http.MethodHead {
		return
	}
	_, _ = w.Write(body)
}

// acceptEncoding picks the coding of a response from the request's
// Accept-Encoding: "br" when taken and offered, else "gzip", else ""
// (identity). A coding is taken when listed, or matched by "*", with a
// quality above zero; an explicit entry wins over "*".
func acceptEncoding(header string, br, gz bool) string {
	if len(header) > 1024 {
		header = header[:1024]
	}
	q := map[string]bool{} // coding → taken
	star, hasStar := false, false
	for _, part := range strings.Split(header, ",") {
		coding, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		coding = strings.ToLower(strings.TrimSpace(coding))
		if coding == "" {
			continue
		}
		taken := true
		for _, p := range strings.Split(params, ";") {
			k, v, ok := strings.Cut(strings.TrimSpace(p), "=")
			if ok && strings.EqualFold(strings.TrimSpace(k), "q") {
				f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
				taken = err == nil && f > 0
			}
		}
		if coding == "*" {
			star, hasStar = taken, true
			continue
		}
		q[coding] = taken
	}
	takes := func(c string) bool {
		if t, ok := q[c]; ok {
			return t
		}
		return hasStar && star
	}
	switch {
	case br && takes("br"):
		return "br"
	case gz && takes("gzip"):
		return "gzip"
	}
	return ""
}

// highlightCSS is the code highlighting's style sheet: a light style
// and a dark one, each under its own preference (the styles name
// different token classes: one left outside its query would colour the
// other's tokens).
func highlightCSS() ([]byte, error) {
	f := html.New(html.WithClasses(true))
	var b bytes.Buffer
	b.WriteString("\n/* Code highlighting (chroma) */\n@media (prefers-color-scheme: light) {\n")
	if err := f.WriteCSS(&b, styles.Get("github")); err != nil {
		return nil, err
	}
	b.WriteString("}\n@media (prefers-color-scheme: dark) {\n")
	if err := f.WriteCSS(&b, styles.Get("github-dark")); err != nil {
		return nil, err
	}
	b.WriteString("}\n")
	return b.Bytes(), nil
}
