package model

import "testing"

func TestTaskState_CanMoveTo(t *testing.T) {
	states := []TaskState{TaskPending, TaskRunning, TaskDone, TaskFailed, "bogus"}
	allowed := map[[2]TaskState]bool{
		{TaskPending, TaskRunning}: true, // claim
		{TaskPending, TaskDone}:    true, // done by its enqueuer
		{TaskRunning, TaskDone}:    true, // success
		{TaskRunning, TaskFailed}:  true, // last attempt failed
		{TaskRunning, TaskPending}: true, // retry later
		{TaskRunning, TaskRunning}: true, // lease takeover
	}
	for _, from := range states {
		for _, to := range states {
			want := allowed[[2]TaskState{from, to}]
			if got := from.CanMoveTo(to); got != want {
				t.Errorf("%q.CanMoveTo(%q) = %v; want %v", from, to, got, want)
			}
		}
	}
}

func TestTaskState_Final(t *testing.T) {
	for _, c := range []struct {
		s    TaskState
		want bool
	}{
		{TaskPending, false},
		{TaskRunning, false},
		{TaskDone, true},
		{TaskFailed, true},
	} {
		if got := c.s.Final(); got != c.want {
			t.Errorf("%q.Final() = %v; want %v", c.s, got, c.want)
		}
	}
}
