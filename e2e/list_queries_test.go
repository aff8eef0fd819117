package e2e

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"quarry/internal/apitest"
	"quarry/internal/store"
)

// Lists cost what their rows cost: every list answers a page with a fixed
// number of queries, whatever the page's size (no query per row). Each
// case counts the statements of a page of 1 and of a page of about
// listRows and fails when they differ; the first row of every list carries every
// relation the entity renders, so a lookup skipped for a bare row does not
// hide one made per row.

// listRows is the size of the large page.
const listRows = 50

// queryCounter serves s's API behind a handler that counts each request's
// statements (store.CountQueries on the request's context).
type queryCounter struct {
	s   *apitest.Server
	url string
	// counts has each request's count once its handler has returned
	// (the client may have the response before).
	counts chan int64
}

func newQueryCounter(t *testing.T, s *apitest.Server) *queryCounter {
	qc := &queryCounter{s: s, counts: make(chan int64, 1)}
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Every counted request reads its token and its project's head
		// (on SQLite a token's authentication and a head read by GET
		// /projects/:id may otherwise answer from memory for a second,
		// and two requests compared would differ by those statements;
		// so may a page of a list read again, store/pages.go).
		s.App.Tokens.ForgetAuthentications()
		s.App.Projects.ForgetCachedReads()
		s.App.DB.ForgetPages()
		ctx, c := store.CountQueries(r.Context())
		s.App.Handler.ServeHTTP(w, r.WithContext(ctx))
		qc.counts <- c.N()
	}))
	t.Cleanup(hs.Close)
	qc.url = hs.URL
	return qc
}

// page gets path with per_page n and returns the statements it cost and
// the number of items.
func (qc *queryCounter) page(t *testing.T, path, token string, n int) (int64, int) {
	t.Helper()
	sep := "?"
	if strings.Contains(path, "?") {
		sep = "&"
	}
	r := qc.s.Do(t, apitest.Request{Path: fmt.Sprintf("%s/api/v4%s%sper_page=%d", qc.url, path, sep, n), Token: token}).Want(t, http.StatusOK)
	items := len(r.Array(t))
	select {
	case n := <-qc.counts:
		return n, items
	case <-time.After(10 * time.Second):
		t.Fatalf("GET %s: no query count", path)
		return 0, 0
	}
}

// same checks that a page of 1 and a page of listRows cost the same.
func (qc *queryCounter) same(t *testing.T, path, token string) {
	t.Helper()
	qc.sameFrom(t, path, token, 1)
}

// sameFrom checks that a page of small and a page of all the rows but one
// (at least listRows/2) cost the same: small is the fewest rows that carry
// every relation (a project is either personal, with an owner, or a
// group's, with group memberships). Both pages have a page after them,
// so both count the total (a last page tells it without counting).
func (qc *queryCounter) sameFrom(t *testing.T, path, token string, small int) {
	t.Helper()
	// A token's first use is recorded: warm it up.
	_, all := qc.page(t, path, token, 100)
	one, n1 := qc.page(t, path, token, small)
	many, n := qc.page(t, path, token, all-1)
	if n1 != small || n < listRows/2 || n != all-1 {
		t.Fatalf("GET %s: pages of %d and %d items of %d; want %d and at least %d", path, n1, n, all, small, listRows/2)
	}
	t.Logf("GET %s: %d queries for %d, %d for %d", path, one, small, many, n)
	if one != many || one == 0 {
		t.Errorf("GET %s: %d queries for a page of %d, %d for a page of %d; want the same", path, one, small, many, n)
	}
}

func TestListQueries_usersGroupsMembers(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		qc := newQueryCounter(t, s)
		viewer := s.NewUser(t, "lqviewer")
		var top struct {
			ID int64 `json:"id"`
		}
		s.Do(t, apitest.Request{Method: "POST", Path: "/groups", Token: s.RootToken,
			JSON: map[string]any{"name": "lq top", "path": "lq-top", "visibility": "public"}}).Want(t, http.StatusCreated).JSON(t, &top)
		var proj struct {
			ID int64 `json:"id"`
		}
		s.Do(t, apitest.Request{Method: "POST", Path: "/projects", Token: s.RootToken,
			JSON: map[string]any{"name": "lqp", "namespace_id": top.ID}}).Want(t, http.StatusCreated).JSON(t, &proj)
		for i := 0; i < listRows; i++ {
			var u struct {
				ID int64 `json:"id"`
			}
			s.Do(t, apitest.Request{Method: "POST", Path: "/users", Token: s.RootToken, JSON: map[string]any{
				"username": fmt.Sprintf("lqu%02d", i), "email": fmt.Sprintf("lqu%02d@example.com", i), "name": fmt.Sprintf("Lq %02d", i),
				"password": "Quarry-test-pass-1", "skip_confirmation": true}}).Want(t, http.StatusCreated).JSON(t, &u)
			exp := time.Now().AddDate(1, 0, 0).Format("2006-01-02")
			s.Do(t, apitest.Request{Method: "POST", Path: fmt.Sprintf("/projects/%d/members", proj.ID), Token: s.RootToken,
				JSON: map[string]any{"user_id": u.ID, "access_level": 30, "expires_at": exp}}).Want(t, http.StatusCreated)
			s.Do(t, apitest.Request{Method: "POST", Path: "/groups", Token: s.RootToken, JSON: map[string]any{
				"name": fmt.Sprintf("lq g%02d", i), "path": fmt.Sprintf("lq-g%02d", i), "parent_id": top.ID,
				"visibility": "public"}}).Want(t, http.StatusCreated)
		}
		s.Do(t, apitest.Request{Method: "POST", Path: fmt.Sprintf("/groups/%d/members", top.ID), Token: s.RootToken,
			JSON: map[string]any{"user_id": viewer.ID, "access_level": 20}}).Want(t, http.StatusCreated)

		// A page's statistics are each group's own.
		for _, g := range s.Get(t, "/groups?statistics=true&per_page=5&all_available=true", s.RootToken).Want(t, http.StatusOK).Array(t) {
			one := s.Get(t, fmt.Sprintf("/groups/%v?statistics=true", g["id"]), s.RootToken).Want(t, http.StatusOK).Object(t)
			if fmt.Sprint(g["statistics"]) != fmt.Sprint(one["statistics"]) || g["statistics"] == nil {
				t.Errorf("group %v: statistics %v in the list; %v alone", g["id"], g["statistics"], one["statistics"])
			}
		}
		for _, tok := range []string{s.RootToken, viewer.Token} {
			qc.same(t, "/users", tok)
			qc.same(t, "/users?order_by=username&sort=asc", tok)
			qc.same(t, "/users?pagination=keyset&order_by=id&sort=desc", tok)
			qc.same(t, "/groups", tok)
			qc.same(t, "/groups?all_available=true&statistics=true", tok)
			qc.same(t, fmt.Sprintf("/groups/%d/subgroups", top.ID), tok)
			qc.same(t, fmt.Sprintf("/projects/%d/members", proj.ID), tok)
			qc.same(t, fmt.Sprintf("/projects/%d/members/all", proj.ID), tok)
		}
	})
}

func TestListQueries_projects(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		qc := newQueryCounter(t, s)
		owner := s.NewUser(t, "lqowner")
		viewer := s.NewUser(t, "lqpviewer")
		var g struct {
			ID int64 `json:"id"`
		}
		s.Do(t, apitest.Request{Method: "POST", Path: "/groups", Token: owner.Token,
			JSON: map[string]any{"name": "lqpg", "path": "lqpg", "visibility": "public"}}).Want(t, http.StatusCreated).JSON(t, &g)
		s.Do(t, apitest.Request{Method: "POST", Path: fmt.Sprintf("/groups/%d/members", g.ID), Token: owner.Token,
			JSON: map[string]any{"user_id": viewer.ID, "access_level": 30}}).Want(t, http.StatusCreated)
		var src struct {
			ID int64 `json:"id"`
		}
		s.Do(t, apitest.Request{Method: "POST", Path: "/projects", Token: owner.Token, JSON: map[string]any{"name": "lq source",
			"visibility": "public", "initialize_with_readme": true}}).Want(t, http.StatusCreated).JSON(t, &src)
		for i := 0; i < listRows; i++ {
			body := map[string]any{"name": fmt.Sprintf("lq %02d", i), "visibility": "public", "topics": []string{"t" + itoa(int64(i%3)), "all"}}
			if i%2 == 0 {
				body["namespace_id"] = g.ID
			}
			s.Do(t, apitest.Request{Method: "POST", Path: "/projects", Token: owner.Token, JSON: body}).Want(t, http.StatusCreated)
		}
		// The two newest projects, first in the default order, are forks,
		// one personal and one in the group: every relation a project
		// renders.
		var vfork, fork struct {
			ID int64 `json:"id"`
		}
		s.Do(t, apitest.Request{Method: "POST", Path: fmt.Sprintf("/projects/%d/fork", src.ID), Token: viewer.Token,
			JSON: map[string]any{"name": "lq vfork", "path": "lq-vfork"}}).Want(t, http.StatusCreated).JSON(t, &vfork)
		s.Do(t, apitest.Request{Method: "POST", Path: fmt.Sprintf("/projects/%d/fork", src.ID), Token: owner.Token,
			JSON: map[string]any{"namespace_id": g.ID, "name": "lq fork", "path": "lq-fork"}}).Want(t, http.StatusCreated).JSON(t, &fork)
		// The forks' copies write their rows when they finish (and move
		// the entities' versions): let them finish before counting, so
		// that every page after the first finds the entities cached.
		waitImport(t, s, viewer.Token, vfork.ID, "finished")
		waitImport(t, s, owner.Token, fork.ID, "finished")
		s.Do(t, apitest.Request{Method: "POST", Path: fmt.Sprintf("/projects/%d/star", src.ID), Token: viewer.Token}).Want(t, http.StatusCreated)

		for _, tok := range []string{s.RootToken, owner.Token, viewer.Token, ""} {
			qc.sameFrom(t, "/projects", tok, 2)
			qc.sameFrom(t, "/projects?simple=true", tok, 2)
			qc.sameFrom(t, "/projects?topic=all", tok, 2)
			qc.sameFrom(t, "/projects?pagination=keyset&order_by=id&sort=desc", tok, 2)
			qc.sameFrom(t, fmt.Sprintf("/groups/%d/projects", g.ID), tok, 2)
		}
		qc.sameFrom(t, "/projects?statistics=true", owner.Token, 2)
		qc.sameFrom(t, "/projects?membership=true", viewer.Token, 2)
	})
}

func TestListQueries_mergeRequestsPipelinesJobs(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		qc := newQueryCounter(t, s)
		owner := s.NewUser(t, "lqmowner")
		bob, carol := s.NewUser(t, "lqmbob"), s.NewUser(t, "lqmcarol")
		p := newCIProject(t, s, owner, "lqm", map[string]string{".gitlab-ci.yml": "a:\n  script: [x]\nb:\n  script: [y]\n"})
		agMember(t, s, p, bob, 30)
		agMember(t, s, p, carol, 30)
		s.Do(t, apitest.Request{Method: "POST", Path: fmt.Sprintf("/projects/%d/approval_rules", p.ID), Token: owner.Token,
			JSON: map[string]any{"name": "two", "approvals_required": 2, "user_ids": []int64{bob.ID, carol.ID}}}).Want(t, http.StatusCreated)
		for i := 0; i < listRows; i++ {
			br := fmt.Sprintf("lq%02d", i)
			p.commit(t, br, map[string]string{br + ".txt": br + "\n"})
			mrCreate(t, p, owner.Token, map[string]any{"source_branch": br, "target_branch": "main", "title": "lq " + br,
				"labels": []string{"l" + itoa(int64(i%3)), "all"}, "assignee_ids": []int64{bob.ID, carol.ID}, "reviewer_ids": []int64{carol.ID}})
		}
		mrDo(t, p, "POST", bob.Token, listRows, "/approve", nil).Want(t, http.StatusCreated)
		// The newest merge request is another project's: a page of 1 of
		// /merge_requests shows one project, the large page two (their
		// projects are read for the page, not per row).
		p2 := newCIProject(t, s, owner, "lqm2", nil)
		agMember(t, s, p2, bob, 30)
		p2.commit(t, "other", map[string]string{"o.txt": "o\n"})
		mrCreate(t, p2, owner.Token, map[string]any{"source_branch": "other", "target_branch": "main", "title": "other project"})
		// Every branch's push made a pipeline of two jobs.
		eventually(t, "the pipelines", func() bool {
			return len(p.pipelines(t, "per_page=100")) >= listRows+1
		})

		for _, tok := range []string{owner.Token, bob.Token} {
			qc.same(t, fmt.Sprintf("/projects/%d/merge_requests", p.ID), tok)
			qc.same(t, fmt.Sprintf("/projects/%d/merge_requests?view=simple", p.ID), tok)
			qc.same(t, fmt.Sprintf("/projects/%d/merge_requests?labels=all&with_labels_details=true", p.ID), tok)
			qc.same(t, "/merge_requests?scope=all", tok)
			qc.same(t, fmt.Sprintf("/projects/%d/pipelines", p.ID), tok)
			qc.same(t, fmt.Sprintf("/projects/%d/jobs", p.ID), tok)
		}
	})
}
