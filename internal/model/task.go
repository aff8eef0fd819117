package model

import "time"

// TaskState is where a background task is in its life.
type TaskState string

// Task states: pending → running → done, or back to pending for a retry,
// or failed once attempts run out.
const (
	TaskPending TaskState = "pending"
	TaskRunning TaskState = "running"
	TaskDone    TaskState = "done"
	TaskFailed  TaskState = "failed"
)

// Task is one unit of durable background work.
type Task struct {
	ID          int64
	Kind        string
	Payload     string // JSON
	DedupeKey   string // "": none; else one pending task per kind and key
	State       TaskState
	Attempts    int
	MaxAttempts int
	RunAt       time.Time
	LeaseUntil  *time.Time
	LockedBy    string
	LastError   string
	CreatedAt   time.Time
	UpdatedAt   time.Time
}
