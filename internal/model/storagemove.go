package model

import (
	"time"
	"unicode/utf8"
)

// ContainerKind names a kind of repository container a storage move
// moves: a project (its repository and wiki), a group (its wiki) or a
// snippet (its repository). The name is stored in every move row and is
// the key of the container in GitLab's move record.
type ContainerKind string

// The container kinds.
const (
	ContainerProject ContainerKind = "project"
	ContainerGroup   ContainerKind = "group"
	ContainerSnippet ContainerKind = "snippet"
)

// MoveState is where a repository storage move is. The integers are
// GitLab's stored values; String is the human name the API shows.
type MoveState int

// The move states (GitLab's integers).
const (
	MoveInitial       MoveState = 1
	MoveScheduled     MoveState = 2
	MoveStarted       MoveState = 3
	MoveFinished      MoveState = 4
	MoveFailed        MoveState = 5
	MoveReplicated    MoveState = 6
	MoveCleanupFailed MoveState = 7
)

var moveStateNames = map[MoveState]string{
	MoveInitial: "initial", MoveScheduled: "scheduled", MoveStarted: "started", MoveFinished: "finished",
	MoveFailed: "failed", MoveReplicated: "replicated", MoveCleanupFailed: "cleanup failed",
}

// String is the human state name ("cleanup failed", with a space).
func (s MoveState) String() string {
	if n, ok := moveStateNames[s]; ok {
		return n
	}
	return "unknown"
}

// MoveEvent is what moves a storage move from one state to another.
type MoveEvent string

// The move events (GitLab's state machine events).
const (
	MoveSchedule          MoveEvent = "schedule"
	MoveStart             MoveEvent = "start"
	MoveFinishReplication MoveEvent = "finish_replication"
	MoveFinishCleanup     MoveEvent = "finish_cleanup"
	MoveFail              MoveEvent = "fail"
)

// moveTransitions is the storage move state machine (GitLab's
// RepositoryStorageMovable): for each event, the states it leaves and
// the state it enters. Anything not listed is refused.
//
//	schedule            initial → scheduled              the container is made read-only (same transaction)
//	start               scheduled → started              a worker copies the repositories
//	finish_replication  started → replicated             the container is switched to the destination and made writable
//	finish_cleanup      replicated → finished            the source copies are removed
//	fail                initial|scheduled|started → failed   the container is made writable again, on its source
//	fail                replicated → cleanup failed      the move itself succeeded; the source copies remain
var moveTransitions = map[MoveEvent]map[MoveState]MoveState{
	MoveSchedule:          {MoveInitial: MoveScheduled},
	MoveStart:             {MoveScheduled: MoveStarted},
	MoveFinishReplication: {MoveStarted: MoveReplicated},
	MoveFinishCleanup:     {MoveReplicated: MoveFinished},
	MoveFail: {MoveInitial: MoveFailed, MoveScheduled: MoveFailed, MoveStarted: MoveFailed,
		MoveReplicated: MoveCleanupFailed},
}

// On is the state event e moves s to; ok is false when the table does
// not allow e in s.
func (s MoveState) On(e MoveEvent) (next MoveState, ok bool) {
	next, ok = moveTransitions[e][s]
	return next, ok
}

// Final reports whether no event moves s any more.
func (s MoveState) Final() bool {
	for _, from := range moveTransitions {
		if _, ok := from[s]; ok {
			return false
		}
	}
	return true
}

// Holding reports whether a move in state s holds its container
// read-only (scheduled or started: not yet switched, not yet failed).
func (s MoveState) Holding() bool { return s == MoveScheduled || s == MoveStarted }

// RepositoryStorageMove is one move of a container's repositories from
// one storage to another.
type RepositoryStorageMove struct {
	ID                     int64
	Kind                   ContainerKind
	ContainerID            int64
	State                  MoveState
	SourceStorageName      string
	DestinationStorageName string
	ErrorMessage           string // "" when none
	CreatedAt              time.Time
	UpdatedAt              time.Time
}

// MoveErrorLimit is how much of a failure's reason a move records
// (GitLab truncates error_message to 256 characters).
const MoveErrorLimit = 256

// MoveErrorMessage is the recorded form of a failure's reason: at most
// MoveErrorLimit characters.
func MoveErrorMessage(reason string) string {
	if utf8.RuneCountInString(reason) <= MoveErrorLimit {
		return reason
	}
	r := []rune(reason)
	return string(r[:MoveErrorLimit])
}
