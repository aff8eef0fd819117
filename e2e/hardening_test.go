package e2e

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"quarry/internal/apitest"
)

// Hardening against hostile and clumsy clients: each test is a row of the
// table of refusals a hostile client used to get a 500, a held connection
// or the server's memory from.

// gitInfoRefs asks for a repository's refs over smart HTTP as user with
// password, and returns the status and body.
func gitInfoRefs(t *testing.T, s *apitest.Server, fullPath, user, password string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, s.URL+"/"+fullPath+".git/info/refs?service=git-upload-pack", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.SetBasicAuth(user, password)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(res.Body, 1<<20))
	return res.StatusCode, string(b)
}

// A job token that its target's allowlist refuses is a 403 with GitLab's
// message over git HTTP, for the repository as for the wiki (it was a
// 500 for the repository).
func TestHardening_gitJobTokenRefused(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		owner := s.NewUser(t, "gitscope")
		src := newCIProject(t, s, owner, "src", map[string]string{".gitlab-ci.yml": "job1:\n  script: [\"true\"]\n"})
		dst := newCIProject(t, s, owner, "dst", nil)
		src.settle(t, 1)
		job := projectRunner(t, src, nil).take(t)
		want := fmt.Sprintf("Authentication by CI/CD job token not allowed from %s to %s.", src.Path, dst.Path)
		status, body := gitInfoRefs(t, s, dst.Path, "gitlab-ci-token", job.Token)
		if status != http.StatusForbidden || !strings.Contains(body, want) {
			t.Errorf("clone of a refusing project: %d %q; want 403 %q", status, body, want)
		}
		if status, _ := gitInfoRefs(t, s, src.Path, "gitlab-ci-token", job.Token); status != http.StatusOK {
			t.Errorf("clone of the job's own project: %d; want 200", status)
		}
		s.Do(t, apitest.Request{Method: "POST", Path: fmt.Sprintf("/projects/%d/job_token_scope/allowlist", dst.ID), Token: owner.Token,
			JSON: map[string]any{"target_project_id": src.ID}}).Want(t, http.StatusCreated)
		if status, body := gitInfoRefs(t, s, dst.Path, "gitlab-ci-token", job.Token); status != http.StatusOK {
			t.Errorf("clone once allowlisted: %d %q; want 200", status, body)
		}
		if status, _ := gitInfoRefs(t, s, dst.Path, "gitlab-ci-token", "glcbt-wrong"); status != http.StatusUnauthorized {
			t.Errorf("clone with a wrong job token: %d; want 401", status)
		}
	}, shortPoll)
}
