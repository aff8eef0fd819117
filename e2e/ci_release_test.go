package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	gitlab "gitlab.com/gitlab-org/api/client-go"

	"quarry/internal/apitest"
)

// CI's release: keyword (GitLab's Entry::Release, Gitlab::Ci::Build::
// Releaser and Step.from_release): Quarry's runner makes the release
// itself through the Releases API with the job token; other runners get
// GitLab's release step, a release-cli command line.

const releaseCI = `
variables:
  NOTES: built by quarry
release-job:
  script: [echo making the release]
  release:
    tag_name: v1.0.0
    name: Release $CI_PIPELINE_IID
    description: "Notes: $NOTES for ${CI_COMMIT_SHORT_SHA}"
    ref: $CI_COMMIT_SHA
    assets:
      links:
        - name: binary
          url: https://downloads.example/app-$CI_COMMIT_SHORT_SHA
          link_type: package
          direct_asset_path: /bin/app
  rules:
    - if: $CI_COMMIT_BRANCH
`

// TestCIRelease_quarryRunner: a job with release: on Quarry's runner
// makes the release (variables expanded, tag from the pipeline's commit,
// its link), readable with the official client; a second pipeline with
// the same tag fails the job with release-cli's fatal line.
func TestCIRelease_quarryRunner(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		owner := s.NewUser(t, "releaser")
		p := newCIProject(t, s, owner, "rel-ci", nil)
		r := projectRunner(t, p, map[string]any{"description": "rel"})
		quarryRunner(1)(t, s.URL, r.Token, t.TempDir())
		sha := p.commit(t, "main", map[string]string{".gitlab-ci.yml": releaseCI})
		trace := func(id int64) string {
			return string(s.Get(t, fmt.Sprintf("/projects/%d/jobs/%d/trace", p.ID, id), owner.Token).Body)
		}
		var pl pipelineJSON
		eventuallyFor(t, time.Minute, "the push pipeline", func() bool {
			list := p.pipelines(t, "source=push&ref=main")
			if len(list) > 0 {
				pl = list[0]
			}
			return len(list) > 0
		})
		finished := func(pl pipelineJSON) jobJSON {
			var j jobJSON
			eventuallyFor(t, 2*time.Minute, "the release job finished", func() bool {
				j = p.job(t, pl.ID, "release-job")
				return j.Status == "success" || j.Status == "failed" || j.Status == "canceled"
			})
			return j
		}
		j := finished(pl)
		if j.Status != "success" {
			t.Fatalf("release job %s (%s):\n%s", j.Status, j.FailureReason, trace(j.ID))
		}
		log := trace(j.ID)
		for _, want := range []string{"$ release-cli create --name \"Release $CI_PIPELINE_IID\"", "Release created successfully!", "Job succeeded"} {
			if !strings.Contains(log, want) {
				t.Errorf("log lacks %q:\n%s", want, log)
			}
		}

		c := s.Client(t, owner.Token)
		rel, resp, err := c.Releases.GetRelease(p.ID, "v1.0.0")
		if err != nil {
			t.Fatalf("GetRelease: %v", err)
		}
		if resp.StatusCode != 200 || rel.TagName != "v1.0.0" || rel.Name != fmt.Sprintf("Release %d", pl.IID) ||
			rel.Description != "Notes: built by quarry for "+sha[:8] || rel.Commit.ID != sha || rel.Author.Username != "releaser" {
			t.Errorf("release %+v (commit %s, author %s); want v1.0.0 at %s", rel, rel.Commit.ID, rel.Author.Username, sha)
		}
		if len(rel.Assets.Links) != 1 {
			t.Fatalf("links %+v", rel.Assets.Links)
		}
		l := rel.Assets.Links[0]
		if l.Name != "binary" || l.URL != "https://downloads.example/app-"+sha[:8] || l.LinkType != gitlab.PackageLinkType ||
			!strings.HasSuffix(l.DirectAssetURL, "/-/releases/v1.0.0/downloads/bin/app") {
			t.Errorf("link %+v", l)
		}
		// The tag exists at the pipeline's commit.
		tag, _, err := c.Tags.GetTag(p.ID, "v1.0.0")
		if err != nil || tag.Commit.ID != sha {
			t.Fatalf("tag v1.0.0: %+v, %v", tag, err)
		}

		// Again: the release exists, the job fails as release-cli does.
		again := p.createPipeline(t, "main")
		j2 := finished(again)
		log2 := trace(j2.ID)
		if j2.Status != "failed" || j2.FailureReason != "script_failure" {
			t.Fatalf("second release job %s (%s); want failed (script_failure):\n%s", j2.Status, j2.FailureReason, log2)
		}
		if !strings.Contains(log2, `level=fatal msg="run app" cli=quarry-runner tag-name="v1.0.0" error="failed to create release: API Error Response status_code: 409 message: Release already exists"`) {
			t.Errorf("log lacks the 409 line:\n%s", log2)
		}
		if list, _, err := c.Releases.ListReleases(p.ID, nil); err != nil || len(list) != 1 {
			t.Errorf("releases %d, %v; want 1", len(list), err)
		}
	})
}

// TestCIRelease_payloadStep: a runner without Quarry's native release
// (the raw protocol, as gitlab-runner speaks it) gets GitLab's release
// step after the script and before after_script.
func TestCIRelease_payloadStep(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		owner := s.NewUser(t, "relproto")
		p := newCIProject(t, s, owner, "rel-proto", nil)
		r := projectRunner(t, p, nil)
		p.commit(t, "main", map[string]string{".gitlab-ci.yml": `
job:
  script: [make]
  after_script: [echo done]
  timeout: 20m
  release:
    tag_name: v$CI_PIPELINE_IID
    description: "Notes: $NOTES"
    ref: $CI_COMMIT_SHA
    milestones: [m1]
    assets:
      links:
        - {name: "a & b", url: "https://x.example/a?b=1", link_type: other}
`})
		var job payloadJSON
		var extra struct {
			Release map[string]any `json:"release"`
		}
		last := ""
		eventuallyFor(t, 10*time.Second, "a job", func() bool {
			res := r.request(t, last)
			last = res.Header.Get("X-Gitlab-Last-Update")
			if res.Status == 201 {
				res.JSON(t, &job)
				res.JSON(t, &extra)
			}
			return res.Status == 201
		})
		if len(job.Steps) != 3 {
			t.Fatalf("steps %+v; want script, release, after_script", job.Steps)
		}
		st := job.Steps[1]
		want := `release-cli create --description "Notes: $NOTES" --tag-name "v$CI_PIPELINE_IID" --ref "$CI_COMMIT_SHA" --milestone "m1"` +
			` --assets-link "{\"name\":\"a & b\",\"url\":\"https://x.example/a?b=1\",\"link_type\":\"other\"}"`
		if st.Name != "release" || len(st.Script) != 1 || st.Script[0] != want || st.When != "on_success" || st.AllowFailure || st.Timeout != 1200 {
			t.Errorf("release step %+v;\nwant script %s", st, want)
		}
		if job.Steps[0].Name != "script" || job.Steps[2].Name != "after_script" {
			t.Errorf("steps %s, %s; want script, after_script around release", job.Steps[0].Name, job.Steps[2].Name)
		}
		// The structured release rides beside it, as written, for
		// Quarry's runner (gitlab-runner ignores the key).
		if got := fmt.Sprint(extra.Release); got != "map[description:Notes: $NOTES links:[map[link_type:other name:a & b url:https://x.example/a?b=1]] milestones:[m1] ref:$CI_COMMIT_SHA tag_name:v$CI_PIPELINE_IID]" {
			t.Errorf("release object %s", got)
		}
	})
}

// TestCIKeywords_refused: keywords Quarry cannot honour, whose omission
// would change what the job does, make the configuration invalid: a
// failed push pipeline with the message, a 400 from the API.
func TestCIKeywords_refused(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		owner := s.NewUser(t, "refuser")
		p := newCIProject(t, s, owner, "refused", nil)
		for i, c := range []struct{ ci, msg string }{
			{"pages:\n  script: [make site]\n  pages: {publish: public}\n", "jobs:pages:pages config is not supported: Quarry has no Pages server"},
			{"build:\n  script: [make]\n  hooks:\n    pre_get_sources_script: [git config --global x y]\n", "jobs:build:hooks config is not supported: Quarry runs no job hooks"},
			{"default:\n  hooks:\n    pre_get_sources_script: [x]\nbuild:\n  script: [make]\n", "default:hooks config is not supported: Quarry runs no job hooks"},
			{"deploy:\n  script: [gcloud deploy]\n  identity: google_cloud\n", "jobs:deploy:identity config is not supported: Quarry has no identity federation"},
			{"dast:\n  script: [scan]\n  dast_configuration: {site_profile: s}\n", "jobs:dast:dast_configuration config is not supported: Quarry has no DAST profiles"},
			{"steps:\n  run:\n    - name: a\n      script: echo a\n", "jobs:steps:run config is not supported: Quarry runs no CI steps"},
			{"rel:\n  script: [x]\n  release: {tag_name: v1}\n", "jobs:rel:release description should be a string"},
		} {
			p.commit(t, "main", map[string]string{".gitlab-ci.yml": c.ci})
			p.settle(t, i+1)
			pushed := p.pipeline(t, p.pipelines(t, "ref=main")[0].ID)
			if pushed.Status != "failed" || pushed.YAMLErrors == nil || *pushed.YAMLErrors != c.msg {
				t.Errorf("push pipeline %s (yaml_errors %s); want failed with %q", pushed.Status, pushDeref(pushed.YAMLErrors), c.msg)
			}
			s.Do(t, apitest.Request{Method: "POST", Path: fmt.Sprintf("/projects/%d/pipeline", p.ID), Token: owner.Token,
				JSON: map[string]any{"ref": "main"}}).Want(t, 400).WantBody(t, `{"message":{"base":["`+c.msg+`"]}}`)
		}
	})
}
