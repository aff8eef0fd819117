package e2e

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"quarry/internal/apitest"
)

// TestMergeRequests_readPeople: a merge request's people (author,
// assignees in their order, reviewers) come out of one statement with
// their summaries as they are now (a name changed, a user blocked), in
// the single read and in the list; one merge request costs as many
// statements whatever the number of its people, and user.can_merge
// follows the target branch's protection.
func TestMergeRequests_readPeople(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		qc := newQueryCounter(t, s)
		owner := s.NewUser(t, "mrpowner")
		bob, carol, dave := s.NewUser(t, "mrpbob"), s.NewUser(t, "mrpcarol"), s.NewUser(t, "mrpdave")
		p := mrProject(t, s, owner, "mrp", "private")
		for _, u := range []apitest.User{bob, carol, dave} {
			agMember(t, s, p, u, 30)
		}
		p.commit(t, "one", map[string]string{"one.txt": "1\n"})
		p.commit(t, "two", map[string]string{"two.txt": "2\n"})
		many := mrCreate(t, p, owner.Token, map[string]any{"source_branch": "one", "target_branch": "main", "title": "many",
			"assignee_ids": []int64{carol.ID, bob.ID}, "reviewer_ids": []int64{dave.ID, bob.ID}})
		few := mrCreate(t, p, owner.Token, map[string]any{"source_branch": "two", "target_branch": "main", "title": "few",
			"assignee_ids": []int64{bob.ID}})
		s.Do(t, apitest.Request{Method: "PUT", Path: fmt.Sprintf("/users/%d", carol.ID), Token: s.RootToken,
			JSON: map[string]any{"name": "Carol Renamed"}}).Want(t, http.StatusOK)
		s.Do(t, apitest.Request{Method: "POST", Path: fmt.Sprintf("/users/%d/block", dave.ID), Token: s.RootToken}).Want(t, http.StatusCreated)

		type person struct {
			ID       int64  `json:"id"`
			Username string `json:"username"`
			Name     string `json:"name"`
			State    string `json:"state"`
			WebURL   string `json:"web_url"`
		}
		type mr struct {
			IID       int64    `json:"iid"`
			Author    person   `json:"author"`
			Assignee  *person  `json:"assignee"`
			Assignees []person `json:"assignees"`
			Reviewers []person `json:"reviewers"`
			User      *struct {
				CanMerge bool `json:"can_merge"`
			} `json:"user"`
		}
		usernames := func(list []person) []string {
			out := []string{}
			for _, u := range list {
				out = append(out, u.Username)
			}
			return out
		}
		check := func(t *testing.T, got mr) {
			t.Helper()
			if got.Author.ID != owner.ID || got.Author.Username != owner.Username || got.Author.State != "active" ||
				got.Author.WebURL != s.URL+"/"+owner.Username {
				t.Errorf("!%d author = %+v", got.IID, got.Author)
			}
			switch got.IID {
			case many.IID:
				if a := usernames(got.Assignees); fmt.Sprint(a) != fmt.Sprint([]string{carol.Username, bob.Username}) {
					t.Errorf("!%d assignees = %v", got.IID, a)
				}
				if got.Assignee == nil || got.Assignee.ID != carol.ID || got.Assignee.Name != "Carol Renamed" || got.Assignees[0].Name != "Carol Renamed" {
					t.Errorf("!%d assignee = %+v, assignees = %+v", got.IID, got.Assignee, got.Assignees)
				}
				if r := usernames(got.Reviewers); fmt.Sprint(r) != fmt.Sprint([]string{dave.Username, bob.Username}) ||
					got.Reviewers[0].State != "blocked" || got.Reviewers[1].State != "active" {
					t.Errorf("!%d reviewers = %+v", got.IID, got.Reviewers)
				}
			case few.IID:
				if a := usernames(got.Assignees); fmt.Sprint(a) != fmt.Sprint([]string{bob.Username}) || len(got.Reviewers) != 0 ||
					got.Assignee == nil || got.Assignee.ID != bob.ID {
					t.Errorf("!%d assignees = %+v, reviewers = %+v", got.IID, got.Assignees, got.Reviewers)
				}
			default:
				t.Errorf("unexpected merge request !%d", got.IID)
			}
		}
		for _, iid := range []int64{many.IID, few.IID} {
			var got mr
			mrDo(t, p, "GET", owner.Token, iid, "", nil).Want(t, http.StatusOK).JSON(t, &got)
			check(t, got)
			if got.User == nil || !got.User.CanMerge {
				t.Errorf("!%d: the owner cannot merge into main: %+v", iid, got.User)
			}
			mrDo(t, p, "GET", bob.Token, iid, "", nil).Want(t, http.StatusOK).JSON(t, &got)
			if got.User == nil || got.User.CanMerge {
				t.Errorf("!%d: a developer can merge into the protected main: %+v", iid, got.User)
			}
		}
		var list []mr
		mrDo(t, p, "GET", owner.Token, 0, "", nil).Want(t, http.StatusOK).JSON(t, &list)
		if len(list) != 2 {
			t.Fatalf("list = %+v", list)
		}
		for _, got := range list {
			check(t, got)
		}

		// One merge request costs the same statements with four people as
		// with two.
		count := func(iid int64) int64 {
			t.Helper()
			s.Do(t, apitest.Request{Path: fmt.Sprintf("%s/api/v4%s", qc.url, mrPath(p, iid, "")), Token: owner.Token}).Want(t, http.StatusOK)
			select {
			case n := <-qc.counts:
				return n
			case <-time.After(10 * time.Second):
				t.Fatalf("GET !%d: no query count", iid)
				return 0
			}
		}
		count(many.IID) // what the first read after a change stores
		count(few.IID)
		if a, b := count(many.IID), count(few.IID); a != b {
			t.Errorf("statements of one merge request: %d with four people, %d with two", a, b)
		}
	})
}
