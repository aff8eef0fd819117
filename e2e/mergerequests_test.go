package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"quarry/internal/apitest"
)

// Merge requests end to end: real repositories written through the API,
// histories checked with the real git over HTTP.

// mrProject makes a project with a README, owned by owner.
func mrProject(t *testing.T, s *apitest.Server, owner apitest.User, name, visibility string) ciProject {
	t.Helper()
	var p struct {
		ID                int64  `json:"id"`
		PathWithNamespace string `json:"path_with_namespace"`
	}
	s.Do(t, apitest.Request{Method: "POST", Path: "/projects", Token: owner.Token, JSON: map[string]any{"name": name,
		"visibility": visibility, "initialize_with_readme": true}}).Want(t, http.StatusCreated).JSON(t, &p)
	return ciProject{s: s, ID: p.ID, Path: p.PathWithNamespace, Token: owner.Token}
}

// mrPath is the path of a project's merge request (iid 0: the list) and
// what follows it.
func mrPath(p ciProject, iid int64, suffix string) string {
	if iid == 0 {
		return fmt.Sprintf("/projects/%d/merge_requests%s", p.ID, suffix)
	}
	return fmt.Sprintf("/projects/%d/merge_requests/%d%s", p.ID, iid, suffix)
}

// mrDo sends a request about a project's merge request.
func mrDo(t *testing.T, p ciProject, method, token string, iid int64, suffix string, body map[string]any) *apitest.Response {
	t.Helper()
	r := apitest.Request{Method: method, Path: mrPath(p, iid, suffix), Token: token}
	if body != nil {
		r.JSON = body
	}
	return p.s.Do(t, r)
}

// mrCreate opens a merge request in p as token's user.
func mrCreate(t *testing.T, p ciProject, token string, body map[string]any) mrJSON {
	t.Helper()
	var mr mrJSON
	mrDo(t, p, "POST", token, 0, "", body).Want(t, http.StatusCreated).JSON(t, &mr)
	return mr
}

// mrOpen opens a merge request from source into target as p's owner.
func mrOpen(t *testing.T, p ciProject, source, target, title string) mrJSON {
	t.Helper()
	return mrCreate(t, p, p.Token, map[string]any{"source_branch": source, "target_branch": target, "title": title})
}

// mrGet reads a merge request.
func mrGet(t *testing.T, p ciProject, token string, iid int64) mrJSON {
	t.Helper()
	var mr mrJSON
	mrDo(t, p, "GET", token, iid, "", nil).Want(t, http.StatusOK).JSON(t, &mr)
	return mr
}

// mrUpdate edits a merge request and wants a 200.
func mrUpdate(t *testing.T, p ciProject, token string, iid int64, body map[string]any) mrJSON {
	t.Helper()
	var mr mrJSON
	mrDo(t, p, "PUT", token, iid, "", body).Want(t, http.StatusOK).JSON(t, &mr)
	return mr
}

// mrMerge merges a merge request and wants a 200.
func mrMerge(t *testing.T, p ciProject, token string, iid int64, body map[string]any) mrJSON {
	t.Helper()
	var mr mrJSON
	mrDo(t, p, "PUT", token, iid, "/merge", body).Want(t, http.StatusOK).JSON(t, &mr)
	return mr
}

// mrSettings changes a project's settings as its owner.
func mrSettings(t *testing.T, p ciProject, settings map[string]any) map[string]any {
	t.Helper()
	return p.s.Do(t, apitest.Request{Method: "PUT", Path: fmt.Sprintf("/projects/%d", p.ID), Token: p.Token, JSON: settings}).
		Want(t, http.StatusOK).Object(t)
}

// mrUserIDs are the ids of users, in order.
func mrUserIDs(list []mrUserJSON) []int64 {
	out := []int64{}
	for _, u := range list {
		out = append(out, u.ID)
	}
	return out
}

// mrRefs lists merge requests (one page) and gives their full
// references ("group/project!iid"), in order.
func mrRefs(t *testing.T, s *apitest.Server, path, token string) []string {
	t.Helper()
	var list []mrJSON
	s.Get(t, path, token).Want(t, http.StatusOK).JSON(t, &list)
	out := []string{}
	for _, m := range list {
		out = append(out, m.References.Full)
	}
	return out
}

// mrWant fails unless got equals want.
func mrWant[T comparable](t *testing.T, what string, got, want []T) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Errorf("%s: got %v; want %v", what, got, want)
	}
}

// mrCommit is a commit of a history read with git.
type mrCommit struct {
	ID      string
	Parents []string
	Subject string
}

// mrClone is a bare clone of a project made over HTTP with the real git.
type mrClone struct{ dir string }

// mrCloneOf clones p (as its owner) afresh.
func mrCloneOf(t *testing.T, p ciProject) mrClone {
	t.Helper()
	work := t.TempDir()
	if out, err := gitRun(work, "clone", "-q", "--bare", cloneURL(p.s, p.Path, "owner", p.Token), "r.git"); err != nil {
		t.Fatalf("clone %s: %v\n%s", p.Path, err, out)
	}
	return mrClone{dir: filepath.Join(work, "r.git")}
}

// git runs git in the clone and returns its trimmed output.
func (c mrClone) git(t *testing.T, args ...string) string {
	t.Helper()
	out, err := gitRun(c.dir, args...)
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(out)
}

// log is the history of rev, newest first.
func (c mrClone) log(t *testing.T, rev string, more ...string) []mrCommit {
	t.Helper()
	var out []mrCommit
	args := append([]string{"log", "--format=%H %P%x1f%s"}, more...)
	for _, line := range strings.Split(c.git(t, append(args, rev)...), "\n") {
		ids, subject, _ := strings.Cut(line, "\x1f")
		f := strings.Fields(ids)
		out = append(out, mrCommit{ID: f[0], Parents: f[1:], Subject: subject})
	}
	return out
}

// contains reports whether commit is in rev's history.
func (c mrClone) contains(t *testing.T, rev, commit string) bool {
	t.Helper()
	_, err := gitRun(c.dir, "merge-base", "--is-ancestor", commit, rev)
	return err == nil
}

// mrBranchGone reports whether a branch no longer exists.
func mrBranchGone(t *testing.T, p ciProject, branch string) bool {
	t.Helper()
	return p.s.Get(t, fmt.Sprintf("/projects/%d/repository/branches/%s", p.ID, url.PathEscape(branch)), p.Token).Status == http.StatusNotFound
}

// mrSend is a raw request for goroutines (which may not fail the test):
// the status and body, or the transport's error.
func mrSend(s *apitest.Server, method, path, token string, body any) (int, string, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return 0, "", err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, s.URL+"/api/v4"+path, rd)
	if err != nil {
		return 0, "", err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("PRIVATE-TOKEN", token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), err
}

// TestMergeRequests_create: the answer to a creation carries every field
// of GitLab's merge request with its type and value; the branch
// validations answer GitLab's statuses and bodies; who may open one.
func TestMergeRequests_create(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		owner := s.NewUser(t, "mrcowner")
		dev, rep, guest := s.NewUser(t, "mrcdev"), s.NewUser(t, "mrcrep"), s.NewUser(t, "mrcguest")
		maint, stranger := s.NewUser(t, "mrcmaint"), s.NewUser(t, "mrcstranger")
		p := mrProject(t, s, owner, "crt", "private")
		for u, level := range map[apitest.User]int{dev: 30, rep: 20, guest: 10, maint: 40} {
			agMember(t, s, p, u, level)
		}
		base := capiBranchSHA(t, p, "main")
		head := p.commit(t, "feature", map[string]string{"feature.txt": "new\n"})

		r := mrDo(t, p, "POST", owner.Token, 0, "", map[string]any{"source_branch": "feature", "target_branch": "main",
			"title": "Add a feature", "description": "Tasks:\n- [x] write\n- [ ] test\n* [X] review\n",
			"assignee_ids": []int64{dev.ID, stranger.ID, maint.ID}, "reviewer_ids": []int64{rep.ID}, "labels": "bug, ui,bug",
			"remove_source_branch": true, "squash": true}).Want(t, http.StatusCreated)
		obj := r.Object(t)
		capiWantTypes(t, "created", obj, map[string]string{
			"id": "number", "iid": "number", "project_id": "number", "title": "string", "description": "string", "state": "string",
			"created_at": "string", "updated_at": "string", "merged_by": "null", "merge_user": "null", "merged_at": "null",
			"closed_by": "null", "closed_at": "null", "target_branch": "string", "source_branch": "string",
			"user_notes_count": "number", "upvotes": "number", "downvotes": "number", "author": "object", "assignees": "array",
			"assignee": "object", "reviewers": "array", "source_project_id": "number", "target_project_id": "number",
			"labels": "array", "draft": "boolean", "work_in_progress": "boolean", "milestone": "null",
			"merge_when_pipeline_succeeds": "boolean", "merge_status": "string", "detailed_merge_status": "string", "sha": "string",
			"merge_commit_sha": "null", "squash_commit_sha": "null", "discussion_locked": "boolean|null",
			"should_remove_source_branch": "boolean|null", "force_remove_source_branch": "boolean", "prepared_at": "string",
			"reference": "string", "references": "object", "web_url": "string", "time_stats": "object", "squash": "boolean",
			"squash_on_merge": "boolean", "task_completion_status": "object", "has_conflicts": "boolean",
			"blocking_discussions_resolved": "boolean", "approvals_before_merge": "number|null",
			// The single merge request's own fields.
			"subscribed": "boolean", "changes_count": "string", "latest_build_started_at": "null",
			"latest_build_finished_at": "null", "first_deployed_to_production_at": "null", "pipeline": "null",
			"head_pipeline": "null", "diff_refs": "object", "merge_error": "null", "first_contribution": "boolean", "user": "object",
		})
		capiWantFields(t, "created", obj, map[string]any{"iid": float64(1), "project_id": float64(p.ID), "title": "Add a feature",
			"state": "opened", "source_branch": "feature", "target_branch": "main", "source_project_id": float64(p.ID),
			"target_project_id": float64(p.ID), "draft": false, "work_in_progress": false, "merge_when_pipeline_succeeds": false,
			"merge_status": "can_be_merged", "detailed_merge_status": "mergeable", "sha": head, "force_remove_source_branch": true,
			"squash": true, "squash_on_merge": true, "has_conflicts": false, "reference": "!1", "changes_count": "1",
			"user_notes_count": float64(0), "subscribed": true, "blocking_discussions_resolved": true,
			"web_url": s.URL + "/" + p.Path + "/-/merge_requests/1"})
		var mr mrJSON
		r.JSON(t, &mr)
		if mr.Author == nil || mr.Author.ID != owner.ID || mr.Author.Username != owner.Username || mr.Author.WebURL != s.URL+"/"+owner.Username {
			t.Errorf("author %+v", mr.Author)
		}
		// A stranger cannot read the private project's merge requests: not
		// assigned. Repeated labels count once.
		mrWant(t, "assignees", mrUserIDs(mr.Assignees), []int64{dev.ID, maint.ID})
		if mr.Assignee == nil || mr.Assignee.ID != dev.ID {
			t.Errorf("assignee %+v", mr.Assignee)
		}
		mrWant(t, "reviewers", mrUserIDs(mr.Reviewers), []int64{rep.ID})
		mrWant(t, "labels", mr.Labels, []string{"bug", "ui"})
		if mr.DiffRefs.BaseSHA != base || mr.DiffRefs.StartSHA != base || mr.DiffRefs.HeadSHA != head {
			t.Errorf("diff_refs %+v; want base=start=%s head=%s", mr.DiffRefs, base, head)
		}
		if mr.References.Short != "!1" || mr.References.Relative != "!1" || mr.References.Full != p.Path+"!1" {
			t.Errorf("references %+v", mr.References)
		}
		if mr.TaskCompletionStatus.Count != 3 || mr.TaskCompletionStatus.CompletedCount != 2 {
			t.Errorf("task_completion_status %+v; want 3 tasks, 2 done", mr.TaskCompletionStatus)
		}
		if !mr.User.CanMerge || mr.CreatedAt == "" || mr.CreatedAt != mr.UpdatedAt {
			t.Errorf("can_merge %v, created_at %q, updated_at %q", mr.User.CanMerge, mr.CreatedAt, mr.UpdatedAt)
		}
		// The same answer on a read; the list shows the merge request too.
		got := mrGet(t, p, owner.Token, 1)
		if got.ID != mr.ID || got.SHA != head || got.DiffRefs != mr.DiffRefs || got.Title != mr.Title || got.Description != mr.Description {
			t.Errorf("read %+v; created %+v", got, mr)
		}
		mrWant(t, "list", mrRefs(t, s, mrPath(p, 0, ""), owner.Token), []string{p.Path + "!1"})

		// Validations, with GitLab's statuses and bodies.
		post := func(token string, body map[string]any) *apitest.Response {
			return mrDo(t, p, "POST", token, 0, "", body)
		}
		post(owner.Token, map[string]any{}).Want(t, http.StatusBadRequest).
			WantBody(t, `{"error":"source_branch is missing, target_branch is missing, title is missing"}`)
		post(owner.Token, map[string]any{"source_branch": "feature", "target_branch": "main"}).Want(t, http.StatusBadRequest).
			WantBody(t, `{"error":"title is missing"}`)
		post(owner.Token, map[string]any{"source_branch": "main", "target_branch": "main", "title": "t"}).Want(t, http.StatusConflict).
			WantBody(t, `{"message":["You can't use same project/branch for source and target"]}`)
		post(owner.Token, map[string]any{"source_branch": "feature", "target_branch": "main", "title": "again"}).Want(t, http.StatusConflict).
			WantBody(t, `{"message":["Another open merge request already exists for this source branch: !1"]}`)
		post(owner.Token, map[string]any{"source_branch": "nope", "target_branch": "main", "title": "t"}).Want(t, http.StatusUnprocessableEntity).
			WantBody(t, `{"message":["Source branch \"nope\" does not exist"]}`)
		post(owner.Token, map[string]any{"source_branch": "feature", "target_branch": "nope", "title": "t"}).Want(t, http.StatusUnprocessableEntity).
			WantBody(t, `{"message":["Target branch \"nope\" does not exist"]}`)
		post(owner.Token, map[string]any{"source_branch": "feature", "target_branch": "main", "title": "  "}).Want(t, http.StatusBadRequest).
			WantBody(t, `{"message":{"title":["can't be blank"]}}`)
		post(owner.Token, map[string]any{"source_branch": "feature", "target_branch": "main", "title": "t", "assignee_ids": "x"}).
			Want(t, http.StatusBadRequest).WantBody(t, `{"error":"assignee_ids is invalid"}`)
		// Into another branch the same source is another merge request.
		p.commit(t, "stable", map[string]string{"stable.txt": "s\n"})
		if two := mrOpen(t, p, "feature", "stable", "Feature on stable"); two.IID != 2 {
			t.Errorf("second merge request iid %d; want 2", two.IID)
		}

		// Who may open one: developers up; guests and reporters are
		// refused, strangers do not see the private project, anonymous
		// callers must sign in.
		p.commit(t, "by-guest", map[string]string{"g.txt": "g\n"})
		p.commit(t, "by-dev", map[string]string{"d.txt": "d\n"})
		p.commit(t, "by-maint", map[string]string{"m.txt": "m\n"})
		body := func(branch string) map[string]any {
			return map[string]any{"source_branch": branch, "target_branch": "main", "title": "from " + branch}
		}
		post(guest.Token, body("by-guest")).Want(t, http.StatusForbidden).WantBody(t, `{"message":"403 Forbidden"}`)
		post(rep.Token, body("by-guest")).Want(t, http.StatusForbidden).WantBody(t, `{"message":"403 Forbidden"}`)
		post(stranger.Token, body("by-guest")).Want(t, http.StatusNotFound).WantBody(t, `{"message":"404 Project Not Found"}`)
		post("", body("by-guest")).Want(t, http.StatusUnauthorized)
		if m := mrCreate(t, p, dev.Token, body("by-dev")); m.IID != 3 || m.Author.ID != dev.ID {
			t.Errorf("developer's merge request: iid %d author %+v", m.IID, m.Author)
		}
		if m := mrCreate(t, p, maint.Token, body("by-maint")); m.IID != 4 || m.Author.ID != maint.ID {
			t.Errorf("maintainer's merge request: iid %d author %+v", m.IID, m.Author)
		}
		// Reading: members; strangers and anonymous callers see nothing.
		mrDo(t, p, "GET", rep.Token, 1, "", nil).Want(t, http.StatusOK)
		mrDo(t, p, "GET", stranger.Token, 1, "", nil).Want(t, http.StatusNotFound)
		mrDo(t, p, "GET", "", 1, "", nil).Want(t, http.StatusNotFound)
		mrDo(t, p, "GET", stranger.Token, 0, "", nil).Want(t, http.StatusNotFound)

		// A public project: anyone reads, a stranger may not open one
		// from its branches; iids count per project.
		pub := mrProject(t, s, owner, "pub", "public")
		pub.commit(t, "topic", map[string]string{"t.txt": "t\n"})
		mrDo(t, pub, "POST", stranger.Token, 0, "", map[string]any{"source_branch": "topic", "target_branch": "main", "title": "t"}).
			Want(t, http.StatusForbidden)
		if m := mrOpen(t, pub, "topic", "main", "Topic"); m.IID != 1 {
			t.Errorf("first merge request of another project: iid %d", m.IID)
		}
		if m := mrGet(t, pub, "", 1); m.User.CanMerge || m.Title != "Topic" {
			t.Errorf("anonymous read %+v", m)
		}
		if m := mrGet(t, pub, stranger.Token, 1); m.User.CanMerge {
			t.Errorf("stranger's read: can_merge %v", m.User.CanMerge)
		}
	})
}

// TestMergeRequests_fork: a merge request from a fork into its upstream:
// its iid, projects and diff refs are the upstream's, a push to the
// fork's branch moves it, the upstream's maintainers merge it (the
// fork's commits land in the upstream's history), the fork's author may
// not; a project that is no fork of the target is refused.
func TestMergeRequests_fork(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		owner, forker := s.NewUser(t, "mrfowner"), s.NewUser(t, "mrfforker")
		up := mrProject(t, s, owner, "upstream", "public")
		upMain := capiBranchSHA(t, up, "main")
		var fk struct {
			ID                int64  `json:"id"`
			PathWithNamespace string `json:"path_with_namespace"`
		}
		s.Do(t, apitest.Request{Method: "POST", Path: fmt.Sprintf("/projects/%d/fork", up.ID), Token: forker.Token}).
			Want(t, http.StatusCreated).JSON(t, &fk)
		waitImport(t, s, forker.Token, fk.ID, "finished")
		fork := ciProject{s: s, ID: fk.ID, Path: fk.PathWithNamespace, Token: forker.Token}
		head := fork.commit(t, "feat", map[string]string{"fork.txt": "from the fork\n"})

		mr := mrCreate(t, fork, forker.Token, map[string]any{"source_branch": "feat", "target_branch": "main",
			"title": "From my fork", "target_project_id": up.ID})
		if mr.IID != 1 || mr.ProjectID != up.ID || mr.TargetProjectID != up.ID || mr.SourceProjectID != fork.ID {
			t.Errorf("fork merge request: iid %d project %d target %d source %d; want 1, %d, %d, %d", mr.IID, mr.ProjectID,
				mr.TargetProjectID, mr.SourceProjectID, up.ID, up.ID, fork.ID)
		}
		if mr.SHA != head || mr.DiffRefs.HeadSHA != head || mr.DiffRefs.BaseSHA != upMain || mr.DiffRefs.StartSHA != upMain {
			t.Errorf("fork merge request sha %s diff_refs %+v; want head %s base=start %s", mr.SHA, mr.DiffRefs, head, upMain)
		}
		if mr.MergeStatus != "can_be_merged" || mr.DetailedMergeStatus != "mergeable" || mr.ChangesCount != "1" || mr.User.CanMerge {
			t.Errorf("fork merge request status %s/%s changes %s can_merge %v", mr.MergeStatus, mr.DetailedMergeStatus, mr.ChangesCount, mr.User.CanMerge)
		}
		if mr.WebURL != s.URL+"/"+up.Path+"/-/merge_requests/1" || mr.References.Full != up.Path+"!1" {
			t.Errorf("fork merge request web_url %s references %+v", mr.WebURL, mr.References)
		}
		// It is the upstream's: listed there, not in the fork.
		mrWant(t, "upstream's list", mrRefs(t, s, mrPath(up, 0, ""), owner.Token), []string{up.Path + "!1"})
		mrWant(t, "fork's list", mrRefs(t, s, mrPath(fork, 0, ""), forker.Token), []string{})
		if got := mrGet(t, up, owner.Token, 1); !got.User.CanMerge || got.SHA != head {
			t.Errorf("upstream owner's read: can_merge %v sha %s", got.User.CanMerge, got.SHA)
		}
		// The same source and target again: 409.
		mrDo(t, fork, "POST", forker.Token, 0, "", map[string]any{"source_branch": "feat", "target_branch": "main", "title": "again",
			"target_project_id": up.ID}).Want(t, http.StatusConflict).
			WantBody(t, `{"message":["Another open merge request already exists for this source branch: !1"]}`)
		// Not a fork of the target: 422.
		other := mrProject(t, s, forker, "other", "public")
		other.commit(t, "feat", map[string]string{"o.txt": "o\n"})
		mrDo(t, other, "POST", forker.Token, 0, "", map[string]any{"source_branch": "feat", "target_branch": "main", "title": "t",
			"target_project_id": up.ID}).Want(t, http.StatusUnprocessableEntity).
			WantBody(t, `{"message":["Source project is not a fork of the target project"]}`)

		// A push to the fork's branch moves the merge request.
		head2 := fork.commit(t, "feat", map[string]string{"fork2.txt": "more\n"})
		eventually(t, "the fork merge request follows the push", func() bool { return mrGet(t, up, owner.Token, 1).SHA == head2 })
		mr = mrGet(t, up, owner.Token, 1)
		if mr.DiffRefs.HeadSHA != head2 || mr.DiffRefs.BaseSHA != upMain || mr.ChangesCount != "2" || mr.MergeStatus != "can_be_merged" {
			t.Errorf("after the push: diff_refs %+v changes %s status %s", mr.DiffRefs, mr.ChangesCount, mr.MergeStatus)
		}
		var commits []struct {
			ID string `json:"id"`
		}
		mrDo(t, up, "GET", owner.Token, 1, "/commits", nil).Want(t, http.StatusOK).JSON(t, &commits)
		if len(commits) != 2 || commits[0].ID != head2 || commits[1].ID != head {
			t.Errorf("commits %+v; want %s, %s", commits, head2, head)
		}

		// The fork's author may not merge into the upstream; its owner
		// does, and the fork's commits are in the upstream's history.
		mrDo(t, up, "PUT", forker.Token, 1, "/merge", nil).Want(t, http.StatusUnauthorized).WantBody(t, `{"message":"401 Unauthorized"}`)
		merged := mrMerge(t, up, owner.Token, 1, map[string]any{"sha": head2})
		if merged.State != "merged" || merged.MergedBy == nil || merged.MergedBy.ID != owner.ID || merged.MergeCommitSHA == "" {
			t.Fatalf("merged %+v", merged)
		}
		c := mrCloneOf(t, up)
		log := c.log(t, "main")
		if log[0].ID != merged.MergeCommitSHA || !slices.Equal(log[0].Parents, []string{upMain, head2}) {
			t.Errorf("upstream main tip %+v; want the merge commit %s of %s and %s", log[0], merged.MergeCommitSHA, upMain, head2)
		}
		if c.git(t, "show", "main:fork.txt") != "from the fork" || c.git(t, "show", "main:fork2.txt") != "more" {
			t.Error("the fork's files are not on the upstream's main")
		}
		// The upstream's owner cannot push to the fork: its branch stays.
		if mrBranchGone(t, fork, "feat") {
			t.Error("the fork's branch was removed by the upstream's owner")
		}
	})
}

// mrGroup makes a private group (under parent, when not 0) as token's
// user and gives its id.
func mrGroup(t *testing.T, s *apitest.Server, token, path string, parent int64) int64 {
	t.Helper()
	body := map[string]any{"name": path, "path": path, "visibility": "private"}
	if parent != 0 {
		body["parent_id"] = parent
	}
	var g struct {
		ID int64 `json:"id"`
	}
	s.Do(t, apitest.Request{Method: "POST", Path: "/groups", Token: token, JSON: body}).Want(t, http.StatusCreated).JSON(t, &g)
	return g.ID
}

// mrGroupProject makes a private project with a README in a group.
func mrGroupProject(t *testing.T, s *apitest.Server, owner apitest.User, name string, group int64) ciProject {
	t.Helper()
	var p struct {
		ID                int64  `json:"id"`
		PathWithNamespace string `json:"path_with_namespace"`
	}
	s.Do(t, apitest.Request{Method: "POST", Path: "/projects", Token: owner.Token, JSON: map[string]any{"name": name,
		"namespace_id": group, "visibility": "private", "initialize_with_readme": true}}).Want(t, http.StatusCreated).JSON(t, &p)
	return ciProject{s: s, ID: p.ID, Path: p.PathWithNamespace, Token: owner.Token}
}

// TestMergeRequests_list: a project's, a group's (its subgroups' too)
// and the caller's merge requests across projects (created_by_me unless
// a scope is given), with every filter, each order, offset pages with
// GitLab's headers and keyset pages; the server's clock is set for each
// creation and update, so the time filters and orders are exact.
func TestMergeRequests_list(t *testing.T) {
	t0 := time.Date(2031, 3, 1, 10, 0, 0, 0, time.UTC)
	capiClockedEach(t, t0, func(t *testing.T, s *apitest.Server, clk *testClock) {
		owner := s.NewUser(t, "mrlowner")
		bob, carol, stranger := s.NewUser(t, "mrlbob"), s.NewUser(t, "mrlcarol"), s.NewUser(t, "mrlstranger")
		g := mrGroup(t, s, owner.Token, "mrlg", 0)
		sub := mrGroup(t, s, owner.Token, "sub", g)
		s.Do(t, apitest.Request{Method: "POST", Path: fmt.Sprintf("/groups/%d/members", g), Token: owner.Token,
			JSON: map[string]any{"user_id": bob.ID, "access_level": 30}}).Want(t, http.StatusCreated)
		p1 := mrGroupProject(t, s, owner, "p1", g)
		p2 := mrGroupProject(t, s, owner, "p2", sub)
		p3 := mrProject(t, s, owner, "p3", "private")
		agMember(t, s, p1, carol, 20)
		for _, b := range []string{"a1", "b1", "c1", "dev"} {
			p1.commit(t, b, map[string]string{b + ".txt": b + "\n"})
		}
		p2.commit(t, "d1", map[string]string{"d.txt": "d\n"})
		p3.commit(t, "e1", map[string]string{"e.txt": "e\n"})
		at := func(h int) time.Time { return t0.Add(time.Duration(h) * time.Hour) }

		clk.Set(at(0))
		mrCreate(t, p1, owner.Token, map[string]any{"source_branch": "a1", "target_branch": "main", "title": "alpha fix",
			"labels": []string{"bug"}, "assignee_ids": []int64{bob.ID}, "reviewer_ids": []int64{carol.ID}})
		clk.Set(at(1))
		mrCreate(t, p1, bob.Token, map[string]any{"source_branch": "b1", "target_branch": "main", "title": "bravo feature",
			"description": "touches zulu"})
		clk.Set(at(2))
		mrCreate(t, p1, owner.Token, map[string]any{"source_branch": "c1", "target_branch": "dev", "title": "draft: charlie"})
		clk.Set(at(3))
		mrCreate(t, p2, bob.Token, map[string]any{"source_branch": "d1", "target_branch": "main", "title": "delta", "assignee_id": owner.ID})
		clk.Set(at(4))
		mrOpen(t, p3, "e1", "main", "echo")
		clk.Set(at(5))
		mrUpdate(t, p1, owner.Token, 2, map[string]any{"state_event": "close"})
		clk.Set(at(6))
		mrMerge(t, p3, owner.Token, 1, nil)
		clk.Set(at(7))

		a, b, c := p1.Path+"!1", p1.Path+"!2", p1.Path+"!3"
		d, e := p2.Path+"!1", p3.Path+"!1"
		list := func(query, token string) []string {
			t.Helper()
			return mrRefs(t, s, mrPath(p1, 0, query), token)
		}
		ts := func(h float64) string {
			return url.QueryEscape(capiTime(t0.Add(time.Duration(h * float64(time.Hour)))))
		}
		for _, tc := range []struct {
			query string
			want  []string
		}{
			{"", []string{c, b, a}},
			{"?state=all", []string{c, b, a}},
			{"?state=opened", []string{c, a}},
			{"?state=closed", []string{b}},
			{"?state=merged", []string{}},
			{"?state=locked", []string{}},
			{"?author_id=" + itoa(bob.ID), []string{b}},
			{"?assignee_id=" + itoa(bob.ID), []string{a}},
			{"?assignee_id=None", []string{c, b}},
			{"?assignee_id=Any", []string{a}},
			{"?reviewer_id=" + itoa(carol.ID), []string{a}},
			{"?reviewer_id=None", []string{c, b}},
			{"?reviewer_id=Any", []string{a}},
			{"?source_branch=b1", []string{b}},
			{"?target_branch=dev", []string{c}},
			{"?search=zulu", []string{b}},
			{"?search=ALPHA", []string{a}},
			{"?iids[]=1&iids[]=3", []string{c, a}},
			{"?labels=bug", []string{a}},
			// Label names match exactly, case and all, on both engines
			// (GitLab's titles); a name inside another does not match.
			{"?labels=Bug", []string{}},
			{"?labels=bu", []string{}},
			{"?wip=yes", []string{c}},
			{"?wip=no", []string{b, a}},
			{"?created_after=" + ts(0.5), []string{c, b}},
			{"?created_before=" + ts(0.5), []string{a}},
			{"?created_after=" + ts(0.5) + "&created_before=" + ts(1.5), []string{b}},
			{"?updated_after=" + ts(4), []string{b}},
			{"?updated_before=" + ts(3), []string{c, a}},
			{"?scope=created_by_me", []string{c, a}},
			{"?scope=assigned_to_me", []string{}},
			{"?sort=asc", []string{a, b, c}},
			{"?order_by=updated_at", []string{b, c, a}},
			{"?order_by=updated_at&sort=asc", []string{a, c, b}},
			{"?order_by=title&sort=asc", []string{a, b, c}},
			{"?order_by=title&sort=desc", []string{c, b, a}},
			{"?order_by=created_at&sort=asc&state=opened", []string{a, c}},
		} {
			mrWant(t, "p1"+tc.query, list(tc.query, owner.Token), tc.want)
		}
		mrWant(t, "reviews for carol", list("?scope=reviews_for_me", carol.Token), []string{a})
		mrWant(t, "assigned to bob", list("?scope=assigned_to_me", bob.Token), []string{a})
		for query, body := range map[string]string{
			"?state=bogus":    `{"error":"state does not have a valid value"}`,
			"?order_by=bogus": `{"error":"order_by does not have a valid value"}`,
			"?sort=up":        `{"error":"sort does not have a valid value"}`,
			"?author_id=x":    `{"error":"author_id is invalid"}`,
		} {
			s.Get(t, mrPath(p1, 0, query), owner.Token).Want(t, http.StatusBadRequest).WantBody(t, body)
		}
		// Who reads the list: members; a stranger does not see the
		// private project.
		s.Get(t, mrPath(p1, 0, ""), stranger.Token).Want(t, http.StatusNotFound)
		s.Get(t, mrPath(p1, 0, ""), "").Want(t, http.StatusNotFound)

		// Offset pages with GitLab's headers.
		r := s.Get(t, mrPath(p1, 0, "?per_page=2"), owner.Token).Want(t, http.StatusOK)
		for h, want := range map[string]string{"X-Total": "3", "X-Total-Pages": "2", "X-Page": "1", "X-Per-Page": "2",
			"X-Next-Page": "2", "X-Prev-Page": ""} {
			if got := r.Header.Get(h); got != want {
				t.Errorf("page 1: %s %q; want %q", h, got, want)
			}
		}
		links := apitest.Links(t, r.Header)
		if !strings.Contains(links["next"], "page=2") || !strings.Contains(links["last"], "page=2") || !strings.Contains(links["first"], "page=1") {
			t.Errorf("page 1 links %v", links)
		}
		r = s.Get(t, mrPath(p1, 0, "?per_page=2&page=2"), owner.Token).Want(t, http.StatusOK)
		if r.Header.Get("X-Next-Page") != "" || r.Header.Get("X-Prev-Page") != "1" || len(r.Array(t)) != 1 {
			t.Errorf("page 2: next %q prev %q, %d items", r.Header.Get("X-Next-Page"), r.Header.Get("X-Prev-Page"), len(r.Array(t)))
		}
		walk := func(first string) []string {
			t.Helper()
			out := []string{}
			s.Walk(t, first, owner.Token, func(r *apitest.Response) {
				var page []mrJSON
				r.JSON(t, &page)
				for _, m := range page {
					out = append(out, m.References.Full)
				}
			})
			return out
		}
		mrWant(t, "offset walk", walk(mrPath(p1, 0, "?per_page=1")), []string{c, b, a})
		// Keyset pages, in each order: no totals, a next link while more.
		r = s.Get(t, mrPath(p1, 0, "?pagination=keyset&per_page=2"), owner.Token).Want(t, http.StatusOK)
		if r.Header.Get("X-Total") != "" || apitest.Links(t, r.Header)["next"] == "" {
			t.Errorf("keyset page: X-Total %q, Link %q", r.Header.Get("X-Total"), r.Header.Get("Link"))
		}
		for query, want := range map[string][]string{
			"":                               {c, b, a},
			"&sort=asc":                      {a, b, c},
			"&order_by=updated_at":           {b, c, a},
			"&order_by=updated_at&sort=asc":  {a, c, b},
			"&order_by=title&sort=asc":       {a, b, c},
			"&order_by=title&sort=desc":      {c, b, a},
			"&order_by=created_at&state=all": {c, b, a},
			"&state=opened":                  {c, a},
		} {
			mrWant(t, "keyset"+query, walk(mrPath(p1, 0, "?pagination=keyset&per_page=1"+query)), want)
		}

		// A group's: its projects' and its subgroups'.
		gpath := fmt.Sprintf("/groups/%d/merge_requests", g)
		mrWant(t, "group", mrRefs(t, s, gpath, owner.Token), []string{d, c, b, a})
		mrWant(t, "group opened", mrRefs(t, s, gpath+"?state=opened", owner.Token), []string{d, c, a})
		mrWant(t, "group by bob", mrRefs(t, s, gpath+"?author_id="+itoa(bob.ID), bob.Token), []string{d, b})
		mrWant(t, "group sorted", mrRefs(t, s, gpath+"?order_by=title&sort=asc", owner.Token), []string{a, b, d, c})
		mrWant(t, "subgroup", mrRefs(t, s, fmt.Sprintf("/groups/%d/merge_requests", sub), owner.Token), []string{d})
		mrWant(t, "group for carol (one project)", mrRefs(t, s, gpath, carol.Token), []string{c, b, a})
		s.Get(t, gpath, stranger.Token).Want(t, http.StatusNotFound)
		r = s.Get(t, gpath+"?per_page=3", owner.Token).Want(t, http.StatusOK)
		if r.Header.Get("X-Total") != "4" || r.Header.Get("X-Next-Page") != "2" {
			t.Errorf("group page: X-Total %q X-Next-Page %q", r.Header.Get("X-Total"), r.Header.Get("X-Next-Page"))
		}

		// Everyone's: the caller's own unless a scope says otherwise.
		mrWant(t, "mine", mrRefs(t, s, "/merge_requests", owner.Token), []string{e, c, a})
		mrWant(t, "mine opened", mrRefs(t, s, "/merge_requests?state=opened", owner.Token), []string{c, a})
		mrWant(t, "mine merged", mrRefs(t, s, "/merge_requests?state=merged", owner.Token), []string{e})
		mrWant(t, "assigned to me", mrRefs(t, s, "/merge_requests?scope=assigned_to_me", owner.Token), []string{d})
		mrWant(t, "all", mrRefs(t, s, "/merge_requests?scope=all", owner.Token), []string{e, d, c, b, a})
		mrWant(t, "all for bob", mrRefs(t, s, "/merge_requests?scope=all", bob.Token), []string{d, c, b, a})
		mrWant(t, "bob's", mrRefs(t, s, "/merge_requests", bob.Token), []string{d, b})
		mrWant(t, "bob's closed", mrRefs(t, s, "/merge_requests?state=closed", bob.Token), []string{b})
		mrWant(t, "all by bob", mrRefs(t, s, "/merge_requests?scope=all&author_id="+itoa(bob.ID), owner.Token), []string{d, b})
		mrWant(t, "reviews for carol", mrRefs(t, s, "/merge_requests?scope=reviews_for_me", carol.Token), []string{a})
		mrWant(t, "carol's", mrRefs(t, s, "/merge_requests", carol.Token), []string{})
		mrWant(t, "stranger's all", mrRefs(t, s, "/merge_requests?scope=all", stranger.Token), []string{})
		mrWant(t, "all keyset", walk("/merge_requests?scope=all&pagination=keyset&per_page=2&sort=asc"), []string{a, b, c, d, e})
		s.Get(t, "/merge_requests", "").Want(t, http.StatusUnauthorized)
	})
}

// mrFile writes a file on a branch through the files API (method POST
// creates, PUT updates) and gives the branch's new tip.
func mrFile(t *testing.T, p ciProject, method, branch, path, content string) string {
	t.Helper()
	want := http.StatusCreated
	if method == "PUT" {
		want = http.StatusOK
	}
	p.s.Do(t, apitest.Request{Method: method, Path: fmt.Sprintf("/projects/%d/repository/files/%s", p.ID, url.PathEscape(path)),
		Token: p.Token, JSON: map[string]any{"branch": branch, "content": content, "commit_message": "write " + path}}).Want(t, want)
	return capiBranchSHA(t, p, branch)
}

// TestMergeRequests_get: the merge status is computed from the
// repository for the current tips (a real conflict: cannot_be_merged,
// has_conflicts, broken_status; resolved on the source branch: can be
// merged again), changes_count counts the changed files, and a push to
// the source branch moves sha and diff_refs.
func TestMergeRequests_get(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		owner := s.NewUser(t, "mrgowner")
		p := mrProject(t, s, owner, "get", "private")
		base := p.commit(t, "main", map[string]string{"a.txt": "one\n"})
		head := p.commit(t, "feature", map[string]string{"a.txt": "two\n", "b.txt": "b\n"})
		p.commit(t, "clean", map[string]string{"c.txt": "c\n"})
		mr := mrOpen(t, p, "feature", "main", "Change a")
		mrOpen(t, p, "clean", "main", "Add c")
		if mr.MergeStatus != "can_be_merged" || mr.DetailedMergeStatus != "mergeable" || mr.HasConflicts || mr.ChangesCount != "2" {
			t.Errorf("created: %s/%s conflicts %v changes %s", mr.MergeStatus, mr.DetailedMergeStatus, mr.HasConflicts, mr.ChangesCount)
		}
		if mr.DiffRefs.BaseSHA != base || mr.DiffRefs.StartSHA != base || mr.DiffRefs.HeadSHA != head {
			t.Errorf("diff_refs %+v", mr.DiffRefs)
		}

		// The target moves with a conflicting change of a.txt.
		tip := p.commit(t, "main", map[string]string{"a.txt": "three\n"})
		mr = mrGet(t, p, owner.Token, 1)
		if mr.MergeStatus != "cannot_be_merged" || !mr.HasConflicts || mr.DetailedMergeStatus != "broken_status" {
			t.Errorf("conflicting: %s/%s conflicts %v", mr.MergeStatus, mr.DetailedMergeStatus, mr.HasConflicts)
		}
		if mr.SHA != head || mr.DiffRefs.HeadSHA != head || mr.DiffRefs.BaseSHA != base || mr.ChangesCount != "2" {
			t.Errorf("the target's move changed the diff: sha %s diff_refs %+v changes %s", mr.SHA, mr.DiffRefs, mr.ChangesCount)
		}
		if other := mrGet(t, p, owner.Token, 2); other.MergeStatus != "can_be_merged" || other.HasConflicts {
			t.Errorf("the other merge request: %s conflicts %v", other.MergeStatus, other.HasConflicts)
		}
		// Lists show the status last computed.
		var list []mrJSON
		s.Get(t, mrPath(p, 0, "?source_branch=feature"), owner.Token).Want(t, http.StatusOK).JSON(t, &list)
		if len(list) != 1 || list[0].MergeStatus != "cannot_be_merged" || !list[0].HasConflicts || list[0].ChangesCount != "" {
			t.Errorf("listed %+v", list)
		}
		mrDo(t, p, "PUT", owner.Token, 1, "/merge", nil).Want(t, http.StatusNotAcceptable).WantBody(t, `{"message":"Branch cannot be merged"}`)

		// A push to the source branch (the files API) moves the merge
		// request: sha and head, the target's tip as start; still in
		// conflict.
		head2 := mrFile(t, p, "POST", "feature", "d.txt", "d\n")
		eventually(t, "the merge request follows the push", func() bool { return mrGet(t, p, owner.Token, 1).SHA == head2 })
		mr = mrGet(t, p, owner.Token, 1)
		if mr.DiffRefs.HeadSHA != head2 || mr.DiffRefs.BaseSHA != base || mr.DiffRefs.StartSHA != tip || mr.ChangesCount != "3" {
			t.Errorf("after the push: diff_refs %+v changes %s; want head %s base %s start %s, 3 changes", mr.DiffRefs, mr.ChangesCount, head2, base, tip)
		}
		if mr.MergeStatus != "cannot_be_merged" || !mr.HasConflicts {
			t.Errorf("after the push: %s conflicts %v", mr.MergeStatus, mr.HasConflicts)
		}
		// Resolved on the source branch: mergeable again, and merged.
		head3 := mrFile(t, p, "PUT", "feature", "a.txt", "three\n")
		eventually(t, "the merge request follows the second push", func() bool { return mrGet(t, p, owner.Token, 1).SHA == head3 })
		mr = mrGet(t, p, owner.Token, 1)
		if mr.MergeStatus != "can_be_merged" || mr.HasConflicts || mr.DetailedMergeStatus != "mergeable" || mr.DiffRefs.HeadSHA != head3 {
			t.Errorf("resolved: %s/%s conflicts %v diff_refs %+v", mr.MergeStatus, mr.DetailedMergeStatus, mr.HasConflicts, mr.DiffRefs)
		}
		merged := mrMerge(t, p, owner.Token, 1, map[string]any{"sha": head3})
		c := mrCloneOf(t, p)
		if log := c.log(t, "main"); log[0].ID != merged.MergeCommitSHA || !slices.Equal(log[0].Parents, []string{tip, head3}) {
			t.Errorf("main after the merge %+v; want %s with parents %s %s", log[0], merged.MergeCommitSHA, tip, head3)
		}
		if c.git(t, "show", "main:a.txt") != "three" || c.git(t, "show", "main:d.txt") != "d" {
			t.Error("main lacks the merged files")
		}
		// A merged merge request keeps its refs and counts.
		if got := mrGet(t, p, owner.Token, 1); got.State != "merged" || got.SHA != head3 || got.ChangesCount != "3" ||
			got.DetailedMergeStatus != "not_open" || got.User.CanMerge {
			t.Errorf("merged read: %s sha %s changes %s %s can_merge %v", got.State, got.SHA, got.ChangesCount, got.DetailedMergeStatus, got.User.CanMerge)
		}

		mrDo(t, p, "GET", owner.Token, 99, "", nil).Want(t, http.StatusNotFound).WantBody(t, `{"message":"404 Merge Request Not Found"}`)
		s.Get(t, mrPath(p, 0, "/abc"), owner.Token).Want(t, http.StatusNotFound)
	})
}

// TestMergeRequests_update: each field, closing (closed_by, closed_at)
// and reopening (refused while another merge request of the branches is
// open), draft titles, and who may edit.
func TestMergeRequests_update(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		owner := s.NewUser(t, "mruowner")
		dev, rep := s.NewUser(t, "mrudev"), s.NewUser(t, "mrurep")
		p := mrProject(t, s, owner, "upd", "private")
		agMember(t, s, p, dev, 30)
		agMember(t, s, p, rep, 20)
		p.commit(t, "feature", map[string]string{"f.txt": "f\n"})
		devTip := p.commit(t, "dev", map[string]string{"dev.txt": "dev\n"})
		mr := mrCreate(t, p, owner.Token, map[string]any{"source_branch": "feature", "target_branch": "main", "title": "First",
			"labels": "a,b"})

		mr = mrUpdate(t, p, owner.Token, 1, map[string]any{"title": "Second", "description": "More words"})
		if mr.Title != "Second" || mr.Description != "More words" || mr.UpdatedAt < mr.CreatedAt {
			t.Errorf("title and description: %+v", mr)
		}
		mr = mrUpdate(t, p, owner.Token, 1, map[string]any{"assignee_ids": []int64{dev.ID, rep.ID}, "reviewer_ids": []int64{rep.ID}})
		mrWant(t, "assignees", mrUserIDs(mr.Assignees), []int64{dev.ID, rep.ID})
		mrWant(t, "reviewers", mrUserIDs(mr.Reviewers), []int64{rep.ID})
		mr = mrUpdate(t, p, owner.Token, 1, map[string]any{"assignee_id": 0})
		mrWant(t, "assignees after assignee_id 0", mrUserIDs(mr.Assignees), []int64{})
		if mr.Assignee != nil {
			t.Errorf("assignee %+v", mr.Assignee)
		}
		mr = mrUpdate(t, p, owner.Token, 1, map[string]any{"assignee_id": dev.ID})
		mrWant(t, "assignees after assignee_id", mrUserIDs(mr.Assignees), []int64{dev.ID})
		mr = mrUpdate(t, p, owner.Token, 1, map[string]any{"labels": "x,y"})
		mrWant(t, "labels", mr.Labels, []string{"x", "y"})
		mr = mrUpdate(t, p, owner.Token, 1, map[string]any{"add_labels": "z", "remove_labels": "x"})
		mrWant(t, "labels added and removed", mr.Labels, []string{"y", "z"})
		mr = mrUpdate(t, p, owner.Token, 1, map[string]any{"squash": true, "discussion_locked": true, "remove_source_branch": true})
		if !mr.Squash || mr.DiscussionLocked == nil || !*mr.DiscussionLocked || !mr.ForceRemoveSourceBranch {
			t.Errorf("squash %v discussion_locked %v force_remove_source_branch %v", mr.Squash, mr.DiscussionLocked, mr.ForceRemoveSourceBranch)
		}
		mr = mrUpdate(t, p, owner.Token, 1, map[string]any{"squash": false, "discussion_locked": false})
		if mr.Squash || mr.DiscussionLocked == nil || *mr.DiscussionLocked {
			t.Errorf("squash %v discussion_locked %v", mr.Squash, mr.DiscussionLocked)
		}
		// Another target branch: new diff refs from it.
		mr = mrUpdate(t, p, owner.Token, 1, map[string]any{"target_branch": "dev"})
		if mr.TargetBranch != "dev" || mr.DiffRefs.StartSHA != devTip || mr.MergeStatus != "can_be_merged" {
			t.Errorf("retargeted: %s diff_refs %+v status %s; want start %s", mr.TargetBranch, mr.DiffRefs, mr.MergeStatus, devTip)
		}
		mrDo(t, p, "PUT", owner.Token, 1, "", map[string]any{"target_branch": "nope"}).Want(t, http.StatusUnprocessableEntity).
			WantBody(t, `{"message":["Target branch \"nope\" does not exist"]}`)
		mrDo(t, p, "PUT", owner.Token, 1, "", map[string]any{"target_branch": "feature"}).Want(t, http.StatusConflict).
			WantBody(t, `{"message":["You can't use same project/branch for source and target"]}`)
		mrUpdate(t, p, owner.Token, 1, map[string]any{"target_branch": "main"})

		// Drafts.
		mr = mrUpdate(t, p, owner.Token, 1, map[string]any{"title": "Draft: Second"})
		if !mr.Draft || !mr.WorkInProgress || mr.DetailedMergeStatus != "draft_status" {
			t.Errorf("draft title: draft %v wip %v %s", mr.Draft, mr.WorkInProgress, mr.DetailedMergeStatus)
		}
		mrDo(t, p, "PUT", owner.Token, 1, "/merge", nil).Want(t, http.StatusMethodNotAllowed)
		for _, title := range []string{"[Draft] Second", "(draft) Second", "DRAFT: Second"} {
			if mr = mrUpdate(t, p, owner.Token, 1, map[string]any{"title": title}); !mr.Draft {
				t.Errorf("%q is not a draft", title)
			}
		}
		if mr = mrUpdate(t, p, owner.Token, 1, map[string]any{"title": "Second"}); mr.Draft || mr.DetailedMergeStatus != "mergeable" {
			t.Errorf("ready: draft %v %s", mr.Draft, mr.DetailedMergeStatus)
		}

		// Close: closed_by, closed_at; the merge request no longer merges.
		mr = mrUpdate(t, p, dev.Token, 1, map[string]any{"state_event": "close"})
		if mr.State != "closed" || mr.ClosedBy == nil || mr.ClosedBy.ID != dev.ID || mr.ClosedAt == nil || mr.DetailedMergeStatus != "not_open" {
			t.Errorf("closed: %s by %+v at %v, %s", mr.State, mr.ClosedBy, mr.ClosedAt, mr.DetailedMergeStatus)
		}
		mrDo(t, p, "PUT", owner.Token, 1, "/merge", nil).Want(t, http.StatusMethodNotAllowed)
		// Another one for the same branches may be opened now; reopening
		// the first is then refused.
		if two := mrOpen(t, p, "feature", "main", "Again"); two.IID != 2 {
			t.Errorf("second iid %d", two.IID)
		}
		mrDo(t, p, "PUT", owner.Token, 1, "", map[string]any{"state_event": "reopen"}).Want(t, http.StatusConflict).
			WantBody(t, `{"message":["Another open merge request already exists for this source branch: !2"]}`)
		if got := mrGet(t, p, owner.Token, 1); got.State != "closed" {
			t.Errorf("after a refused reopen: %s", got.State)
		}
		mrUpdate(t, p, owner.Token, 2, map[string]any{"state_event": "close"})
		mr = mrUpdate(t, p, owner.Token, 1, map[string]any{"state_event": "reopen"})
		if mr.State != "opened" || mr.ClosedBy != nil || mr.ClosedAt != nil || mr.MergeStatus != "can_be_merged" {
			t.Errorf("reopened: %s by %+v at %v status %s", mr.State, mr.ClosedBy, mr.ClosedAt, mr.MergeStatus)
		}
		// Closing twice or reopening an open one changes nothing.
		mrUpdate(t, p, owner.Token, 2, map[string]any{"state_event": "close"})
		if got := mrUpdate(t, p, owner.Token, 1, map[string]any{"state_event": "reopen"}); got.State != "opened" {
			t.Errorf("reopening an open one: %s", got.State)
		}
		// A push while closed: reopened, the merge request shows the
		// branch as it is now.
		mrUpdate(t, p, owner.Token, 1, map[string]any{"state_event": "close"})
		pushed := mrFile(t, p, "POST", "feature", "late.txt", "late\n")
		mr = mrUpdate(t, p, owner.Token, 1, map[string]any{"state_event": "reopen"})
		if mr.SHA != pushed || mr.DiffRefs.HeadSHA != pushed || mr.ChangesCount != "2" {
			t.Errorf("reopened after a push: sha %s diff_refs %+v changes %s; want %s", mr.SHA, mr.DiffRefs, mr.ChangesCount, pushed)
		}

		// Bad input; who may edit.
		mrDo(t, p, "PUT", owner.Token, 1, "", map[string]any{}).Want(t, http.StatusBadRequest).
			WantBody(t, `{"error":"assignee_id, assignee_ids, reviewer_ids, description, labels, add_labels, remove_labels, milestone_id, `+
				`remove_source_branch, allow_collaboration, allow_maintainer_to_push, squash, target_branch, title, state_event, `+
				`discussion_locked are missing, at least one parameter must be provided"}`)
		mrDo(t, p, "PUT", owner.Token, 1, "", map[string]any{"state_event": "merge"}).Want(t, http.StatusBadRequest).
			WantBody(t, `{"error":"state_event does not have a valid value"}`)
		mrDo(t, p, "PUT", owner.Token, 1, "", map[string]any{"title": " "}).Want(t, http.StatusBadRequest)
		mrDo(t, p, "PUT", rep.Token, 1, "", map[string]any{"title": "By a reporter"}).Want(t, http.StatusForbidden).
			WantBody(t, `{"message":"403 Forbidden"}`)
		mrDo(t, p, "PUT", owner.Token, 99, "", map[string]any{"title": "x"}).Want(t, http.StatusNotFound).
			WantBody(t, `{"message":"404 Merge Request Not Found"}`)
		mrDo(t, p, "PUT", "", 1, "", map[string]any{"title": "x"}).Want(t, http.StatusUnauthorized)
		if mr = mrUpdate(t, p, dev.Token, 1, map[string]any{"title": "By a developer"}); mr.Title != "By a developer" {
			t.Errorf("developer's edit: %q", mr.Title)
		}
		if got := mrGet(t, p, rep.Token, 1); got.Title != "By a developer" {
			t.Errorf("read back %q", got.Title)
		}
	})
}

// TestMergeRequests_commitsChangesParticipants: a merge request's
// commits (newest first), its changes with the merge request, its diffs
// in pages, and its participants.
func TestMergeRequests_commitsChangesParticipants(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		owner := s.NewUser(t, "mrdowner")
		dev, rep, stranger := s.NewUser(t, "mrddev"), s.NewUser(t, "mrdrep"), s.NewUser(t, "mrdstranger")
		p := mrProject(t, s, owner, "diffs", "private")
		agMember(t, s, p, dev, 30)
		agMember(t, s, p, rep, 20)
		base := capiBranchSHA(t, p, "main")
		c1 := p.commit(t, "feature", map[string]string{"f1.txt": "one\n"})
		c2 := p.commit(t, "feature", map[string]string{"f2.txt": "two\n"})
		c3 := p.commit(t, "feature", map[string]string{"f3.txt": "three\n", "README.md": "changed\n"})
		mrCreate(t, p, owner.Token, map[string]any{"source_branch": "feature", "target_branch": "main", "title": "Three commits",
			"assignee_ids": []int64{dev.ID}, "reviewer_ids": []int64{rep.ID, dev.ID}})

		var commits []struct {
			ID        string   `json:"id"`
			ShortID   string   `json:"short_id"`
			ParentIDs []string `json:"parent_ids"`
			Title     string   `json:"title"`
			WebURL    string   `json:"web_url"`
		}
		mrDo(t, p, "GET", rep.Token, 1, "/commits", nil).Want(t, http.StatusOK).JSON(t, &commits)
		if len(commits) != 3 {
			t.Fatalf("commits %+v", commits)
		}
		for i, want := range [][2]string{{c3, c2}, {c2, c1}, {c1, base}} {
			got := commits[i]
			if got.ID != want[0] || !slices.Equal(got.ParentIDs, []string{want[1]}) || got.ShortID != want[0][:8] ||
				got.WebURL != s.URL+"/"+p.Path+"/-/commit/"+want[0] || got.Title != "ci files" {
				t.Errorf("commit %d: %+v; want %s after %s", i, got, want[0], want[1])
			}
		}

		var changes struct {
			mrJSON
			Changes []struct {
				OldPath     string `json:"old_path"`
				NewPath     string `json:"new_path"`
				NewFile     bool   `json:"new_file"`
				DeletedFile bool   `json:"deleted_file"`
				Diff        string `json:"diff"`
			} `json:"changes"`
			Overflow bool `json:"overflow"`
		}
		mrDo(t, p, "GET", rep.Token, 1, "/changes", nil).Want(t, http.StatusOK).JSON(t, &changes)
		if changes.IID != 1 || changes.SHA != c3 || changes.ChangesCount != "4" || changes.Overflow || len(changes.Changes) != 4 {
			t.Fatalf("changes: iid %d sha %s count %s overflow %v, %d changes", changes.IID, changes.SHA, changes.ChangesCount,
				changes.Overflow, len(changes.Changes))
		}
		byPath := map[string]int{}
		for i, ch := range changes.Changes {
			byPath[ch.NewPath] = i
		}
		readme := changes.Changes[byPath["README.md"]]
		if readme.NewFile || readme.OldPath != "README.md" || !strings.Contains(readme.Diff, "+changed") {
			t.Errorf("README.md change %+v", readme)
		}
		if f := changes.Changes[byPath["f3.txt"]]; !f.NewFile || !strings.Contains(f.Diff, "+three") {
			t.Errorf("f3.txt change %+v", f)
		}

		// Diffs in pages, the same files in the same order.
		r := mrDo(t, p, "GET", rep.Token, 1, "/diffs?per_page=3", nil).Want(t, http.StatusOK)
		if r.Header.Get("X-Total") != "4" || r.Header.Get("X-Total-Pages") != "2" || r.Header.Get("X-Next-Page") != "2" || len(r.Array(t)) != 3 {
			t.Errorf("diffs page 1: total %q pages %q next %q, %d items", r.Header.Get("X-Total"), r.Header.Get("X-Total-Pages"),
				r.Header.Get("X-Next-Page"), len(r.Array(t)))
		}
		var paths []string
		s.Walk(t, mrPath(p, 1, "/diffs?per_page=3"), rep.Token, func(r *apitest.Response) {
			for _, d := range r.Array(t) {
				paths = append(paths, d["new_path"].(string))
			}
		})
		var want []string
		for _, ch := range changes.Changes {
			want = append(want, ch.NewPath)
		}
		mrWant(t, "diff paths", paths, want)
		if r := mrDo(t, p, "GET", rep.Token, 1, "/diffs?per_page=3&page=3", nil).Want(t, http.StatusOK); len(r.Array(t)) != 0 {
			t.Errorf("diffs past the end: %s", r.Body)
		}

		// Participants: the author, assignees and reviewers, each once.
		var people []mrUserJSON
		mrDo(t, p, "GET", rep.Token, 1, "/participants", nil).Want(t, http.StatusOK).JSON(t, &people)
		mrWant(t, "participants", mrUserIDs(people), []int64{owner.ID, dev.ID, rep.ID})

		// A merge request with no change of its own.
		main := capiBranchSHA(t, p, "main")
		s.Do(t, apitest.Request{Method: "POST", Path: fmt.Sprintf("/projects/%d/repository/branches?branch=empty&ref=main", p.ID),
			Token: owner.Token}).Want(t, http.StatusCreated)
		empty := mrOpen(t, p, "empty", "main", "Nothing")
		if empty.ChangesCount != "0" || empty.DiffRefs.HeadSHA != main || empty.DiffRefs.BaseSHA != main {
			t.Errorf("empty merge request: changes %s diff_refs %+v", empty.ChangesCount, empty.DiffRefs)
		}
		mrDo(t, p, "GET", rep.Token, empty.IID, "/commits", nil).Want(t, http.StatusOK).WantBody(t, `[]`)
		// Nothing to merge: GitLab's 405 for a merge request without commits.
		mrDo(t, p, "PUT", owner.Token, empty.IID, "/merge", nil).Want(t, http.StatusMethodNotAllowed)
		if got := capiBranchSHA(t, p, "main"); got != main {
			t.Errorf("merging nothing moved main to %s", got)
		}
		if r := mrDo(t, p, "GET", rep.Token, empty.IID, "/diffs", nil).Want(t, http.StatusOK); len(r.Array(t)) != 0 {
			t.Errorf("empty diffs %s", r.Body)
		}

		// Strangers see none of it; unknown iids are 404.
		for _, suffix := range []string{"/commits", "/changes", "/diffs", "/participants"} {
			mrDo(t, p, "GET", stranger.Token, 1, suffix, nil).Want(t, http.StatusNotFound)
			mrDo(t, p, "GET", owner.Token, 99, suffix, nil).Want(t, http.StatusNotFound).WantBody(t, `{"message":"404 Merge Request Not Found"}`)
		}
	})
}

// mrRebase rebases a merge request's source branch and waits until the
// merge request follows it; it gives the new head.
func mrRebase(t *testing.T, p ciProject, iid int64, branch, old string) string {
	t.Helper()
	mrDo(t, p, "PUT", p.Token, iid, "/rebase", nil).Want(t, http.StatusAccepted).WantBody(t, `{"rebase_in_progress":false}`)
	head := capiBranchSHA(t, p, branch)
	if head == old {
		t.Fatalf("rebase left %s at %s", branch, old)
	}
	eventually(t, "the merge request follows its rebased branch", func() bool { return mrGet(t, p, p.Token, iid).SHA == head })
	return head
}

// TestMergeRequests_mergeMethods: each project merge method, checked in
// the history with git: merge (a merge commit of the target's tip and
// the source's head, GitLab's message), rebase_merge (refused until the
// source is rebased, then a merge commit over a linear history) and ff
// (no merge commit; refused when the target moved, then rebased and
// fast-forwarded; squashed: one commit on the tip).
func TestMergeRequests_mergeMethods(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		owner, rep := s.NewUser(t, "mrmowner"), s.NewUser(t, "mrmrep")

		// merge.
		p := mrProject(t, s, owner, "by-merge", "private")
		if got := mrSettings(t, p, map[string]any{"merge_method": "merge"}); got["merge_method"] != "merge" {
			t.Fatalf("merge_method %v", got["merge_method"])
		}
		head := p.commit(t, "feature", map[string]string{"f.txt": "f\n"})
		tip := p.commit(t, "main", map[string]string{"m.txt": "m\n"})
		mrOpen(t, p, "feature", "main", "Merge me")
		merged := mrMerge(t, p, owner.Token, 1, nil)
		if merged.State != "merged" || merged.MergedBy == nil || merged.MergedBy.ID != owner.ID || merged.MergeUser == nil ||
			merged.MergedAt == nil || merged.MergeCommitSHA == "" || merged.SquashCommitSHA != "" || merged.SHA != head ||
			merged.DetailedMergeStatus != "not_open" {
			t.Errorf("merged %+v", merged)
		}
		c := mrCloneOf(t, p)
		log := c.log(t, "main", "--first-parent")
		if log[0].ID != merged.MergeCommitSHA || !slices.Equal(log[0].Parents, []string{tip, head}) || log[1].ID != tip {
			t.Errorf("main %+v; want the merge commit %s of %s and %s", log[:2], merged.MergeCommitSHA, tip, head)
		}
		want := "Merge branch 'feature' into 'main'\n\nMerge me\n\nSee merge request " + p.Path + "!1"
		if got := c.git(t, "log", "-1", "--format=%B", "main"); got != want {
			t.Errorf("merge commit message %q; want %q", got, want)
		}
		if got := c.git(t, "log", "-1", "--format=%an <%ae>|%cn <%ce>", "main"); got != "Mrmowner <mrmowner@example.com>|Mrmowner <mrmowner@example.com>" {
			t.Errorf("merge commit author and committer %q", got)
		}
		if got := mrGet(t, p, owner.Token, 1); got.State != "merged" || got.MergeCommitSHA != merged.MergeCommitSHA {
			t.Errorf("read after the merge: %s %s", got.State, got.MergeCommitSHA)
		}

		// rebase_merge: the source must contain the target's tip.
		p = mrProject(t, s, owner, "semi-linear", "private")
		agMember(t, s, p, rep, 20)
		mrSettings(t, p, map[string]any{"merge_method": "rebase_merge"})
		head = p.commit(t, "feature", map[string]string{"f.txt": "f\n"})
		tip = p.commit(t, "main", map[string]string{"m.txt": "m\n"})
		if mr := mrOpen(t, p, "feature", "main", "Semi-linear"); mr.MergeStatus != "can_be_merged" {
			t.Errorf("status %s", mr.MergeStatus)
		}
		mrDo(t, p, "PUT", owner.Token, 1, "/merge", nil).Want(t, http.StatusNotAcceptable).WantBody(t, `{"message":"Branch cannot be merged"}`)
		mrDo(t, p, "PUT", rep.Token, 1, "/rebase", nil).Want(t, http.StatusForbidden).
			WantBody(t, `{"message":"403 Forbidden - Cannot push to source branch"}`)
		rebased := mrRebase(t, p, 1, "feature", head)
		merged = mrMerge(t, p, owner.Token, 1, map[string]any{"sha": rebased})
		c = mrCloneOf(t, p)
		log = c.log(t, "main", "--first-parent")
		if log[0].ID != merged.MergeCommitSHA || !slices.Equal(log[0].Parents, []string{tip, rebased}) {
			t.Errorf("main %+v; want a merge commit of %s and %s", log[0], tip, rebased)
		}
		if r := c.log(t, rebased, "-1"); !slices.Equal(r[0].Parents, []string{tip}) || r[0].Subject != "ci files" {
			t.Errorf("rebased commit %+v; want the source's commit on %s", r[0], tip)
		}
		if got := c.git(t, "log", "-1", "--format=%an|%s", rebased); got != "Mrmowner|ci files" {
			t.Errorf("rebased commit keeps author and message: %q", got)
		}

		// ff: a branch on the target's tip is fast-forwarded.
		p = mrProject(t, s, owner, "fast-forward", "private")
		mrSettings(t, p, map[string]any{"merge_method": "ff"})
		head = p.commit(t, "feature", map[string]string{"f.txt": "f\n"})
		mrOpen(t, p, "feature", "main", "Fast")
		mrMerge(t, p, owner.Token, 1, nil)
		c = mrCloneOf(t, p)
		if got := c.git(t, "rev-parse", "main"); got != head {
			t.Errorf("main %s; want the source's head %s", got, head)
		}
		// The target moved: refused until rebased, then fast-forwarded.
		head = p.commit(t, "feature2", map[string]string{"g.txt": "g\n"})
		tip = p.commit(t, "main", map[string]string{"m.txt": "m\n"})
		mrOpen(t, p, "feature2", "main", "Fast again")
		mrDo(t, p, "PUT", owner.Token, 2, "/merge", nil).Want(t, http.StatusNotAcceptable).WantBody(t, `{"message":"Branch cannot be merged"}`)
		if got := mrGet(t, p, owner.Token, 2); got.State != "opened" {
			t.Errorf("after a refused merge: %s", got.State)
		}
		rebased = mrRebase(t, p, 2, "feature2", head)
		if got := mrGet(t, p, owner.Token, 2); got.DiffRefs.BaseSHA != tip || got.DiffRefs.HeadSHA != rebased || got.MergeStatus != "can_be_merged" {
			t.Errorf("rebased merge request: diff_refs %+v status %s", got.DiffRefs, got.MergeStatus)
		}
		mrMerge(t, p, owner.Token, 2, map[string]any{"sha": rebased})
		c = mrCloneOf(t, p)
		if got := c.git(t, "rev-parse", "main"); got != rebased {
			t.Errorf("main %s; want the rebased head %s", got, rebased)
		}
		if r := c.log(t, rebased, "-1"); !slices.Equal(r[0].Parents, []string{tip}) {
			t.Errorf("rebased commit %+v; want it on %s", r[0], tip)
		}
		// Squashed: one commit on the tip, whatever the source held.
		tip = rebased
		p.commit(t, "feature3", map[string]string{"h1.txt": "1\n"})
		head = p.commit(t, "feature3", map[string]string{"h2.txt": "2\n"})
		mrOpen(t, p, "feature3", "main", "Two commits")
		merged = mrMerge(t, p, owner.Token, 3, map[string]any{"squash": true, "squash_commit_message": "One commit\n"})
		c = mrCloneOf(t, p)
		log = c.log(t, "main")
		if log[0].ID != merged.SquashCommitSHA || !slices.Equal(log[0].Parents, []string{tip}) || log[0].Subject != "One commit" || !merged.Squash {
			t.Errorf("squashed ff: main %+v; squash_commit_sha %s", log[0], merged.SquashCommitSHA)
		}
		if c.contains(t, "main", head) || c.git(t, "show", "main:h1.txt") != "1" || c.git(t, "show", "main:h2.txt") != "2" {
			t.Error("the squash commit does not hold the source's changes alone")
		}
		if got := c.git(t, "rev-list", "--merges", "main"); got != "" {
			t.Errorf("merge commits on a fast-forward-only main: %s", got)
		}
	})
}

// TestMergeRequests_mergeOptions: squash with its message,
// merge_commit_message, removing the source branch, the sha check, and
// the refusals: merged or closed (405), conflicting (406), a merger
// without the target branch's merge grant (401).
func TestMergeRequests_mergeOptions(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		owner, dev, rep := s.NewUser(t, "mroowner"), s.NewUser(t, "mroodev"), s.NewUser(t, "mroorep")
		p := mrProject(t, s, owner, "options", "private")
		agMember(t, s, p, dev, 30)
		agMember(t, s, p, rep, 20)

		// Squash: one commit with the message given, on the merge base,
		// merged with a merge commit.
		base := capiBranchSHA(t, p, "main")
		p.commit(t, "sq", map[string]string{"s1.txt": "1\n"})
		sqHead := p.commit(t, "sq", map[string]string{"s2.txt": "2\n"})
		mrOpen(t, p, "sq", "main", "Squash me")
		merged := mrMerge(t, p, owner.Token, 1, map[string]any{"squash": true, "squash_commit_message": "Squashed!\n"})
		if !merged.Squash || merged.SquashCommitSHA == "" || merged.MergeCommitSHA == "" {
			t.Fatalf("squashed merge %+v", merged)
		}
		c := mrCloneOf(t, p)
		log := c.log(t, "main")
		if log[0].ID != merged.MergeCommitSHA || !slices.Equal(log[0].Parents, []string{base, merged.SquashCommitSHA}) {
			t.Errorf("main %+v; want a merge commit of %s and the squash commit %s", log[0], base, merged.SquashCommitSHA)
		}
		if sq := c.log(t, merged.SquashCommitSHA, "-1"); sq[0].Subject != "Squashed!" || !slices.Equal(sq[0].Parents, []string{base}) {
			t.Errorf("squash commit %+v", sq[0])
		}
		if c.contains(t, "main", sqHead) || c.git(t, "rev-list", "--count", base+"..main") != "2" {
			t.Error("main holds the source's own commits, not one squash commit")
		}
		if c.git(t, "show", "main:s1.txt") != "1" || c.git(t, "show", "main:s2.txt") != "2" {
			t.Error("the squash commit lacks the source's changes")
		}

		// A merge commit message of the merger's.
		p.commit(t, "msg", map[string]string{"msg.txt": "m\n"})
		mrOpen(t, p, "msg", "main", "Custom")
		mrMerge(t, p, owner.Token, 2, map[string]any{"merge_commit_message": "Custom merge\n\nWith a body"})
		if got := mrCloneOf(t, p).git(t, "log", "-1", "--format=%B", "main"); got != "Custom merge\n\nWith a body" {
			t.Errorf("merge commit message %q", got)
		}

		// The source branch: removed when the merger or the author asks,
		// kept otherwise.
		p.commit(t, "gone", map[string]string{"gone.txt": "g\n"})
		mrOpen(t, p, "gone", "main", "Remove after")
		mrMerge(t, p, owner.Token, 3, map[string]any{"should_remove_source_branch": true})
		if !mrBranchGone(t, p, "gone") {
			t.Error("should_remove_source_branch kept the branch")
		}
		p.commit(t, "gone2", map[string]string{"gone2.txt": "g\n"})
		mrCreate(t, p, owner.Token, map[string]any{"source_branch": "gone2", "target_branch": "main", "title": "Author asks",
			"remove_source_branch": true})
		if got := mrMerge(t, p, owner.Token, 4, nil); got.ShouldRemoveSourceBranch == nil || !*got.ShouldRemoveSourceBranch {
			t.Errorf("should_remove_source_branch %v", got.ShouldRemoveSourceBranch)
		}
		if !mrBranchGone(t, p, "gone2") {
			t.Error("remove_source_branch kept the branch")
		}
		p.commit(t, "kept", map[string]string{"kept.txt": "k\n"})
		mrOpen(t, p, "kept", "main", "Keep")
		mrMerge(t, p, owner.Token, 5, map[string]any{"should_remove_source_branch": false})
		if mrBranchGone(t, p, "kept") {
			t.Error("the branch was removed unasked")
		}
		// Whatever is asked, the merge request stays readable with its
		// diff after its branch is gone.
		if got := mrGet(t, p, owner.Token, 3); got.State != "merged" || got.ChangesCount != "1" {
			t.Errorf("merged without its branch: %s changes %s", got.State, got.ChangesCount)
		}

		// The sha check: 409 with the head, nothing merged.
		head := p.commit(t, "sha", map[string]string{"sha.txt": "s\n"})
		mrOpen(t, p, "sha", "main", "Check the sha")
		mrDo(t, p, "PUT", owner.Token, 6, "/merge", map[string]any{"sha": base}).Want(t, http.StatusConflict).
			WantBody(t, `{"message":"SHA does not match HEAD of source branch: `+head+`"}`)
		if got := mrGet(t, p, owner.Token, 6); got.State != "opened" {
			t.Errorf("after a sha mismatch: %s", got.State)
		}

		// Refusals: merged (405), closed (405), conflicting (406).
		mrDo(t, p, "PUT", owner.Token, 5, "/merge", nil).Want(t, http.StatusMethodNotAllowed)
		p.commit(t, "closed", map[string]string{"closed.txt": "c\n"})
		mrOpen(t, p, "closed", "main", "Closed")
		mrUpdate(t, p, owner.Token, 7, map[string]any{"state_event": "close"})
		mrDo(t, p, "PUT", owner.Token, 7, "/merge", nil).Want(t, http.StatusMethodNotAllowed)
		p.commit(t, "conflict", map[string]string{"msg.txt": "theirs\n"})
		mrOpen(t, p, "conflict", "main", "Conflicting")
		mainTip := p.commit(t, "main", map[string]string{"msg.txt": "ours\n"})
		mrDo(t, p, "PUT", owner.Token, 8, "/merge", nil).Want(t, http.StatusNotAcceptable).WantBody(t, `{"message":"Branch cannot be merged"}`)
		if got := capiBranchSHA(t, p, "main"); got != mainTip {
			t.Errorf("a refused merge moved main from %s to %s", mainTip, got)
		}
		mrDo(t, p, "PUT", owner.Token, 99, "/merge", nil).Want(t, http.StatusNotFound).WantBody(t, `{"message":"404 Merge Request Not Found"}`)

		// The target branch's merge grant decides. main: maintainers
		// merge; a developer is refused (and told so by can_merge).
		p.commit(t, "devwork", map[string]string{"dev.txt": "d\n"})
		mr := mrCreate(t, p, dev.Token, map[string]any{"source_branch": "devwork", "target_branch": "main", "title": "By a developer"})
		if got := mrGet(t, p, dev.Token, mr.IID); got.User.CanMerge {
			t.Error("a developer can merge into main")
		}
		mrDo(t, p, "PUT", dev.Token, mr.IID, "/merge", nil).Want(t, http.StatusUnauthorized).WantBody(t, `{"message":"401 Unauthorized"}`)
		mrDo(t, p, "PUT", rep.Token, mr.IID, "/merge", nil).Want(t, http.StatusUnauthorized)
		// release: maintainers push, developers merge: the developer may.
		// stable: developers push, maintainers merge: the developer may not.
		protect := func(name string, push, merge int) {
			s.Do(t, apitest.Request{Method: "POST", Path: fmt.Sprintf("/projects/%d/protected_branches", p.ID), Token: owner.Token,
				JSON: map[string]any{"name": name, "push_access_level": push, "merge_access_level": merge}}).Want(t, http.StatusCreated)
		}
		p.commit(t, "release", map[string]string{"r.txt": "r\n"})
		p.commit(t, "stable", map[string]string{"st.txt": "s\n"})
		protect("release", 40, 30)
		protect("stable", 30, 40)
		rel := mrCreate(t, p, dev.Token, map[string]any{"source_branch": "devwork", "target_branch": "release", "title": "Into release"})
		if got := mrGet(t, p, dev.Token, rel.IID); !got.User.CanMerge {
			t.Error("a developer cannot merge into release")
		}
		if got := mrMerge(t, p, dev.Token, rel.IID, nil); got.State != "merged" || got.MergedBy.ID != dev.ID {
			t.Errorf("developer's merge into release: %s by %+v", got.State, got.MergedBy)
		}
		st := mrCreate(t, p, dev.Token, map[string]any{"source_branch": "devwork", "target_branch": "stable", "title": "Into stable"})
		mrDo(t, p, "PUT", dev.Token, st.IID, "/merge", nil).Want(t, http.StatusUnauthorized)
		mrMerge(t, p, owner.Token, st.IID, nil)
		// A branch no rule covers: developers merge.
		p.commit(t, "topic", map[string]string{"topic.txt": "t\n"})
		top := mrCreate(t, p, dev.Token, map[string]any{"source_branch": "devwork", "target_branch": "topic", "title": "Into topic"})
		mrMerge(t, p, dev.Token, top.IID, nil)
		c = mrCloneOf(t, p)
		for _, b := range []string{"release", "stable", "topic"} {
			if c.git(t, "show", b+":dev.txt") != "d" {
				t.Errorf("%s lacks the developer's change", b)
			}
		}
		if _, err := gitRun(c.dir, "cat-file", "-e", "main:dev.txt"); err == nil {
			t.Error("main has the change the developer could not merge")
		}
	})
}

// TestMergeRequests_pipelineMustSucceed: with
// only_allow_merge_if_pipeline_succeeds, a merge request whose head has
// no successful pipeline is refused (405) — none yet, running, failed —
// and merges once a pipeline of its head succeeded.
func TestMergeRequests_pipelineMustSucceed(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		owner := s.NewUser(t, "mrpowner")
		p := newCIProject(t, s, owner, "gated", map[string]string{".gitlab-ci.yml": "test:\n  script: [\"true\"]\n"})
		if got := mrSettings(t, p, map[string]any{"only_allow_merge_if_pipeline_succeeds": true}); got["only_allow_merge_if_pipeline_succeeds"] != true {
			t.Fatalf("setting %v", got["only_allow_merge_if_pipeline_succeeds"])
		}
		head := p.commit(t, "feature", map[string]string{"f.txt": "f\n"})
		mrOpen(t, p, "feature", "main", "Gated")
		// The push pipeline may not exist yet: no successful one either way.
		mrDo(t, p, "PUT", p.Token, 1, "/merge", nil).Want(t, http.StatusMethodNotAllowed)
		var push []pipelineJSON
		eventually(t, "the push pipeline of the source branch", func() bool {
			push = p.pipelines(t, "ref=feature&sha="+head)
			return len(push) == 1
		})
		mrDo(t, p, "PUT", p.Token, 1, "/merge", nil).Want(t, http.StatusMethodNotAllowed)
		run(t, s, p.jobs(t, push[0].ID)[0].ID, fail)
		if got := p.pipeline(t, push[0].ID).Status; got != "failed" {
			t.Fatalf("pipeline %s", got)
		}
		mrDo(t, p, "PUT", p.Token, 1, "/merge", nil).Want(t, http.StatusMethodNotAllowed)
		if got := mrGet(t, p, p.Token, 1); got.State != "opened" {
			t.Errorf("after refused merges: %s", got.State)
		}
		// A new pipeline of the head succeeds: the merge goes through.
		pl := p.createPipeline(t, "feature")
		run(t, s, p.jobs(t, pl.ID)[0].ID, succeed)
		if got := p.pipeline(t, pl.ID).Status; got != "success" {
			t.Fatalf("pipeline %s", got)
		}
		if got := mrMerge(t, p, p.Token, 1, map[string]any{"sha": head}); got.State != "merged" {
			t.Errorf("merged: %s", got.State)
		}
	})
}

// TestMergeRequests_delete: owners delete (204; the head ref goes too,
// iids are not reused), developers and maintainers may not (403).
func TestMergeRequests_delete(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		owner, dev, maint := s.NewUser(t, "mrxowner"), s.NewUser(t, "mrxdev"), s.NewUser(t, "mrxmaint")
		p := mrProject(t, s, owner, "del", "private")
		agMember(t, s, p, dev, 30)
		agMember(t, s, p, maint, 40)
		head := p.commit(t, "feature", map[string]string{"f.txt": "f\n"})
		mrOpen(t, p, "feature", "main", "Doomed")
		lsRemote := func() string {
			t.Helper()
			out, err := gitRun(t.TempDir(), "ls-remote", cloneURL(s, p.Path, "owner", owner.Token), "refs/merge-requests/*")
			if err != nil {
				t.Fatalf("ls-remote: %v\n%s", err, out)
			}
			return strings.TrimSpace(out)
		}
		if got := lsRemote(); got != head+"\trefs/merge-requests/1/head" {
			t.Errorf("merge request refs %q", got)
		}
		mrDo(t, p, "DELETE", dev.Token, 1, "", nil).Want(t, http.StatusForbidden).WantBody(t, `{"message":"403 Forbidden"}`)
		mrDo(t, p, "DELETE", maint.Token, 1, "", nil).Want(t, http.StatusForbidden)
		mrDo(t, p, "DELETE", "", 1, "", nil).Want(t, http.StatusUnauthorized)
		mrGet(t, p, dev.Token, 1)
		mrDo(t, p, "DELETE", owner.Token, 1, "", nil).Want(t, http.StatusNoContent)
		mrDo(t, p, "GET", owner.Token, 1, "", nil).Want(t, http.StatusNotFound).WantBody(t, `{"message":"404 Merge Request Not Found"}`)
		mrDo(t, p, "DELETE", owner.Token, 1, "", nil).Want(t, http.StatusNotFound).WantBody(t, `{"message":"404 Merge Request Not Found"}`)
		mrWant(t, "list after the delete", mrRefs(t, s, mrPath(p, 0, ""), owner.Token), []string{})
		if got := lsRemote(); got != "" {
			t.Errorf("merge request refs after the delete %q", got)
		}
		// The branch may be proposed again; the iid is a new one.
		if mr := mrOpen(t, p, "feature", "main", "Again"); mr.IID != 2 {
			t.Errorf("iid after a delete %d; want 2", mr.IID)
		}
		mrDo(t, p, "DELETE", s.RootToken, 2, "", nil).Want(t, http.StatusNoContent)
	})
}

// TestMergeRequests_concurrentMerges: merges of two merge requests into
// one branch and a push to that branch, all at once, lose nothing: each
// merge lands (or answers 409 and lands when asked again) and git's
// history of the target holds every merge request's commits and the
// pushed commit. One merge request merged twice at once is merged once.
func TestMergeRequests_concurrentMerges(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		owner := s.NewUser(t, "mrkowner")
		p := mrProject(t, s, owner, "race", "private")
		const rounds = 3
		var heads, pushed []string
		for round := range rounds {
			a, b := fmt.Sprintf("r%d-a", round), fmt.Sprintf("r%d-b", round)
			ha := p.commit(t, a, map[string]string{a + ".txt": a + "\n"})
			hb := p.commit(t, b, map[string]string{b + ".txt": b + "\n"})
			ma, mb := mrOpen(t, p, a, "main", a), mrOpen(t, p, b, "main", b)
			type result struct {
				status int
				body   string
				err    error
			}
			results := make([]result, 3)
			start := make(chan struct{})
			done := make(chan struct{})
			for i, send := range []func() (int, string, error){
				func() (int, string, error) { return mrSend(s, "PUT", mrPath(p, ma.IID, "/merge"), owner.Token, nil) },
				func() (int, string, error) { return mrSend(s, "PUT", mrPath(p, mb.IID, "/merge"), owner.Token, nil) },
				func() (int, string, error) {
					return mrSend(s, "POST", fmt.Sprintf("/projects/%d/repository/commits", p.ID), owner.Token, map[string]any{
						"branch": "main", "commit_message": "pushed " + a, "actions": []map[string]any{
							{"action": "create", "file_path": a + "-push.txt", "content": "pushed\n"}}})
				},
			} {
				go func() {
					defer func() { done <- struct{}{} }()
					<-start
					results[i].status, results[i].body, results[i].err = send()
				}()
			}
			close(start)
			for range results {
				<-done
			}
			for i, r := range results {
				if r.err != nil {
					t.Fatalf("round %d request %d: %v", round, i, r.err)
				}
			}
			var pc struct {
				ID string `json:"id"`
			}
			if results[2].status != http.StatusCreated || json.Unmarshal([]byte(results[2].body), &pc) != nil {
				t.Fatalf("round %d push: %d %s", round, results[2].status, results[2].body)
			}
			for i, m := range []mrJSON{ma, mb} {
				switch results[i].status {
				case http.StatusOK:
				case http.StatusConflict:
					t.Logf("round %d: !%d answered 409, merged again", round, m.IID)
					mrMerge(t, p, owner.Token, m.IID, nil)
				default:
					t.Fatalf("round %d merge of !%d: %d %s", round, m.IID, results[i].status, results[i].body)
				}
			}
			heads = append(heads, ha, hb)
			pushed = append(pushed, pc.ID)
			for _, m := range []mrJSON{ma, mb} {
				if got := mrGet(t, p, owner.Token, m.IID); got.State != "merged" || got.MergeCommitSHA == "" {
					t.Errorf("round %d: !%d %s merge_commit_sha %q", round, m.IID, got.State, got.MergeCommitSHA)
				}
			}
		}
		c := mrCloneOf(t, p)
		for _, id := range append(heads, pushed...) {
			if !c.contains(t, "main", id) {
				t.Errorf("main lost %s", id)
			}
		}
		for round := range rounds {
			for _, f := range []string{"r%d-a.txt", "r%d-b.txt", "r%d-a-push.txt"} {
				name := fmt.Sprintf(f, round)
				if _, err := gitRun(c.dir, "cat-file", "-e", "main:"+name); err != nil {
					t.Errorf("main lacks %s", name)
				}
			}
		}
		if got := c.git(t, "rev-list", "--count", "--merges", "main"); got != itoa(2*rounds) {
			t.Errorf("%s merge commits on main; want %d", got, 2*rounds)
		}

		// One merge request merged twice at once: once.
		for round, squash := range []bool{false, true} {
			branch := fmt.Sprintf("twice-%d", round)
			head := p.commit(t, branch, map[string]string{branch + ".txt": "t\n"})
			mr := mrOpen(t, p, branch, "main", branch)
			before := capiBranchSHA(t, p, "main")
			statuses := make(chan int, 2)
			for range 2 {
				go func() {
					status, _, err := mrSend(s, "PUT", mrPath(p, mr.IID, "/merge"), owner.Token, map[string]any{"squash": squash})
					if err != nil {
						status = -1
					}
					statuses <- status
				}()
			}
			got := []int{<-statuses, <-statuses}
			slices.Sort(got)
			if got[0] != http.StatusOK || got[1] == http.StatusOK || got[1] < 400 {
				t.Errorf("squash %v: merging !%d twice at once answered %v; want one 200 and one refusal", squash, mr.IID, got)
			}
			c = mrCloneOf(t, p)
			// The merge commit and the source's commit (or the squash commit).
			if n := c.git(t, "rev-list", "--count", before+"..main"); n != "2" {
				t.Errorf("squash %v: %s commits on main after a double merge; want 2", squash, n)
			}
			merged := mrGet(t, p, owner.Token, mr.IID)
			if tip := c.git(t, "rev-parse", "main"); merged.State != "merged" || merged.MergeCommitSHA != tip {
				t.Errorf("squash %v: merge_commit_sha %s; main at %s", squash, merged.MergeCommitSHA, tip)
			}
			if !squash && !c.contains(t, "main", head) {
				t.Errorf("main lacks %s", head)
			}
		}
	})
}
