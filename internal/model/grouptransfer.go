package model

import "time"

// TransferState is where a group export or import is (the words of a
// project's import_status): scheduled, started, finished or failed.
type TransferState string

// The transfer states.
const (
	TransferScheduled TransferState = "scheduled"
	TransferStarted   TransferState = "started"
	TransferFinished  TransferState = "finished"
	TransferFailed    TransferState = "failed"
)

// TransferEvent moves an export or import from one state to another.
type TransferEvent string

// The transfer events.
const (
	TransferStart   TransferEvent = "start"
	TransferFinish  TransferEvent = "finish"
	TransferFail    TransferEvent = "fail"
	TransferRestart TransferEvent = "restart"
)

// transferTransitions is the export and import state machine:
//
//	start    scheduled|started → started    a worker takes it (again, after a crash: it resumes)
//	finish   started → finished             the archive is written, or the group imported
//	fail     scheduled|started → failed     the reason is recorded
//	restart  finished|failed → scheduled    a new export of the group replaces the last one
var transferTransitions = map[TransferEvent]map[TransferState]TransferState{
	TransferStart:   {TransferScheduled: TransferStarted, TransferStarted: TransferStarted},
	TransferFinish:  {TransferStarted: TransferFinished},
	TransferFail:    {TransferScheduled: TransferFailed, TransferStarted: TransferFailed},
	TransferRestart: {TransferFinished: TransferScheduled, TransferFailed: TransferScheduled},
}

// On is the state event e moves s to; ok is false when the table does
// not allow e in s.
func (s TransferState) On(e TransferEvent) (next TransferState, ok bool) {
	next, ok = transferTransitions[e][s]
	return next, ok
}

// Running reports whether an export or import in state s is not over.
func (s TransferState) Running() bool { return s == TransferScheduled || s == TransferStarted }

// GroupExport is a group's export: the one archive it has, or the one
// being written.
type GroupExport struct {
	GroupID      int64
	UserID       int64
	Generation   int64
	State        TransferState
	FileName     string // the archive's download name ("" until finished)
	FilePath     string // relative to the data directory ("" until finished)
	Size         int64
	ErrorMessage string
	CreatedAt    time.Time
	UpdatedAt    time.Time
	ExpiresAt    time.Time // zero until finished
}

// GroupImport is the import of an archive into a new group.
type GroupImport struct {
	ID           int64
	GroupID      int64
	UserID       int64
	State        TransferState
	Dir          string // the unpacked archive, relative to the data directory
	ErrorMessage string
	Progress     GroupImportProgress
	Version      int64
	CreatedAt    time.Time
	UpdatedAt    time.Time
}

// GroupImportProgress is how far an import has come, and what it
// brought: written with each group it imports.
type GroupImportProgress struct {
	// Groups maps the archive's group ids to the new groups' ids, for
	// the groups imported so far (the root first).
	Groups map[int64]int64 `json:"groups"`
	// Wikis are the archive group ids whose wiki is restored.
	Wikis []int64 `json:"wikis,omitempty"`
	// Imported counts the records created, by relation.
	Imported map[string]int `json:"imported"`
	// Skipped counts the records left out, by relation: relations Quarry
	// does not have (epics, iterations), members whose user does not
	// exist here, records that did not validate.
	Skipped map[string]int `json:"skipped"`
}
