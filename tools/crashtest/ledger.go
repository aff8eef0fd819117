package main

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
)

// The kinds of writes, as the ledger counts them.
const (
	kindCommit   = "commit"        // POST /projects/:id/repository/commits
	kindFile     = "file"          // POST and PUT /projects/:id/repository/files/:path
	kindProject  = "project"       // POST /projects
	kindFork     = "fork"          // POST /projects/:id/fork
	kindPush     = "push"          // git push over HTTP
	kindMR       = "merge_request" // POST /projects/:id/merge_requests
	kindMerge    = "merge"         // PUT /projects/:id/merge_requests/:iid/merge
	kindWiki     = "wiki"          // POST and PUT /projects/:id/wikis
	kindPipeline = "pipeline"      // POST /projects/:id/pipeline
)

// kinds lists every kind in the order progress is printed.
var kinds = []string{kindCommit, kindFile, kindProject, kindFork, kindPush, kindMR, kindMerge, kindWiki, kindPipeline}

// outcome is what a write's answer proves.
type outcome int

const (
	// acked: a 2xx answer. The write must survive every crash after it.
	acked outcome = iota
	// refused: a 4xx answer. The server said no; nothing changed.
	refused
	// failed: a 5xx answer. The server erred, perhaps after the change
	// landed: it may or may not be there.
	failed
	// unanswered: no answer (the connection broke, the server was down
	// or the call timed out). It may or may not be there.
	unanswered
)

// classify turns an HTTP answer (or the error that came instead) into an
// outcome.
func classify(status int, err error) outcome {
	switch {
	case err != nil:
		return unanswered
	case status >= 200 && status < 300:
		return acked
	case status >= 500:
		return failed
	default:
		return refused
	}
}

// inDoubt reports whether a write with this outcome may have landed
// without the writer knowing.
func (o outcome) inDoubt() bool { return o == failed || o == unanswered }

// commitRec is an acknowledged commit: sha must be reachable from branch
// of project, and path must hold content at the branch's tip (every
// commit writes a file of its own that nothing changes later).
type commitRec struct {
	kind          string // kindCommit, kindPush
	project       int64
	branch, sha   string
	path, content string
}

func (r commitRec) String() string {
	return fmt.Sprintf("%s %s on project %d branch %s (%s)", r.kind, short(r.sha), r.project, r.branch, r.path)
}

// valueRec is a value written once and then updated: a file of the files
// API (key: its path) or a wiki page (key: its slug). It must read back as
// the last acknowledged content, or as a content written after it whose
// answer never came: a writer stops writing a value after a write in
// doubt, so nothing acknowledged can follow one.
type valueRec struct {
	kind    string // kindFile, kindWiki
	project int64
	key     string
	want    string   // the last acknowledged content
	maybe   []string // contents written after want, in doubt
	writes  int      // acknowledged writes of this value
}

// accepts reports whether content is a value the record allows.
func (v *valueRec) accepts(content string) bool {
	return content == v.want || slices.Contains(v.maybe, content)
}

func (v *valueRec) String() string {
	return fmt.Sprintf("%s %q of project %d (%d acknowledged writes)", v.kind, v.key, v.project, v.writes)
}

// projectRec is an acknowledged project: it must exist with its path and
// the README its creation committed.
type projectRec struct {
	id   int64
	path string
}

func (r projectRec) String() string { return fmt.Sprintf("project %d %q", r.id, r.path) }

// forkRec is an acknowledged fork of source: it must exist, finish its
// copy (import_status finished) and hold sourceSHA, a commit the source
// had acknowledged before the fork was asked for.
type forkRec struct {
	id, source int64
	path       string
	sourceSHA  string
}

func (r forkRec) String() string {
	return fmt.Sprintf("fork %d %q of project %d", r.id, r.path, r.source)
}

// mrRec is an acknowledged merge request from branch into the target
// branch. A merged one must be merged with mergeSHA on the target branch
// and the branch's file there; one whose merge is in doubt must be either
// merged or open again; one never merged must be open.
type mrRec struct {
	project       int64
	iid           int64
	branch        string
	target        string
	path, content string // the file the branch's commit wrote
	merged        bool   // the merge was acknowledged
	mergeInDoubt  bool
	mergeSHA      string
}

func (r *mrRec) String() string {
	return fmt.Sprintf("merge request !%d of project %d (%s into %s)", r.iid, r.project, r.branch, r.target)
}

// pipelineRec is an acknowledged pipeline: it must exist and reach a final
// status.
type pipelineRec struct {
	project, id int64
}

func (r pipelineRec) String() string {
	return fmt.Sprintf("pipeline %d of project %d", r.id, r.project)
}

// kindStats counts the writes of one kind by outcome.
type kindStats struct {
	acked, refused, failed, unanswered int
	// refusals keeps a few distinct answers of refused and failed
	// writes, to show what the server said.
	refusals []string
}

// ledger records every write by outcome and keeps what the acknowledged
// ones promise. It is safe for concurrent writers.
type ledger struct {
	mu        sync.Mutex
	stats     map[string]*kindStats
	tips      map[branchRef]string // the last acknowledged commit of each branch
	commits   []commitRec
	values    []*valueRec
	projects  []projectRec
	forks     []forkRec
	mrs       []*mrRec
	pipelines []pipelineRec
}

func newLedger() *ledger {
	return &ledger{stats: map[string]*kindStats{}, tips: map[branchRef]string{}}
}

// count records one write of kind with outcome o; why is the answer of a
// refused or failed one.
func (l *ledger) count(kind string, o outcome, why string) {
	s := l.stats[kind]
	if s == nil {
		s = &kindStats{}
		l.stats[kind] = s
	}
	switch o {
	case acked:
		s.acked++
	case refused:
		s.refused++
	case failed:
		s.failed++
	case unanswered:
		s.unanswered++
	}
	if (o == refused || o == failed) && why != "" && len(s.refusals) < 5 && !slices.Contains(s.refusals, why) {
		s.refusals = append(s.refusals, why)
	}
}

// commit records a commit write; an acknowledged one is kept.
func (l *ledger) commit(o outcome, why string, r commitRec) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.count(r.kind, o, why)
	if o == acked {
		l.commits = append(l.commits, r)
		l.tips[branchRef{r.project, r.branch}] = r.sha
	}
}

// setTip records a commit known to be on branch (a project's first
// commit, read after its creation).
func (l *ledger) setTip(project int64, branch, sha string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.tips[branchRef{project, branch}] = sha
}

// tip returns the last acknowledged commit of branch ("" when none).
func (l *ledger) tip(project int64, branch string) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.tips[branchRef{project, branch}]
}

// branchRef names a branch of a project.
type branchRef struct {
	project int64
	branch  string
}

// create records the first write of a value; it returns the record of an
// acknowledged one (nil otherwise), which update takes.
func (l *ledger) create(kind string, o outcome, why string, project int64, key, content string) *valueRec {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.count(kind, o, why)
	if o != acked {
		return nil
	}
	v := &valueRec{kind: kind, project: project, key: key, want: content, writes: 1}
	l.values = append(l.values, v)
	return v
}

// update records a later write of v with content; it reports whether the
// writer may write v again (not after a write in doubt).
func (l *ledger) update(v *valueRec, o outcome, why, content string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.count(v.kind, o, why)
	switch {
	case o == acked:
		v.want, v.maybe = content, nil
		v.writes++
	case o.inDoubt():
		v.maybe = append(v.maybe, content)
		return false
	}
	return true
}

// project records a project creation.
func (l *ledger) project(o outcome, why string, r projectRec) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.count(kindProject, o, why)
	if o == acked {
		l.projects = append(l.projects, r)
	}
}

// fork records a fork.
func (l *ledger) fork(o outcome, why string, r forkRec) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.count(kindFork, o, why)
	if o == acked {
		l.forks = append(l.forks, r)
	}
}

// mergeRequest records a merge request's creation; it returns the
// record of an acknowledged one (nil otherwise), which merge takes.
func (l *ledger) mergeRequest(o outcome, why string, r mrRec) *mrRec {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.count(kindMR, o, why)
	if o != acked {
		return nil
	}
	p := &r
	l.mrs = append(l.mrs, p)
	return p
}

// merge records a merge of r; sha is the merge commit of an
// acknowledged one.
func (l *ledger) merge(r *mrRec, o outcome, why, sha string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.count(kindMerge, o, why)
	switch {
	case o == acked:
		r.merged, r.mergeInDoubt, r.mergeSHA = true, false, sha
	case o.inDoubt():
		r.mergeInDoubt = true
	}
}

// pipeline records a pipeline's creation.
func (l *ledger) pipeline(o outcome, why string, r pipelineRec) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.count(kindPipeline, o, why)
	if o == acked {
		l.pipelines = append(l.pipelines, r)
	}
}

// acknowledged is the number of writes answered with a 2xx.
func (l *ledger) acknowledged() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, s := range l.stats {
		n += s.acked
	}
	return n
}

// summary is one line per kind: its writes by outcome.
func (l *ledger) summary() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, k := range kinds {
		s := l.stats[k]
		if s == nil {
			s = &kindStats{}
		}
		line := fmt.Sprintf("%-13s %6d acknowledged, %4d refused (4xx), %4d failed (5xx), %4d unanswered",
			k, s.acked, s.refused, s.failed, s.unanswered)
		if len(s.refusals) > 0 {
			line += "; answers: " + strings.Join(s.refusals, " | ")
		}
		out = append(out, line)
	}
	return out
}

// progress is a one-line count of acknowledged writes by kind.
func (l *ledger) progress() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var parts []string
	for _, k := range kinds {
		n := 0
		if s := l.stats[k]; s != nil {
			n = s.acked
		}
		parts = append(parts, fmt.Sprintf("%s %d", k, n))
	}
	return strings.Join(parts, ", ")
}

// items describes every acknowledged promise, for a run that cannot check
// them (the server never came back).
func (l *ledger) items() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, r := range l.commits {
		out = append(out, r.String())
	}
	for _, v := range l.values {
		out = append(out, v.String())
	}
	for _, r := range l.projects {
		out = append(out, r.String())
	}
	for _, r := range l.forks {
		out = append(out, r.String())
	}
	for _, r := range l.mrs {
		out = append(out, r.String())
	}
	for _, r := range l.pipelines {
		out = append(out, r.String())
	}
	sort.Strings(out)
	return out
}

// short is the first 12 characters of a commit id.
func short(sha string) string {
	if len(sha) > 12 {
		return sha[:12]
	}
	return sha
}
