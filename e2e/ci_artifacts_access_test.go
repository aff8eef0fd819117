package e2e

import (
	"fmt"
	"net/http"
	"testing"

	"quarry/internal/apitest"
)

// artifacts:public and artifacts:access on the download endpoints
// (GitLab's read_job_artifacts): all (the default) lets every reader of
// the jobs download, public: false and access: developer only developers
// and up, none nobody; the runner's download of a dependency's archive
// with its job token stays open.

const artifactsAccessCI = `
stages: [build, test]
open:
  stage: build
  script: [make]
  artifacts: {paths: [out/]}
all:
  stage: build
  script: [make]
  artifacts: {access: all, paths: [out/]}
private:
  stage: build
  script: [make]
  artifacts: {public: false, paths: [out/]}
developer:
  stage: build
  script: [make]
  artifacts: {access: developer, paths: [out/]}
none:
  stage: build
  script: [make]
  artifacts: {access: none, paths: [out/]}
none-without-archive:
  stage: build
  script: [make]
  artifacts: {access: none, paths: [out/]}
consumer:
  stage: test
  dependencies: [private, none]
  script: [test]
`

func TestArtifactsAccess(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		owner := s.NewUser(t, "accowner")
		guest, dev := s.NewUser(t, "accguest"), s.NewUser(t, "accdev")
		p := newCIProject(t, s, owner, "access", map[string]string{".gitlab-ci.yml": artifactsAccessCI})
		s.Do(t, apitest.Request{Method: "PUT", Path: "/projects/" + itoa(p.ID), Token: owner.Token,
			JSON: map[string]any{"visibility": "public"}}).Want(t, http.StatusOK)
		for u, lvl := range map[int64]int{guest.ID: 10, dev.ID: 30} {
			s.Do(t, apitest.Request{Method: "POST", Path: "/projects/" + itoa(p.ID) + "/members", Token: owner.Token,
				JSON: map[string]any{"user_id": u, "access_level": lvl}}).Want(t, http.StatusCreated)
		}
		p.settle(t, 1)
		r := projectRunner(t, p, nil)
		ids := map[string]int64{}
		for range 6 {
			job := r.take(t)
			ids[job.JobInfo.Name] = job.ID
			if job.JobInfo.Name != "none-without-archive" {
				uploadArchive(t, s, job, "")
			}
			r.update(t, job, map[string]any{"state": "success"}).Want(t, http.StatusOK)
		}
		consumer := r.take(t)
		if consumer.JobInfo.Name != "consumer" {
			t.Fatalf("job %s; want consumer", consumer.JobInfo.Name)
		}
		// The runner fetches its dependencies' archives with its own
		// token, whatever their access.
		for _, name := range []string{"private", "none"} {
			s.Do(t, apitest.Request{Path: fmt.Sprintf("/jobs/%d/artifacts", ids[name]), Header: map[string]string{"JOB-TOKEN": consumer.Token}}).
				Want(t, http.StatusOK)
		}
		r.update(t, consumer, map[string]any{"state": "success"}).Want(t, http.StatusOK)
		eventually(t, "the pipeline succeeds", func() bool { return p.pipeline(t, p.pipelines(t, "source=push")[0].ID).Status == "success" })

		// want: the status of anonymous, guest, developer and owner.
		for name, want := range map[string][4]int{
			"open":                 {200, 200, 200, 200},
			"all":                  {200, 200, 200, 200},
			"private":              {403, 403, 200, 200},
			"developer":            {403, 403, 200, 200},
			"none":                 {403, 403, 403, 403},
			"none-without-archive": {404, 404, 404, 404},
		} {
			for i, who := range []struct{ name, token string }{{"anonymous", ""}, {"guest", guest.Token}, {"developer", dev.Token},
				{"owner", owner.Token}} {
				for _, path := range []string{
					fmt.Sprintf("/projects/%d/jobs/%d/artifacts", p.ID, ids[name]),
					fmt.Sprintf("/projects/%d/jobs/%d/artifacts/out/a.txt", p.ID, ids[name]),
					fmt.Sprintf("/projects/%d/jobs/artifacts/main/download?job=%s", p.ID, name),
					fmt.Sprintf("/projects/%d/jobs/artifacts/main/raw/out/a.txt?job=%s", p.ID, name),
				} {
					res := s.Get(t, path, who.token)
					if res.Status != want[i] {
						t.Errorf("%s, %s: GET %s: %d %s; want %d", name, who.name, path, res.Status, res.Body, want[i])
						continue
					}
					if res.Status == http.StatusForbidden && string(res.Body) != `{"message":"403 Forbidden"}` {
						t.Errorf("%s, %s: GET %s: body %s; want GitLab's 403", name, who.name, path, res.Body)
					}
				}
			}
		}
	})
}
