// Package logbuf batches a server's log lines into fewer writes. A busy
// server logs a line per request; written one by one, the lines cost a
// system call each, about as much as sending the response. A Writer
// keeps them in memory and writes them together — when its buffer
// fills, at every interval, and at once after a line that must not wait
// (Handler: warnings and errors, and every line that is not the access
// log's).
package logbuf

import (
	"context"
	"io"
	"log/slog"
	"sync"
	"time"
)

// Size is how much a Writer holds before it writes.
const Size = 64 << 10

// Writer batches writes to an underlying writer. Its methods may be
// called from many goroutines.
type Writer struct {
	mu   sync.Mutex
	w    io.Writer
	buf  []byte
	err  error
	stop chan struct{}
	done chan struct{}
}

// New returns a Writer that writes what it holds to w at least every
// interval, until Close.
func New(w io.Writer, interval time.Duration) *Writer {
	b := &Writer{w: w, buf: make([]byte, 0, Size), stop: make(chan struct{}), done: make(chan struct{})}
	go b.loop(interval)
	return b
}

func (b *Writer) loop(interval time.Duration) {
	defer close(b.done)
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			_ = b.Flush()
		case <-b.stop:
			return
		}
	}
}

// Write keeps p (a whole log line) to be written with the others; a
// line that does not fit in what is left of the buffer writes the
// buffer first, and one larger than the buffer is written at once.
func (b *Writer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.buf)+len(p) > cap(b.buf) {
		b.flushLocked()
		if len(p) > cap(b.buf) {
			if _, err := b.w.Write(p); err != nil && b.err == nil {
				b.err = err
			}
			return len(p), nil
		}
	}
	b.buf = append(b.buf, p...)
	return len(p), nil
}

// Flush writes what the Writer holds. It returns the first error the
// underlying writer gave, if any (a log's write errors are not the
// caller's to handle, so Write never returns them).
func (b *Writer) Flush() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.flushLocked()
	return b.err
}

func (b *Writer) flushLocked() {
	if len(b.buf) == 0 {
		return
	}
	if _, err := b.w.Write(b.buf); err != nil && b.err == nil {
		b.err = err
	}
	b.buf = b.buf[:0]
}

// Close stops the interval's writes and writes what is left.
func (b *Writer) Close() error {
	select {
	case <-b.stop:
	default:
		close(b.stop)
	}
	<-b.done
	return b.Flush()
}

// Handler passes records to a handler writing to a Writer and flushes
// the Writer after every record but those that may wait: records at
// Info or below whose message is one of Batched (the access log's).
type Handler struct {
	slog.Handler
	w       *Writer
	batched map[string]bool
}

// NewHandler returns a Handler over h, which writes to w.
func NewHandler(h slog.Handler, w *Writer, batched ...string) *Handler {
	m := make(map[string]bool, len(batched))
	for _, s := range batched {
		m[s] = true
	}
	return &Handler{Handler: h, w: w, batched: m}
}

// Handle writes r, and flushes unless r may wait.
func (h *Handler) Handle(ctx context.Context, r slog.Record) error {
	err := h.Handler.Handle(ctx, r)
	if r.Level > slog.LevelInfo || !h.batched[r.Message] {
		_ = h.w.Flush()
	}
	return err
}

// WithAttrs keeps the batching for the derived handler.
func (h *Handler) WithAttrs(as []slog.Attr) slog.Handler {
	return &Handler{Handler: h.Handler.WithAttrs(as), w: h.w, batched: h.batched}
}

// WithGroup keeps the batching for the derived handler.
func (h *Handler) WithGroup(name string) slog.Handler {
	return &Handler{Handler: h.Handler.WithGroup(name), w: h.w, batched: h.batched}
}
