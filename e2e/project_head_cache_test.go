package e2e

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"quarry/internal/apitest"
	"quarry/internal/store"
)

// TestProjectHeadCache: on SQLite a project's head read for a caller
// (the versions and the caller's levels), and a project resolved with the
// caller's access, answer from memory until this process commits a write; every write forgets it, so a membership
// added, changed or removed, a project made private or a group's member
// removed shows in the very next read. On PostgreSQL every read reads
// the head; the answers are the same.
func TestProjectHeadCache(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		counts := make(chan int64, 1)
		hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			s.App.Tokens.ForgetAuthentications()
			ctx, c := store.CountQueries(r.Context())
			s.App.Handler.ServeHTTP(w, r.WithContext(ctx))
			counts <- c.N()
		}))
		t.Cleanup(hs.Close)
		owner := s.NewUser(t, "hcowner")
		reader := s.NewUser(t, "hcreader")
		var g, p struct {
			ID int64 `json:"id"`
		}
		s.Do(t, apitest.Request{Method: "POST", Path: "/groups", Token: owner.Token,
			JSON: map[string]any{"name": "HC Group", "path": "hc-group", "visibility": "public"}}).Want(t, http.StatusCreated).JSON(t, &g)
		s.Do(t, apitest.Request{Method: "POST", Path: "/projects", Token: owner.Token,
			JSON: map[string]any{"name": "headed", "namespace_id": g.ID, "visibility": "public"}}).Want(t, http.StatusCreated).JSON(t, &p)
		path := fmt.Sprintf("/projects/%d", p.ID)
		// read gets the project as the reader: its status, its
		// permissions and the statements it cost.
		read := func(t *testing.T) (int, any, int64) {
			t.Helper()
			r := s.Do(t, apitest.Request{Path: hs.URL + "/api/v4" + path, Token: reader.Token})
			n := <-counts
			if r.Status != http.StatusOK {
				return r.Status, nil, n
			}
			return r.Status, r.Object(t)["permissions"], n
		}
		access := func(level int) string {
			return fmt.Sprint(map[string]any{"project_access": map[string]any{"access_level": level, "notification_level": 3}, "group_access": nil})
		}
		noAccess := fmt.Sprint(map[string]any{"project_access": nil, "group_access": nil})
		check := func(t *testing.T, status int, perms string) {
			t.Helper()
			for i := 0; i < 2; i++ {
				st, got, _ := read(t)
				if st != status || (status == http.StatusOK && fmt.Sprint(got) != perms) {
					t.Fatalf("read %d: %d %v; want %d %s", i+1, st, got, status, perms)
				}
				// A page of the project's resolves it (projects.Resolve,
				// kept as the head is): the same answer.
				if r := s.Do(t, apitest.Request{Path: path + "/labels", Token: reader.Token}); r.Status != status {
					t.Fatalf("labels, read %d: %d; want %d", i+1, r.Status, status)
				}
			}
		}

		// With the entity's rows cached (a first read), a read that finds
		// the head in memory costs one statement fewer on SQLite.
		read(t)
		s.App.Projects.ForgetCachedReads()
		_, _, n1 := read(t)
		_, _, n2 := read(t)
		want := n1
		if s.Target.DatabaseURL == "" {
			want = n1 - 1
		}
		if n2 != want {
			t.Errorf("statements: %d for a read of the head, %d for the next; want %d", n1, n2, want)
		}
		check(t, http.StatusOK, noAccess)

		s.Do(t, apitest.Request{Method: "POST", Path: path + "/members", Token: owner.Token,
			JSON: map[string]any{"user_id": reader.ID, "access_level": 30}}).Want(t, http.StatusCreated)
		check(t, http.StatusOK, access(30))
		s.Do(t, apitest.Request{Method: "PUT", Path: fmt.Sprintf("%s/members/%d", path, reader.ID), Token: owner.Token,
			JSON: map[string]any{"access_level": 10}}).Want(t, http.StatusOK)
		check(t, http.StatusOK, access(10))
		s.Do(t, apitest.Request{Method: "PUT", Path: path, Token: owner.Token,
			JSON: map[string]any{"visibility": "private"}}).Want(t, http.StatusOK)
		check(t, http.StatusOK, access(10))
		s.Do(t, apitest.Request{Method: "DELETE", Path: fmt.Sprintf("%s/members/%d", path, reader.ID), Token: owner.Token}).Want(t, http.StatusNoContent)
		check(t, http.StatusNotFound, "")

		// Through the group: added, then removed.
		s.Do(t, apitest.Request{Method: "POST", Path: fmt.Sprintf("/groups/%d/members", g.ID), Token: owner.Token,
			JSON: map[string]any{"user_id": reader.ID, "access_level": 20}}).Want(t, http.StatusCreated)
		st, got, _ := read(t)
		if st != http.StatusOK || fmt.Sprint(got) != fmt.Sprint(map[string]any{"project_access": nil,
			"group_access": map[string]any{"access_level": 20, "notification_level": 3}}) {
			t.Fatalf("as a group reporter: %d %v", st, got)
		}
		s.Do(t, apitest.Request{Method: "DELETE", Path: fmt.Sprintf("/groups/%d/members/%d", g.ID, reader.ID), Token: owner.Token}).Want(t, http.StatusNoContent)
		check(t, http.StatusNotFound, "")
	})
}
