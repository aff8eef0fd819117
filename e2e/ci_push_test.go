package e2e

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"quarry/internal/apitest"
	"quarry/internal/model"
)

// The pipelines a push makes (reference §9.1 source push, §9.2, §2.2
// rules:changes): one per branch or tag created or updated, none for a
// deletion, skipped ones for [skip ci] and ci.skip, failed ones for an
// invalid configuration, none without one.

const pushBuildOnly = "build:\n  script: [make]\n"

// pushClone is a working copy of a CI project, cloned over HTTP with the
// owner's token, that commits and pushes with the real git.
type pushClone struct {
	t   *testing.T
	p   ciProject
	dir string
}

func clonePush(t *testing.T, p ciProject, username string) *pushClone {
	t.Helper()
	work := t.TempDir()
	if out, err := gitRun(work, "clone", "-q", cloneURL(p.s, p.Path, username, p.Token), "w"); err != nil {
		t.Fatalf("clone %s: %v\n%s", p.Path, err, out)
	}
	return &pushClone{t: t, p: p, dir: filepath.Join(work, "w")}
}

// git runs git in the clone and returns its trimmed output.
func (c *pushClone) git(args ...string) string {
	c.t.Helper()
	out, err := gitRun(c.dir, args...)
	if err != nil {
		c.t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(out)
}

// commit writes files (an empty content removes the file) and commits
// them with a message; it returns the new commit.
func (c *pushClone) commit(message string, files map[string]string) string {
	c.t.Helper()
	for name, content := range files {
		path := filepath.Join(c.dir, filepath.FromSlash(name))
		if content == "" {
			if err := os.Remove(path); err != nil {
				c.t.Fatal(err)
			}
			continue
		}
		writeFile(c.t, path, content)
	}
	c.git("add", "-A")
	c.git("commit", "-q", "--allow-empty", "-m", message)
	return c.head()
}

func (c *pushClone) head() string {
	c.t.Helper()
	return c.git("rev-parse", "HEAD")
}

// pushRefs runs git push origin refspecs….
func (c *pushClone) pushRefs(refspecs ...string) {
	c.t.Helper()
	c.git(append([]string{"push", "-q", "origin"}, refspecs...)...)
}

// pushPipeline waits for the push pipeline of a ref at a commit and reads
// it in full.
func pushPipeline(t *testing.T, p ciProject, ref, sha string) pipelineJSON {
	t.Helper()
	var found []pipelineJSON
	eventually(t, fmt.Sprintf("a push pipeline for %s at %s", ref, sha), func() bool {
		found = p.pipelines(t, "source=push&per_page=100&ref="+url.QueryEscape(ref)+"&sha="+sha)
		return len(found) > 0
	})
	if len(found) != 1 {
		t.Fatalf("%d push pipelines for %s at %s; want 1", len(found), ref, sha)
	}
	return p.pipeline(t, found[0].ID)
}

// pushPipelinesOf lists every push pipeline of a ref, newest first.
func pushPipelinesOf(t *testing.T, p ciProject, ref string) []pipelineJSON {
	t.Helper()
	return p.pipelines(t, "source=push&per_page=100&ref="+url.QueryEscape(ref))
}

// pushQuiet waits until the refs-changed deliveries already emitted have
// all been handled (none pending or running), so that a pipeline that
// did not appear never will. The caller first makes sure its event was
// emitted (eventLog.next).
func pushQuiet(t *testing.T, s *apitest.Server) {
	t.Helper()
	eventually(t, "refs-changed deliveries handled", func() bool {
		_, pending, err := s.App.DB.NextTaskDue(context.Background(), "refs_changed")
		if err != nil {
			t.Fatal(err)
		}
		return !pending
	})
}

// pushJobNames are the names of a pipeline's own jobs and bridges, sorted.
func pushJobNames(t *testing.T, p ciProject, pipelineID int64) []string {
	t.Helper()
	var names []string
	for _, j := range p.ownJobs(t, pipelineID) {
		names = append(names, j.Name)
	}
	for _, b := range p.bridges(t, pipelineID) {
		names = append(names, b.Name)
	}
	slices.Sort(names)
	return names
}

func pushWantJobs(t *testing.T, p ciProject, pipelineID int64, want ...string) {
	t.Helper()
	got := pushJobNames(t, p, pipelineID)
	if want == nil {
		want = []string{}
	}
	if got == nil {
		got = []string{}
	}
	if !slices.Equal(got, want) {
		t.Fatalf("pipeline %d jobs %v; want %v", pipelineID, got, want)
	}
}

// TestCIPush_refsCreateOnePipelineEach: a git push over HTTP makes one
// push pipeline per branch or tag it created or updated, at the pushed
// commit, with before_sha the old commit (forty zeros for a new ref), run
// as the pusher; a push of several refs makes one each; a deletion none.
func TestCIPush_refsCreateOnePipelineEach(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		events := subscribe(t, s)
		owner := s.NewUser(t, "owner")
		p := newCIProject(t, s, owner, "pushed", map[string]string{".gitlab-ci.yml": pushBuildOnly})
		p.settle(t, 1)
		first := p.pipelines(t, "source=push")[0]
		w := clonePush(t, p, owner.Username)
		if w.head() != first.SHA {
			t.Fatalf("clone at %s; the first pipeline ran %s", w.head(), first.SHA)
		}

		// An update of main.
		second := w.commit("second", map[string]string{"README.md": "two\n"})
		w.pushRefs("main")
		pl := pushPipeline(t, p, "main", second)
		if pl.Source != "push" || pl.Ref != "main" || pl.SHA != second || pl.BeforeSHA != first.SHA || pl.Tag || pl.Status != "pending" ||
			pl.YAMLErrors != nil || pl.User == nil || pl.User.ID != owner.ID || pl.IID != first.IID+1 || pl.ProjectID != p.ID {
			t.Fatalf("push pipeline %+v", pl)
		}
		pushWantJobs(t, p, pl.ID, "build")
		if j := p.job(t, pl.ID, "build"); j.Status != "pending" || j.Ref != "main" {
			t.Fatalf("build job %+v", j)
		}

		// Two commits in one push: one pipeline, for the tip.
		w.commit("third", map[string]string{"a.txt": "a\n"})
		fourth := w.commit("fourth", map[string]string{"b.txt": "b\n"})
		n := events.len()
		w.pushRefs("main")
		pl = pushPipeline(t, p, "main", fourth)
		if pl.BeforeSHA != second {
			t.Fatalf("two commits pushed: before_sha %s; want %s", pl.BeforeSHA, second)
		}
		events.next(t, model.RefsSourcePush, n)
		pushQuiet(t, s)
		if got := len(pushPipelinesOf(t, p, "main")); got != 3 {
			t.Fatalf("main has %d push pipelines after three pushes; want 3", got)
		}

		// A new branch: before_sha is forty zeros.
		w.pushRefs("HEAD:refs/heads/feature")
		pl = pushPipeline(t, p, "feature", fourth)
		if pl.BeforeSHA != model.ZeroRef || pl.Tag || pl.Ref != "feature" || pl.Status != "pending" || pl.User == nil || pl.User.ID != owner.ID {
			t.Fatalf("new branch pipeline %+v", pl)
		}

		// One push of an updated branch, a new branch, a lightweight and an
		// annotated tag: one pipeline each.
		fifth := w.commit("fifth", map[string]string{"c.txt": "c\n"})
		w.git("branch", "topic")
		w.git("tag", "v1")
		w.git("tag", "-a", "v2", "-m", "version two")
		tagObject := w.git("rev-parse", "refs/tags/v2")
		if tagObject == fifth {
			t.Fatal("v2 is not an annotated tag")
		}
		w.pushRefs("main", "topic", "v1", "v2")
		want := map[string]struct {
			before string
			tag    bool
		}{"main": {fourth, false}, "topic": {model.ZeroRef, false}, "v1": {model.ZeroRef, true}, "v2": {model.ZeroRef, true}}
		for ref, exp := range want {
			pl := pushPipeline(t, p, ref, fifth)
			if pl.SHA != fifth || pl.BeforeSHA != exp.before || pl.Tag != exp.tag || pl.Ref != ref || pl.Source != "push" || pl.Status != "pending" {
				t.Errorf("%s: pipeline %+v; want sha %s before %s tag %v", ref, pl, fifth, exp.before, exp.tag)
			}
		}
		if t.Failed() {
			t.FailNow()
		}

		// Deleting branches makes no pipeline.
		total := len(p.pipelines(t, "per_page=100"))
		n = events.len()
		w.pushRefs(":feature", ":topic")
		if e := events.next(t, model.RefsSourcePush, n); len(e.Updates) != 2 {
			t.Fatalf("deletion event %+v", e)
		}
		pushQuiet(t, s)
		if got := len(p.pipelines(t, "per_page=100")); got != total {
			t.Fatalf("deleting two branches: %d pipelines → %d", total, got)
		}
		if got := len(p.pipelines(t, "source=push&per_page=100")); got != 8 {
			t.Fatalf("%d push pipelines in all; want 8 (main ×4, feature, topic, v1, v2)", got)
		}
	})
}

// TestCIPush_skipCI: a commit message with [skip ci] or [ci skip] (any
// case; a space, "-" or "_" between the words; anywhere in the message)
// gives a persisted skipped pipeline without jobs; the push option
// ci.skip too, for that push only. Near misses run.
func TestCIPush_skipCI(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		owner := s.NewUser(t, "owner")
		p := newCIProject(t, s, owner, "skips", map[string]string{".gitlab-ci.yml": pushBuildOnly})
		p.settle(t, 1)
		w := clonePush(t, p, owner.Username)
		base := w.head()

		messages := []struct {
			msg  string
			skip bool
		}{
			{"fix [skip ci]", true},
			{"[ci skip] fix", true},
			{"fix [SKIP CI]", true},
			{"fix [Ci-Skip]", true},
			{"fix [skip_ci]", true},
			{"fix [ci_skip]", true},
			{"fix [skip-ci]", true},
			{"title\n\nbody [ci skip]", true},
			{"fix skip ci", false},
			{"fix [skip ci", false},
			{"fix [skip  ci]", false},
			{"fix [skipci]", false},
		}
		// Four new branches per push: GitLab makes pipelines for the first
		// four refs of a kind in one push only.
		commits := make([]string, len(messages))
		for start := 0; start < len(messages); start += 4 {
			var refs []string
			for i := start; i < min(start+4, len(messages)); i++ {
				branch := fmt.Sprintf("skip%d", i)
				w.git("checkout", "-q", "-b", branch, base)
				commits[i] = w.commit(messages[i].msg, map[string]string{"f.txt": fmt.Sprintf("%d\n", i)})
				refs = append(refs, branch)
			}
			w.pushRefs(refs...)
		}
		for i, m := range messages {
			branch := fmt.Sprintf("skip%d", i)
			pl := pushPipeline(t, p, branch, commits[i])
			want := "pending"
			if m.skip {
				want = "skipped"
			}
			if pl.Status != want || pl.Source != "push" || pl.BeforeSHA != model.ZeroRef || pl.YAMLErrors != nil || pl.IID == 0 {
				t.Errorf("%q: pipeline %+v; want status %s", m.msg, pl, want)
				continue
			}
			if got := pushJobNames(t, p, pl.ID); m.skip && len(got) != 0 || !m.skip && !slices.Equal(got, []string{"build"}) {
				t.Errorf("%q: jobs %v", m.msg, got)
			}
		}
		if t.Failed() {
			t.FailNow()
		}
		skipped := p.pipelines(t, "status=skipped&per_page=100")
		if len(skipped) != 8 {
			t.Fatalf("status=skipped lists %d pipelines; want 8", len(skipped))
		}

		// git push -o ci.skip: skipped whatever the message; the next push
		// without it runs.
		w.git("checkout", "-q", "main")
		optioned := w.commit("plain message", map[string]string{"g.txt": "g\n"})
		w.git("push", "-q", "-o", "ci.skip", "origin", "main")
		pl := pushPipeline(t, p, "main", optioned)
		if pl.Status != "skipped" || pl.BeforeSHA != base || pl.Source != "push" {
			t.Fatalf("push -o ci.skip: %+v", pl)
		}
		pushWantJobs(t, p, pl.ID)
		after := w.commit("another plain message", map[string]string{"g.txt": "h\n"})
		w.pushRefs("main")
		if pl := pushPipeline(t, p, "main", after); pl.Status != "pending" || pl.BeforeSHA != optioned {
			t.Fatalf("push after the ci.skip one: %+v", pl)
		}
	})
}

// TestCIPush_configMissingOrInvalid: a pushed commit without a CI
// configuration gets no pipeline; an invalid one gets a persisted failed
// pipeline with its yaml_errors and no jobs, which yaml_errors=true finds.
func TestCIPush_configMissingOrInvalid(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		events := subscribe(t, s)
		owner := s.NewUser(t, "owner")
		p := newCIProject(t, s, owner, "invalid", map[string]string{".gitlab-ci.yml": pushBuildOnly})
		p.settle(t, 1)
		w := clonePush(t, p, owner.Username)
		base := w.head()

		w.git("checkout", "-q", "-b", "noci", base)
		w.commit("no ci", map[string]string{".gitlab-ci.yml": ""})
		w.git("checkout", "-q", "-b", "badstage", base)
		badStage := w.commit("bad stage", map[string]string{".gitlab-ci.yml": "build:\n  stage: nowhere\n  script: [x]\n"})
		w.git("checkout", "-q", "-b", "badyaml", base)
		badYAML := w.commit("bad yaml", map[string]string{".gitlab-ci.yml": "build: [\n"})
		w.git("checkout", "-q", "-b", "good", base)
		good := w.commit("good", map[string]string{"x.txt": "x\n"})
		n := events.len()
		w.pushRefs("noci", "badstage", "badyaml", "good")
		events.next(t, model.RefsSourcePush, n)

		stage := pushPipeline(t, p, "badstage", badStage)
		wantErr := "build job: chosen stage nowhere does not exist; available stages are .pre, build, test, deploy, .post"
		if stage.Status != "failed" || stage.YAMLErrors == nil || *stage.YAMLErrors != wantErr || stage.StartedAt != nil ||
			stage.FinishedAt == nil || stage.Duration != nil || stage.BeforeSHA != model.ZeroRef || stage.IID == 0 {
			t.Fatalf("invalid stage: %+v (yaml_errors %v)", stage, pushDeref(stage.YAMLErrors))
		}
		pushWantJobs(t, p, stage.ID)
		syntax := pushPipeline(t, p, "badyaml", badYAML)
		if syntax.Status != "failed" || syntax.YAMLErrors == nil || *syntax.YAMLErrors == "" || syntax.FinishedAt == nil {
			t.Fatalf("YAML syntax error: %+v", syntax)
		}
		pushWantJobs(t, p, syntax.ID)
		if pl := pushPipeline(t, p, "good", good); pl.Status != "pending" || pl.YAMLErrors != nil {
			t.Fatalf("valid branch: %+v", pl)
		}
		pushQuiet(t, s)
		if got := pushPipelinesOf(t, p, "noci"); len(got) != 0 {
			t.Fatalf("a push without .gitlab-ci.yml made pipelines %+v", got)
		}

		var ids []int64
		for _, pl := range p.pipelines(t, "yaml_errors=true&per_page=100") {
			ids = append(ids, pl.ID)
		}
		slices.Sort(ids)
		if want := []int64{min(stage.ID, syntax.ID), max(stage.ID, syntax.ID)}; !slices.Equal(ids, want) {
			t.Fatalf("yaml_errors=true lists %v; want %v", ids, want)
		}
		if got := p.pipelines(t, "yaml_errors=true&status=failed&ref=badstage"); len(got) != 1 || got[0].ID != stage.ID {
			t.Fatalf("yaml_errors=true&ref=badstage: %+v", got)
		}
	})
}

func pushDeref(s *string) string {
	if s == nil {
		return "<nil>"
	}
	return *s
}

// TestCIPush_rulesChanges: rules:changes compares the pushed commits
// with the ref's old commit; on a new branch (no old commit) it matches.
func TestCIPush_rulesChanges(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		owner := s.NewUser(t, "owner")
		config := "build:\n  script: [make]\ndocs:\n  script: [mkdocs]\n  rules:\n    - changes: [\"docs/**/*\"]\n"
		p := newCIProject(t, s, owner, "changes", map[string]string{".gitlab-ci.yml": config})
		p.settle(t, 1)
		w := clonePush(t, p, owner.Username)
		base := w.head()

		docs := w.commit("docs", map[string]string{"docs/guide/intro.md": "intro\n"})
		w.pushRefs("main")
		pushWantJobs(t, p, pushPipeline(t, p, "main", docs).ID, "build", "docs")

		src := w.commit("code", map[string]string{"src/main.go": "package main\n"})
		w.pushRefs("main")
		pushWantJobs(t, p, pushPipeline(t, p, "main", src).ID, "build")

		// Two commits, docs then code: the push changed docs/.
		w.commit("more docs", map[string]string{"docs/b.md": "b\n"})
		both := w.commit("more code", map[string]string{"src/b.go": "package main\n"})
		w.pushRefs("main")
		pushWantJobs(t, p, pushPipeline(t, p, "main", both).ID, "build", "docs")

		// A new branch whose only commit touches code: changes matches.
		w.git("checkout", "-q", "-b", "fresh", base)
		fresh := w.commit("code only", map[string]string{"src/c.go": "package main\n"})
		w.pushRefs("fresh")
		pushWantJobs(t, p, pushPipeline(t, p, "fresh", fresh).ID, "build", "docs")

		// An update of that branch touching code only: it no longer does.
		fresh2 := w.commit("code again", map[string]string{"src/d.go": "package main\n"})
		w.pushRefs("fresh")
		pushWantJobs(t, p, pushPipeline(t, p, "fresh", fresh2).ID, "build")
	})
}

// TestCIPush_tags: a tag push makes a pipeline with tag true and the
// tag's name as ref, at the tagged commit (an annotated tag's commit, not
// the tag object); rules on $CI_COMMIT_TAG and $CI_COMMIT_BRANCH tell tag
// pipelines from branch ones.
func TestCIPush_tags(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		owner := s.NewUser(t, "owner")
		config := `build:
  script: [make]
  rules:
    - if: $CI_COMMIT_BRANCH
release:
  script: [ship]
  rules:
    - if: $CI_COMMIT_TAG
two_only:
  script: [ship two]
  rules:
    - if: $CI_COMMIT_TAG =~ /^v2\./
`
		p := newCIProject(t, s, owner, "tags", map[string]string{".gitlab-ci.yml": config})
		p.settle(t, 1)
		w := clonePush(t, p, owner.Username)

		head := w.commit("change", map[string]string{"a.txt": "a\n"})
		w.pushRefs("main")
		pushWantJobs(t, p, pushPipeline(t, p, "main", head).ID, "build")

		w.git("tag", "v1.0")
		w.pushRefs("v1.0")
		light := pushPipeline(t, p, "v1.0", head)
		if !light.Tag || light.Ref != "v1.0" || light.BeforeSHA != model.ZeroRef || light.Status != "pending" {
			t.Fatalf("lightweight tag pipeline %+v", light)
		}
		pushWantJobs(t, p, light.ID, "release")
		if j := p.job(t, light.ID, "release"); j.Ref != "v1.0" {
			t.Fatalf("release job ref %q", j.Ref)
		}

		w.git("tag", "-a", "v2.0", "-m", "second release")
		w.pushRefs("v2.0")
		annotated := pushPipeline(t, p, "v2.0", head)
		if !annotated.Tag || annotated.SHA != head || annotated.BeforeSHA != model.ZeroRef {
			t.Fatalf("annotated tag pipeline %+v", annotated)
		}
		pushWantJobs(t, p, annotated.ID, "release", "two_only")
		if got := p.pipelines(t, "scope=tags&per_page=100"); len(got) != 2 {
			t.Fatalf("scope=tags: %d pipelines; want 2", len(got))
		}
	})
}

// TestCIPush_ciConfigPath: the project's ci_config_path names the file a
// push pipeline runs; .gitlab-ci.yml is then ignored.
func TestCIPush_ciConfigPath(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		events := subscribe(t, s)
		owner := s.NewUser(t, "owner")
		p := newCIProject(t, s, owner, "cipath", map[string]string{"ci/pipeline.yml": "custom:\n  script: [x]\n"})
		var proj struct {
			CIConfigPath *string `json:"ci_config_path"`
		}
		s.Do(t, apitest.Request{Method: "PUT", Path: fmt.Sprintf("/projects/%d", p.ID), Token: owner.Token,
			JSON: map[string]any{"ci_config_path": "ci/pipeline.yml"}}).Want(t, http.StatusOK).JSON(t, &proj)
		if proj.CIConfigPath == nil || *proj.CIConfigPath != "ci/pipeline.yml" {
			t.Fatalf("ci_config_path %v", pushDeref(proj.CIConfigPath))
		}
		w := clonePush(t, p, owner.Username)
		base := w.head()

		head := w.commit("go", map[string]string{"a.txt": "a\n"})
		w.pushRefs("main")
		pushWantJobs(t, p, pushPipeline(t, p, "main", head).ID, "custom")

		// A branch with .gitlab-ci.yml but without the configured file
		// gets none.
		w.git("checkout", "-q", "-b", "default-file", base)
		w.commit("default file only", map[string]string{"ci/pipeline.yml": "", ".gitlab-ci.yml": pushBuildOnly})
		n := events.len()
		w.pushRefs("default-file")
		events.next(t, model.RefsSourcePush, n)
		pushQuiet(t, s)
		if got := pushPipelinesOf(t, p, "default-file"); len(got) != 0 {
			t.Fatalf("a branch without ci/pipeline.yml made pipelines %+v", got)
		}
	})
}

// TestCIPush_apiWrites: a commit made through the API
// (POST /repository/commits) and a branch made through the API make push
// pipelines too, as the user who made them.
func TestCIPush_apiWrites(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		owner := s.NewUser(t, "owner")
		p := newCIProject(t, s, owner, "apiwrite", map[string]string{".gitlab-ci.yml": pushBuildOnly})
		p.settle(t, 1)
		first := p.pipelines(t, "source=push")[0]

		sha := p.commit(t, "main", map[string]string{"a.txt": "a\n"})
		pl := pushPipeline(t, p, "main", sha)
		if pl.Source != "push" || pl.BeforeSHA != first.SHA || pl.Tag || pl.Status != "pending" || pl.User == nil || pl.User.ID != owner.ID {
			t.Fatalf("API commit pipeline %+v", pl)
		}
		pushWantJobs(t, p, pl.ID, "build")

		s.Do(t, apitest.Request{Method: "POST", Path: fmt.Sprintf("/projects/%d/repository/branches", p.ID), Token: owner.Token,
			JSON: map[string]any{"branch": "made", "ref": "main"}}).Want(t, http.StatusCreated)
		if pl := pushPipeline(t, p, "made", sha); pl.BeforeSHA != model.ZeroRef || pl.Status != "pending" {
			t.Fatalf("API branch pipeline %+v", pl)
		}
	})
}

// TestCIPush_eventDeliveredTwice: the refs-changed subscriber creates one
// pipeline per ref update however often the same event is delivered (a
// delivery retried after a crash): for a branch update, a new branch and
// a new annotated tag (whose new id is the tag object, not the commit).
func TestCIPush_eventDeliveredTwice(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		owner := s.NewUser(t, "owner")
		p := newCIProject(t, s, owner, "twice", map[string]string{".gitlab-ci.yml": pushBuildOnly})
		p.settle(t, 1)
		first := p.pipelines(t, "source=push")[0]

		// Refs moved in the repository itself, behind the application's
		// back: no event exists for them but the ones built here.
		repo := repoDir(t, s, p.ID)
		tree := git(t, repo, "rev-parse", first.SHA+"^{tree}")
		next := git(t, repo, "commit-tree", tree, "-p", first.SHA, "-m", "direct")
		git(t, repo, "update-ref", "refs/heads/main", next, first.SHA)
		git(t, repo, "update-ref", "refs/heads/direct", next)
		git(t, repo, "tag", "-a", "vdirect", "-m", "direct tag", next)
		tagObject := git(t, repo, "rev-parse", "refs/tags/vdirect")
		if tagObject == next {
			t.Fatal("vdirect is not an annotated tag")
		}
		e := model.RefsChanged{ProjectID: p.ID, ActorID: owner.ID, Source: model.RefsSourcePush, At: time.Now().UTC(),
			Updates: []model.RefUpdate{
				{Ref: "refs/heads/main", Old: first.SHA, New: next},
				{Ref: "refs/heads/direct", Old: model.ZeroRef, New: next},
				{Ref: "refs/tags/vdirect", Old: model.ZeroRef, New: tagObject},
			}}
		for i := 0; i < 2; i++ {
			if err := s.App.CI.OnRefsChanged(ctx(t), e); err != nil {
				t.Fatalf("delivery %d: %v", i+1, err)
			}
		}
		for _, ref := range []string{"main", "direct", "vdirect"} {
			var shas []string
			for _, pl := range pushPipelinesOf(t, p, ref) {
				if pl.SHA == next {
					shas = append(shas, pl.SHA)
				}
			}
			if len(shas) != 1 {
				t.Errorf("%s: %d push pipelines at %s after the event was delivered twice; want 1", ref, len(shas), next)
			}
		}
		if pl := pushPipeline(t, p, "vdirect", next); !pl.Tag || pl.BeforeSHA != model.ZeroRef {
			t.Errorf("annotated tag pipeline %+v", pl)
		}
		if pl := pushPipeline(t, p, "main", next); pl.BeforeSHA != first.SHA {
			t.Errorf("main pipeline %+v", pl)
		}
	})
}

// TestCIPush_branchPushedAgain: every push of a branch is a pipeline,
// even one that recreates a deleted branch at the commit it had: only the
// same event seen twice is a duplicate, not the same content pushed
// twice.
func TestCIPush_branchPushedAgain(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		events := subscribe(t, s)
		owner := s.NewUser(t, "owner")
		p := newCIProject(t, s, owner, "again", map[string]string{".gitlab-ci.yml": pushBuildOnly})
		p.settle(t, 1)
		w := clonePush(t, p, owner.Username)
		head := w.commit("feature work", map[string]string{"f.txt": "f\n"})
		w.pushRefs("HEAD:refs/heads/feature")
		pushPipeline(t, p, "feature", head)
		w.pushRefs(":feature")
		n := events.len()
		w.pushRefs("HEAD:refs/heads/feature")
		events.next(t, model.RefsSourcePush, n)
		eventually(t, "a second pipeline for the recreated branch", func() bool { return len(pushPipelinesOf(t, p, "feature")) == 2 })
	})
}

// TestCIPush_branchNamedLikeTag: a push to a branch that has a tag's name
// runs the branch (the push names the full ref, refs/heads/…, so it is
// not ambiguous).
func TestCIPush_branchNamedLikeTag(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		owner := s.NewUser(t, "owner")
		p := newCIProject(t, s, owner, "same", map[string]string{".gitlab-ci.yml": pushBuildOnly})
		p.settle(t, 1)
		w := clonePush(t, p, owner.Username)
		tagged := w.head()
		w.git("tag", "same")
		w.pushRefs("same")
		if pl := pushPipeline(t, p, "same", tagged); !pl.Tag {
			t.Fatalf("tag pipeline %+v", pl)
		}
		head := w.commit("on the branch", map[string]string{"b.txt": "b\n"})
		w.pushRefs("HEAD:refs/heads/same")
		pl := pushPipeline(t, p, "same", head)
		if pl.Tag || pl.SHA != head || pl.BeforeSHA != model.ZeroRef || pl.Status != "pending" {
			t.Fatalf("branch pipeline %+v", pl)
		}
		pushWantJobs(t, p, pl.ID, "build")
	})
}
