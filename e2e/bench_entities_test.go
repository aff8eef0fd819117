package e2e

import (
	"fmt"
	"testing"
)

// BenchmarkEntities reads single entities and the pages of projects and
// users that the entity cache serves (issue 27), as the administrator and
// as a signed-in user without membership, 8 clients per core, over the
// lists' server (1,000 users and public projects).
func BenchmarkEntities(b *testing.B) {
	s, _ := listsServer(b, 1000, 1000, 100, 200, 200, 1000, &listsBench)
	user := s.NewUser(b, "entity-bench-reader")
	var ps []struct {
		ID int64 `json:"id"`
	}
	s.Get(b, "/projects?per_page=1&order_by=id&sort=desc", s.RootToken).Want(b, 200).JSON(b, &ps)
	var us []struct {
		ID int64 `json:"id"`
	}
	s.Get(b, "/users?per_page=1&order_by=id&sort=desc&username=user000500", s.RootToken).Want(b, 200).JSON(b, &us)
	if len(ps) != 1 || len(us) != 1 {
		b.Fatalf("no project or user to read: %v %v", ps, us)
	}
	api := s.URL + "/api/v4"
	cases := []benchShape{
		{"project/admin", fmt.Sprintf("%s/projects/%d", api, ps[0].ID), s.RootToken},
		{"project/user", fmt.Sprintf("%s/projects/%d", api, ps[0].ID), user.Token},
		{"user/admin", fmt.Sprintf("%s/users/%d", api, us[0].ID), s.RootToken},
		{"projects/page=1", api + "/projects?per_page=20", s.RootToken},
		{"users/page=1", api + "/users?per_page=20", s.RootToken},
	}
	benchShapes(b, cases)
}
