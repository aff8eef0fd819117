package e2e

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"testing"
	"time"

	"quarry/internal/apitest"
	"quarry/internal/ci"
	"quarry/internal/model"
)

// ciProject is a project with a CI configuration, for CI tests.
type ciProject struct {
	s     *apitest.Server
	ID    int64
	Path  string
	Token string // the owner's
}

// pipelineJSON is the pipeline fields tests read.
type pipelineJSON struct {
	ID         int64   `json:"id"`
	IID        int64   `json:"iid"`
	ProjectID  int64   `json:"project_id"`
	Status     string  `json:"status"`
	Source     string  `json:"source"`
	Ref        string  `json:"ref"`
	SHA        string  `json:"sha"`
	BeforeSHA  string  `json:"before_sha"`
	Tag        bool    `json:"tag"`
	YAMLErrors *string `json:"yaml_errors"`
	WebURL     string  `json:"web_url"`
	StartedAt  *string `json:"started_at"`
	FinishedAt *string `json:"finished_at"`
	Duration   *int64  `json:"duration"`
	Coverage   *string `json:"coverage"`
	User       *struct {
		ID       int64  `json:"id"`
		Username string `json:"username"`
	} `json:"user"`
}

// jobJSON is the job fields tests read.
type jobJSON struct {
	ID            int64    `json:"id"`
	Name          string   `json:"name"`
	Stage         string   `json:"stage"`
	Status        string   `json:"status"`
	Ref           string   `json:"ref"`
	AllowFailure  bool     `json:"allow_failure"`
	FailureReason string   `json:"failure_reason"`
	Coverage      *float64 `json:"coverage"`
	StartedAt     *string  `json:"started_at"`
	FinishedAt    *string  `json:"finished_at"`
	ErasedAt      *string  `json:"erased_at"`
	Duration      *float64 `json:"duration"`
	WebURL        string   `json:"web_url"`
	TagList       []string `json:"tag_list"`
	Pipeline      struct {
		ID     int64  `json:"id"`
		Status string `json:"status"`
	} `json:"pipeline"`
	DownstreamPipeline *struct {
		ID     int64  `json:"id"`
		Status string `json:"status"`
	} `json:"downstream_pipeline"`
}

// newCIProject makes a project owned by owner whose default branch holds
// files (a .gitlab-ci.yml among them, usually). The commit makes a push
// pipeline too; tests that count pipelines wait for it (settle).
func newCIProject(t *testing.T, s *apitest.Server, owner apitest.User, name string, files map[string]string) ciProject {
	t.Helper()
	var p struct {
		ID                int64  `json:"id"`
		PathWithNamespace string `json:"path_with_namespace"`
	}
	s.Do(t, apitest.Request{Method: "POST", Path: "/projects", Token: owner.Token, JSON: map[string]any{"name": name,
		"initialize_with_readme": true}}).Want(t, http.StatusCreated).JSON(t, &p)
	cp := ciProject{s: s, ID: p.ID, Path: p.PathWithNamespace, Token: owner.Token}
	if len(files) > 0 {
		cp.commit(t, "main", files)
	}
	return cp
}

// commit writes files on branch (created from main when missing) and
// returns the new commit.
func (p ciProject) commit(t *testing.T, branch string, files map[string]string) string {
	t.Helper()
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	var actions []map[string]any
	for _, n := range names {
		action := "create"
		if p.s.Do(t, apitest.Request{Path: fmt.Sprintf("/projects/%d/repository/files/%s?ref=%s", p.ID, url.PathEscape(n), branchOrMain(t, p, branch)),
			Token: p.Token}).Status == http.StatusOK {
			action = "update"
		}
		actions = append(actions, map[string]any{"action": action, "file_path": n, "content": files[n]})
	}
	body := map[string]any{"branch": branch, "commit_message": "ci files", "actions": actions}
	if branch != "main" && p.s.Do(t, apitest.Request{Path: fmt.Sprintf("/projects/%d/repository/branches/%s", p.ID, url.PathEscape(branch)),
		Token: p.Token}).Status == http.StatusNotFound {
		body["start_branch"] = "main"
	}
	var c struct{ ID string }
	p.s.Do(t, apitest.Request{Method: "POST", Path: fmt.Sprintf("/projects/%d/repository/commits", p.ID), Token: p.Token,
		JSON: body}).Want(t, http.StatusCreated).JSON(t, &c)
	return c.ID
}

func branchOrMain(t *testing.T, p ciProject, branch string) string {
	if p.s.Do(t, apitest.Request{Path: fmt.Sprintf("/projects/%d/repository/branches/%s", p.ID, url.PathEscape(branch)),
		Token: p.Token}).Status == http.StatusOK {
		return url.QueryEscape(branch)
	}
	return "main"
}

// createPipeline runs the configuration for ref through the API.
func (p ciProject) createPipeline(t *testing.T, ref string) pipelineJSON {
	t.Helper()
	var pl pipelineJSON
	p.s.Do(t, apitest.Request{Method: "POST", Path: fmt.Sprintf("/projects/%d/pipeline", p.ID), Token: p.Token,
		JSON: map[string]any{"ref": ref}}).Want(t, http.StatusCreated).JSON(t, &pl)
	return pl
}

// pipeline reads a pipeline.
func (p ciProject) pipeline(t *testing.T, id int64) pipelineJSON {
	t.Helper()
	var pl pipelineJSON
	p.s.Do(t, apitest.Request{Path: fmt.Sprintf("/projects/%d/pipelines/%d", p.ID, id), Token: p.Token}).Want(t, http.StatusOK).JSON(t, &pl)
	return pl
}

// jobs lists a pipeline's jobs (retried ones too), oldest first.
func (p ciProject) jobs(t *testing.T, pipelineID int64) []jobJSON {
	t.Helper()
	var out []jobJSON
	p.s.Walk(t, fmt.Sprintf("/projects/%d/pipelines/%d/jobs?include_retried=true&per_page=100", p.ID, pipelineID), p.Token,
		func(r *apitest.Response) {
			var page []jobJSON
			r.JSON(t, &page)
			out = append(out, page...)
		})
	sort.Slice(out, func(a, b int) bool { return out[a].ID < out[b].ID })
	return out
}

// bridges lists a pipeline's bridges.
func (p ciProject) bridges(t *testing.T, pipelineID int64) []jobJSON {
	t.Helper()
	var out []jobJSON
	p.s.Get(t, fmt.Sprintf("/projects/%d/pipelines/%d/bridges", p.ID, pipelineID), p.Token).Want(t, http.StatusOK).JSON(t, &out)
	return out
}

// latest is the newest job of each name.
func latest(jobs []jobJSON) map[string]jobJSON {
	out := map[string]jobJSON{}
	for _, j := range jobs {
		if cur, ok := out[j.Name]; !ok || j.ID > cur.ID {
			out[j.Name] = j
		}
	}
	return out
}

// ownJobs are a pipeline's own jobs (the jobs list adds its child
// pipelines').
func (p ciProject) ownJobs(t *testing.T, pipelineID int64) []jobJSON {
	t.Helper()
	var out []jobJSON
	for _, j := range p.jobs(t, pipelineID) {
		if j.Pipeline.ID == pipelineID {
			out = append(out, j)
		}
	}
	return out
}

// statuses renders "name=status …" of the latest jobs, sorted, and the
// pipeline's status: a readable state to compare.
func (p ciProject) statuses(t *testing.T, pipelineID int64) string {
	t.Helper()
	parts, status := p.statusParts(t, pipelineID)
	return strings.Join(parts, " ") + " | " + status
}

// statusParts are the sorted "name=status" of a pipeline's latest jobs
// and bridges, and the pipeline's status.
func (p ciProject) statusParts(t *testing.T, pipelineID int64) ([]string, string) {
	t.Helper()
	l := latest(p.ownJobs(t, pipelineID))
	for _, b := range p.bridges(t, pipelineID) {
		l[b.Name] = b
	}
	parts := make([]string, 0, len(l))
	for n, j := range l {
		parts = append(parts, n+"="+j.Status)
	}
	sort.Strings(parts)
	return parts, p.pipeline(t, pipelineID).Status
}

// job finds the latest job of a name in a pipeline.
func (p ciProject) job(t *testing.T, pipelineID int64, name string) jobJSON {
	t.Helper()
	j, ok := latest(p.ownJobs(t, pipelineID))[name]
	if !ok {
		for _, b := range p.bridges(t, pipelineID) {
			if b.Name == name {
				return b
			}
		}
		t.Fatalf("pipeline %d has no job %q", pipelineID, name)
	}
	return j
}

// engine drives job outcomes the way a runner would, through the CI
// service of the running server.
func engine(s *apitest.Server) *ci.Service { return s.App.CI }

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return c
}

// run takes a pending job (as a runner would) and ends it.
func run(t *testing.T, s *apitest.Server, jobID int64, o ci.Outcome) {
	t.Helper()
	if _, err := engine(s).Start(ctx(t), jobID); err != nil {
		t.Fatalf("start job %d: %v", jobID, err)
	}
	if _, err := engine(s).Finish(ctx(t), jobID, o); err != nil {
		t.Fatalf("finish job %d: %v", jobID, err)
	}
}

var (
	succeed = ci.Outcome{Status: model.StatusSuccess}
	fail    = ci.Outcome{Status: model.StatusFailed, Reason: model.FailureScript}
)

// failWith is a script failure with an exit code.
func failWith(code int) ci.Outcome {
	return ci.Outcome{Status: model.StatusFailed, Reason: model.FailureScript, ExitCode: &code}
}

// eventually polls cond until it holds, at most ten seconds.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if cond() {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 10s: %s", what)
		}
	}
}

// pipelines lists a project's pipelines with a query.
func (p ciProject) pipelines(t *testing.T, query string) []pipelineJSON {
	t.Helper()
	var out []pipelineJSON
	p.s.Get(t, fmt.Sprintf("/projects/%d/pipelines?%s", p.ID, query), p.Token).Want(t, http.StatusOK).JSON(t, &out)
	return out
}

// settle waits until the project's push pipelines (from the commits a
// test made) have appeared: n of them.
func (p ciProject) settle(t *testing.T, n int) {
	t.Helper()
	eventually(t, fmt.Sprintf("%d push pipelines", n), func() bool { return len(p.pipelines(t, "source=push")) >= n })
}
