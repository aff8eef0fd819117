package e2e

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"quarry/internal/apitest"
)

// Hardening against hostile and clumsy clients: each test is a row of the
// table of refusals a hostile client used to get a 500, a held connection
// or the server's memory from.

// gitInfoRefs asks for a repository's refs over smart HTTP as user with
// password, and returns the status and body.
func gitInfoRefs(t *testing.T, s *apitest.Server, fullPath, user, password string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, s.URL+"/"+fullPath+".git/info/refs?service=git-upload-pack", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.SetBasicAuth(user, password)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(res.Body, 1<<20))
	return res.StatusCode, string(b)
}

// A job token that its target's allowlist refuses is a 403 with GitLab's
// message over git HTTP, for the repository as for the wiki (it was a
// 500 for the repository).
func TestHardening_gitJobTokenRefused(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		owner := s.NewUser(t, "gitscope")
		src := newCIProject(t, s, owner, "src", map[string]string{".gitlab-ci.yml": "job1:\n  script: [\"true\"]\n"})
		dst := newCIProject(t, s, owner, "dst", nil)
		src.settle(t, 1)
		job := projectRunner(t, src, nil).take(t)
		want := fmt.Sprintf("Authentication by CI/CD job token not allowed from %s to %s.", src.Path, dst.Path)
		status, body := gitInfoRefs(t, s, dst.Path, "gitlab-ci-token", job.Token)
		if status != http.StatusForbidden || !strings.Contains(body, want) {
			t.Errorf("clone of a refusing project: %d %q; want 403 %q", status, body, want)
		}
		if status, _ := gitInfoRefs(t, s, src.Path, "gitlab-ci-token", job.Token); status != http.StatusOK {
			t.Errorf("clone of the job's own project: %d; want 200", status)
		}
		s.Do(t, apitest.Request{Method: "POST", Path: fmt.Sprintf("/projects/%d/job_token_scope/allowlist", dst.ID), Token: owner.Token,
			JSON: map[string]any{"target_project_id": src.ID}}).Want(t, http.StatusCreated)
		if status, body := gitInfoRefs(t, s, dst.Path, "gitlab-ci-token", job.Token); status != http.StatusOK {
			t.Errorf("clone once allowlisted: %d %q; want 200", status, body)
		}
		if status, _ := gitInfoRefs(t, s, dst.Path, "gitlab-ci-token", "glcbt-wrong"); status != http.StatusUnauthorized {
			t.Errorf("clone with a wrong job token: %d; want 401", status)
		}
	}, shortPoll)
}

// rawPost sends a request's head over a fresh connection, then streams
// up to size bytes of body from fill while it reads the answer. It stops
// sending once the answer has come (or the server stopped reading), and
// returns the answer's status line and body and how many body bytes the
// connection took.
func rawPost(t testing.TB, s *apitest.Server, head string, size int64, fill byte) (status string, body string, sent int64) {
	t.Helper()
	conn, err := net.DialTimeout("tcp", strings.TrimPrefix(s.URL, "http://"), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(60 * time.Second))
	if _, err := io.WriteString(conn, head); err != nil {
		t.Fatal(err)
	}
	answered := make(chan struct{})
	go func() {
		defer close(answered)
		res, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			status = "no answer: " + err.Error()
			return
		}
		b, _ := io.ReadAll(io.LimitReader(res.Body, 1<<16))
		res.Body.Close()
		status, body = res.Status, string(b)
	}()
	chunk := bytes.Repeat([]byte{fill}, 64<<10)
	for sent < size {
		select {
		case <-answered:
			return status, body, sent
		default:
		}
		n := min(int64(len(chunk)), size-sent)
		_ = conn.SetWriteDeadline(time.Now().Add(2 * time.Second))
		w, err := conn.Write(chunk[:n])
		sent += int64(w)
		if err != nil {
			break // the server closed, or stopped reading: its answer is in
		}
	}
	<-answered
	return status, body, sent
}

// A 99 MB body from a caller without credentials is answered (401 for a
// row that wants a token, 413 for the unauthenticated runner
// registration) without being read: the connection takes what the
// socket buffers hold, not the body.
func TestHardening_unknownCallerBodyUnread(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		const size = 99 << 20
		for _, c := range []struct {
			name, head, status, body string
		}{
			{"project without a token",
				fmt.Sprintf("POST /api/v4/projects HTTP/1.1\r\nHost: q\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", size),
				"401 Unauthorized", `{"message":"401 Unauthorized"}`},
			{"project with a bad token",
				fmt.Sprintf("POST /api/v4/projects HTTP/1.1\r\nHost: q\r\nPrivate-Token: glpat-wrong\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", size),
				"401 Unauthorized", `{"message":"401 Unauthorized"}`},
			{"runner registration",
				fmt.Sprintf("POST /api/v4/runners HTTP/1.1\r\nHost: q\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", size),
				"413 Request Entity Too Large", `{"message":"413 Request Entity Too Large"}`},
			{"chunked, without a token",
				"POST /api/v4/projects HTTP/1.1\r\nHost: q\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n1000000\r\n",
				"401 Unauthorized", `{"message":"401 Unauthorized"}`},
		} {
			status, body, sent := rawPost(t, s, c.head, size, '[')
			if status != c.status || !strings.Contains(body, c.body) {
				t.Errorf("%s: %q %s; want %q %s", c.name, status, body, c.status, c.body)
			}
			// Loopback socket buffers take a few MiB before the writer
			// blocks; the body is 99.
			if sent > 16<<20 {
				t.Errorf("%s: the connection took %d MiB of the body", c.name, sent>>20)
			}
		}
	})
}

// List parameters are sets: a topic repeated, in any case, is one topic
// (it was a 500 on the unique constraint); an over-long one is GitLab's
// validation error; nested arrays are no topics.
func TestHardening_topicsNormalized(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		u := s.NewUser(t, "topics")
		var p struct {
			ID     int64    `json:"id"`
			Topics []string `json:"topics"`
		}
		s.Do(t, apitest.Request{Method: "POST", Path: "/projects", Token: u.Token, JSON: map[string]any{"name": "x", "topics": []string{"t", "t"}}}).
			Want(t, http.StatusCreated).JSON(t, &p)
		if !slices.Equal(p.Topics, []string{"t"}) {
			t.Errorf("topics %q; want [t]", p.Topics)
		}
		s.Do(t, apitest.Request{Method: "PUT", Path: fmt.Sprintf("/projects/%d", p.ID), Token: u.Token,
			JSON: map[string]any{"topics": []string{"Go", " go ", "GO", "", "web"}}}).Want(t, http.StatusOK).JSON(t, &p)
		if !slices.Equal(p.Topics, []string{"Go", "web"}) {
			t.Errorf("topics %q; want [Go web]", p.Topics)
		}
		s.Do(t, apitest.Request{Method: "PUT", Path: fmt.Sprintf("/projects/%d", p.ID), Token: u.Token,
			Form: url.Values{"topics": {"a,A,b"}}}).Want(t, http.StatusOK).JSON(t, &p)
		if !slices.Equal(p.Topics, []string{"a", "b"}) {
			t.Errorf("topics %q; want [a b]", p.Topics)
		}
		s.Do(t, apitest.Request{Method: "PUT", Path: fmt.Sprintf("/projects/%d", p.ID), Token: u.Token,
			JSON: map[string]any{"topics": []string{strings.Repeat("x", 256)}}}).Want(t, http.StatusBadRequest).
			WantBody(t, `{"message":{"topics":["is too long (maximum is 255 characters)"]}}`)
		s.Do(t, apitest.Request{Method: "POST", Path: "/projects", Token: u.Token, Raw: []byte(`{"name":"y","topics":[["a"]]}`),
			Header: map[string]string{"Content-Type": "application/json"}}).Want(t, http.StatusBadRequest).
			WantBody(t, `{"error":"topics is invalid"}`)
		deep := `{"name":"y","topics":` + strings.Repeat("[", 200) + strings.Repeat("]", 200) + `}`
		s.Do(t, apitest.Request{Method: "POST", Path: "/projects", Token: u.Token, Raw: []byte(deep),
			Header: map[string]string{"Content-Type": "application/json"}}).Want(t, http.StatusBadRequest).
			WantBody(t, `{"error":"Parameters nested too deeply"}`)

		// Writers making one new topic at once all get it.
		var wg sync.WaitGroup
		statuses := make([]int, 8)
		for i := range statuses {
			wg.Add(1)
			go func() {
				defer wg.Done()
				statuses[i] = s.Do(t, apitest.Request{Method: "POST", Path: "/projects", Token: u.Token,
					JSON: map[string]any{"name": fmt.Sprintf("race%d", i), "topics": []string{"Fresh", "fresh-" + fmt.Sprint(i%2)}}}).Status
			}()
		}
		wg.Wait()
		for i, st := range statuses {
			if st != http.StatusCreated {
				t.Errorf("writer %d: %d; want 201", i, st)
			}
		}
		var topics []struct {
			Name               string `json:"name"`
			TotalProjectsCount int    `json:"total_projects_count"`
		}
		s.Get(t, "/topics?search=fresh&per_page=100", u.Token).Want(t, http.StatusOK).JSON(t, &topics)
		counts := map[string]int{}
		for _, tp := range topics {
			counts[tp.Name] = tp.TotalProjectsCount
		}
		if counts["Fresh"] != 8 || counts["fresh-0"] != 4 || counts["fresh-1"] != 4 || len(counts) != 3 {
			t.Errorf("topics %v; want Fresh on 8 projects, fresh-0 and fresh-1 on 4 each", counts)
		}
	})
}

// The request line is bounded: a 20 KB search is a 414, and a long one
// within the bound keeps the Link header under what clients accept.
func TestHardening_requestLineBounded(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		u := s.NewUser(t, "uri")
		res := s.Get(t, "/projects?search="+strings.Repeat("a", 20<<10), u.Token)
		res.Want(t, http.StatusRequestURITooLong).WantBody(t, `{"message":"414 Request-URI Too Large"}`)
		if len(res.Header.Get("Link")) != 0 {
			t.Errorf("a refused request has a Link header")
		}
		res = s.Get(t, "/projects?per_page=1&search="+strings.Repeat("a", 7<<10), u.Token).Want(t, http.StatusOK)
		size := 0
		for k, vs := range res.Header {
			for _, v := range vs {
				size += len(k) + len(v)
			}
		}
		if size > 40<<10 {
			t.Errorf("response headers of %d bytes", size)
		}
	})
}

// pace makes bodies be cut off fast: nothing for 2 s, or under 1 KiB/s
// after 1 s.
func pace(c *config) {
	c.BodyStallTimeout, c.BodyGrace, c.BodyMinRate = 2*time.Second, time.Second, 1024
}

// trickle sends a request's head and then its body a few bytes at a time
// every interval, until the answer comes or the connection ends; it
// returns the status line, how long the answer took, and whether the
// server closed the connection after answering.
func trickle(t *testing.T, s *apitest.Server, head string, chunk string, every time.Duration) (status string, took time.Duration, closed bool) {
	t.Helper()
	conn, err := net.DialTimeout("tcp", strings.TrimPrefix(s.URL, "http://"), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(30 * time.Second))
	start := time.Now()
	if _, err := io.WriteString(conn, head); err != nil {
		t.Fatal(err)
	}
	answered := make(chan struct{})
	go func() {
		defer close(answered)
		br := bufio.NewReader(conn)
		res, err := http.ReadResponse(br, nil)
		if err != nil {
			status = "no answer: " + err.Error()
			return
		}
		_, _ = io.Copy(io.Discard, res.Body)
		res.Body.Close()
		status, took = res.Status, time.Since(start)
		// The server closes a connection whose body it cut off: an end
		// of stream, or a reset when the client's last chunks were still
		// unread on the server's side when it closed.
		_, err = br.ReadByte()
		closed = err == io.EOF || errors.Is(err, syscall.ECONNRESET)
	}()
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		select {
		case <-answered:
			return status, took, closed
		case <-tick.C:
			if _, err := io.WriteString(conn, chunk); err != nil {
				<-answered
				return status, took, closed
			}
		}
	}
}

// A body trickled at 2 bytes every 200 ms, or one that stalls, is cut off
// with a 408 and its connection closed (it held a goroutine and a
// descriptor forever); many at once are all cut.
func TestHardening_slowBodiesCutOff(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		u := s.NewUser(t, "slow")
		head := "POST /api/v4/projects HTTP/1.1\r\nHost: q\r\nPrivate-Token: " + u.Token +
			"\r\nContent-Type: application/json\r\nContent-Length: 10000\r\n\r\n"
		var wg sync.WaitGroup
		for i := range 20 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				every, chunk := 200*time.Millisecond, `  `
				if i%2 == 1 {
					every = time.Hour // a stall: nothing after the head
				}
				status, took, closed := trickle(t, s, head, chunk, every)
				if status != "408 Request Timeout" || !closed {
					t.Errorf("trickle %d: %q, closed %v; want 408 and the connection closed", i, status, closed)
				}
				if took > 5*time.Second {
					t.Errorf("trickle %d: cut after %s", i, took)
				}
			}()
		}
		wg.Wait()
	}, pace)
}

// Honest clients are not cut: an upload at 40 KiB/s for several seconds
// lands, and a runner's long poll waits its whole time after its body.
func TestHardening_honestSlowClientsServed(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		owner := s.NewUser(t, "honest")
		p := newCIProject(t, s, owner, "honest", map[string]string{".gitlab-ci.yml": "job1:\n  script: [\"true\"]\n"})
		r := projectRunner(t, p, nil)
		p.settle(t, 1)
		job := r.take(t) // the queue is empty now
		r.update(t, job, map[string]any{"state": "success"}).Want(t, http.StatusOK)
		last := r.request(t, "").Want(t, http.StatusNoContent).Header.Get("X-GitLab-Last-Update")
		start := time.Now()
		r.request(t, last).Want(t, http.StatusNoContent)
		if waited := time.Since(start); waited < 3500*time.Millisecond {
			t.Errorf("a long poll of 4 s answered after %s: cut by the body's deadline", waited)
		}
		content := strings.Repeat("honest line\n", 16<<10) // 192 KiB
		body, _ := json.Marshal(map[string]any{"branch": "main", "content": content, "commit_message": "slowly"})
		pr, pw := io.Pipe()
		go func() {
			for rest := body; len(rest) > 0; {
				n := min(len(rest), 8<<10)
				if _, err := pw.Write(rest[:n]); err != nil {
					return
				}
				rest = rest[n:]
				time.Sleep(200 * time.Millisecond) // 40 KiB/s: about 5 s in all
			}
			pw.Close()
		}()
		req, err := http.NewRequest("POST", fmt.Sprintf("%s/api/v4/projects/%d/repository/files/slow.txt", s.URL, p.ID), pr)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Private-Token", owner.Token)
		req.Header.Set("Content-Type", "application/json")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusCreated {
			t.Errorf("slow honest upload: %d; want 201", res.StatusCode)
		}

	}, pace, func(c *config) { c.RunnerLongPoll = 4 * time.Second })
}

// Past --max-connections a connection is answered 503 and closed; a
// freed slot serves again.
func TestHardening_connectionCap(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		addr := strings.TrimPrefix(s.URL, "http://")
		var held []net.Conn
		for range 3 {
			c, err := net.DialTimeout("tcp", addr, 5*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			held = append(held, c)
		}
		defer func() {
			for _, c := range held {
				c.Close()
			}
		}()
		extra := func() (int, string) {
			c, err := net.DialTimeout("tcp", addr, 5*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			_ = c.SetDeadline(time.Now().Add(10 * time.Second))
			if _, err := io.WriteString(c, "GET /api/v4/version HTTP/1.1\r\nHost: q\r\nPrivate-Token: "+s.RootToken+"\r\n\r\n"); err != nil {
				t.Fatal(err)
			}
			res, err := http.ReadResponse(bufio.NewReader(c), nil)
			if err != nil {
				t.Fatal(err)
			}
			defer res.Body.Close()
			b, _ := io.ReadAll(res.Body)
			return res.StatusCode, string(b)
		}
		// The three held connections take every slot (the accept of the
		// last may trail its dial).
		eventually(t, "a 503 past the cap", func() bool {
			status, body := extra()
			return status == http.StatusServiceUnavailable && strings.Contains(body, `"503 Service Unavailable"`)
		})
		held[0].Close()
		held = held[1:]
		eventually(t, "a freed slot serving", func() bool {
			status, _ := extra()
			return status == http.StatusOK
		})
	}, func(c *config) { c.MaxConnections = 3 })
}

// A runner's final state for a log the server holds otherwise (a patch it
// cut short and sent again, applied after the resend, truncated it) is a
// 412: the runner sends the whole log again, then the state. The log is
// never left short.
func TestHardening_finalStateChecksTheLog(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		owner := s.NewUser(t, "logcheck")
		p := newCIProject(t, s, owner, "logcheck", map[string]string{".gitlab-ci.yml": "job1:\n  script: [\"true\"]\n"})
		p.settle(t, 1)
		r := projectRunner(t, p, nil)
		job := r.take(t)
		r.trace(t, job, 0, "first line\nsecond line\n").Want(t, http.StatusAccepted)
		// A late, stale patch rewrites from offset 0 with less.
		r.trace(t, job, 0, "first line\n").Want(t, http.StatusAccepted)
		final := map[string]any{"state": "success", "output": map[string]any{"bytesize": 23}}
		r.update(t, job, final).Want(t, http.StatusPreconditionFailed)
		var j struct{ Status string }
		s.Get(t, fmt.Sprintf("/projects/%d/jobs/%d", p.ID, job.ID), owner.Token).Want(t, http.StatusOK).JSON(t, &j)
		if j.Status != "running" {
			t.Errorf("job %s after a refused final state; want running", j.Status)
		}
		r.trace(t, job, 0, "first line\nsecond line\n").Want(t, http.StatusAccepted)
		r.update(t, job, map[string]any{"state": "success", "output": map[string]any{"bytesize": 23}}).Want(t, http.StatusOK)
		s.Get(t, fmt.Sprintf("/projects/%d/jobs/%d/trace", p.ID, job.ID), owner.Token).Want(t, http.StatusOK).WantText(t, "first line\nsecond line\n")
	}, shortPoll)
}

// Over-long secrets of every kind are refused as unknown ones, before any
// lookup: a personal token, a job token, a runner token, a trigger token
// and a registration token of 60,000 characters.
func TestHardening_overLongSecrets(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		u := s.NewUser(t, "longsecrets")
		var p struct{ ID int64 }
		s.Do(t, apitest.Request{Method: "POST", Path: "/projects", Token: u.Token, JSON: map[string]any{"name": "long"}}).Want(t, http.StatusCreated).JSON(t, &p)
		long := strings.Repeat("x", 60_000)
		s.Do(t, apitest.Request{Path: "/user", Token: "glpat-" + long}).Want(t, http.StatusUnauthorized)
		s.Do(t, apitest.Request{Path: "/job", Header: map[string]string{"JOB-TOKEN": "glcbt-" + long}}).Want(t, http.StatusUnauthorized)
		s.Do(t, apitest.Request{Method: "POST", Path: "/runners/verify", JSON: map[string]any{"token": "glrt-" + long[:50_000]}}).Want(t, http.StatusForbidden)
		s.Do(t, apitest.Request{Method: "POST", Path: "/runners", JSON: map[string]any{"token": long[:50_000]}}).Want(t, http.StatusForbidden)
		s.Do(t, apitest.Request{Method: "POST", Path: fmt.Sprintf("/projects/%d/trigger/pipeline", p.ID),
			Form: url.Values{"token": {long[:50_000]}, "ref": {"main"}}}).Want(t, http.StatusNotFound)
		// Git takes the token as the password: refused as a wrong one.
		if status, _ := gitInfoRefs(t, s, "longsecrets/long", "u", "glpat-"+long[:40_000]); status != http.StatusUnauthorized {
			t.Errorf("git with an over-long token: %d; want 401", status)
		}
	})
}
