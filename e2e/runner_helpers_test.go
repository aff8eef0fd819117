package e2e

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"quarry/internal/apitest"
	"quarry/internal/model"
	"quarry/internal/store"
)

// The runner kit: a runner speaking the protocol over raw HTTP, as
// gitlab-runner does (reference §1), for protocol tests.

// shortPoll makes a parked job request answer after 300 ms.
func shortPoll(c *config) { c.RunnerLongPoll = 300 * time.Millisecond }

// protoRunner is a registered runner.
type protoRunner struct {
	s     *apitest.Server
	ID    int64
	Token string
}

// payloadJSON is the job payload fields tests read.
type payloadJSON struct {
	ID      int64  `json:"id"`
	Token   string `json:"token"`
	JobInfo struct {
		Name        string `json:"name"`
		Stage       string `json:"stage"`
		ProjectID   int64  `json:"project_id"`
		ProjectName string `json:"project_name"`
	} `json:"job_info"`
	GitInfo struct {
		RepoURL   string   `json:"repo_url"`
		Ref       string   `json:"ref"`
		SHA       string   `json:"sha"`
		BeforeSHA string   `json:"before_sha"`
		RefType   string   `json:"ref_type"`
		Refspecs  []string `json:"refspecs"`
		Depth     int      `json:"depth"`
	} `json:"git_info"`
	RunnerInfo struct {
		Timeout int `json:"timeout"`
	} `json:"runner_info"`
	Variables []struct {
		Key    string `json:"key"`
		Value  string `json:"value"`
		Public bool   `json:"public"`
		Masked bool   `json:"masked"`
		File   bool   `json:"file"`
	} `json:"variables"`
	Steps []struct {
		Name         string   `json:"name"`
		Script       []string `json:"script"`
		Timeout      int      `json:"timeout"`
		When         string   `json:"when"`
		AllowFailure bool     `json:"allow_failure"`
	} `json:"steps"`
	Artifacts []struct {
		Name         string   `json:"name"`
		Paths        []string `json:"paths"`
		When         string   `json:"when"`
		ArtifactType string   `json:"artifact_type"`
		Format       string   `json:"artifact_format"`
	} `json:"artifacts"`
	Dependencies []struct {
		ID            int64  `json:"id"`
		Name          string `json:"name"`
		Token         string `json:"token"`
		ArtifactsFile *struct {
			Filename string `json:"filename"`
			Size     int64  `json:"size"`
		} `json:"artifacts_file"`
	} `json:"dependencies"`
	Features struct {
		TraceSections bool `json:"trace_sections"`
	} `json:"features"`
}

// variable returns a payload variable by key.
func (p payloadJSON) variable(key string) (value string, masked, public, ok bool) {
	for _, v := range p.Variables {
		if v.Key == key {
			value, masked, public, ok = v.Value, v.Masked, v.Public, true
		}
	}
	return
}

// newRunner creates a runner through POST /user/runners as token's user.
func newRunner(t *testing.T, s *apitest.Server, token string, attrs map[string]any) protoRunner {
	t.Helper()
	var out struct {
		ID    int64  `json:"id"`
		Token string `json:"token"`
	}
	s.Do(t, apitest.Request{Method: "POST", Path: "/user/runners", Token: token, JSON: attrs}).Want(t, http.StatusCreated).JSON(t, &out)
	return protoRunner{s: s, ID: out.ID, Token: out.Token}
}

// projectRunner is a runner of the project p.
func projectRunner(t *testing.T, p ciProject, attrs map[string]any) protoRunner {
	t.Helper()
	all := map[string]any{"runner_type": "project_type", "project_id": p.ID}
	for k, v := range attrs {
		all[k] = v
	}
	return newRunner(t, p.s, p.Token, all)
}

// features are what the runner says it supports.
var runnerFeatures = map[string]bool{"variables": true, "artifacts": true, "upload_multiple_artifacts": true, "upload_raw_artifacts": true,
	"refspecs": true, "masking": true, "raw_variables": true, "artifacts_exclude": true, "multi_build_steps": true, "trace_reset": true,
	"trace_checksum": true, "trace_size": true, "cancelable": true, "return_exit_code": true}

// request asks for a job with the queue version last seen.
func (r protoRunner) request(t *testing.T, lastUpdate string) *apitest.Response {
	t.Helper()
	return r.s.Do(t, apitest.Request{Method: "POST", Path: "/jobs/request", JSON: map[string]any{"token": r.Token,
		"last_update": lastUpdate, "system_id": "s_0123456789ab",
		"info": map[string]any{"name": "proto", "version": "16.0.0", "executor": "shell", "features": runnerFeatures}}})
}

// take asks until a job comes (at most ten seconds), and returns it.
func (r protoRunner) take(t *testing.T) payloadJSON {
	t.Helper()
	last := ""
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); {
		res := r.request(t, last)
		switch res.Status {
		case http.StatusCreated:
			var p payloadJSON
			res.JSON(t, &p)
			return p
		case http.StatusNoContent:
			last = res.Header.Get("X-Gitlab-Last-Update")
		default:
			t.Fatalf("POST /jobs/request: %d %s", res.Status, res.Body)
		}
	}
	t.Fatal("no job within 10s")
	return payloadJSON{}
}

// update sends PUT /jobs/:id.
func (r protoRunner) update(t *testing.T, job payloadJSON, body map[string]any) *apitest.Response {
	t.Helper()
	if _, ok := body["token"]; !ok {
		body["token"] = job.Token
	}
	return r.s.Do(t, apitest.Request{Method: "PUT", Path: fmt.Sprintf("/jobs/%d", job.ID), JSON: body})
}

// trace sends PATCH /jobs/:id/trace with data at offset.
func (r protoRunner) trace(t *testing.T, job payloadJSON, offset int, data string) *apitest.Response {
	t.Helper()
	h := map[string]string{"JOB-TOKEN": job.Token, "Content-Type": "text/plain"}
	if offset >= 0 {
		h["Content-Range"] = fmt.Sprintf("%d-%d", offset, offset+len(data)-1)
	}
	return r.s.Do(t, apitest.Request{Method: "PATCH", Path: fmt.Sprintf("/jobs/%d/trace", job.ID), Header: h, Raw: []byte(data)})
}

// storeRunnerFilter selects the runners serving a project.
func storeRunnerFilter(projectID int64) store.RunnerFilter {
	return store.RunnerFilter{ProjectID: projectID}
}

// pageOne is the first page of 100.
var pageOne = model.Page{Number: 1, PerPage: 100}
