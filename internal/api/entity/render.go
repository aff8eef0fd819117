// Package entity holds the JSON shapes of the API (GitLab's entities) and
// the Renderer that builds them from model values. A Renderer knows only
// where the server is reached from outside and what time it is; whatever
// else an entity needs (a viewer's access, loaded relations) comes in as
// arguments, already decided by the services.
package entity

import (
	"strings"
	"time"
)

// Renderer builds entities. The zero value renders relative links; build
// it with New.
type Renderer struct {
	// ExternalURL is the server's address as clients reach it, without a
	// trailing slash.
	ExternalURL string
	// Now is the clock (token expiry, for one).
	Now func() time.Time
	// Cache keeps encoded entities by their rows' versions (nil: off).
	Cache *Cache
	// SSHHost and SSHPort are where git over SSH is reached (SSHURL);
	// an empty host is the external URL's, port 0 is 22.
	SSHHost string
	SSHPort int
}

// New returns a renderer for a server reached at externalURL.
func New(externalURL string, now func() time.Time) *Renderer {
	if now == nil {
		now = time.Now
	}
	return &Renderer{ExternalURL: strings.TrimRight(externalURL, "/"), Now: now}
}

// Time renders times as GitLab does: UTC with milliseconds.
type Time time.Time

// MarshalJSON implements json.Marshaler.
func (t Time) MarshalJSON() ([]byte, error) {
	b := make([]byte, 0, len(`"2006-01-02T15:04:05.000Z"`))
	b = append(b, '"')
	b = time.Time(t).UTC().AppendFormat(b, "2006-01-02T15:04:05.000Z")
	return append(b, '"'), nil
}

// TimePtr is t as a nullable Time.
func TimePtr(t *time.Time) *Time {
	if t == nil {
		return nil
	}
	a := Time(*t)
	return &a
}

// StrPtr is s as a nullable string: nil when empty.
func StrPtr(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// AvatarURL is where an uploaded avatar is served; nil without one.
func (r *Renderer) AvatarURL(path string) *string {
	if path == "" {
		return nil
	}
	u := r.ExternalURL + "/uploads/-/system/" + path
	return &u
}
