// Package outbound makes the HTTP requests Quarry sends to addresses its
// users name (include:remote): the address each connection resolves to
// is checked when it is made, so loopback, private, link-local and
// unspecified addresses are refused unless local requests are allowed,
// and a name that resolves to a local address on a second lookup is
// refused too. Bodies, time and redirects are bounded.
package outbound

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"syscall"
	"time"
)

// Defaults of a Client: GitLab's timeout for remote includes and the
// redirects followed (each hop's address checked again).
const (
	DefaultTimeout   = 10 * time.Second
	DefaultRedirects = 5
)

// Client gets documents over HTTP(S). The zero value uses the defaults.
type Client struct {
	Timeout   time.Duration // the whole request, connection included
	Redirects int           // at most this many redirects
}

// BlockedError is an address refused: a local one when local requests
// are not allowed, or a scheme other than http and https. Reason is
// GitLab's UrlBlocker text ("Requests to localhost are not allowed").
type BlockedError struct{ Reason string }

func (e *BlockedError) Error() string { return "blocked: " + e.Reason }

// BlockedReason is the reason, for callers that match on behaviour.
func (e *BlockedError) BlockedReason() string { return e.Reason }

// StatusError is an answer with a status of 400 or more.
type StatusError struct{ Code int }

func (e *StatusError) Error() string { return "HTTP status " + http.StatusText(e.Code) }

// HTTPStatus is the status code.
func (e *StatusError) HTTPStatus() int { return e.Code }

// TooLargeError is a body longer than the bound asked for.
type TooLargeError struct{ Max int64 }

func (e *TooLargeError) Error() string { return "body too large" }

// TooLarge reports that the body exceeded the bound.
func (e *TooLargeError) TooLarge() bool { return true }

// ConnectError is a failure to reach the server (DNS, connection
// refused or reset).
type ConnectError struct{ Err error }

func (e *ConnectError) Error() string { return "connect: " + e.Err.Error() }
func (e *ConnectError) Unwrap() error { return e.Err }

// ConnectFailed reports a failure to reach the server.
func (e *ConnectError) ConnectFailed() bool { return true }

// TimeoutError is a request that took longer than the client's timeout
// (or the caller's deadline).
type TimeoutError struct{ Err error }

func (e *TimeoutError) Error() string { return "timeout: " + e.Err.Error() }
func (e *TimeoutError) Unwrap() error { return e.Err }

// Timeout reports a timeout, as net.Error does.
func (e *TimeoutError) Timeout() bool { return true }

// Get fetches rawURL and returns its body, at most maxBytes long. Errors
// are *BlockedError, *StatusError, *TooLargeError, *TimeoutError,
// *ConnectError, or another error for any other failure of the request.
func (c Client) Get(ctx context.Context, rawURL string, allowLocal bool, maxBytes int64) ([]byte, error) {
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
		return nil, &BlockedError{"Only allowed schemes are http, https"}
	}
	timeout := c.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, err
	}
	resp, err := c.client(allowLocal, timeout).Do(req)
	if err != nil {
		return nil, classify(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 400 {
		return nil, &StatusError{Code: resp.StatusCode}
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxBytes+1))
	if err != nil {
		return nil, classify(err)
	}
	if int64(len(data)) > maxBytes {
		return nil, &TooLargeError{Max: maxBytes}
	}
	return data, nil
}

// classify turns a failed request into the package's errors.
func classify(err error) error {
	var blocked *BlockedError
	var dnsErr *net.DNSError
	var opErr *net.OpError
	var netErr net.Error
	switch {
	case errors.As(err, &blocked):
		return blocked
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &netErr) && netErr.Timeout():
		return &TimeoutError{Err: err}
	case errors.As(err, &dnsErr), errors.As(err, &opErr):
		return &ConnectError{Err: err}
	}
	return err
}

// client is an HTTP client without proxy or keep-alives whose dialer
// checks each connection's resolved address.
func (c Client) client(allowLocal bool, timeout time.Duration) *http.Client {
	redirects := c.Redirects
	if redirects <= 0 {
		redirects = DefaultRedirects
	}
	dialer := &net.Dialer{Timeout: timeout, Control: func(_, address string, _ syscall.RawConn) error {
		if allowLocal {
			return nil
		}
		host, _, err := net.SplitHostPort(address)
		if err != nil {
			return &BlockedError{"Requests to the local network are not allowed"}
		}
		return CheckIP(net.ParseIP(host))
	}}
	return &http.Client{
		Transport: &http.Transport{DialContext: dialer.DialContext, TLSHandshakeTimeout: timeout,
			ResponseHeaderTimeout: timeout, DisableKeepAlives: true},
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) >= redirects {
				return errors.New("too many redirects")
			}
			if req.URL.Scheme != "http" && req.URL.Scheme != "https" {
				return &BlockedError{"Only allowed schemes are http, https"}
			}
			return nil
		},
	}
}

// CheckIP refuses loopback, private, shared (RFC 6598), link-local and
// unspecified addresses with GitLab's UrlBlocker reasons; nil for a
// public address.
func CheckIP(ip net.IP) error {
	switch {
	case ip == nil:
		return &BlockedError{"Requests to the local network are not allowed"}
	case ip.IsLoopback(), ip.IsUnspecified():
		return &BlockedError{"Requests to localhost are not allowed"}
	case ip.IsLinkLocalUnicast(), ip.IsLinkLocalMulticast():
		return &BlockedError{"Requests to the link local network are not allowed"}
	case ip.IsPrivate(), sharedAddressSpace.Contains(ip):
		return &BlockedError{"Requests to the local network are not allowed"}
	}
	return nil
}

// sharedAddressSpace is RFC 6598's carrier-grade NAT range, local too.
var sharedAddressSpace = &net.IPNet{IP: net.IPv4(100, 64, 0, 0), Mask: net.CIDRMask(10, 32)}
