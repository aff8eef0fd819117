package e2e

import (
	"fmt"
	"net/http"
	"slices"
	"testing"

	"quarry/internal/apitest"
)

// Bridges and the pipelines they start (reference §8): child pipelines
// of the same project (trigger:include), their depth, status, cancel,
// deletion and variables; multi-project pipelines (trigger:project).

// childBridgeWhen waits until a pipeline's bridge satisfies cond and returns
// it.
func childBridgeWhen(t *testing.T, p ciProject, pipelineID int64, name, what string, cond func(b jobJSON) bool) jobJSON {
	t.Helper()
	var found jobJSON
	eventually(t, fmt.Sprintf("bridge %s of pipeline %d: %s", name, pipelineID, what), func() bool {
		for _, b := range p.bridges(t, pipelineID) {
			if b.Name == name && cond(b) {
				found = b
				return true
			}
		}
		return false
	})
	return found
}

// childDownstream waits for a bridge's downstream pipeline and returns the
// bridge.
func childDownstream(t *testing.T, p ciProject, pipelineID int64, name string) jobJSON {
	t.Helper()
	return childBridgeWhen(t, p, pipelineID, name, "a downstream pipeline", func(b jobJSON) bool { return b.DownstreamPipeline != nil })
}

// childBridgeStatus waits for a bridge's status.
func childBridgeStatus(t *testing.T, p ciProject, pipelineID int64, name, status string) jobJSON {
	t.Helper()
	return childBridgeWhen(t, p, pipelineID, name, "status "+status, func(b jobJSON) bool { return b.Status == status })
}

// childPipelineStatus waits for a pipeline's status.
func childPipelineStatus(t *testing.T, p ciProject, id int64, status string) pipelineJSON {
	t.Helper()
	var pl pipelineJSON
	eventually(t, fmt.Sprintf("pipeline %d %s", id, status), func() bool {
		pl = p.pipeline(t, id)
		return pl.Status == status
	})
	return pl
}

// childPushRoot is the project's first push pipeline, read in full.
func childPushRoot(t *testing.T, p ciProject) pipelineJSON {
	t.Helper()
	p.settle(t, 1)
	list := p.pipelines(t, "source=push&per_page=100")
	if len(list) != 1 {
		t.Fatalf("%d push pipelines; want 1", len(list))
	}
	return p.pipeline(t, list[0].ID)
}

// TestCIChildren_childPipelines: a bridge with trigger:include (a path,
// or a list of {local: path}) starts a child pipeline of the same
// project: source parent_pipeline, the parent's ref, sha and before_sha
// and user; left out of the project's pipeline list but readable by id;
// its jobs listed with the parent's. Without strategy: depend the bridge
// succeeds at once; with it, it runs until the child succeeds.
func TestCIChildren_childPipelines(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		owner := s.NewUser(t, "owner")
		config := `stages: [build, children]
build: {stage: build, script: [make]}
child_a:
  stage: children
  trigger:
    include: ci/child-a.yml
child_b:
  stage: children
  trigger:
    include:
      - local: ci/child-b.yml
    strategy: depend
`
		p := newCIProject(t, s, owner, "family", map[string]string{".gitlab-ci.yml": config,
			"ci/child-a.yml": "unit: {script: [unit]}\n",
			"ci/child-b.yml": "lint: {script: [lint]}\nsmoke: {script: [smoke]}\n"})
		parent := childPushRoot(t, p)
		if got := p.statuses(t, parent.ID); got != "build=pending child_a=created child_b=created | pending" {
			t.Fatalf("before build: %s", got)
		}
		run(t, s, p.job(t, parent.ID, "build").ID, succeed)

		childDownstream(t, p, parent.ID, "child_a")
		childDownstream(t, p, parent.ID, "child_b")
		a := childBridgeStatus(t, p, parent.ID, "child_a", "success")
		b := childBridgeStatus(t, p, parent.ID, "child_b", "running")
		for name, bridge := range map[string]jobJSON{"child_a": a, "child_b": b} {
			child := p.pipeline(t, bridge.DownstreamPipeline.ID)
			if child.Source != "parent_pipeline" || child.Ref != parent.Ref || child.SHA != parent.SHA || child.BeforeSHA != parent.BeforeSHA ||
				child.Tag || child.Status != "pending" || child.ProjectID != p.ID || child.YAMLErrors != nil || child.User == nil ||
				child.User.ID != owner.ID || child.ID == parent.ID {
				t.Errorf("%s: child pipeline %+v; parent %+v", name, child, parent)
			}
			if bridge.DownstreamPipeline.Status != "pending" || bridge.Pipeline.ID != parent.ID {
				t.Errorf("%s: bridge %+v", name, bridge)
			}
		}
		if t.Failed() {
			t.FailNow()
		}
		childA, childB := a.DownstreamPipeline.ID, b.DownstreamPipeline.ID
		pushWantJobs(t, p, childA, "unit")
		pushWantJobs(t, p, childB, "lint", "smoke")

		// The list leaves children out; by id they are there.
		var listed []int64
		for _, pl := range p.pipelines(t, "per_page=100") {
			listed = append(listed, pl.ID)
		}
		if !slices.Contains(listed, parent.ID) || slices.Contains(listed, childA) || slices.Contains(listed, childB) {
			t.Fatalf("pipeline list %v; parent %d, children %d and %d", listed, parent.ID, childA, childB)
		}

		// The parent's jobs include its children's.
		byPipeline := map[int64][]string{}
		for _, j := range p.jobs(t, parent.ID) {
			byPipeline[j.Pipeline.ID] = append(byPipeline[j.Pipeline.ID], j.Name)
		}
		for id := range byPipeline {
			slices.Sort(byPipeline[id])
		}
		if !slices.Equal(byPipeline[parent.ID], []string{"build"}) || !slices.Equal(byPipeline[childA], []string{"unit"}) ||
			!slices.Equal(byPipeline[childB], []string{"lint", "smoke"}) || len(byPipeline) != 3 {
			t.Fatalf("parent's jobs by pipeline %v", byPipeline)
		}

		// The depend bridge follows its child to success; the parent then
		// succeeds (child_a's child still pending does not hold it).
		run(t, s, p.job(t, childB, "lint").ID, succeed)
		run(t, s, p.job(t, childB, "smoke").ID, succeed)
		childPipelineStatus(t, p, childB, "success")
		b = childBridgeStatus(t, p, parent.ID, "child_b", "success")
		if b.DownstreamPipeline == nil || b.DownstreamPipeline.ID != childB || b.DownstreamPipeline.Status != "success" {
			t.Fatalf("child_b after its child succeeded: %+v", b)
		}
		childPipelineStatus(t, p, parent.ID, "success")
		if got := p.pipeline(t, childA).Status; got != "pending" {
			t.Fatalf("child_a's child: %s", got)
		}
	})
}

// TestCIChildren_ignoreSkipCI: a child pipeline runs even when the
// commit says [skip ci] (GitLab creates children with ignore_skip_ci);
// only push pipelines are skipped.
func TestCIChildren_ignoreSkipCI(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		owner := s.NewUser(t, "owner")
		p := newCIProject(t, s, owner, "skipchild", map[string]string{".gitlab-ci.yml": "child:\n  trigger: {include: child.yml}\n",
			"child.yml": "unit: {script: [unit]}\n"})
		p.settle(t, 1)
		sha := trigCommit(t, p, "quiet", "[ci skip] nothing to see", map[string]string{"doc.md": "d\n"})
		if push := pushPipeline(t, p, "quiet", sha); push.Status != "skipped" {
			t.Fatalf("push pipeline %+v", push)
		}
		parent := p.createPipeline(t, "quiet")
		if parent.Status == "skipped" {
			t.Fatalf("API pipeline %+v", parent)
		}
		b := childBridgeStatus(t, p, parent.ID, "child", "success")
		child := p.pipeline(t, b.DownstreamPipeline.ID)
		if child.Status != "pending" || child.SHA != sha || child.Source != "parent_pipeline" {
			t.Fatalf("child of a [ci skip] commit: %+v", child)
		}
		pushWantJobs(t, p, child.ID, "unit")
	})
}

// TestCIChildren_dependFollowsChild: a depend bridge takes its child's
// end: failed when the child fails, canceled when it is canceled.
func TestCIChildren_dependFollowsChild(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		owner := s.NewUser(t, "owner")
		config := `fails:
  trigger: {include: child.yml, strategy: depend}
cancels:
  trigger: {include: child.yml, strategy: depend}
`
		p := newCIProject(t, s, owner, "depend", map[string]string{".gitlab-ci.yml": config, "child.yml": "unit: {script: [unit]}\n"})
		parent := childPushRoot(t, p)
		fails := childDownstream(t, p, parent.ID, "fails")
		cancels := childDownstream(t, p, parent.ID, "cancels")
		childBridgeStatus(t, p, parent.ID, "fails", "running")
		childBridgeStatus(t, p, parent.ID, "cancels", "running")

		run(t, s, p.job(t, fails.DownstreamPipeline.ID, "unit").ID, fail)
		childPipelineStatus(t, p, fails.DownstreamPipeline.ID, "failed")
		if b := childBridgeStatus(t, p, parent.ID, "fails", "failed"); b.DownstreamPipeline.Status != "failed" {
			t.Fatalf("failed child's bridge %+v", b)
		}
		if got := p.pipeline(t, parent.ID).Status; got != "running" {
			t.Fatalf("parent with a bridge still running: %s", got)
		}

		s.Do(t, apitest.Request{Method: "POST", Path: fmt.Sprintf("/projects/%d/pipelines/%d/cancel", p.ID, cancels.DownstreamPipeline.ID),
			Token: owner.Token}).Want(t, http.StatusOK)
		childPipelineStatus(t, p, cancels.DownstreamPipeline.ID, "canceled")
		if b := childBridgeStatus(t, p, parent.ID, "cancels", "canceled"); b.DownstreamPipeline.Status != "canceled" {
			t.Fatalf("canceled child's bridge %+v", b)
		}
		childPipelineStatus(t, p, parent.ID, "failed")
	})
}

// TestCIChildren_depth: a child may start a grandchild, but a grandchild
// may not start another level: its bridge fails with
// reached_max_descendant_pipelines_depth and starts nothing.
func TestCIChildren_depth(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		owner := s.NewUser(t, "owner")
		p := newCIProject(t, s, owner, "deep", map[string]string{
			".gitlab-ci.yml": "level1:\n  trigger: {include: l1.yml}\n",
			"l1.yml":         "level2:\n  trigger: {include: l2.yml}\n",
			"l2.yml":         "level3:\n  trigger: {include: l3.yml}\n",
			"l3.yml":         "leaf: {script: [x]}\n",
		})
		root := childPushRoot(t, p)
		child := childDownstream(t, p, root.ID, "level1").DownstreamPipeline.ID
		grandchild := childDownstream(t, p, child, "level2").DownstreamPipeline.ID
		if g := p.pipeline(t, grandchild); g.Source != "parent_pipeline" || g.SHA != root.SHA {
			t.Fatalf("grandchild %+v", g)
		}
		pushWantJobs(t, p, grandchild, "level3")
		b := childBridgeStatus(t, p, grandchild, "level3", "failed")
		if b.FailureReason != "reached_max_descendant_pipelines_depth" || b.DownstreamPipeline != nil {
			t.Fatalf("great-grandchild's bridge %+v", b)
		}
		childPipelineStatus(t, p, grandchild, "failed")
		if got := len(p.jobs(t, root.ID)); got != 0 {
			t.Fatalf("the family has %d jobs (bridges only); want 0", got)
		}
	})
}

// TestCIChildren_missingChildConfig: a child configuration that does not
// exist. GitLab creates the child pipeline with the chain's
// save_on_errors, so it is stored failed with its yaml_errors and linked
// to the bridge; the pipeline is not "created successfully" (it carries
// a failure reason), so the bridge fails with
// downstream_pipeline_creation_failed (reference §8: a creation failure
// fails the bridge) — with or without strategy: depend.
func TestCIChildren_missingChildConfig(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		owner := s.NewUser(t, "owner")
		config := `forget:
  trigger: {include: missing.yml}
follow:
  trigger:
    include: [{local: missing.yml}]
    strategy: depend
`
		p := newCIProject(t, s, owner, "missing", map[string]string{".gitlab-ci.yml": config})
		parent := childPushRoot(t, p)
		for _, name := range []string{"forget", "follow"} {
			b := childBridgeWhen(t, p, parent.ID, name, "finished", func(b jobJSON) bool {
				return b.Status == "success" || b.Status == "failed" || b.Status == "canceled"
			})
			if b.Status != "failed" || b.FailureReason != "downstream_pipeline_creation_failed" {
				t.Errorf("%s: bridge %s (%s); want failed (downstream_pipeline_creation_failed)", name, b.Status, b.FailureReason)
			}
			if b.DownstreamPipeline == nil {
				t.Errorf("%s: no downstream pipeline", name)
				continue
			}
			child := p.pipeline(t, b.DownstreamPipeline.ID)
			if child.Status != "failed" || child.Source != "parent_pipeline" || child.YAMLErrors == nil ||
				*child.YAMLErrors != "Local file `missing.yml` does not exist!" || child.SHA != parent.SHA || child.FinishedAt == nil {
				t.Errorf("%s: child %+v (yaml_errors %s)", name, child, pushDeref(child.YAMLErrors))
			}
			pushWantJobs(t, p, child.ID)
		}
		if t.Failed() {
			t.FailNow()
		}
		childPipelineStatus(t, p, parent.ID, "failed")
	})
}

// TestCIChildren_forwardExpandsVariables: a bridge's YAML variables are
// expanded in the parent before they go downstream (GitLab's way to hand
// a child the parent's predefined values, as in
// "PARENT_SOURCE: $CI_PIPELINE_SOURCE"): the child receives the parent's
// values, not references its own context would resolve differently.
func TestCIChildren_forwardExpandsVariables(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		owner := s.NewUser(t, "owner")
		config := `variables:
  GLOBAL: g
child:
  variables:
    PARENT_SOURCE: $CI_PIPELINE_SOURCE
    DERIVED: ${GLOBAL}-x
  trigger: {include: child.yml}
`
		childConfig := `from_push:
  script: [x]
  rules: [{if: $PARENT_SOURCE == "push"}]
derived:
  script: [x]
  rules: [{if: $DERIVED == "g-x"}]
always:
  script: [x]
`
		p := newCIProject(t, s, owner, "expand", map[string]string{".gitlab-ci.yml": config, "child.yml": childConfig})
		parent := childPushRoot(t, p)
		child := childDownstream(t, p, parent.ID, "child").DownstreamPipeline.ID
		want := []string{"DERIVED=g-x (env_var)", "GLOBAL=g (env_var)", "PARENT_SOURCE=push (env_var)"}
		if got := trigPipelineVariables(t, p, child); !slices.Equal(got, want) {
			t.Errorf("child variables %v; want %v", got, want)
		}
		if got := pushJobNames(t, p, child); !slices.Equal(got, []string{"always", "derived", "from_push"}) {
			t.Errorf("child jobs %v; want [always derived from_push]", got)
		}
	})
}

// TestCIChildren_childFilteredOut: a child configuration whose workflow
// rules refuse the pipeline creates nothing (GitLab does not keep a
// pipeline filtered by workflow rules), so the bridge fails with
// downstream_pipeline_creation_failed and has no downstream pipeline.
func TestCIChildren_childFilteredOut(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		owner := s.NewUser(t, "owner")
		p := newCIProject(t, s, owner, "filtered", map[string]string{".gitlab-ci.yml": "child:\n  trigger: {include: child.yml}\n",
			"child.yml": "workflow:\n  rules:\n    - when: never\nunit: {script: [unit]}\n"})
		parent := childPushRoot(t, p)
		b := childBridgeWhen(t, p, parent.ID, "child", "finished", func(b jobJSON) bool { return b.Status == "failed" || b.Status == "success" })
		if b.Status != "failed" || b.FailureReason != "downstream_pipeline_creation_failed" || b.DownstreamPipeline != nil {
			t.Fatalf("bridge %+v", b)
		}
		if got := len(p.jobs(t, parent.ID)); got != 0 {
			t.Fatalf("%d jobs in the family; want 0", got)
		}
		childPipelineStatus(t, p, parent.ID, "failed")
	})
}

// TestCIChildren_cancelParent: canceling a parent cancels its child
// pipelines' jobs (a running one too; a child whose bridge already
// succeeded too) and the depend bridge.
func TestCIChildren_cancelParent(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		owner := s.NewUser(t, "owner")
		config := `stages: [child, after]
child:
  stage: child
  trigger: {include: child.yml, strategy: depend}
loose:
  stage: child
  trigger: {include: child.yml}
after: {stage: after, script: [x]}
`
		p := newCIProject(t, s, owner, "cancel", map[string]string{".gitlab-ci.yml": config,
			"child.yml": "unit: {script: [unit]}\nother: {script: [other]}\n"})
		parent := childPushRoot(t, p)
		child := childDownstream(t, p, parent.ID, "child").DownstreamPipeline.ID
		loose := childDownstream(t, p, parent.ID, "loose").DownstreamPipeline.ID
		childBridgeStatus(t, p, parent.ID, "child", "running")
		childBridgeStatus(t, p, parent.ID, "loose", "success")
		if _, err := engine(s).Start(ctx(t), p.job(t, child, "unit").ID); err != nil {
			t.Fatal(err)
		}
		if got := p.statuses(t, child); got != "other=pending unit=running | running" {
			t.Fatalf("child before cancel: %s", got)
		}

		s.Do(t, apitest.Request{Method: "POST", Path: fmt.Sprintf("/projects/%d/pipelines/%d/cancel", p.ID, parent.ID), Token: owner.Token}).
			Want(t, http.StatusOK)
		childPipelineStatus(t, p, child, "canceled")
		if got := p.statuses(t, child); got != "other=canceled unit=canceled | canceled" {
			t.Fatalf("child after the parent's cancel: %s", got)
		}
		// A child without depend is canceled too.
		childPipelineStatus(t, p, loose, "canceled")
		if got := p.statuses(t, loose); got != "other=canceled unit=canceled | canceled" {
			t.Fatalf("fire-and-forget child after the parent's cancel: %s", got)
		}
		childPipelineStatus(t, p, parent.ID, "canceled")
		if got := p.statuses(t, parent.ID); got != "after=canceled child=canceled loose=success | canceled" {
			t.Fatalf("parent after cancel: %s", got)
		}
	})
}

// TestCIChildren_deleteParent: deleting a parent pipeline deletes its
// child pipelines and their jobs.
func TestCIChildren_deleteParent(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		owner := s.NewUser(t, "owner")
		p := newCIProject(t, s, owner, "delete", map[string]string{".gitlab-ci.yml": "child:\n  trigger: {include: child.yml}\n",
			"child.yml": "unit: {script: [unit]}\n"})
		parent := childPushRoot(t, p)
		child := childDownstream(t, p, parent.ID, "child").DownstreamPipeline.ID
		unit := p.job(t, child, "unit")

		s.Do(t, apitest.Request{Method: "DELETE", Path: fmt.Sprintf("/projects/%d/pipelines/%d", p.ID, parent.ID), Token: owner.Token}).
			Want(t, http.StatusNoContent)
		s.Get(t, fmt.Sprintf("/projects/%d/pipelines/%d", p.ID, parent.ID), owner.Token).Want(t, http.StatusNotFound).
			WantBody(t, `{"message":"404 Pipeline Not Found"}`)
		s.Get(t, fmt.Sprintf("/projects/%d/pipelines/%d", p.ID, child), owner.Token).Want(t, http.StatusNotFound).
			WantBody(t, `{"message":"404 Pipeline Not Found"}`)
		s.Get(t, fmt.Sprintf("/projects/%d/jobs/%d", p.ID, unit.ID), owner.Token).Want(t, http.StatusNotFound).
			WantBody(t, `{"message":"404 Not found"}`)
		if got := p.pipelines(t, "per_page=100"); len(got) != 0 {
			t.Fatalf("pipelines left %+v", got)
		}
	})
}

// TestCIChildren_forwardVariables: trigger:forward. YAML variables (the
// global ones and the bridge's) go to the child by default and its rules
// see them; the parent's pipeline variables only with
// pipeline_variables: true; yaml_variables: false keeps the YAML ones
// back. What is forwarded is the child's pipeline variables.
func TestCIChildren_forwardVariables(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		owner := s.NewUser(t, "owner")
		config := `variables:
  GLOBAL: g
plain:
  variables: {MODE: fast}
  trigger: {include: child.yml}
with_pipeline:
  trigger:
    include: child.yml
    forward: {pipeline_variables: true}
without_yaml:
  variables: {MODE: fast}
  trigger:
    include: child.yml
    forward: {yaml_variables: false}
`
		childConfig := `fast:
  script: [x]
  rules: [{if: $MODE == "fast"}]
global:
  script: [x]
  rules: [{if: $GLOBAL == "g"}]
piped:
  script: [x]
  rules: [{if: $PV == "yes"}]
always:
  script: [x]
`
		p := newCIProject(t, s, owner, "forward", map[string]string{".gitlab-ci.yml": config, "child.yml": childConfig})
		p.settle(t, 1)
		var parent pipelineJSON
		s.Do(t, apitest.Request{Method: "POST", Path: fmt.Sprintf("/projects/%d/pipeline", p.ID), Token: owner.Token,
			JSON: map[string]any{"ref": "main", "variables": []map[string]any{{"key": "PV", "value": "yes"}}}}).
			Want(t, http.StatusCreated).JSON(t, &parent)

		want := map[string]struct{ jobs, vars []string }{
			"plain":         {[]string{"always", "fast", "global"}, []string{"GLOBAL=g (env_var)", "MODE=fast (env_var)"}},
			"with_pipeline": {[]string{"always", "global", "piped"}, []string{"GLOBAL=g (env_var)", "PV=yes (env_var)"}},
			"without_yaml":  {[]string{"always"}, []string{}},
		}
		for name, w := range want {
			child := childDownstream(t, p, parent.ID, name).DownstreamPipeline.ID
			if got := pushJobNames(t, p, child); !slices.Equal(got, w.jobs) {
				t.Errorf("%s: child jobs %v; want %v", name, got, w.jobs)
			}
			if got := trigPipelineVariables(t, p, child); !slices.Equal(got, w.vars) {
				t.Errorf("%s: child variables %v; want %v", name, got, w.vars)
			}
		}
	})
}

// childGroupProject makes a project in a group with a CI configuration.
func childGroupProject(t *testing.T, s *apitest.Server, owner apitest.User, groupID int64, name, visibility, config string) ciProject {
	t.Helper()
	var pj struct {
		ID                int64  `json:"id"`
		PathWithNamespace string `json:"path_with_namespace"`
	}
	s.Do(t, apitest.Request{Method: "POST", Path: "/projects", Token: owner.Token, JSON: map[string]any{"name": name,
		"namespace_id": groupID, "visibility": visibility, "initialize_with_readme": true}}).Want(t, http.StatusCreated).JSON(t, &pj)
	p := ciProject{s: s, ID: pj.ID, Path: pj.PathWithNamespace, Token: owner.Token}
	p.commit(t, "main", map[string]string{".gitlab-ci.yml": config})
	return p
}

// TestCIChildren_multiProject: trigger:project starts a pipeline of
// another project (source pipeline, the named branch, the bridge's user)
// when the user may run pipelines on that branch; otherwise the bridge
// fails: downstream_bridge_project_not_found for a project that does not
// exist or that the user cannot see, insufficient_bridge_permissions for
// one the user sees but may not run pipelines in (a reporter; a
// developer on a protected branch).
func TestCIChildren_multiProject(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		alice := s.NewUser(t, "alice")
		bob := s.NewUser(t, "bob")
		var g struct{ ID int64 }
		s.Do(t, apitest.Request{Method: "POST", Path: "/groups", Token: bob.Token, JSON: map[string]any{"name": "Grp", "path": "grp",
			"visibility": "private"}}).Want(t, http.StatusCreated).JSON(t, &g)
		target := "downstream:\n  script: [x]\n  rules: [{if: $CI_PIPELINE_SOURCE == \"pipeline\"}]\nalways: {script: [y]}\n"
		ok := childGroupProject(t, s, bob, g.ID, "ok", "private", target)
		reported := childGroupProject(t, s, bob, g.ID, "reported", "private", target)
		hidden := childGroupProject(t, s, bob, g.ID, "hidden", "private", target)
		devonly := childGroupProject(t, s, bob, g.ID, "devonly", "private", target)
		trigAddMember(t, s, ok, alice, 40)
		trigAddMember(t, s, reported, alice, 20)
		trigAddMember(t, s, devonly, alice, 30)
		for _, tp := range []ciProject{ok, reported, hidden, devonly} {
			tp.settle(t, 1)
		}
		okHead := ok.pipelines(t, "source=push")[0].SHA

		config := `to_ok:
  trigger: {project: grp/ok, branch: main}
to_missing:
  trigger: {project: grp/missing}
to_hidden:
  trigger: {project: grp/hidden}
to_reporter:
  trigger: {project: grp/reported}
to_protected:
  trigger: {project: grp/devonly, branch: main}
`
		up := newCIProject(t, s, alice, "up", map[string]string{".gitlab-ci.yml": config})
		parent := childPushRoot(t, up)

		b := childBridgeStatus(t, up, parent.ID, "to_ok", "success")
		if b.DownstreamPipeline == nil {
			t.Fatalf("to_ok: %+v", b)
		}
		down := ok.pipeline(t, b.DownstreamPipeline.ID)
		if down.Source != "pipeline" || down.ProjectID != ok.ID || down.Ref != "main" || down.SHA != okHead || down.Tag ||
			down.Status != "pending" || down.User == nil || down.User.ID != alice.ID {
			t.Fatalf("downstream pipeline %+v", down)
		}
		pushWantJobs(t, ok, down.ID, "always", "downstream")
		if got := ok.pipelines(t, "source=pipeline"); len(got) != 1 || got[0].ID != down.ID {
			t.Fatalf("the downstream project's source=pipeline list %+v", got)
		}
		if got := up.pipelines(t, "per_page=100"); len(got) != 1 || got[0].ID != parent.ID {
			t.Fatalf("the upstream project's pipelines %+v", got)
		}

		for name, reason := range map[string]string{
			"to_missing":   "downstream_bridge_project_not_found",
			"to_hidden":    "downstream_bridge_project_not_found",
			"to_reporter":  "insufficient_bridge_permissions",
			"to_protected": "insufficient_bridge_permissions",
		} {
			b := childBridgeStatus(t, up, parent.ID, name, "failed")
			if b.FailureReason != reason || b.DownstreamPipeline != nil {
				t.Errorf("%s: bridge %+v; want failure_reason %s", name, b, reason)
			}
		}
		for _, tp := range []ciProject{reported, hidden, devonly} {
			if got := tp.pipelines(t, "per_page=100"); len(got) != 1 {
				t.Errorf("%s has %d pipelines; want its push one only", tp.Path, len(got))
			}
		}
		if t.Failed() {
			t.FailNow()
		}
		childPipelineStatus(t, up, parent.ID, "failed")
	})
}
