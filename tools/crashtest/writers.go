package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// fixture is what the writers write into, made before the first kill.
type fixture struct {
	commits  int64    // API commits, on branches
	branches []string // of commits; main among them
	files    int64    // the files API, on main
	pushes   int64    // git pushes, a branch per writer
	mrs      int64    // merge requests into main
	wiki     int64    // wiki pages
	ci       int64    // pipelines: its .gitlab-ci.yml has one short job
	cloneURL string   // of pushes, with root's token as password
}

// ciConfig is the pipeline of the ci project: one job the built-in
// runner runs in a moment.
const ciConfig = "crashtest:\n  script:\n    - echo crashtest\n"

// gitTimeout bounds each git command of the push writers.
const gitTimeout = 60 * time.Second

// awaitTimeout bounds how long a fork or pipeline writer waits for what
// it made to finish before it makes the next one (it paces them: the
// background work keeps up with the writers instead of piling up).
const awaitTimeout = 30 * time.Second

// writers runs the writers of every kind and records their writes.
type writers struct {
	api    *client
	l      *ledger
	fx     fixture
	tmp    string   // the push writers' clones live here
	gitEnv []string // the environment of git commands
	seed   uint64
	stop   atomic.Bool
	wg     sync.WaitGroup
	logf   func(format string, args ...any)
}

// setup makes the fixture through the API (each project is an
// acknowledged write, checked at the end like the others).
func (ws *writers) setup(n int) error {
	mk := func(name string) (int64, error) {
		var p struct {
			ID int64 `json:"id"`
		}
		_, o, why := ws.api.write(http.MethodPost, "/projects", map[string]any{"name": name, "path": name, "initialize_with_readme": true}, &p)
		ws.l.project(o, why, projectRec{id: p.ID, path: name})
		if o != acked {
			return 0, fmt.Errorf("create project %s: %s", name, why)
		}
		var b struct {
			Commit struct {
				ID string `json:"id"`
			} `json:"commit"`
		}
		if st, _, err := ws.api.read(projectPath(p.ID)+"/repository/branches/main", &b); err != nil || st != http.StatusOK {
			return 0, fmt.Errorf("read main of %s: %d %v", name, st, err)
		}
		ws.l.setTip(p.ID, "main", b.Commit.ID)
		return p.ID, nil
	}
	var err error
	for _, p := range []struct {
		id   *int64
		name string
	}{{&ws.fx.commits, "api-commits"}, {&ws.fx.files, "api-files"}, {&ws.fx.pushes, "git-pushes"}, {&ws.fx.mrs, "api-merges"},
		{&ws.fx.wiki, "wiki-pages"}, {&ws.fx.ci, "pipelines-ci"}} {
		if *p.id, err = mk(p.name); err != nil {
			return err
		}
	}
	ws.fx.branches = []string{"main", "b1", "b2", "b3"}
	for _, b := range ws.fx.branches[1:] {
		r, err := ws.api.do(http.MethodPost, projectPath(ws.fx.commits)+"/repository/branches", map[string]any{"branch": b, "ref": "main"})
		if err != nil || r.status != http.StatusCreated {
			return fmt.Errorf("create branch %s: %s %v", b, r.why(), err)
		}
		ws.l.setTip(ws.fx.commits, b, ws.l.tip(ws.fx.commits, "main"))
	}
	_, o, why := ws.api.write(http.MethodPost, filePath(ws.fx.ci, ".gitlab-ci.yml"),
		map[string]any{"branch": "main", "content": ciConfig, "commit_message": "crashtest pipeline"}, nil)
	if ws.l.create(kindFile, o, why, ws.fx.ci, ".gitlab-ci.yml", ciConfig) == nil {
		return fmt.Errorf("write .gitlab-ci.yml: %s", why)
	}
	u, err := url.Parse(ws.api.base + "/root/git-pushes.git")
	if err != nil {
		return err
	}
	u.User = url.UserPassword("root", ws.api.token)
	ws.fx.cloneURL = u.String()
	for w := 1; w <= n; w++ {
		dir := ws.clone(w)
		if _, err := ws.git(dir, "clone", "-q", ws.fx.cloneURL, dir); err != nil {
			return err
		}
		if _, err := ws.git(dir, "checkout", "-q", "-b", pushBranch(w)); err != nil {
			return err
		}
	}
	return nil
}

// start runs n writers of every kind until halt.
func (ws *writers) start(n int) {
	run := func(kind string, w int, f func(w int, rnd *rand.Rand)) {
		ws.wg.Add(1)
		rnd := rand.New(rand.NewPCG(ws.seed, uint64(w)<<8|uint64(len(kind))))
		go func() {
			defer ws.wg.Done()
			f(w, rnd)
		}()
	}
	for w := 1; w <= n; w++ {
		run(kindCommit, w, ws.commitWriter)
		run(kindFile, w, ws.fileWriter)
		run(kindProject, w, ws.projectWriter)
		run(kindFork, w, ws.forkWriter)
		run(kindPush, w, ws.pushWriter)
		run(kindMR, w, ws.mergeRequestWriter)
		run(kindWiki, w, ws.wikiWriter)
		run(kindPipeline, w, ws.pipelineWriter)
	}
}

// halt stops the writers after their current write and waits for them.
func (ws *writers) halt() {
	ws.stop.Store(true)
	ws.wg.Wait()
}

func (ws *writers) stopped() bool { return ws.stop.Load() }

// downWait bounds how long a writer waits for the server to answer again
// after a write went unanswered.
const downWait = 30 * time.Second

// pause follows a write: after one that went unanswered the writer waits
// until the server is ready again (at most downWait), so the writes
// counted unanswered are those a kill cut, not knocks on a closed port.
func (ws *writers) pause(o outcome) {
	switch o {
	case unanswered:
		probe := &http.Client{Timeout: 2 * time.Second}
		for deadline := time.Now().Add(downWait); time.Now().Before(deadline) && !ws.stopped(); {
			time.Sleep(100 * time.Millisecond)
			resp, err := probe.Get(ws.api.base + "/-/readiness")
			if err == nil {
				resp.Body.Close()
				if resp.StatusCode == http.StatusOK {
					return
				}
			}
		}
	case failed:
		time.Sleep(100 * time.Millisecond)
	}
}

// content is a value no other write has.
func content(kind string, w, n int, rnd *rand.Rand) string {
	return fmt.Sprintf("%s w%d n%d %016x", kind, w, n, rnd.Uint64())
}

// commitWriter commits a new file through the API to one of the
// branches of the commits project, chosen at random: the writers race
// on each branch.
func (ws *writers) commitWriter(w int, rnd *rand.Rand) {
	for n := 1; !ws.stopped(); n++ {
		branch := ws.fx.branches[rnd.IntN(len(ws.fx.branches))]
		path := fmt.Sprintf("commits/w%d/%d.txt", w, n)
		text := content(kindCommit, w, n, rnd) + "\n"
		var c struct {
			ID string `json:"id"`
		}
		_, o, why := ws.api.write(http.MethodPost, projectPath(ws.fx.commits)+"/repository/commits", map[string]any{
			"branch": branch, "commit_message": fmt.Sprintf("crashtest commit w%d n%d", w, n),
			"actions": []map[string]string{{"action": "create", "file_path": path, "content": text}}}, &c)
		if o == acked && c.ID == "" {
			o, why = failed, "2xx without a commit id"
		}
		ws.l.commit(o, why, commitRec{kind: kindCommit, project: ws.fx.commits, branch: branch, sha: c.ID, path: path, content: text})
		ws.pause(o)
	}
}

// fileWriter creates a file through the files API and updates it twice.
func (ws *writers) fileWriter(w int, rnd *rand.Rand) {
	for n := 1; !ws.stopped(); n++ {
		path := fmt.Sprintf("files/w%d/%d.txt", w, n)
		text := content(kindFile, w, n, rnd) + " v1\n"
		_, o, why := ws.api.write(http.MethodPost, filePath(ws.fx.files, path), map[string]any{
			"branch": "main", "content": text, "commit_message": fmt.Sprintf("crashtest file w%d n%d", w, n)}, nil)
		v := ws.l.create(kindFile, o, why, ws.fx.files, path, text)
		ws.pause(o)
		for version := 2; v != nil && version <= 3 && !ws.stopped(); version++ {
			text := fmt.Sprintf("%s v%d\n", content(kindFile, w, n, rnd), version)
			_, o, why := ws.api.write(http.MethodPut, filePath(ws.fx.files, path), map[string]any{
				"branch": "main", "content": text, "commit_message": fmt.Sprintf("crashtest file w%d n%d v%d", w, n, version)}, nil)
			more := ws.l.update(v, o, why, text)
			ws.pause(o)
			if !more {
				break
			}
		}
	}
}

// projectWriter creates projects with a README (a database row and a
// repository with a commit).
func (ws *writers) projectWriter(w int, rnd *rand.Rand) {
	for n := 1; !ws.stopped(); n++ {
		path := fmt.Sprintf("p-w%d-%d", w, n)
		var p struct {
			ID int64 `json:"id"`
		}
		_, o, why := ws.api.write(http.MethodPost, "/projects", map[string]any{"name": path, "path": path, "initialize_with_readme": true}, &p)
		if o == acked && p.ID == 0 {
			o, why = failed, "2xx without a project id"
		}
		ws.l.project(o, why, projectRec{id: p.ID, path: path})
		ws.pause(o)
	}
}

// forkWriter forks the commits project (written to meanwhile) and waits
// for the copy, bounded, before the next fork.
func (ws *writers) forkWriter(w int, rnd *rand.Rand) {
	for n := 1; !ws.stopped(); n++ {
		sha := ws.l.tip(ws.fx.commits, "main")
		path := fmt.Sprintf("fork-w%d-%d", w, n)
		var p struct {
			ID int64 `json:"id"`
		}
		_, o, why := ws.api.write(http.MethodPost, projectPath(ws.fx.commits)+"/fork", map[string]any{"name": path, "path": path}, &p)
		if o == acked && p.ID == 0 {
			o, why = failed, "2xx without a project id"
		}
		ws.l.fork(o, why, forkRec{id: p.ID, source: ws.fx.commits, path: path, sourceSHA: sha})
		ws.pause(o)
		if o == acked {
			ws.await(projectPath(p.ID), func(body map[string]any) bool {
				s, _ := body["import_status"].(string)
				return s == "finished" || s == "failed"
			})
		}
	}
}

// pipelineWriter runs a pipeline of the ci project on main and waits for
// it, bounded, before the next.
func (ws *writers) pipelineWriter(w int, rnd *rand.Rand) {
	for !ws.stopped() {
		var p struct {
			ID int64 `json:"id"`
		}
		_, o, why := ws.api.write(http.MethodPost, projectPath(ws.fx.ci)+"/pipeline", map[string]any{"ref": "main"}, &p)
		if o == acked && p.ID == 0 {
			o, why = failed, "2xx without a pipeline id"
		}
		ws.l.pipeline(o, why, pipelineRec{project: ws.fx.ci, id: p.ID})
		ws.pause(o)
		if o == acked {
			ws.await(fmt.Sprintf("%s/pipelines/%d", projectPath(ws.fx.ci), p.ID), func(body map[string]any) bool {
				s, _ := body["status"].(string)
				return finalStatus(s)
			})
		}
	}
}

// await polls path until done says so, the writers stop or
// awaitTimeout passes. Failed reads are ignored: the server may be down.
func (ws *writers) await(path string, done func(map[string]any) bool) {
	deadline := time.Now().Add(awaitTimeout)
	for !ws.stopped() && time.Now().Before(deadline) {
		time.Sleep(250 * time.Millisecond)
		var body map[string]any
		r, err := ws.api.do(http.MethodGet, path, nil)
		if err != nil || r.status != http.StatusOK || json.Unmarshal(r.body, &body) != nil {
			continue
		}
		if done(body) {
			return
		}
	}
}

// mergeRequestWriter commits a file to a new branch, opens a merge
// request of it into main and merges it: the writers' merges race on
// main.
func (ws *writers) mergeRequestWriter(w int, rnd *rand.Rand) {
	for n := 1; !ws.stopped(); n++ {
		branch := fmt.Sprintf("mr-w%d-%d", w, n)
		path := fmt.Sprintf("mrs/w%d/%d.txt", w, n)
		text := content(kindMR, w, n, rnd) + "\n"
		var c struct {
			ID string `json:"id"`
		}
		_, o, why := ws.api.write(http.MethodPost, projectPath(ws.fx.mrs)+"/repository/commits", map[string]any{
			"branch": branch, "start_branch": "main", "commit_message": fmt.Sprintf("crashtest merge request w%d n%d", w, n),
			"actions": []map[string]string{{"action": "create", "file_path": path, "content": text}}}, &c)
		if o == acked && c.ID == "" {
			o, why = failed, "2xx without a commit id"
		}
		ws.l.commit(o, why, commitRec{kind: kindCommit, project: ws.fx.mrs, branch: branch, sha: c.ID, path: path, content: text})
		ws.pause(o)
		if o != acked {
			continue
		}
		var m struct {
			IID int64 `json:"iid"`
		}
		_, o, why = ws.api.write(http.MethodPost, projectPath(ws.fx.mrs)+"/merge_requests", map[string]any{
			"source_branch": branch, "target_branch": "main", "title": fmt.Sprintf("crashtest w%d n%d", w, n)}, &m)
		if o == acked && m.IID == 0 {
			o, why = failed, "2xx without an iid"
		}
		r := ws.l.mergeRequest(o, why, mrRec{project: ws.fx.mrs, iid: m.IID, branch: branch, target: "main", path: path, content: text})
		ws.pause(o)
		if r == nil {
			continue
		}
		// A merge refused (the target moved too often) is tried again a
		// few times; one in doubt is not: the merge request may be
		// merged.
		for attempt := 0; attempt < 5 && !ws.stopped(); attempt++ {
			var res struct {
				MergeCommitSHA string `json:"merge_commit_sha"`
			}
			_, o, why := ws.api.write(http.MethodPut, fmt.Sprintf("%s/merge_requests/%d/merge", projectPath(ws.fx.mrs), m.IID), nil, &res)
			if o == acked && res.MergeCommitSHA == "" {
				o, why = failed, "2xx without a merge_commit_sha"
			}
			ws.l.merge(r, o, why, res.MergeCommitSHA)
			ws.pause(o)
			if o != refused {
				break
			}
			time.Sleep(300 * time.Millisecond)
		}
	}
}

// wikiWriter creates a wiki page and updates it twice.
func (ws *writers) wikiWriter(w int, rnd *rand.Rand) {
	for n := 1; !ws.stopped(); n++ {
		title := fmt.Sprintf("page w%d n%d", w, n)
		text := content(kindWiki, w, n, rnd) + " v1"
		var p struct {
			Slug string `json:"slug"`
		}
		_, o, why := ws.api.write(http.MethodPost, projectPath(ws.fx.wiki)+"/wikis", map[string]any{"title": title, "content": text}, &p)
		if o == acked && p.Slug == "" {
			o, why = failed, "2xx without a slug"
		}
		v := ws.l.create(kindWiki, o, why, ws.fx.wiki, p.Slug, text)
		ws.pause(o)
		for version := 2; v != nil && version <= 3 && !ws.stopped(); version++ {
			text := fmt.Sprintf("%s v%d", content(kindWiki, w, n, rnd), version)
			_, o, why := ws.api.write(http.MethodPut, projectPath(ws.fx.wiki)+"/wikis/"+url.PathEscape(p.Slug), map[string]any{"content": text}, nil)
			more := ws.l.update(v, o, why, text)
			ws.pause(o)
			if !more {
				break
			}
		}
	}
}

// pushWriter commits a new file in its clone and pushes it over HTTP to
// its own branch of the pushes project. A push that failed is not
// repeated: the next push carries its commit along.
func (ws *writers) pushWriter(w int, rnd *rand.Rand) {
	dir := ws.clone(w)
	for n := 1; !ws.stopped(); n++ {
		path := fmt.Sprintf("pushes/w%d/%d.txt", w, n)
		text := content(kindPush, w, n, rnd) + "\n"
		if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(path)), 0o750); err != nil {
			ws.logf("push writer %d: %v; it stops", w, err)
			return
		}
		if err := os.WriteFile(filepath.Join(dir, path), []byte(text), 0o600); err != nil {
			ws.logf("push writer %d: %v; it stops", w, err)
			return
		}
		if _, err := ws.git(dir, "add", "--", path); err != nil {
			ws.logf("push writer %d: %v; it stops", w, err)
			return
		}
		if _, err := ws.git(dir, "commit", "-q", "-m", fmt.Sprintf("crashtest push w%d n%d", w, n)); err != nil {
			ws.logf("push writer %d: %v; it stops", w, err)
			return
		}
		sha, err := ws.git(dir, "rev-parse", "HEAD")
		if err != nil {
			ws.logf("push writer %d: %v; it stops", w, err)
			return
		}
		o, why := acked, ""
		if _, err := ws.git(dir, "push", "-q", "origin", "HEAD:refs/heads/"+pushBranch(w)); err != nil {
			o, why = pushOutcome(err.Error()), lastLine(err.Error())
		}
		ws.l.commit(o, why, commitRec{kind: kindPush, project: ws.fx.pushes, branch: pushBranch(w), sha: sha, path: path, content: text})
		ws.pause(o)
	}
}

// pushOutcome classifies a failed git push by what git said: an HTTP
// 4xx or a rejected ref is a refusal, an HTTP 5xx a failure, anything
// else (the connection broke) no answer.
func pushOutcome(msg string) outcome {
	switch {
	case strings.Contains(msg, "The requested URL returned error: 5"):
		return failed
	case strings.Contains(msg, "The requested URL returned error: 4"), strings.Contains(msg, "[rejected]"),
		strings.Contains(msg, "[remote rejected]"):
		return refused
	}
	return unanswered
}

func pushBranch(w int) string { return "push-w" + strconv.Itoa(w) }

// clone is the folder of push writer w's clone.
func (ws *writers) clone(w int) string { return filepath.Join(ws.tmp, "clones", "w"+strconv.Itoa(w)) }

// git runs git in dir (bounded by gitTimeout) and returns its output
// without the final newline.
func (ws *writers) git(dir string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), gitTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "git", args...)
	if args[0] != "clone" {
		cmd.Dir = dir
	}
	cmd.Env = ws.gitEnv
	cmd.WaitDelay = 5 * time.Second
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			err = fmt.Errorf("timed out after %s", gitTimeout)
		}
		return "", fmt.Errorf("git %s: %w: %s", args[0], err, strings.TrimSpace(errb.String()))
	}
	return strings.TrimSpace(out.String()), nil
}

// gitEnv is the environment of the tool's git commands: no system or
// user configuration, no prompts, a fixed identity.
func gitEnv(home string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "GIT_") && !strings.HasPrefix(kv, "HOME=") {
			env = append(env, kv)
		}
	}
	return append(env, "HOME="+home, "GIT_CONFIG_NOSYSTEM=1", "GIT_TERMINAL_PROMPT=0",
		"GIT_AUTHOR_NAME=crashtest", "GIT_AUTHOR_EMAIL=crashtest@example.com",
		"GIT_COMMITTER_NAME=crashtest", "GIT_COMMITTER_EMAIL=crashtest@example.com")
}

// lastLine is the last non-empty line of s.
func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}
