package endpoint

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"quarry/internal/model"
	"quarry/internal/tokens"
)

// WriteJSON sends v as JSON with the given status.
func WriteJSON(w http.ResponseWriter, status int, v any) {
	var b []byte
	var err error
	switch v := v.(type) {
	case Raw:
		b = v
	case *Buffer:
		b = v.B
		defer v.release()
	default:
		b, err = json.Marshal(v)
	}
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

// Raw is JSON encoded already (the entity cache's splices): WriteJSON
// sends it as it is.
type Raw []byte

// Buffer is JSON encoded already into a pooled buffer (the entity
// cache's pages, tens of kilobytes each): WriteJSON sends it and puts
// the buffer back, so a Buffer must not be kept or sent twice.
type Buffer struct{ B []byte }

// maxPooledBuffer bounds the buffers kept for reuse: a rare huge answer
// is left to the collector rather than held by the pool.
const maxPooledBuffer = 1 << 20

var buffers = sync.Pool{New: func() any { return &Buffer{B: make([]byte, 0, 32<<10)} }}

// NewBuffer is an empty buffer from the pool.
func NewBuffer() *Buffer {
	b := buffers.Get().(*Buffer)
	b.B = b.B[:0]
	return b
}

func (b *Buffer) release() {
	if cap(b.B) <= maxPooledBuffer {
		buffers.Put(b)
	}
}

// MessageBody is GitLab's {"message": …} body (helpers and validation).
type MessageBody struct {
	Message any `json:"message"`
}

// ErrorBody is Grape's {"error": "…"} body (parameters, routing).
type ErrorBody struct {
	Error string `json:"error"`
}

type oauthErrorBody struct {
	Error            string `json:"error"`
	ErrorDescription string `json:"error_description"`
	Scope            string `json:"scope,omitempty"`
}

// StatusClientClosed is recorded for a request whose client went away
// before its answer (nginx's 499); nothing is sent.
const StatusClientClosed = 499

// ErrRouteNotFound answers like a path no route matches: a path value that
// fails the route's requirements (an id that is not a number) is an
// unknown path, as GitLab's route requirements make it.
var ErrRouteNotFound = errors.New("no route")

// NotFoundBody and NotAllowedBody are the answers to unknown paths and to
// known paths asked with another method.
var (
	NotFoundBody   = ErrorBody{Error: "404 Not Found"}
	NotAllowedBody = ErrorBody{Error: "405 Not Allowed"}
)

// statusPrefix is the "NNN Text" that GitLab's helpers put before a reason.
var statusPrefix = map[model.Kind]string{
	model.KindForbidden:    "403 Forbidden",
	model.KindUnauthorized: "401 Unauthorized",
	model.KindBadRequest:   "400 Bad request",
}

// WriteError is the one place that turns an error into a status and a
// GitLab-shaped body. Unclassified errors are logged and become a 500.
func WriteError(w http.ResponseWriter, r *http.Request, log *slog.Logger, err error) {
	if errors.Is(err, ErrRouteNotFound) {
		WriteJSON(w, http.StatusNotFound, NotFoundBody)
		return
	}
	var ae *tokens.AuthError
	if errors.As(err, &ae) {
		if ae.Status == http.StatusUnauthorized {
			w.Header().Set("WWW-Authenticate", fmt.Sprintf(`Bearer realm="The API", error=%q, error_description=%q`, ae.Code, ae.Description))
		}
		WriteJSON(w, ae.Status, oauthErrorBody{Error: ae.Code, ErrorDescription: ae.Description, Scope: ae.Scope})
		return
	}
	var e *model.Error
	if !errors.As(err, &e) && r.Context().Err() != nil {
		// The client went away (or the server is stopping): nobody reads
		// the answer, and nothing failed on the server's side.
		log.Info("request abandoned", "method", r.Method, "path", r.URL.Path, "request_id", w.Header().Get("X-Request-Id"), "err", err)
		w.WriteHeader(StatusClientClosed)
		return
	}
	if e == nil {
		// A 500 is a bug: every refusal is a classified error, and a
		// store constraint that reaches here is an input that was not
		// checked. Tests fail on this line of the log (apitest).
		log.Error("request failed", "method", r.Method, "path", r.URL.Path, "request_id", w.Header().Get("X-Request-Id"), "err", err)
		WriteJSON(w, http.StatusInternalServerError, MessageBody{Message: "500 Internal Server Error"})
		return
	}
	status := e.Kind.Status()
	switch e.Kind {
	case model.KindNotModified:
		w.WriteHeader(http.StatusNotModified)
		return
	case model.KindTooLarge:
		WriteJSON(w, status, MessageBody{Message: "413 Request Entity Too Large"})
		return
	case model.KindParam:
		WriteJSON(w, status, ErrorBody{Error: e.Message})
		return
	case model.KindMethodNotAllowed:
		// Routing's 405 is Grape's {"error"}; a helper's refusal (a merge
		// that is not allowed) is {"message"}.
		if e.Raw {
			WriteJSON(w, status, MessageBody{Message: e.Message})
		} else {
			WriteJSON(w, status, ErrorBody{Error: e.Message})
		}
		return
	}
	if len(e.Fields) > 0 {
		WriteJSON(w, status, MessageBody{Message: e.Fields})
		return
	}
	if e.Kind == model.KindTooManyRequests {
		w.Header().Set("Retry-After", "60")
	}
	if e.Kind == model.KindTooManyRequests || e.Wrapped {
		WriteJSON(w, status, MessageBody{Message: ErrorBody{Error: e.Message}})
		return
	}
	if e.List {
		WriteJSON(w, status, MessageBody{Message: []string{e.Message}})
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
	WriteJSON(w, status, MessageBody{Message: msg})
}

// BodyError classifies a failure to read a request body: over the limit is
// a 413, a classified error stays as it is, anything else is a 400.
func BodyError(err error) error {
	var mb *http.MaxBytesError
	if errors.As(err, &mb) {
		return model.TooLarge()
	}
	var me *model.Error
	if errors.As(err, &me) {
		return err // already classified (a service's verdict on the body)
	}
	return model.Param("request body is invalid")
}

// Accepted is GitLab's 202 body for work done in the background.
var Accepted = MessageBody{Message: "202 Accepted"}

// trimBearer returns the token of an "Authorization: Bearer <token>" header.
func trimBearer(h string) string {
	if len(h) > 7 && strings.EqualFold(h[:7], "bearer ") {
		return strings.TrimSpace(h[7:])
	}
	return ""
}

// WriteHead answers an error with its status alone, no body (GitLab's
// `head`, as its alert intake answers). Unclassified errors are logged
// and become a 500.
func WriteHead(w http.ResponseWriter, r *http.Request, log *slog.Logger, err error) {
	var e *model.Error
	if !errors.As(err, &e) {
		log.Error("request failed", "method", r.Method, "path", r.URL.Path, "request_id", w.Header().Get("X-Request-Id"), "err", err)
		w.WriteHeader(http.StatusInternalServerError)
		return
	}
	w.WriteHeader(e.Kind.Status())
}
