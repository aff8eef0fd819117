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

// Process decides which created jobs of a pipeline start, wait or are
// skipped now (reference §3.3), given its latest jobs. Stages are taken in
// order and the jobs of a stage in the order of their needs, each decision
// seen by the jobs after it. A job starts as its when: says: scheduled
// (delayed), manual, or enqueued (pending, or waiting_for_resource with a
// resource group).
func Process(jobs []ProcJob) Processed {
	cur := make([]ProcJob, len(jobs))
	copy(cur, jobs)
	byName := map[string][]int{}
	for i, j := range cur {
		byName[j.Name] = append(byName[j.Name], i)
	}
	order := processingOrder(cur, byName)
	var out Processed
	for _, i := range order {
		j := &cur[i]
		if j.Status != StatusCreated {
			continue
		}
		var items []StatusItem
		if j.DAG {
			for _, n := range j.Needs {
				for _, k := range byName[n] {
					items = append(items, StatusItem{cur[k].Status, cur[k].AllowFailure})
				}
			}
		} else {
			for _, o := range cur {
				if o.Stage < j.Stage {
					items = append(items, StatusItem{o.Status, o.AllowFailure})
				}
			}
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
		j.Status = next
	}
	out.Stages = map[int]CIStatus{}
	byStage := map[int][]StatusItem{}
	all := make([]StatusItem, 0, len(cur))
	for _, j := range cur {
		it := StatusItem{j.Status, j.AllowFailure}
		byStage[j.Stage] = append(byStage[j.Stage], it)
		all = append(all, it)
	}
	for st, items := range byStage {
		out.Stages[st], _ = Composite(items, false)
	}
	if s, ok := Composite(all, false); ok {
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
