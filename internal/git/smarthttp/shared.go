package smarthttp

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/textproto"
	"path/filepath"
	"time"

	"quarry/internal/git"
)

// maxSharedRequest bounds the upload-pack requests answered through the
// pack cache (a clone's is some hundred bytes; a fetch negotiating
// thousands of haves runs on its own).
const maxSharedRequest = 64 << 10

// produceTimeout bounds the http-backend that produces a shared answer,
// which outlives its own client (others may follow it).
const produceTimeout = 30 * time.Minute

// serveShared answers a final upload-pack request (one that asks for the
// pack: its body holds "done") through the pack cache: identical requests
// of a repository whose refs did not move share one answer, the whole CGI
// output of http-backend.
func serveShared(ctx context.Context, runner *git.Runner, w http.ResponseWriter, r *http.Request, o Options, body []byte) error {
	repoDir := filepath.Join(o.Root, o.Rel)
	state, err := o.Packs.State(repoDir)
	if err != nil {
		return fmt.Errorf("pack cache: %w", err)
	}
	key := o.Packs.Key([]byte("upload-pack"), []byte(repoDir), state,
		[]byte(r.Header.Get("Git-Protocol")), []byte(r.Header.Get("Content-Type")), body)
	out := &cgiWriter{w: w, rc: http.NewResponseController(w)}
	produce := func(dst io.Writer) (bool, error) {
		pctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), produceTimeout)
		defer cancel()
		rr := r.Clone(pctx)
		rr.Body, rr.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
		proc, err := runner.Start(pctx, "", git.Command{Name: "http-backend", Env: backendEnv(rr, o)})
		if err != nil {
			return false, err
		}
		go func() {
			_, _ = proc.Stdin.Write(body)
			proc.Stdin.Close()
		}()
		head := &headSniffer{}
		_, cerr := io.Copy(dst, io.TeeReader(proc.Stdout, head))
		if cerr != nil {
			// Nobody reads on: end the backend.
			cancel()
		}
		werr := proc.Wait()
		if cerr != nil {
			return false, cerr
		}
		if werr != nil {
			return false, werr
		}
		// Kept when it is a pack, and the refs did not move meanwhile (the
		// answer may show the newer ones).
		after, err := o.Packs.State(repoDir)
		return err == nil && bytes.Equal(after, state) && head.ok(), nil
	}
	err = o.Packs.Serve(ctx, key, out, produce)
	if err == nil && !out.started {
		err = errors.New("http-backend answered no header")
	}
	return err
}

// cgiWriter turns CGI output into the HTTP answer: the header, then the
// body, flushed as it comes.
type cgiWriter struct {
	w       http.ResponseWriter
	rc      *http.ResponseController
	head    []byte
	started bool
}

func (c *cgiWriter) Write(p []byte) (int, error) {
	n, err := c.writeNoFlush(p)
	if err == nil && c.started {
		_ = c.rc.Flush()
	}
	return n, err
}

// writeNoFlush is Write without the flush.
func (c *cgiWriter) writeNoFlush(p []byte) (int, error) {
	if c.started {
		return c.w.Write(p)
	}
	c.head = append(c.head, p...)
	end := headerEnd(c.head)
	if end < 0 {
		if len(c.head) > 64<<10 {
			return 0, errors.New("http-backend header too long")
		}
		return len(p), nil
	}
	hdr, err := textproto.NewReader(bufio.NewReader(bytes.NewReader(c.head[:end]))).ReadMIMEHeader()
	if err != nil {
		return 0, fmt.Errorf("http-backend headers: %w", err)
	}
	writeHeader(c.w, hdr)
	c.started = true
	if rest := c.head[end:]; len(rest) > 0 {
		if _, err := c.w.Write(rest); err != nil {
			return 0, err
		}
	}
	c.head = nil
	return len(p), nil
}

// headerEnd is the index past the blank line that ends a CGI header, or -1.
func headerEnd(b []byte) int {
	for i := 0; i < len(b); i++ {
		if b[i] != '\n' {
			continue
		}
		if i+1 < len(b) && b[i+1] == '\n' {
			return i + 2
		}
		if i+2 < len(b) && b[i+1] == '\r' && b[i+2] == '\n' {
			return i + 3
		}
	}
	return -1
}

// headSniffer keeps the start of the CGI output to read its status.
type headSniffer struct{ b []byte }

func (h *headSniffer) Write(p []byte) (int, error) {
	if room := 8<<10 - len(h.b); room > 0 {
		h.b = append(h.b, p[:min(room, len(p))]...)
	}
	return len(p), nil
}

// ok reports whether the output is a 200 answer.
func (h *headSniffer) ok() bool {
	end := headerEnd(h.b)
	if end < 0 {
		return false
	}
	hdr, err := textproto.NewReader(bufio.NewReader(bytes.NewReader(h.b[:end]))).ReadMIMEHeader()
	return err == nil && cgiStatus(hdr) == http.StatusOK
}
