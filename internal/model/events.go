package model

import "time"

// ZeroRef is the id a RefUpdate gives the missing side of a created or
// deleted ref, as git's hooks do.
const ZeroRef = "0000000000000000000000000000000000000000"

// RefUpdate is one ref a write moved: Old is ZeroRef for a created ref,
// New for a deleted one.
type RefUpdate struct {
	Ref string `json:"ref"` // full name: refs/heads/main, refs/tags/v1
	Old string `json:"old"`
	New string `json:"new"`
}

// Where a refs-changed event came from.
const (
	RefsSourcePush  = "push"  // git push over HTTP
	RefsSourceAPI   = "api"   // files, commits, branches, tags, changelog, a new project's README
	RefsSourceMerge = "merge" // a merge request merged
)

// RefsChanged says that a write moved refs of a project's repository: by
// whom, which refs from what to what, and how. Every write that moves a
// ref emits one; what follows a change (repository facts, housekeeping,
// pipelines, merge request heads) hangs on it.
type RefsChanged struct {
	ProjectID int64       `json:"project_id"`
	ActorID   int64       `json:"actor_id"` // 0: no user (a system write)
	Updates   []RefUpdate `json:"updates"`
	Source    string      `json:"source"`
	At        time.Time   `json:"at"`
	// PushOptions are the options a git push sent (git push -o ci.skip).
	PushOptions []string `json:"push_options,omitempty"`
}
