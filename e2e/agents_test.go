package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	gitlab "gitlab.com/gitlab-org/api/client-go"

	"quarry/internal/apitest"
	"quarry/internal/auth"
	"quarry/internal/model"
)

// Agents for Kubernetes (GitLab's cluster agents): their registrations,
// and the agents a CI job may use by its agents' config.yaml.

// agentJSON is an agent as the API renders it.
type agentJSON struct {
	ID            int64  `json:"id"`
	Name          string `json:"name"`
	CreatedAt     string `json:"created_at"`
	ConfigProject struct {
		ID                int64  `json:"id"`
		Description       string `json:"description"`
		Name              string `json:"name"`
		NameWithNamespace string `json:"name_with_namespace"`
		Path              string `json:"path"`
		PathWithNamespace string `json:"path_with_namespace"`
		CreatedAt         string `json:"created_at"`
	} `json:"config_project"`
	CreatedByUserID *int64 `json:"created_by_user_id"`
}

// agGroup makes a group (under parent, when not 0) as token's user.
func agGroup(t *testing.T, s *apitest.Server, token, path string, parent int64) (id int64, fullPath string) {
	t.Helper()
	body := map[string]any{"name": path, "path": path}
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

// agProject makes a project with a README in a namespace (0: the user's
// own), as token's user.
func agProject(t *testing.T, s *apitest.Server, token, name string, namespace int64) ciProject {
	t.Helper()
	body := map[string]any{"name": name, "initialize_with_readme": true}
	if namespace != 0 {
		body["namespace_id"] = namespace
	}
	var p struct {
		ID                int64  `json:"id"`
		PathWithNamespace string `json:"path_with_namespace"`
	}
	s.Do(t, apitest.Request{Method: "POST", Path: "/projects", Token: token, JSON: body}).Want(t, http.StatusCreated).JSON(t, &p)
	return ciProject{s: s, ID: p.ID, Path: p.PathWithNamespace, Token: token}
}

func agMember(t *testing.T, s *apitest.Server, p ciProject, u apitest.User, level int) {
	t.Helper()
	s.Do(t, apitest.Request{Method: "POST", Path: fmt.Sprintf("/projects/%d/members", p.ID), Token: p.Token,
		JSON: map[string]any{"user_id": u.ID, "access_level": level}}).Want(t, http.StatusCreated)
}

// TestAgents_crud: maintainers register and remove agents; developers
// read them (also with the official client); reporters and guests do
// not, strangers do not see a private project; names follow GitLab's
// rules and are unique per project, bad ones answered in GitLab's words.
func TestAgents_crud(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		owner := s.NewUser(t, "owner")
		maint, dev, rep, guest, stranger := s.NewUser(t, "maint"), s.NewUser(t, "dev"), s.NewUser(t, "rep"), s.NewUser(t, "guest"),
			s.NewUser(t, "stranger")
		p := agProject(t, s, owner.Token, "kube", 0)
		other := agProject(t, s, owner.Token, "other", 0)
		agMember(t, s, p, maint, 40)
		agMember(t, s, p, dev, 30)
		agMember(t, s, p, rep, 20)
		agMember(t, s, p, guest, 10)
		base := fmt.Sprintf("/projects/%d/cluster_agents", p.ID)
		post := func(token string, body map[string]any) *apitest.Response {
			return s.Do(t, apitest.Request{Method: "POST", Path: base, Token: token, JSON: body})
		}

		var a agentJSON
		created := post(maint.Token, map[string]any{"name": "prod-eu1"}).Want(t, http.StatusCreated)
		created.JSON(t, &a)
		var keys []string
		for k := range created.Object(t) {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		if want := []string{"config_project", "created_at", "created_by_user_id", "id", "name"}; !slices.Equal(keys, want) {
			t.Fatalf("agent fields %v; want %v", keys, want)
		}
		cp := a.ConfigProject
		if a.ID == 0 || a.Name != "prod-eu1" || a.CreatedAt == "" || a.CreatedByUserID == nil || *a.CreatedByUserID != maint.ID ||
			cp.ID != p.ID || cp.Name != "kube" || cp.Path != "kube" || cp.PathWithNamespace != "owner/kube" ||
			cp.NameWithNamespace != "Owner / kube" || cp.CreatedAt == "" {
			t.Fatalf("created agent %+v", a)
		}
		one := fmt.Sprintf("%s/%d", base, a.ID)

		// Names: GitLab's rules, every broken one listed.
		bad := func(name any, msgs ...string) {
			t.Helper()
			quoted := make([]string, len(msgs))
			for i, m := range msgs {
				quoted[i] = fmt.Sprintf("%q", m)
			}
			want, _ := json.Marshal(map[string]string{"message": "400 Bad request - [" + strings.Join(quoted, ", ") + "]"})
			post(maint.Token, map[string]any{"name": name}).Want(t, http.StatusBadRequest).WantBody(t, string(want))
		}
		format := "Name can contain only lowercase letters, digits, and '-', but cannot start or end with '-'"
		bad("Prod", format)
		bad("-prod", format)
		bad("prod-", format)
		bad("prod_eu", format)
		bad("", "Name can't be blank", format)
		bad(strings.Repeat("a", 64), "Name is too long (maximum is 63 characters)")
		bad(strings.Repeat("A", 64), "Name is too long (maximum is 63 characters)", format)
		bad("prod-eu1", "Name has already been taken")
		post(maint.Token, map[string]any{}).Want(t, http.StatusBadRequest).WantBody(t, `{"error":"name is missing"}`)
		post(maint.Token, map[string]any{"name": strings.Repeat("a", 63)}).Want(t, http.StatusCreated)
		// Another project may use the same name.
		s.Do(t, apitest.Request{Method: "POST", Path: fmt.Sprintf("/projects/%d/cluster_agents", other.ID), Token: owner.Token,
			JSON: map[string]any{"name": "prod-eu1"}}).Want(t, http.StatusCreated)

		// Reads: developers up, with the official client too.
		var got agentJSON
		s.Get(t, one, dev.Token).Want(t, http.StatusOK).JSON(t, &got)
		if got.ID != a.ID || got.Name != "prod-eu1" || got.ConfigProject.ID != p.ID || got.CreatedAt != a.CreatedAt {
			t.Fatalf("agent read %+v; want %+v", got, a)
		}
		c := s.Client(t, dev.Token)
		list, _, err := c.ClusterAgents.ListAgents(p.ID, &gitlab.ListAgentsOptions{})
		if err != nil || len(list) != 2 || list[0].ID != a.ID || list[0].ConfigProject.PathWithNamespace != "owner/kube" ||
			list[0].CreatedByUserID != maint.ID {
			t.Fatalf("client list %+v, %v", list, err)
		}
		if ga, _, err := c.ClusterAgents.GetAgent(p.Path, a.ID); err != nil || ga.Name != "prod-eu1" {
			t.Fatalf("client get by path %+v, %v", ga, err)
		}

		// Roles: reporters and guests do not see agents; only maintainers
		// change them; strangers do not see the private project.
		for _, u := range []apitest.User{rep, guest} {
			s.Get(t, base, u.Token).Want(t, http.StatusNotFound).WantBody(t, `{"message":"404 ClusterAgents Not Found"}`)
			s.Get(t, one, u.Token).Want(t, http.StatusNotFound).WantBody(t, `{"message":"404 Not found"}`)
		}
		for _, u := range []apitest.User{dev, rep, guest} {
			post(u.Token, map[string]any{"name": "x"}).Want(t, http.StatusForbidden).WantBody(t, `{"message":"403 Forbidden"}`)
			s.Do(t, apitest.Request{Method: "DELETE", Path: one, Token: u.Token}).Want(t, http.StatusForbidden).
				WantBody(t, `{"message":"403 Forbidden"}`)
		}
		for _, path := range []string{base, one} {
			s.Get(t, path, stranger.Token).Want(t, http.StatusNotFound).WantBody(t, `{"message":"404 Project Not Found"}`)
			s.Get(t, path, "").Want(t, http.StatusUnauthorized)
		}
		post(stranger.Token, map[string]any{"name": "x"}).Want(t, http.StatusNotFound).WantBody(t, `{"message":"404 Project Not Found"}`)
		s.Get(t, fmt.Sprintf("/projects/%d/cluster_agents", s.AbsentID(t)), owner.Token).Want(t, http.StatusNotFound).
			WantBody(t, `{"message":"404 Project Not Found"}`)

		// Unknown agents, another project's agent, ids that are not ids.
		notFound := `{"message":"404 Not found"}`
		s.Get(t, fmt.Sprintf("%s/%d", base, s.AbsentID(t)), maint.Token).Want(t, http.StatusNotFound).WantBody(t, notFound)
		var others []agentJSON
		s.Get(t, fmt.Sprintf("/projects/%d/cluster_agents", other.ID), owner.Token).Want(t, http.StatusOK).JSON(t, &others)
		if len(others) != 1 {
			t.Fatalf("the other project's agents %+v", others)
		}
		s.Get(t, fmt.Sprintf("%s/%d", base, others[0].ID), owner.Token).Want(t, http.StatusNotFound).WantBody(t, notFound)
		s.Do(t, apitest.Request{Method: "DELETE", Path: fmt.Sprintf("%s/%d", base, others[0].ID), Token: owner.Token}).
			Want(t, http.StatusNotFound).WantBody(t, notFound)
		s.Get(t, base+"/prod-eu1", maint.Token).Want(t, http.StatusNotFound).WantBody(t, `{"error":"404 Not Found"}`)

		// Pagination.
		for i := range 3 {
			post(maint.Token, map[string]any{"name": fmt.Sprintf("extra-%d", i)}).Want(t, http.StatusCreated)
		}
		r := s.Get(t, base+"?per_page=2&page=2", dev.Token).Want(t, http.StatusOK)
		var page2 []agentJSON
		r.JSON(t, &page2)
		if len(page2) != 2 || page2[0].Name != "extra-0" || r.Header.Get("X-Total") != "5" || r.Header.Get("X-Total-Pages") != "3" ||
			r.Header.Get("X-Next-Page") != "3" || r.Header.Get("X-Prev-Page") != "1" {
			t.Fatalf("page 2 %+v, headers %v", page2, r.Header)
		}
		var walked []string
		s.Walk(t, base+"?per_page=2", dev.Token, func(r *apitest.Response) {
			var page []agentJSON
			r.JSON(t, &page)
			for _, a := range page {
				walked = append(walked, a.Name)
			}
		})
		if want := []string{"prod-eu1", strings.Repeat("a", 63), "extra-0", "extra-1", "extra-2"}; !slices.Equal(walked, want) {
			t.Fatalf("walked %v; want %v", walked, want)
		}

		// Removal.
		s.Do(t, apitest.Request{Method: "DELETE", Path: one, Token: maint.Token}).Want(t, http.StatusNoContent)
		s.Get(t, one, maint.Token).Want(t, http.StatusNotFound).WantBody(t, notFound)
		s.Do(t, apitest.Request{Method: "DELETE", Path: one, Token: maint.Token}).Want(t, http.StatusNotFound).WantBody(t, notFound)
		if _, err := s.Client(t, owner.Token).ClusterAgents.DeleteAgent(p.ID, page2[0].ID); err != nil {
			t.Fatalf("client delete: %v", err)
		}
		s.Get(t, base, dev.Token).Want(t, http.StatusOK)
		if n := len(s.Get(t, base, dev.Token).Array(t)); n != 3 {
			t.Fatalf("%d agents left; want 3", n)
		}
		// The name of a removed agent is free again.
		post(maint.Token, map[string]any{"name": "prod-eu1"}).Want(t, http.StatusCreated)
	})
}

// agAllowed is what the agents service answers a job of p (the first job
// of a pipeline run for main) as the user: the names of the agents, by id.
func agAllowed(t *testing.T, s *apitest.Server, p ciProject, user apitest.User) []string {
	t.Helper()
	pl := p.createPipeline(t, "main")
	jobs := p.ownJobs(t, pl.ID)
	if len(jobs) == 0 {
		t.Fatalf("pipeline %d has no jobs", pl.ID)
	}
	u, err := s.App.DB.UserByID(ctx(t), user.ID)
	if err != nil {
		t.Fatal(err)
	}
	got, err := s.App.Agents.AllowedAgents(ctx(t), auth.Actor{User: &u, Job: &auth.JobActor{ID: jobs[0].ID, ProjectID: p.ID, PipelineID: pl.ID}})
	if err != nil {
		t.Fatal(err)
	}
	if got.Job.ID != jobs[0].ID || got.Pipeline.ID != pl.ID || got.Project.ID != p.ID || got.User == nil || got.User.ID != user.ID {
		t.Fatalf("allowed agents of job %d: job %d, pipeline %d, project %d, user %v", jobs[0].ID, got.Job.ID, got.Pipeline.ID,
			got.Project.ID, got.User)
	}
	var names []string
	for _, a := range got.Agents {
		names = append(names, a.Name)
	}
	return names
}

// TestAgents_allowedByConfigCommit: the agents a job may use follow their
// config.yaml as committed through the API on the configuration
// project's default branch: its own project's agents always, projects
// listed by path, projects under listed groups, .service/ over .gitlab/;
// a new commit changes the answer; other root namespaces never count.
func TestAgents_allowedByConfigCommit(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		owner := s.NewUser(t, "owner")
		outsider := s.NewUser(t, "outsider")
		topID, top := agGroup(t, s, owner.Token, "acme", 0)
		subID, sub := agGroup(t, s, owner.Token, "web", topID)
		otherID, _ := agGroup(t, s, outsider.Token, "elsewhere", 0)
		cfg := agProject(t, s, owner.Token, "kube-config", topID)
		app := agProject(t, s, owner.Token, "app", subID)
		tool := agProject(t, s, owner.Token, "tool", topID)
		foreign := agProject(t, s, outsider.Token, "foreign", otherID)
		ciFile := map[string]string{".gitlab-ci.yml": "deploy:\n  script: [echo deploy]\n"}
		for _, p := range []ciProject{app, tool, foreign} {
			p.commit(t, "main", ciFile)
		}
		register := func(p ciProject, name string) {
			t.Helper()
			s.Do(t, apitest.Request{Method: "POST", Path: fmt.Sprintf("/projects/%d/cluster_agents", p.ID), Token: p.Token,
				JSON: map[string]any{"name": name}}).Want(t, http.StatusCreated)
		}
		for _, n := range []string{"by-group", "by-path", "shadowed", "unconfigured"} {
			register(cfg, n)
		}
		register(app, "own")
		register(foreign, "intruder")
		foreign.commit(t, "main", map[string]string{".gitlab/agents/intruder/config.yaml": "ci_access:\n  groups:\n    - id: " + top + "\n"})

		// No configuration yet: only the project's own agent.
		if got, want := agAllowed(t, s, app, owner), []string{"own"}; !slices.Equal(got, want) {
			t.Fatalf("before any configuration: %v; want %v", got, want)
		}
		cfg.commit(t, "main", map[string]string{
			".gitlab/agents/by-group/config.yaml": "ci_access:\n  groups:\n    - id: " + sub + "\n",
			".gitlab/agents/by-path/config.yaml":  "ci_access:\n  projects:\n    - id: " + strings.ToUpper(tool.Path) + "\n",
			".gitlab/agents/shadowed/config.yaml": "ci_access:\n  projects:\n    - id: " + app.Path + "\n",
			".service/agents/shadowed/config.yaml": "ci_access:\n  projects:\n    - id: " + tool.Path + "\n" +
				"  groups:\n    - id: no/such/group\n",
		})
		if got, want := agAllowed(t, s, app, owner), []string{"by-group", "own"}; !slices.Equal(got, want) {
			t.Fatalf("the app in the listed group: %v; want %v", got, want)
		}
		if got, want := agAllowed(t, s, tool, owner), []string{"by-path", "shadowed"}; !slices.Equal(got, want) {
			t.Fatalf("the tool listed by path: %v; want %v", got, want)
		}
		if got, want := agAllowed(t, s, foreign, outsider), []string{"intruder"}; !slices.Equal(got, want) {
			t.Fatalf("the foreign project: %v; want %v", got, want)
		}

		// A later commit on the default branch changes the answer; a
		// commit on another branch does not.
		cfg.commit(t, "feature", map[string]string{".gitlab/agents/unconfigured/config.yaml": "ci_access:\n  groups:\n    - id: " + top + "\n"})
		if got, want := agAllowed(t, s, app, owner), []string{"by-group", "own"}; !slices.Equal(got, want) {
			t.Fatalf("after a commit on another branch: %v; want %v", got, want)
		}
		cfg.commit(t, "main", map[string]string{
			".gitlab/agents/by-group/config.yaml":     "ci_access: [broken\n",
			".gitlab/agents/unconfigured/config.yaml": "ci_access:\n  groups:\n    - id: " + strings.ToUpper(top) + "\n",
		})
		if got, want := agAllowed(t, s, app, owner), []string{"unconfigured", "own"}; !slices.Equal(got, want) {
			t.Fatalf("after a new configuration: %v; want %v", got, want)
		}
		if got, want := agAllowed(t, s, tool, owner), []string{"by-path", "shadowed", "unconfigured"}; !slices.Equal(got, want) {
			t.Fatalf("the tool after a new configuration: %v; want %v", got, want)
		}

		// Without a job (another credential) there is no answer.
		u, err := s.App.DB.UserByID(ctx(t), owner.ID)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.App.Agents.AllowedAgents(ctx(t), auth.Actor{User: &u}); model.KindOf(err) != model.KindNotFound {
			t.Fatalf("without a job: %v; want not found", err)
		}
	})
}
