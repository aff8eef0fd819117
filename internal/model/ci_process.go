package model

import (
	"slices"
	"sort"
)

// When a job runs (the when: keyword).
const (
	WhenOnSuccess = "on_success"
	WhenOnFailure = "on_failure"
	WhenAlways    = "always"
	WhenManual    = "manual"
	WhenDelayed   = "delayed"
)

// StatusItem is one job as a composite status sees it.
type StatusItem struct {
	Status       CIStatus
	AllowFailure bool
}

// composite tokens besides the statuses themselves.
const (
	tokenWarnings CIStatus = "success_with_warnings"
	tokenIgnored  CIStatus = "ignored"
)

// Composite is the status of a group of jobs — a stage, a pipeline, or
// the jobs a DAG job needs (dag) — by GitLab's rules (reference §3.4).
// ok is false for no jobs (the caller decides; processing counts it as
// success).
func Composite(items []StatusItem, dag bool) (status CIStatus, ok bool) {
	if len(items) == 0 {
		return "", false
	}
	set := map[CIStatus]bool{}
	for _, it := range items {
		tok := it.Status
		switch {
		case it.AllowFailure && (tok == StatusFailed || tok == StatusCanceled):
			tok = tokenWarnings
		case it.AllowFailure && tok == StatusManual:
			tok = tokenIgnored
		}
		set[tok] = true
	}
	only := func(allowed ...CIStatus) bool {
		for s := range set {
			if !slices.Contains(allowed, s) {
				return false
			}
		}
		return true
	}
	w, ig := tokenWarnings, tokenIgnored
	switch {
	case dag && (set[StatusSkipped] || set[ig]):
		return StatusSkipped, true
	case only(StatusSkipped, ig):
		return StatusSkipped, true
	case only(StatusSuccess, StatusSkipped, w, ig):
		return StatusSuccess, true
	case only(StatusCreated, w, ig):
		return StatusCreated, true
	case only(StatusPreparing, w, ig):
		return StatusPreparing, true
	case only(StatusCanceled, StatusSuccess, StatusSkipped, w, ig):
		return StatusCanceled, true
	case only(StatusPending, StatusCreated, StatusSkipped, w, ig):
		return StatusPending, true
	case set[StatusRunning] || set[StatusPending]:
		return StatusRunning, true
	case set[StatusWaitingForResource]:
		return StatusWaitingForResource, true
	case set[StatusManual]:
		return StatusManual, true
	case set[StatusScheduled]:
		return StatusScheduled, true
	case set[StatusPreparing]:
		return StatusPreparing, true
	case set[StatusCreated]:
		return StatusRunning, true
	case set[StatusCanceling]:
		return StatusCanceling, true
	}
	return StatusFailed, true
}

// ProcJob is one latest (not retried) job of a pipeline as processing
// sees it.
type ProcJob struct {
	ID           int64
	Name         string
	Stage        int // the stage's position in the pipeline
	Status       CIStatus
	When         string
	AllowFailure bool
	// DAG: the job has needs: (possibly empty) and waits for those jobs
	// only, instead of every job of the earlier stages.
	DAG   bool
	Needs []string
	// ResourceGroup: enqueueing the job makes it wait for its group's
	// slot.
	ResourceGroup bool
	// Immediate: a person already started this manual or delayed job (a
	// retry or play); it is enqueued instead of waiting again.
	Immediate bool
}

// ProcMove is a job status change processing decided.
type ProcMove struct {
	ID       int64
	From, To CIStatus
}

// Processed is what processing decided for a pipeline.
type Processed struct {
	Moves []ProcMove
	// Stages are the stage statuses by stage position, and Status the
	// pipeline's, after the moves.
	Stages map[int]CIStatus
	Status CIStatus
}

// allowedPrev is which status of the jobs before a job lets it run, by
// when: and scheduling (reference §3.3); anything else skips it.
func allowedPrev(when string, dag bool, prev CIStatus) bool {
	switch when {
	case WhenOnFailure:
		return prev == StatusFailed
	case WhenAlways:
		return prev == StatusSuccess || prev == StatusFailed || prev == StatusSkipped
	}
	// on_success, manual, delayed
	return prev == StatusSuccess || (!dag && prev == StatusSkipped)
}

// StageStatuses counts a pipeline's latest jobs by stage position and
// status item: all a composite status needs to know of them.
type StageStatuses map[int]map[StatusItem]int

func (st StageStatuses) add(stage int, it StatusItem, n int) {
	m := st[stage]
	if m == nil {
		m = map[StatusItem]int{}
		st[stage] = m
	}
	if m[it] += n; m[it] <= 0 {
		delete(m, it)
	}
}

// items lists the distinct status items of the stages before stage
// (every stage when stage is -1).
func (st StageStatuses) items(before int) []StatusItem {
	seen := map[StatusItem]bool{}
	var out []StatusItem
	for s, m := range st {
		if before >= 0 && s >= before {
			continue
		}
		for it := range m {
			if !seen[it] {
				seen[it] = true
				out = append(out, it)
			}
		}
	}
	return out
}

// NamedStatus is one latest job a DAG job may need, by name.
type NamedStatus struct {
	ID int64
	StatusItem
}

// Process decides which created jobs of a pipeline start, wait or are
// skipped now (reference §3.3), given its latest jobs. It is
// ProcessCounts over the whole list.
func Process(jobs []ProcJob) Processed {
	stages := StageStatuses{}
	named := map[string][]NamedStatus{}
	var created []ProcJob
	for _, j := range jobs {
		stages.add(j.Stage, StatusItem{j.Status, j.AllowFailure}, 1)
		named[j.Name] = append(named[j.Name], NamedStatus{j.ID, StatusItem{j.Status, j.AllowFailure}})
		if j.Status == StatusCreated {
			created = append(created, j)
		}
	}
	return ProcessCounts(created, stages, named)
}

// ProcessCounts decides what the created jobs of a pipeline do now
// (reference §3.3) from what processing needs to know of the others: the
// status counts of every latest job by stage (created ones included), and
// the latest jobs named by the needs of the created DAG jobs. Stages are
// taken in order and the created jobs of a stage in the order of their
// needs, each decision seen by the jobs after it. A job starts as its
// when: says: scheduled (delayed), manual, or enqueued (pending, or
// waiting_for_resource with a resource group); a job whose predecessors
// do not allow it is skipped. The stage and pipeline statuses are the
// composites after the moves (a pipeline without jobs is skipped).
func ProcessCounts(created []ProcJob, stages StageStatuses, named map[string][]NamedStatus) Processed {
	cur := make([]ProcJob, len(created))
	copy(cur, created)
	byName := map[string][]int{}
	for i, j := range cur {
		byName[j.Name] = append(byName[j.Name], i)
	}
	var out Processed
	for _, i := range processingOrder(cur, byName) {
		j := &cur[i]
		var items []StatusItem
		if j.DAG {
			for _, n := range j.Needs {
				for _, ns := range named[n] {
					items = append(items, ns.StatusItem)
				}
			}
		} else {
			items = stages.items(j.Stage)
		}
		prev, ok := Composite(items, j.DAG)
		if !ok {
			prev = StatusSuccess
		}
		if !prev.Completed() {
			continue
		}
		next := StatusSkipped
		if allowedPrev(j.When, j.DAG, prev) {
			switch {
			case j.Immediate && j.ResourceGroup:
				next = StatusWaitingForResource
			case j.Immediate:
				next = StatusPending
			case j.When == WhenDelayed:
				next = StatusScheduled
			case j.When == WhenManual:
				next = StatusManual
			case j.ResourceGroup:
				next = StatusWaitingForResource
			default:
				next = StatusPending
			}
		}
		out.Moves = append(out.Moves, ProcMove{ID: j.ID, From: j.Status, To: next})
		stages.add(j.Stage, StatusItem{j.Status, j.AllowFailure}, -1)
		stages.add(j.Stage, StatusItem{next, j.AllowFailure}, 1)
		for k, ns := range named[j.Name] {
			if ns.ID == j.ID {
				named[j.Name][k].Status = next
			}
		}
		j.Status = next
	}
	out.Stages = map[int]CIStatus{}
	for st, m := range stages {
		own := make([]StatusItem, 0, len(m))
		for it := range m {
			own = append(own, it)
		}
		out.Stages[st], _ = Composite(own, false)
	}
	if s, ok := Composite(stages.items(-1), false); ok {
		out.Status = s
	} else {
		out.Status = StatusSkipped
	}
	return out
}

// processingOrder lists job indexes by stage, and within a stage so that
// a job comes after the jobs of its stage it needs (ties by id).
func processingOrder(jobs []ProcJob, byName map[string][]int) []int {
	idx := make([]int, len(jobs))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool {
		ja, jb := jobs[idx[a]], jobs[idx[b]]
		if ja.Stage != jb.Stage {
			return ja.Stage < jb.Stage
		}
		return ja.ID < jb.ID
	})
	out := make([]int, 0, len(jobs))
	placed := make([]bool, len(jobs))
	for start := 0; start < len(idx); {
		end := start
		for end < len(idx) && jobs[idx[end]].Stage == jobs[idx[start]].Stage {
			end++
		}
		stage := idx[start:end]
		// Kahn's order within the stage; a cycle (refused by the
		// configuration, but never trusted) falls back to id order.
		for remaining := len(stage); remaining > 0; {
			progressed := false
			for _, i := range stage {
				if placed[i] || !needsPlaced(jobs, byName, i, placed) {
					continue
				}
				placed[i] = true
				out = append(out, i)
				remaining--
				progressed = true
			}
			if !progressed {
				for _, i := range stage {
					if !placed[i] {
						placed[i] = true
						out = append(out, i)
						remaining--
					}
				}
			}
		}
		start = end
	}
	return out
}

// needsPlaced reports whether every job of i's stage that i needs is
// already in the order.
func needsPlaced(jobs []ProcJob, byName map[string][]int, i int, placed []bool) bool {
	for _, n := range jobs[i].Needs {
		for _, k := range byName[n] {
			if jobs[k].Stage == jobs[i].Stage && k != i && !placed[k] {
				return false
			}
		}
	}
	return true
}
