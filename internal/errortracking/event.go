package errortracking

import (
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"quarry/internal/store"
)

// GitLab's column limits (ErrorTracking::Error's validations); Quarry cuts
// longer values rather than refuse the event.
const (
	maxName        = 255
	maxActor       = 255
	maxPlatform    = 255
	maxDescription = 1024
	maxShort       = 255 // environment, level
)

// errUnsupported is an event that is neither an exception nor a message:
// GitLab's "400 Bad request - Unsupported sentry payload".
var errUnsupported = errors.New("unsupported sentry payload")

// event is what grouping reads of a Sentry event.
type event struct {
	Exception   exceptions      `json:"exception"`
	Message     json.RawMessage `json:"message"`
	LogEntry    *logEntry       `json:"logentry"`
	Transaction string          `json:"transaction"`
	Culprit     string          `json:"culprit"`
	Logger      string          `json:"logger"`
	Platform    string          `json:"platform"`
	Environment *string         `json:"environment"`
	Level       *string         `json:"level"`
	Timestamp   json.RawMessage `json:"timestamp"`
}

type logEntry struct {
	Formatted string `json:"formatted"`
	Message   string `json:"message"`
}

type exception struct {
	Type       string      `json:"type"`
	Value      string      `json:"value"`
	Module     string      `json:"module"`
	Stacktrace *stacktrace `json:"stacktrace"`
}

type stacktrace struct {
	Frames []frame `json:"frames"`
}

type frame struct {
	Function string `json:"function"`
	Module   string `json:"module"`
}

// report reads a Sentry event payload into the report the store keeps,
// as GitLab's CollectErrorService groups it: the name is the first
// exception's type, the description its value, the actor the event's
// transaction or else "function(module)" of the exception's last stack
// frame, and the platform the event's. A message-only event
// (capture_message) is an error too: its message is its name and
// description. now stamps an event without a timestamp.
func report(projectID int64, payload []byte, now time.Time) (store.ErrorReport, error) {
	var ev event
	if err := json.Unmarshal(payload, &ev); err != nil {
		// One pass over the payload for the usual shape; the legacy list
		// of exceptions (or a field of another type, ignored as GitLab's
		// schema would not) costs a second.
		var te *json.UnmarshalTypeError
		if !errors.As(err, &te) {
			return store.ErrorReport{}, errParse
		}
		var legacy legacyEvent
		if json.Unmarshal(payload, &legacy) == nil {
			ev.Exception.Values = legacy.Exception
		}
	}
	r := store.ErrorReport{ProjectID: projectID, Platform: cut(ev.Platform, maxPlatform),
		Environment: cutPtr(ev.Environment, maxShort), Level: cutPtr(ev.Level, maxShort)}
	var frames []frame
	switch {
	case len(ev.Exception.Values) > 0:
		ex := ev.Exception.Values[0]
		r.Name, r.Description = ex.Type, ex.Value
		if ex.Stacktrace != nil {
			frames = ex.Stacktrace.Frames
		}
	default:
		msg := message(ev)
		if msg == "" {
			return store.ErrorReport{}, errUnsupported
		}
		first, _, _ := strings.Cut(msg, "\n")
		r.Name, r.Description = first, msg
	}
	if strings.TrimSpace(r.Name) == "" {
		r.Name = "Error"
	}
	switch {
	case ev.Transaction != "":
		r.Actor = ev.Transaction
	case len(frames) > 0:
		last := frames[len(frames)-1]
		r.Actor = last.Function + "(" + last.Module + ")"
	case ev.Culprit != "":
		r.Actor = ev.Culprit
	case ev.Logger != "":
		r.Actor = ev.Logger
	default:
		r.Actor = "unknown"
	}
	r.Name, r.Actor, r.Description = cut(r.Name, maxName), cut(r.Actor, maxActor), cut(r.Description, maxDescription)
	r.OccurredAt = timestamp(ev.Timestamp, now).UnixMicro()
	r.Payload = payload
	if !utf8.Valid(payload) {
		r.Payload = []byte(strings.ToValidUTF8(string(payload), "\uFFFD"))
	}
	return r, nil
}

// exceptions is an event's exception interface, {"values":[…]};
// grouping takes the first (as GitLab does).
type exceptions struct {
	Values []exception `json:"values"`
}

// legacyEvent is an event whose exception is the legacy bare list.
type legacyEvent struct {
	Exception []exception `json:"exception"`
}

// message is a message event's text: the formatted log entry, or the
// message as a string or an object.
func message(ev event) string {
	if ev.LogEntry != nil {
		if ev.LogEntry.Formatted != "" {
			return ev.LogEntry.Formatted
		}
		if ev.LogEntry.Message != "" {
			return ev.LogEntry.Message
		}
	}
	var s string
	if json.Unmarshal(ev.Message, &s) == nil {
		return s
	}
	var e logEntry
	if json.Unmarshal(ev.Message, &e) == nil {
		if e.Formatted != "" {
			return e.Formatted
		}
		return e.Message
	}
	return ""
}

// timestamp reads an event's time: RFC 3339 or seconds since the epoch
// (a number, or a string of one — some SDKs send "1630945472.13"); now
// when absent or unreadable.
func timestamp(raw json.RawMessage, now time.Time) time.Time {
	s := strings.Trim(string(raw), `"`)
	if s == "" || s == "null" {
		return now
	}
	if f, err := strconv.ParseFloat(s, 64); err == nil {
		if f < 0 || f > 1e11 {
			return now
		}
		sec := int64(f)
		return time.Unix(sec, int64((f-float64(sec))*1e9)).UTC()
	}
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05.999999999", "2006-01-02T15:04:05"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UTC()
		}
	}
	return now
}

// cut shortens s to n characters.
func cut(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return strings.ToValidUTF8(s, "\uFFFD")
	}
	return string([]rune(s)[:n])
}

func cutPtr(s *string, n int) *string {
	if s == nil {
		return nil
	}
	v := cut(*s, n)
	return &v
}
