package e2e

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"quarry/internal/apitest"
	cfgpkg "quarry/internal/config"
	"quarry/internal/model"
	"quarry/internal/storetest"
)

// Environments and deployments: a pipeline with a review app (stopped by
// its on_stop job, through the API and by auto_stop_in), staging and
// production, run by Quarry's runner; forward deployment.

const envCI = `
stages: [review, deploy, production]
review:
  stage: review
  script:
    - echo "env=$CI_ENVIRONMENT_NAME slug=$CI_ENVIRONMENT_SLUG url=$CI_ENVIRONMENT_URL tier=$CI_ENVIRONMENT_TIER action=$CI_ENVIRONMENT_ACTION scoped=$SCOPED"
  environment:
    name: review/$CI_COMMIT_REF_SLUG
    url: https://$CI_COMMIT_REF_SLUG.example.com
    on_stop: stop_review
    auto_stop_in: 1 day
stop_review:
  stage: review
  script:
    - echo "stopping $CI_ENVIRONMENT_NAME action=$CI_ENVIRONMENT_ACTION"
  when: manual
  environment:
    name: review/$CI_COMMIT_REF_SLUG
    action: stop
staging:
  stage: deploy
  script:
    - echo "scoped=$SCOPED tier=$CI_ENVIRONMENT_TIER url=${CI_ENVIRONMENT_URL:-none}"
  environment: staging
production:
  stage: production
  id_tokens:
    ID_TOKEN: {aud: deploys}
  script:
    - echo "scoped=$SCOPED"
    - printf '%s' "$ID_TOKEN" > id.jwt
  artifacts:
    paths: [id.jwt]
  environment:
    name: production
    url: https://prod.example.com
`

// offsetClock is the real time moved by an offset the test sets (the
// runner works in real time; auto_stop_at follows the server's clock).
type offsetClock struct {
	mu  sync.Mutex
	off time.Duration
}

func (c *offsetClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return time.Now().Add(c.off)
}

func (c *offsetClock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.off += d
}

type envJSON struct {
	ID             int64           `json:"id"`
	Name           string          `json:"name"`
	Slug           string          `json:"slug"`
	State          string          `json:"state"`
	Tier           string          `json:"tier"`
	ExternalURL    *string         `json:"external_url"`
	AutoStopAt     *string         `json:"auto_stop_at"`
	CreatedAt      string          `json:"created_at"`
	LastDeployment *deploymentJSON `json:"last_deployment"`
}

type deploymentJSON struct {
	ID          int64    `json:"id"`
	IID         int64    `json:"iid"`
	Ref         string   `json:"ref"`
	SHA         string   `json:"sha"`
	Status      string   `json:"status"`
	FinishedAt  *string  `json:"finished_at"`
	Deployable  *jobJSON `json:"deployable"`
	Environment *struct {
		ID   int64  `json:"id"`
		Name string `json:"name"`
	} `json:"environment"`
	User *struct {
		Username string `json:"username"`
	} `json:"user"`
}

func (p ciProject) environments(t *testing.T, query string) []envJSON {
	t.Helper()
	var out []envJSON
	p.s.Get(t, fmt.Sprintf("/projects/%d/environments?%s", p.ID, query), p.Token).Want(t, http.StatusOK).JSON(t, &out)
	return out
}

func (p ciProject) environment(t *testing.T, id int64) envJSON {
	t.Helper()
	var out envJSON
	p.s.Get(t, fmt.Sprintf("/projects/%d/environments/%d", p.ID, id), p.Token).Want(t, http.StatusOK).JSON(t, &out)
	return out
}

func (p ciProject) deployments(t *testing.T, query string) []deploymentJSON {
	t.Helper()
	var out []deploymentJSON
	p.s.Get(t, fmt.Sprintf("/projects/%d/deployments?%s", p.ID, query), p.Token).Want(t, http.StatusOK).JSON(t, &out)
	return out
}

// TestEnvironments_pipeline runs a pipeline deploying a review app,
// staging and production on Quarry's runner and follows its
// environments and deployments through the API: the jobs' variables
// (CI_ENVIRONMENT_*, variables scoped by environment), states, stop by
// the API running the on_stop job, auto-stop when the clock passes
// auto_stop_at, and the ID token's environment claims.
func TestEnvironments_pipeline(t *testing.T) {
	t.Parallel()
	apitest.EachTarget(t, func(t *testing.T, target storetest.Target) {
		clock := &offsetClock{}
		s := apitest.Start(t, target, func(c *cfgpkg.Config) { c.Clock = clock.Now })
		owner := s.NewUser(t, "envowner")
		p := newCIProject(t, s, owner, "envs", nil)
		for _, v := range []struct{ scope, value string }{{"*", "all"}, {"review/*", "review"}, {"production", "prod"}} {
			s.Do(t, apitest.Request{Method: "POST", Path: fmt.Sprintf("/projects/%d/variables", p.ID), Token: owner.Token,
				JSON: map[string]any{"key": "SCOPED", "value": v.value, "environment_scope": v.scope}}).Want(t, http.StatusCreated)
		}
		r := projectRunner(t, p, map[string]any{"description": "envs"})
		quarryRunner(2)(t, s.URL, r.Token, t.TempDir())
		sha := p.commit(t, "feature/one", map[string]string{".gitlab-ci.yml": envCI})
		var pl pipelineJSON
		eventuallyFor(t, time.Minute, "the push pipeline", func() bool {
			list := p.pipelines(t, "ref="+url.QueryEscape("feature/one"))
			if len(list) > 0 {
				pl = list[0]
			}
			return len(list) > 0
		})
		trace := func(id int64) string {
			return string(s.Get(t, fmt.Sprintf("/projects/%d/jobs/%d/trace", p.ID, id), owner.Token).Body)
		}
		waitJobs := func(pipelineID int64, want map[string]string) map[string]jobJSON {
			t.Helper()
			var jobs map[string]jobJSON
			eventuallyFor(t, 2*time.Minute, fmt.Sprintf("jobs %v", want), func() bool {
				jobs = latest(p.ownJobs(t, pipelineID))
				for name, status := range want {
					j := jobs[name]
					if j.Status != status && (j.Status == "failed" || j.Status == "canceled") {
						t.Fatalf("job %s %s (%s):\n%s", name, j.Status, j.FailureReason, trace(j.ID))
					}
					if j.Status != status {
						return false
					}
				}
				return true
			})
			return jobs
		}
		jobs := waitJobs(pl.ID, map[string]string{"review": "success", "staging": "success", "production": "success", "stop_review": "manual"})

		reviewName := "review/feature-one"
		reviewSlug := model.EnvironmentSlug(reviewName)
		if len(reviewSlug) != 24 || !strings.HasPrefix(reviewSlug, "review-feature-on-") {
			t.Fatalf("review slug %q", reviewSlug)
		}
		for name, want := range map[string]string{
			"review": "env=" + reviewName + " slug=" + reviewSlug + " url=https://feature-one.example.com tier=development action=start scoped=review",
			// staging has no URL; "*" is its only scope.
			"staging":    "scoped=all tier=staging url=none",
			"production": "scoped=prod",
		} {
			if log := trace(jobs[name].ID); !strings.Contains(log, want) {
				t.Errorf("%s log lacks %q:\n%s", name, want, log)
			}
		}

		// The environments, made with their jobs, available.
		envs := p.environments(t, "")
		if len(envs) != 3 {
			t.Fatalf("environments %+v", envs)
		}
		byName := map[string]envJSON{}
		for _, e := range envs {
			byName[e.Name] = e
		}
		review, staging, prod := byName[reviewName], byName["staging"], byName["production"]
		if review.Slug != reviewSlug || review.State != "available" || review.Tier != "development" || review.ExternalURL == nil ||
			*review.ExternalURL != "https://feature-one.example.com" || review.AutoStopAt == nil {
			t.Errorf("review environment %+v", review)
		}
		if staging.Slug != "staging" || staging.Tier != "staging" || staging.ExternalURL != nil || staging.AutoStopAt != nil || staging.State != "available" {
			t.Errorf("staging environment %+v", staging)
		}
		if prod.Tier != "production" || prod.ExternalURL == nil || *prod.ExternalURL != "https://prod.example.com" {
			t.Errorf("production environment %+v", prod)
		}
		if at, err := time.Parse(time.RFC3339, *review.AutoStopAt); err != nil || at.Sub(clock.Now()) < 23*time.Hour || at.Sub(clock.Now()) > 25*time.Hour {
			t.Errorf("review auto_stop_at %v (%v); want a day from now", *review.AutoStopAt, err)
		}
		if got := p.environments(t, "search=FEAT"); len(got) != 1 || got[0].Name != reviewName {
			t.Errorf("search=FEAT: %+v", got)
		}
		if got := p.environments(t, "name=staging&states=available"); len(got) != 1 || got[0].ID != staging.ID {
			t.Errorf("name=staging: %+v", got)
		}
		if got := p.environments(t, "states=stopped"); len(got) != 0 {
			t.Errorf("states=stopped: %+v", got)
		}

		// One deployment per start job, following its job to success;
		// the stop job has none.
		deps := p.deployments(t, "order_by=iid&sort=asc")
		if len(deps) != 3 {
			t.Fatalf("deployments %+v", deps)
		}
		for i, d := range deps {
			if d.IID != int64(i+1) || d.Status != "success" || d.SHA != sha || d.Ref != "feature/one" || d.FinishedAt == nil ||
				d.Deployable == nil || d.Environment == nil || d.User == nil || d.User.Username != "envowner" {
				t.Errorf("deployment %d: %+v", i, d)
			}
		}
		if deps[0].Deployable.Name != "review" || deps[0].Environment.Name != reviewName || deps[2].Deployable.Name != "production" {
			t.Errorf("deployments' jobs %+v %+v", deps[0].Deployable, deps[2].Deployable)
		}
		if got := p.deployments(t, "environment=production"); len(got) != 1 || got[0].Deployable.ID != jobs["production"].ID {
			t.Errorf("environment=production: %+v", got)
		}
		if got := p.deployments(t, "status=failed"); len(got) != 0 {
			t.Errorf("status=failed: %+v", got)
		}
		got := p.environment(t, review.ID)
		if got.LastDeployment == nil || got.LastDeployment.ID != deps[0].ID || got.LastDeployment.Deployable == nil ||
			got.LastDeployment.Deployable.Name != "review" || got.LastDeployment.Environment != nil {
			t.Errorf("review's last deployment %+v", got.LastDeployment)
		}

		// The ID token of a deploying job carries its environment.
		raw := s.Get(t, fmt.Sprintf("/projects/%d/jobs/%d/artifacts/id.jwt", p.ID, jobs["production"].ID), owner.Token).Want(t, http.StatusOK).Body
		parts := strings.Split(string(raw), ".")
		if len(parts) != 3 {
			t.Fatalf("id token %q", raw)
		}
		payload, err := base64.RawURLEncoding.DecodeString(parts[1])
		if err != nil {
			t.Fatal(err)
		}
		var claims map[string]any
		if err := json.Unmarshal(payload, &claims); err != nil {
			t.Fatal(err)
		}
		if claims["environment"] != "production" || claims["environment_protected"] != "false" || claims["deployment_tier"] != "production" {
			t.Errorf("environment claims %v %v %v", claims["environment"], claims["environment_protected"], claims["deployment_tier"])
		}

		// Stop through the API: the on_stop job runs; the environment is
		// stopping until it succeeds.
		var stopped envJSON
		s.Do(t, apitest.Request{Method: "POST", Path: fmt.Sprintf("/projects/%d/environments/%d/stop", p.ID, review.ID),
			Token: owner.Token}).Want(t, http.StatusOK).JSON(t, &stopped)
		if stopped.State != "stopping" && stopped.State != "stopped" {
			t.Errorf("stopped review %+v", stopped)
		}
		jobs = waitJobs(pl.ID, map[string]string{"stop_review": "success"})
		if log := trace(jobs["stop_review"].ID); !strings.Contains(log, "stopping "+reviewName+" action=stop") {
			t.Errorf("stop job log:\n%s", trace(jobs["stop_review"].ID))
		}
		eventuallyFor(t, 30*time.Second, "review stopped", func() bool { return p.environment(t, review.ID).State == "stopped" })
		if got := p.environment(t, review.ID); got.AutoStopAt != nil {
			t.Errorf("a stopped environment keeps auto_stop_at %v", *got.AutoStopAt)
		}
		// Only a stopped environment may go; staging may not (403).
		s.Do(t, apitest.Request{Method: "DELETE", Path: fmt.Sprintf("/projects/%d/environments/%d", p.ID, staging.ID),
			Token: owner.Token}).Want(t, http.StatusForbidden)

		// Deploying again starts it; auto_stop_in stops it (running the
		// stop job again) once the clock passes auto_stop_at, exactly once.
		var retried jobJSON
		s.Do(t, apitest.Request{Method: "POST", Path: fmt.Sprintf("/projects/%d/jobs/%d/retry", p.ID, jobs["review"].ID),
			Token: owner.Token}).Want(t, http.StatusCreated).JSON(t, &retried)
		waitJobs(pl.ID, map[string]string{"review": "success"})
		eventuallyFor(t, 30*time.Second, "review available again", func() bool {
			e := p.environment(t, review.ID)
			return e.State == "available" && e.AutoStopAt != nil
		})
		if got := p.deployments(t, "environment="+url.QueryEscape(reviewName)+"&order_by=id&sort=desc"); len(got) != 2 ||
			got[0].Deployable.ID != retried.ID || got[0].Status != "success" || got[0].IID != 4 {
			t.Errorf("review's deployments after the retry %+v", got)
		}
		stopRuns := len(p.jobsNamed(t, pl.ID, "stop_review"))
		clock.Add(25 * time.Hour)
		eventuallyFor(t, time.Minute, "review stopped by auto_stop_in", func() bool { return p.environment(t, review.ID).State == "stopped" })
		if n := len(p.jobsNamed(t, pl.ID, "stop_review")); n != stopRuns+1 {
			t.Errorf("stop_review ran %d more times; want once", n-stopRuns)
		}
		for _, e := range p.environments(t, "") {
			if e.Name != reviewName && e.State != "available" {
				t.Errorf("%s is %s; only review had auto_stop_in", e.Name, e.State)
			}
		}
		s.Do(t, apitest.Request{Method: "DELETE", Path: fmt.Sprintf("/projects/%d/environments/%d", p.ID, review.ID),
			Token: owner.Token}).Want(t, http.StatusNoContent)
		s.Get(t, fmt.Sprintf("/projects/%d/environments/%d", p.ID, review.ID), owner.Token).Want(t, http.StatusNotFound)
	})
}

// jobsNamed lists a pipeline's jobs (retried ones too) of a name.
func (p ciProject) jobsNamed(t *testing.T, pipelineID int64, name string) []jobJSON {
	t.Helper()
	var out []jobJSON
	for _, j := range p.jobs(t, pipelineID) {
		if j.Name == name {
			out = append(out, j)
		}
	}
	return out
}

const forwardCI = `
canary:
  script: [echo canary]
  when: manual
  environment: canary
`

// TestEnvironments_forwardDeployment: a deployment job older than the
// environment's last successful deployment fails before it runs
// (forward_deployment_failure), and its deployment fails with it; with
// ci_forward_deployment_enabled off it runs.
func TestEnvironments_forwardDeployment(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		owner := s.NewUser(t, "fwdowner")
		p := newCIProject(t, s, owner, "fwd", nil)
		r := projectRunner(t, p, map[string]any{"description": "fwd"})
		quarryRunner(1)(t, s.URL, r.Token, t.TempDir())
		p.commit(t, "main", map[string]string{".gitlab-ci.yml": forwardCI})
		p.commit(t, "main", map[string]string{"other.txt": "x"})
		p.settle(t, 2)
		list := p.pipelines(t, "source=push&sort=asc")
		if len(list) != 2 {
			t.Fatalf("pipelines %+v", list)
		}
		older, newer := list[0], list[1]
		play := func(pl pipelineJSON) jobJSON {
			j := p.job(t, pl.ID, "canary")
			s.Do(t, apitest.Request{Method: "POST", Path: fmt.Sprintf("/projects/%d/jobs/%d/play", p.ID, j.ID), Token: owner.Token}).Want(t, http.StatusOK)
			return j
		}
		wait := func(pl pipelineJSON, status string) jobJSON {
			var j jobJSON
			eventuallyFor(t, time.Minute, "canary "+status, func() bool {
				j = p.job(t, pl.ID, "canary")
				return j.Status == status
			})
			return j
		}
		play(newer)
		wait(newer, "success")
		play(older)
		j := wait(older, "failed")
		if j.FailureReason != "forward_deployment_failure" || j.StartedAt != nil {
			t.Errorf("outdated job %+v", j)
		}
		deps := p.deployments(t, "environment=canary&order_by=id")
		if len(deps) != 2 || deps[0].Status != "failed" || deps[0].Deployable.ID != j.ID || deps[1].Status != "success" {
			t.Errorf("canary deployments %+v", deps)
		}
		env := p.environments(t, "name=canary")
		if len(env) != 1 || env[0].Tier != "other" {
			t.Fatalf("canary %+v", env)
		}
		if last := p.environment(t, env[0].ID).LastDeployment; last == nil || last.ID != deps[1].ID {
			t.Errorf("canary's last deployment %+v", last)
		}
	})
}

const guardCI = `
locked:
  script: [echo never]
  environment: locked
stop_locked:
  script: [echo never]
  environment: {name: locked, action: stop}
prepare_locked:
  script: [echo "prepared $CI_ENVIRONMENT_ACTION"]
  environment: {name: locked, action: prepare}
production:
  id_tokens:
    ID_TOKEN: {aud: deploys}
  script:
    - printf '%s' "$ID_TOKEN" > id.jwt
  artifacts:
    paths: [id.jwt]
  environment: production
`

// TestEnvironments_protected: with protected environments ("locked"
// for Maintainers, "production" for Developers), a Developer's job
// deploying to locked (start or stop) fails before it runs with
// protected_environment_failure, prepare runs, production deploys and its
// ID token says the environment is protected; a Maintainer's pipeline
// deploys to locked; an API deployment the rules refuse is 403.
func TestEnvironments_protected(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		owner := s.NewUser(t, "guardowner")
		dev := s.NewUser(t, "guarddev")
		p := newCIProject(t, s, owner, "guard", nil)
		s.Do(t, apitest.Request{Method: "POST", Path: fmt.Sprintf("/projects/%d/members", p.ID), Token: owner.Token,
			JSON: map[string]any{"user_id": dev.ID, "access_level": 30}}).Want(t, http.StatusCreated)
		for name, level := range map[string]int{"locked": 40, "production": 30} {
			s.Do(t, apitest.Request{Method: "POST", Path: fmt.Sprintf("/projects/%d/protected_environments", p.ID), Token: owner.Token,
				JSON: map[string]any{"name": name, "deploy_access_levels": []any{map[string]any{"access_level": level}}}}).Want(t, http.StatusCreated)
		}
		r := projectRunner(t, p, map[string]any{"description": "guard"})
		quarryRunner(1)(t, s.URL, r.Token, t.TempDir())
		p.commit(t, "main", map[string]string{".gitlab-ci.yml": guardCI})
		p.settle(t, 1)
		devp := p
		devp.Token = dev.Token
		devp.commit(t, "feature", map[string]string{"README.md": "by a developer"})
		finished := func(pl pipelineJSON) map[string]jobJSON {
			var jobs map[string]jobJSON
			eventuallyFor(t, time.Minute, "the jobs done", func() bool {
				jobs = latest(p.ownJobs(t, pl.ID))
				for _, j := range jobs {
					if j.Status != "success" && j.Status != "failed" {
						return false
					}
				}
				return len(jobs) == 4
			})
			return jobs
		}
		var pl pipelineJSON
		eventuallyFor(t, time.Minute, "the developer's pipeline", func() bool {
			list := p.pipelines(t, "ref=feature")
			if len(list) > 0 {
				pl = list[0]
			}
			return len(list) > 0
		})
		jobs := finished(pl)
		for name, want := range map[string]string{"locked": "protected_environment_failure", "stop_locked": "protected_environment_failure",
			"prepare_locked": "", "production": ""} {
			if j := jobs[name]; j.FailureReason != want || (want == "") != (j.Status == "success") {
				t.Errorf("developer's %s: %s (%s); want failure reason %q", name, j.Status, j.FailureReason, want)
			}
		}
		raw := s.Get(t, fmt.Sprintf("/projects/%d/jobs/%d/artifacts/id.jwt", p.ID, jobs["production"].ID), owner.Token).Want(t, http.StatusOK).Body
		parts := strings.Split(string(raw), ".")
		if len(parts) != 3 {
			t.Fatalf("id token %q", raw)
		}
		payload, err := base64.RawURLEncoding.DecodeString(parts[1])
		if err != nil {
			t.Fatal(err)
		}
		var claims map[string]any
		if err := json.Unmarshal(payload, &claims); err != nil {
			t.Fatal(err)
		}
		if claims["environment"] != "production" || claims["environment_protected"] != "true" || claims["deployment_tier"] != "production" {
			t.Errorf("claims %v", claims)
		}
		// The owner's push pipeline (a Maintainer and more) deploys to
		// locked.
		jobs = finished(p.pipelines(t, "ref=main")[0])
		if j := jobs["locked"]; j.Status != "success" {
			t.Errorf("owner's locked: %s (%s)", j.Status, j.FailureReason)
		}
		byRef := map[string]string{}
		for _, d := range p.deployments(t, "environment=locked") {
			byRef[d.Ref] = d.Status
		}
		if len(byRef) != 2 || byRef["feature"] != "failed" || byRef["main"] != "success" {
			t.Errorf("locked's deployments by ref %v", byRef)
		}
		// An API deployment the rules refuse is 403.
		s.Do(t, apitest.Request{Method: "POST", Path: fmt.Sprintf("/projects/%d/deployments", p.ID), Token: dev.Token,
			JSON: map[string]any{"environment": "locked", "sha": pl.SHA, "ref": "feature", "tag": false, "status": "success"}}).Want(t, http.StatusForbidden)
	})
}

// autoStopCI deploys four review apps, each stopped by its manual stop
// job, each to stop by itself an hour after it deployed.
func autoStopCI() string {
	var b strings.Builder
	for i := 1; i <= 4; i++ {
		fmt.Fprintf(&b, "deploy%d:\n  script: [echo]\n  environment: {name: review/app%d, on_stop: stop%d, auto_stop_in: 1 hour}\n", i, i, i)
		fmt.Fprintf(&b, "stop%d:\n  script: [echo]\n  when: manual\n  environment: {name: review/app%d, action: stop}\n", i, i)
	}
	return b.String()
}

// TestEnvironments_autoStopOnce: when the clock passes auto_stop_at, each
// environment is stopped once — its stop job played once — also with two
// Quarry processes sharing one PostgreSQL database and its task queue
// (one process on SQLite).
func TestEnvironments_autoStopOnce(t *testing.T) {
	t.Parallel()
	apitest.EachTarget(t, func(t *testing.T, target storetest.Target) {
		clock := &offsetClock{}
		dir := t.TempDir()
		opt := func(c *cfgpkg.Config) { c.Clock = clock.Now }
		s := apitest.StartIn(t, target, dir, opt)
		if target.DatabaseURL != "" {
			// A second process on the same database: its task workers
			// race the first's for the auto-stop tasks.
			apitest.StartIn(t, target, dir, opt)
		}
		owner := s.NewUser(t, "autostop")
		p := newCIProject(t, s, owner, "autostop", nil)
		p.commit(t, "main", map[string]string{".gitlab-ci.yml": autoStopCI()})
		p.settle(t, 1)
		pl := p.pipelines(t, "source=push")[0]
		for i := 1; i <= 4; i++ {
			run(t, s, p.job(t, pl.ID, fmt.Sprintf("deploy%d", i)).ID, succeed)
		}
		envs := p.environments(t, "search=app")
		if len(envs) != 4 {
			t.Fatalf("environments %+v", envs)
		}
		for _, e := range envs {
			if e.State != "available" || e.AutoStopAt == nil {
				t.Fatalf("%s: %+v", e.Name, e)
			}
		}
		clock.Add(30 * time.Minute)
		// Not yet due: nothing happens (a worker that looks finds it early).
		for _, e := range p.environments(t, "search=app") {
			if e.State != "available" {
				t.Errorf("%s %s before its time", e.Name, e.State)
			}
		}
		clock.Add(time.Hour)
		eventuallyFor(t, time.Minute, "every review app stopping", func() bool {
			for _, e := range p.environments(t, "search=app") {
				if e.State != "stopping" {
					return false
				}
			}
			return true
		})
		for i := 1; i <= 4; i++ {
			runs := p.jobsNamed(t, pl.ID, fmt.Sprintf("stop%d", i))
			if len(runs) != 1 || runs[0].Status != "pending" {
				t.Errorf("stop%d: %+v; want one run, pending", i, runs)
				continue
			}
			run(t, s, runs[0].ID, succeed)
		}
		for _, e := range p.environments(t, "search=app") {
			if e.State != "stopped" || e.AutoStopAt != nil {
				t.Errorf("%s after its stop job: %s, auto_stop_at %v", e.Name, e.State, e.AutoStopAt)
			}
		}
	})
}
