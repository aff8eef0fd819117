package e2e

import (
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"quarry/internal/apitest"
	"quarry/internal/storetest"
)

// Cache keys as runners receive them: GitLab's -<cache index> and
// -protected / -non_protected suffixes, and the digests of
// key:files (blob contents) and key:files_commits (last commits).

const cacheCI = `
job:
  script: [echo]
  rules:
    - if: $CI_PIPELINE_SOURCE != "push"
  cache:
    - key: $CI_COMMIT_REF_SLUG
      paths: [vendor/]
      fallback_keys: [main-fallback, $CI_DEFAULT_BRANCH]
    - key:
        files: [deps.lock, missing.lock]
      paths: [deps/]
    - key:
        files_commits: [deps.lock]
        prefix: commits-$CI_JOB_NAME
      paths: [deps/]
      unprotect: true
      policy: $CACHE_POLICY
      when: always
`

// cacheEntryJSON is one entry of the payload's cache.
type cacheEntryJSON struct {
	Key          string   `json:"key"`
	Untracked    bool     `json:"untracked"`
	Paths        []string `json:"paths"`
	Policy       string   `json:"policy"`
	When         string   `json:"when"`
	FallbackKeys []string `json:"fallback_keys"`
}

// takeCaches takes the next job and returns its cache entries; the job is
// then finished.
func takeCaches(t *testing.T, r protoRunner) []cacheEntryJSON {
	t.Helper()
	last := ""
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); {
		features := map[string]bool{"cache": true, "fallback_cache_keys": true}
		for k, v := range runnerFeatures {
			features[k] = v
		}
		res := r.s.Do(t, apitest.Request{Method: "POST", Path: "/jobs/request", JSON: map[string]any{"token": r.Token,
			"last_update": last, "info": map[string]any{"name": "proto", "version": "17.0.0", "executor": "shell", "features": features}}})
		switch res.Status {
		case http.StatusCreated:
			var p struct {
				ID    int64            `json:"id"`
				Token string           `json:"token"`
				Cache []cacheEntryJSON `json:"cache"`
			}
			res.JSON(t, &p)
			r.update(t, payloadJSON{ID: p.ID, Token: p.Token}, map[string]any{"state": "success"}).Want(t, http.StatusOK)
			return p.Cache
		case http.StatusNoContent:
			last = res.Header.Get("X-Gitlab-Last-Update")
		default:
			t.Fatalf("POST /jobs/request: %d %s", res.Status, res.Body)
		}
	}
	t.Fatal("no job within 10s")
	return nil
}

func blobID(content string) string {
	sum := sha1.Sum([]byte(fmt.Sprintf("blob %d\x00%s", len(content), content)))
	return hex.EncodeToString(sum[:])
}

func sha1Of(s string) string {
	sum := sha1.Sum([]byte(s))
	return hex.EncodeToString(sum[:])
}

func TestCICache_keys(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		owner := s.NewUser(t, "owner")
		dev := s.NewUser(t, "dev")
		outsider := s.NewUser(t, "outsider")
		p := newCIProject(t, s, owner, "cachekeys", map[string]string{".gitlab-ci.yml": cacheCI})
		base := "/projects/" + itoa(p.ID)
		s.Do(t, apitest.Request{Method: "POST", Path: base + "/members", Token: owner.Token,
			JSON: map[string]any{"user_id": dev.ID, "access_level": 30}}).Want(t, http.StatusCreated)
		depsCommit := p.commit(t, "main", map[string]string{"deps.lock": "v1\n"})
		p.commit(t, "feature", map[string]string{"other.txt": "x"})
		r := projectRunner(t, p, nil)

		// ci_separated_caches is on by default (project entity, admins).
		var proj struct {
			CISeparatedCaches *bool `json:"ci_separated_caches"`
		}
		s.Do(t, apitest.Request{Path: base, Token: owner.Token}).Want(t, http.StatusOK).JSON(t, &proj)
		if proj.CISeparatedCaches == nil || !*proj.CISeparatedCaches {
			t.Fatalf("ci_separated_caches = %v; want true", proj.CISeparatedCaches)
		}

		run := func(token, ref string) []cacheEntryJSON {
			t.Helper()
			s.Do(t, apitest.Request{Method: "POST", Path: base + "/pipeline", Token: token, JSON: map[string]any{"ref": ref}}).
				Want(t, http.StatusCreated)
			return takeCaches(t, r)
		}
		filesKey := func(content, suffix string) string { return "1-" + sha1Of(blobID(content)) + suffix }
		commitsKey := func(commit string) string { return "commits-$CI_JOB_NAME-" + sha1Of(commit) }
		want := func(suffix, deps, depsCommit, commitsSuffix string) []cacheEntryJSON {
			return []cacheEntryJSON{
				{Key: "$CI_COMMIT_REF_SLUG" + suffix, Paths: []string{"vendor/"}, Policy: "pull-push", When: "on_success",
					FallbackKeys: []string{"main-fallback" + suffix, "$CI_DEFAULT_BRANCH" + suffix}},
				{Key: filesKey(deps, suffix), Paths: []string{"deps/"}, Policy: "pull-push", When: "on_success", FallbackKeys: []string{}},
				{Key: commitsKey(depsCommit) + commitsSuffix, Paths: []string{"deps/"}, Policy: "$CACHE_POLICY", When: "always",
					FallbackKeys: []string{}},
			}
		}
		check := func(what string, got, want []cacheEntryJSON) {
			t.Helper()
			if !reflect.DeepEqual(got, want) {
				t.Errorf("%s: cache\n got %+v\nwant %+v", what, got, want)
			}
		}

		// A developer's pipeline of an unprotected branch: non_protected.
		check("developer, feature", run(dev.Token, "feature"), want("-non_protected", "v1\n", depsCommit, "-non_protected"))
		// The protected default branch: protected, but unprotect: keeps
		// the third cache with the unprotected ones.
		check("owner, main", run(owner.Token, "main"), want("-protected", "v1\n", depsCommit, "-non_protected"))
		// A maintainer's job uses the protected cache on any branch.
		check("owner, feature", run(owner.Token, "feature"), want("-protected", "v1\n", depsCommit, "-non_protected"))

		// Clearing the caches: maintainers only; each clear bumps the index.
		s.Do(t, apitest.Request{Method: "POST", Path: base + "/ci/reset_cache", Token: dev.Token}).
			Want(t, http.StatusForbidden).WantBody(t, `{"message":"403 Forbidden"}`)
		s.Do(t, apitest.Request{Method: "POST", Path: base + "/ci/reset_cache", Token: outsider.Token}).
			Want(t, http.StatusNotFound).WantBody(t, `{"message":"404 Project Not Found"}`)
		s.Do(t, apitest.Request{Method: "POST", Path: base + "/ci/reset_cache"}).Want(t, http.StatusUnauthorized)
		s.Do(t, apitest.Request{Method: "POST", Path: "/projects/" + itoa(s.AbsentID(t)) + "/ci/reset_cache", Token: owner.Token}).
			Want(t, http.StatusNotFound)
		s.Do(t, apitest.Request{Method: "POST", Path: base + "/ci/reset_cache", Token: owner.Token}).
			Want(t, http.StatusOK).WantBody(t, `{"jobs_cache_index":1}`)
		s.Do(t, apitest.Request{Method: "POST", Path: base + "/ci/reset_cache", Token: owner.Token}).
			Want(t, http.StatusOK).WantBody(t, `{"jobs_cache_index":2}`)
		check("after two clears, developer", run(dev.Token, "feature"), want("-2-non_protected", "v1\n", depsCommit, "-2-non_protected"))
		check("after two clears, owner", run(owner.Token, "main"), want("-2-protected", "v1\n", depsCommit, "-2-non_protected"))

		// key:files follows deps.lock's content, key:files_commits the
		// commit that last changed it.
		next := p.commit(t, "main", map[string]string{"deps.lock": "v2\n"})
		check("deps.lock changed", run(owner.Token, "main"), want("-2-protected", "v2\n", next, "-2-non_protected"))
		// Content back to v1 in a new commit: files: is v1's key again,
		// files_commits: is not.
		last := p.commit(t, "main", map[string]string{"deps.lock": "v1\n"})
		check("deps.lock reverted", run(owner.Token, "main"), want("-2-protected", "v1\n", last, "-2-non_protected"))

		// Without separated caches, no protection suffix.
		s.Do(t, apitest.Request{Method: "PUT", Path: base, Token: owner.Token, JSON: map[string]any{"ci_separated_caches": false}}).
			Want(t, http.StatusOK).JSON(t, &proj)
		if proj.CISeparatedCaches == nil || *proj.CISeparatedCaches {
			t.Fatalf("ci_separated_caches after PUT false = %v", proj.CISeparatedCaches)
		}
		check("not separated", run(dev.Token, "feature"), want("-2", "v1\n", depsCommit, "-2"))
	}, shortPoll)
}

// cacheRunCI writes a cache whose single file names the ref that wrote
// it, and prints what it restored.
const cacheRunCI = `
job:
  rules:
    - if: $CI_PIPELINE_SOURCE != "push"
  script:
    - 'if [ -f vendor/marker ]; then echo "restored: $(cat vendor/marker)"; else echo "restored: nothing"; fi'
    - 'mkdir -p vendor && echo "written-by-$CI_COMMIT_REF_NAME" > vendor/marker' 
  cache:
    key: shared
    paths: [vendor/]
`

// Quarry's runner keeps caches by the keys the server sends: a cache an
// unprotected branch wrote is not restored by a protected branch's job,
// and a clear leaves every job without its earlier cache.
func TestQuarryRunner_cacheIsolation(t *testing.T) {
	t.Parallel()
	// Real processes on a real port: SQLite is enough (TestCICache_keys
	// covers the keys on both databases).
	s := apitest.Start(t, storetest.Target{Name: "sqlite"}, func(c *config) { c.RunnerLongPoll = 2 * time.Second })
	owner := s.NewUser(t, "cacheowner")
	dev := s.NewUser(t, "cachedev")
	p := newCIProject(t, s, owner, "cacherun", map[string]string{".gitlab-ci.yml": cacheRunCI})
	base := "/projects/" + itoa(p.ID)
	s.Do(t, apitest.Request{Method: "POST", Path: base + "/members", Token: owner.Token,
		JSON: map[string]any{"user_id": dev.ID, "access_level": 30}}).Want(t, http.StatusCreated)
	p.commit(t, "feature", map[string]string{"feature.txt": "f"})
	r := projectRunner(t, p, map[string]any{"description": "cache"})
	quarryRunner(1)(t, s.URL, r.Token, t.TempDir())

	// run runs a pipeline of ref as token's user and returns its job's log.
	run := func(token, ref string) string {
		t.Helper()
		var pl pipelineJSON
		s.Do(t, apitest.Request{Method: "POST", Path: base + "/pipeline", Token: token, JSON: map[string]any{"ref": ref}}).
			Want(t, http.StatusCreated).JSON(t, &pl)
		eventuallyFor(t, time.Minute, "pipeline "+itoa(pl.ID)+" of "+ref+" done", func() bool {
			switch st := p.pipeline(t, pl.ID).Status; st {
			case "success":
				return true
			case "failed", "canceled":
				t.Fatalf("pipeline %d of %s %s", pl.ID, ref, st)
			}
			return false
		})
		job := p.job(t, pl.ID, "job")
		return string(s.Get(t, fmt.Sprintf("%s/jobs/%d/trace", base, job.ID), owner.Token).Want(t, http.StatusOK).Body)
	}
	expect := func(what, log string, wants ...string) {
		t.Helper()
		for _, w := range wants {
			if !strings.Contains(log, w) {
				t.Errorf("%s: log lacks %q:\n%s", what, w, log)
			}
		}
	}

	// The developer's feature branch writes the unprotected cache, and
	// its next job restores it.
	expect("first feature job", run(dev.Token, "feature"), "Checking cache for shared-non_protected...", "restored: nothing",
		"Creating cache shared-non_protected...", "vendor/: found 2 matching artifact files and directories", "Created cache")
	expect("second feature job", run(dev.Token, "feature"), "Successfully extracted cache", "restored: written-by-feature")
	// The protected default branch does not see it.
	mainLog := run(owner.Token, "main")
	expect("first main job", mainLog, "Checking cache for shared-protected...", "restored: nothing", "Creating cache shared-protected...")
	if strings.Contains(mainLog, "written-by-feature") {
		t.Errorf("the protected branch's job restored the unprotected cache:\n%s", mainLog)
	}
	expect("second main job", run(owner.Token, "main"), "restored: written-by-main")

	// After a clear, the keys carry the index: nothing is restored.
	s.Do(t, apitest.Request{Method: "POST", Path: base + "/ci/reset_cache", Token: owner.Token}).
		Want(t, http.StatusOK).WantBody(t, `{"jobs_cache_index":1}`)
	expect("main job after a clear", run(owner.Token, "main"), "Checking cache for shared-1-protected...", "restored: nothing")
	expect("feature job after a clear", run(dev.Token, "feature"), "Checking cache for shared-1-non_protected...", "restored: nothing")
}
