package main

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// activeStatuses are the statuses of pipelines and jobs whose work is not
// done: after settling, none may be left in them.
var activeStatuses = []string{"created", "waiting_for_resource", "preparing", "pending", "running"}

// finalStatus reports whether a pipeline or job status is past the
// work (success, failed, canceled, skipped, or manual: waiting for a
// person, not for the server).
func finalStatus(s string) bool { return s != "" && !slices.Contains(activeStatuses, s) }

// maxCommitPages bounds the pages of a branch's commit list (100 a page).
const maxCommitPages = 2000

// checkParallel is how many items are checked at once.
const checkParallel = 4

// checker checks every acknowledged write through the API.
type checker struct {
	api *client
	l   *ledger
	v   *verdict
	// branches holds the commits reachable from each branch checked, or
	// why they could not be read.
	branches   map[branchRef]map[string]bool
	branchErrs map[branchRef]error

	mu sync.Mutex
	// statuses counts how the acknowledged pipelines and their jobs
	// ended.
	statuses map[string]int
}

// run checks everything in the ledger; it stops early when ctx ends.
func (c *checker) run(ctx context.Context) {
	c.l.mu.Lock()
	commits := slices.Clone(c.l.commits)
	values := slices.Clone(c.l.values)
	projects := slices.Clone(c.l.projects)
	forks := slices.Clone(c.l.forks)
	mrs := slices.Clone(c.l.mrs)
	pipelines := slices.Clone(c.l.pipelines)
	c.l.mu.Unlock()

	c.branches, c.branchErrs, c.statuses = map[branchRef]map[string]bool{}, map[branchRef]error{}, map[string]int{}
	need := map[branchRef]bool{}
	for _, r := range commits {
		need[branchRef{r.project, r.branch}] = true
	}
	for _, r := range mrs {
		need[branchRef{r.project, r.target}] = true
	}
	for b := range need {
		if ctx.Err() == nil {
			c.branches[b], c.branchErrs[b] = c.branchCommits(b.project, b.branch)
		}
	}

	var checks []func()
	for _, r := range commits {
		checks = append(checks, func() { c.commit(r) })
	}
	for _, r := range values {
		checks = append(checks, func() { c.value(r) })
	}
	for _, r := range projects {
		checks = append(checks, func() { c.project(r) })
	}
	for _, r := range forks {
		checks = append(checks, func() { c.fork(r) })
	}
	for _, r := range mrs {
		checks = append(checks, func() { c.mergeRequest(r) })
	}
	for _, r := range pipelines {
		checks = append(checks, func() { c.pipeline(r) })
	}
	work := make(chan func())
	var wg sync.WaitGroup
	for range checkParallel {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for f := range work {
				if ctx.Err() == nil {
					f()
				}
			}
		}()
	}
	for _, f := range checks {
		work <- f
	}
	close(work)
	wg.Wait()
}

// branchCommits returns the commits reachable from branch.
func (c *checker) branchCommits(project int64, branch string) (map[string]bool, error) {
	set := map[string]bool{}
	for page := 1; page > 0; {
		if page > maxCommitPages {
			return nil, fmt.Errorf("branch %s of project %d has more than %d pages of commits", branch, project, maxCommitPages)
		}
		var list []struct {
			ID string `json:"id"`
		}
		path := fmt.Sprintf("%s/repository/commits?ref_name=%s&per_page=100&page=%d", projectPath(project), url.QueryEscape(branch), page)
		st, h, err := c.api.read(path, &list)
		if err != nil {
			return nil, err
		}
		if st == http.StatusNotFound {
			return set, nil // no such branch: nothing is on it
		}
		if st != http.StatusOK {
			return nil, fmt.Errorf("GET %s: status %d", path, st)
		}
		for _, e := range list {
			set[e.ID] = true
		}
		page, _ = strconv.Atoi(h.Get("X-Next-Page"))
	}
	return set, nil
}

// onBranch reports whether sha is reachable from branch of project.
func (c *checker) onBranch(project int64, branch, sha string) (bool, error) {
	b := branchRef{project, branch}
	if err := c.branchErrs[b]; err != nil {
		return false, err
	}
	return c.branches[b][sha], nil
}

// fileAt reads a file of a repository at ref; found is false on a 404.
func (c *checker) fileAt(project int64, path, ref string) (content string, found bool, err error) {
	st, body, err := c.api.raw(filePath(project, path) + "/raw?ref=" + url.QueryEscape(ref))
	switch {
	case err != nil:
		return "", false, err
	case st == http.StatusNotFound:
		return "", false, nil
	case st != http.StatusOK:
		return "", false, fmt.Errorf("read %s at %s: status %d", path, ref, st)
	}
	return body, true, nil
}

func (c *checker) commit(r commitRec) {
	key := r.kind + " " + r.sha
	on, err := c.onBranch(r.project, r.branch, r.sha)
	if err != nil {
		c.v.add(lost, key, "%v: cannot be read: %v", r, err)
		return
	}
	if !on {
		c.v.add(lost, key, "%v: not on its branch", r)
		return
	}
	got, found, err := c.fileAt(r.project, r.path, r.branch)
	switch {
	case err != nil:
		c.v.add(lost, key, "%v: cannot be read: %v", r, err)
	case !found:
		c.v.add(corrupt, key, "%v: the commit is on its branch but %s is not at its tip", r, r.path)
	case got != r.content:
		c.v.add(corrupt, key, "%v: %s holds %q, want %q", r, r.path, got, r.content)
	}
}

func (c *checker) value(r *valueRec) {
	key := fmt.Sprintf("%s %d %s", r.kind, r.project, r.key)
	var got string
	var found bool
	var err error
	switch r.kind {
	case kindWiki:
		var page struct {
			Content string `json:"content"`
		}
		var st int
		st, _, err = c.api.read(projectPath(r.project)+"/wikis/"+url.PathEscape(r.key), &page)
		if err == nil && st != http.StatusOK && st != http.StatusNotFound {
			err = fmt.Errorf("status %d", st)
		}
		got, found = page.Content, st == http.StatusOK
	default:
		got, found, err = c.fileAt(r.project, r.key, "main")
	}
	switch {
	case err != nil:
		c.v.add(lost, key, "%v: cannot be read: %v", r, err)
	case !found:
		c.v.add(lost, key, "%v: not found", r)
	case !r.accepts(got):
		c.v.add(corrupt, key, "%v: holds %q, want %q", r, got, r.want)
	}
}

func (c *checker) project(r projectRec) {
	key := fmt.Sprintf("project %d", r.id)
	var p struct {
		Path          string `json:"path"`
		DefaultBranch string `json:"default_branch"`
	}
	if !c.readProject(key, r, r.id, &p) {
		return
	}
	switch {
	case p.Path != r.path:
		c.v.add(corrupt, key, "%v: its path is %q", r, p.Path)
		return
	}
	_, found, err := c.fileAt(r.id, "README.md", p.DefaultBranch)
	switch {
	case err != nil:
		c.v.add(lost, key, "%v: README.md cannot be read: %v", r, err)
	case !found:
		c.v.add(corrupt, key, "%v: its repository has no README.md on %q", r, p.DefaultBranch)
	}
}

// readProject reads an acknowledged project into p; false (the write
// counted as lost) when it cannot be read.
func (c *checker) readProject(key string, r any, id int64, p any) bool {
	st, _, err := c.api.read(projectPath(id), p)
	switch {
	case err != nil:
		c.v.add(lost, key, "%v: cannot be read: %v", r, err)
	case st == http.StatusNotFound:
		c.v.add(lost, key, "%v: not found", r)
	case st != http.StatusOK:
		c.v.add(lost, key, "%v: status %d", r, st)
	default:
		return true
	}
	return false
}

func (c *checker) fork(r forkRec) {
	key := fmt.Sprintf("fork %d", r.id)
	var p struct {
		Path         string  `json:"path"`
		ImportStatus string  `json:"import_status"`
		ImportError  *string `json:"import_error"`
		ForkedFrom   *struct {
			ID int64 `json:"id"`
		} `json:"forked_from_project"`
	}
	if !c.readProject(key, r, r.id, &p) {
		return
	}
	switch {
	case p.ForkedFrom == nil || p.ForkedFrom.ID != r.source:
		c.v.add(corrupt, key, "%v: forked_from_project is not %d", r, r.source)
		return
	}
	switch p.ImportStatus {
	case "finished":
	case "failed":
		// The only failure a fork reports by design is a source that no
		// longer exists; the tool deletes nothing, so a failed copy is
		// a fork lost.
		msg := ""
		if p.ImportError != nil {
			msg = *p.ImportError
		}
		c.v.add(lost, key, "%v: its copy failed: %s", r, msg)
		return
	case "scheduled", "started":
		c.v.add(stuck, key, "%v: import_status still %s", r, p.ImportStatus)
		return
	default:
		c.v.add(corrupt, key, "%v: import_status %q", r, p.ImportStatus)
		return
	}
	if r.sourceSHA == "" {
		return
	}
	st, _, err := c.api.read(projectPath(r.id)+"/repository/commits/"+r.sourceSHA, nil)
	switch {
	case err != nil:
		c.v.add(lost, key, "%v: cannot be read: %v", r, err)
	case st != http.StatusOK:
		c.v.add(corrupt, key, "%v: finished without commit %s its source had before the fork (status %d)", r, short(r.sourceSHA), st)
	}
}

func (c *checker) mergeRequest(r *mrRec) {
	key := fmt.Sprintf("merge_request %d!%d", r.project, r.iid)
	var m struct {
		State          string  `json:"state"`
		MergeCommitSHA *string `json:"merge_commit_sha"`
	}
	st, _, err := c.api.read(fmt.Sprintf("%s/merge_requests/%d", projectPath(r.project), r.iid), &m)
	switch {
	case err != nil:
		c.v.add(lost, key, "%v: cannot be read: %v", r, err)
		return
	case st == http.StatusNotFound:
		c.v.add(lost, key, "%v: not found", r)
		return
	case st != http.StatusOK:
		c.v.add(lost, key, "%v: status %d", r, st)
		return
	}
	sha := ""
	if m.MergeCommitSHA != nil {
		sha = *m.MergeCommitSHA
	}
	switch {
	case r.merged && m.State != "merged":
		c.v.add(lost, key, "%v: merge acknowledged (%s) but the state is %s", r, short(r.mergeSHA), m.State)
		return
	case m.State == "locked":
		c.v.add(stuck, key, "%v: still locked by a merge the crash cut short", r)
		return
	case r.merged && sha != r.mergeSHA:
		c.v.add(corrupt, key, "%v: merge_commit_sha %s, acknowledged %s", r, short(sha), short(r.mergeSHA))
		return
	case !r.merged && !r.mergeInDoubt && m.State != "opened":
		c.v.add(corrupt, key, "%v: state %s though no merge was acknowledged or in doubt", r, m.State)
		return
	case m.State != "merged":
		return // open: its merge was refused, or in doubt and not done
	}
	on, err := c.onBranch(r.project, r.target, sha)
	switch {
	case err != nil:
		c.v.add(lost, key, "%v: %s cannot be read: %v", r, r.target, err)
		return
	case !on:
		what := lost
		if !r.merged {
			what = corrupt // merged, says the merge request, yet not on the branch
		}
		c.v.add(what, key, "%v: merged, but merge commit %s is not on %s", r, short(sha), r.target)
		return
	}
	got, found, err := c.fileAt(r.project, r.path, r.target)
	switch {
	case err != nil:
		c.v.add(lost, key, "%v: cannot be read: %v", r, err)
	case !found || got != r.content:
		c.v.add(corrupt, key, "%v: merged, but %s on %s holds %q, want %q", r, r.path, r.target, got, r.content)
	}
}

func (c *checker) pipeline(r pipelineRec) {
	key := fmt.Sprintf("pipeline %d", r.id)
	var p struct {
		Status string `json:"status"`
	}
	base := fmt.Sprintf("%s/pipelines/%d", projectPath(r.project), r.id)
	st, _, err := c.api.read(base, &p)
	switch {
	case err != nil:
		c.v.add(lost, key, "%v: cannot be read: %v", r, err)
		return
	case st == http.StatusNotFound:
		c.v.add(lost, key, "%v: not found", r)
		return
	case st != http.StatusOK:
		c.v.add(lost, key, "%v: status %d", r, st)
		return
	case !finalStatus(p.Status):
		c.v.add(stuck, key, "%v: still %s", r, p.Status)
	}
	c.count("pipeline " + p.Status)
	var jobs []struct {
		ID            int64  `json:"id"`
		Name          string `json:"name"`
		Status        string `json:"status"`
		FailureReason string `json:"failure_reason"`
	}
	st, _, err = c.api.read(base+"/jobs?per_page=100", &jobs)
	if err != nil || st != http.StatusOK {
		c.v.add(lost, key, "%v: its jobs cannot be read: status %d, %v", r, st, err)
		return
	}
	for _, j := range jobs {
		if j.FailureReason != "" {
			c.count(fmt.Sprintf("job %s (%s)", j.Status, j.FailureReason))
		} else {
			c.count("job " + j.Status)
		}
		if !finalStatus(j.Status) {
			c.v.add(stuck, fmt.Sprintf("job %d", j.ID), "job %d %q of %v: still %s", j.ID, j.Name, r, j.Status)
		}
	}
}

// count counts one pipeline or job outcome.
func (c *checker) count(outcome string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.statuses[outcome]++
}

// pipelineStatuses says how the acknowledged pipelines and their jobs
// ended ("job failed (stuck_or_timeout_failure) 2, job success 40,
// pipeline failed 2, pipeline success 40").
func (c *checker) pipelineStatuses() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	names := make([]string, 0, len(c.statuses))
	for s := range c.statuses {
		names = append(names, s)
	}
	slices.Sort(names)
	parts := make([]string, len(names))
	for i, s := range names {
		parts[i] = fmt.Sprintf("%s %d", s, c.statuses[s])
	}
	return strings.Join(parts, ", ")
}
