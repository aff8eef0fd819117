package e2e

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	gitlab "gitlab.com/gitlab-org/api/client-go"

	"quarry/internal/apitest"
	cfgpkg "quarry/internal/config"
	"quarry/internal/storetest"
)

// The runners API users manage runners with (GitLab's doc/api/runners.md):
// lists with their filters, details, changes, deletion, token resets,
// assignment to other projects, a runner's jobs and the runner a job
// names — with GitLab's permissions and error answers.

// runnerJSON is a runner as the lists and the details show it.
type runnerJSON struct {
	ID              int64    `json:"id"`
	Description     string   `json:"description"`
	IPAddress       *string  `json:"ip_address"`
	Active          bool     `json:"active"`
	Paused          bool     `json:"paused"`
	IsShared        bool     `json:"is_shared"`
	RunnerType      string   `json:"runner_type"`
	Name            *string  `json:"name"`
	Online          bool     `json:"online"`
	Status          string   `json:"status"`
	TagList         []string `json:"tag_list"`
	RunUntagged     bool     `json:"run_untagged"`
	Locked          bool     `json:"locked"`
	MaximumTimeout  *int     `json:"maximum_timeout"`
	AccessLevel     string   `json:"access_level"`
	Version         *string  `json:"version"`
	ContactedAt     *string  `json:"contacted_at"`
	MaintenanceNote *string  `json:"maintenance_note"`
	Projects        []struct {
		ID                int64  `json:"id"`
		Name              string `json:"name"`
		NameWithNamespace string `json:"name_with_namespace"`
		Path              string `json:"path"`
		PathWithNamespace string `json:"path_with_namespace"`
	} `json:"projects"`
	Groups []struct {
		ID     int64  `json:"id"`
		WebURL string `json:"web_url"`
		Name   string `json:"name"`
	} `json:"groups"`
}

// raGroup makes a private group (under parent, 0: top level) as token's
// user, who owns it.
func raGroup(t *testing.T, s *apitest.Server, token, path string, parent int64) (int64, string) {
	t.Helper()
	body := map[string]any{"name": path, "path": path, "visibility": "private"}
	if parent != 0 {
		body["parent_id"] = parent
	}
	var g struct {
		ID       int64  `json:"id"`
		FullPath string `json:"full_path"`
	}
	s.Do(t, apitest.Request{Method: "POST", Path: "/groups", Token: token, JSON: body}).Want(t, http.StatusCreated).JSON(t, &g)
	return g.ID, g.FullPath
}

// raProject makes a private project in a namespace (0: the user's own),
// with files on main when given (a .gitlab-ci.yml makes a pipeline).
func raProject(t *testing.T, s *apitest.Server, token, name string, namespace int64, files map[string]string) ciProject {
	t.Helper()
	body := map[string]any{"name": name, "initialize_with_readme": true, "visibility": "private"}
	if namespace != 0 {
		body["namespace_id"] = namespace
	}
	var p struct {
		ID                int64  `json:"id"`
		PathWithNamespace string `json:"path_with_namespace"`
	}
	s.Do(t, apitest.Request{Method: "POST", Path: "/projects", Token: token, JSON: body}).Want(t, http.StatusCreated).JSON(t, &p)
	cp := ciProject{s: s, ID: p.ID, Path: p.PathWithNamespace, Token: token}
	if len(files) > 0 {
		cp.commit(t, "main", files)
	}
	return cp
}

// raMember adds u to a project or group ("projects", "groups") at level.
func raMember(t *testing.T, s *apitest.Server, token, kind string, id int64, u apitest.User, level int) {
	t.Helper()
	s.Do(t, apitest.Request{Method: "POST", Path: fmt.Sprintf("/%s/%d/members", kind, id), Token: token,
		JSON: map[string]any{"user_id": u.ID, "access_level": level}}).Want(t, http.StatusCreated)
}

// raIDs walks a runner list and returns its ids in order.
func raIDs(t *testing.T, s *apitest.Server, path, token string) []int64 {
	t.Helper()
	sep := "?"
	if strings.Contains(path, "?") {
		sep = "&"
	}
	out := []int64{}
	s.Walk(t, path+sep+"per_page=100", token, func(r *apitest.Response) {
		var page []runnerJSON
		r.JSON(t, &page)
		for _, x := range page {
			out = append(out, x.ID)
		}
	})
	return out
}

// wantIDs fails unless a list answered exactly these runners, in order.
func wantIDs(t *testing.T, what string, got []int64, want ...protoRunner) {
	t.Helper()
	ids := []int64{}
	for _, r := range want {
		ids = append(ids, r.ID)
	}
	if !slices.Equal(got, ids) {
		t.Errorf("%s: runners %v; want %v", what, got, ids)
	}
}

// raRegister registers a runner with a registration token (it has
// contacted Quarry then).
func raRegister(t *testing.T, s *apitest.Server, regToken string, attrs map[string]any) protoRunner {
	t.Helper()
	body := map[string]any{"token": regToken, "info": map[string]any{"name": "gitlab-runner", "version": "16.0.0", "executor": "shell"}}
	for k, v := range attrs {
		body[k] = v
	}
	var out struct {
		ID    int64  `json:"id"`
		Token string `json:"token"`
	}
	s.Do(t, apitest.Request{Method: "POST", Path: "/runners", JSON: body}).Want(t, http.StatusCreated).JSON(t, &out)
	return protoRunner{s: s, ID: out.ID, Token: out.Token}
}

// runnersToken reads a project's registration token.
func runnersToken(t *testing.T, p ciProject) string {
	t.Helper()
	var proj struct {
		RunnersToken string `json:"runners_token"`
	}
	p.s.Get(t, fmt.Sprintf("/projects/%d", p.ID), p.Token).Want(t, http.StatusOK).JSON(t, &proj)
	if proj.RunnersToken == "" {
		t.Fatal("project has no runners_token")
	}
	return proj.RunnersToken
}

func (r protoRunner) verify(t *testing.T) *apitest.Response {
	t.Helper()
	return r.s.Do(t, apitest.Request{Method: "POST", Path: "/runners/verify", JSON: map[string]any{"token": r.Token}})
}

// TestRunnersAPI_lists: the owned runners, every runner (administrators),
// a project's and a group's runners, with the type, status, paused,
// tag_list and scope filters, paging, and the fields of a list item.
func TestRunnersAPI_lists(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		alice, bob := s.NewUser(t, "rlalice"), s.NewUser(t, "rlbob")
		g, gPath := raGroup(t, s, alice.Token, "rl-group", 0)
		sg, _ := raGroup(t, s, alice.Token, "rl-sub", g)
		p := raProject(t, s, alice.Token, "rl-p", g, nil)
		q := raProject(t, s, alice.Token, "rl-q", 0, nil)
		b := raProject(t, s, bob.Token, "rl-b", 0, nil)

		inst := newRunner(t, s, s.RootToken, map[string]any{"runner_type": "instance_type", "description": "inst"})
		grp := newRunner(t, s, alice.Token, map[string]any{"runner_type": "group_type", "group_id": g, "tag_list": []string{"docker", "linux"}})
		sgr := newRunner(t, s, alice.Token, map[string]any{"runner_type": "group_type", "group_id": sg})
		proj := newRunner(t, s, alice.Token, map[string]any{"runner_type": "project_type", "project_id": p.ID, "paused": true})
		legacy := raRegister(t, s, runnersToken(t, p), map[string]any{"description": "legacy", "tag_list": "linux"})
		personal := newRunner(t, s, alice.Token, map[string]any{"runner_type": "project_type", "project_id": q.ID, "tag_list": "docker"})
		other := newRunner(t, s, bob.Token, map[string]any{"runner_type": "project_type", "project_id": b.ID})

		// Owned: project runners of projects alice maintains, group
		// runners of groups she owns.
		wantIDs(t, "owned", raIDs(t, s, "/runners", alice.Token), grp, sgr, proj, legacy, personal)
		wantIDs(t, "bob's", raIDs(t, s, "/runners", bob.Token), other)
		wantIDs(t, "root's own", raIDs(t, s, "/runners", s.RootToken))
		for query, want := range map[string][]protoRunner{
			"type=project_type":                   {proj, legacy, personal},
			"type=group_type":                     {grp, sgr},
			"type=instance_type":                  {},
			"status=online":                       {legacy},
			"status=never_contacted":              {grp, sgr, proj, personal},
			"status=offline":                      {},
			"status=stale":                        {},
			"paused=true":                         {proj},
			"paused=false":                        {grp, sgr, legacy, personal},
			"status=paused":                       {proj},
			"status=active":                       {grp, sgr, legacy, personal},
			"status=paused&paused=false":          {},
			"tag_list=linux":                      {grp, legacy},
			"tag_list=docker,linux":               {grp},
			"tag_list[]=docker":                   {grp, personal},
			"tag_list[]=docker&tag_list[]=linux":  {grp},
			"tag_list=nothing":                    {},
			"scope=online":                        {legacy},
			"scope=paused":                        {proj},
			"type=project_type&status=online":     {legacy},
			"type=project_type&status=active":     {legacy, personal},
			"type=group_type&tag_list=docker":     {grp},
			"status=never_contacted&paused=false": {grp, sgr, personal},
		} {
			wantIDs(t, query, raIDs(t, s, "/runners?"+query, alice.Token), want...)
		}
		for query, body := range map[string]string{
			"scope=shared":   `{"message":"Scope contains invalid value"}`,
			"scope=specific": `{"message":"Scope contains invalid value"}`,
			"scope=nope":     `{"error":"scope does not have a valid value"}`,
			"type=nope":      `{"error":"type does not have a valid value"}`,
			"status=nope":    `{"error":"status does not have a valid value"}`,
			"paused=maybe":   `{"error":"paused is invalid"}`,
		} {
			s.Get(t, "/runners?"+query, alice.Token).Want(t, http.StatusBadRequest).WantBody(t, body)
		}

		// Paging.
		res := s.Get(t, "/runners?per_page=2&page=2", alice.Token).Want(t, http.StatusOK)
		for h, want := range map[string]string{"X-Total": "5", "X-Total-Pages": "3", "X-Page": "2", "X-Per-Page": "2",
			"X-Next-Page": "3", "X-Prev-Page": "1"} {
			if got := res.Header.Get(h); got != want {
				t.Errorf("%s %q; want %q", h, got, want)
			}
		}
		if l := apitest.Links(t, res.Header); l["next"] == "" || l["prev"] == "" || l["first"] == "" || l["last"] == "" {
			t.Errorf("Link %q", res.Header.Get("Link"))
		}
		var page []runnerJSON
		res.JSON(t, &page)
		if len(page) != 2 || page[0].ID != proj.ID || page[1].ID != legacy.ID {
			t.Errorf("page 2: %+v", page)
		}
		if got := s.Get(t, "/runners", alice.Token).Header.Get("X-Per-Page"); got != "20" {
			t.Errorf("default X-Per-Page %q; want 20", got)
		}

		// A list item's fields: the owner sees the address.
		items := s.Get(t, "/runners?type=project_type&status=online", alice.Token).Want(t, http.StatusOK).Array(t)
		if len(items) != 1 {
			t.Fatalf("items %v", items)
		}
		want := map[string]any{"id": float64(legacy.ID), "description": "legacy", "ip_address": "127.0.0.1", "active": true,
			"paused": false, "is_shared": false, "runner_type": "project_type", "name": "gitlab-runner", "online": true, "status": "online"}
		for k, v := range want {
			if items[0][k] != v {
				t.Errorf("%s = %#v; want %#v", k, items[0][k], v)
			}
		}
		if _, ok := items[0]["created_at"].(string); !ok || len(items[0]) != len(want)+1 {
			t.Errorf("list item %v", items[0])
		}
		// What a registered runner said of itself is in its details.
		var det runnerJSON
		s.Get(t, fmt.Sprintf("/runners/%d", legacy.ID), alice.Token).Want(t, http.StatusOK).JSON(t, &det)
		if det.Version == nil || *det.Version != "16.0.0" || det.ContactedAt == nil || det.Name == nil || *det.Name != "gitlab-runner" ||
			det.IPAddress == nil || !slices.Equal(det.TagList, []string{"linux"}) || len(det.Projects) != 1 || det.Projects[0].ID != p.ID {
			t.Errorf("registered runner's details %+v", det)
		}
		// A paused runner that never called.
		pi := s.Get(t, "/runners?paused=true", alice.Token).Array(t)[0]
		if pi["active"] != false || pi["paused"] != true || pi["online"] != false || pi["status"] != "never_contacted" ||
			pi["name"] != nil || pi["ip_address"] != nil {
			t.Errorf("paused item %v", pi)
		}

		// Every runner: administrators only.
		s.Get(t, "/runners/all", alice.Token).Want(t, http.StatusForbidden).WantBody(t, `{"message":"403 Forbidden"}`)
		wantIDs(t, "all", raIDs(t, s, "/runners/all", s.RootToken), inst, grp, sgr, proj, legacy, personal, other)
		wantIDs(t, "all shared", raIDs(t, s, "/runners/all?scope=shared", s.RootToken), inst)
		wantIDs(t, "all specific", raIDs(t, s, "/runners/all?scope=specific", s.RootToken), grp, sgr, proj, legacy, personal, other)
		wantIDs(t, "all instance", raIDs(t, s, "/runners/all?type=instance_type", s.RootToken), inst)
		wantIDs(t, "all specific groups", raIDs(t, s, "/runners/all?scope=specific&type=group_type", s.RootToken), grp, sgr)
		wantIDs(t, "all shared groups", raIDs(t, s, "/runners/all?scope=shared&type=group_type", s.RootToken))
		wantIDs(t, "all online", raIDs(t, s, "/runners/all?status=online", s.RootToken), legacy)
		s.Get(t, "/runners/all?type=nope", s.RootToken).Want(t, http.StatusBadRequest)
		for _, it := range s.Get(t, "/runners/all?per_page=100", s.RootToken).Array(t) {
			if it["id"] == float64(legacy.ID) && it["ip_address"] != "127.0.0.1" {
				t.Errorf("administrator sees address %v", it["ip_address"])
			}
		}

		// A project's runners: its own, its groups', the instance's.
		pr := fmt.Sprintf("/projects/%d/runners", p.ID)
		wantIDs(t, "project", raIDs(t, s, pr, alice.Token), inst, grp, proj, legacy)
		wantIDs(t, "project by path", raIDs(t, s, "/projects/"+url.PathEscape(p.Path)+"/runners", alice.Token), inst, grp, proj, legacy)
		wantIDs(t, "project shared", raIDs(t, s, pr+"?type=instance_type", alice.Token), inst)
		wantIDs(t, "project tagged", raIDs(t, s, pr+"?tag_list=linux", alice.Token), grp, legacy)
		wantIDs(t, "project paused", raIDs(t, s, pr+"?paused=true", alice.Token), proj)
		wantIDs(t, "project scope", raIDs(t, s, pr+"?scope=shared", alice.Token), inst)
		wantIDs(t, "personal project", raIDs(t, s, fmt.Sprintf("/projects/%d/runners", q.ID), alice.Token), inst, personal)
		for _, it := range s.Get(t, pr, alice.Token).Array(t) {
			if it["id"] == float64(inst.ID) && (it["is_shared"] != true || it["ip_address"] != nil || it["runner_type"] != "instance_type") {
				t.Errorf("instance runner in a project's list %v", it)
			}
		}
		s.Do(t, apitest.Request{Method: "PUT", Path: fmt.Sprintf("/projects/%d", p.ID), Token: alice.Token,
			JSON: map[string]any{"shared_runners_enabled": false}}).Want(t, http.StatusOK)
		wantIDs(t, "project without shared runners", raIDs(t, s, pr, alice.Token), grp, proj, legacy)
		s.Get(t, pr+"?status=nope", alice.Token).Want(t, http.StatusBadRequest)

		// A group's runners: its own, its ancestors', the instance's.
		wantIDs(t, "group", raIDs(t, s, fmt.Sprintf("/groups/%d/runners", g), alice.Token), inst, grp)
		wantIDs(t, "group by path", raIDs(t, s, "/groups/"+url.PathEscape(gPath)+"/runners", alice.Token), inst, grp)
		wantIDs(t, "subgroup", raIDs(t, s, fmt.Sprintf("/groups/%d/runners", sg), alice.Token), inst, grp, sgr)
		wantIDs(t, "subgroup groups", raIDs(t, s, fmt.Sprintf("/groups/%d/runners?type=group_type", sg), alice.Token), grp, sgr)
		wantIDs(t, "subgroup tagged", raIDs(t, s, fmt.Sprintf("/groups/%d/runners?tag_list=docker", sg), alice.Token), grp)
		s.Get(t, fmt.Sprintf("/groups/%d/runners?type=nope", sg), alice.Token).Want(t, http.StatusBadRequest)

		// Without credentials.
		s.Get(t, "/runners", "").Want(t, http.StatusUnauthorized)
	})
}

// TestRunnersAPI_permissions: who reads, changes and deletes which
// runner, and who lists a project's and a group's runners; a runner one
// may not see is 404 like one that does not exist.
func TestRunnersAPI_permissions(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		gowner := s.NewUser(t, "rpgowner")
		gmaint, maint, dev, guest, stranger := s.NewUser(t, "rpgmaint"), s.NewUser(t, "rpmaint"), s.NewUser(t, "rpdev"),
			s.NewUser(t, "rpguest"), s.NewUser(t, "rpstranger")
		g, _ := raGroup(t, s, gowner.Token, "rp-group", 0)
		raMember(t, s, gowner.Token, "groups", g, gmaint, 40)
		p := raProject(t, s, gowner.Token, "rp-p", g, nil)
		raMember(t, s, gowner.Token, "projects", p.ID, maint, 40)
		raMember(t, s, gowner.Token, "projects", p.ID, dev, 30)
		raMember(t, s, gowner.Token, "projects", p.ID, guest, 10)

		inst := newRunner(t, s, s.RootToken, map[string]any{"runner_type": "instance_type", "maintenance_note": "admins only"})
		grp := newRunner(t, s, gowner.Token, map[string]any{"runner_type": "group_type", "group_id": g, "maintenance_note": "group note"})
		proj := newRunner(t, s, maint.Token, map[string]any{"runner_type": "project_type", "project_id": p.ID, "maintenance_note": "proj note"})
		for _, r := range []protoRunner{inst, grp, proj} {
			r.verify(t).Want(t, http.StatusOK)
		}

		type check struct {
			who    apitest.User
			runner protoRunner
			get    int // GET /runners/:id
			put    int // PUT /runners/:id
		}
		root := apitest.User{Username: "root", Token: s.RootToken}
		for _, c := range []check{
			{root, inst, 200, 200}, {root, grp, 200, 200}, {root, proj, 200, 200},
			{stranger, inst, 200, 403}, {stranger, grp, 404, 404}, {stranger, proj, 404, 404},
			{gowner, inst, 200, 403}, {gowner, grp, 200, 200}, {gowner, proj, 200, 200},
			{gmaint, grp, 200, 403}, {gmaint, proj, 200, 200},
			{maint, grp, 200, 403}, {maint, proj, 200, 200},
			{dev, grp, 404, 404}, {dev, proj, 404, 404}, {dev, inst, 200, 403},
			{guest, proj, 404, 404},
		} {
			path := fmt.Sprintf("/runners/%d", c.runner.ID)
			res := s.Get(t, path, c.who.Token)
			if res.Status != c.get {
				t.Errorf("GET %s as %s: %d; want %d", path, c.who.Username, res.Status, c.get)
				continue
			}
			if res.Status == http.StatusNotFound {
				res.WantBody(t, `{"message":"404 Runner Not Found"}`)
			} else {
				var r runnerJSON
				res.JSON(t, &r)
				// The maintenance note and the address are for those who
				// may change the runner.
				if mayChange := c.put == 200; (r.MaintenanceNote != nil) != mayChange || (r.IPAddress != nil) != mayChange {
					t.Errorf("GET %s as %s: note %v, address %v", path, c.who.Username, r.MaintenanceNote, r.IPAddress)
				}
			}
			res = s.Do(t, apitest.Request{Method: "PUT", Path: path, Token: c.who.Token, JSON: map[string]any{"description": "by " + c.who.Username}})
			if res.Status != c.put {
				t.Errorf("PUT %s as %s: %d; want %d (%s)", path, c.who.Username, res.Status, c.put, res.Body)
			} else if res.Status == http.StatusForbidden {
				res.WantBody(t, `{"message":"403 Forbidden - No access granted"}`)
			}
		}
		// Deleting, resetting and listing jobs follow the same rules.
		s.Do(t, apitest.Request{Method: "DELETE", Path: fmt.Sprintf("/runners/%d", grp.ID), Token: gmaint.Token}).
			Want(t, http.StatusForbidden).WantBody(t, `{"message":"403 Forbidden - No access granted"}`)
		s.Do(t, apitest.Request{Method: "DELETE", Path: fmt.Sprintf("/runners/%d", inst.ID), Token: stranger.Token}).Want(t, http.StatusForbidden)
		s.Do(t, apitest.Request{Method: "DELETE", Path: fmt.Sprintf("/runners/%d", proj.ID), Token: dev.Token}).Want(t, http.StatusNotFound)
		s.Do(t, apitest.Request{Method: "POST", Path: fmt.Sprintf("/runners/%d/reset_authentication_token", inst.ID), Token: stranger.Token}).
			Want(t, http.StatusForbidden)
		s.Do(t, apitest.Request{Method: "POST", Path: fmt.Sprintf("/runners/%d/reset_authentication_token", proj.ID), Token: dev.Token}).
			Want(t, http.StatusNotFound)
		s.Get(t, fmt.Sprintf("/runners/%d/jobs", inst.ID), stranger.Token).Want(t, http.StatusForbidden)
		s.Get(t, fmt.Sprintf("/runners/%d/jobs", grp.ID), gmaint.Token).Want(t, http.StatusOK)
		s.Get(t, fmt.Sprintf("/runners/%d/jobs", grp.ID), maint.Token).Want(t, http.StatusForbidden)
		s.Get(t, fmt.Sprintf("/runners/%d/jobs", proj.ID), maint.Token).Want(t, http.StatusOK)
		s.Get(t, fmt.Sprintf("/runners/%d/jobs", proj.ID), dev.Token).Want(t, http.StatusNotFound)

		// Unknown runners, bad ids.
		absent := s.AbsentID(t)
		for _, m := range []string{"GET", "PUT", "DELETE"} {
			s.Do(t, apitest.Request{Method: m, Path: fmt.Sprintf("/runners/%d", absent), Token: s.RootToken, JSON: map[string]any{"description": "x"}}).
				Want(t, http.StatusNotFound).WantBody(t, `{"message":"404 Runner Not Found"}`)
		}
		s.Get(t, fmt.Sprintf("/runners/%d/jobs", absent), s.RootToken).Want(t, http.StatusNotFound)
		s.Do(t, apitest.Request{Method: "POST", Path: fmt.Sprintf("/runners/%d/reset_authentication_token", absent), Token: s.RootToken}).
			Want(t, http.StatusNotFound)
		s.Get(t, "/runners/abc", s.RootToken).Want(t, http.StatusNotFound).WantBody(t, `{"error":"404 Not Found"}`)

		// A project's runners: maintainers; a private project is hidden
		// from strangers.
		pr := fmt.Sprintf("/projects/%d/runners", p.ID)
		for who, want := range map[*apitest.User]int{&root: 200, &gowner: 200, &gmaint: 200, &maint: 200, &dev: 403, &guest: 403, &stranger: 404} {
			if res := s.Get(t, pr, who.Token); res.Status != want {
				t.Errorf("GET %s as %s: %d; want %d", pr, who.Username, res.Status, want)
			}
		}
		s.Get(t, pr, stranger.Token).WantBody(t, `{"message":"404 Project Not Found"}`)
		s.Get(t, pr, dev.Token).WantBody(t, `{"message":"403 Forbidden"}`)
		s.Get(t, fmt.Sprintf("/projects/%d/runners", absent), s.RootToken).Want(t, http.StatusNotFound)
		// A group's runners: owners.
		gr := fmt.Sprintf("/groups/%d/runners", g)
		for who, want := range map[*apitest.User]int{&root: 200, &gowner: 200, &gmaint: 403, &maint: 403, &stranger: 404} {
			if res := s.Get(t, gr, who.Token); res.Status != want {
				t.Errorf("GET %s as %s: %d; want %d", gr, who.Username, res.Status, want)
			}
		}
		s.Get(t, gr, stranger.Token).WantBody(t, `{"message":"404 Group Not Found"}`)
		// Owned lists: the group's maintainer owns no runner, the
		// project's maintainer its project's.
		wantIDs(t, "gmaint owns", raIDs(t, s, "/runners", gmaint.Token), proj)
		wantIDs(t, "gowner owns", raIDs(t, s, "/runners", gowner.Token), grp, proj)
		wantIDs(t, "dev owns", raIDs(t, s, "/runners", dev.Token))

		// Token scopes: read_api reads, api writes.
		ro := s.NewToken(t, gowner.ID, "read_api")
		s.Get(t, fmt.Sprintf("/runners/%d", grp.ID), ro).Want(t, http.StatusOK)
		s.Get(t, "/runners", ro).Want(t, http.StatusOK)
		s.Do(t, apitest.Request{Method: "PUT", Path: fmt.Sprintf("/runners/%d", grp.ID), Token: ro, JSON: map[string]any{"locked": true}}).
			Want(t, http.StatusForbidden)
		s.Get(t, fmt.Sprintf("/runners/%d", grp.ID), "").Want(t, http.StatusUnauthorized)
	})
}

// TestRunnersAPI_update: every attribute PUT /runners/:id changes, with
// GitLab's validation answers; concurrent changes of different
// attributes all land.
func TestRunnersAPI_update(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		alice := s.NewUser(t, "rualice")
		g, gPath := raGroup(t, s, alice.Token, "ru-group", 0)
		p := raProject(t, s, alice.Token, "ru-p", g, nil)
		r := newRunner(t, s, alice.Token, map[string]any{"runner_type": "project_type", "project_id": p.ID, "description": "first",
			"tag_list": []string{"a"}})
		path := fmt.Sprintf("/runners/%d", r.ID)
		put := func(body map[string]any) *apitest.Response {
			return s.Do(t, apitest.Request{Method: "PUT", Path: path, Token: alice.Token, JSON: body})
		}

		var got runnerJSON
		s.Get(t, path, alice.Token).Want(t, http.StatusOK).JSON(t, &got)
		if got.Description != "first" || got.RunnerType != "project_type" || got.IsShared || !got.RunUntagged || got.Locked ||
			got.AccessLevel != "not_protected" || got.MaximumTimeout != nil || got.ContactedAt != nil || got.Version != nil ||
			got.Status != "never_contacted" || got.Online || !slices.Equal(got.TagList, []string{"a"}) || got.MaintenanceNote == nil ||
			*got.MaintenanceNote != "" || len(got.Groups) != 0 || len(got.Projects) != 1 {
			t.Fatalf("details %+v", got)
		}
		if pj := got.Projects[0]; pj.ID != p.ID || pj.Path != "ru-p" || pj.PathWithNamespace != gPath+"/ru-p" ||
			pj.NameWithNamespace != "ru-group / ru-p" || pj.Name != "ru-p" {
			t.Errorf("project %+v", pj)
		}
		obj := s.Get(t, path, alice.Token).Object(t)
		for _, k := range []string{"id", "description", "ip_address", "active", "paused", "is_shared", "runner_type", "name", "online",
			"status", "created_at", "tag_list", "run_untagged", "locked", "maximum_timeout", "access_level", "version", "revision",
			"platform", "architecture", "contacted_at", "maintenance_note", "projects", "groups"} {
			if _, ok := obj[k]; !ok {
				t.Errorf("details lack %q", k)
			}
		}

		put(map[string]any{"description": "second", "paused": true, "tag_list": []string{"x", "y", "x", " "}, "run_untagged": false,
			"locked": true, "access_level": "ref_protected", "maximum_timeout": 3600, "maintenance_note": "note"}).
			Want(t, http.StatusOK).JSON(t, &got)
		if got.Description != "second" || !got.Paused || got.Active || !slices.Equal(got.TagList, []string{"x", "y"}) || got.RunUntagged ||
			!got.Locked || got.AccessLevel != "ref_protected" || got.MaximumTimeout == nil || *got.MaximumTimeout != 3600 ||
			got.MaintenanceNote == nil || *got.MaintenanceNote != "note" {
			t.Fatalf("after PUT %+v", got)
		}
		// What is not sent is kept; active is the inverse of paused; a
		// form body, comma-separated tags and a null timeout work.
		s.Do(t, apitest.Request{Method: "PUT", Path: path, Token: alice.Token, Form: url.Values{"active": {"true"}, "tag_list": {"p,q"}}}).
			Want(t, http.StatusOK).JSON(t, &got)
		if got.Paused || !got.Active || got.Description != "second" || !slices.Equal(got.TagList, []string{"p", "q"}) || !got.Locked {
			t.Errorf("after form PUT %+v", got)
		}
		put(map[string]any{"maximum_timeout": nil}).Want(t, http.StatusOK).JSON(t, &got)
		if got.MaximumTimeout != nil || got.AccessLevel != "ref_protected" {
			t.Errorf("after clearing the timeout %+v", got)
		}
		s.Get(t, path, alice.Token).JSON(t, &got)
		if got.Description != "second" || got.MaintenanceNote == nil || *got.MaintenanceNote != "note" {
			t.Errorf("read back %+v", got)
		}

		for _, c := range []struct {
			body map[string]any
			want string
		}{
			{map[string]any{}, `{"error":"description, active, paused, tag_list, run_untagged, locked, access_level, maximum_timeout, maintenance_note are missing, at least one parameter must be provided"}`},
			{map[string]any{"active": true, "paused": true}, `{"error":"active, paused are mutually exclusive"}`},
			{map[string]any{"access_level": "bogus"}, `{"error":"access_level does not have a valid value"}`},
			{map[string]any{"maximum_timeout": 599}, `{"message":{"maximum_timeout":["needs to be at least 10 minutes"]}}`},
			{map[string]any{"maximum_timeout": "soon"}, `{"error":"maximum_timeout is invalid"}`},
			{map[string]any{"locked": "perhaps"}, `{"error":"locked is invalid"}`},
			{map[string]any{"tag_list": []string{}, "run_untagged": false}, `{"message":{"tags_list":["can not be empty when runner is not allowed to pick untagged jobs"]}}`},
			{map[string]any{"maintenance_note": strings.Repeat("n", 1025)}, `{"message":{"maintenance_note":["is too long (maximum is 1024 characters)"]}}`},
		} {
			put(c.body).Want(t, http.StatusBadRequest).WantBody(t, c.want)
		}
		// The stored run_untagged (true now) and tags decide too.
		put(map[string]any{"run_untagged": false}).Want(t, http.StatusOK)
		put(map[string]any{"tag_list": []string{}}).Want(t, http.StatusBadRequest)
		put(map[string]any{"run_untagged": true, "tag_list": []string{}}).Want(t, http.StatusOK).JSON(t, &got)
		if len(got.TagList) != 0 || got.TagList == nil || !got.RunUntagged {
			t.Errorf("untagged %+v", got)
		}

		// Concurrent changes of different attributes: none is lost.
		changes := []map[string]any{{"description": "racer"}, {"maintenance_note": "raced"}, {"locked": false},
			{"access_level": "not_protected"}, {"maximum_timeout": 7200}, {"paused": true}, {"tag_list": []string{"r1", "r2"}}}
		statuses := make([]int, len(changes))
		var wg sync.WaitGroup
		for i, body := range changes {
			wg.Go(func() { statuses[i] = put(body).Status })
		}
		wg.Wait()
		for i, st := range statuses {
			if st != http.StatusOK {
				t.Errorf("concurrent PUT %v: %d", changes[i], st)
			}
		}
		s.Get(t, path, alice.Token).JSON(t, &got)
		if got.Description != "racer" || got.MaintenanceNote == nil || *got.MaintenanceNote != "raced" || got.Locked ||
			got.AccessLevel != "not_protected" || got.MaximumTimeout == nil || *got.MaximumTimeout != 7200 || !got.Paused ||
			!slices.Equal(got.TagList, []string{"r1", "r2"}) {
			t.Errorf("after concurrent PUTs %+v", got)
		}

		// A group runner's details name its group.
		gr := newRunner(t, s, alice.Token, map[string]any{"runner_type": "group_type", "group_id": g})
		s.Get(t, fmt.Sprintf("/runners/%d", gr.ID), alice.Token).Want(t, http.StatusOK).JSON(t, &got)
		if len(got.Groups) != 1 || got.Groups[0].ID != g || got.Groups[0].Name != "ru-group" ||
			got.Groups[0].WebURL != s.URL+"/groups/"+gPath || len(got.Projects) != 0 || got.RunnerType != "group_type" {
			t.Errorf("group runner %+v", got)
		}
	})
}

// TestRunnersAPI_assign: enabling a project runner in another project and
// disabling it there, locked and non-project runners, the owner project,
// and deleting a runner that serves several projects.
func TestRunnersAPI_assign(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		alice, bob, carol, dev := s.NewUser(t, "raalice"), s.NewUser(t, "rabob"), s.NewUser(t, "racarol"), s.NewUser(t, "radev")
		p1 := raProject(t, s, alice.Token, "ra-one", 0, nil)
		p2 := raProject(t, s, alice.Token, "ra-two", 0, nil)
		p3 := raProject(t, s, bob.Token, "ra-three", 0, nil)
		raMember(t, s, alice.Token, "projects", p2.ID, carol, 40)
		raMember(t, s, alice.Token, "projects", p2.ID, dev, 30)
		g, _ := raGroup(t, s, alice.Token, "ra-group", 0)

		r := newRunner(t, s, alice.Token, map[string]any{"runner_type": "project_type", "project_id": p1.ID, "description": "shared"})
		locked := newRunner(t, s, alice.Token, map[string]any{"runner_type": "project_type", "project_id": p1.ID, "locked": true})
		grp := newRunner(t, s, alice.Token, map[string]any{"runner_type": "group_type", "group_id": g})
		inst := newRunner(t, s, s.RootToken, map[string]any{"runner_type": "instance_type"})
		enable := func(p ciProject, token string, body any) *apitest.Response {
			return s.Do(t, apitest.Request{Method: "POST", Path: fmt.Sprintf("/projects/%d/runners", p.ID), Token: token, JSON: body})
		}
		disable := func(p ciProject, token string, runnerID int64) *apitest.Response {
			return s.Do(t, apitest.Request{Method: "DELETE", Path: fmt.Sprintf("/projects/%d/runners/%d", p.ID, runnerID), Token: token})
		}

		// Carol maintains p2 only: she cannot see alice's runner yet.
		s.Get(t, fmt.Sprintf("/runners/%d", r.ID), carol.Token).Want(t, http.StatusNotFound)
		var item runnerJSON
		enable(p2, alice.Token, map[string]any{"runner_id": r.ID}).Want(t, http.StatusCreated).JSON(t, &item)
		if item.ID != r.ID || item.Description != "shared" || item.RunnerType != "project_type" {
			t.Errorf("enable answered %+v", item)
		}
		var details runnerJSON
		s.Get(t, fmt.Sprintf("/runners/%d", r.ID), alice.Token).JSON(t, &details)
		if len(details.Projects) != 2 || details.Projects[0].ID != p1.ID || details.Projects[1].ID != p2.ID {
			t.Errorf("projects %+v", details.Projects)
		}
		wantIDs(t, "p2's runners", raIDs(t, s, fmt.Sprintf("/projects/%d/runners?type=project_type", p2.ID), alice.Token), r)
		// Now carol sees it (only p2 among its projects), may change it, and
		// owns it in her list.
		s.Get(t, fmt.Sprintf("/runners/%d", r.ID), carol.Token).Want(t, http.StatusOK).JSON(t, &details)
		if len(details.Projects) != 1 || details.Projects[0].ID != p2.ID {
			t.Errorf("carol sees projects %+v", details.Projects)
		}
		s.Do(t, apitest.Request{Method: "PUT", Path: fmt.Sprintf("/runners/%d", r.ID), Token: carol.Token,
			JSON: map[string]any{"description": "shared"}}).Want(t, http.StatusOK)
		wantIDs(t, "carol owns", raIDs(t, s, "/runners", carol.Token), r)

		enable(p2, alice.Token, map[string]any{"runner_id": r.ID}).Want(t, http.StatusBadRequest).
			WantBody(t, `{"message":{"assign_to":["Validation failed: Runner has already been taken"]}}`)
		enable(p2, alice.Token, map[string]any{}).Want(t, http.StatusBadRequest).WantBody(t, `{"error":"runner_id is missing"}`)
		enable(p2, alice.Token, map[string]any{"runner_id": "abc"}).Want(t, http.StatusBadRequest).WantBody(t, `{"error":"runner_id is invalid"}`)
		enable(p2, alice.Token, map[string]any{"runner_id": s.AbsentID(t)}).Want(t, http.StatusNotFound).WantBody(t, `{"message":"404 Runner Not Found"}`)
		enable(p2, dev.Token, map[string]any{"runner_id": r.ID}).Want(t, http.StatusForbidden)
		enable(p3, alice.Token, map[string]any{"runner_id": r.ID}).Want(t, http.StatusNotFound).WantBody(t, `{"message":"404 Project Not Found"}`)
		// Bob maintains p3 but cannot see alice's runner.
		enable(p3, bob.Token, map[string]any{"runner_id": r.ID}).Want(t, http.StatusNotFound).WantBody(t, `{"message":"404 Runner Not Found"}`)
		enable(p2, alice.Token, map[string]any{"runner_id": grp.ID}).Want(t, http.StatusForbidden).
			WantBody(t, `{"message":"403 Forbidden - Runner is a group runner"}`)
		enable(p2, s.RootToken, map[string]any{"runner_id": inst.ID}).Want(t, http.StatusForbidden)
		enable(p2, alice.Token, map[string]any{"runner_id": locked.ID}).Want(t, http.StatusForbidden).
			WantBody(t, `{"message":"403 Forbidden - Runner is locked"}`)
		// An administrator moves a locked runner.
		enable(p2, s.RootToken, map[string]any{"runner_id": locked.ID}).Want(t, http.StatusCreated)
		disable(p2, alice.Token, locked.ID).Want(t, http.StatusForbidden).
			WantBody(t, `{"message":"403 Forbidden - User not allowed to assign runner"}`)
		disable(p2, s.RootToken, locked.ID).Want(t, http.StatusNoContent)

		// Disabling: not from the owner project, not the last project.
		disable(p1, alice.Token, r.ID).Want(t, http.StatusForbidden).
			WantBody(t, `{"message":"403 Forbidden - Only one project associated with the runner. Please remove the runner instead"}`)
		disable(p1, alice.Token, locked.ID).Want(t, http.StatusForbidden)
		disable(p2, dev.Token, r.ID).Want(t, http.StatusForbidden)
		disable(p2, alice.Token, grp.ID).Want(t, http.StatusNotFound).WantBody(t, `{"message":"404 Runner Not Found"}`)
		disable(p2, alice.Token, s.AbsentID(t)).Want(t, http.StatusNotFound)
		disable(p2, carol.Token, r.ID).Want(t, http.StatusNoContent)
		disable(p2, alice.Token, r.ID).Want(t, http.StatusNotFound).WantBody(t, `{"message":"404 Runner Not Found"}`)
		s.Get(t, fmt.Sprintf("/runners/%d", r.ID), carol.Token).Want(t, http.StatusNotFound)
		s.Do(t, apitest.Request{Method: "DELETE", Path: fmt.Sprintf("/projects/%d/runners/abc", p2.ID), Token: alice.Token}).
			Want(t, http.StatusNotFound)

		// Deleting: not a runner of several projects, unless an
		// administrator.
		enable(p2, alice.Token, map[string]any{"runner_id": r.ID}).Want(t, http.StatusCreated)
		for _, tok := range []string{alice.Token, carol.Token} {
			s.Do(t, apitest.Request{Method: "DELETE", Path: fmt.Sprintf("/runners/%d", r.ID), Token: tok}).Want(t, http.StatusForbidden).
				WantBody(t, `{"message":"403 Forbidden - Runner associated with more than one project"}`)
		}
		s.Do(t, apitest.Request{Method: "DELETE", Path: fmt.Sprintf("/runners/%d", r.ID), Token: s.RootToken}).Want(t, http.StatusNoContent)
		s.Get(t, fmt.Sprintf("/runners/%d", r.ID), s.RootToken).Want(t, http.StatusNotFound)
		r.verify(t).Want(t, http.StatusForbidden)
		// The owner deletes a runner of one project, and a group runner.
		s.Do(t, apitest.Request{Method: "DELETE", Path: fmt.Sprintf("/runners/%d", locked.ID), Token: alice.Token}).Want(t, http.StatusNoContent)
		s.Do(t, apitest.Request{Method: "DELETE", Path: fmt.Sprintf("/runners/%d", grp.ID), Token: alice.Token}).Want(t, http.StatusNoContent)
		s.Do(t, apitest.Request{Method: "DELETE", Path: fmt.Sprintf("/runners/%d", grp.ID), Token: alice.Token}).Want(t, http.StatusNotFound)
		wantIDs(t, "alice owns", raIDs(t, s, "/runners", alice.Token))
	})
}

// TestRunnersAPI_resetToken: the new token is shown once and works, the
// old one stops working; the legacy flow's tokens keep their form.
func TestRunnersAPI_resetToken(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		alice, dev := s.NewUser(t, "rtalice"), s.NewUser(t, "rtdev")
		p := raProject(t, s, alice.Token, "rt-p", 0, nil)
		raMember(t, s, alice.Token, "projects", p.ID, dev, 30)
		for _, r := range []protoRunner{
			newRunner(t, s, alice.Token, map[string]any{"runner_type": "project_type", "project_id": p.ID}),
			raRegister(t, s, runnersToken(t, p), nil),
		} {
			r.verify(t).Want(t, http.StatusOK)
			path := fmt.Sprintf("/runners/%d/reset_authentication_token", r.ID)
			s.Do(t, apitest.Request{Method: "POST", Path: path, Token: dev.Token}).Want(t, http.StatusNotFound)
			res := s.Do(t, apitest.Request{Method: "POST", Path: path, Token: alice.Token}).Want(t, http.StatusCreated)
			obj := res.Object(t)
			tok, _ := obj["token"].(string)
			if len(obj) != 2 || tok == "" || tok == r.Token || obj["token_expires_at"] != nil {
				t.Fatalf("reset answered %s", res.Body)
			}
			if strings.HasPrefix(r.Token, "glrt-") != strings.HasPrefix(tok, "glrt-") {
				t.Errorf("token %q after %q", tok, r.Token)
			}
			r.verify(t).Want(t, http.StatusForbidden)
			fresh := protoRunner{s: s, ID: r.ID, Token: tok}
			fresh.verify(t).Want(t, http.StatusOK)
			// Reading the runner never shows a token.
			if body := string(s.Get(t, fmt.Sprintf("/runners/%d", r.ID), alice.Token).Body); strings.Contains(body, tok) {
				t.Error("the runner's details show its token")
			}
		}
	})
}

// TestRunnersAPI_jobs: the runner a job names, and a runner's jobs with
// their projects, filtered by status and by the caller's access, in
// either order.
func TestRunnersAPI_jobs(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		const ci = "build:\n  script: [echo hi]\n"
		alice, carol, rep := s.NewUser(t, "rjalice"), s.NewUser(t, "rjcarol"), s.NewUser(t, "rjrep")
		p1 := raProject(t, s, alice.Token, "rj-one", 0, map[string]string{".gitlab-ci.yml": ci})
		p1.settle(t, 1)
		raMember(t, s, alice.Token, "projects", p1.ID, rep, 20)
		r := projectRunner(t, p1, map[string]any{"description": "worker"})
		job1 := r.take(t)

		// The job names its runner.
		var job struct {
			ID     int64          `json:"id"`
			Runner map[string]any `json:"runner"`
		}
		s.Get(t, fmt.Sprintf("/projects/%d/jobs/%d", p1.ID, job1.ID), alice.Token).Want(t, http.StatusOK).JSON(t, &job)
		want := map[string]any{"id": float64(r.ID), "description": "worker", "ip_address": nil, "active": true, "paused": false,
			"is_shared": false, "runner_type": "project_type", "name": "proto", "online": true, "status": "online"}
		for k, v := range want {
			if job.Runner[k] != v {
				t.Errorf("job runner %s = %#v; want %#v", k, job.Runner[k], v)
			}
		}
		var list []struct {
			ID     int64             `json:"id"`
			Runner *gitlab.JobRunner `json:"runner"`
		}
		s.Get(t, fmt.Sprintf("/projects/%d/jobs", p1.ID), rep.Token).Want(t, http.StatusOK).JSON(t, &list)
		if len(list) != 1 || list[0].Runner == nil || list[0].Runner.ID != r.ID || list[0].Runner.Description != "worker" {
			t.Errorf("jobs list %+v", list)
		}

		// A second project, maintained by carol, shares the runner.
		p2 := raProject(t, s, alice.Token, "rj-two", 0, map[string]string{".gitlab-ci.yml": ci})
		p2.settle(t, 1)
		raMember(t, s, alice.Token, "projects", p2.ID, carol, 40)
		s.Do(t, apitest.Request{Method: "POST", Path: fmt.Sprintf("/projects/%d/runners", p2.ID), Token: alice.Token,
			JSON: map[string]any{"runner_id": r.ID}}).Want(t, http.StatusCreated)
		job2 := r.take(t)
		if job2.JobInfo.ProjectID != p2.ID {
			t.Fatalf("second job of project %d", job2.JobInfo.ProjectID)
		}
		r.update(t, job1, map[string]any{"state": "success"}).Want(t, http.StatusOK)

		jobIDs := func(query, token string) []int64 {
			t.Helper()
			var page []struct {
				ID int64 `json:"id"`
			}
			s.Get(t, fmt.Sprintf("/runners/%d/jobs?%s", r.ID, query), token).Want(t, http.StatusOK).JSON(t, &page)
			out := []int64{}
			for _, j := range page {
				out = append(out, j.ID)
			}
			return out
		}
		for _, c := range []struct {
			query, token string
			want         []int64
		}{
			{"", alice.Token, []int64{job1.ID, job2.ID}},
			{"order_by=id", alice.Token, []int64{job2.ID, job1.ID}},
			{"order_by=id&sort=asc", alice.Token, []int64{job1.ID, job2.ID}},
			{"order_by=id&sort=desc", alice.Token, []int64{job2.ID, job1.ID}},
			{"sort=desc", alice.Token, []int64{job1.ID, job2.ID}},
			{"status=running", alice.Token, []int64{job2.ID}},
			{"status=success", alice.Token, []int64{job1.ID}},
			{"status=failed", alice.Token, []int64{}},
			{"", s.RootToken, []int64{job1.ID, job2.ID}},
			// Carol sees the jobs of the projects she is a reporter of.
			{"", carol.Token, []int64{job2.ID}},
		} {
			if got := jobIDs(c.query, c.token); !slices.Equal(got, c.want) {
				t.Errorf("jobs?%s: %v; want %v", c.query, got, c.want)
			}
		}
		// The reporter may not read the runner.
		s.Get(t, fmt.Sprintf("/runners/%d/jobs", r.ID), rep.Token).Want(t, http.StatusNotFound)
		for q, body := range map[string]string{
			"status=bogus":  `{"error":"status does not have a valid value"}`,
			"order_by=name": `{"error":"order_by does not have a valid value"}`,
			"sort=up":       `{"error":"sort does not have a valid value"}`,
		} {
			s.Get(t, fmt.Sprintf("/runners/%d/jobs?%s", r.ID, q), alice.Token).Want(t, http.StatusBadRequest).WantBody(t, body)
		}
		res := s.Get(t, fmt.Sprintf("/runners/%d/jobs?per_page=1", r.ID), alice.Token).Want(t, http.StatusOK)
		if res.Header.Get("X-Total") != "2" || res.Header.Get("X-Next-Page") != "2" {
			t.Errorf("paging headers %v", res.Header)
		}
		items := s.Get(t, fmt.Sprintf("/runners/%d/jobs?status=success", r.ID), alice.Token).Array(t)
		if len(items) != 1 {
			t.Fatalf("items %v", items)
		}
		it := items[0]
		proj, _ := it["project"].(map[string]any)
		if it["status"] != "success" || it["name"] != "build" || it["stage"] != "test" || it["web_url"] == nil || it["pipeline"] == nil ||
			it["commit"] == nil || proj["id"] != float64(p1.ID) || proj["path_with_namespace"] != p1.Path || proj["name"] != "rj-one" ||
			proj["name_with_namespace"] == nil || proj["created_at"] == nil || proj["path"] != "rj-one" {
			t.Errorf("runner job %v", it)
		}
		if _, ok := proj["ci_job_token_scope_enabled"]; ok {
			t.Errorf("runner job project %v", proj)
		}

		// A deleted runner leaves the job without one.
		s.Do(t, apitest.Request{Method: "DELETE", Path: fmt.Sprintf("/runners/%d", r.ID), Token: s.RootToken}).Want(t, http.StatusNoContent)
		s.Get(t, fmt.Sprintf("/projects/%d/jobs/%d", p1.ID, job1.ID), alice.Token).Want(t, http.StatusOK).JSON(t, &job)
		if job.Runner != nil {
			t.Errorf("job of a deleted runner names %v", job.Runner)
		}
	}, shortPoll)
}

// TestRunnersAPI_statuses: online, offline, stale and never_contacted as
// the clock moves, in the fields and the status filter; a paused runner
// that called shows "paused".
func TestRunnersAPI_statuses(t *testing.T) {
	t.Parallel()
	start := time.Date(2031, 5, 6, 7, 8, 9, 0, time.UTC)
	// Each server gets a clock of its own (apitest.Each would share one
	// option between the databases' servers).
	apitest.EachTarget(t, func(t *testing.T, target storetest.Target) {
		clock := &testClock{now: start}
		s := apitest.Start(t, target, func(c *cfgpkg.Config) { c.Clock = clock.Now })
		alice := s.NewUser(t, "rsalice")
		p := raProject(t, s, alice.Token, "rs-p", 0, nil)
		mk := func(attrs map[string]any) protoRunner {
			attrs["runner_type"], attrs["project_id"] = "project_type", p.ID
			return newRunner(t, s, alice.Token, attrs)
		}
		quiet, active, paused := mk(map[string]any{}), mk(map[string]any{}), mk(map[string]any{"paused": true})
		active.verify(t).Want(t, http.StatusOK)
		paused.verify(t).Want(t, http.StatusOK)
		status := func(r protoRunner) (string, bool) {
			var x runnerJSON
			s.Get(t, fmt.Sprintf("/runners/%d", r.ID), alice.Token).Want(t, http.StatusOK).JSON(t, &x)
			return x.Status, x.Online
		}
		check := func(when string, want map[protoRunner][2]any, filters map[string][]protoRunner) {
			t.Helper()
			for r, w := range want {
				if st, online := status(r); st != w[0] || online != w[1] {
					t.Errorf("%s: runner %d %s online=%v; want %v online=%v", when, r.ID, st, online, w[0], w[1])
				}
			}
			for f, rs := range filters {
				wantIDs(t, when+" "+f, raIDs(t, s, fmt.Sprintf("/projects/%d/runners?type=project_type&status=%s", p.ID, f), alice.Token), rs...)
			}
		}
		check("at first", map[protoRunner][2]any{quiet: {"never_contacted", false}, active: {"online", true}, paused: {"paused", true}},
			map[string][]protoRunner{"online": {active, paused}, "never_contacted": {quiet}, "offline": {}, "stale": {}})
		clock.Set(start.Add(3 * time.Hour))
		check("3h later", map[protoRunner][2]any{quiet: {"never_contacted", false}, active: {"offline", false}, paused: {"paused", false}},
			map[string][]protoRunner{"online": {}, "never_contacted": {quiet}, "offline": {active, paused}, "stale": {}})
		active.verify(t).Want(t, http.StatusOK)
		check("after a call", map[protoRunner][2]any{active: {"online", true}}, map[string][]protoRunner{"online": {active}})
		clock.Set(start.Add(8 * 24 * time.Hour))
		check("8 days later", map[protoRunner][2]any{quiet: {"stale", false}, active: {"stale", false}, paused: {"stale", false}},
			map[string][]protoRunner{"online": {}, "never_contacted": {}, "offline": {}, "stale": {quiet, active, paused}})
	})
}

// TestRunnersAPI_officialClient: the official Go client's runners
// service against Quarry.
func TestRunnersAPI_officialClient(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		alice := s.NewUser(t, "rcalice")
		g, _ := raGroup(t, s, alice.Token, "rc-group", 0)
		p1 := raProject(t, s, alice.Token, "rc-one", g, map[string]string{".gitlab-ci.yml": "build:\n  script: [echo hi]\n"})
		p1.settle(t, 1)
		p2 := raProject(t, s, alice.Token, "rc-two", 0, nil)
		c, root := s.Client(t, alice.Token), s.Root(t)

		r := projectRunner(t, p1, map[string]any{"description": "client", "tag_list": []string{"go"}})
		grp := newRunner(t, s, alice.Token, map[string]any{"runner_type": "group_type", "group_id": g})
		inst := newRunner(t, s, s.RootToken, map[string]any{"runner_type": "instance_type"})
		job := r.take(t)

		owned, resp, err := c.Runners.ListRunners(&gitlab.ListRunnersOptions{Type: gitlab.Ptr("project_type")})
		if err != nil || len(owned) != 1 || owned[0].ID != r.ID || owned[0].Description != "client" || owned[0].IsShared ||
			owned[0].Status != "online" || !owned[0].Online || owned[0].Paused || resp.TotalItems != 1 {
			t.Fatalf("ListRunners: %+v, %v", owned, err)
		}
		tagged, _, err := c.Runners.ListRunners(&gitlab.ListRunnersOptions{TagList: &[]string{"go"}, Status: gitlab.Ptr("online")})
		if err != nil || len(tagged) != 1 || tagged[0].ID != r.ID {
			t.Errorf("ListRunners tagged: %+v, %v", tagged, err)
		}
		if _, resp, err := c.Runners.ListAllRunners(nil); err == nil || resp.StatusCode != http.StatusForbidden {
			t.Errorf("ListAllRunners as a user: %v", err)
		}
		all, _, err := root.Runners.ListAllRunners(&gitlab.ListRunnersOptions{Type: gitlab.Ptr("instance_type")})
		if err != nil || len(all) != 1 || all[0].ID != inst.ID || !all[0].IsShared {
			t.Errorf("ListAllRunners: %+v, %v", all, err)
		}

		d, _, err := c.Runners.GetRunnerDetails(r.ID)
		if err != nil || d.ID != r.ID || d.RunnerType != "project_type" || !slices.Equal(d.TagList, []string{"go"}) || !d.RunUntagged ||
			d.AccessLevel != "not_protected" || d.ContactedAt == nil || len(d.Projects) != 1 ||
			d.Projects[0].ID != p1.ID || d.Projects[0].PathWithNamespace != p1.Path {
			t.Fatalf("GetRunnerDetails: %+v, %v", d, err)
		}
		d, _, err = c.Runners.UpdateRunnerDetails(r.ID, &gitlab.UpdateRunnerDetailsOptions{Description: gitlab.Ptr("renamed"),
			TagList: &[]string{"go", "linux"}, MaintenanceNote: gitlab.Ptr("noted"), MaximumTimeout: gitlab.Ptr(int64(3600)),
			AccessLevel: gitlab.Ptr("ref_protected"), Locked: gitlab.Ptr(true)})
		if err != nil || d.Description != "renamed" || !slices.Equal(d.TagList, []string{"go", "linux"}) || d.MaintenanceNote != "noted" ||
			d.MaximumTimeout != 3600 || d.AccessLevel != "ref_protected" || !d.Locked {
			t.Errorf("UpdateRunnerDetails: %+v, %v", d, err)
		}
		if _, resp, err := c.Runners.UpdateRunnerDetails(r.ID, &gitlab.UpdateRunnerDetailsOptions{MaximumTimeout: gitlab.Ptr(int64(60))}); err == nil ||
			resp.StatusCode != http.StatusBadRequest {
			t.Errorf("UpdateRunnerDetails with a short timeout: %v", err)
		}
		if _, resp, err := c.Runners.GetRunnerDetails(s.AbsentID(t)); err == nil || resp.StatusCode != http.StatusNotFound {
			t.Errorf("GetRunnerDetails of nothing: %v", err)
		}

		pr, _, err := c.Runners.ListProjectRunners(p1.ID, &gitlab.ListProjectRunnersOptions{})
		if err != nil || len(pr) != 3 || pr[0].ID != r.ID || pr[1].ID != grp.ID || pr[2].ID != inst.ID {
			t.Errorf("ListProjectRunners: %+v, %v", pr, err)
		}
		gr, _, err := c.Runners.ListGroupsRunners(g, &gitlab.ListGroupsRunnersOptions{Type: gitlab.Ptr("group_type")})
		if err != nil || len(gr) != 1 || gr[0].ID != grp.ID {
			t.Errorf("ListGroupsRunners: %+v, %v", gr, err)
		}

		// Locked by the update above: an administrator assigns it.
		if _, resp, err := c.Runners.EnableProjectRunner(p2.ID, &gitlab.EnableProjectRunnerOptions{RunnerID: r.ID}); err == nil ||
			resp.StatusCode != http.StatusForbidden {
			t.Errorf("EnableProjectRunner of a locked runner: %v", err)
		}
		en, _, err := root.Runners.EnableProjectRunner(p2.ID, &gitlab.EnableProjectRunnerOptions{RunnerID: r.ID})
		if err != nil || en.ID != r.ID {
			t.Fatalf("EnableProjectRunner: %+v, %v", en, err)
		}
		if _, err := root.Runners.DisableProjectRunner(p2.ID, r.ID); err != nil {
			t.Errorf("DisableProjectRunner: %v", err)
		}

		jobs, _, err := c.Runners.ListRunnerJobs(r.ID, &gitlab.ListRunnerJobsOptions{Status: gitlab.Ptr("running")})
		if err != nil || len(jobs) != 1 || jobs[0].ID != job.ID || jobs[0].Status != "running" || jobs[0].Project == nil ||
			jobs[0].Project.ID != p1.ID || jobs[0].Pipeline.ID == 0 {
			t.Errorf("ListRunnerJobs: %+v, %v", jobs, err)
		}
		j, _, err := c.Jobs.GetJob(p1.ID, job.ID)
		if err != nil || j.Runner.ID != r.ID || j.Runner.Description != "renamed" || !j.Runner.Active || j.Runner.IsShared {
			t.Errorf("GetJob runner: %+v, %v", j, err)
		}

		tok, _, err := c.Runners.ResetRunnerAuthenticationToken(r.ID)
		if err != nil || tok.Token == nil || *tok.Token == r.Token || tok.TokenExpiresAt != nil {
			t.Fatalf("ResetRunnerAuthenticationToken: %+v, %v", tok, err)
		}
		r.verify(t).Want(t, http.StatusForbidden)
		protoRunner{s: s, Token: *tok.Token}.verify(t).Want(t, http.StatusOK)

		if _, err := c.Runners.RemoveRunner(r.ID); err != nil {
			t.Errorf("RemoveRunner: %v", err)
		}
		if _, resp, err := c.Runners.GetRunnerDetails(r.ID); err == nil || resp.StatusCode != http.StatusNotFound {
			t.Errorf("GetRunnerDetails after removal: %v", err)
		}
	}, shortPoll)
}
