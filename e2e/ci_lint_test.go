package e2e

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	gitlab "gitlab.com/gitlab-org/api/client-go"

	"quarry/internal/apitest"
)

// lintJSON is the lint answer read raw (the client has no jobs field).
type lintJSON struct {
	Valid      bool             `json:"valid"`
	Errors     []string         `json:"errors"`
	Warnings   []string         `json:"warnings"`
	MergedYAML *string          `json:"merged_yaml"`
	Includes   []map[string]any `json:"includes"`
	Jobs       []map[string]any `json:"jobs"`
}

func lintPost(t *testing.T, s *apitest.Server, p ciProject, token string, body map[string]any, want int) lintJSON {
	t.Helper()
	var out lintJSON
	r := s.Do(t, apitest.Request{Method: "POST", Path: fmt.Sprintf("/projects/%d/ci/lint", p.ID), Token: token, JSON: body}).Want(t, want)
	if want == http.StatusOK {
		r.JSON(t, &out)
	}
	return out
}

const lintPart = "part:\n  stage: build\n  script: [echo part]\n  tags: [docker]\n  environment: {name: staging}\n"

// TestCILint_static: given content and the project's own file are
// checked in the project's context: valid and invalid configurations,
// jobs on request, the merged YAML and the includes' metadata, bad
// parameters and oversize content.
func TestCILint_static(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		owner := s.NewUser(t, "linter")
		p := newCIProject(t, s, owner, "lint", map[string]string{
			".gitlab-ci.yml": "include: ci/part.yml\ntest:\n  script: [echo test]\n  needs: [part]\n",
			"ci/part.yml":    lintPart,
		})
		head := p.commit(t, "main", map[string]string{"README.md": "lint\n"})
		c := s.Client(t, owner.Token)

		// The official client: valid content with a local include.
		content := "include: /ci/part.yml\nstages: [build, test]\nlint-job:\n  script: [echo hi]\n"
		res, _, err := c.Validate.ProjectNamespaceLint(p.ID, &gitlab.ProjectNamespaceLintOptions{Content: &content})
		if err != nil {
			t.Fatal(err)
		}
		if !res.Valid || len(res.Errors) != 0 || res.Warnings == nil {
			t.Fatalf("lint = %+v; want valid", res)
		}
		wantYAML := "---\npart:\n  stage: build\n  script:\n  - echo part\n  tags:\n  - docker\n  environment:\n    name: staging\n" +
			"stages:\n- .pre\n- build\n- test\n- .post\nlint-job:\n  script:\n  - echo hi\n"
		if res.MergedYaml != wantYAML {
			t.Errorf("merged_yaml =\n%s\nwant\n%s", res.MergedYaml, wantYAML)
		}
		if len(res.Includes) != 1 {
			t.Fatalf("includes = %+v; want one", res.Includes)
		}
		inc := res.Includes[0]
		if inc.Type != "local" || inc.Location != "ci/part.yml" || inc.ContextProject != p.Path || inc.ContextSHA != head ||
			!strings.HasSuffix(inc.Blob, "/"+p.Path+"/-/blob/"+head+"/ci/part.yml") || !strings.HasPrefix(inc.Blob, "http") ||
			!strings.HasSuffix(inc.Raw, "/"+p.Path+"/-/raw/"+head+"/ci/part.yml") || inc.Extra == nil || len(inc.Extra) != 0 {
			t.Errorf("include = %+v", inc)
		}

		// include_jobs: GitLab's job fields, stage by stage.
		got := lintPost(t, s, p, owner.Token, map[string]any{"content": content + "late:\n  stage: .post\n  script: [x]\n  needs: [{job: part, artifacts: false}]\n  only: [main]\n",
			"include_jobs": true}, http.StatusOK)
		if !got.Valid || len(got.Jobs) != 3 {
			t.Fatalf("lint with jobs = %+v", got)
		}
		names := []string{}
		for _, j := range got.Jobs {
			names = append(names, j["name"].(string)+"@"+j["stage"].(string))
		}
		if strings.Join(names, ",") != "part@build,lint-job@test,late@.post" {
			t.Errorf("jobs = %v", names)
		}
		part := got.Jobs[0]
		for k, want := range map[string]string{"before_script": "[]", "script": "[echo part]", "after_script": "[]", "tag_list": "[docker]",
			"environment": "staging", "when": "on_success", "allow_failure": "false", "only": "map[refs:[branches tags]]",
			"except": "<nil>", "needs": "<nil>"} {
			if v, ok := part[k]; !ok || fmt.Sprint(v) != want {
				t.Errorf("job part %s = %v (present %v); want %s", k, v, ok, want)
			}
		}
		if late := got.Jobs[2]; fmt.Sprint(late["needs"]) != "[map[artifacts:false name:part optional:false]]" || fmt.Sprint(late["only"]) != "map[refs:[main]]" {
			t.Errorf("job late = %v", late)
		}
		if got := lintPost(t, s, p, owner.Token, map[string]any{"content": content}, http.StatusOK); got.Jobs != nil {
			t.Errorf("jobs without include_jobs: %v", got.Jobs)
		}

		// Invalid configurations: GitLab's errors, no merged YAML.
		for src, want := range map[string]string{
			".hidden:\n  script: [x]\n":            "jobs config should contain at least one visible job",
			"include: ci/nope.yml\nj: {script: x}": "Local file `ci/nope.yml` does not exist!",
			"j: {script: x, when: later}":          "jobs:j when should be one of: on_success, on_failure, always, manual, delayed",
			"":                                     "Please provide content of .gitlab-ci.yml",
		} {
			got := lintPost(t, s, p, owner.Token, map[string]any{"content": src, "include_jobs": true}, http.StatusOK)
			if got.Valid || len(got.Errors) != 1 || got.Errors[0] != want || got.MergedYAML != nil || got.Warnings == nil ||
				got.Includes == nil || got.Jobs == nil || len(got.Jobs) != 0 {
				t.Errorf("lint %q = %+v; want the error %q", src, got, want)
			}
		}

		// Bad input.
		s.Do(t, apitest.Request{Method: "POST", Path: fmt.Sprintf("/projects/%d/ci/lint", p.ID), Token: owner.Token,
			JSON: map[string]any{"dry_run": true}}).Want(t, http.StatusBadRequest).WantBody(t, `{"error":"content is missing"}`)
		s.Do(t, apitest.Request{Method: "POST", Path: fmt.Sprintf("/projects/%d/ci/lint", p.ID), Token: owner.Token,
			JSON: map[string]any{"content": "a: 1", "dry_run": "maybe"}}).Want(t, http.StatusBadRequest).WantBody(t, `{"error":"dry_run is invalid"}`)
		big := "j: {script: x}\n#" + strings.Repeat("x", 1<<20)
		if got := lintPost(t, s, p, owner.Token, map[string]any{"content": big}, http.StatusOK); got.Valid || fmt.Sprint(got.Errors) != "[The parsed YAML is too big]" {
			t.Errorf("oversize content: %+v", got)
		}
		huge := strings.Repeat("x", 11<<20)
		if st := s.Do(t, apitest.Request{Method: "POST", Path: fmt.Sprintf("/projects/%d/ci/lint", p.ID), Token: owner.Token,
			JSON: map[string]any{"content": huge}}).Status; st != http.StatusRequestEntityTooLarge {
			t.Errorf("content over the body limit: %d; want 413", st)
		}

		// GET: the project's own file at the default branch, or a ref.
		own, _, err := c.Validate.ProjectLint(p.ID, &gitlab.ProjectLintOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if !own.Valid || !strings.Contains(own.MergedYaml, "needs:\n  - part\n") || len(own.Includes) != 1 || own.Includes[0].ContextSHA != head {
			t.Errorf("GET lint = %+v", own)
		}
		old := p.commit(t, "other", map[string]string{".gitlab-ci.yml": ".only-hidden: {script: x}\n"})
		ref := "other"
		bad, _, err := c.Validate.ProjectLint(p.ID, &gitlab.ProjectLintOptions{ContentRef: &ref})
		if err != nil {
			t.Fatal(err)
		}
		if bad.Valid || fmt.Sprint(bad.Errors) != "[jobs config should contain at least one visible job]" {
			t.Errorf("GET lint at other = %+v", bad)
		}
		var bySHA lintJSON
		s.Get(t, fmt.Sprintf("/projects/%d/ci/lint?sha=%s", p.ID, old), owner.Token).Want(t, http.StatusOK).JSON(t, &bySHA)
		if bySHA.Valid {
			t.Errorf("GET lint by sha = %+v; want invalid", bySHA)
		}
		s.Get(t, fmt.Sprintf("/projects/%d/ci/lint?sha=main&content_ref=main", p.ID), owner.Token).Want(t, http.StatusBadRequest).
			WantBody(t, `{"error":"sha, content_ref are mutually exclusive"}`)
		s.Get(t, fmt.Sprintf("/projects/%d/ci/lint?content_ref=nope", p.ID), owner.Token).Want(t, http.StatusNotFound).
			WantBody(t, `{"message":"404 Commit Not Found"}`)
		s.Get(t, fmt.Sprintf("/projects/%d/ci/lint?content_ref=--output=x", p.ID), owner.Token).Want(t, http.StatusNotFound)
	})
}

// TestCILint_dryRun: a dry run simulates the push pipeline of a ref
// (workflow and job rules, needs) and writes nothing: no pipeline, no
// job.
func TestCILint_dryRun(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		owner := s.NewUser(t, "dryrunner")
		p := newCIProject(t, s, owner, "dry", map[string]string{".gitlab-ci.yml": "build:\n  script: [make]\n"})
		p.settle(t, 1)
		count := func() (int, int) {
			var jobs []jobJSON
			s.Get(t, fmt.Sprintf("/projects/%d/jobs?per_page=100", p.ID), owner.Token).Want(t, http.StatusOK).JSON(t, &jobs)
			return len(p.pipelines(t, "per_page=100")), len(jobs)
		}
		pipelines, jobs := count()

		content := "stages: [build, test]\nbuild:\n  stage: build\n  script: [make]\n" +
			"test:\n  stage: test\n  script: [make test]\n  rules: [{if: '$CI_COMMIT_BRANCH == \"main\"'}]\n" +
			"feature:\n  stage: test\n  script: [x]\n  rules: [{if: '$CI_COMMIT_BRANCH == \"feature\"'}]\n"
		got := lintPost(t, s, p, owner.Token, map[string]any{"content": content, "dry_run": true, "include_jobs": true}, http.StatusOK)
		if !got.Valid || len(got.Jobs) != 2 || got.Jobs[0]["name"] != "build" || got.Jobs[1]["name"] != "test" || got.MergedYAML == nil {
			t.Fatalf("dry run = %+v", got)
		}
		for _, k := range []string{"only", "except", "needs"} {
			if _, ok := got.Jobs[0][k]; ok {
				t.Errorf("dry-run job has %s; GitLab gives none", k)
			}
		}
		if got.Jobs[1]["when"] != "on_success" || got.Jobs[1]["stage"] != "test" {
			t.Errorf("dry-run job test = %v", got.Jobs[1])
		}

		// Every job excluded by its rules: GitLab's error.
		none := "job:\n  script: [x]\n  rules: [{if: '$CI_COMMIT_BRANCH == \"nope\"'}]\n"
		got = lintPost(t, s, p, owner.Token, map[string]any{"content": none, "dry_run": true}, http.StatusOK)
		want := "Pipeline will not run for the selected trigger. The rules configuration prevented any jobs from being added to the pipeline."
		if got.Valid || fmt.Sprint(got.Errors) != "["+want+"]" {
			t.Errorf("dry run without jobs = %+v", got)
		}
		// The same content statically is valid.
		if got := lintPost(t, s, p, owner.Token, map[string]any{"content": none}, http.StatusOK); !got.Valid {
			t.Errorf("static lint of rules-only content = %+v", got)
		}
		// Workflow rules and a ref that does not exist.
		got = lintPost(t, s, p, owner.Token, map[string]any{"content": "workflow: {rules: [{if: $NOPE}]}\n" + content, "dry_run": true}, http.StatusOK)
		if got.Valid || fmt.Sprint(got.Errors) != "[Pipeline filtered out by workflow rules.]" {
			t.Errorf("dry run filtered by workflow = %+v", got)
		}
		got = lintPost(t, s, p, owner.Token, map[string]any{"content": content, "dry_run": true, "ref": "nope"}, http.StatusOK)
		if got.Valid || fmt.Sprint(got.Errors) != "[Reference not found]" {
			t.Errorf("dry run on a missing ref = %+v", got)
		}
		// GET with dry_run, through the client.
		dry := true
		res, _, err := s.Client(t, owner.Token).Validate.ProjectLint(p.ID, &gitlab.ProjectLintOptions{DryRun: &dry})
		if err != nil || !res.Valid {
			t.Fatalf("GET dry run = %+v, %v", res, err)
		}

		if p2, j2 := count(); p2 != pipelines || j2 != jobs {
			t.Errorf("after dry runs: %d pipelines, %d jobs; want %d, %d", p2, j2, pipelines, jobs)
		}
	})
}

// TestCILint_permissions: a project the caller cannot see is 404; given
// content needs the right to create pipelines (a guest or reporter
// 403), the project's file the right to read its code (a guest of a
// private project 403).
func TestCILint_permissions(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		owner := s.NewUser(t, "lintowner")
		p := newCIProject(t, s, owner, "private-lint", map[string]string{".gitlab-ci.yml": "build:\n  script: [make]\n"})
		s.Do(t, apitest.Request{Method: "PUT", Path: fmt.Sprintf("/projects/%d", p.ID), Token: owner.Token,
			JSON: map[string]any{"visibility": "private"}}).Want(t, http.StatusOK)
		stranger, guest, reporter, dev := s.NewUser(t, "lintstranger"), s.NewUser(t, "lintguest"), s.NewUser(t, "lintreporter"), s.NewUser(t, "lintdev")
		for u, level := range map[apitest.User]int{guest: 10, reporter: 20, dev: 30} {
			s.Do(t, apitest.Request{Method: "POST", Path: fmt.Sprintf("/projects/%d/members", p.ID), Token: owner.Token,
				JSON: map[string]any{"user_id": u.ID, "access_level": level}}).Want(t, http.StatusCreated)
		}
		get := fmt.Sprintf("/projects/%d/ci/lint", p.ID)
		body := map[string]any{"content": "j: {script: x}"}
		for _, c := range []struct {
			user      apitest.User
			get, post int
		}{
			{stranger, 404, 404},
			{guest, 403, 403},
			{reporter, 200, 403},
			{dev, 200, 200},
		} {
			if st := s.Get(t, get, c.user.Token).Status; st != c.get {
				t.Errorf("%s GET: %d; want %d", c.user.Username, st, c.get)
			}
			if st := s.Do(t, apitest.Request{Method: "POST", Path: get, Token: c.user.Token, JSON: body}).Status; st != c.post {
				t.Errorf("%s POST: %d; want %d", c.user.Username, st, c.post)
			}
		}
		s.Get(t, get, stranger.Token).WantBody(t, `{"message":"404 Project Not Found"}`)
		s.Get(t, get, "").Want(t, http.StatusNotFound)
		s.Do(t, apitest.Request{Method: "POST", Path: get, JSON: body}).Want(t, http.StatusUnauthorized)
		// A reporter's dry run of the project's file: the chain's
		// permission error, as GitLab's pipeline errors.
		var res lintJSON
		s.Get(t, get+"?dry_run=true", reporter.Token).Want(t, http.StatusOK).JSON(t, &res)
		if res.Valid || fmt.Sprint(res.Errors) != "[Insufficient permissions to create a new pipeline]" {
			t.Errorf("reporter dry run = %+v", res)
		}
	})
}

// TestCIIncludes_variables: includes see the pipeline's variables: a
// path naming $CI_COMMIT_REF_NAME, and include:rules:if on a project
// variable; a change of the variable changes the next pipeline at the
// same commit (such configurations are not cached by commit).
func TestCIIncludes_variables(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		owner := s.NewUser(t, "incvars")
		p := newCIProject(t, s, owner, "incvars", map[string]string{
			".gitlab-ci.yml": "include:\n  - local: ci/$CI_COMMIT_REF_NAME.yml\n  - local: ci/extra.yml\n    rules:\n      - if: $WITH_EXTRA == \"yes\"\n",
			"ci/main.yml":    "on-main:\n  script: [x]\n",
			"ci/extra.yml":   "extra:\n  script: [x]\n",
		})
		p.commit(t, "feature", map[string]string{"ci/feature.yml": "on-feature:\n  script: [x]\n"})
		s.Do(t, apitest.Request{Method: "POST", Path: fmt.Sprintf("/projects/%d/variables", p.ID), Token: owner.Token,
			JSON: map[string]any{"key": "WITH_EXTRA", "value": "yes"}}).Want(t, http.StatusCreated)

		if got := incJobs(t, p, p.createPipeline(t, "main").ID); fmt.Sprint(got) != "[extra@test on-main@test]" {
			t.Errorf("main: %v", got)
		}
		if got := incJobs(t, p, p.createPipeline(t, "feature").ID); fmt.Sprint(got) != "[extra@test on-feature@test]" {
			t.Errorf("feature: %v", got)
		}
		s.Do(t, apitest.Request{Method: "PUT", Path: fmt.Sprintf("/projects/%d/variables/WITH_EXTRA", p.ID), Token: owner.Token,
			JSON: map[string]any{"value": "no"}}).Want(t, http.StatusOK)
		if got := incJobs(t, p, p.createPipeline(t, "main").ID); fmt.Sprint(got) != "[on-main@test]" {
			t.Errorf("main without the variable: %v", got)
		}
		// The lint API's dry run sees them too.
		var res lintJSON
		s.Get(t, fmt.Sprintf("/projects/%d/ci/lint?dry_run=true&dry_run_ref=feature&content_ref=feature&include_jobs=true", p.ID), owner.Token).
			Want(t, http.StatusOK).JSON(t, &res)
		if !res.Valid || len(res.Jobs) != 1 || res.Jobs[0]["name"] != "on-feature" || len(res.Includes) != 1 || res.Includes[0]["location"] != "ci/feature.yml" {
			t.Errorf("dry run on feature = %+v", res)
		}
	})
}
