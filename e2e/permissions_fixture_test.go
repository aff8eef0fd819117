package e2e

import (
	"encoding/base64"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"quarry/internal/apitest"
	"quarry/internal/ci"
	"quarry/internal/model"
)

// The fixtures of TestPermissions_matrix, built once per database: four
// projects in one public group (public, internal, private, and public with
// its repository, CI, merge requests and wiki private to members), the
// principals who call them, and the objects the actions act on. Actions
// that use an object up (a merge, a cancel, a deletion) make a fresh one
// before the next cell.

// permColumns are the projects, in the order of a grid's columns.
var permColumns = []string{"public", "internal", "private", "features-private"}

// permRows are the principals, in the order of a grid's rows.
var permRows = []string{"anonymous", "non-member", "external", "guest", "reporter", "developer", "maintainer", "owner",
	"blocked", "admin", "read_api", "read_repository", "job", "job-allowed", "job-refused"}

// permCI is the projects' CI configuration: pipelines only from the API
// (commits start none), one job.
const permCI = capiNoPush + "build: {script: [make]}\n"

// permCred is how a principal authenticates: a personal token, a CI job
// token, or nothing.
type permCred struct {
	user     string // username, for git's Basic credentials
	token    string
	jobToken string
}

// header is the credential as API headers.
func (c permCred) header() map[string]string {
	switch {
	case c.jobToken != "":
		return map[string]string{"JOB-TOKEN": c.jobToken}
	case c.token != "":
		return map[string]string{"PRIVATE-TOKEN": c.token}
	}
	return nil
}

// basic is the credential as git's Basic authorization ("" for none).
func (c permCred) basic() string {
	user, secret := c.user, c.token
	if c.jobToken != "" {
		user, secret = "gitlab-ci-token", c.jobToken
	}
	if secret == "" {
		return ""
	}
	return "Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+secret))
}

// permProject is one column's project and the objects actions use.
type permProject struct {
	ciProject
	column string
	// readPipeline is a finished pipeline whose job has a log and an
	// archive (readJob).
	readPipeline, readJob int64
	// retry (a failed pipeline) and cancel (a pending one) are used up
	// by a successful call; 0 makes a new one.
	retry, cancel int64
	// mr is the merge request everyone reads and approves (from
	// "feature", by another user); merge is one made to be merged (0:
	// make a new one); proposal says whether the branch "proposal" has
	// an open merge request (the create action's).
	mr, merge int64
	proposal  bool
	// doomed is the wiki page the delete action deletes ("": make one).
	doomed string
	// jobToken is the token of the project's own running job.
	jobToken string
}

// permFixture is everything the matrix calls.
type permFixture struct {
	s        *apitest.Server
	owner    apitest.User
	newcomer apitest.User // added and removed as a member
	creds    map[string]permCred
	projects []*permProject
	runner   int64 // a project runner of another project, to enable
	n        int   // makes names unique
}

// next is a fresh number for names.
func (f *permFixture) next() int {
	f.n++
	return f.n
}

// call sends an API request as c and returns its status.
func (f *permFixture) call(t *testing.T, c permCred, method, path string, body any) int {
	t.Helper()
	return f.s.Do(t, apitest.Request{Method: method, Path: path, Header: c.header(), JSON: body}).Status
}

// asOwner sends an API request as the owner and wants status.
func (f *permFixture) asOwner(t *testing.T, method, path string, body any, status int) *apitest.Response {
	t.Helper()
	return f.s.Do(t, apitest.Request{Method: method, Path: path, Token: f.owner.Token, JSON: body}).Want(t, status)
}

// git sends the first request of a clone (push: a push) of the wiki of p
// as c, where git authorizes it, and returns the status.
func (f *permFixture) git(t *testing.T, c permCred, p *permProject, push bool) int {
	t.Helper()
	service := "git-upload-pack"
	if push {
		service = "git-receive-pack"
	}
	h := map[string]string{}
	if b := c.basic(); b != "" {
		h["Authorization"] = b
	}
	return f.s.Do(t, apitest.Request{Path: f.s.URL + "/" + p.Path + ".wiki.git/info/refs?service=" + service, Header: h}).Status
}

// newPermFixture builds the fixtures on s.
func newPermFixture(t *testing.T, s *apitest.Server) *permFixture {
	t.Helper()
	f := &permFixture{s: s, owner: s.NewUser(t, "owner"), newcomer: s.NewUser(t, "newcomer"), creds: map[string]permCred{}}
	var g struct{ ID int64 }
	f.asOwner(t, "POST", "/groups", map[string]any{"name": "Matrix", "path": "matrix", "visibility": "public"}, http.StatusCreated).JSON(t, &g)

	// Principals. Members are the group's, so every project of it has
	// them; the blocked one was a developer.
	user := func(name string) apitest.User {
		u := s.NewUser(t, name)
		f.creds[name] = permCred{user: name, token: u.Token}
		return u
	}
	f.creds["anonymous"] = permCred{}
	f.creds["owner"] = permCred{user: "owner", token: f.owner.Token}
	f.creds["admin"] = permCred{user: "root", token: s.RootToken}
	user("non-member")
	ext := user("external")
	s.Do(t, apitest.Request{Method: "PUT", Path: "/users/" + itoa(ext.ID), Token: s.RootToken, JSON: map[string]any{"external": true}}).Want(t, http.StatusOK)
	members := map[string]apitest.User{}
	for _, m := range []struct {
		name  string
		level int
	}{{"guest", 10}, {"reporter", 20}, {"developer", 30}, {"maintainer", 40}, {"blocked", 30}, {"author", 30}} {
		u := user(m.name)
		members[m.name] = u
		f.asOwner(t, "POST", fmt.Sprintf("/groups/%d/members", g.ID), map[string]any{"user_id": u.ID, "access_level": m.level}, http.StatusCreated)
	}
	delete(f.creds, "author")
	s.Do(t, apitest.Request{Method: "POST", Path: fmt.Sprintf("/users/%d/block", members["blocked"].ID), Token: s.RootToken}).Want(t, http.StatusCreated)
	maint := members["maintainer"]
	f.creds["read_api"] = permCred{user: maint.Username, token: s.NewToken(t, maint.ID, "read_api")}
	f.creds["read_repository"] = permCred{user: maint.Username, token: s.NewToken(t, maint.ID, "read_repository")}

	// Projects.
	project := func(name, visibility string, extra map[string]any) ciProject {
		body := map[string]any{"name": name, "namespace_id": g.ID, "visibility": visibility, "initialize_with_readme": true}
		for k, v := range extra {
			body[k] = v
		}
		var p struct {
			ID                int64  `json:"id"`
			PathWithNamespace string `json:"path_with_namespace"`
		}
		f.asOwner(t, "POST", "/projects", body, http.StatusCreated).JSON(t, &p)
		cp := ciProject{s: s, ID: p.ID, Path: p.PathWithNamespace, Token: f.owner.Token}
		cp.commit(t, "main", map[string]string{".gitlab-ci.yml": permCI})
		cp.commit(t, "feature", map[string]string{"feature.txt": "feature\n"})
		return cp
	}
	private := map[string]any{"repository_access_level": "private", "builds_access_level": "private",
		"merge_requests_access_level": "private", "wiki_access_level": "private"}
	for _, col := range permColumns {
		switch col {
		case "features-private":
			f.projects = append(f.projects, &permProject{ciProject: project(col, "public", private), column: col})
		default:
			f.projects = append(f.projects, &permProject{ciProject: project(col, col, nil), column: col})
		}
	}
	allowed, refused, home := project("allowed", "private", nil), project("refused", "private", nil), project("home", "private", nil)
	dev := members["developer"]

	// CI job tokens: a running job of each project, and of two others,
	// one of which every project's job token scope admits. Each job is
	// the developer's and the only one pending when its runner asks.
	running := func(p ciProject) string {
		r := projectRunner(t, p, nil)
		s.Do(t, apitest.Request{Method: "POST", Path: fmt.Sprintf("/projects/%d/pipeline", p.ID), Token: dev.Token,
			JSON: map[string]any{"ref": "feature"}}).Want(t, http.StatusCreated)
		return r.take(t).Token
	}
	f.creds["job-allowed"] = permCred{jobToken: running(allowed)}
	f.creds["job-refused"] = permCred{jobToken: running(refused)}
	jobs := map[string]string{}
	for _, p := range f.projects {
		jobs[p.column] = running(p.ciProject)
		f.asOwner(t, "POST", fmt.Sprintf("/projects/%d/job_token_scope/allowlist", p.ID), map[string]any{"target_project_id": allowed.ID},
			http.StatusCreated)
	}
	f.creds["job"] = permCred{} // per project: see permFixture.cred

	// A runner of another project the maintainers maintain, to enable.
	f.runner = newRunner(t, s, f.owner.Token, map[string]any{"runner_type": "project_type", "project_id": home.ID}).ID

	// What the actions read: a finished pipeline with a log and an
	// archive, a merge request, a wiki page.
	for _, p := range f.projects {
		p.jobToken = jobs[p.column]
		p.commit(t, "proposal", map[string]string{"proposal.txt": "proposal\n"})
		pl := p.createPipeline(t, "feature")
		p.readPipeline, p.readJob = pl.ID, p.job(t, pl.ID, "build").ID
		if _, err := engine(s).Start(ctx(t), p.readJob); err != nil {
			t.Fatal(err)
		}
		capiAppendLog(t, s, p.readJob, 0, "building\n")
		capiStoreArchive(t, s, p.readJob, "PK-not-really-a-zip")
		if _, err := engine(s).Finish(ctx(t), p.readJob, ci.Outcome{Status: model.StatusSuccess}); err != nil {
			t.Fatal(err)
		}
		var mr struct{ IID int64 }
		s.Do(t, apitest.Request{Method: "POST", Path: fmt.Sprintf("/projects/%d/merge_requests", p.ID), Token: members["author"].Token,
			JSON: map[string]any{"source_branch": "feature", "target_branch": "main", "title": "Feature"}}).Want(t, http.StatusCreated).JSON(t, &mr)
		p.mr = mr.IID
		f.asOwner(t, "POST", fmt.Sprintf("/projects/%d/wikis", p.ID), map[string]any{"title": "home", "content": "welcome"}, http.StatusCreated)
	}
	return f
}

// cred is the principal's credential on project p: the job token of p's
// own running job for "job".
func (f *permFixture) cred(principal string, p *permProject) permCred {
	if principal == "job" {
		return permCred{jobToken: p.jobToken}
	}
	return f.creds[principal]
}

// failedPipeline makes a pipeline on "feature" whose job failed.
func (f *permFixture) failedPipeline(t *testing.T, p *permProject) int64 {
	t.Helper()
	pl := p.createPipeline(t, "feature")
	run(t, f.s, p.job(t, pl.ID, "build").ID, fail)
	return pl.ID
}

// mergeable makes a merge request of a new branch with one commit.
func (f *permFixture) mergeable(t *testing.T, p *permProject) int64 {
	t.Helper()
	branch := fmt.Sprintf("merge-%d", f.next())
	p.commit(t, branch, map[string]string{branch + ".txt": branch + "\n"})
	var mr struct{ IID int64 }
	f.asOwner(t, "POST", fmt.Sprintf("/projects/%d/merge_requests", p.ID),
		map[string]any{"source_branch": branch, "target_branch": "main", "title": branch}, http.StatusCreated).JSON(t, &mr)
	return mr.IID
}

// doomedPage makes a wiki page to delete.
func (f *permFixture) doomedPage(t *testing.T, p *permProject) string {
	t.Helper()
	slug := fmt.Sprintf("doomed-%d", f.next())
	f.asOwner(t, "POST", fmt.Sprintf("/projects/%d/wikis", p.ID), map[string]any{"title": slug, "content": "x"}, http.StatusCreated)
	return slug
}

// ok reports a 2xx status.
func ok(status int) bool { return status >= 200 && status < 300 }

// parseGrid reads a grid: one line per principal, its name and one
// status per column.
func parseGrid(t *testing.T, action, grid string) map[string][]int {
	t.Helper()
	out := map[string][]int{}
	for _, line := range strings.Split(strings.TrimSpace(grid), "\n") {
		fields := strings.Fields(line)
		if len(fields) != 1+len(permColumns) {
			t.Fatalf("%s: grid line %q", action, line)
		}
		var row []int
		for _, v := range fields[1:] {
			var n int
			if _, err := fmt.Sscan(v, &n); err != nil {
				t.Fatalf("%s: grid line %q: %v", action, line, err)
			}
			row = append(row, n)
		}
		out[fields[0]] = row
	}
	for _, r := range permRows {
		if _, found := out[r]; !found {
			t.Fatalf("%s: grid has no row %q", action, r)
		}
	}
	if len(out) != len(permRows) {
		t.Fatalf("%s: grid has %d rows; want %d", action, len(out), len(permRows))
	}
	return out
}

// realGit checks a few wiki cells with git itself, as the matrix asks
// git's first request only: a developer clones and pushes the private
// project's wiki, its reporter clones but does not push, its guest does
// not clone, and a refused job token clones the public project's wiki.
func (f *permFixture) realGit(t *testing.T) {
	t.Helper()
	work := t.TempDir()
	url := func(p *permProject, c permCred) string {
		user, secret := c.user, c.token
		if c.jobToken != "" {
			user, secret = "gitlab-ci-token", c.jobToken
		}
		return cloneURL(f.s, p.Path+".wiki", user, secret)
	}
	public, private := f.projects[0], f.projects[2]
	try := func(dir string, want bool, args ...string) {
		t.Helper()
		if out, err := gitRun(dir, args...); (err == nil) != want {
			t.Errorf("git %s: %v; want success %v\n%s", strings.Join(args[:1], " "), err, want, out)
		}
	}
	try(work, true, "clone", "-q", url(private, f.creds["developer"]), "dev")
	writeFile(t, work+"/dev/by-git.md", "pushed\n")
	try(work+"/dev", true, "add", ".")
	try(work+"/dev", true, "commit", "-q", "-m", "by git")
	try(work+"/dev", true, "push", "-q", "origin", "HEAD")
	try(work, true, "clone", "-q", url(private, f.creds["reporter"]), "rep")
	writeFile(t, work+"/rep/by-reporter.md", "refused\n")
	try(work+"/rep", true, "add", ".")
	try(work+"/rep", true, "commit", "-q", "-m", "by reporter")
	try(work+"/rep", false, "push", "-q", "origin", "HEAD")
	try(work, false, "clone", "-q", url(private, f.creds["guest"]), "guest")
	try(work, true, "clone", "-q", url(public, f.creds["job-refused"]), "refused")
}
