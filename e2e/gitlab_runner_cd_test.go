package e2e

import (
	"fmt"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"quarry/internal/apitest"
	"quarry/internal/storetest"
)

// deployCI deploys a review app with an ID token on the official runner.
const deployCI = `
deploy_review:
  stage: deploy
  environment:
    name: review/$CI_COMMIT_REF_SLUG
    url: https://$CI_COMMIT_REF_SLUG.review.example
    on_stop: stop_review
  id_tokens:
    CLOUD_TOKEN:
      aud: https://cloud.example
  script:
    - echo "env=$CI_ENVIRONMENT_NAME slug=$CI_ENVIRONMENT_SLUG url=$CI_ENVIRONMENT_URL tier=$CI_ENVIRONMENT_TIER action=$CI_ENVIRONMENT_ACTION"
    - echo "scoped=${REVIEW_ONLY:-absent} unscoped=${PROD_ONLY:-absent}"
    - printf '%s' "$CLOUD_TOKEN" > cloud.jwt
  artifacts:
    paths: [cloud.jwt]
stop_review:
  stage: deploy
  when: manual
  environment:
    name: review/$CI_COMMIT_REF_SLUG
    action: stop
  script:
    - echo "stopping $CI_ENVIRONMENT_NAME"
`

// TestGitLabRunner_deploys runs a deployment on the official gitlab-runner
// (set QUARRY_GITLAB_RUNNER, see README): the job sees CI_ENVIRONMENT_*
// and the variables scoped to its environment, its ID token verifies
// against the instance's JWKS with the environment's claims, the
// environment and its deployment are readable, and stopping the
// environment runs its on_stop job on the same runner.
func TestGitLabRunner_deploys(t *testing.T) {
	bin := os.Getenv("QUARRY_GITLAB_RUNNER")
	if bin == "" {
		t.Skip("NOT RUN: the official gitlab-runner deployment test needs QUARRY_GITLAB_RUNNER=/path/to/gitlab-runner")
	}
	t.Parallel()
	s := apitest.Start(t, storetest.Target{Name: "sqlite"}, func(c *config) { c.RunnerLongPoll = 2 * time.Second })
	owner := s.NewUser(t, "cdowner")
	p := newCIProject(t, s, owner, "cd", nil)
	for key, scope := range map[string]string{"REVIEW_ONLY": "review/*", "PROD_ONLY": "production"} {
		s.Do(t, apitest.Request{Method: "POST", Path: fmt.Sprintf("/projects/%d/variables", p.ID), Token: owner.Token,
			JSON: map[string]any{"key": key, "value": "for-" + scope, "environment_scope": scope}}).Want(t, http.StatusCreated)
	}
	r := projectRunner(t, p, map[string]any{"description": "official-cd"})
	gitLabRunner(bin, 1)(t, s.URL, r.Token, t.TempDir())
	p.commit(t, "main", map[string]string{".gitlab-ci.yml": deployCI})

	var pl pipelineJSON
	eventuallyFor(t, time.Minute, "the push pipeline", func() bool {
		list := p.pipelines(t, "source=push")
		if len(list) > 0 {
			pl = list[0]
		}
		return len(list) > 0
	})
	trace := func(id int64) string {
		return string(s.Get(t, fmt.Sprintf("/projects/%d/jobs/%d/trace", p.ID, id), owner.Token).Body)
	}
	var deploy jobJSON
	eventuallyFor(t, 2*time.Minute, "the deploy job", func() bool {
		deploy = p.job(t, pl.ID, "deploy_review")
		if deploy.Status == "failed" || deploy.Status == "canceled" {
			t.Fatalf("deploy_review %s (%s):\n%s", deploy.Status, deploy.FailureReason, trace(deploy.ID))
		}
		return deploy.Status == "success"
	})
	log := trace(deploy.ID)
	for _, want := range []string{
		"env=review/main slug=review-main-", " url=https://main.review.example tier=development action=start",
		"scoped=for-review/* unscoped=absent",
	} {
		if !strings.Contains(log, want) {
			t.Errorf("the deploy log lacks %q:\n%s", want, log)
		}
	}

	// The ID token, as a cloud provider verifies it.
	raw := s.Get(t, fmt.Sprintf("/projects/%d/jobs/%d/artifacts/cloud.jwt", p.ID, deploy.ID), owner.Token).Want(t, http.StatusOK).Body
	claims := jwt.MapClaims{}
	if _, err := jwt.ParseWithClaims(string(raw), claims, jwksKeyfunc(t, s), jwt.WithValidMethods([]string{"RS256"}),
		jwt.WithIssuer(s.URL), jwt.WithAudience("https://cloud.example"), jwt.WithExpirationRequired()); err != nil {
		t.Fatalf("the ID token does not verify: %v (%q)", err, raw)
	}
	if claims["environment"] != "review/main" || claims["environment_protected"] != "false" || claims["deployment_tier"] != "development" ||
		claims["sub"] != "project_path:"+p.Path+":ref_type:branch:ref:main" || claims["job_id"] != fmt.Sprint(deploy.ID) {
		t.Errorf("claims %v", claims)
	}

	// The environment and its deployment.
	envs := p.environments(t, "name=review/main")
	if len(envs) != 1 || envs[0].State != "available" || envs[0].ExternalURL == nil || *envs[0].ExternalURL != "https://main.review.example" {
		t.Fatalf("environments %+v", envs)
	}
	deps := p.deployments(t, "environment=review/main")
	if len(deps) != 1 || deps[0].Status != "success" || deps[0].Deployable == nil || deps[0].Deployable.ID != deploy.ID || deps[0].SHA != pl.SHA {
		t.Fatalf("deployments %+v", deps)
	}

	// Stopping it runs the on_stop job on the official runner.
	s.Do(t, apitest.Request{Method: "POST", Path: fmt.Sprintf("/projects/%d/environments/%d/stop", p.ID, envs[0].ID),
		Token: owner.Token}).Want(t, http.StatusOK)
	eventuallyFor(t, 2*time.Minute, "the environment stopped by its stop job", func() bool {
		stop := p.job(t, pl.ID, "stop_review")
		if stop.Status == "failed" || stop.Status == "canceled" {
			t.Fatalf("stop_review %s (%s):\n%s", stop.Status, stop.FailureReason, trace(stop.ID))
		}
		return p.environment(t, envs[0].ID).State == "stopped"
	})
	if log := trace(p.job(t, pl.ID, "stop_review").ID); !strings.Contains(log, "stopping review/main") {
		t.Errorf("the stop log:\n%s", log)
	}
}
