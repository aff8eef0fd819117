package api

import (
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"sync"
	"time"

	"quarry/internal/model"
)

// MaxRequestURI bounds the request line's target (path and query): past
// it the answer is 414, so no response header built from the URL (Link)
// can grow past what clients accept.
const MaxRequestURI = 8 << 10

// BodyPace is how slowly a request body may arrive: a body that sends
// nothing for Stall, or less than MinRate bytes a second once Grace has
// passed, is cut off. A zero Stall leaves bodies unguarded.
type BodyPace struct {
	Stall   time.Duration
	MinRate int64
	Grace   time.Duration
}

// pacedBody enforces a BodyPace on one request body through the
// connection's read deadline: each read may wait until the earlier of
// "Stall from now" and the moment the body would fall below the rate if
// nothing more came (the rate counted from the first read). A read past it fails with model.Timeout (408 when
// the handler can still answer). The deadline is lifted once the body is
// done (net/http lifts it too when it reaches the body's end), so nothing
// later — a long poll's wait, watching for the client going away — is
// cut by it.
type pacedBody struct {
	io.ReadCloser
	rc    *http.ResponseController
	pace  BodyPace
	start time.Time
	n     int64
	done  bool
}

func (b *pacedBody) Read(p []byte) (int, error) {
	if b.done {
		return b.ReadCloser.Read(p)
	}
	now := time.Now()
	if b.start.IsZero() {
		b.start = now
	}
	deadline := now.Add(b.pace.Stall)
	if b.pace.MinRate > 0 {
		due := b.start.Add(b.pace.Grace + time.Duration(float64(b.n)/float64(b.pace.MinRate)*float64(time.Second)))
		if due.Before(deadline) {
			deadline = due
		}
	}
	if !deadline.After(now) {
		return 0, b.cut()
	}
	if err := b.rc.SetReadDeadline(deadline); err != nil && !errors.Is(err, http.ErrNotSupported) {
		return 0, err
	}
	n, err := b.ReadCloser.Read(p)
	b.n += int64(n)
	switch {
	case err == nil:
	case errors.Is(err, os.ErrDeadlineExceeded):
		return n, b.cut()
	default:
		b.finish()
	}
	return n, err
}

// finish lifts the read deadline: the body is over.
func (b *pacedBody) finish() {
	b.done = true
	_ = b.rc.SetReadDeadline(time.Time{})
}

// cut ends a body too slow to wait for. The read deadline stays in the
// past, so the server does not wait for the rest either (it would read on
// to reuse the connection): it answers and closes.
func (b *pacedBody) cut() error {
	b.done = true
	_ = b.rc.SetReadDeadline(time.Now())
	return model.Timeout()
}

func (b *pacedBody) Close() error {
	if !b.done {
		b.finish()
	}
	return b.ReadCloser.Close()
}

// pace wraps r's body in the server's BodyPace (w must reach the
// connection through Unwrap).
func (s *Server) pace(w http.ResponseWriter, r *http.Request) {
	if s.BodyPace.Stall <= 0 || r.Body == nil || r.Body == http.NoBody {
		return
	}
	r.Body = &pacedBody{ReadCloser: r.Body, rc: http.NewResponseController(w), pace: s.BodyPace}
}

// LimitListener accepts at most max connections at once. A connection past
// the cap is answered 503 (Connection: close) and closed at once, so a
// client learns why instead of waiting in the accept queue, and the
// server's goroutines and descriptors stay bounded.
func LimitListener(ln net.Listener, max int) net.Listener {
	return &limitListener{Listener: ln, slots: make(chan struct{}, max)}
}

type limitListener struct {
	net.Listener
	slots chan struct{}
}

// busyResponse is the whole answer to a connection past the cap.
const busyResponse = "HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\nContent-Length: 39\r\nRetry-After: 1\r\nConnection: close\r\n\r\n" +
	`{"message":"503 Service Unavailable"}` + "\r\n"

func (l *limitListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		select {
		case l.slots <- struct{}{}:
			return &limitedConn{Conn: c, release: func() { <-l.slots }}, nil
		default:
			go refuse(c)
		}
	}
}

// refuse answers a connection past the cap without reading its request
// (a bounded write, then close).
func refuse(c net.Conn) {
	_ = c.SetWriteDeadline(time.Now().Add(2 * time.Second))
	_, _ = io.WriteString(c, busyResponse)
	_ = c.Close()
}

type limitedConn struct {
	net.Conn
	release func()
	once    sync.Once
}

// Close frees the connection's slot once, however often it is called.
func (c *limitedConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.release)
	return err
}
