package model

import (
	"fmt"
	"strings"
	"testing"
)

// items reads "success", "failed!" (allow_failure) as status items.
func items(specs ...string) []StatusItem {
	out := make([]StatusItem, len(specs))
	for i, s := range specs {
		out[i] = StatusItem{Status: CIStatus(strings.TrimSuffix(s, "!")), AllowFailure: strings.HasSuffix(s, "!")}
	}
	return out
}

func TestComposite_rules(t *testing.T) {
	cases := []struct {
		rule  int
		dag   bool
		jobs  []string
		want  CIStatus
		empty bool
	}{
		{rule: 0, jobs: nil, empty: true},
		{rule: 1, dag: true, jobs: []string{"success", "skipped"}, want: StatusSkipped},
		{rule: 1, dag: true, jobs: []string{"success", "manual!"}, want: StatusSkipped},
		{rule: 2, jobs: []string{"skipped", "manual!"}, want: StatusSkipped},
		{rule: 2, jobs: []string{"skipped"}, want: StatusSkipped},
		{rule: 3, jobs: []string{"success", "skipped", "failed!", "manual!"}, want: StatusSuccess},
		{rule: 3, jobs: []string{"success", "canceled!"}, want: StatusSuccess},
		{rule: 4, jobs: []string{"created", "failed!"}, want: StatusCreated},
		{rule: 5, jobs: []string{"preparing", "manual!"}, want: StatusPreparing},
		{rule: 6, jobs: []string{"canceled", "success", "skipped"}, want: StatusCanceled},
		{rule: 7, jobs: []string{"pending", "created", "skipped"}, want: StatusPending},
		{rule: 8, jobs: []string{"running", "created"}, want: StatusRunning},
		{rule: 8, jobs: []string{"pending", "failed"}, want: StatusRunning},
		{rule: 9, jobs: []string{"waiting_for_resource", "success", "failed"}, want: StatusWaitingForResource},
		{rule: 11, jobs: []string{"manual", "success", "failed"}, want: StatusManual},
		{rule: 12, jobs: []string{"scheduled", "success", "failed"}, want: StatusScheduled},
		{rule: 13, jobs: []string{"preparing", "success"}, want: StatusPreparing},
		{rule: 14, jobs: []string{"created", "success"}, want: StatusRunning},
		{rule: 15, jobs: []string{"canceling", "success"}, want: StatusCanceling},
		{rule: 16, jobs: []string{"failed", "success", "skipped"}, want: StatusFailed},
		{rule: 16, jobs: []string{"failed", "canceled"}, want: StatusFailed},
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("rule%d_%s", c.rule, strings.Join(c.jobs, "_")), func(t *testing.T) {
			got, ok := Composite(items(c.jobs...), c.dag)
			if ok == c.empty || got != c.want {
				t.Fatalf("Composite(%v, dag=%v) = %q, %v; want %q", c.jobs, c.dag, got, ok, c.want)
			}
		})
	}
}

// TestComposite_workedExamples are the pipeline examples of reference §3.4.
func TestComposite_workedExamples(t *testing.T) {
	cases := []struct {
		name string
		jobs []string
		want CIStatus
	}{
		{"all created", []string{"created", "created"}, StatusCreated},
		{"build pending, test created", []string{"pending", "created"}, StatusPending},
		{"build running, test created", []string{"running", "created"}, StatusRunning},
		{"build success, test created", []string{"success", "created"}, StatusRunning},
		{"build success, test failed, deploy skipped", []string{"success", "failed", "skipped"}, StatusFailed},
		{"lint failed allow_failure", []string{"success", "failed!", "success"}, StatusSuccess},
		{"deploy manual allow_failure", []string{"success", "manual!"}, StatusSuccess},
		{"deploy manual blocking", []string{"success", "manual"}, StatusManual},
		{"deploy scheduled", []string{"success", "scheduled"}, StatusScheduled},
		{"deploy canceled", []string{"success", "canceled"}, StatusCanceled},
		{"build failed, cleanup always success", []string{"failed", "success"}, StatusFailed},
		{"only skipped", []string{"skipped", "skipped"}, StatusSkipped},
		{"deploy waiting for resource", []string{"success", "waiting_for_resource"}, StatusWaitingForResource},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got, _ := Composite(items(c.jobs...), false); got != c.want {
				t.Fatalf("got %q; want %q", got, c.want)
			}
		})
	}
}

// job builds a ProcJob: "name@stage:when" with optional needs.
func pj(id int64, name string, stage int, status CIStatus, opts ...func(*ProcJob)) ProcJob {
	j := ProcJob{ID: id, Name: name, Stage: stage, Status: status, When: WhenOnSuccess}
	for _, o := range opts {
		o(&j)
	}
	return j
}

func when(w string) func(*ProcJob) { return func(j *ProcJob) { j.When = w } }
func allowFail(j *ProcJob)         { j.AllowFailure = true }
func needs(n ...string) func(*ProcJob) {
	return func(j *ProcJob) { j.DAG, j.Needs = true, n }
}
func resource(j *ProcJob) { j.ResourceGroup = true }

func movesOf(p Processed) string {
	var parts []string
	for _, m := range p.Moves {
		parts = append(parts, fmt.Sprintf("%d:%s", m.ID, m.To))
	}
	return strings.Join(parts, " ")
}

func TestProcess(t *testing.T) {
	cases := []struct {
		name   string
		jobs   []ProcJob
		moves  string
		status CIStatus
	}{
		{"new pipeline starts the first stage",
			[]ProcJob{pj(1, "build", 0, StatusCreated), pj(2, "test", 1, StatusCreated)},
			"1:pending", StatusPending},
		{"a stage waits for the one before",
			[]ProcJob{pj(1, "build", 0, StatusRunning), pj(2, "test", 1, StatusCreated)},
			"", StatusRunning},
		{"success starts the next stage",
			[]ProcJob{pj(1, "build", 0, StatusSuccess), pj(2, "test", 1, StatusCreated), pj(3, "deploy", 2, StatusCreated)},
			"2:pending", StatusRunning},
		{"a failure skips on_success, runs on_failure and always",
			[]ProcJob{pj(1, "build", 0, StatusFailed), pj(2, "test", 1, StatusCreated), pj(3, "notify", 1, StatusCreated, when(WhenOnFailure)),
				pj(4, "cleanup", 2, StatusCreated, when(WhenAlways))},
			"2:skipped 3:pending", StatusRunning},
		{"always runs once the failure's stage is done",
			[]ProcJob{pj(1, "build", 0, StatusFailed), pj(2, "test", 1, StatusSkipped), pj(3, "notify", 1, StatusSuccess, when(WhenOnFailure)),
				pj(4, "cleanup", 2, StatusCreated, when(WhenAlways))},
			"4:pending", StatusRunning},
		{"on_failure skipped after success; the pipeline succeeds",
			[]ProcJob{pj(1, "build", 0, StatusSuccess), pj(2, "notify", 1, StatusCreated, when(WhenOnFailure))},
			"2:skipped", StatusSuccess},
		{"allowed failure counts as success",
			[]ProcJob{pj(1, "lint", 0, StatusFailed, allowFail), pj(2, "test", 1, StatusCreated)},
			"2:pending", StatusPending},
		{"manual non-blocking lets later stages run",
			[]ProcJob{pj(1, "build", 0, StatusSuccess), pj(2, "deploy", 1, StatusCreated, when(WhenManual), allowFail),
				pj(3, "report", 2, StatusCreated)},
			"2:manual 3:pending", StatusRunning},
		{"manual blocking holds later stages; the pipeline is manual",
			[]ProcJob{pj(1, "build", 0, StatusSuccess), pj(2, "deploy", 1, StatusCreated, when(WhenManual)),
				pj(3, "report", 2, StatusCreated)},
			"2:manual", StatusManual},
		{"delayed becomes scheduled",
			[]ProcJob{pj(1, "build", 0, StatusSuccess), pj(2, "deploy", 1, StatusCreated, when(WhenDelayed))},
			"2:scheduled", StatusScheduled},
		{"a resource group makes the job wait",
			[]ProcJob{pj(1, "deploy", 0, StatusCreated, resource)},
			"1:waiting_for_resource", StatusWaitingForResource},
		{"DAG starts a need-satisfied job before its stage",
			[]ProcJob{pj(1, "build_a", 0, StatusSuccess), pj(2, "build_b", 0, StatusRunning),
				pj(3, "test_a", 1, StatusCreated, needs("build_a")), pj(4, "test_b", 1, StatusCreated)},
			"3:pending", StatusRunning},
		{"needs: [] starts at once",
			[]ProcJob{pj(1, "build", 0, StatusCreated), pj(2, "lint", 2, StatusCreated, needs())},
			"1:pending 2:pending", StatusPending},
		{"DAG: a skipped need skips",
			[]ProcJob{pj(1, "build", 0, StatusSkipped), pj(2, "test", 1, StatusCreated, needs("build"))},
			"2:skipped", StatusSkipped},
		{"DAG: needs within a stage run in order",
			[]ProcJob{pj(1, "b", 0, StatusCreated, needs("a")), pj(2, "a", 0, StatusCreated)},
			"2:pending", StatusPending},
		{"canceled before skips even always",
			[]ProcJob{pj(1, "build", 0, StatusCanceled), pj(2, "cleanup", 1, StatusCreated, when(WhenAlways))},
			"2:skipped", StatusCanceled},
		{"skipped decision propagates to later stages in one pass",
			[]ProcJob{pj(1, "build", 0, StatusFailed), pj(2, "test", 1, StatusCreated), pj(3, "deploy", 2, StatusCreated)},
			"2:skipped 3:skipped", StatusFailed},
		{"only skipped jobs: skipped",
			[]ProcJob{pj(1, "notify", 0, StatusCreated, when(WhenOnFailure))},
			"1:skipped", StatusSkipped},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := Process(c.jobs)
			if m := movesOf(got); m != c.moves || got.Status != c.status {
				t.Fatalf("moves %q status %q; want %q %q", m, got.Status, c.moves, c.status)
			}
			for _, m := range got.Moves {
				if !m.From.CanMoveTo(m.To) {
					t.Fatalf("move %d %s → %s is not in the transition table", m.ID, m.From, m.To)
				}
			}
		})
	}
}

func TestCIStatus_transitions(t *testing.T) {
	for _, s := range []CIStatus{StatusSuccess, StatusFailed, StatusCanceled} {
		for _, n := range PipelineStatuses {
			if s.CanMoveTo(n) {
				t.Fatalf("%s → %s allowed; completed jobs never move", s, n)
			}
		}
	}
	allowed := [][2]CIStatus{{StatusCreated, StatusPending}, {StatusPending, StatusRunning}, {StatusRunning, StatusSuccess},
		{StatusRunning, StatusCanceling}, {StatusCanceling, StatusCanceled}, {StatusManual, StatusPending},
		{StatusScheduled, StatusManual}, {StatusSkipped, StatusCreated}, {StatusWaitingForResource, StatusPending}}
	for _, m := range allowed {
		if !m[0].CanMoveTo(m[1]) {
			t.Fatalf("%s → %s refused", m[0], m[1])
		}
	}
	refused := [][2]CIStatus{{StatusCreated, StatusRunning}, {StatusPending, StatusManual}, {StatusRunning, StatusPending},
		{StatusCanceling, StatusSuccess}, {StatusSkipped, StatusSuccess}}
	for _, m := range refused {
		if m[0].CanMoveTo(m[1]) {
			t.Fatalf("%s → %s allowed", m[0], m[1])
		}
	}
}

// TestProcess_stageStatuses: each stage's status is the composite of its
// own jobs after the moves.
func TestProcess_stageStatuses(t *testing.T) {
	got := Process([]ProcJob{pj(1, "build", 0, StatusSuccess), pj(2, "lint", 0, StatusFailed, allowFail),
		pj(3, "test", 1, StatusCreated), pj(4, "deploy", 2, StatusCreated, when(WhenManual))})
	want := map[int]CIStatus{0: StatusSuccess, 1: StatusPending, 2: StatusCreated}
	for st, s := range want {
		if got.Stages[st] != s {
			t.Fatalf("stage %d %s; want %s (all %v)", st, got.Stages[st], s, got.Stages)
		}
	}
}

// TestProcessCounts_likeTheList: deciding from status counts and the
// needed jobs gives what deciding from every job gives.
func TestProcessCounts_likeTheList(t *testing.T) {
	jobs := []ProcJob{pj(1, "a", 0, StatusSuccess), pj(2, "b", 0, StatusRunning), pj(3, "c", 1, StatusCreated, needs("a")),
		pj(4, "d", 1, StatusCreated), pj(5, "e", 2, StatusCreated, needs("c")), pj(6, "f", 0, StatusFailed, allowFail)}
	stages := StageStatuses{}
	named := map[string][]NamedStatus{}
	var created []ProcJob
	for _, j := range jobs {
		stages.add(j.Stage, StatusItem{j.Status, j.AllowFailure}, 1)
		if j.Status == StatusCreated {
			created = append(created, j)
		}
		for _, c := range []string{"a", "c"} {
			if j.Name == c {
				named[c] = append(named[c], NamedStatus{j.ID, StatusItem{j.Status, j.AllowFailure}})
			}
		}
	}
	full, counted := Process(jobs), ProcessCounts(created, stages, named)
	if movesOf(full) != movesOf(counted) || full.Status != counted.Status || movesOf(full) != "3:pending" {
		t.Fatalf("from the list %q %s; from counts %q %s; want 3:pending", movesOf(full), full.Status, movesOf(counted), counted.Status)
	}
}
