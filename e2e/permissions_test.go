package e2e

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"quarry/internal/apitest"
)

// permAction is one column of the matrix: a call and the status GitLab
// gives each principal on each project (grid: one line per principal,
// columns public, internal, private, features-private).
type permAction struct {
	name string
	do   func(t *testing.T, f *permFixture, c permCred, p *permProject) int
	grid string
}

// The grids are GitLab's answers, read from its source: the project
// policy (app/policies/project_policy.rb: roles, feature access levels —
// a private feature is open to members from Guest up, merge requests from
// Reporter up — public_builds, the job token scope) and each endpoint's
// authenticate!/authenticate_non_get! and authorize! calls (lib/api/…).
// A project the caller may not see is 404; a visible one it may not act
// on is 403; no token where the endpoint authenticates first is 401.
// Job tokens count only on the endpoints that take them (jobs, pipeline
// jobs, artifacts, git); elsewhere GitLab ignores them and the caller is
// anonymous. A read_api token reads as its maintainer; read_repository
// opens the files API and git only.
var permActions = []permAction{
	{"read project", func(t *testing.T, f *permFixture, c permCred, p *permProject) int {
		return f.call(t, c, "GET", fmt.Sprintf("/projects/%d", p.ID), nil)
	}, `
		anonymous       200 404 404 200
		non-member      200 200 404 200
		external        200 404 404 200
		guest           200 200 200 200
		reporter        200 200 200 200
		developer       200 200 200 200
		maintainer      200 200 200 200
		owner           200 200 200 200
		blocked         403 403 403 403
		admin           200 200 200 200
		read_api        200 200 200 200
		read_repository 403 403 403 403
		job             200 404 404 200
		job-allowed     200 404 404 200
		job-refused     200 404 404 200`},

	// download_code: guests of a private project do not read its code;
	// a private repository is open to members from Guest up.
	{"read repository", func(t *testing.T, f *permFixture, c permCred, p *permProject) int {
		return f.call(t, c, "GET", fmt.Sprintf("/projects/%d/repository/tree", p.ID), nil)
	}, permReadCode},
	{"read file", func(t *testing.T, f *permFixture, c permCred, p *permProject) int {
		return f.call(t, c, "GET", fmt.Sprintf("/projects/%d/repository/files/README.md/raw?ref=main", p.ID), nil)
	}, `
		anonymous       200 404 404 403
		non-member      200 200 404 403
		external        200 404 404 403
		guest           200 200 403 200
		reporter        200 200 200 200
		developer       200 200 200 200
		maintainer      200 200 200 200
		owner           200 200 200 200
		blocked         403 403 403 403
		admin           200 200 200 200
		read_api        200 200 200 200
		read_repository 200 200 200 200
		job             200 404 404 403
		job-allowed     200 404 404 403
		job-refused     200 404 404 403`},
	{"manage members", func(t *testing.T, f *permFixture, c permCred, p *permProject) int {
		st := f.call(t, c, "POST", fmt.Sprintf("/projects/%d/members", p.ID), map[string]any{"user_id": f.newcomer.ID, "access_level": 10})
		if ok(st) {
			f.asOwner(t, "DELETE", fmt.Sprintf("/projects/%d/members/%d", p.ID, f.newcomer.ID), nil, http.StatusNoContent)
		}
		return st
	}, permMaintainerWrite(201)},
	{"update settings", func(t *testing.T, f *permFixture, c permCred, p *permProject) int {
		return f.call(t, c, "PUT", fmt.Sprintf("/projects/%d", p.ID), map[string]any{"description": "changed"})
	}, permMaintainerWrite(200)},
	{"protect branch", func(t *testing.T, f *permFixture, c permCred, p *permProject) int {
		st := f.call(t, c, "POST", fmt.Sprintf("/projects/%d/protected_branches", p.ID), map[string]any{"name": "rel-*"})
		if ok(st) {
			f.asOwner(t, "DELETE", fmt.Sprintf("/projects/%d/protected_branches/rel-*", p.ID), nil, http.StatusNoContent)
		}
		return st
	}, permMaintainerWrite(201)},
	{"delete project", func(t *testing.T, f *permFixture, c permCred, p *permProject) int {
		st := f.call(t, c, "DELETE", fmt.Sprintf("/projects/%d", p.ID), nil)
		if ok(st) {
			f.asOwner(t, "POST", fmt.Sprintf("/projects/%d/restore", p.ID), nil, http.StatusCreated)
		}
		return st
	}, `
		anonymous       401 401 401 401
		non-member      403 403 404 403
		external        403 404 404 403
		guest           403 403 403 403
		reporter        403 403 403 403
		developer       403 403 403 403
		maintainer      403 403 403 403
		owner           202 202 202 202
		blocked         403 403 403 403
		admin           202 202 202 202
		read_api        403 403 403 403
		read_repository 403 403 403 403
		job             401 401 401 401
		job-allowed     401 401 401 401
		job-refused     401 401 401 401`},

	// CI. lib/api/ci/pipelines.rb: authenticate_non_get!, read_pipeline
	// (and read_build for the list); public_builds opens pipelines and
	// jobs to everyone who sees the project, its guests included.
	{"list pipelines", func(t *testing.T, f *permFixture, c permCred, p *permProject) int {
		return f.call(t, c, "GET", fmt.Sprintf("/projects/%d/pipelines", p.ID), nil)
	}, permReadCI},
	{"read pipeline", func(t *testing.T, f *permFixture, c permCred, p *permProject) int {
		return f.call(t, c, "GET", fmt.Sprintf("/projects/%d/pipelines/%d", p.ID, p.readPipeline), nil)
	}, permReadCI},
	// create_pipeline, update_pipeline, cancel_pipeline: developers.
	{"create pipeline", func(t *testing.T, f *permFixture, c permCred, p *permProject) int {
		return f.call(t, c, "POST", fmt.Sprintf("/projects/%d/pipeline", p.ID), map[string]any{"ref": "feature"})
	}, permDeveloperWrite(201)},
	{"retry pipeline", func(t *testing.T, f *permFixture, c permCred, p *permProject) int {
		if p.retry == 0 {
			p.retry = f.failedPipeline(t, p)
		}
		st := f.call(t, c, "POST", fmt.Sprintf("/projects/%d/pipelines/%d/retry", p.ID, p.retry), nil)
		if ok(st) {
			p.retry = 0
		}
		return st
	}, permDeveloperWrite(201)},
	{"cancel pipeline", func(t *testing.T, f *permFixture, c permCred, p *permProject) int {
		if p.cancel == 0 {
			p.cancel = p.createPipeline(t, "feature").ID
		}
		st := f.call(t, c, "POST", fmt.Sprintf("/projects/%d/pipelines/%d/cancel", p.ID, p.cancel), nil)
		if ok(st) {
			p.cancel = 0
		}
		return st
	}, permDeveloperWrite(200)},
	// lib/api/ci/jobs.rb authenticates every call first (no anonymous
	// reader, even of a public project); read_build.
	{"list jobs", func(t *testing.T, f *permFixture, c permCred, p *permProject) int {
		return f.call(t, c, "GET", fmt.Sprintf("/projects/%d/jobs", p.ID), nil)
	}, permReadJobs},
	{"read job", func(t *testing.T, f *permFixture, c permCred, p *permProject) int {
		return f.call(t, c, "GET", fmt.Sprintf("/projects/%d/jobs/%d", p.ID, p.readJob), nil)
	}, permReadJobs},
	{"job trace", func(t *testing.T, f *permFixture, c permCred, p *permProject) int {
		return f.call(t, c, "GET", fmt.Sprintf("/projects/%d/jobs/%d/trace", p.ID, p.readJob), nil)
	}, `
		anonymous       401 401 401 401
		non-member      200 200 404 403
		external        200 404 404 403
		guest           200 200 200 200
		reporter        200 200 200 200
		developer       200 200 200 200
		maintainer      200 200 200 200
		owner           200 200 200 200
		blocked         403 403 403 403
		admin           200 200 200 200
		read_api        200 200 200 200
		read_repository 403 403 403 403
		job             401 401 401 401
		job-allowed     401 401 401 401
		job-refused     401 401 401 401`},
	// lib/api/ci/job_artifacts.rb: authenticate_non_get!, read_build, job
	// tokens taken.
	{"job artifacts", func(t *testing.T, f *permFixture, c permCred, p *permProject) int {
		return f.call(t, c, "GET", fmt.Sprintf("/projects/%d/jobs/%d/artifacts", p.ID, p.readJob), nil)
	}, `
		anonymous       200 404 404 403
		non-member      200 200 404 403
		external        200 404 404 403
		guest           200 200 200 200
		reporter        200 200 200 200
		developer       200 200 200 200
		maintainer      200 200 200 200
		owner           200 200 200 200
		blocked         403 403 403 403
		admin           200 200 200 200
		read_api        200 200 200 200
		read_repository 403 403 403 403
		job             200 200 200 200
		job-allowed     200 200 200 200
		job-refused     200 200 403 200`},
	// read_pipeline, then read_build; a job token its target refuses
	// loses read_pipeline (project_policy.rb: public_or_internal &
	// ~project_allowed_for_job_token_by_scope).
	{"pipeline jobs", func(t *testing.T, f *permFixture, c permCred, p *permProject) int {
		return f.call(t, c, "GET", fmt.Sprintf("/projects/%d/pipelines/%d/jobs", p.ID, p.readPipeline), nil)
	}, `
		anonymous       200 404 404 403
		non-member      200 200 404 403
		external        200 404 404 403
		guest           200 200 200 200
		reporter        200 200 200 200
		developer       200 200 200 200
		maintainer      200 200 200 200
		owner           200 200 200 200
		blocked         403 403 403 403
		admin           200 200 200 200
		read_api        200 200 200 200
		read_repository 403 403 403 403
		job             200 200 200 200
		job-allowed     200 200 200 200
		job-refused     403 403 403 403`},
	// lib/api/ci/variables.rb, triggers.rb, runners.rb: authenticate!,
	// then admin_build / admin_project / update_runners_registration_token
	// (maintainers); enabling a runner also wants assign_runner, which the
	// maintainers have (they maintain the runner's project).
	{"list variables", func(t *testing.T, f *permFixture, c permCred, p *permProject) int {
		return f.call(t, c, "GET", fmt.Sprintf("/projects/%d/variables", p.ID), nil)
	}, permMaintainerRead},
	{"create variable", func(t *testing.T, f *permFixture, c permCred, p *permProject) int {
		return f.call(t, c, "POST", fmt.Sprintf("/projects/%d/variables", p.ID), map[string]any{"key": fmt.Sprintf("V_%d", f.next()), "value": "x"})
	}, permMaintainerWrite(201)},
	{"list triggers", func(t *testing.T, f *permFixture, c permCred, p *permProject) int {
		return f.call(t, c, "GET", fmt.Sprintf("/projects/%d/triggers", p.ID), nil)
	}, permMaintainerRead},
	{"create trigger", func(t *testing.T, f *permFixture, c permCred, p *permProject) int {
		return f.call(t, c, "POST", fmt.Sprintf("/projects/%d/triggers", p.ID), map[string]any{"description": "matrix"})
	}, permMaintainerWrite(201)},
	{"list project runners", func(t *testing.T, f *permFixture, c permCred, p *permProject) int {
		return f.call(t, c, "GET", fmt.Sprintf("/projects/%d/runners", p.ID), nil)
	}, permMaintainerRead},
	{"reset registration token", func(t *testing.T, f *permFixture, c permCred, p *permProject) int {
		return f.call(t, c, "POST", fmt.Sprintf("/projects/%d/runners/reset_registration_token", p.ID), nil)
	}, permMaintainerWrite(201)},
	{"enable runner", func(t *testing.T, f *permFixture, c permCred, p *permProject) int {
		st := f.call(t, c, "POST", fmt.Sprintf("/projects/%d/runners", p.ID), map[string]any{"runner_id": f.runner})
		if ok(st) {
			f.asOwner(t, "DELETE", fmt.Sprintf("/projects/%d/runners/%d", p.ID, f.runner), nil, http.StatusNoContent)
		}
		return st
	}, permMaintainerWrite(201)},

	// Merge requests. lib/api/merge_requests.rb: authenticate_non_get!;
	// the list and a merge request authorize read_merge_request (403 on a
	// project the caller sees), creating create_merge_request_from,
	// updating update_merge_request (developers, the author); a merge
	// finds the merge request among those the caller reads (404) and
	// answers 401 to one who may not merge into the protected main.
	{"list merge requests", func(t *testing.T, f *permFixture, c permCred, p *permProject) int {
		return f.call(t, c, "GET", fmt.Sprintf("/projects/%d/merge_requests", p.ID), nil)
	}, permReadMR},
	{"read merge request", func(t *testing.T, f *permFixture, c permCred, p *permProject) int {
		return f.call(t, c, "GET", fmt.Sprintf("/projects/%d/merge_requests/%d", p.ID, p.mr), nil)
	}, permReadMR},
	{"create merge request", func(t *testing.T, f *permFixture, c permCred, p *permProject) int {
		if p.proposal {
			// Close the last one: a branch has one open merge request.
			mrs := f.s.Get(t, fmt.Sprintf("/projects/%d/merge_requests?state=opened&source_branch=proposal", p.ID), f.owner.Token).Array(t)
			for _, m := range mrs {
				f.asOwner(t, "PUT", fmt.Sprintf("/projects/%d/merge_requests/%v", p.ID, m["iid"]), map[string]any{"state_event": "close"}, http.StatusOK)
			}
			p.proposal = false
		}
		st := f.call(t, c, "POST", fmt.Sprintf("/projects/%d/merge_requests", p.ID),
			map[string]any{"source_branch": "proposal", "target_branch": "main", "title": "Proposal"})
		p.proposal = ok(st)
		return st
	}, permDeveloperWrite(201)},
	{"update merge request", func(t *testing.T, f *permFixture, c permCred, p *permProject) int {
		return f.call(t, c, "PUT", fmt.Sprintf("/projects/%d/merge_requests/%d", p.ID, p.mr), map[string]any{"title": "Feature, edited"})
	}, permDeveloperWrite(200)},
	{"merge", func(t *testing.T, f *permFixture, c permCred, p *permProject) int {
		if p.merge == 0 {
			p.merge = f.mergeable(t, p)
		}
		st := f.call(t, c, "PUT", fmt.Sprintf("/projects/%d/merge_requests/%d/merge", p.ID, p.merge), nil)
		if ok(st) {
			p.merge = 0
		}
		return st
	}, `
		anonymous       401 401 401 401
		non-member      401 401 404 404
		external        401 404 404 404
		guest           401 401 404 404
		reporter        401 401 401 401
		developer       401 401 401 401
		maintainer      200 200 200 200
		owner           200 200 200 200
		blocked         403 403 403 403
		admin           200 200 200 200
		read_api        403 403 403 403
		read_repository 403 403 403 403
		job             401 401 401 401
		job-allowed     401 401 401 401
		job-refused     401 401 401 401`},
	// lib/api/merge_request_approvals.rb (and its EE prepend): approving
	// authorizes approve_merge_request (developers, the author); reading
	// approvals, authenticate_non_get! and read_merge_request only.
	{"approve", func(t *testing.T, f *permFixture, c permCred, p *permProject) int {
		return f.call(t, c, "POST", fmt.Sprintf("/projects/%d/merge_requests/%d/approve", p.ID, p.mr), nil)
	}, permDeveloperWrite(201)},
	{"approvals", func(t *testing.T, f *permFixture, c permCred, p *permProject) int {
		return f.call(t, c, "GET", fmt.Sprintf("/projects/%d/merge_requests/%d/approvals", p.ID, p.mr), nil)
	}, permReadMR},
	{"approval state", func(t *testing.T, f *permFixture, c permCred, p *permProject) int {
		return f.call(t, c, "GET", fmt.Sprintf("/projects/%d/merge_requests/%d/approval_state", p.ID, p.mr), nil)
	}, permReadMR},
	// ee/lib/api/project_approval_rules.rb: authenticate!; reading wants
	// admin_project or create_merge_request_in (a guest who reads the
	// code), creating admin_project.
	{"read approval rules", func(t *testing.T, f *permFixture, c permCred, p *permProject) int {
		return f.call(t, c, "GET", fmt.Sprintf("/projects/%d/approval_rules", p.ID), nil)
	}, `
		anonymous       401 401 401 401
		non-member      200 200 404 403
		external        200 404 404 403
		guest           200 200 403 403
		reporter        200 200 200 200
		developer       200 200 200 200
		maintainer      200 200 200 200
		owner           200 200 200 200
		blocked         403 403 403 403
		admin           200 200 200 200
		read_api        200 200 200 200
		read_repository 403 403 403 403
		job             401 401 401 401
		job-allowed     401 401 401 401
		job-refused     401 401 401 401`},
	{"create approval rule", func(t *testing.T, f *permFixture, c permCred, p *permProject) int {
		return f.call(t, c, "POST", fmt.Sprintf("/projects/%d/approval_rules", p.ID),
			map[string]any{"name": fmt.Sprintf("rule %d", f.next()), "approvals_required": 0, "user_ids": []int64{f.newcomer.ID}})
	}, permMaintainerWrite(201)},

	// Wikis. lib/api/wikis.rb authenticates nothing itself: read_wiki,
	// create_wiki (developers), admin_wiki (maintainers), so an anonymous
	// write to a wiki it sees is a 403.
	{"read wiki", func(t *testing.T, f *permFixture, c permCred, p *permProject) int {
		return f.call(t, c, "GET", fmt.Sprintf("/projects/%d/wikis/home", p.ID), nil)
	}, `
		anonymous       200 404 404 403
		non-member      200 200 404 403
		external        200 404 404 403
		guest           200 200 200 200
		reporter        200 200 200 200
		developer       200 200 200 200
		maintainer      200 200 200 200
		owner           200 200 200 200
		blocked         403 403 403 403
		admin           200 200 200 200
		read_api        200 200 200 200
		read_repository 403 403 403 403
		job             200 404 404 403
		job-allowed     200 404 404 403
		job-refused     200 404 404 403`},
	{"create wiki page", func(t *testing.T, f *permFixture, c permCred, p *permProject) int {
		return f.call(t, c, "POST", fmt.Sprintf("/projects/%d/wikis", p.ID), map[string]any{"title": fmt.Sprintf("page %d", f.next()), "content": "x"})
	}, permWikiWrite(201, "developer")},
	{"update wiki page", func(t *testing.T, f *permFixture, c permCred, p *permProject) int {
		return f.call(t, c, "PUT", fmt.Sprintf("/projects/%d/wikis/home", p.ID), map[string]any{"content": fmt.Sprintf("edit %d", f.next())})
	}, permWikiWrite(200, "developer")},
	{"delete wiki page", func(t *testing.T, f *permFixture, c permCred, p *permProject) int {
		if p.doomed == "" {
			p.doomed = f.doomedPage(t, p)
		}
		st := f.call(t, c, "DELETE", fmt.Sprintf("/projects/%d/wikis/%s", p.ID, p.doomed), nil)
		if ok(st) {
			p.doomed = ""
		}
		return st
	}, permWikiWrite(204, "maintainer")},
	// Git over HTTP (Gitlab::GitAccessWiki): an anonymous caller is asked
	// for credentials (401); a clone wants download_wiki_code (Reporter
	// up, or who reads the project publicly; a job token, the project's
	// build_download_code), a push create_wiki and a token that may push.
	{"clone wiki", func(t *testing.T, f *permFixture, c permCred, p *permProject) int {
		return f.git(t, c, p, false)
	}, `
		anonymous       200 401 401 401
		non-member      200 200 404 403
		external        200 404 404 403
		guest           200 200 403 200
		reporter        200 200 200 200
		developer       200 200 200 200
		maintainer      200 200 200 200
		owner           200 200 200 200
		blocked         401 401 401 401
		admin           200 200 200 200
		read_api        200 200 200 200
		read_repository 200 200 200 200
		job             200 200 200 200
		job-allowed     200 200 200 200
		job-refused     200 200 403 403`},
	{"push wiki", func(t *testing.T, f *permFixture, c permCred, p *permProject) int {
		return f.git(t, c, p, true)
	}, `
		anonymous       401 401 401 401
		non-member      403 403 404 403
		external        403 404 404 403
		guest           403 403 403 403
		reporter        403 403 403 403
		developer       200 200 200 200
		maintainer      200 200 200 200
		owner           200 200 200 200
		blocked         401 401 401 401
		admin           200 200 200 200
		read_api        403 403 403 403
		read_repository 403 403 403 403
		job             403 403 403 403
		job-allowed     403 403 403 403
		job-refused     403 403 403 403`},

	// lib/api/project_snapshots.rb: authenticated_with_can_read_all_resources!
	// before the project is looked up.
	{"snapshot", func(t *testing.T, f *permFixture, c permCred, p *permProject) int {
		return f.call(t, c, "GET", fmt.Sprintf("/projects/%d/snapshot", p.ID), nil)
	}, `
		anonymous       401 401 401 401
		non-member      403 403 403 403
		external        403 403 403 403
		guest           403 403 403 403
		reporter        403 403 403 403
		developer       403 403 403 403
		maintainer      403 403 403 403
		owner           403 403 403 403
		blocked         403 403 403 403
		admin           200 200 200 200
		read_api        403 403 403 403
		read_repository 403 403 403 403
		job             401 401 401 401
		job-allowed     401 401 401 401
		job-refused     401 401 401 401`},
}

// permReadCode: download_code.
const permReadCode = `
		anonymous       200 404 404 403
		non-member      200 200 404 403
		external        200 404 404 403
		guest           200 200 403 200
		reporter        200 200 200 200
		developer       200 200 200 200
		maintainer      200 200 200 200
		owner           200 200 200 200
		blocked         403 403 403 403
		admin           200 200 200 200
		read_api        200 200 200 200
		read_repository 403 403 403 403
		job             200 404 404 403
		job-allowed     200 404 404 403
		job-refused     200 404 404 403`

// permReadCI: read_pipeline (and read_build) with public_builds on.
const permReadCI = `
		anonymous       200 404 404 403
		non-member      200 200 404 403
		external        200 404 404 403
		guest           200 200 200 200
		reporter        200 200 200 200
		developer       200 200 200 200
		maintainer      200 200 200 200
		owner           200 200 200 200
		blocked         403 403 403 403
		admin           200 200 200 200
		read_api        200 200 200 200
		read_repository 403 403 403 403
		job             200 404 404 403
		job-allowed     200 404 404 403
		job-refused     200 404 404 403`

// permReadJobs: read_build behind authenticate!; job tokens taken. A job
// token its target refuses keeps read_build through public_builds on a
// project it still sees (public or internal).
const permReadJobs = `
		anonymous       401 401 401 401
		non-member      200 200 404 403
		external        200 404 404 403
		guest           200 200 200 200
		reporter        200 200 200 200
		developer       200 200 200 200
		maintainer      200 200 200 200
		owner           200 200 200 200
		blocked         403 403 403 403
		admin           200 200 200 200
		read_api        200 200 200 200
		read_repository 403 403 403 403
		job             200 200 200 200
		job-allowed     200 200 200 200
		job-refused     200 200 403 200`

// permReadMR: read_merge_request (merge requests private: Reporter up;
// guests of a private project do not read them).
const permReadMR = `
		anonymous       200 404 404 403
		non-member      200 200 404 403
		external        200 404 404 403
		guest           200 200 403 403
		reporter        200 200 200 200
		developer       200 200 200 200
		maintainer      200 200 200 200
		owner           200 200 200 200
		blocked         403 403 403 403
		admin           200 200 200 200
		read_api        200 200 200 200
		read_repository 403 403 403 403
		job             200 404 404 403
		job-allowed     200 404 404 403
		job-refused     200 404 404 403`

// permMaintainerRead: authenticate!, then a maintainer's ability.
const permMaintainerRead = `
		anonymous       401 401 401 401
		non-member      403 403 404 403
		external        403 404 404 403
		guest           403 403 403 403
		reporter        403 403 403 403
		developer       403 403 403 403
		maintainer      200 200 200 200
		owner           200 200 200 200
		blocked         403 403 403 403
		admin           200 200 200 200
		read_api        200 200 200 200
		read_repository 403 403 403 403
		job             401 401 401 401
		job-allowed     401 401 401 401
		job-refused     401 401 401 401`

// permMaintainerWrite: a write behind authenticate! (or
// authenticate_non_get!) for maintainers up.
func permMaintainerWrite(status int) string {
	return permWrite(status, "maintainer")
}

// permDeveloperWrite: a write for developers up.
func permDeveloperWrite(status int) string {
	return permWrite(status, "developer")
}

// permWrite: a write behind authentication for roles from min up: 401
// without a user, 404 where the project is hidden, 403 where it is seen.
func permWrite(status int, min string) string {
	return permRoleGrid(status, min, "401 401 401 401")
}

// permWikiWrite: a wiki write, which GitLab does not authenticate first:
// an anonymous caller is refused (403) where it sees the project.
func permWikiWrite(status int, min string) string {
	return permRoleGrid(status, min, "403 404 404 403")
}

// permRoleGrid is the grid of a write for roles from min up; anon is the
// row of callers without a user (anonymous, and job tokens, which these
// endpoints do not take).
func permRoleGrid(status int, min, anon string) string {
	all := func(st int) string { return fmt.Sprintf("%d %d %d %d", st, st, st, st) }
	grid := fmt.Sprintf("anonymous %s\nnon-member 403 403 404 403\nexternal 403 404 404 403\n", anon)
	allowed := false
	for _, role := range []string{"guest", "reporter", "developer", "maintainer", "owner"} {
		allowed = allowed || role == min
		st := http.StatusForbidden
		if allowed {
			st = status
		}
		grid += role + " " + all(st) + "\n"
	}
	grid += "blocked " + all(403) + "\nadmin " + all(status) + "\nread_api " + all(403) + "\nread_repository " + all(403) + "\n"
	for _, job := range []string{"job", "job-allowed", "job-refused"} {
		grid += job + " " + anon + "\n"
	}
	return grid
}

// TestPermissions_matrix asserts the exact status of every principal ×
// action × project, as GitLab gives it: the principals are anonymous, a
// non-member, an external user, each role, a blocked user, an
// administrator, a maintainer's read_api and read_repository tokens, and
// CI job tokens (the project's own running job; another project's that
// the target's job token scope admits; one it refuses); the projects are
// public, internal, private, and public with its repository, CI, merge
// requests and wiki private. The fixtures are built once per database;
// each action is a subtest, each principal one below it.
func TestPermissions_matrix(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		start := time.Now()
		f := newPermFixture(t, s)
		built := time.Since(start)
		cells := 0
		for _, a := range permActions {
			want := parseGrid(t, a.name, a.grid)
			t.Run(a.name, func(t *testing.T) {
				for _, principal := range permRows {
					t.Run(principal, func(t *testing.T) {
						for i, p := range f.projects {
							cells++
							if got := a.do(t, f, f.cred(principal, p), p); got != want[principal][i] {
								t.Errorf("%s as %s on the %s project: %d; want %d", a.name, principal, p.column, got, want[principal][i])
							}
						}
					})
				}
			})
		}
		t.Logf("%d cells, %d requests (fixtures included); fixtures %v, cells %v", cells, permRequests(t, s),
			built.Round(time.Millisecond), (time.Since(start) - built).Round(time.Millisecond))
		t.Run("real git", f.realGit)
	}, apitest.DelayedDeletion, shortPoll)
}

// permRequests is how many requests the server has answered, from its
// metrics.
func permRequests(t *testing.T, s *apitest.Server) int {
	t.Helper()
	n := 0
	for _, line := range strings.Split(string(s.Get(t, "/-/metrics", "").Want(t, http.StatusOK).Body), "\n") {
		if strings.HasPrefix(line, "quarry_http_requests_total{") {
			var v float64
			if _, err := fmt.Sscan(line[strings.LastIndexByte(line, ' ')+1:], &v); err == nil {
				n += int(v)
			}
		}
	}
	return n
}

// TestPermissions_groupMatrix does the same for groups: reading, managing
// members, changing settings, creating subgroups and deleting.
func TestPermissions_groupMatrix(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		owner := s.NewUser(t, "owner")
		groups := map[string]int64{}
		for _, vis := range []string{"public", "internal", "private"} {
			var g struct{ ID int64 }
			s.Do(t, apitest.Request{Method: "POST", Path: "/groups", Token: owner.Token, JSON: map[string]any{"name": "g-" + vis, "path": "g-" + vis, "visibility": vis}}).Want(t, 201).JSON(t, &g)
			groups[vis] = g.ID
		}
		tokens := map[string]string{"anonymous": "", "owner": owner.Token, "admin": s.RootToken, "user": s.NewUser(t, "user").Token}
		for role, lvl := range map[string]int{"guest": 10, "developer": 30, "maintainer": 40} {
			u := s.NewUser(t, role)
			tokens[role] = u.Token
			for _, id := range groups {
				s.Do(t, apitest.Request{Method: "POST", Path: "/groups/" + itoa(id) + "/members", Token: owner.Token, JSON: map[string]any{"user_id": u.ID, "access_level": lvl}}).Want(t, 201)
			}
		}
		target := s.NewUser(t, "target")
		roles := []string{"anonymous", "user", "guest", "developer", "maintainer", "owner", "admin"}
		matrix := map[string]map[string][3]int{
			"read group":      {"anonymous": {200, 404, 404}, "user": {200, 200, 404}, "guest": {200, 200, 200}, "developer": {200, 200, 200}, "maintainer": {200, 200, 200}, "owner": {200, 200, 200}, "admin": {200, 200, 200}},
			"manage members":  {"anonymous": {401, 401, 401}, "user": {403, 403, 404}, "guest": {403, 403, 403}, "developer": {403, 403, 403}, "maintainer": {403, 403, 403}, "owner": {201, 201, 201}, "admin": {201, 201, 201}},
			"update settings": {"anonymous": {401, 401, 401}, "user": {403, 403, 404}, "guest": {403, 403, 403}, "developer": {403, 403, 403}, "maintainer": {403, 403, 403}, "owner": {200, 200, 200}, "admin": {200, 200, 200}},
			"create subgroup": {"anonymous": {401, 401, 401}, "user": {403, 403, 404}, "guest": {403, 403, 403}, "developer": {403, 403, 403}, "maintainer": {403, 403, 403}, "owner": {201, 201, 201}, "admin": {201, 201, 201}},
			"create project":  {"anonymous": {401, 401, 401}, "user": {400, 400, 404}, "guest": {400, 400, 400}, "developer": {201, 201, 201}, "maintainer": {201, 201, 201}, "owner": {201, 201, 201}, "admin": {201, 201, 201}},
			"delete group":    {"anonymous": {401, 401, 401}, "user": {403, 403, 404}, "guest": {403, 403, 403}, "developer": {403, 403, 403}, "maintainer": {403, 403, 403}, "owner": {202, 202, 202}, "admin": {202, 202, 202}},
		}
		n := 0
		act := func(action, token string, id int64) int {
			path := "/groups/" + itoa(id)
			n++
			switch action {
			case "read group":
				return s.Get(t, path, token).Status
			case "manage members":
				st := s.Do(t, apitest.Request{Method: "POST", Path: path + "/members", Token: token, JSON: map[string]any{"user_id": target.ID, "access_level": 10}}).Status
				if st == http.StatusCreated {
					s.Do(t, apitest.Request{Method: "DELETE", Path: path + "/members/" + itoa(target.ID), Token: owner.Token}).Want(t, 204)
				}
				return st
			case "update settings":
				return s.Do(t, apitest.Request{Method: "PUT", Path: path, Token: token, JSON: map[string]any{"description": "changed"}}).Status
			case "create subgroup":
				p := "sub" + itoa(int64(n))
				return s.Do(t, apitest.Request{Method: "POST", Path: "/groups", Token: token, JSON: map[string]any{"name": p, "path": p, "parent_id": id, "visibility": "private"}}).Status
			case "create project":
				p := "proj" + itoa(int64(n))
				return s.Do(t, apitest.Request{Method: "POST", Path: "/projects", Token: token, JSON: map[string]any{"name": p, "namespace_id": id, "visibility": "private"}}).Status
			case "delete group":
				st := s.Do(t, apitest.Request{Method: "DELETE", Path: path, Token: token}).Status
				if st == http.StatusAccepted {
					s.Do(t, apitest.Request{Method: "POST", Path: path + "/restore", Token: owner.Token}).Want(t, 201)
				}
				return st
			}
			panic(action)
		}
		for action, want := range matrix {
			for _, role := range roles {
				for i, vis := range []string{"public", "internal", "private"} {
					if got := act(action, tokens[role], groups[vis]); got != want[role][i] {
						t.Errorf("%s as %s on %s group: %d; want %d", action, role, vis, got, want[role][i])
					}
				}
			}
		}
	}, apitest.DelayedDeletion)
}
