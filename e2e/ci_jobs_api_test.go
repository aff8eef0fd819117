package e2e

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	gitlab "gitlab.com/gitlab-org/api/client-go"

	"quarry/internal/apitest"
	"quarry/internal/ci"
	"quarry/internal/model"
)

// capiNoPush lets a configuration run for every source but push: the
// commits a test makes start no pipeline, so the test sees only the
// pipelines it creates.
const capiNoPush = `workflow:
  rules:
    - if: $CI_PIPELINE_SOURCE == "push"
      when: never
    - when: always
`

// capiClockedEach is apitest.Each with a clock of its own for each server
// (the databases' servers run in parallel), moved by hand: times and
// durations are exact without waiting.
func capiClockedEach(t *testing.T, start time.Time, body func(t *testing.T, s *apitest.Server, clk *testClock)) {
	t.Helper()
	var mu sync.Mutex
	clocks := map[string]*testClock{}
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		mu.Lock()
		clk := clocks[s.DataDir]
		mu.Unlock()
		if clk == nil {
			t.Fatal("no clock for the server")
		}
		body(t, s, clk)
	}, func(c *config) {
		clk := &testClock{now: start}
		mu.Lock()
		clocks[c.DataDir] = clk
		mu.Unlock()
		c.Clock = clk.Now
	})
}

// capiTime is a time as the API writes it.
func capiTime(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }

// capiAddMember makes user a member of a project at level.
func capiAddMember(t *testing.T, s *apitest.Server, token string, projectID, userID int64, level int) {
	t.Helper()
	s.Do(t, apitest.Request{Method: "POST", Path: fmt.Sprintf("/projects/%d/members", projectID), Token: token,
		JSON: map[string]any{"user_id": userID, "access_level": level}}).Want(t, http.StatusCreated)
}

// capiKind names a decoded JSON value's type.
func capiKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case float64:
		return "number"
	case string:
		return "string"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return fmt.Sprintf("%T", v)
}

// capiWantTypes checks that obj has every key of want with a value of one of
// the kinds named ("string|null").
func capiWantTypes(t *testing.T, what string, obj map[string]any, want map[string]string) {
	t.Helper()
	for k, kinds := range want {
		v, ok := obj[k]
		if !ok {
			t.Errorf("%s: no %q; want %s", what, k, kinds)
			continue
		}
		if got := capiKind(v); !slices.Contains(strings.Split(kinds, "|"), got) {
			t.Errorf("%s: %q is %s (%v); want %s", what, k, got, v, kinds)
		}
	}
}

// capiWantFields checks exact values of some keys (numbers as float64).
func capiWantFields(t *testing.T, what string, obj map[string]any, want map[string]any) {
	t.Helper()
	for k, w := range want {
		if got, ok := obj[k]; !ok || fmt.Sprint(got) != fmt.Sprint(w) || capiKind(got) != capiKind(w) {
			t.Errorf("%s: %q = %v (%s); want %v (%s)", what, k, got, capiKind(got), w, capiKind(w))
		}
	}
}

// capiJobIDs are the ids of a decoded job list, in order.
func capiJobIDs(list []jobJSON) []int64 {
	out := make([]int64, len(list))
	for i, j := range list {
		out[i] = j.ID
	}
	return out
}

// capiDesc sorts ids newest first, as job lists answer.
func capiDesc(ids []int64) []int64 {
	out := slices.Clone(ids)
	sort.Slice(out, func(a, b int) bool { return out[a] > out[b] })
	return out
}

// capiJob reads a job as a JSON object.
func capiJob(t *testing.T, p ciProject, token string, id int64) map[string]any {
	t.Helper()
	return p.s.Get(t, fmt.Sprintf("/projects/%d/jobs/%d", p.ID, id), token).Want(t, http.StatusOK).Object(t)
}

// capiJobAction posts a job action and returns the response.
func capiJobAction(t *testing.T, p ciProject, token string, id int64, action string, body any) *apitest.Response {
	t.Helper()
	return p.s.Do(t, apitest.Request{Method: "POST", Path: fmt.Sprintf("/projects/%d/jobs/%d/%s", p.ID, id, action), Token: token, JSON: body})
}

// capiStoreArchive gives a job an archive artifact holding content.
func capiStoreArchive(t *testing.T, s *apitest.Server, jobID int64, content string) model.Artifact {
	t.Helper()
	a, err := engine(s).StoreArtifact(ctx(t), jobID, ci.ArtifactInput{FileType: "archive", Format: "zip", FileName: "artifacts.zip",
		Limit: 1 << 20}, strings.NewReader(content))
	if err != nil {
		t.Fatalf("store artifact of job %d: %v", jobID, err)
	}
	return a
}

// capiAppendLog writes text at the end of a job's log.
func capiAppendLog(t *testing.T, s *apitest.Server, jobID, offset int64, text string) {
	t.Helper()
	if _, err := engine(s).AppendLog(ctx(t), jobID, offset, strings.NewReader(text)); err != nil {
		t.Fatalf("append to the log of job %d: %v", jobID, err)
	}
}

const capiScopeConfig = capiNoPush + `
stages: [build, test]
build: {stage: build, script: [make]}
lint: {stage: build, script: [lint]}
extra: {stage: build, script: [x]}
manual: {stage: build, script: [x], when: manual}
test: {stage: test, script: [t]}
`

// TestCIJobs_listScopes: GET /projects/:id/jobs filters by one status or
// an array of them, answers every job newest first without one, and
// refuses an unknown status.
func TestCIJobs_listScopes(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		owner := s.NewUser(t, "owner")
		p := newCIProject(t, s, owner, "scopes", map[string]string{".gitlab-ci.yml": capiScopeConfig})

		// Pipeline a ends its first stage: success, failed, canceled, and
		// test skipped after them; pipeline b is under way.
		a := p.createPipeline(t, "main")
		run(t, s, p.job(t, a.ID, "build").ID, succeed)
		run(t, s, p.job(t, a.ID, "lint").ID, fail)
		capiJobAction(t, p, owner.Token, p.job(t, a.ID, "extra").ID, "cancel", nil).Want(t, http.StatusCreated)
		b := p.createPipeline(t, "main")
		if _, err := engine(s).Start(ctx(t), p.job(t, b.ID, "build").ID); err != nil {
			t.Fatal(err)
		}
		label := map[int64]string{}
		byLabel := map[string]int64{}
		for name, pl := range map[string]int64{"a": a.ID, "b": b.ID} {
			for _, j := range p.ownJobs(t, pl) {
				label[j.ID] = name + "." + j.Name
				byLabel[name+"."+j.Name] = j.ID
			}
		}
		if len(label) != 10 {
			t.Fatalf("%d jobs; want 10", len(label))
		}
		list := func(query string) []jobJSON {
			var out []jobJSON
			s.Get(t, fmt.Sprintf("/projects/%d/jobs?per_page=100&%s", p.ID, query), owner.Token).Want(t, http.StatusOK).JSON(t, &out)
			return out
		}
		names := func(list []jobJSON) string {
			var out []string
			for _, j := range list {
				out = append(out, label[j.ID]+"="+j.Status)
			}
			return strings.Join(out, " ")
		}
		want := func(labels ...string) []int64 {
			var ids []int64
			for _, l := range labels {
				ids = append(ids, byLabel[l])
			}
			return capiDesc(ids)
		}
		for query, labels := range map[string][]string{
			"scope=created":                     {"b.test"},
			"scope=pending":                     {"b.lint", "b.extra"},
			"scope=running":                     {"b.build"},
			"scope=failed":                      {"a.lint"},
			"scope=success":                     {"a.build"},
			"scope=canceled":                    {"a.extra"},
			"scope=skipped":                     {"a.test"},
			"scope=manual":                      {"a.manual", "b.manual"},
			"scope[]=pending&scope[]=running":   {"b.lint", "b.extra", "b.build"},
			"scope[]=failed&scope[]=skipped":    {"a.lint", "a.test"},
			"scope[]=success":                   {"a.build"},
			"scope[]=manual&scope[]=created":    {"a.manual", "b.manual", "b.test"},
			"scope[]=canceled&scope[]=canceled": {"a.extra"},
		} {
			got := list(query)
			if !slices.Equal(capiJobIDs(got), want(labels...)) {
				t.Errorf("%s: %s; want %v newest first", query, names(got), labels)
			}
		}
		all := list("")
		var every []int64
		for id := range label {
			every = append(every, id)
		}
		if !slices.Equal(capiJobIDs(all), capiDesc(every)) {
			t.Errorf("no scope: %s; want all 10 newest first", names(all))
		}
		for _, query := range []string{"scope=bogus", "scope[]=running&scope[]=bogus", "scope=Running"} {
			s.Get(t, fmt.Sprintf("/projects/%d/jobs?%s", p.ID, query), owner.Token).Want(t, http.StatusBadRequest).
				WantBody(t, `{"error":"scope does not have a valid value"}`)
		}

		// The official client sends scope[].
		jobs, _, err := s.Client(t, owner.Token).Jobs.ListProjectJobs(p.ID, &gitlab.ListJobsOptions{
			Scope: &[]gitlab.BuildStateValue{gitlab.Pending, gitlab.Running}})
		if err != nil {
			t.Fatal(err)
		}
		var ids []int64
		for _, j := range jobs {
			ids = append(ids, j.ID)
		}
		if !slices.Equal(ids, want("b.lint", "b.extra", "b.build")) {
			t.Errorf("client scope pending, running: %v; want %v", ids, want("b.lint", "b.extra", "b.build"))
		}
	})
}

// TestCIJobs_listPages: the project's jobs page by offset with GitLab's
// headers, and by keyset without gaps or repeats; retried jobs are
// listed too.
func TestCIJobs_listPages(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		owner := s.NewUser(t, "owner")
		p := newCIProject(t, s, owner, "pages", map[string]string{".gitlab-ci.yml": capiNoPush + "work: {script: [x], parallel: 7}\n"})
		pl := p.createPipeline(t, "main")
		first := p.job(t, pl.ID, "work 1/7")
		run(t, s, first.ID, fail)
		capiJobAction(t, p, owner.Token, first.ID, "retry", nil).Want(t, http.StatusCreated)
		var every []int64
		for _, j := range p.jobs(t, pl.ID) {
			every = append(every, j.ID)
		}
		if len(every) != 8 || !slices.Contains(every, first.ID) {
			t.Fatalf("pipeline jobs %v; want 8 with the retried one", every)
		}
		every = capiDesc(every)

		path := fmt.Sprintf("/projects/%d/jobs", p.ID)
		var all []jobJSON
		s.Get(t, path+"?per_page=100", owner.Token).Want(t, http.StatusOK).JSON(t, &all)
		if !slices.Equal(capiJobIDs(all), every) {
			t.Fatalf("jobs %v; want %v (the retried one too, newest first)", capiJobIDs(all), every)
		}

		// Offset pages.
		var paged []int64
		for page, want := range []map[string]string{
			{"X-Total": "8", "X-Total-Pages": "3", "X-Page": "1", "X-Per-Page": "3", "X-Next-Page": "2", "X-Prev-Page": ""},
			{"X-Total": "8", "X-Total-Pages": "3", "X-Page": "2", "X-Per-Page": "3", "X-Next-Page": "3", "X-Prev-Page": "1"},
			{"X-Total": "8", "X-Total-Pages": "3", "X-Page": "3", "X-Per-Page": "3", "X-Next-Page": "", "X-Prev-Page": "2"},
		} {
			r := s.Get(t, fmt.Sprintf("%s?per_page=3&page=%d", path, page+1), owner.Token).Want(t, http.StatusOK)
			for h, v := range want {
				if got, ok := r.Header[http.CanonicalHeaderKey(h)]; !ok || r.Header.Get(h) != v {
					t.Errorf("page %d: %s = %q (sent: %v); want %q", page+1, h, got, ok, v)
				}
			}
			links := apitest.Links(t, r.Header)
			if links["first"] == "" || links["last"] == "" || (links["next"] != "") != (page < 2) || (links["prev"] != "") != (page > 0) {
				t.Errorf("page %d: links %v", page+1, links)
			}
			var items []jobJSON
			r.JSON(t, &items)
			paged = append(paged, capiJobIDs(items)...)
		}
		if !slices.Equal(paged, every) {
			t.Errorf("offset pages %v; want %v", paged, every)
		}

		// Keyset pages: only Link rel="next", followed to the end.
		var keyset []int64
		pages := 0
		s.Walk(t, path+"?pagination=keyset&per_page=3", owner.Token, func(r *apitest.Response) {
			pages++
			if r.Header.Get("X-Total") != "" || r.Header.Get("X-Page") != "" {
				t.Errorf("keyset page %d has offset headers: %v", pages, r.Header)
			}
			var items []jobJSON
			r.JSON(t, &items)
			keyset = append(keyset, capiJobIDs(items)...)
		})
		if !slices.Equal(keyset, every) || pages != 3 {
			t.Errorf("keyset pages (%d) %v; want 3 pages of %v", pages, keyset, every)
		}
	})
}

// TestCIJobs_getFields: GET /projects/:id/jobs/:job_id shows every field
// of the spec's Job with its type and value, the times and durations as
// the job moves (queued, running, done), its artifacts once it has some,
// and failure_reason only when it failed.
func TestCIJobs_getFields(t *testing.T) {
	start := time.Date(2031, 3, 4, 10, 0, 0, 0, time.UTC)
	at := func(sec int) time.Time { return start.Add(time.Duration(sec) * time.Second) }
	capiClockedEach(t, start, func(t *testing.T, s *apitest.Server, clk *testClock) {
		owner := s.NewUser(t, "owner")
		p := newCIProject(t, s, owner, "fields", map[string]string{".gitlab-ci.yml": capiNoPush + `
build:
  script: [make]
  tags: [docker, linux]
broken:
  script: [x]
`})
		pl := p.createPipeline(t, "main")
		id := p.job(t, pl.ID, "build").ID
		j := capiJob(t, p, owner.Token, id)
		capiWantTypes(t, "job", j, map[string]string{
			"id": "number", "name": "string", "stage": "string", "status": "string", "ref": "string", "tag": "boolean",
			"coverage": "null", "allow_failure": "boolean", "created_at": "string", "started_at": "null", "finished_at": "null",
			"erased_at": "null", "duration": "null", "queued_duration": "number", "commit": "object", "pipeline": "object",
			"artifacts": "array", "tag_list": "array", "runner": "null", "user": "object", "web_url": "string", "project": "object",
		})
		capiWantFields(t, "pending job", j, map[string]any{
			"id": float64(id), "name": "build", "stage": "test", "status": "pending", "ref": "main", "tag": false, "allow_failure": false,
			"created_at": capiTime(start), "queued_duration": float64(0),
			"web_url": s.URL + "/" + p.Path + "/-/jobs/" + itoa(id),
		})
		for _, k := range []string{"failure_reason", "artifacts_file"} {
			if v, ok := j[k]; ok {
				t.Errorf("pending job has %s %v", k, v)
			}
		}
		if tags, _ := j["tag_list"].([]any); fmt.Sprint(tags) != "[docker linux]" {
			t.Errorf("tag_list %v; want [docker linux]", j["tag_list"])
		}
		if arts, _ := j["artifacts"].([]any); len(arts) != 0 {
			t.Errorf("artifacts %v; want []", j["artifacts"])
		}
		commit, _ := j["commit"].(map[string]any)
		capiWantTypes(t, "commit", commit, map[string]string{"author_email": "string", "author_name": "string", "created_at": "string",
			"id": "string", "message": "string", "short_id": "string", "title": "string"})
		capiWantFields(t, "commit", commit, map[string]any{"id": pl.SHA, "short_id": pl.SHA[:8], "title": "ci files",
			"author_name": "Owner", "author_email": "owner@example.com"})
		pipeline, _ := j["pipeline"].(map[string]any)
		capiWantTypes(t, "job pipeline", pipeline, map[string]string{"id": "number", "project_id": "number", "ref": "string", "sha": "string",
			"status": "string"})
		capiWantFields(t, "job pipeline", pipeline, map[string]any{"id": float64(pl.ID), "project_id": float64(p.ID), "ref": "main",
			"sha": pl.SHA, "status": "pending"})
		user, _ := j["user"].(map[string]any)
		capiWantTypes(t, "job user", user, map[string]string{"id": "number", "name": "string", "username": "string", "state": "string",
			"avatar_url": "string|null", "web_url": "string", "created_at": "string", "bio": "string|null", "location": "string|null",
			"public_email": "string|null", "skype": "string|null", "linkedin": "string|null", "twitter": "string|null",
			"website_url": "string|null", "organization": "string|null"})
		capiWantFields(t, "job user", user, map[string]any{"id": float64(owner.ID), "username": "owner", "name": "Owner", "state": "active",
			"web_url": s.URL + "/owner", "created_at": capiTime(start)})
		project, _ := j["project"].(map[string]any)
		capiWantTypes(t, "job project", project, map[string]string{"ci_job_token_scope_enabled": "boolean"})

		// Waiting in the queue: queued_duration grows.
		clk.Set(at(3))
		capiWantFields(t, "queued job", capiJob(t, p, owner.Token, id), map[string]any{"queued_duration": float64(3), "duration": nil})

		// Running: duration grows from started_at, queued_duration stops.
		clk.Set(at(5))
		if _, err := engine(s).Start(ctx(t), id); err != nil {
			t.Fatal(err)
		}
		clk.Set(at(7))
		capiWantFields(t, "running job", capiJob(t, p, owner.Token, id), map[string]any{"status": "running", "started_at": capiTime(at(5)),
			"finished_at": nil, "duration": float64(2), "queued_duration": float64(5)})

		// Done: both fixed.
		clk.Set(at(12))
		if _, err := engine(s).Finish(ctx(t), id, succeed); err != nil {
			t.Fatal(err)
		}
		clk.Set(at(20))
		j = capiJob(t, p, owner.Token, id)
		capiWantFields(t, "finished job", j, map[string]any{"status": "success", "started_at": capiTime(at(5)), "finished_at": capiTime(at(12)),
			"duration": float64(7), "queued_duration": float64(5)})
		if v, ok := j["failure_reason"]; ok {
			t.Errorf("successful job has failure_reason %v", v)
		}

		// An archive: artifacts lists it, artifacts_file names it.
		art := capiStoreArchive(t, s, id, "PK-not-really-a-zip")
		j = capiJob(t, p, owner.Token, id)
		arts, _ := j["artifacts"].([]any)
		if len(arts) != 1 {
			t.Fatalf("artifacts %v; want the archive", j["artifacts"])
		}
		capiWantFields(t, "artifact", arts[0].(map[string]any), map[string]any{"file_type": "archive", "size": float64(art.Size),
			"filename": "artifacts.zip", "file_format": "zip"})
		file, _ := j["artifacts_file"].(map[string]any)
		capiWantFields(t, "artifacts_file", file, map[string]any{"filename": "artifacts.zip", "size": float64(len("PK-not-really-a-zip"))})

		// A failed job says why.
		broken := p.job(t, pl.ID, "broken").ID
		run(t, s, broken, failWith(3))
		capiWantFields(t, "failed job", capiJob(t, p, owner.Token, broken), map[string]any{"status": "failed", "failure_reason": "script_failure"})

		// Jobs of nowhere.
		s.Get(t, fmt.Sprintf("/projects/%d/jobs/%d", p.ID, s.AbsentID(t)), owner.Token).Want(t, http.StatusNotFound).
			WantBody(t, `{"message":"404 Not found"}`)
		other := newCIProject(t, s, owner, "other", nil)
		s.Get(t, fmt.Sprintf("/projects/%d/jobs/%d", other.ID, id), owner.Token).Want(t, http.StatusNotFound).
			WantBody(t, `{"message":"404 Not found"}`)
		s.Get(t, fmt.Sprintf("/projects/%d/jobs/%d", p.ID, id), "").Want(t, http.StatusUnauthorized).
			WantBody(t, `{"message":"401 Unauthorized"}`)
	})
}

// TestCIJobs_trace: a job's log is 404 until it has one, then served as
// text, to the official client too.
func TestCIJobs_trace(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		owner := s.NewUser(t, "owner")
		p := newCIProject(t, s, owner, "trace", map[string]string{".gitlab-ci.yml": capiNoPush + "build: {script: [make]}\n"})
		pl := p.createPipeline(t, "main")
		id := p.job(t, pl.ID, "build").ID
		path := fmt.Sprintf("/projects/%d/jobs/%d/trace", p.ID, id)
		s.Get(t, path, owner.Token).Want(t, http.StatusNotFound).WantBody(t, `{"message":"404 Not Found"}`)

		capiAppendLog(t, s, id, 0, "$ make\n")
		capiAppendLog(t, s, id, 7, "built \xe2\x9c\x93\n")
		r := s.Get(t, path, owner.Token).Want(t, http.StatusOK)
		if got := string(r.Body); got != "$ make\nbuilt ✓\n" {
			t.Errorf("trace %q; want the log", got)
		}
		if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") {
			t.Errorf("Content-Type %q; want text/plain", ct)
		}
		rd, _, err := s.Client(t, owner.Token).Jobs.GetTraceFile(p.ID, id)
		if err != nil {
			t.Fatal(err)
		}
		if b, _ := io.ReadAll(rd); string(b) != "$ make\nbuilt ✓\n" {
			t.Errorf("client trace %q", b)
		}
		s.Get(t, fmt.Sprintf("/projects/%d/jobs/%d/trace", p.ID, s.AbsentID(t)), owner.Token).Want(t, http.StatusNotFound).
			WantBody(t, `{"message":"404 Not found"}`)
	})
}

// TestCIJobs_cancel: cancel answers 201 with the job: a pending or manual
// job canceled (finished_at null, it never ran), a finished one as it
// was; reporters may not.
func TestCIJobs_cancel(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		owner := s.NewUser(t, "owner")
		dev := s.NewUser(t, "dev")
		reporter := s.NewUser(t, "reporter")
		p := newCIProject(t, s, owner, "cancel", map[string]string{".gitlab-ci.yml": capiNoPush + `
a: {script: [x]}
b: {script: [x]}
c: {script: [x]}
m: {script: [x], when: manual}
`})
		capiAddMember(t, s, owner.Token, p.ID, dev.ID, 30)
		capiAddMember(t, s, owner.Token, p.ID, reporter.ID, 20)
		pl := p.createPipeline(t, "main")

		r := capiJobAction(t, p, owner.Token, p.job(t, pl.ID, "a").ID, "cancel", nil).Want(t, http.StatusCreated).Object(t)
		capiWantFields(t, "canceled pending job", r, map[string]any{"status": "canceled", "finished_at": nil, "started_at": nil})

		b := p.job(t, pl.ID, "b")
		run(t, s, b.ID, succeed)
		before := capiJob(t, p, owner.Token, b.ID)
		r = capiJobAction(t, p, owner.Token, b.ID, "cancel", nil).Want(t, http.StatusCreated).Object(t)
		capiWantFields(t, "canceled finished job", r, map[string]any{"id": float64(b.ID), "status": "success",
			"finished_at": before["finished_at"], "started_at": before["started_at"]})

		r = capiJobAction(t, p, owner.Token, p.job(t, pl.ID, "m").ID, "cancel", nil).Want(t, http.StatusCreated).Object(t)
		capiWantFields(t, "canceled manual job", r, map[string]any{"status": "canceled"})

		c := p.job(t, pl.ID, "c").ID
		capiJobAction(t, p, reporter.Token, c, "cancel", nil).Want(t, http.StatusForbidden).WantBody(t, `{"message":"403 Forbidden"}`)
		capiJobAction(t, p, "", c, "cancel", nil).Want(t, http.StatusUnauthorized).WantBody(t, `{"message":"401 Unauthorized"}`)
		// A developer may not change jobs of the protected default branch
		// (GitLab's protected_ref rule), but may on another branch.
		capiJobAction(t, p, dev.Token, c, "cancel", nil).Want(t, http.StatusForbidden).WantBody(t, `{"message":"403 Forbidden"}`)
		job, _, err := s.Client(t, owner.Token).Jobs.CancelJob(p.ID, c)
		if err != nil || job.Status != "canceled" || job.ID != c {
			t.Errorf("client cancel: %+v, %v", job, err)
		}
		capiJobAction(t, p, owner.Token, s.AbsentID(t), "cancel", nil).Want(t, http.StatusNotFound).WantBody(t, `{"message":"404 Not found"}`)
		if got := p.statuses(t, pl.ID); got != "a=canceled b=success c=canceled m=canceled | canceled" {
			t.Errorf("after the cancels: %s", got)
		}
		p.commit(t, "feature", map[string]string{"notes.txt": "feature work"})
		fpl := p.createPipeline(t, "feature")
		capiJobAction(t, p, dev.Token, p.job(t, fpl.ID, "a").ID, "cancel", nil).Want(t, http.StatusCreated)
	})
}

// TestCIJobs_retry: retry answers 201 with a new pending job; a job that
// is running, pending or already retried is not retryable (403).
func TestCIJobs_retry(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		owner := s.NewUser(t, "owner")
		p := newCIProject(t, s, owner, "retry", map[string]string{".gitlab-ci.yml": capiNoPush + "a: {script: [x]}\nb: {script: [x]}\n"})
		pl := p.createPipeline(t, "main")
		a := p.job(t, pl.ID, "a").ID
		notRetryable := `{"message":"403 Forbidden - Job is not retryable"}`
		if _, err := engine(s).Start(ctx(t), a); err != nil {
			t.Fatal(err)
		}
		capiJobAction(t, p, owner.Token, a, "retry", nil).Want(t, http.StatusForbidden).WantBody(t, notRetryable)
		capiJobAction(t, p, owner.Token, p.job(t, pl.ID, "b").ID, "retry", nil).Want(t, http.StatusForbidden).WantBody(t, notRetryable)
		if _, err := engine(s).Finish(ctx(t), a, failWith(1)); err != nil {
			t.Fatal(err)
		}

		r := capiJobAction(t, p, owner.Token, a, "retry", nil).Want(t, http.StatusCreated).Object(t)
		capiWantFields(t, "retried job", r, map[string]any{"name": "a", "status": "pending", "started_at": nil, "finished_at": nil,
			"duration": nil})
		if id := r["id"].(float64); int64(id) == a {
			t.Errorf("retry answered the old job %d", a)
		}
		if _, ok := r["failure_reason"]; ok {
			t.Errorf("the new job has a failure_reason: %v", r)
		}
		capiWantFields(t, "old job", capiJob(t, p, owner.Token, a), map[string]any{"status": "failed", "failure_reason": "script_failure"})
		capiJobAction(t, p, owner.Token, a, "retry", nil).Want(t, http.StatusForbidden).WantBody(t, notRetryable)

		var visible []jobJSON
		s.Get(t, fmt.Sprintf("/projects/%d/pipelines/%d/jobs", p.ID, pl.ID), owner.Token).Want(t, http.StatusOK).JSON(t, &visible)
		if len(visible) != 2 || slices.Contains(capiJobIDs(visible), a) {
			t.Errorf("pipeline jobs %v; want b and the new a", capiJobIDs(visible))
		}

		// The official client retries the new job once it failed.
		newA := int64(r["id"].(float64))
		run(t, s, newA, fail)
		job, _, err := s.Client(t, owner.Token).Jobs.RetryJob(p.ID, newA)
		if err != nil || job.ID == newA || job.Status != "pending" || job.Name != "a" {
			t.Errorf("client retry: %+v, %v", job, err)
		}
	})
}

// TestCIJobs_erase: erase answers 201 with erased_at, removes the log and
// artifacts and keeps the status; an unfinished job, a job with nothing
// to erase and an erased job are not erasable (403).
func TestCIJobs_erase(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		owner := s.NewUser(t, "owner")
		p := newCIProject(t, s, owner, "erase", map[string]string{".gitlab-ci.yml": capiNoPush + `
a: {script: [x]}
b: {script: [x]}
c: {script: [x]}
d: {script: [x]}
`})
		pl := p.createPipeline(t, "main")
		notErasable := `{"message":"403 Forbidden - Job is not erasable!"}`
		a := p.job(t, pl.ID, "a").ID
		capiAppendLog(t, s, a, 0, "output\n")
		capiStoreArchive(t, s, a, "zip bytes")
		if _, err := engine(s).Start(ctx(t), a); err != nil {
			t.Fatal(err)
		}
		capiJobAction(t, p, owner.Token, a, "erase", nil).Want(t, http.StatusForbidden).WantBody(t, notErasable)
		if _, err := engine(s).Finish(ctx(t), a, succeed); err != nil {
			t.Fatal(err)
		}
		r := capiJobAction(t, p, owner.Token, a, "erase", nil).Want(t, http.StatusCreated).Object(t)
		capiWantTypes(t, "erased job", r, map[string]string{"erased_at": "string"})
		capiWantFields(t, "erased job", r, map[string]any{"id": float64(a), "status": "success"})
		if arts, _ := r["artifacts"].([]any); len(arts) != 0 || r["artifacts_file"] != nil {
			t.Errorf("erased job's artifacts %v, %v; want none", r["artifacts"], r["artifacts_file"])
		}
		s.Get(t, fmt.Sprintf("/projects/%d/jobs/%d/trace", p.ID, a), owner.Token).Want(t, http.StatusNotFound)
		if got := capiJob(t, p, owner.Token, a); got["erased_at"] != r["erased_at"] {
			t.Errorf("erased_at read back %v; want %v", got["erased_at"], r["erased_at"])
		}
		capiJobAction(t, p, owner.Token, a, "erase", nil).Want(t, http.StatusForbidden).WantBody(t, notErasable)

		// Pending, and done without a log or artifacts.
		capiJobAction(t, p, owner.Token, p.job(t, pl.ID, "b").ID, "erase", nil).Want(t, http.StatusForbidden).WantBody(t, notErasable)
		c := p.job(t, pl.ID, "c").ID
		run(t, s, c, fail)
		capiJobAction(t, p, owner.Token, c, "erase", nil).Want(t, http.StatusForbidden).WantBody(t, notErasable)

		// A failed job with only a log, through the official client.
		d := p.job(t, pl.ID, "d").ID
		capiAppendLog(t, s, d, 0, "boom\n")
		run(t, s, d, fail)
		job, _, err := s.Client(t, owner.Token).Jobs.EraseJob(p.ID, d)
		if err != nil || job.ErasedAt == nil || job.Status != "failed" {
			t.Errorf("client erase: %+v, %v", job, err)
		}
		s.Get(t, fmt.Sprintf("/projects/%d/jobs/%d/trace", p.ID, d), owner.Token).Want(t, http.StatusNotFound)
	})
}

// TestCIJobs_play: play answers 200 with the started manual job and keeps
// its variables (JSON or form); a job that is not manual is 400
// Unplayable Job.
func TestCIJobs_play(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		owner := s.NewUser(t, "owner")
		reporter := s.NewUser(t, "reporter")
		p := newCIProject(t, s, owner, "play", map[string]string{".gitlab-ci.yml": capiNoPush + `
build: {script: [x]}
deploy: {script: [x], when: manual}
ship: {script: [x], when: manual}
docs: {script: [x], when: manual}
later: {script: [x], when: delayed, start_in: 2 hours}
`})
		capiAddMember(t, s, owner.Token, p.ID, reporter.ID, 20)
		pl := p.createPipeline(t, "main")
		unplayable := `{"message":"400 Bad request - Unplayable Job"}`
		capiJobAction(t, p, owner.Token, p.job(t, pl.ID, "build").ID, "play", nil).Want(t, http.StatusBadRequest).WantBody(t, unplayable)

		deploy := p.job(t, pl.ID, "deploy").ID
		capiJobAction(t, p, reporter.Token, deploy, "play", nil).Want(t, http.StatusForbidden).WantBody(t, `{"message":"403 Forbidden"}`)
		r := capiJobAction(t, p, owner.Token, deploy, "play", map[string]any{"job_variables_attributes": []map[string]any{
			{"key": "DEPLOY_TO", "value": "production"}, {"key": "CERT", "value": "pem", "variable_type": "file"}}}).
			Want(t, http.StatusOK).Object(t)
		capiWantFields(t, "played job", r, map[string]any{"id": float64(deploy), "name": "deploy", "status": "pending"})
		wantManual := func(id int64, want string) {
			t.Helper()
			j, err := s.App.DB.Job(ctx(t), id)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, v := range j.ManualVariables {
				got = append(got, v.Key+"="+v.Value+"("+v.VariableType+")")
			}
			if strings.Join(got, " ") != want {
				t.Errorf("job %d variables %v; want %s", id, got, want)
			}
		}
		wantManual(deploy, "DEPLOY_TO=production(env_var) CERT=pem(file)")
		capiJobAction(t, p, owner.Token, deploy, "play", nil).Want(t, http.StatusBadRequest).WantBody(t, unplayable)

		// The form's job_variables_attributes[][key] entries.
		ship := p.job(t, pl.ID, "ship").ID
		s.Do(t, apitest.Request{Method: "POST", Path: fmt.Sprintf("/projects/%d/jobs/%d/play", p.ID, ship), Token: owner.Token,
			Form: url.Values{"job_variables_attributes[][key]": {"A", "B"}, "job_variables_attributes[][value]": {"1", "2"}}}).
			Want(t, http.StatusOK)
		wantManual(ship, "A=1(env_var) B=2(env_var)")

		// The official client.
		docs := p.job(t, pl.ID, "docs").ID
		job, _, err := s.Client(t, owner.Token).Jobs.PlayJob(p.ID, docs, &gitlab.PlayJobOptions{JobVariablesAttributes: &[]*gitlab.JobVariableOptions{
			{Key: gitlab.Ptr("LANG"), Value: gitlab.Ptr("en")}}})
		if err != nil || job.Status != "pending" || job.ID != docs {
			t.Errorf("client play: %+v, %v", job, err)
		}
		wantManual(docs, "LANG=en(env_var)")

		// A delayed job is played before its time.
		later := p.job(t, pl.ID, "later")
		if later.Status != "scheduled" {
			t.Fatalf("delayed job %s; want scheduled", later.Status)
		}
		capiWantFields(t, "played delayed job", capiJobAction(t, p, owner.Token, later.ID, "play", nil).Want(t, http.StatusOK).Object(t),
			map[string]any{"id": float64(later.ID), "status": "pending"})
	})
}

// TestCIJobs_coverage: a job with a coverage expression gets the number
// of the last matching log line once it finishes; the pipeline's
// coverage is the jobs' average as a string with two decimals.
func TestCIJobs_coverage(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		owner := s.NewUser(t, "owner")
		p := newCIProject(t, s, owner, "coverage", map[string]string{".gitlab-ci.yml": capiNoPush + `
unit:
  script: [x]
  coverage: '/Coverage: \d+\.\d+%/'
integration:
  script: [x]
  coverage: '/Coverage: \d+\.\d+%/'
plain:
  script: [x]
`})
		pl := p.createPipeline(t, "main")
		unit, integration, plain := p.job(t, pl.ID, "unit").ID, p.job(t, pl.ID, "integration").ID, p.job(t, pl.ID, "plain").ID
		capiAppendLog(t, s, unit, 0, "running\nCoverage: 80.25%\ndone\n")
		capiAppendLog(t, s, integration, 0, "Coverage: 12.00%\nCoverage: 94.75% of lines\n")
		capiAppendLog(t, s, plain, 0, "Coverage: 50.00%\n")
		if _, err := engine(s).Start(ctx(t), unit); err != nil {
			t.Fatal(err)
		}
		if c := p.job(t, pl.ID, "unit").Coverage; c != nil {
			t.Errorf("running job's coverage %v; want null", *c)
		}
		if _, err := engine(s).Finish(ctx(t), unit, succeed); err != nil {
			t.Fatal(err)
		}
		run(t, s, integration, succeed)
		run(t, s, plain, succeed)
		for id, want := range map[int64]any{unit: 80.25, integration: 94.75, plain: nil} {
			capiWantFields(t, fmt.Sprintf("job %d", id), capiJob(t, p, owner.Token, id), map[string]any{"coverage": want})
		}
		if got := p.pipeline(t, pl.ID); got.Coverage == nil || *got.Coverage != "87.50" {
			t.Errorf("pipeline coverage %v; want \"87.50\"", got.Coverage)
		}
		gp, _, err := s.Client(t, owner.Token).Pipelines.GetPipeline(p.ID, pl.ID)
		if err != nil || gp.Coverage != "87.50" {
			t.Errorf("client pipeline coverage %+v, %v", gp, err)
		}
	})
}

const capiParentChild = `
stages: [build, test, trigger]
build: {stage: build, script: [x]}
test: {stage: test, script: [x]}
child:
  stage: trigger
  trigger:
    include: child.yml
`

// TestCIJobs_pipelineJobs: a pipeline's jobs include its child
// pipeline's, filter by scope, hide retried jobs unless asked; its
// bridges show downstream_pipeline null until the child exists, then
// the child.
func TestCIJobs_pipelineJobs(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		owner := s.NewUser(t, "owner")
		p := newCIProject(t, s, owner, "family", map[string]string{".gitlab-ci.yml": capiNoPush + capiParentChild,
			"child.yml": "inner: {script: [x]}\nlate: {script: [x], when: manual}\n"})
		pl := p.createPipeline(t, "main")
		path := fmt.Sprintf("/projects/%d/pipelines/%d", p.ID, pl.ID)

		var bridges []map[string]any
		s.Get(t, path+"/bridges", owner.Token).Want(t, http.StatusOK).JSON(t, &bridges)
		if len(bridges) != 1 {
			t.Fatalf("bridges %v; want child", bridges)
		}
		capiWantFields(t, "bridge", bridges[0], map[string]any{"name": "child", "stage": "trigger", "status": "created",
			"downstream_pipeline": nil})
		pipe, _ := bridges[0]["pipeline"].(map[string]any)
		capiWantTypes(t, "bridge pipeline", pipe, map[string]string{"id": "number", "project_id": "number", "ref": "string", "sha": "string",
			"status": "string", "created_at": "string", "updated_at": "string", "web_url": "string"})

		build := p.job(t, pl.ID, "build").ID
		run(t, s, build, succeed)
		test := p.job(t, pl.ID, "test").ID
		run(t, s, test, succeed)
		var child map[string]any
		eventually(t, "the bridge's downstream pipeline", func() bool {
			s.Get(t, path+"/bridges", owner.Token).Want(t, http.StatusOK).JSON(t, &bridges)
			child, _ = bridges[0]["downstream_pipeline"].(map[string]any)
			return child != nil
		})
		capiWantTypes(t, "downstream pipeline", child, map[string]string{"id": "number", "sha": "string", "ref": "string", "status": "string",
			"created_at": "string", "updated_at": "string", "web_url": "string"})
		childID := int64(child["id"].(float64))
		capiWantFields(t, "downstream pipeline", child, map[string]any{"sha": pl.SHA, "ref": "main",
			"web_url": s.URL + "/" + p.Path + "/-/pipelines/" + itoa(childID)})
		inner := p.job(t, childID, "inner").ID
		late := p.job(t, childID, "late").ID

		// The child's jobs are the parent's too, newest first.
		list := func(query string) []int64 {
			var out []jobJSON
			s.Get(t, path+"/jobs?"+query, owner.Token).Want(t, http.StatusOK).JSON(t, &out)
			return capiJobIDs(out)
		}
		if got, want := list(""), capiDesc([]int64{build, test, inner, late}); !slices.Equal(got, want) {
			t.Errorf("pipeline jobs %v; want %v", got, want)
		}
		if got := list("scope=pending"); !slices.Equal(got, []int64{inner}) {
			t.Errorf("scope=pending %v; want the child's inner %d", got, inner)
		}
		if got, want := list("scope[]=success&scope[]=manual"), capiDesc([]int64{build, test, late}); !slices.Equal(got, want) {
			t.Errorf("scope success, manual %v; want %v", got, want)
		}
		s.Get(t, path+"/jobs?scope=nope", owner.Token).Want(t, http.StatusBadRequest).WantBody(t, `{"error":"scope does not have a valid value"}`)

		// A retried job is listed only when asked for.
		again := capiJobAction(t, p, owner.Token, test, "retry", nil).Want(t, http.StatusCreated).Object(t)
		newTest := int64(again["id"].(float64))
		if got, want := list(""), capiDesc([]int64{build, newTest, inner, late}); !slices.Equal(got, want) {
			t.Errorf("after a retry %v; want %v", got, want)
		}
		if got, want := list("include_retried=true"), capiDesc([]int64{build, test, newTest, inner, late}); !slices.Equal(got, want) {
			t.Errorf("include_retried %v; want %v", got, want)
		}
		s.Get(t, fmt.Sprintf("/projects/%d/pipelines/%d/jobs", p.ID, s.AbsentID(t)), owner.Token).Want(t, http.StatusNotFound).
			WantBody(t, `{"message":"404 Pipeline Not Found"}`)
		// A bridge is no job of /jobs/:job_id, nor of the project's jobs.
		bridgeID := int64(bridges[0]["id"].(float64))
		var projectJobs []jobJSON
		s.Get(t, fmt.Sprintf("/projects/%d/jobs?per_page=100", p.ID), owner.Token).Want(t, http.StatusOK).JSON(t, &projectJobs)
		if got, want := capiJobIDs(projectJobs), capiDesc([]int64{build, test, newTest, inner, late}); !slices.Equal(got, want) {
			t.Errorf("project jobs %v; want %v (builds of parent and child, no bridge)", got, want)
		}
		s.Get(t, fmt.Sprintf("/projects/%d/jobs/%d", p.ID, bridgeID), owner.Token).Want(t, http.StatusNotFound).
			WantBody(t, `{"message":"404 Not found"}`)
		if got := s.Get(t, path+"/bridges?scope=success", owner.Token).Want(t, http.StatusOK).Array(t); len(got) != 1 || got[0]["id"] != bridges[0]["id"] {
			t.Errorf("bridges scope=success %v; want the child bridge", got)
		}
		s.Get(t, path+"/bridges?scope=pending", owner.Token).Want(t, http.StatusOK).WantBody(t, `[]`)

		// The child's own list has only its jobs; it has no bridges.
		var childJobs []jobJSON
		s.Get(t, fmt.Sprintf("/projects/%d/pipelines/%d/jobs", p.ID, childID), owner.Token).Want(t, http.StatusOK).JSON(t, &childJobs)
		if got, want := capiJobIDs(childJobs), capiDesc([]int64{inner, late}); !slices.Equal(got, want) {
			t.Errorf("child jobs %v; want %v", got, want)
		}
		if r := s.Get(t, fmt.Sprintf("/projects/%d/pipelines/%d/bridges", p.ID, childID), owner.Token).Want(t, http.StatusOK); !bytes.Equal(r.Body, []byte("[]")) {
			t.Errorf("child bridges %s; want []", r.Body)
		}
	})
}

// TestCIJobs_publicProject: on a public project anyone reads pipelines
// and the pipeline's jobs, and anyone signed in the jobs and logs too
// (public_jobs, GitLab's default; its jobs API authenticates every call),
// but changes nothing; with public_jobs off, jobs are for members while
// pipelines stay public.
func TestCIJobs_publicProject(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		owner := s.NewUser(t, "owner")
		outsider := s.NewUser(t, "outsider")
		var created struct {
			ID                int64  `json:"id"`
			PathWithNamespace string `json:"path_with_namespace"`
		}
		s.Do(t, apitest.Request{Method: "POST", Path: "/projects", Token: owner.Token, JSON: map[string]any{"name": "open",
			"visibility": "public", "initialize_with_readme": true}}).Want(t, http.StatusCreated).JSON(t, &created)
		p := ciProject{s: s, ID: created.ID, Path: created.PathWithNamespace, Token: owner.Token}
		p.commit(t, "main", map[string]string{".gitlab-ci.yml": capiNoPush + "build: {script: [x]}\n"})
		pl := p.createPipeline(t, "main")
		id := p.job(t, pl.ID, "build").ID
		capiAppendLog(t, s, id, 0, "public log\n")
		paths := []string{
			fmt.Sprintf("/projects/%d/jobs", p.ID),
			fmt.Sprintf("/projects/%d/jobs/%d", p.ID, id),
			fmt.Sprintf("/projects/%d/jobs/%d/trace", p.ID, id),
			fmt.Sprintf("/projects/%d/pipelines/%d/jobs", p.ID, pl.ID),
		}
		for _, token := range []string{"", outsider.Token} {
			for i, path := range paths {
				if token == "" && i < 3 {
					// The jobs API authenticates first, as GitLab's.
					s.Get(t, path, token).Want(t, http.StatusUnauthorized).WantBody(t, `{"message":"401 Unauthorized"}`)
					continue
				}
				s.Get(t, path, token).Want(t, http.StatusOK)
			}
			s.Get(t, fmt.Sprintf("/projects/%d/pipelines/%d", p.ID, pl.ID), token).Want(t, http.StatusOK)
		}
		if got := string(s.Get(t, paths[2], outsider.Token).Body); got != "public log\n" {
			t.Errorf("outsider's trace %q", got)
		}
		capiJobAction(t, p, "", id, "cancel", nil).Want(t, http.StatusUnauthorized).WantBody(t, `{"message":"401 Unauthorized"}`)
		capiJobAction(t, p, outsider.Token, id, "cancel", nil).Want(t, http.StatusForbidden).WantBody(t, `{"message":"403 Forbidden"}`)
		capiJobAction(t, p, outsider.Token, id, "erase", nil).Want(t, http.StatusForbidden).WantBody(t, `{"message":"403 Forbidden"}`)

		s.Do(t, apitest.Request{Method: "PUT", Path: fmt.Sprintf("/projects/%d", p.ID), Token: owner.Token,
			JSON: map[string]any{"public_jobs": false}}).Want(t, http.StatusOK)
		for _, token := range []string{"", outsider.Token} {
			for i, path := range paths {
				if token == "" && i < 3 {
					s.Get(t, path, token).Want(t, http.StatusUnauthorized)
					continue
				}
				s.Get(t, path, token).Want(t, http.StatusForbidden).WantBody(t, `{"message":"403 Forbidden"}`)
			}
			s.Get(t, fmt.Sprintf("/projects/%d/pipelines/%d", p.ID, pl.ID), token).Want(t, http.StatusOK)
		}
		s.Get(t, paths[1], owner.Token).Want(t, http.StatusOK)
	})
}

// TestCIJobs_erasePermissions: a developer erases the jobs they ran, not
// another's; a maintainer erases any.
func TestCIJobs_erasePermissions(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		owner := s.NewUser(t, "owner")
		dev := s.NewUser(t, "dev")
		other := s.NewUser(t, "other")
		maintainer := s.NewUser(t, "maintainer")
		p := newCIProject(t, s, owner, "erasers", map[string]string{".gitlab-ci.yml": capiNoPush + "a: {script: [x]}\nb: {script: [x]}\n"})
		capiAddMember(t, s, owner.Token, p.ID, dev.ID, 30)
		capiAddMember(t, s, owner.Token, p.ID, other.ID, 30)
		capiAddMember(t, s, owner.Token, p.ID, maintainer.ID, 40)
		p.commit(t, "feature", map[string]string{"f.txt": "feature"})
		var pl pipelineJSON
		s.Do(t, apitest.Request{Method: "POST", Path: fmt.Sprintf("/projects/%d/pipeline", p.ID), Token: dev.Token,
			JSON: map[string]any{"ref": "feature"}}).Want(t, http.StatusCreated).JSON(t, &pl)
		a, b := p.job(t, pl.ID, "a").ID, p.job(t, pl.ID, "b").ID
		for _, id := range []int64{a, b} {
			capiAppendLog(t, s, id, 0, "log\n")
			run(t, s, id, succeed)
		}
		capiJobAction(t, p, other.Token, a, "erase", nil).Want(t, http.StatusForbidden).WantBody(t, `{"message":"403 Forbidden"}`)
		capiJobAction(t, p, dev.Token, a, "erase", nil).Want(t, http.StatusCreated)
		capiJobAction(t, p, maintainer.Token, b, "erase", nil).Want(t, http.StatusCreated)
	})
}
