package entity

import (
	"encoding/json"
	"testing"
	"time"

	"quarry/internal/auth"
	"quarry/internal/mergerequests"
	"quarry/internal/model"
)

// A spliced merge request (list and detail) is byte for byte the entity
// encoded whole, for every combination of its row's states, its people,
// its head pipeline, its blockers and callers — the template built once
// from another combination of what the holes hold, as a cache hit uses
// it.
func TestSpliceMergeRequestMatchesEncoding(t *testing.T) {
	r := New("https://quarry.example", nil)
	now := time.Date(2026, 1, 2, 3, 4, 5, 6000, time.UTC)
	later := now.Add(90 * time.Minute)
	ns := model.Namespace{ID: 7, Name: "Group <&>", Path: "group", Kind: model.NamespaceGroup, FullPath: "group/sub", FullName: "Group", EntityVersion: 3}
	target := model.Project{ID: 42, NamespaceID: 7, Namespace: ns, Name: "Proj", Path: "proj", Settings: model.DefaultProjectSettings(),
		CreatedAt: now, UpdatedAt: now, EntityVersion: 9}
	squashAlways := target
	squashAlways.Settings.SquashOption = "always"
	fork := target
	fork.ID, fork.Path, fork.Namespace.FullPath = 43, "fork", "alice"
	users := map[int64]model.User{
		1: {ID: 1, Username: "root", Name: "Admin <&>", State: model.UserActive},
		2: {ID: 2, Username: "alice", Name: "Alice \"q\"", State: model.UserActive, Avatar: "a.png"},
		3: {ID: 3, Username: "bob", Name: "Bob", State: model.UserBlocked},
	}
	pipeline := &model.Pipeline{ID: 77, IID: 5, ProjectID: 43, SHA: "abc", Ref: "feature", Source: "push", Status: model.StatusRunning,
		CreatedAt: now, UpdatedAt: later}
	anonymous, author, other := auth.Actor{}, auth.Actor{User: &model.User{ID: 2}}, auth.Actor{User: &model.User{ID: 1, Admin: true}}

	type row struct {
		name string
		m    model.MergeRequest
		tgt  model.Project
		src  model.Project
	}
	base := model.MergeRequest{ID: 11, IID: 4, TargetProjectID: 42, SourceProjectID: 42, SourceBranch: "feature", TargetBranch: "main",
		Title: "Add <things> & \"stuff\"", Description: "- [x] one\n- [ ] two\n<script>", State: model.MRStateOpened, AuthorID: 2,
		Labels: []string{"bug", "ui <x>"}, HeadSHA: "abc", BaseSHA: "def", StartSHA: "012", MergeStatus: model.MergeCanBeMerged,
		CreatedAt: now, UpdatedAt: later, EntityVersion: 5, ChangedFiles: 3}
	draft := base
	draft.Title, draft.Labels, draft.Description = "Draft: wip", nil, ""
	conflicts := base
	conflicts.Conflicts, conflicts.MergeStatus, conflicts.DiscussionLocked = true, model.MergeCannotBeMerged, true
	merged := base
	merged.State, merged.MergedByID, merged.MergedAt, merged.MergeCommitSHA, merged.SquashCommitSHA = model.MRStateMerged, 1, &later, "fff", "eee"
	merged.RemoveSourceBranch, merged.Squash = true, true
	closed := base
	closed.State, closed.ClosedByID, closed.ClosedAt, closed.MergeError = model.MRStateClosed, 3, &later, "conflict <x>"
	forked := base
	forked.SourceProjectID = 43
	rows := []row{{"opened", base, target, target}, {"draft", draft, target, target}, {"conflicts", conflicts, squashAlways, target},
		{"merged", merged, target, target}, {"closed", closed, target, target}, {"fork", forked, target, fork}}

	type people struct {
		author, merger, closer int64
		assignees, reviewers   []int64
	}
	variants := []people{
		{author: 2},
		{author: 2, assignees: []int64{1, 2}, reviewers: []int64{3}},
		{author: 9, assignees: []int64{9, 3}, reviewers: []int64{9}}, // 9: a user since deleted
		{author: 0, merger: 1, closer: 3, assignees: []int64{3}, reviewers: []int64{1, 2, 3}},
	}
	n := 0
	for _, rw := range rows {
		for _, detail := range []bool{false, true} {
			var tpl *Template
			for vi, pv := range variants {
				for _, pl := range []*model.Pipeline{nil, pipeline} {
					for blk := 0; blk < 4; blk++ {
						for _, a := range []auth.Actor{anonymous, author, other} {
							m := rw.m
							m.AuthorID, m.AssigneeIDs, m.ReviewerIDs = pv.author, pv.assignees, pv.reviewers
							if pv.merger != 0 {
								m.MergedByID = pv.merger
							}
							if pv.closer != 0 {
								m.ClosedByID = pv.closer
							}
							v := mergerequests.View{MergeRequest: m, Target: rw.tgt, Source: rw.src, Users: users, HeadPipeline: pl,
								NotApproved: blk == 1, CIMustPass: blk == 2, NeedRebase: blk == 3, CanMerge: blk%2 == 0 && a.SignedIn()}
							if detail {
								v.ChangesCount = "3"
							}
							var want []byte
							var err error
							if detail {
								want, err = json.Marshal(r.MergeRequestDetail(v, a))
							} else {
								want, err = json.Marshal(r.MergeRequest(v))
							}
							if err != nil {
								t.Fatal(err)
							}
							if tpl == nil { // once per row and view: the rest are hits
								if tpl, err = r.mergeRequestTemplate(v, detail); err != nil {
									t.Fatal(err)
								}
							}
							got, err := r.spliceMergeRequest([]byte("x"), tpl, &v, a, detail, encodedPeople{})
							if err != nil {
								t.Fatal(err)
							}
							if string(got[1:]) != string(want) {
								t.Fatalf("%s detail=%v people %d pipeline=%v blockers %d caller %v: spliced\n%s\nencoded\n%s",
									rw.name, detail, vi, pl != nil, blk, a.UserID(), got[1:], want)
							}
							n++
						}
					}
				}
			}
		}
	}
	if n != len(rows)*2*len(variants)*2*4*3 {
		t.Fatalf("cases: %d", n)
	}
}

// A page through the cache (cold, then warm, the people's summaries shared
// across the page) is byte for byte the page encoded whole; a view whose
// versions are unknown is encoded but not kept.
func TestMergeRequestsJSONMatchesEncoding(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	ns := model.Namespace{ID: 7, Path: "g", FullPath: "g", EntityVersion: 2}
	target := model.Project{ID: 42, Namespace: ns, Path: "p", Settings: model.DefaultProjectSettings(), EntityVersion: 4}
	users := map[int64]model.User{1: {ID: 1, Username: "root", Name: "Root"}, 2: {ID: 2, Username: "alice", Name: "Alice"}}
	var list []mergerequests.View
	for i := int64(1); i <= 5; i++ {
		m := model.MergeRequest{ID: i, IID: i, TargetProjectID: 42, SourceProjectID: 42, Title: "t", State: model.MRStateOpened,
			AuthorID: 1 + i%2, AssigneeIDs: []int64{1, 2}, MergeStatus: model.MergeUnchecked, CreatedAt: now, UpdatedAt: now, EntityVersion: i}
		list = append(list, mergerequests.View{MergeRequest: m, Target: target, Source: target, Users: users})
	}
	list[4].EntityVersion = 0 // changed after its row was read
	plain := New("https://q.example", nil)
	want, err := json.Marshal(plain.MergeRequests(list))
	if err != nil {
		t.Fatal(err)
	}
	cached := New("https://q.example", nil)
	cached.Cache = NewCache(1 << 20)
	for pass := 0; pass < 2; pass++ {
		got, err := cached.MergeRequestsJSON(list)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != string(want) {
			t.Fatalf("pass %d: cached\n%s\nencoded\n%s", pass, got, want)
		}
		if n, _ := cached.Cache.Stats(); n != 4 {
			t.Errorf("pass %d: %d entries kept, want 4 (the fifth's versions are unknown)", pass, n)
		}
	}
	for _, a := range []auth.Actor{{}, {User: &model.User{ID: 2}}} {
		want, err := json.Marshal(plain.MergeRequestDetail(list[0], a))
		if err != nil {
			t.Fatal(err)
		}
		got, err := cached.MergeRequestDetailJSON(list[0], a)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != string(want) {
			t.Errorf("detail for %d: cached\n%s\nencoded\n%s", a.UserID(), got, want)
		}
	}
}
