package main

import (
	"strings"
	"testing"
)

func TestVerdict_line(t *testing.T) {
	v := newVerdict(1234)
	if got, want := v.line(), "crashtest: 1234 acknowledged, 0 lost, 0 corrupt, 0 stuck"; got != want {
		t.Errorf("line = %q; want %q", got, want)
	}
	if !v.ok() {
		t.Error("a verdict without findings is not ok")
	}
	v.add(stuck, "pipeline 9", "pipeline 9 of project 2: still running")
	v.add(lost, "commit abc", "commit abc on project 1 branch main: not on its branch")
	v.add(corrupt, "fsck x", "repository x: git fsck --full: exit status 1")
	v.add(lost, "commit abd", "commit abd on project 1 branch b1: not on its branch")
	if got, want := v.line(), "crashtest: 1234 acknowledged, 2 lost, 1 corrupt, 1 stuck"; got != want {
		t.Errorf("line = %q; want %q", got, want)
	}
	if v.ok() {
		t.Error("a verdict with findings is ok")
	}
}

func TestVerdict_oneFindingPerItem(t *testing.T) {
	v := newVerdict(5)
	v.add(stuck, "pipeline 9", "from the API")
	v.add(stuck, "pipeline 9", "from the database")
	if l, c, s := v.counts(); l != 0 || c != 0 || s != 1 {
		t.Errorf("counts = %d, %d, %d; want 0, 0, 1", l, c, s)
	}
}

func TestVerdict_writeEndsWithTheLine(t *testing.T) {
	v := newVerdict(10)
	v.add(stuck, "task 3", "task 3 (fork_project) pending")
	v.add(lost, "project 4", "project 4 \"p\": not found")
	v.add(corrupt, "wiki 1 a", "wiki \"a\": holds \"x\"")
	var b strings.Builder
	v.write(&b)
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	want := []string{
		"lost: project 4 \"p\": not found",
		"corrupt: wiki \"a\": holds \"x\"",
		"stuck: task 3 (fork_project) pending",
		"crashtest: 10 acknowledged, 1 lost, 1 corrupt, 1 stuck",
	}
	if strings.Join(lines, "\n") != strings.Join(want, "\n") {
		t.Errorf("wrote:\n%s\nwant:\n%s", b.String(), strings.Join(want, "\n"))
	}
}
