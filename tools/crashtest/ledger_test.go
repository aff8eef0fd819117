package main

import (
	"errors"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestClassify(t *testing.T) {
	for _, c := range []struct {
		status int
		err    error
		want   outcome
	}{
		{200, nil, acked},
		{201, nil, acked},
		{204, nil, acked},
		{304, nil, refused},
		{400, nil, refused},
		{409, nil, refused},
		{500, nil, failed},
		{503, nil, failed},
		{0, errors.New("connection refused"), unanswered},
		{200, errors.New("read answer: unexpected EOF"), unanswered},
	} {
		if got := classify(c.status, c.err); got != c.want {
			t.Errorf("classify(%d, %v) = %d; want %d", c.status, c.err, got, c.want)
		}
	}
}

func TestPushOutcome(t *testing.T) {
	for _, c := range []struct {
		msg  string
		want outcome
	}{
		{"git push: exit status 128: fatal: unable to access 'http://…/': Failed to connect to 127.0.0.1 port 4000", unanswered},
		{"git push: exit status 128: error: RPC failed; curl 52 Empty reply from server", unanswered},
		{"git push: exit status 128: fatal: unable to access 'http://…/': The requested URL returned error: 502", failed},
		{"git push: exit status 128: fatal: unable to access 'http://…/': The requested URL returned error: 403", refused},
		{"git push: exit status 1: ! [remote rejected] HEAD -> main (pre-receive hook declined)", refused},
	} {
		if got := pushOutcome(c.msg); got != c.want {
			t.Errorf("pushOutcome(%q) = %d; want %d", c.msg, got, c.want)
		}
	}
}

func TestLedger_countsOnlyAcknowledged(t *testing.T) {
	l := newLedger()
	l.commit(acked, "", commitRec{kind: kindCommit, project: 1, branch: "main", sha: "a1"})
	l.commit(unanswered, "dial tcp: connection refused", commitRec{kind: kindCommit, project: 1, branch: "main", sha: ""})
	l.commit(refused, "400 bad", commitRec{kind: kindCommit, project: 1, branch: "main", sha: ""})
	l.commit(acked, "", commitRec{kind: kindPush, project: 2, branch: "push-w1", sha: "b1"})
	l.project(failed, "500 boom", projectRec{})
	l.project(acked, "", projectRec{id: 7, path: "p"})
	if got := l.acknowledged(); got != 3 {
		t.Errorf("acknowledged = %d; want 3", got)
	}
	if len(l.commits) != 2 || len(l.projects) != 1 {
		t.Errorf("kept %d commits and %d projects; want 2 and 1", len(l.commits), len(l.projects))
	}
	if got := l.tip(1, "main"); got != "a1" {
		t.Errorf("tip = %q; want a1", got)
	}
	s := l.stats[kindCommit]
	if s.acked != 1 || s.unanswered != 1 || s.refused != 1 || !slices.Equal(s.refusals, []string{"400 bad"}) {
		t.Errorf("commit stats = %+v", *s)
	}
	if got := len(l.items()); got != 3 {
		t.Errorf("items = %d; want 3 (two commits, one project)", got)
	}
}

func TestLedger_valueInDoubt(t *testing.T) {
	l := newLedger()
	if v := l.create(kindFile, unanswered, "", 1, "f", "v1"); v != nil {
		t.Fatalf("an unanswered creation was kept: %+v", v)
	}
	v := l.create(kindFile, acked, "", 1, "f", "v1")
	if v == nil {
		t.Fatal("an acknowledged creation was not kept")
	}
	if !l.update(v, acked, "", "v2") {
		t.Error("update after an acknowledged write stops the writer")
	}
	if !l.update(v, refused, "409 conflict", "v3") {
		t.Error("update after a refused write stops the writer")
	}
	if l.update(v, unanswered, "EOF", "v4") {
		t.Error("update after an unanswered write lets the writer go on")
	}
	for content, want := range map[string]bool{"v1": false, "v2": true, "v3": false, "v4": true, "": false} {
		if got := v.accepts(content); got != want {
			t.Errorf("accepts(%q) = %v; want %v", content, got, want)
		}
	}
	if v.writes != 2 || l.acknowledged() != 2 {
		t.Errorf("writes %d, acknowledged %d; want 2 and 2", v.writes, l.acknowledged())
	}
}

func TestLedger_merge(t *testing.T) {
	l := newLedger()
	if r := l.mergeRequest(failed, "500", mrRec{}); r != nil {
		t.Fatalf("a failed creation was kept: %+v", r)
	}
	r := l.mergeRequest(acked, "", mrRec{project: 3, iid: 1, branch: "mr-w1-1", target: "main"})
	l.merge(r, refused, "405 Method Not Allowed", "")
	if r.merged || r.mergeInDoubt {
		t.Errorf("a refused merge changed the record: %+v", *r)
	}
	l.merge(r, unanswered, "EOF", "")
	if !r.mergeInDoubt || r.merged {
		t.Errorf("an unanswered merge: %+v; want in doubt", *r)
	}
	l.merge(r, acked, "", "abc")
	if !r.merged || r.mergeInDoubt || r.mergeSHA != "abc" {
		t.Errorf("an acknowledged merge: %+v", *r)
	}
	if got := l.acknowledged(); got != 2 {
		t.Errorf("acknowledged = %d; want 2 (the creation and the merge)", got)
	}
}

func TestLedger_summaryNamesEveryKind(t *testing.T) {
	l := newLedger()
	l.pipeline(failed, "500 x", pipelineRec{})
	got := l.summary()
	if len(got) != len(kinds) {
		t.Fatalf("%d lines; want %d", len(got), len(kinds))
	}
	last := got[len(got)-1]
	if !strings.HasPrefix(last, "pipeline") || !strings.Contains(last, "1 failed (5xx)") || !strings.Contains(last, "500 x") {
		t.Errorf("pipeline line = %q", last)
	}
}

func TestKillSchedule(t *testing.T) {
	rnd := rand.New(rand.NewPCG(1, 2))
	for _, c := range []struct {
		n     int
		total time.Duration
	}{{1, time.Second}, {3, 30 * time.Second}, {10, 120 * time.Second}, {7, 5 * time.Nanosecond}} {
		got := killSchedule(c.n, c.total, rnd)
		if len(got) != c.n {
			t.Fatalf("killSchedule(%d, %s): %d moments", c.n, c.total, len(got))
		}
		slot := c.total / time.Duration(c.n)
		for i, at := range got {
			if lo, hi := time.Duration(i)*slot, time.Duration(i+1)*slot; at < lo || at >= max(hi, lo+1) {
				t.Errorf("killSchedule(%d, %s)[%d] = %s; want in [%s, %s)", c.n, c.total, i, at, lo, hi)
			}
		}
	}
	if got := killSchedule(0, time.Minute, rnd); len(got) != 0 {
		t.Errorf("killSchedule(0) = %v", got)
	}
}

func TestRedact(t *testing.T) {
	for in, want := range map[string]string{
		"postgres://postgres@127.0.0.1:5432/test":     "postgres://postgres@127.0.0.1:5432/test",
		"postgres://u:secret@db:5432/x?search_path=s": "postgres://u:xxx@db:5432/x?search_path=s",
		"postgres://127.0.0.1/test?sslmode=disable":   "postgres://127.0.0.1/test?sslmode=disable",
	} {
		if got := redact(in); got != want {
			t.Errorf("redact(%q) = %q; want %q", in, got, want)
		}
	}
}
