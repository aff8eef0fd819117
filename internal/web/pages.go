package web

import (
	"bytes"
	"embed"
	"fmt"
	"html/template"
	"io"
	"io/fs"
	"math/rand/v2"
	"net/http"
	"path"
	"strconv"
	"strings"
	"sync"
	"time"
	"unsafe"

	"quarry/internal/auth"
	"quarry/internal/model"
)

//go:embed templates/*.html
var templateFS embed.FS

// pages are the parsed templates: each page is the layout with the page's
// own "content" (and "title") blocks.
type pages struct {
	byName map[string]*template.Template
}

// loadPages parses the templates once per process: they depend on the
// embedded files only, and a parsed template serves concurrent pages.
var loadPages = sync.OnceValues(func() (*pages, error) {
	as, err := loadAssets()
	if err != nil {
		return nil, err
	}
	return parsePages(as)
})

func parsePages(as *assets) (*pages, error) {
	funcs := template.FuncMap{
		"asset":    as.url,
		"ago":      ago,
		"date":     func(t time.Time) string { return t.UTC().Format("Jan 2, 2006 15:04 UTC") },
		"iso":      func(t time.Time) string { return t.UTC().Format(time.RFC3339) },
		"size":     humanSize,
		"pathJoin": func(a, b string) string { return strings.TrimPrefix(a+"/"+b, "/") },
		"escPath":  escapePath,
		"short":    func(s string) string { return s[:min(8, len(s))] },
	}
	// The layout and the parts pages share ("_name.html").
	layout, err := template.New("layout.html").Funcs(funcs).ParseFS(templateFS, "templates/layout.html", "templates/_*.html")
	if err != nil {
		return nil, err
	}
	ps := &pages{byName: map[string]*template.Template{}}
	names, err := fs.Glob(templateFS, "templates/*.html")
	if err != nil {
		return nil, err
	}
	for _, n := range names {
		base := path.Base(n)
		if base == "layout.html" || strings.HasPrefix(base, "_") {
			continue
		}
		t, err := layout.Clone()
		if err != nil {
			return nil, err
		}
		if _, err := t.ParseFS(templateFS, n); err != nil {
			return nil, fmt.Errorf("web: template %s: %w", base, err)
		}
		ps.byName[strings.TrimSuffix(base, ".html")] = t
	}
	return ps, nil
}

// crumb is one step of the breadcrumbs; the last has no link.
type crumb struct {
	Name, URL string
}

// view is what the layout shows around every page.
type view struct {
	Title  string
	User   *model.User // signed in, or nil
	Crumbs []crumb
	// Search is the header's search box's text.
	Search string
	// Body is the page's own data.
	Body any
	// splice is a large piece of HTML the page shows where it prints
	// spliceMark: render writes it itself.
	splice template.HTML
}

// spliceMark stands in a page for its largest part (a highlighted file),
// which render writes around the template's output: a template prints
// each value through fmt's buffer, and one that size is allocated anew
// for every page. The mark is random per process, and printed text is
// escaped, so no content can forge it.
var spliceMark = template.HTML("<!--part-" + strconv.FormatUint(rand.Uint64(), 36) + "-->") //nolint:gosec

// render writes a page with status. Pages are never cached by a shared
// cache: they may show what only the signed-in user may see.
func (h *Handler) render(w http.ResponseWriter, r *http.Request, a auth.Actor, status int, name string, v view) {
	t := h.pages.byName[name]
	if t == nil {
		panic("web: no page " + name)
	}
	v.User = a.User
	b := renderBuffers.Get().(*bytes.Buffer)
	defer putRenderBuffer(b)
	if err := t.ExecuteTemplate(b, "layout.html", v); err != nil {
		h.Log.Error("web template", "page", name, "err", err)
		http.Error(w, "500 Internal Server Error", http.StatusInternalServerError)
		return
	}
	hd := w.Header()
	hd.Set("Content-Type", "text/html; charset=utf-8")
	if hd.Get("Cache-Control") == "" { // a page may ask for less (no-store)
		hd.Set("Cache-Control", "max-age=0, private, must-revalidate")
	}
	page, tail := b.Bytes(), []byte(nil)
	if v.splice != "" {
		i := bytes.Index(page, []byte(spliceMark))
		if i < 0 {
			h.Log.Error("web template", "page", name, "err", "no place for the page's part")
			http.Error(w, "500 Internal Server Error", http.StatusInternalServerError)
			return
		}
		page, tail = page[:i], page[i+len(spliceMark):]
	}
	hd.Set("Content-Length", strconv.Itoa(len(page)+len(v.splice)+len(tail)))
	w.WriteHeader(status)
	if r.Method != http.MethodHead {
		_, _ = w.Write(page)
		if v.splice != "" {
			_, _ = writeString(w, string(v.splice))
			_, _ = w.Write(tail)
		}
	}
}

// writeString writes s without copying it: the server's writers do not
// all take strings, and io.WriteString would copy a large part to bytes
// for each page (an io.Writer never modifies what it is given).
func writeString(w io.Writer, s string) (int, error) {
	if sw, ok := w.(io.StringWriter); ok {
		return sw.WriteString(s)
	}
	return w.Write(unsafe.Slice(unsafe.StringData(s), len(s)))
}

// renderBuffers hold pages while they render (a page is written whole,
// with its length, or not at all); a buffer grown past maxPooledBuffer
// by a large page is left to the collector.
var renderBuffers = sync.Pool{New: func() any { return new(bytes.Buffer) }}

const maxPooledBuffer = 1 << 20

func putRenderBuffer(b *bytes.Buffer) {
	if b.Cap() > maxPooledBuffer {
		return
	}
	b.Reset()
	renderBuffers.Put(b)
}

// errorBody is the data of the error page.
type errorBody struct {
	Status          int
	Heading, Detail string
	SignIn          bool // offer to sign in (an anonymous visitor)
}

// notFound answers GitLab's 404 page to a browser (a client asking for
// HTML) and the API's JSON 404 to any other client, as before the web
// pages existed.
func (h *Handler) notFound(w http.ResponseWriter, r *http.Request, a auth.Actor) {
	if !wantsHTML(r) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-cache")
		w.WriteHeader(http.StatusNotFound)
		_, _ = w.Write([]byte(`{"error":"404 Not Found"}`))
		return
	}
	h.errorPage(w, r, a, http.StatusNotFound, "404: Page not found",
		"Make sure the address is correct and the page has not moved. Please contact your GitLab administrator if you think this is an error.")
}

func (h *Handler) errorPage(w http.ResponseWriter, r *http.Request, a auth.Actor, status int, heading, detail string) {
	h.render(w, r, a, status, "error", view{Title: heading,
		Body: errorBody{Status: status, Heading: heading, Detail: detail, SignIn: !a.SignedIn() && status == http.StatusNotFound}})
}

// wantsHTML reports whether the client asked for HTML (a browser).
func wantsHTML(r *http.Request) bool {
	return strings.Contains(r.Header.Get("Accept"), "text/html")
}

// escapePath escapes each segment of a slash-separated path for a URL.
func escapePath(p string) string {
	segs := strings.Split(p, "/")
	for i, s := range segs {
		segs[i] = urlPathEscape(s)
	}
	return strings.Join(segs, "/")
}

func ago(t time.Time) string {
	d := time.Since(t)
	switch {
	case t.IsZero():
		return ""
	case d < time.Minute:
		return "just now"
	case d < time.Hour:
		return plural(int(d/time.Minute), "minute") + " ago"
	case d < 24*time.Hour:
		return plural(int(d/time.Hour), "hour") + " ago"
	case d < 30*24*time.Hour:
		return plural(int(d/(24*time.Hour)), "day") + " ago"
	case d < 365*24*time.Hour:
		return plural(int(d/(30*24*time.Hour)), "month") + " ago"
	}
	return plural(int(d/(365*24*time.Hour)), "year") + " ago"
}

func plural(n int, unit string) string {
	if n == 1 {
		return "1 " + unit
	}
	return strconv.Itoa(n) + " " + unit + "s"
}

func humanSize(n int64) string {
	switch {
	case n < 1024:
		return strconv.FormatInt(n, 10) + " B"
	case n < 1024*1024:
		return strconv.FormatFloat(float64(n)/1024, 'f', 1, 64) + " KiB"
	}
	return strconv.FormatFloat(float64(n)/(1024*1024), 'f', 1, 64) + " MiB"
}
