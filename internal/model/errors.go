// Package model holds Quarry's plain domain types and the error kinds every
// layer shares. It does no I/O.
package model

import (
	"errors"
	"fmt"
	"sort"
	"strings"
)

// Kind classifies an error so that the API layer can pick a status code and
// body without knowing where the error came from.
type Kind int

// The error kinds. Each maps to exactly one HTTP status in the api package.
const (
	KindNotFound           Kind = iota + 1 // 404
	KindForbidden                          // 403
	KindUnauthorized                       // 401
	KindConflict                           // 409
	KindInvalid                            // 400, {"message":{"field":["msg"]}}
	KindBadRequest                         // 400, {"message":"400 Bad request - reason"}
	KindParam                              // 400, {"error":"x is missing"}
	KindNotModified                        // 304
	KindTooManyRequests                    // 429
	KindMethodNotAllowed                   // 405
	KindUnprocessable                      // 422
	KindTooLarge                           // 413
	KindNotAcceptable                      // 406 (a merge git cannot make)
	KindTimeout                            // 408 (a request body too slow)
	KindURITooLong                         // 414
	KindUnavailable                        // 503
	KindPreconditionFailed                 // 412
	KindReadOnly                           // 403, a repository refusing writes for now (moving between storages)
)

// kindStatus is the HTTP status of each kind.
var kindStatus = map[Kind]int{
	KindNotFound: 404, KindForbidden: 403, KindUnauthorized: 401, KindConflict: 409,
	KindInvalid: 400, KindBadRequest: 400, KindParam: 400, KindNotModified: 304,
	KindTooManyRequests: 429, KindMethodNotAllowed: 405, KindUnprocessable: 422,
	KindTooLarge: 413, KindNotAcceptable: 406, KindTimeout: 408, KindURITooLong: 414,
	KindUnavailable: 503, KindPreconditionFailed: 412, KindReadOnly: 403,
}

// Status is the HTTP status the API answers for an error of kind k.
func (k Kind) Status() int { return kindStatus[k] }

// Error is a classified error. Message is the text GitLab would put in the
// body; Fields carries per-field validation messages for KindInvalid.
type Error struct {
	Kind    Kind
	Message string
	Fields  FieldErrors
	// Raw marks a message sent as-is, without the "NNN Status - " prefix.
	Raw bool
	// List sends the message as a one-element list ({"message":["…"]}),
	// as GitLab answers some validations (merge request branches).
	List bool
	// Wrapped sends the message as {"message":{"error":"…"}}, as GitLab's
	// render_api_error! with a hash answers a service's refusal (snippets).
	Wrapped bool
}

func (e *Error) Error() string {
	if e.Kind == KindInvalid && len(e.Fields) > 0 {
		return "invalid: " + e.Fields.String()
	}
	if e.Message == "" {
		return fmt.Sprintf("error kind %d", e.Kind)
	}
	return e.Message
}

// Is makes errors.Is(err, model.ErrNotFound) and friends work for any error
// of the same kind.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Message == "" && t.Fields == nil && t.Kind == e.Kind
}

// Sentinels for errors.Is.
var (
	ErrNotFound     = &Error{Kind: KindNotFound}
	ErrForbidden    = &Error{Kind: KindForbidden}
	ErrUnauthorized = &Error{Kind: KindUnauthorized}
	ErrConflict     = &Error{Kind: KindConflict}
	ErrInvalid      = &Error{Kind: KindInvalid}
	ErrNotModified  = &Error{Kind: KindNotModified}
	ErrReadOnly     = &Error{Kind: KindReadOnly}
)

// RepositoryReadOnlyMessage is how a write to a repository that is
// read-only for now (while it moves between storages) is refused, over
// the API and git alike.
const RepositoryReadOnlyMessage = "The repository is temporarily read-only. Please try again later."

// ErrRepositoryReadOnly refuses a write to a repository that is read-only
// for now: 403 with RepositoryReadOnlyMessage as the whole body message.
// errors.Is matches it, and ErrReadOnly (its kind).
var ErrRepositoryReadOnly = &Error{Kind: KindReadOnly, Message: RepositoryReadOnlyMessage, Raw: true}

// RepositoryReadOnly is ErrRepositoryReadOnly.
func RepositoryReadOnly() *Error { return ErrRepositoryReadOnly }

// WrappedError is a refusal GitLab words as {"message":{"error":msg}}
// with the status of kind.
func WrappedError(kind Kind, msg string) *Error {
	return &Error{Kind: kind, Message: msg, Wrapped: true}
}

// NotFound reports a missing (or invisible) resource: "404 User Not Found".
// An empty resource gives "404 Not Found".
func NotFound(resource string) *Error {
	if resource == "" {
		return &Error{Kind: KindNotFound, Message: "404 Not Found", Raw: true}
	}
	return &Error{Kind: KindNotFound, Message: "404 " + resource + " Not Found", Raw: true}
}

// NotFoundRaw is a 404 whose body message is exactly msg.
func NotFoundRaw(msg string) *Error { return &Error{Kind: KindNotFound, Message: msg, Raw: true} }

// TooLarge reports a request body or upload over its size limit (413).
func TooLarge() *Error {
	return &Error{Kind: KindTooLarge, Message: "413 Request Entity Too Large", Raw: true}
}

// Timeout reports a request body that stalled or arrived too slowly (408).
func Timeout() *Error {
	return &Error{Kind: KindTimeout, Message: "408 Request Timeout", Raw: true}
}

// URITooLong reports a request line past its bound (414).
func URITooLong() *Error {
	return &Error{Kind: KindURITooLong, Message: "414 Request-URI Too Large", Raw: true}
}

// Unavailable reports a server that takes no more work now (503).
func Unavailable() *Error {
	return &Error{Kind: KindUnavailable, Message: "503 Service Unavailable", Raw: true}
}

// PreconditionFailed reports a request whose premise the server does not
// share (a runner's final state for a log the server holds otherwise: the
// runner sends the whole log again).
func PreconditionFailed(msg string) *Error {
	return &Error{Kind: KindPreconditionFailed, Message: "412 Precondition Failed - " + msg, Raw: true}
}

// NotFoundAs names a lookup's "not found" for the resource ("404 User Not
// Found"); other errors pass unchanged.
func NotFoundAs(err error, resource string) error {
	if errors.Is(err, ErrNotFound) {
		return NotFound(resource)
	}
	return err
}

// RecordNotFound is GitLab's generic lookup failure, "404 Not found".
func RecordNotFound() *Error {
	return &Error{Kind: KindNotFound, Message: "404 Not found", Raw: true}
}

// Forbidden reports an action the actor may not take; reason may be empty.
func Forbidden(reason string) *Error { return &Error{Kind: KindForbidden, Message: reason} }

// ForbiddenRaw is a 403 whose body message is exactly msg.
func ForbiddenRaw(msg string) *Error { return &Error{Kind: KindForbidden, Message: msg, Raw: true} }

// Unauthorized reports missing or bad credentials; reason may be empty.
func Unauthorized(reason string) *Error { return &Error{Kind: KindUnauthorized, Message: reason} }

// Conflict reports a clash with existing state; msg is the whole body message.
func Conflict(msg string) *Error {
	if msg == "" {
		msg = "409 Conflict"
	}
	return &Error{Kind: KindConflict, Message: msg, Raw: true}
}

// BadRequest is "400 Bad request" with an optional reason.
func BadRequest(reason string) *Error { return &Error{Kind: KindBadRequest, Message: reason} }

// BadRequestRaw is a 400 whose body message is exactly msg.
func BadRequestRaw(msg string) *Error { return &Error{Kind: KindBadRequest, Message: msg, Raw: true} }

// Param reports invalid request parameters in Grape's shape: {"error":"..."}.
func Param(msg string) *Error { return &Error{Kind: KindParam, Message: msg} }

// NotModified is a 304.
func NotModified() *Error { return &Error{Kind: KindNotModified} }

// Unprocessable is a 422 with the given message.
func Unprocessable(msg string) *Error {
	return &Error{Kind: KindUnprocessable, Message: msg, Raw: true}
}

// KindOf returns the kind of err, or 0 for an unclassified error.
func KindOf(err error) Kind {
	var e *Error
	if errors.As(err, &e) {
		return e.Kind
	}
	return 0
}

// FieldErrors maps a field name to its validation messages.
type FieldErrors map[string][]string

// Add appends msg to field.
func (f *FieldErrors) Add(field, msg string) {
	if *f == nil {
		*f = FieldErrors{}
	}
	(*f)[field] = append((*f)[field], msg)
}

// Err returns a KindInvalid error, or nil when nothing was added.
func (f FieldErrors) Err() error {
	if len(f) == 0 {
		return nil
	}
	return &Error{Kind: KindInvalid, Fields: f}
}

func (f FieldErrors) String() string {
	keys := make([]string, 0, len(f))
	for k := range f {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for i, k := range keys {
		if i > 0 {
			b.WriteString("; ")
		}
		fmt.Fprintf(&b, "%s %s", k, strings.Join(f[k], ", "))
	}
	return b.String()
}

// Invalid is a one-field validation error.
func Invalid(field, msg string) error {
	var f FieldErrors
	f.Add(field, msg)
	return f.Err()
}

// TooManyRequests is a rate limit reached on what ("archive", "endpoint"):
// 429 {"message":{"error":"This <what> has been requested too many times. Try again later."}}.
func TooManyRequests(what string) *Error {
	return &Error{Kind: KindTooManyRequests, Message: "This " + what + " has been requested too many times. Try again later."}
}
