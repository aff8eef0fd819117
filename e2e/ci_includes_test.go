package e2e

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"quarry/internal/apitest"
)

// incJobs is the names and stages of a pipeline's jobs, sorted.
func incJobs(t *testing.T, p ciProject, pipelineID int64) []string {
	t.Helper()
	var out []string
	for _, j := range p.jobs(t, pipelineID) {
		out = append(out, j.Name+"@"+j.Stage)
	}
	slices.Sort(out)
	return out
}

// incCreateFails asks for a pipeline and expects GitLab's 400 with the
// configuration's error.
func incCreateFails(t *testing.T, s *apitest.Server, p ciProject, want string) {
	t.Helper()
	var body struct {
		Message struct {
			Base []string `json:"base"`
		} `json:"message"`
	}
	s.Do(t, apitest.Request{Method: "POST", Path: fmt.Sprintf("/projects/%d/pipeline", p.ID), Token: p.Token,
		JSON: map[string]any{"ref": "main"}}).Want(t, http.StatusBadRequest).JSON(t, &body)
	if len(body.Message.Base) != 1 || body.Message.Base[0] != want {
		t.Fatalf("create pipeline: %q; want %q", body.Message.Base, want)
	}
}

const incTemplate = `spec:
  inputs:
    stage:
      default: test
      options: [test, deploy]
    name:
      regex: ^[a-z]+$
    retries:
      type: number
      default: 1
---
include:
  - local: ci/parts.yml

"$[[ inputs.name ]]-job":
  stage: $[[ inputs.stage ]]
  retry: $[[ inputs.retries ]]
  script: ['echo $[[ inputs.name | truncate(0,3) ]]']
`

// TestCIIncludes_project: a pipeline of project A includes a template of
// project B with inputs; the template's own include:local is read in B.
// A user who cannot read B gets GitLab's error, on the API and on the
// push pipeline (failed, with its yaml_errors); once a reporter of B,
// the pipeline runs the included jobs, shaped by the inputs.
func TestCIIncludes_project(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		lib := s.NewUser(t, "lib")
		dev := s.NewUser(t, "dev")
		b := newCIProject(t, s, lib, "templates", map[string]string{
			"ci/tmpl.yml":    incTemplate,
			"ci/parts.yml":   "part:\n  stage: test\n  script: [from-b]\n",
			".gitlab-ci.yml": "own:\n  script: [x]\n",
		})
		b.commit(t, "v1", map[string]string{"ci/parts.yml": "part-v1:\n  stage: test\n  script: [from-b-v1]\n"})
		config := "stages: [test, deploy]\ninclude:\n  - project: " + b.Path + "\n    file: /ci/tmpl.yml\n    inputs:\n      name: release\n      stage: deploy\n" +
			"a-job:\n  script: [a]\n"
		a := newCIProject(t, s, dev, "app", map[string]string{".gitlab-ci.yml": config, "ci/parts.yml": "not-this:\n  script: [from-a]\n"})

		denied := "Project `" + b.Path + "` not found or access denied! Make sure any includes in the pipeline configuration are correctly defined."
		a.settle(t, 1)
		push := a.pipelines(t, "source=push")
		if len(push) != 1 {
			t.Fatalf("push pipelines %+v", push)
		}
		if got := a.pipeline(t, push[0].ID); got.Status != "failed" || pushDeref(got.YAMLErrors) != denied {
			t.Fatalf("push pipeline without access to %s: %+v (yaml_errors %s)", b.Path, got, pushDeref(got.YAMLErrors))
		}
		incCreateFails(t, s, a, denied)

		trigAddMember(t, s, b, dev, 20)
		pl := a.createPipeline(t, "main")
		if pl.Status != "pending" || pl.YAMLErrors != nil {
			t.Fatalf("pipeline with access: %+v", pl)
		}
		if got, want := incJobs(t, a, pl.ID), []string{"a-job@test", "part@test", "release-job@deploy"}; !slices.Equal(got, want) {
			t.Fatalf("jobs %v; want %v", got, want)
		}

		// A ref of B: its own local include is read at that ref too.
		a.commit(t, "main", map[string]string{".gitlab-ci.yml": strings.Replace(config, "    file:", "    ref: v1\n    file:", 1)})
		pl = a.createPipeline(t, "main")
		if got, want := incJobs(t, a, pl.ID), []string{"a-job@test", "part-v1@test", "release-job@deploy"}; !slices.Equal(got, want) {
			t.Fatalf("jobs at v1 %v; want %v", got, want)
		}

		for _, c := range []struct{ include, want string }{
			{"  - project: " + b.Path + "\n    ref: nope\n    file: ci/tmpl.yml\n", "Project `" + b.Path + "` reference `nope` does not exist!"},
			{"  - project: " + b.Path + "\n    file: ci/missing.yml\n", "Project `" + b.Path + "` file `ci/missing.yml` does not exist!"},
			{"  - project: " + b.Path + "\n    file: ci/tmpl.yml\n    inputs: {name: Bad}\n", "`ci/tmpl.yml`: `name` input: provided value does not match required RegEx pattern"},
			{"  - project: " + b.Path + "\n    file: ci/tmpl.yml\n", "`ci/tmpl.yml`: `name` input: required value has not been provided"},
			{"  - project: " + b.Path + "\n    file: ci/tmpl.yml\n    inputs: {name: x, other: 1}\n", "`ci/tmpl.yml`: unknown input arguments: other"},
			{"  - project: group/x\n    file: ci.yml\n", "Project `group/x` not found or access denied! Make sure any includes in the pipeline configuration are correctly defined."},
			{"  - template: Auto-DevOps.gitlab-ci.yml\n", "Template file `Auto-DevOps.gitlab-ci.yml` could not be fetched because template includes are not supported!"},
		} {
			a.commit(t, "main", map[string]string{".gitlab-ci.yml": "include:\n" + c.include + "a-job:\n  script: [a]\n"})
			incCreateFails(t, s, a, c.want)
		}

		// The project's own file may have a spec header: its defaults.
		a.commit(t, "main", map[string]string{".gitlab-ci.yml": "spec:\n  inputs:\n    env: {default: staging}\n---\n" +
			"deploy-$[[ inputs.env ]]:\n  script: [deploy]\n"})
		pl = a.createPipeline(t, "main")
		if got, want := incJobs(t, a, pl.ID), []string{"deploy-staging@test"}; !slices.Equal(got, want) {
			t.Fatalf("jobs of a file with a header %v; want %v", got, want)
		}
	})
}

// TestCIIncludes_remote: include:remote fetches from a local server when
// the instance allows local requests, and is refused otherwise.
func TestCIIncludes_remote(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/ci.yml":
			fmt.Fprint(w, "spec:\n  inputs:\n    suffix: {default: one}\n---\nremote-$[[ inputs.suffix ]]:\n  script: [r]\n")
		case "/redirect.yml":
			http.Redirect(w, r, "/ci.yml", http.StatusFound)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		owner := s.NewUser(t, "owner")
		config := func(path string) string {
			return "include:\n  - remote: " + srv.URL + path + "\n    inputs: {suffix: two}\nlocal-job:\n  script: [l]\n"
		}
		p := newCIProject(t, s, owner, "remote", map[string]string{".gitlab-ci.yml": config("/ci.yml")})
		p.settle(t, 1)

		incCreateFails(t, s, p, "Remote file could not be fetched because URL is blocked: Requests to localhost are not allowed!")

		s.Do(t, apitest.Request{Method: "PUT", Path: "/application/settings", Token: s.RootToken,
			JSON: map[string]any{"allow_local_requests_from_web_hooks_and_services": true}}).Want(t, http.StatusOK)
		pl := p.createPipeline(t, "main")
		if got, want := incJobs(t, p, pl.ID), []string{"local-job@test", "remote-two@test"}; !slices.Equal(got, want) {
			t.Fatalf("jobs %v; want %v", got, want)
		}
		p.commit(t, "main", map[string]string{".gitlab-ci.yml": config("/redirect.yml")})
		pl = p.createPipeline(t, "main")
		if got, want := incJobs(t, p, pl.ID), []string{"local-job@test", "remote-two@test"}; !slices.Equal(got, want) {
			t.Fatalf("jobs through a redirect %v; want %v", got, want)
		}
		p.commit(t, "main", map[string]string{".gitlab-ci.yml": config("/missing.yml")})
		incCreateFails(t, s, p, "Remote file `"+srv.URL+"/missing.yml` could not be fetched because of HTTP code `404` error!")

		s.Do(t, apitest.Request{Method: "PUT", Path: "/application/settings", Token: s.RootToken,
			JSON: map[string]any{"allow_local_requests_from_web_hooks_and_services": false}}).Want(t, http.StatusOK)
		p.commit(t, "main", map[string]string{".gitlab-ci.yml": config("/ci.yml")})
		incCreateFails(t, s, p, "Remote file could not be fetched because URL is blocked: Requests to localhost are not allowed!")
	})
}
