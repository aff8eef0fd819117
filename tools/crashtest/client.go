package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// requestTimeout bounds every API call, from the request to the last byte
// of the answer.
const requestTimeout = 30 * time.Second

// client calls the API as root.
type client struct {
	base  string // http://host:port
	token string
	http  *http.Client
}

func newClient(base, token string, conns int) *client {
	return &client{base: base, token: token, http: &http.Client{Timeout: requestTimeout,
		Transport: &http.Transport{MaxIdleConns: conns, MaxIdleConnsPerHost: conns, IdleConnTimeout: 30 * time.Second}}}
}

// reply is an answer of the server.
type reply struct {
	status int
	header http.Header
	body   []byte
}

// why is a short account of a refused or failed answer: its status and
// the start of its body.
func (r reply) why() string {
	b := strings.Join(strings.Fields(string(r.body)), " ")
	if len(b) > 120 {
		b = b[:120] + "…"
	}
	return fmt.Sprintf("%d %s", r.status, b)
}

// do sends one request to /api/v4 + path with in as its JSON body (nil:
// none). err is set when no complete answer came.
func (c *client) do(method, path string, in any) (reply, error) {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return reply{}, err
		}
		body = bytes.NewReader(b)
	}
	ctx, cancel := context.WithTimeout(context.Background(), requestTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, c.base+"/api/v4"+path, body)
	if err != nil {
		return reply{}, err
	}
	req.Header.Set("PRIVATE-TOKEN", c.token)
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return reply{}, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return reply{}, fmt.Errorf("%s %s: read answer: %w", method, path, err)
	}
	return reply{status: resp.StatusCode, header: resp.Header, body: b}, nil
}

// write sends a write and classifies its answer. A 2xx answer whose body
// is not JSON of out's shape counts as failed: the tool could not learn
// what it made.
func (c *client) write(method, path string, in, out any) (reply, outcome, string) {
	r, err := c.do(method, path, in)
	o := classify(r.status, err)
	switch {
	case err != nil:
		return r, o, err.Error()
	case o == acked && out != nil:
		if err := json.Unmarshal(r.body, out); err != nil {
			return r, failed, fmt.Sprintf("%d with an unreadable body: %v", r.status, err)
		}
	}
	return r, o, r.why()
}

// readAttempts is how often a read of the checks is tried before its
// failure counts: a read may meet the server restarting.
const readAttempts = 5

// get GETs path, retrying answers that are no answer or a 5xx; err when
// the server never gave another.
func (c *client) get(path string) (reply, error) {
	var last error
	for attempt := 0; attempt < readAttempts; attempt++ {
		if attempt > 0 {
			time.Sleep(time.Duration(attempt) * 500 * time.Millisecond)
		}
		r, err := c.do(http.MethodGet, path, nil)
		switch {
		case err != nil:
			last = err
		case r.status >= 500:
			last = fmt.Errorf("GET %s: %s", path, r.why())
		default:
			return r, nil
		}
	}
	return reply{}, last
}

// read GETs path into out (nil: discard). It returns the final status,
// 0 with err when the server never answered.
func (c *client) read(path string, out any) (int, http.Header, error) {
	r, err := c.get(path)
	if err != nil {
		return 0, nil, err
	}
	if r.status == http.StatusOK && out != nil {
		if err := json.Unmarshal(r.body, out); err != nil {
			return r.status, r.header, fmt.Errorf("GET %s: %w", path, err)
		}
	}
	return r.status, r.header, nil
}

// raw GETs path and returns its body as it is.
func (c *client) raw(path string) (int, string, error) {
	r, err := c.get(path)
	if err != nil {
		return 0, "", err
	}
	return r.status, string(r.body), nil
}

// projectPath is the API path of project id.
func projectPath(id int64) string { return "/projects/" + strconv.FormatInt(id, 10) }

// filePath is the API path of a repository file (slashes escaped, as
// GitLab wants them).
func filePath(project int64, path string) string {
	return projectPath(project) + "/repository/files/" + url.PathEscape(path)
}
