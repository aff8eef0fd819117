package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"quarry/internal/apitest"
)

type memberFixture struct {
	s                    *apitest.Server
	owner, dev, outsider apitest.User
	group, sub, project  int64
}

// memberWorld: owner has a private group with a subgroup and a project in
// the subgroup.
func memberWorld(t *testing.T, s *apitest.Server) memberFixture {
	f := memberFixture{s: s, owner: s.NewUser(t, "owner"), dev: s.NewUser(t, "dev"), outsider: s.NewUser(t, "outsider")}
	var g struct{ ID int64 }
	s.Do(t, apitest.Request{Method: "POST", Path: "/groups", Token: f.owner.Token, JSON: map[string]any{"name": "Top", "path": "top"}}).Want(t, 201).JSON(t, &g)
	f.group = g.ID
	s.Do(t, apitest.Request{Method: "POST", Path: "/groups", Token: f.owner.Token, JSON: map[string]any{"name": "Sub", "path": "sub", "parent_id": g.ID}}).Want(t, 201).JSON(t, &g)
	f.sub = g.ID
	s.Do(t, apitest.Request{Method: "POST", Path: "/projects", Token: f.owner.Token, JSON: map[string]any{"name": "app", "namespace_id": f.sub, "initialize_with_readme": true}}).Want(t, 201).JSON(t, &g)
	f.project = g.ID
	return f
}

func (f memberFixture) add(t *testing.T, token, kind string, id int64, body map[string]any) *apitest.Response {
	return f.s.Do(t, apitest.Request{Method: "POST", Path: fmt.Sprintf("/%s/%d/members", kind, id), Token: token, JSON: body})
}

func TestMembers_addListAndAccess(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		unknownID := s.AbsentID(t)
		f := memberWorld(t, s)
		proj := "/projects/" + itoa(f.project)
		s.Get(t, proj, f.dev.Token).Want(t, 404)
		s.Get(t, proj+"/members", "").Want(t, 401)
		m := f.add(t, f.owner.Token, "projects", f.project, map[string]any{"user_id": f.dev.ID, "access_level": 30, "expires_at": "2099-12-31"}).Want(t, 201).Object(t)
		if m["id"] != float64(f.dev.ID) || m["username"] != "dev" || m["access_level"] != float64(30) || m["expires_at"] != "2099-12-31" ||
			m["membership_state"] != "active" || m["created_by"].(map[string]any)["username"] != "owner" {
			t.Errorf("member %v", m)
		}
		s.Get(t, proj, f.dev.Token).Want(t, 200)
		f.add(t, f.owner.Token, "projects", f.project, map[string]any{"user_id": f.dev.ID, "access_level": 30}).Want(t, 409).WantBody(t, `{"message":"Member already exists"}`)
		f.add(t, f.owner.Token, "projects", f.project, map[string]any{"user_id": unknownID, "access_level": 30}).Want(t, 404).WantBody(t, `{"message":"404 User Not Found"}`)
		f.add(t, f.owner.Token, "projects", f.project, map[string]any{"user_id": f.outsider.ID, "access_level": 50}).Want(t, 400).
			WantBody(t, `{"message":{"access_level":["is not included in the list"]}}`)
		f.add(t, f.owner.Token, "projects", f.project, map[string]any{"user_id": f.outsider.ID, "access_level": 31}).Want(t, 400)
		f.add(t, f.owner.Token, "projects", f.project, map[string]any{"user_id": f.outsider.ID, "access_level": 10, "expires_at": "2001-01-01"}).Want(t, 400).
			WantBody(t, `{"message":{"expires_at":["cannot be a date in the past"]}}`)
		f.add(t, f.owner.Token, "projects", f.project, map[string]any{"access_level": 10}).Want(t, 400).
			WantBody(t, `{"error":"user_id, username are missing, exactly one parameter must be provided"}`)
		f.add(t, f.owner.Token, "projects", f.project, map[string]any{"user_id": f.outsider.ID}).Want(t, 400).WantBody(t, `{"error":"access_level is missing"}`)
		f.add(t, f.owner.Token, "projects", f.project, map[string]any{"user_id": f.outsider.ID, "access_level": 10, "tasks_to_be_done": []string{"ci"}}).Want(t, 400).
			WantBody(t, `{"error":"tasks_to_be_done, tasks_project_id provide all or none of parameters"}`)
		f.add(t, f.owner.Token, "projects", f.project, map[string]any{"user_id": f.outsider.ID, "access_level": 10, "tasks_to_be_done": []string{"chores"}, "tasks_project_id": f.project}).Want(t, 400).
			WantBody(t, `{"error":"tasks_to_be_done does not have a valid value"}`)
		// A developer may not manage members; an outsider does not see the project.
		f.add(t, f.dev.Token, "projects", f.project, map[string]any{"user_id": f.outsider.ID, "access_level": 10}).Want(t, 403)
		f.add(t, f.outsider.Token, "projects", f.project, map[string]any{"user_id": f.outsider.ID, "access_level": 10}).Want(t, 404)
		// Several users at once, by username.
		a, b := s.NewUser(t, "anna"), s.NewUser(t, "ben")
		f.add(t, f.owner.Token, "projects", f.project, map[string]any{"username": "anna,ben", "access_level": 20}).Want(t, 201).WantBody(t, `{"status":"success"}`)
		r := f.add(t, f.owner.Token, "projects", f.project, map[string]any{"user_id": fmt.Sprintf("%d,%d", a.ID, f.outsider.ID), "access_level": 20}).Want(t, 201).Object(t)
		if r["status"] != "error" || !strings.Contains(fmt.Sprint(r["message"]), "Member already exists") {
			t.Errorf("multi add %v", r)
		}
		_ = b
		// Direct list with filters.
		names := func(path string) string {
			var out []string
			for _, m := range s.Get(t, path, f.dev.Token).Want(t, 200).Array(t) {
				out = append(out, fmt.Sprintf("%s:%v", m["username"], m["access_level"]))
			}
			return strings.Join(out, ",")
		}
		if got := names(proj + "/members"); got != "dev:30,anna:20,ben:20,outsider:20" {
			t.Errorf("direct members %s", got)
		}
		if got := names(proj + "/members?query=an"); got != "anna:20" {
			t.Errorf("query %s", got)
		}
		if got := names(proj + "/members?user_ids[]=" + itoa(b.ID)); got != "ben:20" {
			t.Errorf("user_ids %s", got)
		}
		// Inherited: the group owner comes from the top group.
		if got := names(proj + "/members/all"); got != "owner:50,dev:30,outsider:20,anna:20,ben:20" {
			t.Errorf("all members %s", got)
		}
		all := s.Get(t, proj+"/members/all/"+itoa(f.owner.ID), f.dev.Token).Want(t, 200).Object(t)
		if all["access_level"] != float64(50) {
			t.Errorf("inherited owner %v", all)
		}
		s.Get(t, proj+"/members/"+itoa(f.owner.ID), f.dev.Token).Want(t, 404).WantBody(t, `{"message":"404 Not found"}`)
		s.Get(t, proj+"/members/"+itoa(f.dev.ID), f.dev.Token).Want(t, 200)
	})
}

func TestMembers_inheritanceUpdateRemove(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		f := memberWorld(t, s)
		top := "/groups/" + itoa(f.group)
		// A group reporter reaches the subgroup's project.
		f.add(t, f.owner.Token, "groups", f.group, map[string]any{"user_id": f.dev.ID, "access_level": 20}).Want(t, 201)
		s.Get(t, "/projects/"+itoa(f.project), f.dev.Token).Want(t, 200)
		if got := s.Get(t, "/groups/"+itoa(f.sub)+"/members/all/"+itoa(f.dev.ID), f.dev.Token).Want(t, 200).Object(t); got["access_level"] != float64(20) {
			t.Errorf("inherited level %v", got["access_level"])
		}
		// A direct membership below the inherited level is refused.
		f.add(t, f.owner.Token, "projects", f.project, map[string]any{"user_id": f.dev.ID, "access_level": 10}).Want(t, 400).
			WantBody(t, `{"message":{"access_level":["should be greater than or equal to Reporter inherited membership from group Top"]}}`)
		// A higher one wins in members/all.
		f.add(t, f.owner.Token, "projects", f.project, map[string]any{"user_id": f.dev.ID, "access_level": 40}).Want(t, 201)
		if got := s.Get(t, "/projects/"+itoa(f.project)+"/members/all/"+itoa(f.dev.ID), f.dev.Token).Object(t); got["access_level"] != float64(40) {
			t.Errorf("highest level %v", got["access_level"])
		}
		// Update.
		r := s.Do(t, apitest.Request{Method: "PUT", Path: top + "/members/" + itoa(f.dev.ID), Token: f.owner.Token, JSON: map[string]any{"access_level": 30, "expires_at": "2099-01-01"}}).Want(t, 200).Object(t)
		if r["access_level"] != float64(30) || r["expires_at"] != "2099-01-01" {
			t.Errorf("updated %v", r)
		}
		s.Do(t, apitest.Request{Method: "PUT", Path: top + "/members/" + itoa(f.outsider.ID), Token: f.owner.Token, JSON: map[string]any{"access_level": 30}}).Want(t, 404).
			WantBody(t, `{"message":"404 Not found"}`)
		s.Do(t, apitest.Request{Method: "PUT", Path: top + "/members/" + itoa(f.dev.ID), Token: f.dev.Token, JSON: map[string]any{"access_level": 50}}).Want(t, 403)
		// The last owner stays.
		s.Do(t, apitest.Request{Method: "PUT", Path: top + "/members/" + itoa(f.owner.ID), Token: f.owner.Token, JSON: map[string]any{"access_level": 40}}).Want(t, 403)
		s.Do(t, apitest.Request{Method: "DELETE", Path: top + "/members/" + itoa(f.owner.ID), Token: f.owner.Token}).Want(t, 403)
		// Override flag.
		r = s.Do(t, apitest.Request{Method: "POST", Path: top + "/members/" + itoa(f.dev.ID) + "/override", Token: f.owner.Token}).Want(t, 201).Object(t)
		if r["override"] != true {
			t.Errorf("override %v", r["override"])
		}
		r = s.Do(t, apitest.Request{Method: "DELETE", Path: top + "/members/" + itoa(f.dev.ID) + "/override", Token: f.owner.Token}).Want(t, 200).Object(t)
		if r["override"] != false {
			t.Errorf("override cleared %v", r["override"])
		}
		// Removing the group membership removes the project one too...
		s.Do(t, apitest.Request{Method: "DELETE", Path: top + "/members/" + itoa(f.dev.ID), Token: f.owner.Token}).Want(t, 204)
		s.Get(t, "/projects/"+itoa(f.project), f.dev.Token).Want(t, 404)
		// ...unless skip_subresources is set.
		f.add(t, f.owner.Token, "groups", f.group, map[string]any{"user_id": f.dev.ID, "access_level": 20}).Want(t, 201)
		f.add(t, f.owner.Token, "projects", f.project, map[string]any{"user_id": f.dev.ID, "access_level": 30}).Want(t, 201)
		s.Do(t, apitest.Request{Method: "DELETE", Path: top + "/members/" + itoa(f.dev.ID) + "?skip_subresources=true", Token: f.owner.Token}).Want(t, 204)
		s.Get(t, "/projects/"+itoa(f.project), f.dev.Token).Want(t, 200)
		// A member may leave.
		s.Do(t, apitest.Request{Method: "DELETE", Path: "/projects/" + itoa(f.project) + "/members/" + itoa(f.dev.ID), Token: f.dev.Token}).Want(t, 204)
		s.Get(t, "/projects/"+itoa(f.project), f.dev.Token).Want(t, 404)
		s.Do(t, apitest.Request{Method: "DELETE", Path: top + "/members/" + itoa(f.dev.ID), Token: f.owner.Token}).Want(t, 404)
	})
}

func TestMembers_expiryAndShares(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		f := memberWorld(t, s)
		today := time.Now().UTC().Format("2006-01-02")
		// Expiring today: no access from that day on.
		f.add(t, f.owner.Token, "projects", f.project, map[string]any{"user_id": f.dev.ID, "access_level": 30, "expires_at": today}).Want(t, 201)
		s.Get(t, "/projects/"+itoa(f.project), f.dev.Token).Want(t, 404)
		s.Do(t, apitest.Request{Method: "PUT", Path: "/projects/" + itoa(f.project) + "/members/" + itoa(f.dev.ID), Token: f.owner.Token,
			JSON: map[string]any{"access_level": 30, "expires_at": "2099-01-01"}}).Want(t, 200)
		s.Get(t, "/projects/"+itoa(f.project), f.dev.Token).Want(t, 200)
		// A project shared with a group: its members reach it, capped.
		var g struct{ ID int64 }
		s.Do(t, apitest.Request{Method: "POST", Path: "/groups", Token: f.outsider.Token, JSON: map[string]any{"name": "Guests", "path": "guests", "visibility": "public"}}).Want(t, 201).JSON(t, &g)
		s.Get(t, "/projects/"+itoa(f.project), f.outsider.Token).Want(t, 404)
		s.Do(t, apitest.Request{Method: "POST", Path: "/projects/" + itoa(f.project) + "/share", Token: f.owner.Token, JSON: map[string]any{"group_id": g.ID, "group_access": 20}}).Want(t, 201)
		s.Get(t, "/projects/"+itoa(f.project), f.outsider.Token).Want(t, 200)
		m := s.Get(t, "/projects/"+itoa(f.project)+"/members/all/"+itoa(f.outsider.ID), f.owner.Token).Want(t, 200).Object(t)
		if m["access_level"] != float64(20) {
			t.Errorf("shared member level %v; want 20 (capped from owner)", m["access_level"])
		}
	})
}

func TestMembers_pendingAndBillable(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		f := memberWorld(t, s)
		top := "/groups/" + itoa(f.group)
		x, y := s.NewUser(t, "xena"), s.NewUser(t, "yuri")
		f.add(t, f.owner.Token, "groups", f.group, map[string]any{"user_id": f.dev.ID, "access_level": 30}).Want(t, 201)
		f.add(t, f.owner.Token, "projects", f.project, map[string]any{"user_id": x.ID, "access_level": 20}).Want(t, 201)
		list := s.Get(t, top+"/billable_members", f.owner.Token).Want(t, 200).Array(t)
		var names []string
		for _, b := range list {
			names = append(names, fmt.Sprintf("%s:%s", b["username"], b["membership_type"]))
		}
		if strings.Join(names, ",") != "owner:group_member,dev:group_member,xena:project_member" {
			t.Errorf("billable %v", names)
		}
		sorted := s.Get(t, top+"/billable_members?sort=name_desc", f.owner.Token).Array(t)
		if sorted[0]["username"] != "xena" {
			t.Errorf("name_desc first %v", sorted[0]["username"])
		}
		if got := s.Get(t, top+"/billable_members?search=xen", f.owner.Token).Array(t); len(got) != 1 {
			t.Errorf("search %d", len(got))
		}
		s.Get(t, top+"/billable_members?sort=tallest", f.owner.Token).Want(t, 400)
		s.Get(t, "/groups/"+itoa(f.sub)+"/billable_members", f.owner.Token).Want(t, 400)
		s.Get(t, top+"/billable_members", f.dev.Token).Want(t, 403)
		ms := s.Get(t, top+"/billable_members/"+itoa(x.ID)+"/memberships", f.owner.Token).Want(t, 200).Array(t)
		if len(ms) != 1 || ms[0]["source_full_name"] != "Top / Sub / app" || ms[0]["access_level"].(map[string]any)["string_value"] != "Reporter" {
			t.Errorf("memberships %v", ms)
		}
		s.Do(t, apitest.Request{Method: "DELETE", Path: top + "/billable_members/" + itoa(x.ID), Token: f.owner.Token}).Want(t, 204)
		s.Get(t, "/projects/"+itoa(f.project), x.Token).Want(t, 404)
		s.Do(t, apitest.Request{Method: "DELETE", Path: top + "/billable_members/" + itoa(x.ID), Token: f.owner.Token}).Want(t, 404)
		// No cap configured: nobody waits, approval finds nothing.
		s.Do(t, apitest.Request{Method: "PUT", Path: top + "/members/" + itoa(y.ID) + "/approve", Token: f.owner.Token}).Want(t, 404)
		s.Do(t, apitest.Request{Method: "POST", Path: top + "/members/approve_all", Token: f.owner.Token}).Want(t, 201)
	})
}

func TestMembers_userCapAndApproval(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		f := memberWorld(t, s)
		top := "/groups/" + itoa(f.group)
		x, y := s.NewUser(t, "xena"), s.NewUser(t, "yuri")
		f.add(t, f.owner.Token, "groups", f.group, map[string]any{"user_id": f.dev.ID, "access_level": 30}).Want(t, 201)
		// owner and dev fill the cap of 2: the next members wait.
		for _, u := range []apitest.User{x, y} {
			m := f.add(t, f.owner.Token, "groups", f.group, map[string]any{"user_id": u.ID, "access_level": 20}).Want(t, 201).Object(t)
			if m["membership_state"] != "awaiting" {
				t.Errorf("%s state %v", u.Username, m["membership_state"])
			}
		}
		s.Get(t, top, x.Token).Want(t, 404)
		pending := s.Get(t, top+"/pending_members", f.owner.Token).Want(t, 200).Array(t)
		if len(pending) != 2 {
			t.Errorf("pending %d", len(pending))
		}
		s.Do(t, apitest.Request{Method: "PUT", Path: top + "/members/" + itoa(x.ID) + "/approve", Token: f.owner.Token}).Want(t, 200)
		s.Get(t, top, x.Token).Want(t, 200)
		s.Do(t, apitest.Request{Method: "PUT", Path: top + "/members/" + itoa(x.ID) + "/approve", Token: f.owner.Token}).Want(t, 404)
		s.Do(t, apitest.Request{Method: "POST", Path: top + "/members/approve_all", Token: f.dev.Token}).Want(t, 403)
		s.Do(t, apitest.Request{Method: "POST", Path: top + "/members/approve_all", Token: f.owner.Token}).Want(t, 201)
		s.Get(t, top, y.Token).Want(t, 200)
		if got := s.Get(t, top+"/pending_members", f.owner.Token).Array(t); len(got) != 0 {
			t.Errorf("still pending %d", len(got))
		}
	}, func(c *config) { c.UserCap = 2 })
}
