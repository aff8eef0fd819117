package e2e

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	gitlab "gitlab.com/gitlab-org/api/client-go"

	"quarry/internal/apitest"
)

func TestProjects_createAndGet(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		alice := s.NewUser(t, "alice")
		c := s.Client(t, alice.Token)
		p, _, err := c.Projects.CreateProject(&gitlab.CreateProjectOptions{
			Name: gitlab.Ptr("Hello World"), Description: gitlab.Ptr("first"), InitializeWithReadme: gitlab.Ptr(true),
			DefaultBranch: gitlab.Ptr("trunk"), Visibility: gitlab.Ptr(gitlab.InternalVisibility), Topics: &[]string{"go", "Web"},
		})
		if err != nil {
			t.Fatal(err)
		}
		if p.Path != "hello-world" || p.PathWithNamespace != "alice/hello-world" || p.NameWithNamespace != "Alice / Hello World" {
			t.Errorf("names %q %q %q", p.Path, p.PathWithNamespace, p.NameWithNamespace)
		}
		if p.DefaultBranch != "trunk" || p.EmptyRepo || p.ReadmeURL != s.URL+"/alice/hello-world/-/blob/trunk/README.md" {
			t.Errorf("repository fields %q %v %q", p.DefaultBranch, p.EmptyRepo, p.ReadmeURL)
		}
		if p.HTTPURLToRepo != s.URL+"/alice/hello-world.git" || p.WebURL != s.URL+"/alice/hello-world" {
			t.Errorf("urls %q %q", p.HTTPURLToRepo, p.WebURL)
		}
		if p.Visibility != gitlab.InternalVisibility || p.Owner == nil || p.Owner.Username != "alice" || p.CreatorID != int64(alice.ID) {
			t.Errorf("visibility %q owner %+v creator %d", p.Visibility, p.Owner, p.CreatorID)
		}
		if strings.Join(p.Topics, ",") != "Web,go" && strings.Join(p.Topics, ",") != "go,Web" {
			t.Errorf("topics %v", p.Topics)
		}
		if p.Namespace == nil || p.Namespace.Kind != "user" || p.Namespace.FullPath != "alice" {
			t.Errorf("namespace %+v", p.Namespace)
		}
		// A personal project's owner is its Owner member.
		if p.Permissions == nil || p.Permissions.ProjectAccess == nil || p.Permissions.ProjectAccess.AccessLevel != gitlab.OwnerPermissions {
			t.Errorf("permissions %+v", p.Permissions)
		}
		if p.ImportStatus != "none" || p.Archived || p.MergeMethod != gitlab.NoFastForwardMerge || p.SquashOption != gitlab.SquashOptionDefaultOff {
			t.Errorf("defaults import %q archived %v merge %q squash %q", p.ImportStatus, p.Archived, p.MergeMethod, p.SquashOption)
		}
		if p.RunnersToken == "" || p.BuildTimeout != 3600 {
			t.Errorf("owner view lacks CI settings: %q %d", p.RunnersToken, p.BuildTimeout)
		}
		// Statistics with real sizes for members.
		got, _, err := c.Projects.GetProject(p.ID, &gitlab.GetProjectOptions{Statistics: gitlab.Ptr(true)})
		if err != nil {
			t.Fatal(err)
		}
		if got.Statistics == nil || got.Statistics.CommitCount != 1 || got.Statistics.RepositorySize <= 0 {
			t.Errorf("statistics %+v", got.Statistics)
		}
		// By URL-encoded path, in any case.
		s.Get(t, "/projects/"+url.PathEscape("ALICE/Hello-World"), alice.Token).Want(t, 200)
		s.Get(t, "/projects/alice", alice.Token).Want(t, 404).WantBody(t, `{"message":"404 Project Not Found"}`)
		// Another user sees an internal project without CI secrets.
		bob := s.NewUser(t, "bob")
		other := s.Get(t, "/projects/"+itoa(p.ID), bob.Token).Want(t, 200).Object(t)
		if _, ok := other["runners_token"]; ok {
			t.Error("runners_token shown to a non-member")
		}
		// Only a path: the name follows.
		r := s.Do(t, apitest.Request{Method: "POST", Path: "/projects", Token: alice.Token, JSON: map[string]any{"path": "only-path"}}).Want(t, 201).Object(t)
		if r["name"] != "only-path" || r["empty_repo"] != true || r["default_branch"] != "main" || r["readme_url"] != nil {
			t.Errorf("path-only project %v %v %v %v", r["name"], r["empty_repo"], r["default_branch"], r["readme_url"])
		}
	})
}

func TestProjects_createBadInput(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		unknownID := s.AbsentID(t)
		alice := s.NewUser(t, "alice")
		bob := s.NewUser(t, "bob")
		post := func(token string, body map[string]any) *apitest.Response {
			return s.Do(t, apitest.Request{Method: "POST", Path: "/projects", Token: token, JSON: body})
		}
		post("", map[string]any{"name": "x"}).Want(t, 401)
		post(alice.Token, map[string]any{}).Want(t, 400).WantBody(t, `{"error":"name, path are missing, at least one parameter must be provided"}`)
		post(alice.Token, map[string]any{"name": "x", "visibility": "secret"}).Want(t, 400).WantBody(t, `{"error":"visibility does not have a valid value"}`)
		post(alice.Token, map[string]any{"name": "x", "merge_method": "squash"}).Want(t, 400).WantBody(t, `{"error":"merge_method does not have a valid value"}`)
		post(alice.Token, map[string]any{"name": "x", "namespace_id": "abc"}).Want(t, 400).WantBody(t, `{"error":"namespace_id is invalid"}`)
		post(alice.Token, map[string]any{"name": "dup"}).Want(t, 201)
		post(alice.Token, map[string]any{"name": "DUP"}).Want(t, 400).WantBody(t, `{"message":{"name":["has already been taken"],"path":["has already been taken"]}}`)
		post(alice.Token, map[string]any{"name": "x", "path": "-bad"}).Want(t, 400)
		post(alice.Token, map[string]any{"name": "x", "path": "tree"}).Want(t, 400)
		post(alice.Token, map[string]any{"name": "x", "build_timeout": 5}).Want(t, 400)
		// Someone else's namespace.
		var bobUser struct {
			NamespaceID int64 `json:"namespace_id"`
		}
		s.Get(t, "/users/"+itoa(bob.ID), s.RootToken).JSON(t, &bobUser)
		post(alice.Token, map[string]any{"name": "intruder", "namespace_id": bobUser.NamespaceID}).Want(t, 400).
			WantBody(t, `{"message":{"namespace":["is not valid"]}}`)
		post(alice.Token, map[string]any{"name": "x", "namespace_id": unknownID}).Want(t, 404).WantBody(t, `{"message":"404 Namespace Not Found"}`)
		// A private group caps the project's visibility.
		var g struct{ ID int64 }
		s.Do(t, apitest.Request{Method: "POST", Path: "/groups", Token: alice.Token, JSON: map[string]any{"name": "Priv", "path": "priv"}}).Want(t, 201).JSON(t, &g)
		post(alice.Token, map[string]any{"name": "loud", "namespace_id": g.ID, "visibility": "public"}).Want(t, 400).
			WantBody(t, `{"message":{"visibility_level":["public is not allowed in a private group."]}}`)
		// Only administrators create projects for others.
		post2 := func(token string) *apitest.Response {
			return s.Do(t, apitest.Request{Method: "POST", Path: "/projects/user/" + itoa(bob.ID), Token: token, JSON: map[string]any{"name": "gift"}})
		}
		post2(alice.Token).Want(t, 403)
		r := post2(s.RootToken).Want(t, 201).Object(t)
		if r["path_with_namespace"] != "bob/gift" {
			t.Errorf("created for user at %v", r["path_with_namespace"])
		}
		s.Do(t, apitest.Request{Method: "POST", Path: "/projects/user/" + itoa(bob.ID), Token: s.RootToken, JSON: map[string]any{"path": "nameless"}}).
			Want(t, 400).WantBody(t, `{"error":"name is missing"}`)
	})
}

func TestProjects_update(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		alice := s.NewUser(t, "alice")
		var p struct{ ID int64 }
		s.Do(t, apitest.Request{Method: "POST", Path: "/projects", Token: alice.Token, JSON: map[string]any{"name": "proj", "topics": "a,b"}}).Want(t, 201).JSON(t, &p)
		put := func(token string, body map[string]any) *apitest.Response {
			return s.Do(t, apitest.Request{Method: "PUT", Path: "/projects/" + itoa(p.ID), Token: token, JSON: body})
		}
		r := put(alice.Token, map[string]any{"description": "new", "topics": []string{"c"}, "merge_method": "ff",
			"issues_enabled": false, "wiki_access_level": "private", "only_allow_merge_if_pipeline_succeeds": true,
			"container_expiration_policy_attributes": map[string]any{"cadence": "7d", "enabled": true}, "ci_config_path": "ci/x.yml"}).Want(t, 200).Object(t)
		if r["description"] != "new" || r["merge_method"] != "ff" || r["issues_enabled"] != false || r["issues_access_level"] != "disabled" ||
			r["wiki_access_level"] != "private" || r["only_allow_merge_if_pipeline_succeeds"] != true || r["ci_config_path"] != "ci/x.yml" {
			t.Errorf("update not applied: %v", r)
		}
		if fmt.Sprint(r["topics"]) != "[c]" || fmt.Sprint(r["tag_list"]) != "[c]" {
			t.Errorf("topics %v tag_list %v", r["topics"], r["tag_list"])
		}
		if pol := r["container_expiration_policy"].(map[string]any); pol["cadence"] != "7d" || pol["enabled"] != true {
			t.Errorf("policy %v", pol)
		}
		if _, ok := r["_links"].(map[string]any)["issues"]; ok {
			t.Error("issues link shown with issues disabled")
		}
		// The topic "a" lost its project.
		topics := s.Get(t, "/topics?search=a", "").Array(t)
		for _, tp := range topics {
			if tp["name"] == "a" && tp["total_projects_count"] != float64(0) {
				t.Errorf("topic a count %v", tp["total_projects_count"])
			}
		}
		put(alice.Token, map[string]any{}).Want(t, 400)
		put(alice.Token, map[string]any{"squash_option": "sometimes"}).Want(t, 400).WantBody(t, `{"error":"squash_option does not have a valid value"}`)
		put(alice.Token, map[string]any{"default_branch": "nope"}).Want(t, 200) // empty repository: any name
		bob := s.NewUser(t, "bob")
		put(bob.Token, map[string]any{"description": "x"}).Want(t, 404)
		put("", map[string]any{"description": "x"}).Want(t, 401)
		// Rename.
		r = put(alice.Token, map[string]any{"name": "Renamed", "path": "renamed"}).Want(t, 200).Object(t)
		if r["path_with_namespace"] != "alice/renamed" {
			t.Errorf("renamed to %v", r["path_with_namespace"])
		}
	})
}

func TestProjects_archiveTransferDelete(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		alice := s.NewUser(t, "alice")
		var p struct{ ID int64 }
		s.Do(t, apitest.Request{Method: "POST", Path: "/projects", Token: alice.Token, JSON: map[string]any{"name": "proj", "initialize_with_readme": true}}).Want(t, 201).JSON(t, &p)
		path := "/projects/" + itoa(p.ID)
		r := s.Do(t, apitest.Request{Method: "POST", Path: path + "/archive", Token: alice.Token}).Want(t, 201).Object(t)
		if r["archived"] != true {
			t.Error("not archived")
		}
		s.Do(t, apitest.Request{Method: "POST", Path: path + "/archive", Token: alice.Token}).Want(t, 201)
		if got := s.Get(t, "/projects?archived=true", alice.Token).Array(t); len(got) != 1 {
			t.Errorf("archived filter: %d", len(got))
		}
		if got := s.Get(t, "/projects?archived=false", alice.Token).Array(t); len(got) != 0 {
			t.Errorf("archived=false filter: %d", len(got))
		}
		s.Do(t, apitest.Request{Method: "POST", Path: path + "/unarchive", Token: alice.Token}).Want(t, 201)

		// Transfer into a group; the repository stays at its hashed path.
		before := repoDir(t, s, p.ID)
		var g struct{ ID int64 }
		s.Do(t, apitest.Request{Method: "POST", Path: "/groups", Token: alice.Token, JSON: map[string]any{"name": "Team", "path": "team"}}).Want(t, 201).JSON(t, &g)
		r = s.Do(t, apitest.Request{Method: "PUT", Path: path + "/transfer", Token: alice.Token, JSON: map[string]any{"namespace": "team"}}).Want(t, 200).Object(t)
		if r["path_with_namespace"] != "team/proj" {
			t.Errorf("transferred to %v", r["path_with_namespace"])
		}
		if repoDir(t, s, p.ID) != before {
			t.Error("repository moved on transfer")
		}
		s.Do(t, apitest.Request{Method: "PUT", Path: path + "/transfer", Token: alice.Token, JSON: map[string]any{"namespace": "nowhere"}}).Want(t, 404).
			WantBody(t, `{"message":"404 Namespace Not Found"}`)
		s.Do(t, apitest.Request{Method: "PUT", Path: path + "/transfer", Token: alice.Token}).Want(t, 400).WantBody(t, `{"error":"namespace is missing"}`)

		// Delete marks the project; it stays until removed for good.
		bob := s.NewUser(t, "bob")
		s.Do(t, apitest.Request{Method: "DELETE", Path: path, Token: bob.Token}).Want(t, 404)
		s.Do(t, apitest.Request{Method: "DELETE", Path: path, Token: alice.Token}).Want(t, 202).WantBody(t, `{"message":"202 Accepted"}`)
		r = s.Get(t, path, alice.Token).Want(t, 200).Object(t)
		if r["marked_for_deletion_on"] == nil {
			t.Error("not marked for deletion")
		}
		s.Do(t, apitest.Request{Method: "POST", Path: path + "/restore", Token: alice.Token}).Want(t, 201)
		s.Do(t, apitest.Request{Method: "DELETE", Path: path, Token: alice.Token}).Want(t, 202)
		s.Do(t, apitest.Request{Method: "DELETE", Path: path + "?permanently_remove=true&full_path=wrong", Token: alice.Token}).Want(t, 400)
		s.Do(t, apitest.Request{Method: "DELETE", Path: path + "?permanently_remove=true&full_path=team/proj", Token: alice.Token}).Want(t, 202)
		waitGone(t, s, path, alice.Token)
		for i := 0; ; i++ {
			if _, err := osStat(before); err != nil {
				break
			}
			if i == 500 {
				t.Fatal("repository still on disk after deletion")
			}
			sleep()
		}
	}, apitest.DelayedDeletion)
}

func waitGone(t *testing.T, s *apitest.Server, path, token string) {
	t.Helper()
	for i := 0; i < 500; i++ {
		if s.Get(t, path, token).Status == http.StatusNotFound {
			return
		}
		sleep()
	}
	t.Fatalf("%s still there", path)
}

func TestProjects_starsAndStarrers(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		alice := s.NewUser(t, "alice")
		bob := s.NewUser(t, "bob")
		var p struct{ ID int64 }
		s.Do(t, apitest.Request{Method: "POST", Path: "/projects", Token: alice.Token, JSON: map[string]any{"name": "star", "visibility": "public"}}).Want(t, 201).JSON(t, &p)
		path := "/projects/" + itoa(p.ID)
		r := s.Do(t, apitest.Request{Method: "POST", Path: path + "/star", Token: bob.Token}).Want(t, 201).Object(t)
		if r["star_count"] != float64(1) {
			t.Errorf("star_count %v", r["star_count"])
		}
		resp := s.Do(t, apitest.Request{Method: "POST", Path: path + "/star", Token: bob.Token}).Want(t, 304)
		if len(resp.Body) != 0 {
			t.Errorf("304 with a body %q", resp.Body)
		}
		st := s.Get(t, path+"/starrers", "").Want(t, 200).Array(t)
		if len(st) != 1 || st[0]["user"].(map[string]any)["username"] != "bob" || st[0]["starred_since"] == nil {
			t.Errorf("starrers %v", st)
		}
		if got := s.Get(t, "/projects?starred=true", bob.Token).Array(t); len(got) != 1 {
			t.Errorf("starred filter %d", len(got))
		}
		if got := s.Get(t, "/users/bob/starred_projects", alice.Token).Array(t); len(got) != 1 {
			t.Errorf("starred_projects %d", len(got))
		}
		s.Do(t, apitest.Request{Method: "POST", Path: path + "/unstar", Token: bob.Token}).Want(t, 201)
		s.Do(t, apitest.Request{Method: "POST", Path: path + "/unstar", Token: bob.Token}).Want(t, 304)
		s.Do(t, apitest.Request{Method: "POST", Path: path + "/star"}).Want(t, 401)
	})
}

func TestProjects_listFiltersAndPaging(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		alice := s.NewUser(t, "alice")
		for i := 0; i < 7; i++ {
			body := map[string]any{"name": fmt.Sprintf("p%d", i), "visibility": "public"}
			if i%2 == 0 {
				body["topics"] = []string{"even"}
			}
			if i == 3 {
				body["description"] = "needle in here"
			}
			s.Do(t, apitest.Request{Method: "POST", Path: "/projects", Token: alice.Token, JSON: body}).Want(t, 201)
		}
		count := func(q string) int { return len(s.Get(t, "/projects?per_page=100&"+q, "").Want(t, 200).Array(t)) }
		for q, want := range map[string]int{"topic=even": 4, "topic=even,odd": 0, "search=needle": 1, "search=P1": 1,
			"visibility=public": 7, "visibility=private": 0, "search=alice&search_namespaces=true": 7} {
			if got := count(q); got != want {
				t.Errorf("%s: %d projects; want %d", q, got, want)
			}
		}
		r := s.Get(t, "/projects?per_page=3&page=2&order_by=name&sort=asc", "").Want(t, 200)
		names := []string{}
		for _, p := range r.Array(t) {
			names = append(names, p["name"].(string))
		}
		if strings.Join(names, ",") != "p3,p4,p5" || r.Header.Get("X-Total") != "7" || r.Header.Get("X-Next-Page") != "3" || r.Header.Get("X-Prev-Page") != "1" {
			t.Errorf("page 2: %v total %s", names, r.Header.Get("X-Total"))
		}
		// Keyset: follow id_before links to the end.
		seen := 0
		s.Walk(t, "/projects?pagination=keyset&order_by=id&sort=desc&per_page=2", "", func(r *apitest.Response) {
			seen += len(r.Array(t))
			if next := apitest.Links(t, r.Header)["next"]; next != "" && !strings.Contains(next, "id_before=") {
				t.Fatalf("keyset link %s", r.Header.Get("Link"))
			}
		})
		if seen != 7 {
			t.Errorf("keyset visited %d projects", seen)
		}
		s.Get(t, "/projects?pagination=keyset&order_by=name", "").Want(t, 405).
			WantBody(t, `{"error":"Keyset pagination is not yet available for this type of request"}`)
		s.Get(t, "/projects?page=501&per_page=100", "").Want(t, 405)
		if got := len(s.Get(t, "/users/alice/projects", "").Want(t, 200).Array(t)); got != 7 {
			t.Errorf("user projects %d", got)
		}
		s.Get(t, "/users/nobody/projects", "").Want(t, 404)
		s.Get(t, "/projects?order_by=stars", "").Want(t, 400)
	})
}

func TestProjects_languages(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		alice := s.NewUser(t, "alice")
		var goP, other struct{ ID int64 }
		s.Do(t, apitest.Request{Method: "POST", Path: "/projects", Token: alice.Token, JSON: map[string]any{"name": "gopher", "visibility": "public", "initialize_with_readme": true}}).Want(t, 201).JSON(t, &goP)
		s.Do(t, apitest.Request{Method: "POST", Path: "/projects", Token: alice.Token, JSON: map[string]any{"name": "docs", "visibility": "public", "initialize_with_readme": true}}).Want(t, 201).JSON(t, &other)
		work := t.TempDir()
		git(t, work, "clone", "-q", repoDir(t, s, goP.ID), "w")
		w := work + "/w"
		writeFile(t, w+"/main.go", strings.Repeat("package main\n", 30))
		writeFile(t, w+"/run.sh", strings.Repeat("e\n", 65))
		git(t, w, "add", ".")
		git(t, w, "commit", "-q", "-m", "code")
		git(t, w, "push", "-q", "origin", "HEAD:main")
		if err := s.App.Projects.RepositoryChanged(t.Context(), goP.ID); err != nil {
			t.Fatal(err)
		}
		langs := s.Get(t, "/projects/"+itoa(goP.ID)+"/languages", "").Want(t, 200).Object(t)
		if langs["Go"] != float64(75) || langs["Shell"] != float64(25) {
			t.Errorf("languages %v", langs)
		}
		s.Get(t, "/projects/"+itoa(other.ID)+"/languages", "").Want(t, 200).WantBody(t, `{}`)
		got := s.Get(t, "/projects?with_programming_language=go", "").Want(t, 200).Array(t)
		if len(got) != 1 || got[0]["id"] != float64(goP.ID) {
			t.Errorf("language filter %v", got)
		}
	})
}

func TestProjects_similarityOrder(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		alice := s.NewUser(t, "alice")
		for _, n := range []string{"my-api-tools", "api", "apix"} {
			s.Do(t, apitest.Request{Method: "POST", Path: "/projects", Token: alice.Token, JSON: map[string]any{"name": n, "visibility": "public"}}).Want(t, 201)
			s.Do(t, apitest.Request{Method: "POST", Path: "/groups", Token: alice.Token, JSON: map[string]any{"name": "g " + n, "path": "g-" + n, "visibility": "public"}}).Want(t, 201)
		}
		var names []string
		for _, p := range s.Get(t, "/projects?search=api&order_by=similarity", alice.Token).Want(t, 200).Array(t) {
			names = append(names, p["name"].(string))
		}
		if strings.Join(names, ",") != "api,apix,my-api-tools" {
			t.Errorf("projects by similarity %v", names)
		}
		names = nil
		for _, g := range s.Get(t, "/groups?search=g-api&order_by=similarity", alice.Token).Want(t, 200).Array(t) {
			names = append(names, g["path"].(string))
		}
		if strings.Join(names, ",") != "g-api,g-apix" {
			t.Errorf("groups by similarity %v", names)
		}
	})
}

func TestProjects_membershipFilters(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		alice := s.NewUser(t, "alice")
		bob := s.NewUser(t, "bob")
		var mine, team, theirs struct{ ID int64 }
		s.Do(t, apitest.Request{Method: "POST", Path: "/projects", Token: alice.Token, JSON: map[string]any{"name": "mine", "visibility": "public"}}).Want(t, 201).JSON(t, &mine)
		var g struct{ ID int64 }
		s.Do(t, apitest.Request{Method: "POST", Path: "/groups", Token: bob.Token, JSON: map[string]any{"name": "Bobs", "path": "bobs", "visibility": "public"}}).Want(t, 201).JSON(t, &g)
		s.Do(t, apitest.Request{Method: "POST", Path: "/projects", Token: bob.Token, JSON: map[string]any{"name": "team", "namespace_id": g.ID, "visibility": "public"}}).Want(t, 201).JSON(t, &team)
		s.Do(t, apitest.Request{Method: "POST", Path: "/projects", Token: bob.Token, JSON: map[string]any{"name": "theirs", "visibility": "public"}}).Want(t, 201).JSON(t, &theirs)
		// Share bob's group project with a group alice owns, as developers.
		var ag struct{ ID int64 }
		s.Do(t, apitest.Request{Method: "POST", Path: "/groups", Token: alice.Token, JSON: map[string]any{"name": "Alices", "path": "alices", "visibility": "public"}}).Want(t, 201).JSON(t, &ag)
		s.Do(t, apitest.Request{Method: "POST", Path: "/projects/" + itoa(team.ID) + "/share", Token: bob.Token, JSON: map[string]any{"group_id": ag.ID, "group_access": 30}}).Want(t, 201)
		ids := func(q string) string {
			var out []string
			for _, p := range s.Get(t, "/projects?order_by=id&sort=asc&"+q, alice.Token).Want(t, 200).Array(t) {
				out = append(out, p["name"].(string))
			}
			return strings.Join(out, ",")
		}
		for q, want := range map[string]string{
			"":                             "mine,team,theirs",
			"owned=true":                   "mine",
			"membership=true":              "mine,team",
			"min_access_level=30":          "mine,team",
			"min_access_level=40":          "mine",
			"id_after=" + itoa(mine.ID):    "team,theirs",
			"id_before=" + itoa(theirs.ID): "mine,team",
			"last_activity_after=2000-01-01T00:00:00Z":  "mine,team,theirs",
			"last_activity_before=2000-01-01T00:00:00Z": "",
		} {
			if got := ids(q); got != want {
				t.Errorf("?%s: %s; want %s", q, got, want)
			}
		}
		// The shared project shows alice's group access in permissions.
		p := s.Get(t, "/projects/"+itoa(team.ID), alice.Token).Object(t)
		perm := p["permissions"].(map[string]any)
		if perm["project_access"] != nil || perm["group_access"] != nil {
			t.Errorf("permissions of a shared project %v", perm)
		}
		p = s.Get(t, "/projects/"+itoa(team.ID), bob.Token).Object(t)
		if ga, _ := p["permissions"].(map[string]any)["group_access"].(map[string]any); ga == nil || ga["access_level"] != float64(50) {
			t.Errorf("owner's group_access %v", p["permissions"])
		}
		// Statistics need a reporter: alice (developer through the share) sees them, anonymous callers do not.
		if st := s.Get(t, "/projects/"+itoa(team.ID)+"?statistics=true", alice.Token).Object(t)["statistics"]; st == nil {
			t.Error("statistics hidden from a developer")
		}
		if _, ok := s.Get(t, "/projects/"+itoa(theirs.ID)+"?statistics=true", alice.Token).Object(t)["statistics"]; ok {
			t.Error("statistics shown to a non-member")
		}
	})
}

func TestGroups_keysetForAnonymous(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		alice := s.NewUser(t, "alice")
		for _, n := range []string{"delta", "alpha", "charlie", "bravo", "echo"} {
			s.Do(t, apitest.Request{Method: "POST", Path: "/groups", Token: alice.Token, JSON: map[string]any{"name": n, "path": n, "visibility": "public"}}).Want(t, 201)
		}
		var seen []string
		s.Walk(t, "/groups?pagination=keyset&order_by=name&sort=asc&per_page=2", "", func(r *apitest.Response) {
			for _, g := range r.Array(t) {
				seen = append(seen, g["name"].(string))
			}
		})
		if strings.Join(seen, ",") != "alpha,bravo,charlie,delta,echo" {
			t.Errorf("keyset groups %v", seen)
		}
		s.Get(t, "/groups?pagination=keyset&order_by=name", alice.Token).Want(t, 405)
	})
}

func TestProjects_license(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		alice := s.NewUser(t, "alice")
		var p struct{ ID int64 }
		s.Do(t, apitest.Request{Method: "POST", Path: "/projects", Token: alice.Token, JSON: map[string]any{"name": "lic", "initialize_with_readme": true}}).Want(t, 201).JSON(t, &p)
		r := s.Get(t, "/projects/"+itoa(p.ID)+"?license=true", alice.Token).Want(t, 200).Object(t)
		if v, ok := r["license"]; !ok || v != nil {
			t.Errorf("license without a file: %v", v)
		}
		work := t.TempDir()
		git(t, work, "clone", "-q", repoDir(t, s, p.ID), "w")
		writeFile(t, work+"/w/LICENSE", "MIT License\n\nPermission is hereby granted, free of charge, to any person obtaining a copy\n")
		git(t, work+"/w", "add", ".")
		git(t, work+"/w", "commit", "-q", "-m", "license")
		git(t, work+"/w", "push", "-q", "origin", "HEAD:main")
		r = s.Get(t, "/projects/"+itoa(p.ID)+"?license=true", alice.Token).Want(t, 200).Object(t)
		lic, _ := r["license"].(map[string]any)
		if lic == nil || lic["key"] != "mit" || r["license_url"] != s.URL+"/alice/lic/-/blob/main/LICENSE" {
			t.Errorf("license %v %v", r["license"], r["license_url"])
		}
		if _, ok := s.Get(t, "/projects/"+itoa(p.ID), alice.Token).Object(t)["license"]; ok {
			t.Error("license shown without license=true")
		}
	})
}

func TestProjects_featureAndStorageFilters(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		alice := s.NewUser(t, "alice")
		s.Do(t, apitest.Request{Method: "POST", Path: "/projects", Token: alice.Token, JSON: map[string]any{"name": "plain", "visibility": "public"}}).Want(t, 201)
		s.Do(t, apitest.Request{Method: "POST", Path: "/projects", Token: alice.Token, JSON: map[string]any{"name": "quiet", "visibility": "public",
			"issues_access_level": "disabled", "merge_requests_enabled": false}}).Want(t, 201)
		count := func(q, token string) int { return len(s.Get(t, "/projects?"+q, token).Want(t, 200).Array(t)) }
		if n := count("with_issues_enabled=true", ""); n != 1 {
			t.Errorf("with_issues_enabled: %d", n)
		}
		if n := count("with_merge_requests_enabled=true", ""); n != 1 {
			t.Errorf("with_merge_requests_enabled: %d", n)
		}
		if n := count("repository_storage=default", s.RootToken); n != 2 {
			t.Errorf("repository_storage=default: %d", n)
		}
		if n := count("repository_storage=elsewhere", s.RootToken); n != 0 {
			t.Errorf("repository_storage=elsewhere: %d", n)
		}
		// Only administrators filter by storage; others see everything.
		if n := count("repository_storage=elsewhere", alice.Token); n != 2 {
			t.Errorf("non-admin storage filter applied: %d", n)
		}
		// Group statistics for administrators.
		var g struct{ ID int64 }
		s.Do(t, apitest.Request{Method: "POST", Path: "/groups", Token: alice.Token, JSON: map[string]any{"name": "Stats", "path": "stats"}}).Want(t, 201).JSON(t, &g)
		s.Do(t, apitest.Request{Method: "POST", Path: "/projects", Token: alice.Token, JSON: map[string]any{"name": "in", "namespace_id": g.ID, "initialize_with_readme": true}}).Want(t, 201)
		st, _ := s.Get(t, "/groups/"+itoa(g.ID)+"?statistics=true", s.RootToken).Object(t)["statistics"].(map[string]any)
		if st == nil || st["repository_size"].(float64) <= 0 {
			t.Errorf("group statistics %v", st)
		}
		if _, ok := s.Get(t, "/groups/"+itoa(g.ID)+"?statistics=true", alice.Token).Object(t)["statistics"]; ok {
			t.Error("statistics shown to a non-admin")
		}
		if gs := s.Get(t, "/groups?statistics=true", s.RootToken).Array(t); len(gs) != 1 || gs[0]["statistics"] == nil {
			t.Errorf("group list statistics %v", gs)
		}
	})
}
