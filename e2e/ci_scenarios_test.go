package e2e

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"quarry/internal/apitest"
	"quarry/internal/ci"
	"quarry/internal/model"
)

// A scenario (testdata/ci/scenarios/*.yml) is a CI configuration and the
// statuses its pipeline must go through as jobs are driven:
//
//	config: |            the .gitlab-ci.yml
//	files: {path: text}  more files of the commit (child configurations)
//	steps:               in order, each one action:
//	  - expect: "a=pending b=created | pending"   latest jobs and bridges, then the pipeline
//	  - wait: "…"                                  the same, awaited (background work)
//	  - succeed: a       | fail: a | fail: {job: a, exit_code: 137, reason: script_failure}
//	  - start: a                                   pending → running only
//	  - drop: {job: a, reason: stuck_or_timeout_failure}   the server fails an unfinished job
//	  - cancel: a | retry: a | play: a            through the API
//	  - retry_pipeline: true | cancel_pipeline: true
//	  - new_pipeline: true                         another pipeline of the same commit (#2, #3, …)
//	  - process_mode: {key: prod, mode: oldest_first}
//
// A job of a bridge's downstream pipeline is named "bridge/job", and
// "bridge/" alone in expect or wait names that pipeline's state. A job
// name or a state starting "#2 " is about the second pipeline made.
type scenario struct {
	Config string            `yaml:"config"`
	Files  map[string]string `yaml:"files"`
	Steps  []map[string]any  `yaml:"steps"`
}

func TestPipelines_scenarios(t *testing.T) {
	paths, err := filepath.Glob("testdata/ci/scenarios/*.yml")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no scenarios: %v", err)
	}
	for _, path := range paths {
		name := strings.TrimSuffix(filepath.Base(path), ".yml")
		t.Run(name, func(t *testing.T) {
			raw, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			var sc scenario
			if err := yaml.Unmarshal(raw, &sc); err != nil {
				t.Fatalf("%s: %v", path, err)
			}
			apitest.Each(t, func(t *testing.T, s *apitest.Server) { runScenario(t, s, sc) })
		})
	}
}

func runScenario(t *testing.T, s *apitest.Server, sc scenario) {
	owner := s.NewUser(t, "owner")
	files := map[string]string{".gitlab-ci.yml": sc.Config}
	for k, v := range sc.Files {
		files[k] = v
	}
	p := newCIProject(t, s, owner, "scenario", files)
	p.settle(t, 1)
	// The commit's push pipeline would compete (for resource groups):
	// the scenario's pipelines are its own.
	push := p.pipelines(t, "source=push")[0]
	s.Do(t, apitest.Request{Method: "POST", Path: fmt.Sprintf("/projects/%d/pipelines/%d/cancel", p.ID, push.ID), Token: owner.Token}).
		Want(t, http.StatusOK)
	pl := p.createPipeline(t, "main")
	r := scenarioRun{t: t, s: s, p: p, pipelines: []int64{pl.ID}, token: owner.Token}
	for i, step := range sc.Steps {
		if len(step) != 1 {
			t.Fatalf("step %d: one action per step: %v", i+1, step)
		}
		for action, arg := range step {
			r.step = fmt.Sprintf("step %d (%s %v)", i+1, action, arg)
			r.do(action, arg)
		}
	}
}

type scenarioRun struct {
	t         *testing.T
	s         *apitest.Server
	p         ciProject
	pipelines []int64 // in the order made; #1 is the first
	pipeline  int64   // the one the current step is about
	token     string
	step      string
}

// about picks the pipeline a name or state is about ("#2 …") and returns
// the rest.
func (r *scenarioRun) about(s string) string {
	r.pipeline = r.pipelines[0]
	if rest, ok := strings.CutPrefix(s, "#"); ok {
		n, after, _ := strings.Cut(rest, " ")
		i, err := strconv.Atoi(n)
		if err != nil || i < 1 || i > len(r.pipelines) {
			r.t.Fatalf("%s: no pipeline #%s", r.step, n)
		}
		r.pipeline = r.pipelines[i-1]
		return after
	}
	return s
}

// state is the scenario's view of its pipeline: the latest jobs and
// bridges, sorted, then " | " and the pipeline's status. A bridge the
// wanted state looks into ("b/…") adds its downstream pipeline: "b/job=…"
// for its jobs and "b/=…" for its status.
func (r *scenarioRun) state(want string) string {
	parts, status := r.p.statusParts(r.t, r.pipeline)
	for _, b := range r.p.bridges(r.t, r.pipeline) {
		if !strings.Contains(want, b.Name+"/") {
			continue
		}
		if b.DownstreamPipeline == nil {
			parts = append(parts, b.Name+"/=(none yet)")
			continue
		}
		child, childStatus := r.p.statusParts(r.t, b.DownstreamPipeline.ID)
		for _, j := range child {
			parts = append(parts, b.Name+"/"+j)
		}
		parts = append(parts, b.Name+"/="+childStatus)
	}
	sort.Strings(parts)
	return strings.Join(parts, " ") + " | " + status
}

// jobID finds the latest job of a name ("bridge/job" in a downstream
// pipeline).
func (r *scenarioRun) jobID(name string) jobJSON {
	if j, ok := latest(r.p.ownJobs(r.t, r.pipeline))[name]; ok {
		return j // "test 1/2" is a parallel job of this pipeline
	}
	if bridge, job, ok := strings.Cut(name, "/"); ok {
		b := r.p.job(r.t, r.pipeline, bridge)
		if b.DownstreamPipeline == nil {
			r.t.Fatalf("%s: %s has no downstream pipeline", r.step, bridge)
		}
		return r.p.job(r.t, b.DownstreamPipeline.ID, job)
	}
	return r.p.job(r.t, r.pipeline, name)
}

// drive ends a job as a runner would: takes it if pending, then reports.
func (r *scenarioRun) drive(name string, o ci.Outcome) {
	j := r.jobID(name)
	if j.Status == "pending" {
		if _, err := engine(r.s).Start(ctx(r.t), j.ID); err != nil {
			r.t.Fatalf("%s: start: %v", r.step, err)
		}
	}
	if _, err := engine(r.s).Finish(ctx(r.t), j.ID, o); err != nil {
		r.t.Fatalf("%s: finish: %v", r.step, err)
	}
}

func (r *scenarioRun) api(method, path string, want int) {
	resp := r.s.Do(r.t, apitest.Request{Method: method, Path: fmt.Sprintf("/projects/%d%s", r.p.ID, path), Token: r.token})
	if resp.Status != want {
		r.t.Fatalf("%s: %s %s: %d %s", r.step, method, path, resp.Status, resp.Body)
	}
}

func (r *scenarioRun) do(action string, arg any) {
	t := r.t
	if s, ok := arg.(string); ok {
		arg = r.about(s)
	} else {
		r.pipeline = r.pipelines[0]
	}
	switch action {
	case "expect":
		if got := r.state(arg.(string)); got != arg.(string) {
			t.Fatalf("%s:\n got  %s\n want %s", r.step, got, arg)
		}
	case "wait":
		var got string
		for i := 0; i < 500; i++ {
			if got = r.state(arg.(string)); got == arg.(string) {
				return
			}
			sleep()
		}
		t.Fatalf("%s: after 10s:\n got  %s\n want %s", r.step, got, arg)
	case "new_pipeline":
		r.pipelines = append(r.pipelines, r.p.createPipeline(t, "main").ID)
	case "process_mode":
		a := arg.(map[string]any)
		resp := r.s.Do(t, apitest.Request{Method: "PUT", Path: fmt.Sprintf("/projects/%d/resource_groups/%s", r.p.ID, a["key"]),
			Token: r.token, JSON: map[string]any{"process_mode": a["mode"]}})
		if resp.Status != http.StatusOK {
			t.Fatalf("%s: %d %s", r.step, resp.Status, resp.Body)
		}
	case "succeed":
		r.drive(arg.(string), succeed)
	case "fail":
		switch a := arg.(type) {
		case string:
			r.drive(a, fail)
		case map[string]any:
			a["job"] = r.about(a["job"].(string))
			o := ci.Outcome{Status: model.StatusFailed, Reason: model.FailureScript}
			if v, ok := a["reason"].(string); ok {
				o.Reason = model.FailureReason(v)
			}
			if v, ok := a["exit_code"].(int); ok {
				o.ExitCode = &v
			}
			r.drive(a["job"].(string), o)
		}
	case "drop":
		a := arg.(map[string]any)
		if _, err := engine(r.s).Drop(ctx(t), r.jobID(r.about(a["job"].(string))).ID, model.FailureReason(a["reason"].(string))); err != nil {
			t.Fatalf("%s: %v", r.step, err)
		}
	case "start":
		if _, err := engine(r.s).Start(ctx(t), r.jobID(arg.(string)).ID); err != nil {
			t.Fatalf("%s: %v", r.step, err)
		}
	case "cancel":
		r.api("POST", fmt.Sprintf("/jobs/%d/cancel", r.jobID(arg.(string)).ID), http.StatusCreated)
	case "retry":
		r.api("POST", fmt.Sprintf("/jobs/%d/retry", r.jobID(arg.(string)).ID), http.StatusCreated)
	case "play":
		r.api("POST", fmt.Sprintf("/jobs/%d/play", r.jobID(arg.(string)).ID), http.StatusOK)
	case "retry_pipeline":
		r.api("POST", fmt.Sprintf("/pipelines/%d/retry", r.pipeline), http.StatusCreated)
	case "cancel_pipeline":
		r.api("POST", fmt.Sprintf("/pipelines/%d/cancel", r.pipeline), http.StatusOK)
	default:
		t.Fatalf("%s: unknown action", r.step)
	}
}
