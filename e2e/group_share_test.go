package e2e

import (
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	gitlab "gitlab.com/gitlab-org/api/client-go"

	"quarry/internal/apitest"
	cfgpkg "quarry/internal/config"
	"quarry/internal/storetest"
)

// shareWorld: owner has a private group "shared" with a subgroup "sub"
// holding a private project "app" (with a README); lead has an internal
// group "org/team" with dev (developer) and watcher (guest) as members,
// orgman a maintainer of "org" only, and a private group "hidden";
// outsider belongs nowhere.
type shareWorld struct {
	s                                           *apitest.Server
	owner, lead, dev, watcher, orgman, outsider apitest.User
	shared, sub, team, hidden, parentOfT        int64
	project                                     int64
}

func newShareWorld(t *testing.T, s *apitest.Server) shareWorld {
	t.Helper()
	w := shareWorld{s: s, owner: s.NewUser(t, "owner"), lead: s.NewUser(t, "lead"), dev: s.NewUser(t, "dev"),
		watcher: s.NewUser(t, "watcher"), orgman: s.NewUser(t, "orgman"), outsider: s.NewUser(t, "outsider")}
	group := func(token string, body map[string]any) int64 {
		var g struct{ ID int64 }
		s.Do(t, apitest.Request{Method: "POST", Path: "/groups", Token: token, JSON: body}).Want(t, 201).JSON(t, &g)
		return g.ID
	}
	w.shared = group(w.owner.Token, map[string]any{"name": "Shared", "path": "shared"})
	w.sub = group(w.owner.Token, map[string]any{"name": "Sub", "path": "sub", "parent_id": w.shared})
	var p struct{ ID int64 }
	s.Do(t, apitest.Request{Method: "POST", Path: "/projects", Token: w.owner.Token, JSON: map[string]any{"name": "app", "namespace_id": w.sub,
		"initialize_with_readme": true, "visibility": "private"}}).Want(t, 201).JSON(t, &p)
	w.project = p.ID
	w.parentOfT = group(w.lead.Token, map[string]any{"name": "Org", "path": "org", "visibility": "internal"})
	w.team = group(w.lead.Token, map[string]any{"name": "Team", "path": "team", "visibility": "internal", "parent_id": w.parentOfT})
	w.hidden = group(w.lead.Token, map[string]any{"name": "Hidden", "path": "hidden"})
	for _, m := range []struct {
		u     apitest.User
		group int64
		level int
	}{{w.dev, w.team, 30}, {w.watcher, w.team, 10}, {w.orgman, w.parentOfT, 40}} {
		s.Do(t, apitest.Request{Method: "POST", Path: "/groups/" + itoa(m.group) + "/members", Token: w.lead.Token,
			JSON: map[string]any{"user_id": m.u.ID, "access_level": m.level}}).Want(t, 201)
	}
	return w
}

func (w shareWorld) share(t *testing.T, token string, group int64, body map[string]any) *apitest.Response {
	t.Helper()
	return w.s.Do(t, apitest.Request{Method: "POST", Path: "/groups/" + itoa(group) + "/share", Token: token, JSON: body})
}

func (w shareWorld) unshare(t *testing.T, token string, group int64, with string) *apitest.Response {
	t.Helper()
	return w.s.Do(t, apitest.Request{Method: "DELETE", Path: "/groups/" + itoa(group) + "/share/" + with, Token: token})
}

func TestGroupShare_shareDetailsAndUnshare(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		w := newShareWorld(t, s)
		absent := s.AbsentID(t)
		proj := "/projects/" + itoa(w.project)
		s.Get(t, proj, w.dev.Token).Want(t, 404)

		// The official client shares; the answer is the shared group's
		// details with the share listed.
		c := s.Client(t, w.owner.Token)
		expires := gitlab.ISOTime(time.Date(2099, 12, 31, 0, 0, 0, 0, time.UTC))
		g, resp, err := c.Groups.ShareGroupWithGroup(w.shared, &gitlab.ShareGroupWithGroupOptions{GroupID: gitlab.Ptr(w.team),
			GroupAccess: gitlab.Ptr(gitlab.DeveloperPermissions), ExpiresAt: &expires})
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != 201 || g.ID != w.shared || len(g.SharedWithGroups) != 1 {
			t.Fatalf("share: %d %+v", resp.StatusCode, g)
		}
		if sg := g.SharedWithGroups[0]; sg.GroupID != w.team || sg.GroupName != "Team" || sg.GroupFullPath != "org/team" ||
			sg.GroupAccessLevel != 30 || sg.ExpiresAt == nil || sg.ExpiresAt.String() != "2099-12-31" {
			t.Errorf("shared_with_groups %+v", sg)
		}
		// The raw shape: numbers, strings, the date as YYYY-MM-DD; no
		// project lists in the answer to a share.
		detail := s.Get(t, "/groups/"+itoa(w.shared), w.owner.Token).Want(t, 200).Object(t)
		list, _ := detail["shared_with_groups"].([]any)
		if len(list) != 1 {
			t.Fatalf("details shared_with_groups %v", detail["shared_with_groups"])
		}
		want := map[string]any{"group_id": float64(w.team), "group_name": "Team", "group_full_path": "org/team", "group_access_level": float64(30),
			"expires_at": "2099-12-31"}
		if got := list[0].(map[string]any); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("shared group %v; want %v", got, want)
		}
		// The subgroup's own details list no share (GitLab lists a group's
		// own links only).
		if sub := s.Get(t, "/groups/"+itoa(w.sub), w.owner.Token).Want(t, 200).Object(t); len(sub["shared_with_groups"].([]any)) != 0 {
			t.Errorf("subgroup shared_with_groups %v", sub["shared_with_groups"])
		}
		raw := w.share(t, w.owner.Token, w.sub, map[string]any{"group_id": w.team, "group_access": 20}).Want(t, 201).Object(t)
		if _, ok := raw["projects"]; ok || raw["id"] != float64(w.sub) {
			t.Errorf("share answer %v", raw)
		}

		// The team's developer reaches the shared tree; the project lists it.
		got := s.Get(t, proj, w.dev.Token).Want(t, 200).Object(t)
		// A share is no membership: the project's permissions show none
		// (GitLab shows group_access for memberships in the group tree).
		if perm := got["permissions"].(map[string]any); perm["group_access"] != nil || perm["project_access"] != nil {
			t.Errorf("permissions through a share %v; want none", perm)
		}
		// members/all of the shared tree lists the invited group's members,
		// capped at the share's level (the sub's own share is reporter, the
		// parent's developer: the higher wins), for those who can see the
		// invited group.
		all := s.Get(t, "/projects/"+itoa(w.project)+"/members/all", w.owner.Token).Want(t, 200).Array(t)
		levels := map[string]float64{}
		for _, m := range all {
			levels[m["username"].(string)] = m["access_level"].(float64)
		}
		if levels["dev"] != 30 || levels["watcher"] != 10 || levels["owner"] != 50 {
			t.Errorf("members/all through shares %v", levels)
		}
		if _, ok := levels["orgman"]; ok {
			t.Errorf("a member of the invited group's parent got access: %v", levels)
		}
		one := s.Get(t, "/groups/"+itoa(w.shared)+"/members/all/"+itoa(w.dev.ID), w.owner.Token).Want(t, 200).Object(t)
		if one["access_level"] != float64(30) {
			t.Errorf("members/all/:dev %v", one)
		}
		s.Get(t, "/groups/"+itoa(w.shared), w.dev.Token).Want(t, 200)
		s.Get(t, "/groups/"+itoa(w.sub), w.dev.Token).Want(t, 200)
		s.Get(t, proj+"/repository/files/README.md?ref=main", w.dev.Token).Want(t, 200)
		var mine []map[string]any
		s.Get(t, "/projects?membership=true", w.dev.Token).Want(t, 200).JSON(t, &mine)
		if len(mine) != 1 || mine[0]["id"] != float64(w.project) {
			t.Errorf("developer's member projects %v", mine)
		}
		var groups []map[string]any
		s.Get(t, "/groups", w.dev.Token).Want(t, 200).JSON(t, &groups)
		if names := groupPaths(groups); names != "shared,shared/sub,org/team" {
			t.Errorf("developer's groups %s", names)
		}
		// A member of the invited group's parent is not a member of the
		// invited group: GitLab gives shares to direct members only.
		s.Get(t, "/groups/"+itoa(w.team), w.orgman.Token).Want(t, 200)
		s.Get(t, proj, w.orgman.Token).Want(t, 404)
		s.Get(t, proj, w.outsider.Token).Want(t, 404)

		// Who sees the share in the details: the invited group must be
		// visible to the caller.
		hiddenShare := w.share(t, s.RootToken, w.shared, map[string]any{"group_id": w.hidden, "group_access": 10}).Want(t, 201).Object(t)
		if n := len(hiddenShare["shared_with_groups"].([]any)); n != 2 {
			t.Errorf("administrator sees %d shares; want 2", n)
		}
		if n := len(s.Get(t, "/groups/"+itoa(w.shared), w.dev.Token).Want(t, 200).Object(t)["shared_with_groups"].([]any)); n != 1 {
			t.Errorf("developer sees %d shares; want 1 (the hidden group is private)", n)
		}

		// Errors, in GitLab's order and shapes.
		w.share(t, w.owner.Token, w.shared, map[string]any{"group_id": w.team, "group_access": 40}).Want(t, 409).
			WantBody(t, `{"message":"Shared group The group has already been shared with this group"}`)
		w.share(t, w.owner.Token, w.shared, map[string]any{}).Want(t, 400).WantBody(t, `{"error":"group_id is missing, group_access is missing"}`)
		w.share(t, w.owner.Token, w.shared, map[string]any{"group_id": w.team}).Want(t, 400).WantBody(t, `{"error":"group_access is missing"}`)
		w.share(t, w.owner.Token, w.shared, map[string]any{"group_id": w.team, "group_access": 35}).Want(t, 400).
			WantBody(t, `{"error":"group_access does not have a valid value"}`)
		w.share(t, w.owner.Token, w.shared, map[string]any{"group_id": w.team, "group_access": "x"}).Want(t, 400).
			WantBody(t, `{"error":"group_access is invalid"}`)
		w.share(t, w.owner.Token, w.shared, map[string]any{"group_id": "team", "group_access": 30}).Want(t, 400).
			WantBody(t, `{"error":"group_id is invalid"}`)
		w.share(t, w.owner.Token, w.shared, map[string]any{"group_id": w.team, "group_access": 30, "expires_at": "soon"}).Want(t, 400).
			WantBody(t, `{"error":"expires_at is invalid"}`)
		w.share(t, w.owner.Token, w.sub, map[string]any{"group_id": w.hidden, "group_access": 30, "expires_at": "2001-01-01"}).Want(t, 404)
		w.share(t, w.owner.Token, w.sub, map[string]any{"group_id": w.parentOfT, "group_access": 30, "expires_at": "2001-01-01"}).Want(t, 400).
			WantBody(t, `{"message":{"expires_at":["must be in the future"]}}`)
		w.share(t, w.owner.Token, w.shared, map[string]any{"group_id": absent, "group_access": 30}).Want(t, 404).
			WantBody(t, `{"message":"404 Group Not Found"}`)
		w.share(t, w.owner.Token, w.shared, map[string]any{"group_id": "99999999999999999999999", "group_access": 30}).Want(t, 404).
			WantBody(t, `{"message":"404 Group Not Found"}`)
		// The owner does not see the private "hidden" group.
		w.share(t, w.owner.Token, w.sub, map[string]any{"group_id": w.hidden, "group_access": 30}).Want(t, 404).
			WantBody(t, `{"message":"404 Group Not Found"}`)
		w.share(t, w.owner.Token, absent, map[string]any{"group_id": w.team, "group_access": 30}).Want(t, 404).
			WantBody(t, `{"message":"404 Group Not Found"}`)
		w.share(t, "", w.shared, map[string]any{"group_id": w.team, "group_access": 30}).Want(t, 401)
		// Not an owner of the shared group: GitLab's bare 404.
		w.share(t, w.dev.Token, w.shared, map[string]any{"group_id": w.team, "group_access": 30}).Want(t, 404).WantBody(t, `{"message":"Not Found"}`)
		w.share(t, w.outsider.Token, w.shared, map[string]any{"group_id": w.team, "group_access": 30}).Want(t, 404).
			WantBody(t, `{"message":"404 Group Not Found"}`)

		// Unsharing.
		w.unshare(t, w.owner.Token, w.shared, "abc").Want(t, 400).WantBody(t, `{"error":"group_id is invalid"}`)
		w.unshare(t, w.owner.Token, w.shared, itoa(absent)).Want(t, 404).WantBody(t, `{"message":"404 Group Link Not Found"}`)
		w.unshare(t, w.owner.Token, w.shared, "99999999999999999999999").Want(t, 404).WantBody(t, `{"message":"404 Group Link Not Found"}`)
		w.unshare(t, w.owner.Token, absent, itoa(w.team)).Want(t, 404).WantBody(t, `{"message":"404 Group Not Found"}`)
		w.unshare(t, w.outsider.Token, w.shared, itoa(w.team)).Want(t, 404).WantBody(t, `{"message":"404 Group Not Found"}`)
		w.unshare(t, "", w.shared, itoa(w.team)).Want(t, 401)
		// A non-owner is refused and nothing changes (GitLab answers 204
		// and removes nothing; Quarry says so).
		w.unshare(t, w.dev.Token, w.shared, itoa(w.team)).Want(t, 403).WantBody(t, `{"message":"403 Forbidden"}`)
		s.Get(t, proj, w.dev.Token).Want(t, 200)
		if _, err := c.Groups.UnshareGroupFromGroup(w.shared, w.team); err != nil {
			t.Fatal(err)
		}
		// The subgroup's own share (reporter) still reaches the project.
		if got := s.Get(t, proj, w.dev.Token).Want(t, 200).Object(t); got["id"] != float64(w.project) {
			t.Errorf("project through the subgroup's share %v", got)
		}
		w.unshare(t, w.owner.Token, w.sub, itoa(w.team)).Want(t, 204)
		s.Get(t, proj, w.dev.Token).Want(t, 404)
		s.Get(t, "/groups/"+itoa(w.shared), w.dev.Token).Want(t, 404)
		w.unshare(t, w.owner.Token, w.shared, itoa(w.team)).Want(t, 404).WantBody(t, `{"message":"404 Group Link Not Found"}`)
		if n := len(s.Get(t, "/groups/"+itoa(w.shared), w.owner.Token).Want(t, 200).Object(t)["shared_with_groups"].([]any)); n != 0 {
			t.Errorf("owner sees %d shares after unsharing; want 0 (hidden is invisible to them)", n)
		}
	})
}

func groupPaths(gs []map[string]any) string {
	var out []string
	for _, g := range gs {
		out = append(out, fmt.Sprint(g["full_path"]))
	}
	return strings.Join(out, ",")
}

// The level of a share caps what the invited group's members may do: a
// developer through a developer share pushes over git HTTP, a guest does
// not even clone, and the push right goes with the share.
func TestGroupShare_gitAccessFollowsTheShare(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		w := newShareWorld(t, s)
		w.share(t, w.owner.Token, w.shared, map[string]any{"group_id": w.team, "group_access": 40}).Want(t, 201)
		// The developer's own level (30) is below the share's (40).
		got := s.Get(t, "/projects/"+itoa(w.project), w.dev.Token).Want(t, 200).Object(t)
		if got["can_create_merge_request_in"] != true {
			t.Errorf("developer through the share: can_create_merge_request_in %v", got["can_create_merge_request_in"])
		}
		work := t.TempDir()
		repo := "shared/sub/app"
		if out, err := gitRun(work, "clone", "-q", cloneURL(s, repo, "dev", w.dev.Token), "c"); err != nil {
			t.Fatalf("developer clone through the share: %v\n%s", err, out)
		}
		dc := filepath.Join(work, "c")
		writeFile(t, filepath.Join(dc, "shared.txt"), "via the share\n")
		gitRun(dc, "add", ".")
		gitRun(dc, "commit", "-q", "-m", "through the share")
		if out, err := gitRun(dc, "push", "-q", "origin", "HEAD:feature"); err != nil {
			t.Fatalf("developer push through the share: %v\n%s", err, out)
		}
		s.Get(t, "/projects/"+itoa(w.project)+"/repository/branches/feature", w.owner.Token).Want(t, 200)
		// The guest member is capped at guest: no code.
		if out, err := gitRun(work, "clone", "-q", cloneURL(s, repo, "watcher", w.watcher.Token), "g"); err == nil {
			t.Errorf("guest cloned through the share: %s", out)
		}
		s.Get(t, "/projects/"+itoa(w.project)+"/repository/files/README.md?ref=main", w.watcher.Token).Want(t, 403)
		// A reporter share lets the developer read, not push.
		w.unshare(t, w.owner.Token, w.shared, itoa(w.team)).Want(t, 204)
		w.share(t, w.owner.Token, w.shared, map[string]any{"group_id": w.team, "group_access": 20}).Want(t, 201)
		writeFile(t, filepath.Join(dc, "more.txt"), "more\n")
		gitRun(dc, "add", ".")
		gitRun(dc, "commit", "-q", "-m", "as a reporter")
		if out, err := gitRun(dc, "push", "-q", "origin", "HEAD:feature2"); err == nil {
			t.Errorf("reporter pushed through the share: %s", out)
		}
		if out, err := gitRun(dc, "fetch", "-q", "origin"); err != nil {
			t.Errorf("reporter fetch through the share: %v\n%s", err, out)
		}
		// Without the share, not even a fetch.
		w.unshare(t, w.owner.Token, w.shared, itoa(w.team)).Want(t, 204)
		if out, err := gitRun(dc, "fetch", "-q", "origin"); err == nil {
			t.Errorf("fetch after unshare: %s", out)
		}
	})
}

// Removing the invited group removes its shares and the access.
func TestGroupShare_removedWithTheInvitedGroup(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		w := newShareWorld(t, s)
		w.share(t, w.owner.Token, w.shared, map[string]any{"group_id": w.team, "group_access": 30}).Want(t, 201)
		s.Get(t, "/projects/"+itoa(w.project), w.dev.Token).Want(t, 200)
		s.Do(t, apitest.Request{Method: "DELETE", Path: "/groups/" + itoa(w.team), Token: w.lead.Token}).Want(t, 202)
		waitGone(t, s, "/groups/"+itoa(w.team), w.lead.Token)
		s.Get(t, "/projects/"+itoa(w.project), w.dev.Token).Want(t, 404)
		if n := len(s.Get(t, "/groups/"+itoa(w.shared), w.owner.Token).Want(t, 200).Object(t)["shared_with_groups"].([]any)); n != 0 {
			t.Errorf("%d shares left after the invited group went", n)
		}
		w.unshare(t, w.owner.Token, w.shared, itoa(w.team)).Want(t, 404).WantBody(t, `{"message":"404 Group Link Not Found"}`)
	})
}

// A share ends on its expiry date, by the server's clock, as memberships
// do.
func TestGroupShare_expiresByDate(t *testing.T) {
	t.Parallel()
	start := time.Date(2031, 5, 6, 12, 0, 0, 0, time.UTC)
	apitest.EachTarget(t, func(t *testing.T, target storetest.Target) {
		clock := &testClock{now: start}
		s := apitest.Start(t, target, func(c *cfgpkg.Config) { c.Clock = clock.Now })
		w := newShareWorld(t, s)
		proj := "/projects/" + itoa(w.project)
		// Today is not in the future.
		w.share(t, w.owner.Token, w.shared, map[string]any{"group_id": w.team, "group_access": 30, "expires_at": "2031-05-06"}).Want(t, 400).
			WantBody(t, `{"message":{"expires_at":["must be in the future"]}}`)
		w.share(t, w.owner.Token, w.shared, map[string]any{"group_id": w.team, "group_access": 30, "expires_at": "2031-05-08"}).Want(t, 201)
		s.Get(t, proj, w.dev.Token).Want(t, http.StatusOK)
		clock.Set(start.Add(24 * time.Hour)) // 2031-05-07, the last day
		s.Get(t, proj, w.dev.Token).Want(t, http.StatusOK)
		clock.Set(start.Add(48 * time.Hour)) // 2031-05-08: ended
		s.Get(t, proj, w.dev.Token).Want(t, http.StatusNotFound)
		s.Get(t, "/groups/"+itoa(w.shared), w.dev.Token).Want(t, http.StatusNotFound)
		work := t.TempDir()
		if out, err := gitRun(work, "clone", "-q", cloneURL(s, "shared/sub/app", "dev", w.dev.Token), "c"); err == nil {
			t.Errorf("clone through an ended share: %s", out)
		}
	})
}
