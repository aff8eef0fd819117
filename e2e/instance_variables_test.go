package e2e

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	gitlab "gitlab.com/gitlab-org/api/client-go"

	"quarry/internal/apitest"
	"quarry/internal/ci"
)

// The instance's CI/CD variables (/admin/ci/variables): GitLab's admin
// API (lib/api/admin/ci/variables.rb, app/models/ci/instance_variable.rb),
// and the variables reaching every job below group and project ones.

const ivBase = "/admin/ci/variables"

// ivNotFound is GitLab's answer for a key the instance lacks
// (not_found!('InstanceVariable')).
const ivNotFound = `{"message":"404 InstanceVariable Not Found"}`

func ivPost(t *testing.T, s *apitest.Server, token string, body map[string]any) *apitest.Response {
	t.Helper()
	return s.Do(t, apitest.Request{Method: "POST", Path: ivBase, Token: token, JSON: body})
}

func ivPut(t *testing.T, s *apitest.Server, token, key string, body map[string]any) *apitest.Response {
	t.Helper()
	return s.Do(t, apitest.Request{Method: "PUT", Path: ivBase + "/" + key, Token: token, JSON: body})
}

func ivDelete(t *testing.T, s *apitest.Server, token, key string) *apitest.Response {
	t.Helper()
	return s.Do(t, apitest.Request{Method: "DELETE", Path: ivBase + "/" + key, Token: token})
}

// TestInstanceVariables_crud: the five endpoints with the official client
// and raw HTTP; GitLab's shape (no environment_scope, no hidden); types,
// flags and description; a key in an update's body is ignored; deleted
// is 404.
func TestInstanceVariables_crud(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		c := s.Root(t)
		list, _, err := c.InstanceVariables.ListVariables(nil)
		if err != nil || len(list) != 0 {
			t.Fatalf("a new instance's variables: %v, %v; want none", list, err)
		}

		v, resp, err := c.InstanceVariables.CreateVariable(&gitlab.CreateInstanceVariableOptions{Key: gitlab.Ptr("DEPLOY_KEY"),
			Value: gitlab.Ptr("line one\nline two"), VariableType: gitlab.Ptr(gitlab.FileVariableType), Protected: gitlab.Ptr(true),
			Raw: gitlab.Ptr(true), Description: gitlab.Ptr("the deploy key")})
		if err != nil || resp.StatusCode != http.StatusCreated {
			t.Fatalf("create: %v, %v", resp, err)
		}
		want := gitlab.InstanceVariable{Key: "DEPLOY_KEY", Value: "line one\nline two", VariableType: gitlab.FileVariableType, Protected: true,
			Raw: true, Description: "the deploy key"}
		if *v != want {
			t.Errorf("created %+v; want %+v", *v, want)
		}
		// The raw shape: GitLab's entity shows what an instance variable
		// has, so neither environment_scope nor hidden; description null
		// when not given.
		ivPost(t, s, s.RootToken, map[string]any{"key": "PLAIN", "value": "hello", "environment_scope": "production",
			"masked_and_hidden": true}).Want(t, http.StatusCreated).WantBody(t,
			`{"variable_type":"env_var","key":"PLAIN","value":"hello","protected":false,"masked":false,"raw":false,"description":null}`)
		s.Get(t, ivBase+"/PLAIN", s.RootToken).Want(t, http.StatusOK).WantBody(t,
			`{"variable_type":"env_var","key":"PLAIN","value":"hello","protected":false,"masked":false,"raw":false,"description":null}`)
		got, _, err := c.InstanceVariables.GetVariable("DEPLOY_KEY")
		if err != nil || *got != want {
			t.Errorf("get: %+v, %v; want %+v", got, err, want)
		}

		// Update: the path names the variable, a key in the body is
		// ignored; what is not given stays.
		v, _, err = c.InstanceVariables.UpdateVariable("PLAIN", &gitlab.UpdateInstanceVariableOptions{Value: gitlab.Ptr("masked-value-1"),
			Masked: gitlab.Ptr(true), Protected: gitlab.Ptr(true), Description: gitlab.Ptr("now masked")})
		if err != nil || v.Key != "PLAIN" || v.Value != "masked-value-1" || !v.Masked || !v.Protected || v.Raw ||
			v.VariableType != gitlab.EnvVariableType || v.Description != "now masked" {
			t.Errorf("update: %+v, %v", v, err)
		}
		ivPut(t, s, s.RootToken, "PLAIN", map[string]any{"key": "RENAMED", "variable_type": "file", "raw": true}).Want(t, http.StatusOK).
			WantBody(t, `{"variable_type":"file","key":"PLAIN","value":"masked-value-1","protected":true,"masked":true,"raw":true,
			"description":"now masked"}`)
		s.Get(t, ivBase+"/RENAMED", s.RootToken).Want(t, http.StatusNotFound).WantBody(t, ivNotFound)

		// The list pages by creation.
		for i := range 3 {
			ivPost(t, s, s.RootToken, map[string]any{"key": fmt.Sprintf("PAGED_%d", i), "value": "x"}).Want(t, http.StatusCreated)
		}
		var keys []string
		s.Walk(t, ivBase+"?per_page=2", s.RootToken, func(r *apitest.Response) {
			page := r.Array(t)
			if len(page) > 2 {
				t.Errorf("page of %d; want at most 2", len(page))
			}
			for _, o := range page {
				keys = append(keys, fmt.Sprint(o["key"]))
				if _, ok := o["environment_scope"]; ok {
					t.Errorf("listed %v with an environment_scope", o["key"])
				}
			}
		})
		if got := strings.Join(keys, " "); got != "DEPLOY_KEY PLAIN PAGED_0 PAGED_1 PAGED_2" {
			t.Errorf("listed %s", got)
		}
		if list, _, err := c.InstanceVariables.ListVariables(&gitlab.ListInstanceVariablesOptions{
			ListOptions: gitlab.ListOptions{Page: 2, PerPage: 3}}); err != nil || len(list) != 2 || list[0].Key != "PAGED_1" {
			t.Errorf("page 2 of 3: %+v, %v", list, err)
		}

		// Delete, then every key-addressed call is 404.
		if resp, err := c.InstanceVariables.RemoveVariable("PLAIN"); err != nil || resp.StatusCode != http.StatusNoContent {
			t.Fatalf("remove: %v, %v", resp, err)
		}
		s.Get(t, ivBase+"/PLAIN", s.RootToken).Want(t, http.StatusNotFound).WantBody(t, ivNotFound)
		ivPut(t, s, s.RootToken, "PLAIN", map[string]any{"value": "x"}).Want(t, http.StatusNotFound).WantBody(t, ivNotFound)
		ivDelete(t, s, s.RootToken, "PLAIN").Want(t, http.StatusNotFound).WantBody(t, ivNotFound)
		if _, resp, err := c.InstanceVariables.GetVariable("PLAIN"); err == nil || resp.StatusCode != http.StatusNotFound {
			t.Errorf("client get of a deleted variable: %v, %v; want 404", resp, err)
		}
		// Keys no variable can have are not found either.
		for _, key := range []string{"bad-key", "%20", strings.Repeat("K", 300), "K%00"} {
			s.Get(t, ivBase+"/"+key, s.RootToken).Want(t, http.StatusNotFound).WantBody(t, ivNotFound)
		}
	})
}

// TestInstanceVariables_validation: GitLab's messages for keys, masked
// values, the instance's own value limit, descriptions, missing and bad
// parameters, a taken key, and the instance's limit of
// ci.MaxInstanceVariables variables, also against racing creators.
func TestInstanceVariables_validation(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		root := s.RootToken
		bad := func(body map[string]any, want string) {
			t.Helper()
			ivPost(t, s, root, body).Want(t, http.StatusBadRequest).WantBody(t, want)
		}
		// Keys: letters, digits and _, at most 255.
		for _, key := range []string{"bad key", "dash-key", "dot.key", "ünï"} {
			bad(map[string]any{"key": key, "value": "x"}, `{"message":{"key":["can contain only letters, digits and '_'."]}}`)
		}
		bad(map[string]any{"key": strings.Repeat("K", 256), "value": "x"}, `{"message":{"key":["is too long (maximum is 255 characters)"]}}`)
		ivPost(t, s, root, map[string]any{"key": strings.Repeat("K", 255), "value": "x"}).Want(t, http.StatusCreated)
		// Masked values: at least 8 characters of [a-zA-Z0-9_+=/@:.~-], one line.
		for _, value := range []string{"short77", "has space in it", "two\nlines-here", "dollar$sign1", "ünïcödé-chars"} {
			bad(map[string]any{"key": "MASKED", "value": value, "masked": true}, `{"message":{"value":["is invalid"]}}`)
		}
		ivPost(t, s, root, map[string]any{"key": "MASKED", "value": "a_b+c=d/e@f:g.h~i-j", "masked": true}).Want(t, http.StatusCreated)
		ivPut(t, s, root, "MASKED", map[string]any{"value": "not maskable"}).Want(t, http.StatusBadRequest).
			WantBody(t, `{"message":{"value":["is invalid"]}}`)
		// The instance's value limit has its own message.
		bad(map[string]any{"key": "LONG", "value": strings.Repeat("v", 10001)},
			`{"message":{"value":["The value of the provided variable exceeds the 10000 character limit"]}}`)
		ivPost(t, s, root, map[string]any{"key": "LONG", "value": strings.Repeat("v", 10000)}).Want(t, http.StatusCreated)
		ivPut(t, s, root, "LONG", map[string]any{"value": strings.Repeat("v", 10001)}).Want(t, http.StatusBadRequest).
			WantBody(t, `{"message":{"value":["The value of the provided variable exceeds the 10000 character limit"]}}`)
		bad(map[string]any{"key": "DESCRIBED", "value": "x", "description": strings.Repeat("d", 256)},
			`{"message":{"description":["is too long (maximum is 255 characters)"]}}`)
		// Parameters.
		bad(map[string]any{"value": "x"}, `{"error":"key is missing"}`)
		bad(map[string]any{}, `{"error":"key is missing, value is missing"}`)
		bad(map[string]any{"key": "TYPED", "value": "x", "variable_type": "env"}, `{"error":"variable_type does not have a valid value"}`)
		ivPut(t, s, root, "MASKED", map[string]any{"variable_type": "secret"}).Want(t, http.StatusBadRequest).
			WantBody(t, `{"error":"variable_type does not have a valid value"}`)
		// A key is the instance's once.
		bad(map[string]any{"key": "MASKED", "value": "again"}, `{"message":{"key":["(MASKED) has already been taken"]}}`)

		// The limit: GitLab's ci_instance_level_variables. Creators racing
		// for the last places get exactly as many as are left.
		var have []map[string]any
		s.Get(t, ivBase+"?per_page=100", root).Want(t, http.StatusOK).JSON(t, &have)
		for i := len(have); i < ci.MaxInstanceVariables-3; i++ {
			ivPost(t, s, root, map[string]any{"key": fmt.Sprintf("FILL_%d", i), "value": "x"}).Want(t, http.StatusCreated)
		}
		var wg sync.WaitGroup
		statuses := make(chan int, 8)
		for i := range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				statuses <- ivPost(t, s, root, map[string]any{"key": fmt.Sprintf("RACE_%d", i), "value": "x"}).Status
			}()
		}
		wg.Wait()
		close(statuses)
		count := map[int]int{}
		for st := range statuses {
			count[st]++
		}
		if count[http.StatusCreated] != 3 || count[http.StatusBadRequest] != 5 {
			t.Errorf("8 creators racing for 3 places: %v; want 3 created, 5 refused", count)
		}
		limit := fmt.Sprintf(`{"message":{"base":["Maximum number of ci instance level variables (%d) exceeded"]}}`, ci.MaxInstanceVariables)
		bad(map[string]any{"key": "ONE_MORE", "value": "x"}, limit)
		s.Get(t, ivBase+"?per_page=100", root).Want(t, http.StatusOK).JSON(t, &have)
		if len(have) != ci.MaxInstanceVariables {
			t.Errorf("%d variables; want %d", len(have), ci.MaxInstanceVariables)
		}
		// Updates are not creations; a deletion makes room again.
		ivPut(t, s, root, "FILL_3", map[string]any{"value": "y"}).Want(t, http.StatusOK)
		ivDelete(t, s, root, "FILL_3").Want(t, http.StatusNoContent)
		ivPost(t, s, root, map[string]any{"key": "ONE_MORE", "value": "x"}).Want(t, http.StatusCreated)
	})
}

// TestInstanceVariables_permissions: administrators only. Anyone else
// signed in is 403 before a parameter is looked at (GitLab's
// authenticated_as_admin! comes first); no token is 401.
func TestInstanceVariables_permissions(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		ivPost(t, s, s.RootToken, map[string]any{"key": "SECRET", "value": "instance-secret"}).Want(t, http.StatusCreated)
		user := s.NewUser(t, "ivuser")
		// A project maintainer and a group owner are no administrators.
		newCIProject(t, s, user, "mine", nil)
		s.Do(t, apitest.Request{Method: "POST", Path: "/groups", Token: user.Token, JSON: map[string]any{"name": "ivgroup",
			"path": "ivgroup"}}).Want(t, http.StatusCreated)
		const forbidden, unauthorized = `{"message":"403 Forbidden"}`, `{"message":"401 Unauthorized"}`
		for _, who := range []struct {
			token, body string
			status      int
		}{{user.Token, forbidden, http.StatusForbidden}, {"", unauthorized, http.StatusUnauthorized}} {
			for _, r := range []apitest.Request{
				{Method: "GET", Path: ivBase},
				{Method: "GET", Path: ivBase + "?page=0"},
				{Method: "GET", Path: ivBase + "/SECRET"},
				{Method: "GET", Path: ivBase + "/ABSENT"},
				{Method: "POST", Path: ivBase, JSON: map[string]any{"key": "MINE", "value": "x"}},
				{Method: "POST", Path: ivBase, JSON: map[string]any{}},
				{Method: "POST", Path: ivBase, JSON: map[string]any{"key": "bad key", "value": "x", "variable_type": "bad"}},
				{Method: "PUT", Path: ivBase + "/SECRET", JSON: map[string]any{"value": "stolen"}},
				{Method: "PUT", Path: ivBase + "/SECRET", JSON: map[string]any{"variable_type": "bad"}},
				{Method: "DELETE", Path: ivBase + "/SECRET"},
			} {
				r.Token = who.token
				s.Do(t, r).Want(t, who.status).WantBody(t, who.body)
			}
		}
		// Nothing changed.
		s.Get(t, ivBase+"/SECRET", s.RootToken).Want(t, http.StatusOK).WantBody(t,
			`{"variable_type":"env_var","key":"SECRET","value":"instance-secret","protected":false,"masked":false,"raw":false,"description":null}`)
		s.Get(t, ivBase+"/MINE", s.RootToken).Want(t, http.StatusNotFound)
		// The official client as the user: 403 too.
		if _, resp, err := s.Client(t, user.Token).InstanceVariables.ListVariables(nil); err == nil || resp.StatusCode != http.StatusForbidden {
			t.Errorf("client list as a user: %v, %v; want 403", resp, err)
		}
	})
}

// ivCI prints what a job sees of the variables; the ruled job exists
// only when rules see the instance's variable.
const ivCI = `
show:
  script:
    - echo "only=[$INSTANCE_ONLY]"
    - echo "by-group=[$BY_GROUP]"
    - echo "by-project=[$BY_PROJECT]"
    - echo "protected=[${INSTANCE_PROTECTED:-absent}]"
    - echo "masked=[$INSTANCE_MASKED]"
    - echo "file=[$(cat "$INSTANCE_FILE")]"
ruled:
  rules:
    - if: $INSTANCE_ONLY == "from-instance"
  script: [echo ruled]
`

const ivMaskedSecret = "instance-secret-7b2e4d"

// TestInstanceVariables_reachJobs: Quarry's runner runs a job of a
// project in a group; the instance's variables reach its environment
// and its rules, a group's and then the project's of the same key win
// over them, a protected one only on the protected default branch, a
// masked one is masked in the log, a file one is a file.
func TestInstanceVariables_reachJobs(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		c := s.Root(t)
		for _, o := range []gitlab.CreateInstanceVariableOptions{
			{Key: gitlab.Ptr("INSTANCE_ONLY"), Value: gitlab.Ptr("from-instance")},
			{Key: gitlab.Ptr("BY_GROUP"), Value: gitlab.Ptr("from-instance")},
			{Key: gitlab.Ptr("BY_PROJECT"), Value: gitlab.Ptr("from-instance")},
			{Key: gitlab.Ptr("INSTANCE_PROTECTED"), Value: gitlab.Ptr("protected-value"), Protected: gitlab.Ptr(true)},
			{Key: gitlab.Ptr("INSTANCE_MASKED"), Value: gitlab.Ptr(ivMaskedSecret), Masked: gitlab.Ptr(true)},
			{Key: gitlab.Ptr("INSTANCE_FILE"), Value: gitlab.Ptr("file-content"), VariableType: gitlab.Ptr(gitlab.FileVariableType)},
		} {
			if _, _, err := c.InstanceVariables.CreateVariable(&o); err != nil {
				t.Fatalf("create %s: %v", *o.Key, err)
			}
		}
		owner := s.NewUser(t, "ivowner")
		var g struct {
			ID int64 `json:"id"`
		}
		s.Do(t, apitest.Request{Method: "POST", Path: "/groups", Token: owner.Token, JSON: map[string]any{"name": "ivteam",
			"path": "ivteam"}}).Want(t, http.StatusCreated).JSON(t, &g)
		var created struct {
			ID                int64  `json:"id"`
			PathWithNamespace string `json:"path_with_namespace"`
		}
		s.Do(t, apitest.Request{Method: "POST", Path: "/projects", Token: owner.Token, JSON: map[string]any{"name": "ivjobs",
			"namespace_id": g.ID, "initialize_with_readme": true}}).Want(t, http.StatusCreated).JSON(t, &created)
		p := ciProject{s: s, ID: created.ID, Path: created.PathWithNamespace, Token: owner.Token}
		s.Do(t, apitest.Request{Method: "POST", Path: fmt.Sprintf("/groups/%d/variables", g.ID), Token: owner.Token,
			JSON: map[string]any{"key": "BY_GROUP", "value": "from-group"}}).Want(t, http.StatusCreated)
		s.Do(t, apitest.Request{Method: "POST", Path: fmt.Sprintf("/groups/%d/variables", g.ID), Token: owner.Token,
			JSON: map[string]any{"key": "BY_PROJECT", "value": "from-group"}}).Want(t, http.StatusCreated)
		s.Do(t, apitest.Request{Method: "POST", Path: fmt.Sprintf("/projects/%d/variables", p.ID), Token: owner.Token,
			JSON: map[string]any{"key": "BY_PROJECT", "value": "from-project"}}).Want(t, http.StatusCreated)
		r := projectRunner(t, p, map[string]any{"description": "iv"})
		quarryRunner(1)(t, s.URL, r.Token, t.TempDir())

		p.commit(t, "main", map[string]string{".gitlab-ci.yml": ivCI})
		p.commit(t, "feature", map[string]string{"f.txt": "feature"})
		logs := map[string]string{}
		for _, ref := range []string{"main", "feature"} {
			var jobs map[string]jobJSON
			eventuallyFor(t, 2*time.Minute, "the jobs of "+ref+" done", func() bool {
				list := p.pipelines(t, "source=push&ref="+ref)
				if len(list) == 0 {
					return false
				}
				jobs = latest(p.jobs(t, list[0].ID))
				for _, j := range jobs {
					if j.Status != "success" && j.Status != "failed" {
						return false
					}
				}
				return len(jobs) > 0
			})
			if _, ok := jobs["ruled"]; !ok {
				t.Errorf("%s: rules did not see INSTANCE_ONLY (jobs %v)", ref, jobs)
			}
			show := jobs["show"]
			logs[ref] = string(s.Get(t, fmt.Sprintf("/projects/%d/jobs/%d/trace", p.ID, show.ID), owner.Token).Want(t, http.StatusOK).Body)
			if show.Status != "success" {
				t.Fatalf("%s: show %s:\n%s", ref, show.Status, logs[ref])
			}
		}
		for ref, want := range map[string][]string{
			"main": {"only=[from-instance]", "by-group=[from-group]", "by-project=[from-project]", "protected=[protected-value]",
				"masked=[[MASKED]]", "file=[file-content]"},
			"feature": {"only=[from-instance]", "by-group=[from-group]", "by-project=[from-project]", "protected=[absent]",
				"masked=[[MASKED]]", "file=[file-content]"},
		} {
			for _, line := range want {
				if !strings.Contains(logs[ref], line) {
					t.Errorf("%s: the log lacks %q:\n%s", ref, line, logs[ref])
				}
			}
			if strings.Contains(logs[ref], ivMaskedSecret) {
				t.Errorf("%s: the masked instance variable shows in the log:\n%s", ref, logs[ref])
			}
		}
	})
}
