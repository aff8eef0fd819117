package model

import "time"

// ErrorTrackingSetting is a project's error-tracking configuration
// (GitLab's ProjectErrorTrackingSetting): Enabled is the API's "active",
// Integrated selects Quarry's own collector rather than a Sentry server.
type ErrorTrackingSetting struct {
	ProjectID   int64
	Enabled     bool
	Integrated  bool
	APIURL      *string
	ProjectName *string
	CreatedAt   time.Time
	UpdatedAt   time.Time
}

// ErrorTrackingClientKeyPrefix starts every client key's public key
// (GitLab's "glet_" followed by 32 hexadecimal digits).
const ErrorTrackingClientKeyPrefix = "glet_"

// ErrorTrackingClientKey is a public key a Sentry SDK sends to the
// collector (in its DSN). It is public by design: it only lets events in.
type ErrorTrackingClientKey struct {
	ID        int64
	ProjectID int64
	Active    bool
	PublicKey string
	CreatedAt time.Time
}

// ErrorStatus is an error's triage state.
type ErrorStatus string

// The error statuses (GitLab's ErrorTracking::Error#status).
const (
	ErrorUnresolved ErrorStatus = "unresolved"
	ErrorResolved   ErrorStatus = "resolved"
	ErrorIgnored    ErrorStatus = "ignored"
)

// errorTransitions is the declared table of status changes: every status
// may move to every other (GitLab's update_sentry_issue sets any of the
// three). A change to the same status is no change.
var errorTransitions = map[ErrorStatus][]ErrorStatus{
	ErrorUnresolved: {ErrorResolved, ErrorIgnored},
	ErrorResolved:   {ErrorUnresolved, ErrorIgnored},
	ErrorIgnored:    {ErrorUnresolved, ErrorResolved},
}

// Valid reports whether s is a declared status.
func (s ErrorStatus) Valid() bool { _, ok := errorTransitions[s]; return ok }

// CanMoveTo reports whether the table allows from → to.
func (s ErrorStatus) CanMoveTo(to ErrorStatus) bool {
	for _, t := range errorTransitions[s] {
		if t == to {
			return true
		}
	}
	return false
}

// TrackedError is a group of events (GitLab's ErrorTracking::Error):
// events of one project with the same exception type (Name), culprit
// (Actor) and platform. Description is the latest event's message.
type TrackedError struct {
	ID          int64
	ProjectID   int64
	Name        string
	Description string
	Actor       string
	Platform    string
	Status      ErrorStatus
	EventsCount int64
	FirstSeenAt time.Time
	LastSeenAt  time.Time
	CreatedAt   time.Time
	UpdatedAt   time.Time
}

// Title is GitLab's title of an error: the name and the description,
// cut to 64 characters with "..." (Rails' String#truncate).
func (e TrackedError) Title() string {
	t := e.Name
	if e.Description != "" && e.Description != e.Name {
		t += " " + e.Description
	}
	r := []rune(t)
	if len(r) <= 64 {
		return t
	}
	return string(r[:61]) + "..."
}

// TrackedErrorEvent is one event of an error, its payload kept whole
// (stack traces and all) as the SDK sent it.
type TrackedErrorEvent struct {
	ID          int64
	ErrorID     int64
	Description string
	Environment *string
	Level       *string
	OccurredAt  time.Time
	Payload     []byte
	CreatedAt   time.Time
}
