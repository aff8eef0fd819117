package e2e

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"quarry/internal/apitest"
	"quarry/internal/store"
)

// Every filter and order of the main lists has its index: each list
// request's statements are explained (on PostgreSQL with sequential scans
// disabled, so a scan left is one no index can serve) and the test fails
// on a table read whole, or read whole and sorted, that an index should
// spare.

// planChecker serves s's API behind a handler that records each request's
// statements (store.RecordQueries).
type planChecker struct {
	s       *apitest.Server
	url     string
	queries chan []store.Query
	seen    map[string]bool
}

func newPlanChecker(t *testing.T, s *apitest.Server) *planChecker {
	pc := &planChecker{s: s, queries: make(chan []store.Query, 1), seen: map[string]bool{}}
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.App.DB.ForgetPages() // every page read, its statements recorded
		ctx, c := store.RecordQueries(r.Context())
		s.App.Handler.ServeHTTP(w, r.WithContext(ctx))
		pc.queries <- c.Queries()
	}))
	t.Cleanup(hs.Close)
	pc.url = hs.URL
	return pc
}

// wholeTableReads are the tables a full read of which is right: one row
// (the settings).
var wholeTableReads = []string{"application_settings"}

// wholeByDesign are statements that read a table whole whatever its
// indexes: the projects of every merge request or issue, for the
// instance-wide lists (scope=all).
var wholeByDesign = []string{"IN (SELECT DISTINCT target_project_id FROM merge_requests)", "IN (SELECT DISTINCT project_id FROM issues)"}

// check gets path and fails for each statement of the request whose plan
// reads or sorts a table whole.
func (pc *planChecker) check(t *testing.T, path, token string) {
	t.Helper()
	pc.s.Do(t, apitest.Request{Path: pc.url + "/api/v4" + path, Token: token}).Want(t, http.StatusOK)
	queries := <-pc.queries
	n := 0
	for _, q := range queries {
		// (A condition known false reads nothing, whatever the plan.)
		if !strings.HasPrefix(strings.TrimSpace(q.SQL), "SELECT") || strings.Contains(q.SQL, "WHERE 1 = 0") || pc.seen[q.SQL] ||
			slices.ContainsFunc(wholeByDesign, func(s string) bool { return strings.Contains(q.SQL, s) }) {
			continue
		}
		pc.seen[q.SQL] = true
		n++
		found, err := pc.s.App.DB.FullScans(context.Background(), q.SQL, q.Args)
		if err != nil {
			t.Fatalf("GET %s: explain %s: %v", path, q.SQL, err)
		}
	next:
		for _, f := range found {
			for _, table := range wholeTableReads {
				if strings.Contains(f, " "+table) {
					continue next
				}
			}
			t.Errorf("GET %s: %s\n\tin %s", path, f, strings.Join(strings.Fields(q.SQL), " "))
		}
	}
	t.Logf("GET %s: %d statements, %d new explained", path, len(queries), n)
}

func TestListPlans_indexesForEveryFilter(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		pc := newPlanChecker(t, s)
		// The check sees a filter no index serves, and a table sorted
		// whole; a lookup by key passes.
		bg := context.Background()
		if found, err := s.App.DB.FullScans(bg, "SELECT id FROM users WHERE bio = ? ORDER BY location", []any{"x"}); err != nil || len(found) == 0 {
			t.Fatalf("a filter on users.bio, ordered by location: %q, %v; want a full scan found", found, err)
		}
		if found, err := s.App.DB.FullScans(bg, "SELECT id FROM users WHERE id = ?", []any{1}); err != nil || len(found) != 0 {
			t.Fatalf("a user by id: %q, %v; want nothing found", found, err)
		}
		owner := s.NewUser(t, "lpowner")
		bob := s.NewUser(t, "lpbob")
		var g struct {
			ID int64 `json:"id"`
		}
		s.Do(t, apitest.Request{Method: "POST", Path: "/groups", Token: owner.Token,
			JSON: map[string]any{"name": "lpg", "path": "lpg", "visibility": "public"}}).Want(t, http.StatusCreated).JSON(t, &g)
		s.Do(t, apitest.Request{Method: "POST", Path: fmt.Sprintf("/groups/%d/members", g.ID), Token: owner.Token,
			JSON: map[string]any{"user_id": bob.ID, "access_level": 30}}).Want(t, http.StatusCreated)
		p := newCIProject(t, s, owner, "lpp", map[string]string{".gitlab-ci.yml": "a:\n  script: [x]\nb:\n  script: [y]\n"})
		agMember(t, s, p, bob, 30)
		s.Do(t, apitest.Request{Method: "POST", Path: fmt.Sprintf("/projects/%d/star", p.ID), Token: bob.Token}).Want(t, http.StatusCreated)
		for i := range 3 {
			br := fmt.Sprintf("lp%d", i)
			p.commit(t, br, map[string]string{br + ".txt": br + "\n"})
			mrCreate(t, p, owner.Token, map[string]any{"source_branch": br, "target_branch": "main", "title": "lp " + br,
				"labels": []string{"l" + itoa(int64(i)), "all"}, "assignee_ids": []int64{bob.ID}, "reviewer_ids": []int64{bob.ID}})
		}
		eventually(t, "the pipelines", func() bool { return len(p.pipelines(t, "per_page=100")) >= 4 })
		pipelines := p.pipelines(t, "per_page=1")

		lists := []string{
			"/projects", "/projects?order_by=id&sort=asc", "/projects?order_by=name", "/projects?order_by=path",
			"/projects?order_by=created_at", "/projects?order_by=updated_at", "/projects?order_by=last_activity_at",
			"/projects?visibility=public", "/projects?owned=true", "/projects?membership=true", "/projects?starred=true",
			"/projects?archived=false", "/projects?topic=lp", "/projects?search=lpp", "/projects?simple=true",
			"/projects?statistics=true", "/projects?pagination=keyset&order_by=id&sort=desc", "/projects?page=2&per_page=1",
			fmt.Sprintf("/groups/%d/projects", g.ID), fmt.Sprintf("/users/%d/projects", owner.ID),

			"/users", "/users?username=lpbob", "/users?search=lpb", "/users?active=true", "/users?blocked=true",
			"/users?external=true", "/users?order_by=username&sort=asc", "/users?order_by=name", "/users?order_by=created_at",
			"/users?pagination=keyset&order_by=id&sort=desc", "/users?page=2&per_page=1",

			"/groups", "/groups?all_available=true", "/groups?search=lpg", "/groups?owned=true", "/groups?min_access_level=30",
			"/groups?order_by=path", "/groups?order_by=id", "/groups?top_level_only=true", "/groups?statistics=true",
			fmt.Sprintf("/groups/%d/subgroups", g.ID),

			fmt.Sprintf("/projects/%d/members", p.ID), fmt.Sprintf("/projects/%d/members/all", p.ID),
			fmt.Sprintf("/projects/%d/members?query=lpb", p.ID), fmt.Sprintf("/groups/%d/members", g.ID),
			fmt.Sprintf("/groups/%d/members/all", g.ID),

			fmt.Sprintf("/projects/%d/merge_requests", p.ID), fmt.Sprintf("/projects/%d/merge_requests?state=opened", p.ID),
			fmt.Sprintf("/projects/%d/merge_requests?state=merged", p.ID), fmt.Sprintf("/projects/%d/merge_requests?labels=all", p.ID),
			fmt.Sprintf("/projects/%d/merge_requests?author_id=%d", p.ID, owner.ID),
			fmt.Sprintf("/projects/%d/merge_requests?assignee_id=%d", p.ID, bob.ID),
			fmt.Sprintf("/projects/%d/merge_requests?reviewer_id=%d", p.ID, bob.ID),
			fmt.Sprintf("/projects/%d/merge_requests?source_branch=lp1", p.ID),
			fmt.Sprintf("/projects/%d/merge_requests?target_branch=main", p.ID),
			fmt.Sprintf("/projects/%d/merge_requests?order_by=updated_at", p.ID),
			fmt.Sprintf("/projects/%d/merge_requests?search=lp", p.ID), fmt.Sprintf("/projects/%d/merge_requests?view=simple", p.ID),
			"/merge_requests?scope=all", "/merge_requests?scope=assigned_to_me", fmt.Sprintf("/groups/%d/merge_requests", g.ID),

			fmt.Sprintf("/projects/%d/pipelines", p.ID), fmt.Sprintf("/projects/%d/pipelines?status=success", p.ID),
			fmt.Sprintf("/projects/%d/pipelines?ref=main", p.ID), fmt.Sprintf("/projects/%d/pipelines?sha=%s", p.ID, pipelines[0].SHA),
			fmt.Sprintf("/projects/%d/pipelines?source=push", p.ID), fmt.Sprintf("/projects/%d/pipelines?scope=finished", p.ID),
			fmt.Sprintf("/projects/%d/pipelines?scope=running", p.ID), fmt.Sprintf("/projects/%d/pipelines?scope=branches", p.ID),
			fmt.Sprintf("/projects/%d/pipelines?username=lpowner", p.ID), fmt.Sprintf("/projects/%d/pipelines?order_by=updated_at", p.ID),
			fmt.Sprintf("/projects/%d/pipelines?order_by=status", p.ID), fmt.Sprintf("/projects/%d/pipelines?order_by=ref", p.ID),
			fmt.Sprintf("/projects/%d/pipelines?order_by=user_id", p.ID),
			fmt.Sprintf("/projects/%d/pipelines?updated_after=2020-01-01T00:00:00Z", p.ID),
			fmt.Sprintf("/projects/%d/pipelines?pagination=keyset&order_by=id&sort=desc", p.ID),

			fmt.Sprintf("/projects/%d/jobs", p.ID), fmt.Sprintf("/projects/%d/jobs?scope[]=pending", p.ID),
			fmt.Sprintf("/projects/%d/jobs?scope[]=failed&scope[]=success", p.ID),
			fmt.Sprintf("/projects/%d/jobs?pagination=keyset&order_by=id&sort=desc", p.ID),
			fmt.Sprintf("/projects/%d/pipelines/%v/jobs", p.ID, pipelines[0].ID),
		}
		for _, path := range lists {
			pc.check(t, path, owner.Token)
		}
		for _, path := range []string{"/projects", "/projects?membership=true", "/groups", "/merge_requests?scope=all",
			fmt.Sprintf("/projects/%d/members/all", p.ID)} {
			pc.check(t, path, bob.Token)
		}
	})
}
