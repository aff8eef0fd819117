package model

import (
	"strings"
	"testing"
)

// Every (state, event) pair: the table of GitLab's
// RepositoryStorageMovable state machine, and nothing else.
func TestMoveState_transitions(t *testing.T) {
	states := []MoveState{MoveInitial, MoveScheduled, MoveStarted, MoveReplicated, MoveFinished, MoveFailed, MoveCleanupFailed}
	events := []MoveEvent{MoveSchedule, MoveStart, MoveFinishReplication, MoveFinishCleanup, MoveFail}
	want := map[MoveState]map[MoveEvent]MoveState{
		MoveInitial:    {MoveSchedule: MoveScheduled, MoveFail: MoveFailed},
		MoveScheduled:  {MoveStart: MoveStarted, MoveFail: MoveFailed},
		MoveStarted:    {MoveFinishReplication: MoveReplicated, MoveFail: MoveFailed},
		MoveReplicated: {MoveFinishCleanup: MoveFinished, MoveFail: MoveCleanupFailed},
	}
	for _, s := range states {
		for _, e := range events {
			next, ok := s.On(e)
			exp, allowed := want[s][e]
			if ok != allowed || next != exp {
				t.Errorf("%s on %s: %s, %v; want %s, %v", s, e, next, ok, exp, allowed)
			}
		}
		if final := len(want[s]) == 0; s.Final() != final {
			t.Errorf("%s final %v; want %v", s, s.Final(), final)
		}
	}
	for s, name := range map[MoveState]string{MoveInitial: "initial", MoveScheduled: "scheduled", MoveStarted: "started",
		MoveFinished: "finished", MoveFailed: "failed", MoveReplicated: "replicated", MoveCleanupFailed: "cleanup failed"} {
		if s.String() != name {
			t.Errorf("%d is %q; want %q", int(s), s.String(), name)
		}
	}
	if !MoveScheduled.Holding() || !MoveStarted.Holding() || MoveReplicated.Holding() || MoveFailed.Holding() {
		t.Error("Holding: scheduled and started only")
	}
}

func TestMoveErrorMessage(t *testing.T) {
	if got := MoveErrorMessage("short"); got != "short" {
		t.Errorf("short: %q", got)
	}
	long := strings.Repeat("é", 300)
	if got := MoveErrorMessage(long); got != strings.Repeat("é", 256) {
		t.Errorf("long: %d runes", len([]rune(got)))
	}
}
