package api

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"

	"quarry/internal/auth"
	"quarry/internal/model"
	"quarry/internal/tokens"
)

// call is one request on its way through a handler.
type call struct {
	w     http.ResponseWriter
	r     *http.Request
	p     *Params
	actor auth.Actor
	s     *Server
}

// handler answers one route. A returned error is rendered by fail.
type handler func(c *call) error

// writeJSON sends v as JSON with the given status.
func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		// Entities are plain structs; a failure here is a programming error.
		panic(fmt.Sprintf("api: encode %T: %v", v, err))
	}
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

func (c *call) json(status int, v any) error {
	writeJSON(c.w, status, v)
	return nil
}

func (c *call) noContent() error {
	c.w.WriteHeader(http.StatusNoContent)
	return nil
}

// Bodies.
type messageBody struct {
	Message any `json:"message"`
}

type errorBody struct {
	Error string `json:"error"`
}

type oauthErrorBody struct {
	Error            string `json:"error"`
	ErrorDescription string `json:"error_description"`
	Scope            string `json:"scope,omitempty"`
}

// statusPrefix is the "NNN Text" that GitLab's helpers put before a reason.
var statusPrefix = map[model.Kind]string{
	model.KindForbidden:    "403 Forbidden",
	model.KindUnauthorized: "401 Unauthorized",
	model.KindBadRequest:   "400 Bad request",
}

var kindStatus = map[model.Kind]int{
	model.KindNotFound: 404, model.KindForbidden: 403, model.KindUnauthorized: 401, model.KindConflict: 409,
	model.KindInvalid: 400, model.KindBadRequest: 400, model.KindParam: 400, model.KindNotModified: 304,
	model.KindTooManyRequests: 429, model.KindMethodNotAllowed: 405, model.KindUnprocessable: 422,
}

// writeError is the one place that turns an error into a status and a
// GitLab-shaped body. Unclassified errors are logged and become a 500.
func writeError(w http.ResponseWriter, r *http.Request, log *slog.Logger, err error) {
	if errors.Is(err, errRouteNotFound) {
		writeJSON(w, http.StatusNotFound, errorBody{Error: "404 Not Found"})
		return
	}
	var ae *tokens.AuthError
	if errors.As(err, &ae) {
		if ae.Status == http.StatusUnauthorized {
			w.Header().Set("WWW-Authenticate", fmt.Sprintf(`Bearer realm="The API", error=%q, error_description=%q`, ae.Code, ae.Description))
		}
		writeJSON(w, ae.Status, oauthErrorBody{Error: ae.Code, ErrorDescription: ae.Description, Scope: ae.Scope})
		return
	}
	var e *model.Error
	if !errors.As(err, &e) {
		log.Error("request failed", "method", r.Method, "path", r.URL.Path, "request_id", w.Header().Get("X-Request-Id"), "err", err)
		writeJSON(w, http.StatusInternalServerError, messageBody{Message: "500 Internal Server Error"})
		return
	}
	status := kindStatus[e.Kind]
	switch e.Kind {
	case model.KindNotModified:
		w.WriteHeader(http.StatusNotModified)
		return
	case model.KindParam:
		if strings.HasPrefix(e.Message, "413 ") {
			writeJSON(w, http.StatusRequestEntityTooLarge, messageBody{Message: e.Message})
			return
		}
		writeJSON(w, status, errorBody{Error: e.Message})
		return
	case model.KindMethodNotAllowed:
		writeJSON(w, status, errorBody{Error: e.Message})
		return
	}
	if len(e.Fields) > 0 {
		writeJSON(w, status, messageBody{Message: e.Fields})
		return
	}
	if e.Kind == model.KindTooManyRequests {
		w.Header().Set("Retry-After", "60")
		writeJSON(w, status, messageBody{Message: errorBody{Error: e.Message}})
		return
	}
	msg := e.Message
	if !e.Raw {
		prefix, ok := statusPrefix[e.Kind]
		if !ok {
			prefix = fmt.Sprintf("%d %s", status, http.StatusText(status))
		}
		if msg == "" {
			msg = prefix
		} else {
			msg = prefix + " - " + msg
		}
	}
	writeJSON(w, status, messageBody{Message: msg})
}

func (c *call) fail(err error) { writeError(c.w, c.r, c.s.log, err) }

// page reads the pagination parameters of a list request.
func (c *call) page() (model.Page, error) {
	pg := model.Page{Number: 1, PerPage: 20}
	if n, ok := c.p.Int("page"); ok && n > 1 {
		pg.Number = int(min(n, 1<<31-1))
	}
	if n, ok := c.p.Int("per_page"); ok && n >= 1 {
		pg.PerPage = int(min(n, 100))
	}
	if v, ok := c.p.String("pagination"); ok && v == "keyset" {
		pg.Keyset = true
		pg.Cursor, _ = c.p.String("cursor")
	}
	return pg, c.p.Err()
}

// paginate sets GitLab's pagination headers for a page of a list.
func (c *call) paginate(pg model.Page, info model.PageInfo) {
	h := c.w.Header()
	if pg.Keyset {
		if info.NextCursor != "" {
			h.Set("Link", fmt.Sprintf(`<%s>; rel="next"`, c.linkURL(map[string]string{"cursor": info.NextCursor})))
		}
		return
	}
	perPage := strconv.Itoa(pg.PerPage)
	if raw, ok := c.p.Raw("per_page"); ok {
		perPage = raw
	}
	link := func(page int) string {
		return c.linkURL(map[string]string{"page": strconv.Itoa(page), "per_page": perPage})
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

// linkURL is the request's URL at the external address with some query
// parameters replaced.
func (c *call) linkURL(set map[string]string) string {
	q := c.r.URL.Query()
	for k, v := range set {
		q.Set(k, v)
	}
	q.Del("private_token")
	u := c.s.externalURL + c.r.URL.EscapedPath()
	if enc := q.Encode(); enc != "" {
		u += "?" + enc
	}
	return u
}

// apiTime renders times as GitLab does: UTC with milliseconds.
type apiTime time.Time

func (t apiTime) MarshalJSON() ([]byte, error) {
	return []byte(`"` + time.Time(t).UTC().Format("2006-01-02T15:04:05.000Z") + `"`), nil
}

func timePtr(t *time.Time) *apiTime {
	if t == nil {
		return nil
	}
	a := apiTime(*t)
	return &a
}

func strPtr(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// pathInt reads an integer path value; anything else does not match the
// route, as GitLab's route requirements do.
func (c *call) pathInt(name string) (int64, error) {
	v := c.r.PathValue(name)
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 {
		return 0, errRouteNotFound
	}
	return n, nil
}

// errRouteNotFound answers like a path no route matches.
var errRouteNotFound = errors.New("no route")
