package model

import (
	"errors"
	"time"
)

// TaskState is where a background task is in its life.
type TaskState string

// Task states. The moves between them are declared in taskMoves.
const (
	TaskPending TaskState = "pending" // waiting for its run-at time and a worker
	TaskRunning TaskState = "running" // claimed by a worker until its lease ends
	TaskDone    TaskState = "done"    // finished; final
	TaskFailed  TaskState = "failed"  // attempts ran out or the error was permanent; final
)

// ErrTransition reports a state change that the declared transition table
// does not allow. Stores refuse such a change before touching the database.
var ErrTransition = errors.New("state transition not allowed")

// taskMoves is the task state machine: every allowed move, and why it
// happens. Anything not listed is refused.
var taskMoves = map[TaskState]map[TaskState]string{
	TaskPending: {
		TaskRunning: "a worker claims a due task",
		TaskDone:    "its enqueuer did the work itself (the task was its safety net against a crash before it could)",
	},
	TaskRunning: {
		TaskDone:    "the attempt succeeded",
		TaskFailed:  "the last attempt failed, or the error was permanent",
		TaskPending: "the attempt failed and the task is retried later",
		TaskRunning: "another worker takes over a task whose lease ran out (its worker died)",
	},
}

// CanMoveTo reports whether the table allows a task in state s to move to
// next.
func (s TaskState) CanMoveTo(next TaskState) bool {
	_, ok := taskMoves[s][next]
	return ok
}

// MaxTakeovers is how many takeovers of a task (its worker died while it
// ran) go uncounted: a crash is not the task's failure, but a task whose
// every attempt brings its process down must end too, so each takeover past
// this many counts as an attempt.
const MaxTakeovers = 10

// Final reports whether no move leaves s.
func (s TaskState) Final() bool { return len(taskMoves[s]) == 0 }

// Task is one unit of durable background work.
type Task struct {
	ID          int64
	Kind        string
	Payload     string // JSON
	DedupeKey   string // "": none; else one pending task per kind and key
	State       TaskState
	Attempts    int
	MaxAttempts int
	// Takeovers counts the claims of the task after its worker died (its
	// lease ran out); they are not attempts, up to MaxTakeovers.
	Takeovers  int
	RunAt      time.Time
	LeaseUntil *time.Time
	LockedBy   string
	LastError  string
	CreatedAt  time.Time
	UpdatedAt  time.Time
}
