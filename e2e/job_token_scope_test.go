package e2e

import (
	"fmt"
	"net/http"
	"slices"
	"testing"

	gitlab "gitlab.com/gitlab-org/api/client-go"

	"quarry/internal/apitest"
)

// The CI job token scope of projects (GitLab's job_token_scope API): the
// inbound limit, the projects and groups allowlists, and the check the
// job token authenticator makes with them.

func jtsBase(p ciProject) string { return fmt.Sprintf("/projects/%d/job_token_scope", p.ID) }

// TestJobTokenScope_settings: maintainers read and set the inbound limit
// (on for a new project, outbound always off); `enabled` is required and
// a boolean; developers are refused, strangers do not see the project.
func TestJobTokenScope_settings(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		owner, maint, dev, stranger := s.NewUser(t, "owner"), s.NewUser(t, "maint"), s.NewUser(t, "dev"), s.NewUser(t, "stranger")
		p := agProject(t, s, owner.Token, "guarded", 0)
		agMember(t, s, p, maint, 40)
		agMember(t, s, p, dev, 30)
		base := jtsBase(p)
		patch := func(token string, body map[string]any) *apitest.Response {
			return s.Do(t, apitest.Request{Method: "PATCH", Path: base, Token: token, JSON: body})
		}

		s.Get(t, base, maint.Token).Want(t, http.StatusOK).WantBody(t, `{"inbound_enabled":true,"outbound_enabled":false}`)
		patch(maint.Token, map[string]any{"enabled": false}).Want(t, http.StatusNoContent)
		s.Get(t, base, owner.Token).Want(t, http.StatusOK).WantBody(t, `{"inbound_enabled":false,"outbound_enabled":false}`)
		s.Do(t, apitest.Request{Method: "PATCH", Path: base, Token: maint.Token, Form: map[string][]string{"enabled": {"true"}}}).
			Want(t, http.StatusNoContent)
		c := s.Client(t, maint.Token)
		if st, _, err := c.JobTokenScope.GetProjectJobTokenAccessSettings(p.Path); err != nil || !st.InboundEnabled {
			t.Fatalf("client settings %+v, %v", st, err)
		}
		if _, err := c.JobTokenScope.PatchProjectJobTokenAccessSettings(p.ID, &gitlab.PatchProjectJobTokenAccessSettingsOptions{Enabled: false}); err != nil {
			t.Fatalf("client patch: %v", err)
		}
		s.Get(t, base, maint.Token).Want(t, http.StatusOK).WantBody(t, `{"inbound_enabled":false,"outbound_enabled":false}`)

		patch(maint.Token, map[string]any{}).Want(t, http.StatusBadRequest).WantBody(t, `{"error":"enabled is missing"}`)
		patch(maint.Token, map[string]any{"enabled": nil}).Want(t, http.StatusBadRequest).WantBody(t, `{"error":"enabled is missing"}`)
		patch(maint.Token, map[string]any{"enabled": ""}).Want(t, http.StatusBadRequest).WantBody(t, `{"error":"enabled is empty"}`)
		patch(maint.Token, map[string]any{"enabled": "maybe"}).Want(t, http.StatusBadRequest).WantBody(t, `{"error":"enabled is invalid"}`)
		s.Get(t, base, maint.Token).Want(t, http.StatusOK).WantBody(t, `{"inbound_enabled":false,"outbound_enabled":false}`)

		forbidden := `{"message":"403 Forbidden"}`
		s.Get(t, base, dev.Token).Want(t, http.StatusForbidden).WantBody(t, forbidden)
		patch(dev.Token, map[string]any{"enabled": true}).Want(t, http.StatusForbidden).WantBody(t, forbidden)
		s.Get(t, base, stranger.Token).Want(t, http.StatusNotFound).WantBody(t, `{"message":"404 Project Not Found"}`)
		patch(stranger.Token, map[string]any{"enabled": true}).Want(t, http.StatusNotFound).WantBody(t, `{"message":"404 Project Not Found"}`)
		s.Get(t, base, "").Want(t, http.StatusUnauthorized)
		s.Do(t, apitest.Request{Method: "PUT", Path: base, Token: maint.Token}).Want(t, http.StatusMethodNotAllowed)
	})
}

// basicProject is the part of a basic project entity tests read.
type basicProject struct {
	ID                int64  `json:"id"`
	PathWithNamespace string `json:"path_with_namespace"`
	HTTPURLToRepo     string `json:"http_url_to_repo"`
	Namespace         struct {
		ID int64 `json:"id"`
	} `json:"namespace"`
}

// TestJobTokenScope_projectsAllowlist: the allowlist shows the project
// itself first, then the projects added (maintainers, a project they may
// read; GitLab's 400s for the project itself, one listed twice, one they
// cannot see; 404 for an id no project has), paged; removal answers as
// GitLab does for each case.
func TestJobTokenScope_projectsAllowlist(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		owner, dev, stranger := s.NewUser(t, "owner"), s.NewUser(t, "dev"), s.NewUser(t, "stranger")
		p := agProject(t, s, owner.Token, "guarded", 0)
		agMember(t, s, p, dev, 30)
		var mine []ciProject
		for i := range 3 {
			mine = append(mine, agProject(t, s, owner.Token, fmt.Sprintf("friend-%d", i), 0))
		}
		hidden := agProject(t, s, stranger.Token, "hidden", 0)
		list := jtsBase(p) + "/allowlist"
		add := func(token string, body map[string]any) *apitest.Response {
			return s.Do(t, apitest.Request{Method: "POST", Path: list, Token: token, JSON: body})
		}
		del := func(token string, id int64) *apitest.Response {
			return s.Do(t, apitest.Request{Method: "DELETE", Path: fmt.Sprintf("%s/%d", list, id), Token: token})
		}
		ids := func(path string) []int64 {
			t.Helper()
			var out []int64
			s.Walk(t, path, owner.Token, func(r *apitest.Response) {
				var page []basicProject
				r.JSON(t, &page)
				for _, bp := range page {
					if bp.PathWithNamespace == "" || bp.HTTPURLToRepo == "" || bp.Namespace.ID == 0 {
						t.Fatalf("allowlist entry %+v", bp)
					}
					out = append(out, bp.ID)
				}
			})
			return out
		}

		if got := ids(list); !slices.Equal(got, []int64{p.ID}) {
			t.Fatalf("a new allowlist %v; want the project itself", got)
		}
		add(owner.Token, map[string]any{"target_project_id": mine[2].ID}).Want(t, http.StatusCreated).
			WantBody(t, fmt.Sprintf(`{"source_project_id":%d,"target_project_id":%d}`, p.ID, mine[2].ID))
		c := s.Client(t, owner.Token)
		item, _, err := c.JobTokenScope.AddProjectToJobScopeAllowList(p.Path, &gitlab.JobTokenInboundAllowOptions{TargetProjectID: gitlab.Ptr(mine[0].ID)})
		if err != nil || item.SourceProjectID != p.ID || item.TargetProjectID != mine[0].ID {
			t.Fatalf("client add %+v, %v", item, err)
		}
		add(owner.Token, map[string]any{"target_project_id": fmt.Sprint(mine[1].ID)}).Want(t, http.StatusCreated)

		bad := func(body map[string]any, status int, want string) {
			t.Helper()
			add(owner.Token, body).Want(t, status).WantBody(t, want)
		}
		bad(map[string]any{"target_project_id": mine[2].ID}, http.StatusBadRequest,
			`{"message":"400 Bad request - Target project is already in the job token scope"}`)
		bad(map[string]any{"target_project_id": p.ID}, http.StatusBadRequest,
			`{"message":"400 Bad request - Validation failed: Target project can't be the same as the source project"}`)
		bad(map[string]any{"target_project_id": hidden.ID}, http.StatusBadRequest,
			`{"message":"400 Bad request - The target_project that you are attempting to access does not exist or you don't have permission to perform this action"}`)
		bad(map[string]any{"target_project_id": s.AbsentID(t)}, http.StatusNotFound, `{"message":"404 target_project_id not found Not Found"}`)
		bad(map[string]any{}, http.StatusBadRequest, `{"error":"target_project_id is missing"}`)
		bad(map[string]any{"target_project_id": ""}, http.StatusBadRequest, `{"error":"target_project_id is empty"}`)
		bad(map[string]any{"target_project_id": "abc"}, http.StatusBadRequest, `{"error":"target_project_id is invalid"}`)

		want := []int64{p.ID, mine[2].ID, mine[0].ID, mine[1].ID}
		if got := ids(list + "?per_page=1"); !slices.Equal(got, want) {
			t.Fatalf("allowlist %v; want %v", got, want)
		}
		r := s.Get(t, list+"?per_page=3&page=2", owner.Token).Want(t, http.StatusOK)
		if r.Header.Get("X-Total") != "4" || r.Header.Get("X-Total-Pages") != "2" || len(r.Array(t)) != 1 {
			t.Fatalf("page 2 headers %v body %s", r.Header, r.Body)
		}
		got, _, err := c.JobTokenScope.GetProjectJobTokenInboundAllowList(p.ID, &gitlab.GetJobTokenInboundAllowListOptions{})
		if err != nil || len(got) != 4 || got[0].ID != p.ID {
			t.Fatalf("client allowlist %v, %v", got, err)
		}

		// Roles: developers may neither read nor change it; strangers do
		// not see the project.
		forbidden := `{"message":"403 Forbidden"}`
		s.Get(t, list, dev.Token).Want(t, http.StatusForbidden).WantBody(t, forbidden)
		add(dev.Token, map[string]any{"target_project_id": mine[0].ID}).Want(t, http.StatusForbidden).WantBody(t, forbidden)
		// (As in GitLab, the target is found before the role is checked: a
		// target the developer cannot see is 404.)
		del(dev.Token, mine[0].ID).Want(t, http.StatusNotFound).WantBody(t, `{"message":"404 Project Not Found"}`)
		del(dev.Token, p.ID).Want(t, http.StatusForbidden).
			WantBody(t, `{"message":"403 Forbidden - Insufficient permissions to modify the job token scope"}`)
		s.Get(t, list, stranger.Token).Want(t, http.StatusNotFound).WantBody(t, `{"message":"404 Project Not Found"}`)
		del(stranger.Token, mine[0].ID).Want(t, http.StatusNotFound).WantBody(t, `{"message":"404 Project Not Found"}`)

		// Removal.
		del(owner.Token, mine[2].ID).Want(t, http.StatusNoContent)
		del(owner.Token, mine[2].ID).Want(t, http.StatusBadRequest).
			WantBody(t, `{"message":"400 Bad request - Target project is not in the job token scope"}`)
		del(owner.Token, p.ID).Want(t, http.StatusBadRequest).
			WantBody(t, `{"message":"400 Bad request - Source project cannot be removed from the job token scope"}`)
		del(owner.Token, hidden.ID).Want(t, http.StatusNotFound).WantBody(t, `{"message":"404 Project Not Found"}`)
		del(owner.Token, s.AbsentID(t)).Want(t, http.StatusNotFound).WantBody(t, `{"message":"404 Project Not Found"}`)
		s.Do(t, apitest.Request{Method: "DELETE", Path: list + "/abc", Token: owner.Token}).Want(t, http.StatusNotFound).
			WantBody(t, `{"error":"404 Not Found"}`)
		if _, err := c.JobTokenScope.RemoveProjectFromJobScopeAllowList(p.ID, mine[0].ID); err != nil {
			t.Fatalf("client remove: %v", err)
		}
		if got := ids(list); !slices.Equal(got, []int64{p.ID, mine[1].ID}) {
			t.Fatalf("after removals %v", got)
		}
		// A removed project leaves the list.
		s.Do(t, apitest.Request{Method: "DELETE", Path: fmt.Sprintf("/projects/%d", mine[1].ID), Token: owner.Token}).Want(t, http.StatusAccepted)
		if got := ids(list); !slices.Equal(got, []int64{p.ID}) {
			t.Fatalf("after removing a listed project %v", got)
		}
	})
}

// groupJSON is a group of the groups allowlist.
type groupJSON struct {
	ID     int64  `json:"id"`
	Name   string `json:"name"`
	WebURL string `json:"web_url"`
}

// TestJobTokenScope_groupsAllowlist: maintainers add groups they may read
// (GitLab's answers for the rest), list them in the order added and take
// them off; the entries are basic groups.
func TestJobTokenScope_groupsAllowlist(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		owner, dev, stranger := s.NewUser(t, "owner"), s.NewUser(t, "dev"), s.NewUser(t, "stranger")
		p := agProject(t, s, owner.Token, "guarded", 0)
		agMember(t, s, p, dev, 30)
		g1, g1Path := agGroup(t, s, owner.Token, "first", 0)
		g2, _ := agGroup(t, s, owner.Token, "second", g1)
		hidden, _ := agGroup(t, s, stranger.Token, "hidden", 0)
		list := jtsBase(p) + "/groups_allowlist"
		add := func(token string, body map[string]any) *apitest.Response {
			return s.Do(t, apitest.Request{Method: "POST", Path: list, Token: token, JSON: body})
		}
		del := func(token string, id int64) *apitest.Response {
			return s.Do(t, apitest.Request{Method: "DELETE", Path: fmt.Sprintf("%s/%d", list, id), Token: token})
		}

		s.Get(t, list, owner.Token).Want(t, http.StatusOK).WantBody(t, `[]`)
		add(owner.Token, map[string]any{"target_group_id": g2}).Want(t, http.StatusCreated).
			WantBody(t, fmt.Sprintf(`{"source_project_id":%d,"target_group_id":%d}`, p.ID, g2))
		c := s.Client(t, owner.Token)
		item, _, err := c.JobTokenScope.AddGroupToJobTokenAllowlist(p.ID, &gitlab.AddGroupToJobTokenAllowlistOptions{TargetGroupID: gitlab.Ptr(g1)})
		if err != nil || item.SourceProjectID != p.ID || item.TargetGroupID != g1 {
			t.Fatalf("client add %+v, %v", item, err)
		}
		add(owner.Token, map[string]any{"target_group_id": g1}).Want(t, http.StatusBadRequest).
			WantBody(t, `{"message":"400 Bad request - Target group is already in the job token scope"}`)
		add(owner.Token, map[string]any{"target_group_id": hidden}).Want(t, http.StatusBadRequest).
			WantBody(t, `{"message":"400 Bad request - The target_group that you are attempting to access does not exist or you don't have permission to perform this action"}`)
		add(owner.Token, map[string]any{"target_group_id": s.AbsentID(t)}).Want(t, http.StatusNotFound).
			WantBody(t, `{"message":"404 target_group_id not found Not Found"}`)
		add(owner.Token, map[string]any{}).Want(t, http.StatusBadRequest).WantBody(t, `{"error":"target_group_id is missing"}`)
		add(owner.Token, map[string]any{"target_group_id": "x"}).Want(t, http.StatusBadRequest).WantBody(t, `{"error":"target_group_id is invalid"}`)

		var groups []groupJSON
		s.Get(t, list, owner.Token).Want(t, http.StatusOK).JSON(t, &groups)
		if len(groups) != 2 || groups[0].ID != g2 || groups[1].ID != g1 || groups[1].Name != "first" || groups[1].WebURL != s.URL+"/groups/"+g1Path {
			t.Fatalf("groups allowlist %+v", groups)
		}
		keys := s.Get(t, list, owner.Token).Array(t)[0]
		if len(keys) != 3 {
			t.Fatalf("group entry fields %v; want id, name, web_url", keys)
		}
		r := s.Get(t, list+"?per_page=1&page=2", owner.Token).Want(t, http.StatusOK)
		if r.Header.Get("X-Total") != "2" || r.Header.Get("X-Prev-Page") != "1" {
			t.Fatalf("page 2 headers %v", r.Header)
		}
		if got, _, err := c.JobTokenScope.GetJobTokenAllowlistGroups(p.ID, &gitlab.GetJobTokenAllowlistGroupsOptions{}); err != nil || len(got) != 2 {
			t.Fatalf("client groups allowlist %v, %v", got, err)
		}

		forbidden := `{"message":"403 Forbidden"}`
		s.Get(t, list, dev.Token).Want(t, http.StatusForbidden).WantBody(t, forbidden)
		add(dev.Token, map[string]any{"target_group_id": g1}).Want(t, http.StatusForbidden).WantBody(t, forbidden)
		del(dev.Token, g1).Want(t, http.StatusForbidden).
			WantBody(t, `{"message":"403 Forbidden - Insufficient permissions to modify the job token scope"}`)
		s.Get(t, list, stranger.Token).Want(t, http.StatusNotFound).WantBody(t, `{"message":"404 Project Not Found"}`)

		del(owner.Token, g2).Want(t, http.StatusNoContent)
		del(owner.Token, g2).Want(t, http.StatusBadRequest).
			WantBody(t, `{"message":"400 Bad request - Target group is not in the job token scope"}`)
		del(owner.Token, s.AbsentID(t)).Want(t, http.StatusNotFound).WantBody(t, `{"message":"404 target_group_id not found Not Found"}`)
		if _, err := c.JobTokenScope.RemoveGroupFromJobTokenAllowlist(p.ID, g1); err != nil {
			t.Fatalf("client remove: %v", err)
		}
		s.Get(t, list, owner.Token).Want(t, http.StatusOK).WantBody(t, `[]`)
	})
}

// TestJobTokenScope_allowed: the check the job token authenticator makes
// (jobtokenscope.Allowed), configured through the API: a project admits
// its own jobs always; with the limit on, only the projects of its
// allowlist and the projects anywhere under the groups of its groups
// allowlist; with it off, every project; the allowlists admit into the
// project, not out of it.
func TestJobTokenScope_allowed(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		owner := s.NewUser(t, "owner")
		topID, _ := agGroup(t, s, owner.Token, "acme", 0)
		subID, _ := agGroup(t, s, owner.Token, "web", topID)
		deepID, _ := agGroup(t, s, owner.Token, "deep", subID)
		siblingID, _ := agGroup(t, s, owner.Token, "sibling", topID)
		target := agProject(t, s, owner.Token, "target", 0)
		listed := agProject(t, s, owner.Token, "listed", 0)
		inDeep := agProject(t, s, owner.Token, "in-deep", deepID)
		inSub := agProject(t, s, owner.Token, "in-sub", subID)
		inSibling := agProject(t, s, owner.Token, "in-sibling", siblingID)
		inTop := agProject(t, s, owner.Token, "in-top", topID)
		other := agProject(t, s, owner.Token, "other", 0)

		allowed := func(source ciProject) bool {
			t.Helper()
			ok, err := s.App.JobTokenScope.Allowed(ctx(t), source.ID, target.ID)
			if err != nil {
				t.Fatal(err)
			}
			return ok
		}
		state := func() map[string]bool {
			return map[string]bool{"self": allowed(target), "listed": allowed(listed), "in-deep": allowed(inDeep), "in-sub": allowed(inSub),
				"in-sibling": allowed(inSibling), "in-top": allowed(inTop), "other": allowed(other)}
		}
		want := func(when string, yes ...string) {
			t.Helper()
			for name, ok := range state() {
				if ok != (name == "self" || slices.Contains(yes, name)) {
					t.Errorf("%s: %s allowed %v", when, name, ok)
				}
			}
		}
		base := jtsBase(target)
		want("a new project")
		s.Do(t, apitest.Request{Method: "POST", Path: base + "/allowlist", Token: owner.Token, JSON: map[string]any{"target_project_id": listed.ID}}).
			Want(t, http.StatusCreated)
		s.Do(t, apitest.Request{Method: "POST", Path: base + "/groups_allowlist", Token: owner.Token, JSON: map[string]any{"target_group_id": subID}}).
			Want(t, http.StatusCreated)
		want("with allowlists", "listed", "in-deep", "in-sub")
		if ok, err := s.App.JobTokenScope.Allowed(ctx(t), target.ID, listed.ID); err != nil || ok {
			t.Errorf("the reverse direction: %v, %v; want refused", ok, err)
		}
		s.Do(t, apitest.Request{Method: "PATCH", Path: base, Token: owner.Token, JSON: map[string]any{"enabled": false}}).Want(t, http.StatusNoContent)
		want("with the limit off", "listed", "in-deep", "in-sub", "in-sibling", "in-top", "other")
		s.Do(t, apitest.Request{Method: "PATCH", Path: base, Token: owner.Token, JSON: map[string]any{"enabled": true}}).Want(t, http.StatusNoContent)
		s.Do(t, apitest.Request{Method: "DELETE", Path: fmt.Sprintf("%s/groups_allowlist/%d", base, subID), Token: owner.Token}).
			Want(t, http.StatusNoContent)
		s.Do(t, apitest.Request{Method: "POST", Path: base + "/groups_allowlist", Token: owner.Token, JSON: map[string]any{"target_group_id": topID}}).
			Want(t, http.StatusCreated)
		want("with the top group listed", "listed", "in-deep", "in-sub", "in-sibling", "in-top")
		s.Do(t, apitest.Request{Method: "DELETE", Path: fmt.Sprintf("%s/allowlist/%d", base, listed.ID), Token: owner.Token}).
			Want(t, http.StatusNoContent)
		want("with the project taken off", "in-deep", "in-sub", "in-sibling", "in-top")
	})
}
