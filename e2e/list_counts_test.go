package e2e

import (
	"fmt"
	"net/http"
	"strconv"
	"testing"

	"quarry/internal/apitest"
)

// TestListCounts_maintained: the administrator's unfiltered project and
// user lists take X-Total from the counts the database's triggers keep
// (row_counts) instead of counting; after creating projects and users,
// deleting a project (pending, then gone) and deleting a user, each
// total is still the number of rows its list has (read whole on its last
// page, which tells its total without counting).
func TestListCounts_maintained(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		owner := s.NewUser(t, "lcowner")
		var ids []int64
		for i := 0; i < 4; i++ {
			var p struct {
				ID int64 `json:"id"`
			}
			s.Do(t, apitest.Request{Method: "POST", Path: "/projects", Token: owner.Token,
				JSON: map[string]any{"name": fmt.Sprintf("lc %d", i), "visibility": "public"}}).Want(t, http.StatusCreated).JSON(t, &p)
			ids = append(ids, p.ID)
		}
		extra := s.NewUser(t, "lcextra")
		consistent := func(path string, want int) bool {
			total := s.Get(t, path+"?per_page=1", s.RootToken).Want(t, http.StatusOK).Header.Get("X-Total")
			all := len(s.Get(t, path+"?per_page=100", s.RootToken).Want(t, http.StatusOK).Array(t))
			return total == strconv.Itoa(all) && (want < 0 || all == want)
		}
		users := len(s.Get(t, "/users?per_page=100", s.RootToken).Want(t, http.StatusOK).Array(t))
		if !consistent("/projects", 4) || !consistent("/users", -1) {
			t.Fatal("after creating: X-Total is not the number of rows")
		}
		s.Do(t, apitest.Request{Method: "DELETE", Path: fmt.Sprintf("/projects/%d", ids[0]), Token: owner.Token}).Want(t, http.StatusAccepted)
		eventually(t, "the deleted project out of the list and its total", func() bool { return consistent("/projects", 3) })
		s.Do(t, apitest.Request{Method: "DELETE", Path: "/users/" + itoa(extra.ID) + "?hard_delete=true", Token: s.RootToken}).Want(t, http.StatusNoContent)
		eventually(t, "the deleted user out of the list and its total", func() bool { return consistent("/users", users-1) })
	})
}
