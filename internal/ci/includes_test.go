package ci

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"quarry/internal/ciconfig"
)

type (
	blockedErr struct{}
	statusErr  struct{}
	largeErr   struct{}
	timeoutErr struct{}
	connectErr struct{}
)

func (blockedErr) Error() string         { return "blocked" }
func (blockedErr) BlockedReason() string { return "Requests to localhost are not allowed" }
func (statusErr) Error() string          { return "status" }
func (statusErr) HTTPStatus() int        { return 404 }
func (largeErr) Error() string           { return "large" }
func (largeErr) TooLarge() bool          { return true }
func (timeoutErr) Error() string         { return "timeout" }
func (timeoutErr) Timeout() bool         { return true }
func (connectErr) Error() string         { return "connect" }
func (connectErr) ConnectFailed() bool   { return true }

// TestRemoteError: a fetcher's errors, matched by behaviour, become
// ciconfig's, which give GitLab's messages.
func TestRemoteError(t *testing.T) {
	for _, c := range []struct {
		in   error
		want error
	}{
		{fmt.Errorf("get: %w", blockedErr{}), &ciconfig.RemoteBlockedError{Reason: "Requests to localhost are not allowed"}},
		{statusErr{}, &ciconfig.RemoteStatusError{Code: 404}},
		{largeErr{}, ciconfig.ErrTooBig},
		{timeoutErr{}, ciconfig.ErrRemoteTimeout},
		{context.DeadlineExceeded, ciconfig.ErrRemoteTimeout},
		{connectErr{}, ciconfig.ErrRemoteSocket},
		{errors.New("too many redirects"), ciconfig.ErrRemoteHTTP},
	} {
		got := remoteError(c.in)
		if got.Error() != c.want.Error() {
			t.Errorf("remoteError(%v) = %v; want %v", c.in, got, c.want)
		}
	}
}
