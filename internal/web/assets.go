package web

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"io/fs"
	"mime"
	"net/http"
	"path"
	"strconv"
	"strings"

	"github.com/alecthomas/chroma/v2/formatters/html"
	"github.com/alecthomas/chroma/v2/styles"
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
	plain, gz   []byte
}

// assets are the embedded files by fingerprinted name, and the URL of
// each by its plain name ("app.css").
type assets struct {
	byName map[string]*asset
	urls   map[string]string
}

// loadAssets reads the embedded files, adds the highlighting styles to
// the style sheet, and fingerprints and compresses each once.
func loadAssets() (*assets, error) {
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
	var gz bytes.Buffer
	zw, err := gzip.NewWriterLevel(&gz, gzip.BestCompression)
	if err != nil {
		return err
	}
	if _, err := zw.Write(b); err != nil {
		return err
	}
	if err := zw.Close(); err != nil {
		return err
	}
	ct := mime.TypeByExtension(ext)
	if ct == "" {
		ct = "application/octet-stream"
	}
	a := &asset{name: name, contentType: ct, plain: b}
	if gz.Len() < len(b) {
		a.gz = gz.Bytes()
	}
	as.byName[name] = a
	as.urls[base] = assetPrefix + name
	return nil
}

// url is the fingerprinted URL of an asset by its plain name.
func (as *assets) url(base string) string { return as.urls[base] }

// serve answers GET /assets/<fingerprinted name>: cached for a year,
// gzip-compressed when the client takes it.
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
	if a.gz != nil && acceptsGzip(r) {
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

// acceptsGzip reports whether the request's Accept-Encoding takes gzip
// (and does not refuse it with q=0).
func acceptsGzip(r *http.Request) bool {
	for _, part := range strings.Split(r.Header.Get("Accept-Encoding"), ",") {
		coding, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		if strings.EqualFold(strings.TrimSpace(coding), "gzip") {
			q := strings.ReplaceAll(params, " ", "")
			return q != "q=0" && q != "q=0.0" && q != "q=0.00" && q != "q=0.000"
		}
	}
	return false
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
