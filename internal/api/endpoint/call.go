package endpoint

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/url"
	"path"
	"strconv"
	"strings"

	"quarry/internal/auth"
	"quarry/internal/model"
)

// Call is one request on its way through a handler: the response writer,
// the request, its parameters and the authenticated actor.
type Call struct {
	W     http.ResponseWriter
	R     *http.Request
	P     *Params
	Actor auth.Actor
	site  *Site
	body  io.Reader
}

// Ctx is the request's context.
func (c *Call) Ctx() context.Context { return c.R.Context() }

// Path returns a decoded path value.
func (c *Call) Path(name string) string { return c.R.PathValue(name) }

// PathID reads an integer path value. Anything else — not a number, or a
// number past 64 bits — does not match the route, as GitLab's route
// requirements make it: ErrRouteNotFound.
func (c *Call) PathID(name string) (int64, error) {
	n, err := strconv.ParseInt(c.R.PathValue(name), 10, 64)
	if err != nil || n < 0 {
		return 0, ErrRouteNotFound
	}
	return n, nil
}

// JSON sends v with status.
func (c *Call) JSON(status int, v any) error {
	WriteJSON(c.W, status, v)
	return nil
}

// NoContent answers 204.
func (c *Call) NoContent() error {
	c.W.WriteHeader(http.StatusNoContent)
	return nil
}

// Accepted answers 202 with GitLab's body.
func (c *Call) Accepted() error { return c.JSON(http.StatusAccepted, Accepted) }

// Fail renders err (the handler's return value does the same).
func (c *Call) Fail(err error) { WriteError(c.W, c.R, c.site.Log, err) }

// Body is a streamed route's request body, limited to the route's size (a
// read past it fails; BodyError makes that a 413). Parsed routes have
// none.
func (c *Call) Body() io.Reader { return c.body }

// Page reads the pagination parameters of a list request.
func (c *Call) Page() (model.Page, error) {
	pg := model.Page{Number: 1, PerPage: 20}
	if n, ok := c.P.Int("page"); ok && n > 1 {
		pg.Number = int(min(n, 1<<31-1))
	}
	if n, ok := c.P.Int("per_page"); ok && n >= 1 {
		pg.PerPage = int(min(n, 100))
	}
	if v, ok := c.P.String("pagination"); ok && v == "keyset" {
		pg.Keyset = true
		pg.Cursor, _ = c.P.String("cursor")
	}
	return pg, c.P.Err()
}

// Paginate sets GitLab's pagination headers for a page of a list: the
// X-* headers and Link for offset pages, Link rel="next" for keyset ones.
func (c *Call) Paginate(pg model.Page, info model.PageInfo) {
	h := c.W.Header()
	if pg.Keyset {
		if info.NextCursor != "" {
			h.Set("Link", fmt.Sprintf(`<%s>; rel="next"`, c.LinkURL(map[string]string{"cursor": info.NextCursor})))
		}
		return
	}
	perPage := strconv.Itoa(pg.PerPage)
	if raw, ok := c.P.Raw("per_page"); ok {
		perPage = raw
	}
	link := func(page int) string {
		return c.LinkURL(map[string]string{"page": strconv.Itoa(page), "per_page": perPage})
	}
	h.Set("X-Page", strconv.Itoa(pg.Number))
	h.Set("X-Per-Page", strconv.Itoa(pg.PerPage))
	next, prev := "", ""
	if info.HasMore {
		next = strconv.Itoa(pg.Number + 1)
	}
	if pg.Number > 1 {
		prev = strconv.Itoa(pg.Number - 1)
	}
	h.Set("X-Next-Page", next)
	h.Set("X-Prev-Page", prev)
	var links []string
	if prev != "" {
		links = append(links, fmt.Sprintf(`<%s>; rel="prev"`, link(pg.Number-1)))
	}
	if next != "" {
		links = append(links, fmt.Sprintf(`<%s>; rel="next"`, link(pg.Number+1)))
	}
	links = append(links, fmt.Sprintf(`<%s>; rel="first"`, link(1)))
	if info.TotalKnown {
		pages := max(1, (info.Total+pg.PerPage-1)/pg.PerPage)
		h.Set("X-Total", strconv.Itoa(info.Total))
		h.Set("X-Total-Pages", strconv.Itoa(pages))
		links = append(links, fmt.Sprintf(`<%s>; rel="last"`, link(pages)))
	}
	h.Set("Link", strings.Join(links, ", "))
}

// List sends one page of a list with its pagination headers.
func (c *Call) List(pg model.Page, info model.PageInfo, items any) error {
	c.Paginate(pg, info)
	return c.JSON(http.StatusOK, items)
}

// NextLink sets a keyset list's Link rel="next" with the given query
// parameters replaced (for lists that continue by id_after, page_token, …).
func (c *Call) NextLink(set map[string]string) {
	c.W.Header().Set("Link", `<`+c.LinkURL(set)+`>; rel="next"`)
}

// LinkURL is the request's URL at the external address with some query
// parameters replaced (and credentials left out).
func (c *Call) LinkURL(set map[string]string) string {
	q := c.R.URL.Query()
	for k, v := range set {
		q.Set(k, v)
	}
	q.Del("private_token")
	q.Del("job_token")
	u := c.site.ExternalURL + c.R.URL.EscapedPath()
	if enc := q.Encode(); enc != "" {
		u += "?" + enc
	}
	return u
}

// ClientIP is the caller's address, for limits on anonymous requests.
func (c *Call) ClientIP() string {
	host, _, err := net.SplitHostPort(c.R.RemoteAddr)
	if err != nil {
		return c.R.RemoteAddr
	}
	return host
}

// Stream sends a stored object (a file of a repository, a blob) named
// name ("" for none) of size bytes: sniffed content type (never HTML, so
// a repository cannot serve script), inline disposition, no caching; a
// HEAD request gets the headers only.
func (c *Call) Stream(name string, size int64, rd io.Reader) error {
	br := bufio.NewReaderSize(rd, 4096)
	head, _ := br.Peek(512)
	ct := http.DetectContentType(head)
	if strings.HasPrefix(ct, "text/html") || strings.HasPrefix(ct, "text/xml") {
		ct = "text/plain; charset=utf-8"
	}
	if byExt := mime.TypeByExtension(strings.ToLower(path.Ext(name))); strings.HasPrefix(byExt, "image/") && !strings.Contains(byExt, "svg") {
		ct = byExt
	}
	h := c.W.Header()
	h.Set("Content-Type", ct)
	h.Set("Content-Length", strconv.FormatInt(size, 10))
	h.Set("Cache-Control", "no-cache")
	if name != "" {
		h.Set("Content-Disposition", `inline; filename="`+strings.ReplaceAll(name, `"`, "")+`"; filename*=UTF-8''`+url.PathEscape(name))
	}
	c.W.WriteHeader(http.StatusOK)
	if c.R.Method == http.MethodHead {
		return nil
	}
	// A copy that ends early is a client gone away.
	_, _ = io.Copy(c.W, br)
	return nil
}

// Download streams a file as an attachment named name (size < 0:
// unknown).
func (c *Call) Download(rd io.Reader, name, contentType string, size int64) error {
	hd := c.W.Header()
	hd.Set("Content-Type", contentType)
	hd.Set("Content-Disposition", `attachment; filename="`+strings.ReplaceAll(name, `"`, "")+`"; filename*=UTF-8''`+url.PathEscape(name))
	hd.Set("Content-Transfer-Encoding", "binary")
	if size >= 0 {
		hd.Set("Content-Length", strconv.FormatInt(size, 10))
	}
	c.W.WriteHeader(http.StatusOK)
	// A copy that ends early is a client gone away; the access log shows
	// the bytes sent.
	_, _ = io.Copy(c.W, rd)
	return nil
}
