package runner

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeServer implements just enough of the server side of the runner
// protocol (ci.md §1) for the runner's tests, with GitLab's semantics
// where the runner depends on them: the trace offset rules (416 with
// Range), Job-Status on every job answer, 403 for a job no longer
// running. A dumb-HTTP git server under /git/ serves one repository and
// wants the job token as Basic auth, as GitLab's git endpoint does.
type fakeServer struct {
	t   *testing.T
	srv *httptest.Server

	mu        sync.Mutex
	changed   chan struct{} // closed and replaced on every change
	queue     []map[string]any
	requests  int // POST /jobs/request answered
	tokens    map[int64]string
	status    map[int64]string // running, canceling, canceled, success, failed
	logs      map[int64][]byte
	patches   map[int64]int
	ranges    int // 416 answers
	updates   map[int64][]jobUpdate
	uploads   map[int64][]upload
	archives  map[int64][]byte // what GET /jobs/:id/artifacts serves
	gitAuth   []string         // Authorization headers the git server saw
	registers []map[string]any
	verifies  []map[string]any
	deletes   []map[string]any

	// Fault injection, each consumed once per use.
	requestErrors int           // answer POST /jobs/request with 500 this many times
	patchCodes    []int         // answer the next patches with these codes
	updateCodes   []int         // answer the next final PUTs with these codes
	uploadCodes   []int         // answer the next uploads with these codes
	forgetLog     map[int64]int // on the next patch, pretend to hold only this much log
}

type upload struct {
	Query    map[string]string
	Filename string
	Body     []byte
}

const runnerToken = "glrt-test-runner-token"

func newFakeServer(t *testing.T, gitRepo string) *fakeServer {
	s := &fakeServer{t: t, changed: make(chan struct{}), tokens: map[int64]string{}, status: map[int64]string{},
		logs: map[int64][]byte{}, patches: map[int64]int{}, updates: map[int64][]jobUpdate{},
		uploads: map[int64][]upload{}, archives: map[int64][]byte{}, forgetLog: map[int64]int{}}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /api/v4/runners", s.register)
	mux.HandleFunc("POST /api/v4/runners/verify", s.verify)
	mux.HandleFunc("DELETE /api/v4/runners", s.unregister)
	mux.HandleFunc("POST /api/v4/jobs/request", s.request)
	mux.HandleFunc("PUT /api/v4/jobs/{id}", s.update)
	mux.HandleFunc("PATCH /api/v4/jobs/{id}/trace", s.trace)
	mux.HandleFunc("POST /api/v4/jobs/{id}/artifacts", s.upload)
	mux.HandleFunc("GET /api/v4/jobs/{id}/artifacts", s.download)
	if gitRepo != "" {
		files := http.StripPrefix("/git/demo.git/", http.FileServer(http.Dir(gitRepo)))
		mux.HandleFunc("GET /git/demo.git/", func(w http.ResponseWriter, r *http.Request) {
			s.mu.Lock()
			s.gitAuth = append(s.gitAuth, r.Header.Get("Authorization"))
			s.mu.Unlock()
			user, pass, ok := r.BasicAuth()
			if !ok || user != "gitlab-ci-token" || !s.runningToken(pass) {
				w.Header().Set("WWW-Authenticate", `Basic realm="git"`)
				http.Error(w, "unauthorized", http.StatusUnauthorized)
				return
			}
			files.ServeHTTP(w, r)
		})
	}
	s.srv = httptest.NewServer(mux)
	t.Cleanup(s.srv.Close)
	return s
}

// notify wakes the waiters; the caller holds mu.
func (s *fakeServer) notify() {
	close(s.changed)
	s.changed = make(chan struct{})
}

// waitFor waits until cond (called with mu held) is true, failing the
// test after 20 s.
func (s *fakeServer) waitFor(what string, cond func() bool) {
	s.t.Helper()
	deadline := time.NewTimer(20 * time.Second)
	defer deadline.Stop()
	for {
		s.mu.Lock()
		ok, ch := cond(), s.changed
		s.mu.Unlock()
		if ok {
			return
		}
		select {
		case <-ch:
		case <-deadline.C:
			s.t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// waitLog waits until the server holds a log of job id containing sub.
func (s *fakeServer) waitLog(id int64, sub string) {
	s.t.Helper()
	s.waitFor(fmt.Sprintf("%q in the log of job %d", sub, id), func() bool { return bytes.Contains(s.logs[id], []byte(sub)) })
}

// waitFinal waits for the final state of job id and returns it.
func (s *fakeServer) waitFinal(id int64) jobUpdate {
	s.t.Helper()
	var final jobUpdate
	s.waitFor(fmt.Sprintf("the final state of job %d", id), func() bool {
		for _, u := range s.updates[id] {
			if u.State != "running" {
				final = u
				return s.status[id] != "running" && s.status[id] != "canceling"
			}
		}
		return false
	})
	return final
}

func (s *fakeServer) log(id int64) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return string(s.logs[id])
}

// queueJob makes a job available to the next POST /jobs/request.
func (s *fakeServer) queueJob(payload map[string]any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	id := int64(payload["id"].(int))
	s.tokens[id] = payload["token"].(string)
	s.queue = append(s.queue, payload)
	s.notify()
}

func (s *fakeServer) setStatus(id int64, status string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.status[id] = status
	s.notify()
}

func (s *fakeServer) runningToken(token string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for id, tok := range s.tokens {
		if tok == token && (s.status[id] == "running" || s.status[id] == "canceling") {
			return true
		}
	}
	return false
}

func decodeBody(t *testing.T, r *http.Request) map[string]any {
	var m map[string]any
	if err := json.NewDecoder(r.Body).Decode(&m); err != nil {
		t.Errorf("%s %s: body: %v", r.Method, r.URL.Path, err)
	}
	if ct := r.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("%s %s: Content-Type %q", r.Method, r.URL.Path, ct)
	}
	return m
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(v)
}

func (s *fakeServer) register(w http.ResponseWriter, r *http.Request) {
	m := decodeBody(s.t, r)
	s.mu.Lock()
	s.registers = append(s.registers, m)
	s.mu.Unlock()
	if m["token"] != "reg-token" {
		writeJSON(w, 403, map[string]string{"message": "403 Forbidden"})
		return
	}
	writeJSON(w, 201, map[string]any{"id": 12, "token": "glrt-issued", "token_expires_at": nil})
}

func (s *fakeServer) verify(w http.ResponseWriter, r *http.Request) {
	m := decodeBody(s.t, r)
	s.mu.Lock()
	s.verifies = append(s.verifies, m)
	s.mu.Unlock()
	if m["token"] != runnerToken {
		writeJSON(w, 403, map[string]string{"message": "403 Forbidden"})
		return
	}
	writeJSON(w, 200, map[string]any{"id": 34, "token": runnerToken, "token_expires_at": "2030-01-02T03:04:05.000Z"})
}

func (s *fakeServer) unregister(w http.ResponseWriter, r *http.Request) {
	m := decodeBody(s.t, r)
	s.mu.Lock()
	s.deletes = append(s.deletes, m)
	s.mu.Unlock()
	if m["token"] != runnerToken {
		writeJSON(w, 403, map[string]string{"message": "403 Forbidden"})
		return
	}
	w.WriteHeader(204)
}

// request hands out the next queued job, or parks the runner for up to
// 300 ms and answers 204.
func (s *fakeServer) request(w http.ResponseWriter, r *http.Request) {
	m := decodeBody(s.t, r)
	if m["token"] != runnerToken {
		writeJSON(w, 403, map[string]string{"message": "403 Forbidden"})
		return
	}
	info, _ := m["info"].(map[string]any)
	if f, _ := info["features"].(map[string]any); f["upload_multiple_artifacts"] != true || info["executor"] != "shell" {
		s.t.Errorf("jobs/request info %v", info)
	}
	park := time.NewTimer(300 * time.Millisecond)
	defer park.Stop()
	for {
		s.mu.Lock()
		if s.requestErrors > 0 {
			s.requestErrors--
			s.requests++
			s.notify()
			s.mu.Unlock()
			http.Error(w, "boom", http.StatusInternalServerError)
			return
		}
		if len(s.queue) > 0 {
			job := s.queue[0]
			s.queue = s.queue[1:]
			id := int64(job["id"].(int))
			s.status[id] = "running"
			s.requests++
			s.notify()
			s.mu.Unlock()
			writeJSON(w, 201, job)
			return
		}
		ch := s.changed
		s.mu.Unlock()
		select {
		case <-ch:
			continue
		case <-park.C:
		case <-r.Context().Done():
		}
		s.mu.Lock()
		s.requests++
		s.notify()
		s.mu.Unlock()
		w.Header().Set("X-GitLab-Last-Update", "q1")
		w.WriteHeader(204)
		return
	}
}

// jobAuth checks JOB-TOKEN as authenticate_job! does; false: answered.
func (s *fakeServer) jobAuth(w http.ResponseWriter, r *http.Request, token string) (int64, bool) {
	id, _ := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if token == "" {
		token = r.Header.Get("JOB-TOKEN")
	}
	s.mu.Lock()
	want, st := s.tokens[id], s.status[id]
	s.mu.Unlock()
	if want == "" || token != want {
		http.Error(w, "403 Forbidden", http.StatusForbidden)
		return 0, false
	}
	if st != "running" && st != "canceling" {
		w.Header().Set("Job-Status", st)
		http.Error(w, "403 Forbidden - Job is not running", http.StatusForbidden)
		return 0, false
	}
	return id, true
}

func (s *fakeServer) update(w http.ResponseWriter, r *http.Request) {
	var u jobUpdate
	if err := json.NewDecoder(r.Body).Decode(&u); err != nil {
		s.t.Errorf("PUT job: %v", err)
	}
	id, ok := s.jobAuth(w, r, u.Token)
	if !ok {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	defer s.notify()
	s.updates[id] = append(s.updates[id], u)
	w.Header().Set("Job-Status", s.status[id])
	if u.State == "running" {
		w.WriteHeader(200)
		return
	}
	if u.Output.Bytesize != len(s.logs[id]) && len(s.updateCodes) == 0 {
		// As Quarry's server: the final state of a log the server holds
		// otherwise (a cut-short patch applied after its resend) is 412,
		// and the runner sends the whole log again.
		w.WriteHeader(412)
		return
	}
	if len(s.updateCodes) > 0 {
		code := s.updateCodes[0]
		s.updateCodes = s.updateCodes[1:]
		if code == 412 {
			s.logs[id] = append(s.logs[id][:0:0], "garbage"...) // the log went wrong
		}
		w.Header().Set("X-GitLab-Trace-Update-Interval", "0")
		w.WriteHeader(code)
		return
	}
	switch {
	case s.status[id] == "canceling":
		s.status[id] = "canceled"
	case u.State == "success" || u.State == "failed":
		s.status[id] = u.State
	default:
		w.WriteHeader(400)
		return
	}
	w.WriteHeader(200)
}

// trace appends as AppendBuildTraceService does.
func (s *fakeServer) trace(w http.ResponseWriter, r *http.Request) {
	id, ok := s.jobAuth(w, r, "")
	if !ok {
		return
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		// The runner cut this patch short (finish stops the sender mid-call)
		// and sends the rest again from the server's offset.
		return
	}
	if ct := r.Header.Get("Content-Type"); ct != "text/plain" {
		s.t.Errorf("PATCH trace: Content-Type %q", ct)
	}
	cr := r.Header.Get("Content-Range")
	startS, endS, found := strings.Cut(cr, "-")
	start, err1 := strconv.Atoi(startS)
	end, err2 := strconv.Atoi(endS)
	if !found || err1 != nil || err2 != nil || end != start+len(body)-1 || len(body) == 0 || len(body) > maxPatchSize {
		s.t.Errorf("PATCH trace: Content-Range %q for %d bytes", cr, len(body))
		http.Error(w, "400 Missing header Content-Range", http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	defer s.notify()
	s.patches[id]++
	if n, ok := s.forgetLog[id]; ok {
		delete(s.forgetLog, id)
		s.logs[id] = s.logs[id][:n]
	}
	w.Header().Set("Job-Status", s.status[id])
	w.Header().Set("X-GitLab-Trace-Update-Interval", "60")
	if len(s.patchCodes) > 0 {
		code := s.patchCodes[0]
		s.patchCodes = s.patchCodes[1:]
		w.WriteHeader(code)
		return
	}
	log := s.logs[id]
	if start <= len(log) {
		log = append(log[:start], body...)
		s.logs[id] = log
	}
	w.Header().Set("Range", "0-"+strconv.Itoa(len(log)))
	if len(log) != start+len(body) {
		s.ranges++
		w.WriteHeader(416)
		return
	}
	w.WriteHeader(202)
}

func (s *fakeServer) upload(w http.ResponseWriter, r *http.Request) {
	id, ok := s.jobAuth(w, r, "")
	if !ok {
		return
	}
	s.mu.Lock()
	code := 201
	if len(s.uploadCodes) > 0 {
		code = s.uploadCodes[0]
		s.uploadCodes = s.uploadCodes[1:]
	}
	s.mu.Unlock()
	if code != 201 {
		w.WriteHeader(code)
		return
	}
	mr, err := r.MultipartReader()
	if err != nil {
		s.t.Errorf("upload: %v", err)
		w.WriteHeader(400)
		return
	}
	var up upload
	for {
		p, err := mr.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			s.t.Errorf("upload: %v", err)
			w.WriteHeader(400)
			return
		}
		if p.FormName() == "file" {
			up.Filename = p.FileName()
			up.Body, _ = io.ReadAll(p)
		}
	}
	up.Query = map[string]string{}
	for k := range r.URL.Query() {
		up.Query[k] = r.URL.Query().Get(k)
	}
	s.mu.Lock()
	s.uploads[id] = append(s.uploads[id], up)
	s.notify()
	s.mu.Unlock()
	w.WriteHeader(201)
}

func (s *fakeServer) download(w http.ResponseWriter, r *http.Request) {
	id, _ := strconv.ParseInt(r.PathValue("id"), 10, 64)
	s.mu.Lock()
	archive, ok := s.archives[id]
	token := s.tokens[id]
	s.mu.Unlock()
	if r.Header.Get("JOB-TOKEN") != token {
		http.Error(w, "403 Forbidden", http.StatusForbidden)
		return
	}
	if !ok {
		http.Error(w, "404 Not Found", http.StatusNotFound)
		return
	}
	w.Header().Set("Content-Type", "application/zip")
	w.Write(archive)
}

// basicAuth is the Authorization header of a job token on git.
func basicAuth(token string) string {
	return "Basic " + base64.StdEncoding.EncodeToString([]byte("gitlab-ci-token:"+token))
}

// testLogger records the runner's own log, to check no secret reaches it.
type testLogger struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *testLogger) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *testLogger) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

func (l *testLogger) logger() *slog.Logger {
	return slog.New(slog.NewTextHandler(l, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// newTestLog is a logger writing through t.Log.
func newTestLog(t *testing.T) *slog.Logger {
	return slog.New(slog.NewTextHandler(tWriter{t}, nil))
}

type tWriter struct{ t *testing.T }

func (w tWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}
