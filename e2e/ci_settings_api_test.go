package e2e

import (
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"testing"

	gitlab "gitlab.com/gitlab-org/api/client-go"

	"quarry/internal/apitest"
)

// capiVariables drives the CI/CD variables of one owner (a project or a
// group) through the API.
type capiVariables struct {
	s    *apitest.Server
	base string // /projects/:id/variables or /groups/:id/variables
}

func (v capiVariables) post(t *testing.T, token string, body map[string]any) *apitest.Response {
	t.Helper()
	return v.s.Do(t, apitest.Request{Method: "POST", Path: v.base, Token: token, JSON: body})
}

func (v capiVariables) get(t *testing.T, token, key, query string) *apitest.Response {
	t.Helper()
	return v.s.Get(t, v.base+"/"+key+query, token)
}

func (v capiVariables) put(t *testing.T, token, key, query string, body map[string]any) *apitest.Response {
	t.Helper()
	return v.s.Do(t, apitest.Request{Method: "PUT", Path: v.base + "/" + key + query, Token: token, JSON: body})
}

func (v capiVariables) del(t *testing.T, token, key, query string) *apitest.Response {
	t.Helper()
	return v.s.Do(t, apitest.Request{Method: "DELETE", Path: v.base + "/" + key + query, Token: token})
}

// keys lists the owner's variables as "KEY@scope", sorted.
func (v capiVariables) keys(t *testing.T, token string) string {
	t.Helper()
	var list []map[string]any
	v.s.Get(t, v.base+"?per_page=100", token).Want(t, http.StatusOK).JSON(t, &list)
	var out []string
	for _, o := range list {
		out = append(out, fmt.Sprintf("%v@%v", o["key"], o["environment_scope"]))
	}
	sort.Strings(out)
	return strings.Join(out, " ")
}

// capiFilterScope is the query that picks a variable by environment scope.
func capiFilterScope(scope string) string {
	return "?" + url.Values{"filter[environment_scope]": {scope}}.Encode()
}

// capiCheckVariables runs the checks projects and groups share: fields,
// updates, deletion, GitLab's validation of keys and masked values,
// duplicates, scopes of one key and hidden values.
func capiCheckVariables(t *testing.T, v capiVariables, token string) {
	t.Helper()
	v.post(t, token, map[string]any{"key": "PLAIN", "value": "hello"}).Want(t, http.StatusCreated).WantBody(t,
		`{"variable_type":"env_var","key":"PLAIN","value":"hello","protected":false,"masked":false,"hidden":false,"raw":false,
		"environment_scope":"*","description":null}`)
	full := `{"variable_type":"file","key":"FULL","value":"s3cr3t/Value+1","protected":true,"masked":true,"hidden":false,"raw":true,
		"environment_scope":"production","description":"the deploy key"}`
	v.post(t, token, map[string]any{"key": "FULL", "value": "s3cr3t/Value+1", "variable_type": "file", "protected": true,
		"masked": true, "raw": true, "environment_scope": "production", "description": "the deploy key"}).
		Want(t, http.StatusCreated).WantBody(t, full)
	v.get(t, token, "FULL", "").Want(t, http.StatusOK).WantBody(t, full)
	if got := v.keys(t, token); got != "FULL@production PLAIN@*" {
		t.Errorf("variables %s", got)
	}
	v.put(t, token, "PLAIN", "", map[string]any{"value": "changed", "protected": true, "description": "now described"}).
		Want(t, http.StatusOK).WantBody(t, `{"variable_type":"env_var","key":"PLAIN","value":"changed","protected":true,"masked":false,
		"hidden":false,"raw":false,"environment_scope":"*","description":"now described"}`)
	v.put(t, token, "PLAIN", "", map[string]any{"masked": true}).Want(t, http.StatusBadRequest).
		WantBody(t, `{"message":{"value":["is invalid"]}}`)
	v.del(t, token, "PLAIN", "").Want(t, http.StatusNoContent)
	for _, send := range []func() *apitest.Response{
		func() *apitest.Response { return v.get(t, token, "PLAIN", "") },
		func() *apitest.Response { return v.put(t, token, "PLAIN", "", map[string]any{"value": "x"}) },
		func() *apitest.Response { return v.del(t, token, "PLAIN", "") },
	} {
		send().Want(t, http.StatusNotFound).WantBody(t, `{"message":"404 Variable Not Found"}`)
	}

	// GitLab's masking rules: at least 8 characters, one line, only
	// [a-zA-Z0-9_+=/@:.~-].
	for _, value := range []string{"short77", "has space in it", "two\nlines-here", "dollar$sign1", "quote'quote", "ünïcödé-chars"} {
		v.post(t, token, map[string]any{"key": "MASKED", "value": value, "masked": true}).Want(t, http.StatusBadRequest).
			WantBody(t, `{"message":{"value":["is invalid"]}}`)
	}
	for i, value := range []string{"exactly8", "a_b+c=d/e@f:g.h~i-j", "0123456789"} {
		v.post(t, token, map[string]any{"key": fmt.Sprintf("MASKED_%d", i), "value": value, "masked": true}).Want(t, http.StatusCreated)
	}
	// Keys: letters, digits and _, at most 255.
	for key, body := range map[string]string{
		"bad key":                `{"message":{"key":["can contain only letters, digits and '_'."]}}`,
		"dash-key":               `{"message":{"key":["can contain only letters, digits and '_'."]}}`,
		strings.Repeat("K", 256): `{"message":{"key":["is too long (maximum is 255 characters)"]}}`,
	} {
		v.post(t, token, map[string]any{"key": key, "value": "x"}).Want(t, http.StatusBadRequest).WantBody(t, body)
	}
	v.post(t, token, map[string]any{"key": strings.Repeat("K", 255), "value": "x"}).Want(t, http.StatusCreated)
	v.post(t, token, map[string]any{"value": "x"}).Want(t, http.StatusBadRequest).WantBody(t, `{"error":"key is missing"}`)
	v.post(t, token, map[string]any{}).Want(t, http.StatusBadRequest).WantBody(t, `{"error":"key is missing, value is missing"}`)
	v.post(t, token, map[string]any{"key": "TYPED", "value": "x", "variable_type": "env"}).Want(t, http.StatusBadRequest).
		WantBody(t, `{"error":"variable_type does not have a valid value"}`)

	// A key is unique within its environment scope.
	v.post(t, token, map[string]any{"key": "FULL", "value": "again", "environment_scope": "production"}).
		Want(t, http.StatusBadRequest).WantBody(t, `{"message":{"key":["(FULL) has already been taken"]}}`)
	v.post(t, token, map[string]any{"key": "FULL", "value": "staging value", "environment_scope": "staging"}).Want(t, http.StatusCreated)
	conflict := `{"message":"There are multiple variables with provided parameters. Please use 'filter[environment_scope]'"}`
	v.get(t, token, "FULL", "").Want(t, http.StatusConflict).WantBody(t, conflict)
	v.put(t, token, "FULL", "", map[string]any{"value": "x"}).Want(t, http.StatusConflict).WantBody(t, conflict)
	v.del(t, token, "FULL", "").Want(t, http.StatusConflict).WantBody(t, conflict)
	capiWantFields(t, "FULL in staging", v.get(t, token, "FULL", capiFilterScope("staging")).Want(t, http.StatusOK).Object(t),
		map[string]any{"value": "staging value", "environment_scope": "staging"})
	capiWantFields(t, "FULL in staging, changed", v.put(t, token, "FULL", capiFilterScope("staging"), map[string]any{"value": "new staging"}).
		Want(t, http.StatusOK).Object(t), map[string]any{"value": "new staging", "environment_scope": "staging"})
	capiWantFields(t, "FULL in production", v.get(t, token, "FULL", capiFilterScope("production")).Want(t, http.StatusOK).Object(t),
		map[string]any{"value": "s3cr3t/Value+1", "environment_scope": "production"})
	v.get(t, token, "FULL", capiFilterScope("review/*")).Want(t, http.StatusNotFound).WantBody(t, `{"message":"404 Variable Not Found"}`)
	v.del(t, token, "FULL", capiFilterScope("production")).Want(t, http.StatusNoContent)
	capiWantFields(t, "FULL left", v.get(t, token, "FULL", "").Want(t, http.StatusOK).Object(t),
		map[string]any{"value": "new staging", "environment_scope": "staging"})

	// masked_and_hidden: masked, and the value never shown again.
	v.post(t, token, map[string]any{"key": "HIDDEN", "value": "hidden-value-123", "masked_and_hidden": true}).
		Want(t, http.StatusCreated).WantBody(t, `{"variable_type":"env_var","key":"HIDDEN","value":null,"protected":false,"masked":true,
		"hidden":true,"raw":false,"environment_scope":"*","description":null}`)
	capiWantFields(t, "hidden variable", v.get(t, token, "HIDDEN", "").Want(t, http.StatusOK).Object(t),
		map[string]any{"value": nil, "hidden": true, "masked": true})
	var list []map[string]any
	v.s.Get(t, v.base+"?per_page=100", token).Want(t, http.StatusOK).JSON(t, &list)
	for _, o := range list {
		if o["key"] == "HIDDEN" && o["value"] != nil {
			t.Errorf("listed hidden variable shows its value %v", o["value"])
		}
	}
	v.post(t, token, map[string]any{"key": "HIDDEN_BAD", "value": "no good", "masked_and_hidden": true}).Want(t, http.StatusBadRequest).
		WantBody(t, `{"message":{"value":["is invalid"]}}`)
}

// TestCISettings_projectVariables: a project's CI/CD variables through
// the API, maintainers only.
func TestCISettings_projectVariables(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		owner := s.NewUser(t, "owner")
		maintainer := s.NewUser(t, "maintainer")
		dev := s.NewUser(t, "dev")
		stranger := s.NewUser(t, "stranger")
		p := newCIProject(t, s, owner, "settings", nil)
		capiAddMember(t, s, owner.Token, p.ID, maintainer.ID, 40)
		capiAddMember(t, s, owner.Token, p.ID, dev.ID, 30)
		v := capiVariables{s: s, base: fmt.Sprintf("/projects/%d/variables", p.ID)}
		capiCheckVariables(t, v, maintainer.Token)

		// By path too.
		byPath := capiVariables{s: s, base: "/projects/" + url.PathEscape(p.Path) + "/variables"}
		capiWantFields(t, "by path", byPath.get(t, owner.Token, "HIDDEN", "").Want(t, http.StatusOK).Object(t), map[string]any{"key": "HIDDEN"})

		for who, c := range map[string]struct {
			token, body string
			status      int
		}{
			"developer": {dev.Token, `{"message":"403 Forbidden"}`, http.StatusForbidden},
			"stranger":  {stranger.Token, `{"message":"404 Project Not Found"}`, http.StatusNotFound},
			"anonymous": {"", `{"message":"401 Unauthorized"}`, http.StatusUnauthorized},
		} {
			for what, r := range map[string]*apitest.Response{
				"list":   s.Get(t, v.base, c.token),
				"create": v.post(t, c.token, map[string]any{"key": "NEW", "value": "x"}),
				"get":    v.get(t, c.token, "HIDDEN", ""),
				"update": v.put(t, c.token, "HIDDEN", "", map[string]any{"value": "other-value-1"}),
				"delete": v.del(t, c.token, "HIDDEN", ""),
			} {
				if r.Status != c.status || strings.TrimSpace(string(r.Body)) != c.body {
					t.Errorf("%s %s: %d %s; want %d %s", who, what, r.Status, r.Body, c.status, c.body)
				}
			}
		}
		v.get(t, owner.Token, "HIDDEN", "").Want(t, http.StatusOK)
	})
}

// TestCISettings_groupVariables: a group's CI/CD variables through the
// API, the same rules; a developer of the group may not, a stranger does
// not see the private group.
func TestCISettings_groupVariables(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		owner := s.NewUser(t, "owner")
		dev := s.NewUser(t, "dev")
		stranger := s.NewUser(t, "stranger")
		var g struct {
			ID       int64  `json:"id"`
			FullPath string `json:"full_path"`
		}
		s.Do(t, apitest.Request{Method: "POST", Path: "/groups", Token: owner.Token, JSON: map[string]any{"name": "Platform",
			"path": "platform", "visibility": "private"}}).Want(t, http.StatusCreated).JSON(t, &g)
		s.Do(t, apitest.Request{Method: "POST", Path: fmt.Sprintf("/groups/%d/members", g.ID), Token: owner.Token,
			JSON: map[string]any{"user_id": dev.ID, "access_level": 30}}).Want(t, http.StatusCreated)
		v := capiVariables{s: s, base: fmt.Sprintf("/groups/%d/variables", g.ID)}
		capiCheckVariables(t, v, owner.Token)
		byPath := capiVariables{s: s, base: "/groups/" + url.PathEscape(g.FullPath) + "/variables"}
		capiWantFields(t, "by path", byPath.get(t, owner.Token, "HIDDEN", "").Want(t, http.StatusOK).Object(t), map[string]any{"key": "HIDDEN"})

		s.Get(t, v.base, dev.Token).Want(t, http.StatusForbidden).WantBody(t, `{"message":"403 Forbidden"}`)
		v.post(t, dev.Token, map[string]any{"key": "NEW", "value": "x"}).Want(t, http.StatusForbidden).WantBody(t, `{"message":"403 Forbidden"}`)
		v.del(t, dev.Token, "HIDDEN", "").Want(t, http.StatusForbidden).WantBody(t, `{"message":"403 Forbidden"}`)
		s.Get(t, v.base, stranger.Token).Want(t, http.StatusNotFound).WantBody(t, `{"message":"404 Group Not Found"}`)
		v.get(t, stranger.Token, "HIDDEN", "").Want(t, http.StatusNotFound).WantBody(t, `{"message":"404 Group Not Found"}`)
		s.Get(t, fmt.Sprintf("/groups/%d/variables", s.AbsentID(t)), owner.Token).Want(t, http.StatusNotFound).
			WantBody(t, `{"message":"404 Group Not Found"}`)
	})
}

// TestCISettings_variablesReachRules: project and group variables are
// what rules:if sees when a pipeline is made; protected ones only on
// protected branches, environment-scoped ones not for jobs without an
// environment.
func TestCISettings_variablesReachRules(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		owner := s.NewUser(t, "owner")
		var g struct {
			ID int64 `json:"id"`
		}
		s.Do(t, apitest.Request{Method: "POST", Path: "/groups", Token: owner.Token, JSON: map[string]any{"name": "Team",
			"path": "team"}}).Want(t, http.StatusCreated).JSON(t, &g)
		var created struct {
			ID                int64  `json:"id"`
			PathWithNamespace string `json:"path_with_namespace"`
		}
		s.Do(t, apitest.Request{Method: "POST", Path: "/projects", Token: owner.Token, JSON: map[string]any{"name": "ruled",
			"namespace_id": g.ID, "initialize_with_readme": true}}).Want(t, http.StatusCreated).JSON(t, &created)
		p := ciProject{s: s, ID: created.ID, Path: created.PathWithNamespace, Token: owner.Token}
		p.commit(t, "main", map[string]string{".gitlab-ci.yml": capiNoPush + `
always: {script: [x]}
check:
  script: [x]
  rules:
    - if: $MY_VAR == "yes"
prot:
  script: [x]
  rules:
    - if: $MY_PROT == "yes"
grp:
  script: [x]
  rules:
    - if: $GROUP_VAR == "on"
scoped:
  script: [x]
  rules:
    - if: $SCOPED_VAR
`})
		p.commit(t, "feature", map[string]string{"f.txt": "feature"})
		project := capiVariables{s: s, base: fmt.Sprintf("/projects/%d/variables", p.ID)}
		group := capiVariables{s: s, base: fmt.Sprintf("/groups/%d/variables", g.ID)}
		names := func(ref string) string {
			var out []string
			for _, j := range p.ownJobs(t, p.createPipeline(t, ref).ID) {
				out = append(out, j.Name)
			}
			sort.Strings(out)
			return strings.Join(out, " ")
		}
		if got := names("main"); got != "always" {
			t.Errorf("without variables: %s; want always", got)
		}
		project.post(t, owner.Token, map[string]any{"key": "MY_VAR", "value": "yes"}).Want(t, http.StatusCreated)
		project.post(t, owner.Token, map[string]any{"key": "MY_PROT", "value": "yes", "protected": true}).Want(t, http.StatusCreated)
		project.post(t, owner.Token, map[string]any{"key": "SCOPED_VAR", "value": "1", "environment_scope": "production"}).
			Want(t, http.StatusCreated)
		group.post(t, owner.Token, map[string]any{"key": "GROUP_VAR", "value": "on"}).Want(t, http.StatusCreated)
		if got := names("main"); got != "always check grp prot" {
			t.Errorf("protected main: %s; want always check grp prot", got)
		}
		if got := names("feature"); got != "always check grp" {
			t.Errorf("unprotected feature: %s; want always check grp", got)
		}
		project.put(t, owner.Token, "MY_VAR", "", map[string]any{"value": "no"}).Want(t, http.StatusOK)
		group.del(t, owner.Token, "GROUP_VAR", "").Want(t, http.StatusNoContent)
		if got := names("main"); got != "always prot" {
			t.Errorf("after the changes: %s; want always prot", got)
		}
		// A project variable wins over a group variable of the same key.
		group.post(t, owner.Token, map[string]any{"key": "MY_VAR", "value": "yes"}).Want(t, http.StatusCreated)
		if got := names("feature"); got != "always" {
			t.Errorf("group MY_VAR=yes under project MY_VAR=no: %s; want always", got)
		}
		// A pipeline's own variables win over both.
		var pl pipelineJSON
		s.Do(t, apitest.Request{Method: "POST", Path: fmt.Sprintf("/projects/%d/pipeline", p.ID), Token: owner.Token,
			JSON: map[string]any{"ref": "feature", "variables": []map[string]any{{"key": "MY_VAR", "value": "yes"}}}}).
			Want(t, http.StatusCreated).JSON(t, &pl)
		if jobs := p.ownJobs(t, pl.ID); len(jobs) != 2 || jobs[0].Name != "always" || jobs[1].Name != "check" {
			t.Errorf("pipeline variable MY_VAR=yes: %+v; want always and check", jobs)
		}
	})
}

// TestCISettings_client: the official Go client manages project and
// group variables, picking one of two scopes with its filter (a query
// on reads, a JSON body on writes).
func TestCISettings_client(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		owner := s.NewUser(t, "owner")
		p := newCIProject(t, s, owner, "client", nil)
		c := s.Client(t, owner.Token)
		for _, scope := range []string{"staging", "production"} {
			v, _, err := c.ProjectVariables.CreateVariable(p.ID, &gitlab.CreateProjectVariableOptions{Key: gitlab.Ptr("TOKEN"),
				Value: gitlab.Ptr("value-for-" + scope), EnvironmentScope: gitlab.Ptr(scope), Masked: gitlab.Ptr(true),
				VariableType: gitlab.Ptr(gitlab.EnvVariableType)})
			if err != nil || v.EnvironmentScope != scope || !v.Masked {
				t.Fatalf("create in %s: %+v, %v", scope, v, err)
			}
		}
		if _, resp, err := c.ProjectVariables.GetVariable(p.ID, "TOKEN", nil); err == nil || resp.StatusCode != http.StatusConflict {
			t.Errorf("get without a filter: %v; want 409", err)
		}
		v, _, err := c.ProjectVariables.GetVariable(p.ID, "TOKEN", &gitlab.GetProjectVariableOptions{
			Filter: &gitlab.VariableFilter{EnvironmentScope: "production"}})
		if err != nil || v.Value != "value-for-production" {
			t.Errorf("get production: %+v, %v", v, err)
		}
		v, _, err = c.ProjectVariables.UpdateVariable(p.ID, "TOKEN", &gitlab.UpdateProjectVariableOptions{Value: gitlab.Ptr("new-staging-value"),
			Filter: &gitlab.VariableFilter{EnvironmentScope: "staging"}})
		if err != nil || v.Value != "new-staging-value" || v.EnvironmentScope != "staging" {
			t.Errorf("update staging: %+v, %v", v, err)
		}
		if _, err := c.ProjectVariables.RemoveVariable(p.ID, "TOKEN", &gitlab.RemoveProjectVariableOptions{
			Filter: &gitlab.VariableFilter{EnvironmentScope: "production"}}); err != nil {
			t.Errorf("remove production: %v", err)
		}
		list, _, err := c.ProjectVariables.ListVariables(p.ID, nil)
		if err != nil || len(list) != 1 || list[0].EnvironmentScope != "staging" || list[0].Value != "new-staging-value" {
			t.Errorf("list %+v, %v", list, err)
		}

		var g struct {
			ID int64 `json:"id"`
		}
		s.Do(t, apitest.Request{Method: "POST", Path: "/groups", Token: owner.Token, JSON: map[string]any{"name": "Clients",
			"path": "clients"}}).Want(t, http.StatusCreated).JSON(t, &g)
		gv, _, err := c.GroupVariables.CreateVariable(g.ID, &gitlab.CreateGroupVariableOptions{Key: gitlab.Ptr("SHARED"),
			Value: gitlab.Ptr("x"), Protected: gitlab.Ptr(true), VariableType: gitlab.Ptr(gitlab.FileVariableType)})
		if err != nil || gv.Key != "SHARED" || !gv.Protected || gv.VariableType != gitlab.FileVariableType {
			t.Fatalf("create group variable %+v, %v", gv, err)
		}
		gv, _, err = c.GroupVariables.UpdateVariable(g.ID, "SHARED", &gitlab.UpdateGroupVariableOptions{Value: gitlab.Ptr("y")})
		if err != nil || gv.Value != "y" {
			t.Errorf("update group variable %+v, %v", gv, err)
		}
		if _, err := c.GroupVariables.RemoveVariable(g.ID, "SHARED", nil); err != nil {
			t.Errorf("remove group variable: %v", err)
		}
		if _, resp, err := c.GroupVariables.GetVariable(g.ID, "SHARED", nil); err == nil || resp.StatusCode != http.StatusNotFound {
			t.Errorf("removed group variable: %v; want 404", err)
		}
	})
}
