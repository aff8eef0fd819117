package e2e

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"quarry/internal/apitest"
)

const capiResourceConfig = capiNoPush + `
stages: [build, deploy]
build: {stage: build, script: [make]}
deploy: {stage: deploy, script: [ship], resource_group: prod}
review: {stage: deploy, script: [show], resource_group: review/app}
`

// capiSlots drives the deploy jobs of several pipelines of one project
// through the resource group prod.
type capiSlots struct {
	t         *testing.T
	s         *apitest.Server
	p         ciProject
	pipelines []int64
}

func newCapiSlots(t *testing.T, s *apitest.Server, name, mode string) *capiSlots {
	t.Helper()
	owner := s.NewUser(t, "owner")
	p := newCIProject(t, s, owner, name, map[string]string{".gitlab-ci.yml": capiNoPush + `
stages: [build, deploy]
build: {stage: build, script: [make]}
deploy: {stage: deploy, script: [ship], resource_group: prod}
`})
	r := &capiSlots{t: t, s: s, p: p}
	for range 3 {
		r.pipelines = append(r.pipelines, p.createPipeline(t, "main").ID)
	}
	s.Do(t, apitest.Request{Method: "PUT", Path: r.path(""), Token: p.Token, JSON: map[string]any{"process_mode": mode}}).
		Want(t, http.StatusOK)
	return r
}

func (r *capiSlots) path(sub string) string {
	return fmt.Sprintf("/projects/%d/resource_groups/prod%s", r.p.ID, sub)
}

// settle waits until the group's assignment passes have run.
func (r *capiSlots) settle() {
	r.t.Helper()
	eventually(r.t, "the resource group's assignment passes", func() bool {
		_, due, err := r.s.App.DB.NextTaskDue(ctx(r.t), "ci_assign_resource")
		if err != nil {
			r.t.Fatal(err)
		}
		return !due
	})
}

// deploy is pipeline n's (1-based) deploy job.
func (r *capiSlots) deploy(n int) jobJSON { return r.p.job(r.t, r.pipelines[n-1], "deploy") }

// ready finishes pipeline n's build: its deploy asks for the slot.
func (r *capiSlots) ready(n int) {
	r.t.Helper()
	run(r.t, r.s, r.p.job(r.t, r.pipelines[n-1], "build").ID, succeed)
	r.settle()
}

// done finishes pipeline n's deploy, which holds the slot.
func (r *capiSlots) done(n int) {
	r.t.Helper()
	run(r.t, r.s, r.deploy(n).ID, succeed)
	r.settle()
}

// state is "1=status 2=status 3=status" of the deploy jobs, checking on
// the way that at most one of them holds the slot (pending or running)
// and that current_job names it.
func (r *capiSlots) state() string {
	r.t.Helper()
	var parts []string
	var holders []int64
	for n := range r.pipelines {
		j := r.deploy(n + 1)
		parts = append(parts, fmt.Sprintf("%d=%s", n+1, j.Status))
		if j.Status == "pending" || j.Status == "running" {
			holders = append(holders, j.ID)
		}
	}
	if len(holders) > 1 {
		r.t.Fatalf("%v: two deploy jobs of prod at once (%v)", parts, holders)
	}
	cur := r.s.Get(r.t, r.path("/current_job"), r.p.Token).Want(r.t, http.StatusOK)
	switch {
	case len(holders) == 0 && strings.TrimSpace(string(cur.Body)) != "null":
		r.t.Errorf("%v: current_job %s; want null", parts, cur.Body)
	case len(holders) == 1:
		var j jobJSON
		cur.JSON(r.t, &j)
		if j.ID != holders[0] {
			r.t.Errorf("%v: current_job %d; want %d", parts, j.ID, holders[0])
		}
	}
	return strings.Join(parts, " ")
}

// want checks the state.
func (r *capiSlots) want(step, want string) {
	r.t.Helper()
	if got := r.state(); got != want {
		r.t.Fatalf("%s: %s; want %s", step, got, want)
	}
}

// upcoming lists upcoming_jobs as pipeline numbers.
func (r *capiSlots) upcoming() string {
	r.t.Helper()
	var list []jobJSON
	r.s.Get(r.t, r.path("/upcoming_jobs"), r.p.Token).Want(r.t, http.StatusOK).JSON(r.t, &list)
	var out []string
	for _, j := range list {
		out = append(out, fmt.Sprintf("%d:%s", slices.Index(r.pipelines, j.Pipeline.ID)+1, j.Status))
	}
	return strings.Join(out, " ")
}

// capiWantJobBasic checks that a job has exactly the fields of GitLab's
// JobBasic (resource groups answer it, not the full job).
func capiWantJobBasic(t *testing.T, what string, job map[string]any) {
	t.Helper()
	want := []string{"allow_failure", "commit", "coverage", "created_at", "duration", "erased_at", "finished_at", "id", "name",
		"pipeline", "project", "queued_duration", "ref", "stage", "started_at", "status", "tag", "user", "web_url"}
	var got []string
	for k := range job {
		got = append(got, k)
	}
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("%s fields %v; want JobBasic's %v", what, got, want)
	}
	capiWantTypes(t, what, job, map[string]string{"id": "number", "status": "string", "stage": "string", "name": "string",
		"ref": "string", "tag": "boolean", "allow_failure": "boolean", "created_at": "string", "pipeline": "object", "user": "object",
		"commit": "object", "web_url": "string", "project": "object"})
}

// TestCIResources_api: the resource group endpoints: list, get, update
// of process_mode (400 for an unknown mode), upcoming and current jobs;
// developers read and update, reporters may not.
func TestCIResources_api(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		owner := s.NewUser(t, "owner")
		dev := s.NewUser(t, "dev")
		reporter := s.NewUser(t, "reporter")
		stranger := s.NewUser(t, "stranger")
		p := newCIProject(t, s, owner, "resources", map[string]string{".gitlab-ci.yml": capiResourceConfig})
		capiAddMember(t, s, owner.Token, p.ID, dev.ID, 30)
		capiAddMember(t, s, owner.Token, p.ID, reporter.ID, 20)
		base := fmt.Sprintf("/projects/%d/resource_groups", p.ID)
		s.Get(t, base, dev.Token).Want(t, http.StatusOK).WantBody(t, `[]`)
		s.Get(t, base+"/prod", dev.Token).Want(t, http.StatusNotFound).WantBody(t, `{"message":"404 Not found"}`)

		// Groups come with the jobs that name them.
		pl := p.createPipeline(t, "main")
		var list []map[string]any
		s.Get(t, base, dev.Token).Want(t, http.StatusOK).JSON(t, &list)
		if len(list) != 2 {
			t.Fatalf("resource groups %v; want prod and review/app", list)
		}
		keys := []string{}
		for _, g := range list {
			capiWantTypes(t, "resource group", g, map[string]string{"id": "number", "key": "string", "process_mode": "string",
				"created_at": "string", "updated_at": "string"})
			if len(g) != 5 {
				t.Errorf("resource group fields %v; want id, key, process_mode, created_at, updated_at", g)
			}
			keys = append(keys, g["key"].(string))
		}
		slices.Sort(keys)
		if strings.Join(keys, " ") != "prod review/app" {
			t.Errorf("keys %v", keys)
		}
		prod := s.Get(t, base+"/prod", dev.Token).Want(t, http.StatusOK).Object(t)
		capiWantFields(t, "prod", prod, map[string]any{"key": "prod", "process_mode": "unordered"})

		put := func(token, key string, body map[string]any) *apitest.Response {
			return s.Do(t, apitest.Request{Method: "PUT", Path: base + "/" + key, Token: token, JSON: body})
		}
		for _, mode := range []string{"oldest_first", "newest_first", "unordered"} {
			got := put(dev.Token, "prod", map[string]any{"process_mode": mode}).Want(t, http.StatusOK).Object(t)
			capiWantFields(t, "updated prod", got, map[string]any{"id": prod["id"], "key": "prod", "process_mode": mode})
			capiWantFields(t, "read back", s.Get(t, base+"/prod", dev.Token).Want(t, http.StatusOK).Object(t), map[string]any{"process_mode": mode})
		}
		capiWantFields(t, "no change", put(dev.Token, "prod", map[string]any{}).Want(t, http.StatusOK).Object(t),
			map[string]any{"process_mode": "unordered"})
		for _, bad := range []string{"fifo", "newest_ready_first", ""} {
			put(dev.Token, "prod", map[string]any{"process_mode": bad}).Want(t, http.StatusBadRequest).
				WantBody(t, `{"error":"process_mode does not have a valid value"}`)
		}
		put(dev.Token, "nowhere", map[string]any{"process_mode": "oldest_first"}).Want(t, http.StatusNotFound).
			WantBody(t, `{"message":"404 Not found"}`)

		// Who may.
		for _, path := range []string{base, base + "/prod", base + "/prod/upcoming_jobs", base + "/prod/current_job"} {
			s.Get(t, path, reporter.Token).Want(t, http.StatusForbidden).WantBody(t, `{"message":"403 Forbidden"}`)
			s.Get(t, path, stranger.Token).Want(t, http.StatusNotFound).WantBody(t, `{"message":"404 Project Not Found"}`)
		}
		put(reporter.Token, "prod", map[string]any{"process_mode": "oldest_first"}).Want(t, http.StatusForbidden).
			WantBody(t, `{"message":"403 Forbidden"}`)

		// Upcoming and current jobs: unordered waits only for jobs that
		// ask for the slot; oldest_first counts the created ones too.
		deploy := p.job(t, pl.ID, "deploy")
		s.Get(t, base+"/prod/upcoming_jobs", dev.Token).Want(t, http.StatusOK).WantBody(t, `[]`)
		s.Get(t, base+"/prod/current_job", dev.Token).Want(t, http.StatusOK).WantBody(t, `null`)
		put(dev.Token, "prod", map[string]any{"process_mode": "oldest_first"}).Want(t, http.StatusOK)
		var upcoming []map[string]any
		s.Get(t, base+"/prod/upcoming_jobs", dev.Token).Want(t, http.StatusOK).JSON(t, &upcoming)
		if len(upcoming) != 1 {
			t.Fatalf("upcoming %v; want deploy", upcoming)
		}
		capiWantFields(t, "upcoming deploy", upcoming[0], map[string]any{"id": float64(deploy.ID), "name": "deploy", "status": "created"})
		capiWantJobBasic(t, "upcoming deploy", upcoming[0])
		run(t, s, p.job(t, pl.ID, "build").ID, succeed)
		var cur jobJSON
		eventually(t, "deploy takes prod", func() bool {
			s.Get(t, base+"/prod/current_job", dev.Token).Want(t, http.StatusOK).JSON(t, &cur)
			return cur.ID == deploy.ID
		})
		if cur.Status != "pending" || cur.Name != "deploy" {
			t.Errorf("current job %+v", cur)
		}
		capiWantJobBasic(t, "current job", s.Get(t, base+"/prod/current_job", dev.Token).Want(t, http.StatusOK).Object(t))
		s.Get(t, base+"/prod/upcoming_jobs", dev.Token).Want(t, http.StatusOK).WantBody(t, `[]`)
		// A key with a slash is asked for encoded.
		capiWantFields(t, "slashed key", s.Get(t, base+"/review%2Fapp", dev.Token).Want(t, http.StatusOK).Object(t),
			map[string]any{"key": "review/app"})
		s.Get(t, base+"/nowhere/upcoming_jobs", dev.Token).Want(t, http.StatusNotFound).WantBody(t, `{"message":"404 Not found"}`)
		s.Get(t, base+"/nowhere/current_job", dev.Token).Want(t, http.StatusNotFound).WantBody(t, `{"message":"404 Not found"}`)
	})
}

// TestCIResources_unordered: unordered gives the slot first come, first
// served: the newest pipeline's deploy, ready first, runs first; the
// rest follow in the order they asked.
func TestCIResources_unordered(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		r := newCapiSlots(t, s, "unordered", "unordered")
		r.want("at creation", "1=created 2=created 3=created")
		r.ready(3)
		r.want("3 ready", "1=created 2=created 3=pending")
		r.ready(1)
		r.ready(2)
		r.want("1 and 2 ready", "1=waiting_for_resource 2=waiting_for_resource 3=pending")
		if got := r.upcoming(); got != "1:waiting_for_resource 2:waiting_for_resource" {
			t.Errorf("upcoming %s", got)
		}
		if st := r.p.pipeline(t, r.pipelines[0]).Status; st != "waiting_for_resource" {
			t.Errorf("pipeline 1 %s; want waiting_for_resource", st)
		}
		r.done(3)
		r.want("3 done", "1=pending 2=waiting_for_resource 3=success")
		r.done(1)
		r.want("1 done", "1=success 2=pending 3=success")
		r.done(2)
		r.want("all done", "1=success 2=success 3=success")
	})
}

// TestCIResources_oldestFirst: oldest_first gives the slot to the oldest
// pipeline's job, waiting for it even while newer jobs ask.
func TestCIResources_oldestFirst(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		r := newCapiSlots(t, s, "oldest", "oldest_first")
		r.ready(3)
		r.want("3 ready", "1=created 2=created 3=waiting_for_resource")
		if got := r.upcoming(); got != "1:created 2:created 3:waiting_for_resource" {
			t.Errorf("upcoming %s", got)
		}
		r.ready(2)
		r.want("2 ready", "1=created 2=waiting_for_resource 3=waiting_for_resource")
		r.ready(1)
		r.want("1 ready", "1=pending 2=waiting_for_resource 3=waiting_for_resource")
		if got := r.upcoming(); got != "2:waiting_for_resource 3:waiting_for_resource" {
			t.Errorf("upcoming %s", got)
		}
		r.done(1)
		r.want("1 done", "1=success 2=pending 3=waiting_for_resource")
		r.done(2)
		r.want("2 done", "1=success 2=success 3=pending")
		r.done(3)
		r.want("all done", "1=success 2=success 3=success")
	})
}

// TestCIResources_newestFirst: newest_first gives the slot to the newest
// pipeline's job, waiting for it even while older jobs ask.
func TestCIResources_newestFirst(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		r := newCapiSlots(t, s, "newest", "newest_first")
		r.ready(1)
		r.ready(2)
		r.want("1 and 2 ready", "1=waiting_for_resource 2=waiting_for_resource 3=created")
		if got := r.upcoming(); got != "3:created 2:waiting_for_resource 1:waiting_for_resource" {
			t.Errorf("upcoming %s", got)
		}
		r.ready(3)
		r.want("3 ready", "1=waiting_for_resource 2=waiting_for_resource 3=pending")
		r.done(3)
		r.want("3 done", "1=waiting_for_resource 2=pending 3=success")
		r.done(2)
		r.want("2 done", "1=pending 2=success 3=success")
		r.done(1)
		r.want("all done", "1=success 2=success 3=success")
	})
}

// TestCIResources_modeChange: changing the mode re-runs the assignment:
// a slot held back for the oldest pipeline goes to a waiting job once
// the group is unordered.
func TestCIResources_modeChange(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		r := newCapiSlots(t, s, "switch", "oldest_first")
		r.ready(2)
		r.want("2 ready", "1=created 2=waiting_for_resource 3=created")
		r.s.Do(t, apitest.Request{Method: "PUT", Path: r.path(""), Token: r.p.Token, JSON: map[string]any{"process_mode": "unordered"}}).
			Want(t, http.StatusOK)
		r.settle()
		r.want("unordered", "1=created 2=pending 3=created")
	})
}
