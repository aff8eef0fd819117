package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"reflect"
	"slices"
	"strings"
	"testing"

	"quarry/internal/apitest"
	"quarry/internal/ci"
	"quarry/internal/model"
)

// Pipeline trigger tokens (reference §9.1 source trigger): their CRUD for
// maintainers, and the pipelines they make.

// trigJSON is a trigger token as the API renders it.
type trigJSON struct {
	ID          int64   `json:"id"`
	Token       string  `json:"token"`
	Description string  `json:"description"`
	CreatedAt   string  `json:"created_at"`
	UpdatedAt   string  `json:"updated_at"`
	LastUsed    *string `json:"last_used"`
	ExpiresAt   *string `json:"expires_at"`
	Owner       *struct {
		ID       int64  `json:"id"`
		Username string `json:"username"`
	} `json:"owner"`
}

// trigHint is what the API shows of a token after its creation.
func trigHint(token string) string { return token[:len(ci.TriggerTokenPrefix)+4] }

func trigAddMember(t *testing.T, s *apitest.Server, p ciProject, u apitest.User, level int) {
	t.Helper()
	s.Do(t, apitest.Request{Method: "POST", Path: fmt.Sprintf("/projects/%d/members", p.ID), Token: p.Token,
		JSON: map[string]any{"user_id": u.ID, "access_level": level}}).Want(t, http.StatusCreated)
}

func trigNew(t *testing.T, s *apitest.Server, p ciProject, token, description string) trigJSON {
	t.Helper()
	var tr trigJSON
	s.Do(t, apitest.Request{Method: "POST", Path: fmt.Sprintf("/projects/%d/triggers", p.ID), Token: token,
		JSON: map[string]any{"description": description}}).Want(t, http.StatusCreated).JSON(t, &tr)
	return tr
}

// TestCITriggers_crud: maintainers list, create, read, rename and delete
// trigger tokens; the token is shown whole once, in the creation's
// answer, and by its first characters afterwards (Quarry stores a digest
// only); developers are refused, strangers do not see the project.
func TestCITriggers_crud(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		owner := s.NewUser(t, "owner")
		maint := s.NewUser(t, "maint")
		dev := s.NewUser(t, "dev")
		stranger := s.NewUser(t, "stranger")
		p := newCIProject(t, s, owner, "trig", map[string]string{".gitlab-ci.yml": pushBuildOnly})
		other := newCIProject(t, s, owner, "other", map[string]string{".gitlab-ci.yml": pushBuildOnly})
		trigAddMember(t, s, p, maint, 40)
		trigAddMember(t, s, p, dev, 30)
		base := fmt.Sprintf("/projects/%d/triggers", p.ID)

		s.Do(t, apitest.Request{Method: "POST", Path: base, Token: maint.Token, JSON: map[string]any{}}).
			Want(t, http.StatusBadRequest).WantBody(t, `{"error":"description is missing"}`)
		s.Get(t, base, maint.Token).Want(t, http.StatusOK).WantBody(t, `[]`)

		created := s.Do(t, apitest.Request{Method: "POST", Path: base, Token: maint.Token, JSON: map[string]any{"description": "deploy hook"}}).
			Want(t, http.StatusCreated)
		raw := created.Object(t)
		var keys []string
		for k := range raw {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		if want := []string{"created_at", "description", "expires_at", "id", "last_used", "owner", "token", "updated_at"}; !slices.Equal(keys, want) {
			t.Fatalf("trigger fields %v; want %v", keys, want)
		}
		var tr trigJSON
		created.JSON(t, &tr)
		if !strings.HasPrefix(tr.Token, ci.TriggerTokenPrefix) || len(tr.Token) != len(ci.TriggerTokenPrefix)+40 || tr.Description != "deploy hook" ||
			tr.LastUsed != nil || tr.ExpiresAt != nil || tr.Owner == nil || tr.Owner.ID != maint.ID || tr.Owner.Username != "maint" ||
			tr.CreatedAt == "" || tr.UpdatedAt == "" {
			t.Fatalf("created trigger %+v", tr)
		}
		one := fmt.Sprintf("%s/%d", base, tr.ID)

		// Later reads show the token's first characters only.
		var list []trigJSON
		s.Get(t, base, maint.Token).Want(t, http.StatusOK).JSON(t, &list)
		if len(list) != 1 || list[0].ID != tr.ID || list[0].Token != trigHint(tr.Token) || list[0].Description != "deploy hook" ||
			list[0].Owner == nil || list[0].Owner.ID != maint.ID {
			t.Fatalf("trigger list %+v; want token %q", list, trigHint(tr.Token))
		}
		var got trigJSON
		s.Get(t, one, owner.Token).Want(t, http.StatusOK).JSON(t, &got)
		if got.ID != tr.ID || got.Token != trigHint(tr.Token) || got.Description != "deploy hook" || got.Owner == nil || got.Owner.ID != maint.ID {
			t.Fatalf("trigger read %+v", got)
		}

		var renamed trigJSON
		s.Do(t, apitest.Request{Method: "PUT", Path: one, Token: maint.Token, JSON: map[string]any{"description": "renamed"}}).
			Want(t, http.StatusOK).JSON(t, &renamed)
		if renamed.ID != tr.ID || renamed.Description != "renamed" || renamed.Token != trigHint(tr.Token) {
			t.Fatalf("renamed trigger %+v", renamed)
		}
		s.Get(t, one, maint.Token).Want(t, http.StatusOK).JSON(t, &got)
		if got.Description != "renamed" {
			t.Fatalf("after rename: %+v", got)
		}

		// Developers may not; strangers do not see the project.
		forbidden := `{"message":"403 Forbidden"}`
		s.Get(t, base, dev.Token).Want(t, http.StatusForbidden).WantBody(t, forbidden)
		s.Get(t, one, dev.Token).Want(t, http.StatusForbidden).WantBody(t, forbidden)
		s.Do(t, apitest.Request{Method: "POST", Path: base, Token: dev.Token, JSON: map[string]any{"description": "x"}}).
			Want(t, http.StatusForbidden).WantBody(t, forbidden)
		s.Do(t, apitest.Request{Method: "PUT", Path: one, Token: dev.Token, JSON: map[string]any{"description": "x"}}).
			Want(t, http.StatusForbidden).WantBody(t, forbidden)
		s.Do(t, apitest.Request{Method: "DELETE", Path: one, Token: dev.Token}).Want(t, http.StatusForbidden).WantBody(t, forbidden)
		s.Get(t, base, stranger.Token).Want(t, http.StatusNotFound).WantBody(t, `{"message":"404 Project Not Found"}`)
		s.Get(t, one, stranger.Token).Want(t, http.StatusNotFound).WantBody(t, `{"message":"404 Project Not Found"}`)
		s.Get(t, base, "").Want(t, http.StatusUnauthorized)

		// Unknown ids and another project's trigger are not found.
		notFound := `{"message":"404 Trigger Not Found"}`
		s.Get(t, fmt.Sprintf("%s/%d", base, s.AbsentID(t)), maint.Token).Want(t, http.StatusNotFound).WantBody(t, notFound)
		elsewhere := trigNew(t, s, other, owner.Token, "other's")
		s.Get(t, fmt.Sprintf("%s/%d", base, elsewhere.ID), owner.Token).Want(t, http.StatusNotFound).WantBody(t, notFound)
		s.Do(t, apitest.Request{Method: "PUT", Path: fmt.Sprintf("%s/%d", base, elsewhere.ID), Token: owner.Token,
			JSON: map[string]any{"description": "stolen"}}).Want(t, http.StatusNotFound).WantBody(t, notFound)
		s.Do(t, apitest.Request{Method: "DELETE", Path: fmt.Sprintf("%s/%d", base, elsewhere.ID), Token: owner.Token}).
			Want(t, http.StatusNotFound).WantBody(t, notFound)

		s.Do(t, apitest.Request{Method: "DELETE", Path: one, Token: maint.Token}).Want(t, http.StatusNoContent)
		s.Get(t, one, maint.Token).Want(t, http.StatusNotFound).WantBody(t, notFound)
		s.Do(t, apitest.Request{Method: "DELETE", Path: one, Token: maint.Token}).Want(t, http.StatusNotFound).WantBody(t, notFound)
		s.Get(t, base, maint.Token).Want(t, http.StatusOK).WantBody(t, `[]`)
		var others []trigJSON
		s.Get(t, fmt.Sprintf("/projects/%d/triggers", other.ID), owner.Token).Want(t, http.StatusOK).JSON(t, &others)
		if len(others) != 1 || others[0].ID != elsewhere.ID {
			t.Fatalf("the other project's triggers %+v", others)
		}
	})
}

const trigConfig = `build:
  script: [make]
triggered:
  script: [x]
  rules:
    - if: $CI_PIPELINE_TRIGGERED == "true"
deploy:
  script: [deploy]
  rules:
    - if: $DEPLOY == "yes"
`

// trigPipelineVariables reads a pipeline's variables, sorted by key, as
// "KEY=value (type)".
func trigPipelineVariables(t *testing.T, p ciProject, id int64) []string {
	t.Helper()
	var vars []struct {
		Key          string `json:"key"`
		Value        string `json:"value"`
		VariableType string `json:"variable_type"`
	}
	p.s.Get(t, fmt.Sprintf("/projects/%d/pipelines/%d/variables", p.ID, id), p.Token).Want(t, http.StatusOK).JSON(t, &vars)
	out := []string{}
	for _, v := range vars {
		out = append(out, fmt.Sprintf("%s=%s (%s)", v.Key, v.Value, v.VariableType))
	}
	slices.Sort(out)
	return out
}

// TestCITriggers_triggerPipeline: a trigger token runs the configuration
// of a ref (form or JSON, the ref in the body or the path) as the token's
// owner, with source trigger, its variables stored and seen by rules, and
// CI_PIPELINE_TRIGGERED set; the token's last use is recorded.
func TestCITriggers_triggerPipeline(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		owner := s.NewUser(t, "owner")
		maint := s.NewUser(t, "maint")
		p := newCIProject(t, s, owner, "trig", map[string]string{".gitlab-ci.yml": trigConfig})
		trigAddMember(t, s, p, maint, 40)
		feature := p.commit(t, "feature/one", map[string]string{"f.txt": "f\n"})
		p.settle(t, 2)
		push := p.pipelines(t, "source=push&ref=main")
		if len(push) != 1 {
			t.Fatalf("push pipelines of main: %+v", push)
		}
		mainSHA := push[0].SHA
		pushWantJobs(t, p, push[0].ID, "build")
		tr := trigNew(t, s, p, maint.Token, "ci")
		endpoint := fmt.Sprintf("/projects/%d/trigger/pipeline", p.ID)

		// A form, without any credentials but the trigger token.
		var pl pipelineJSON
		s.Do(t, apitest.Request{Method: "POST", Path: endpoint, Form: url.Values{"token": {tr.Token}, "ref": {"main"},
			"variables[DEPLOY]": {"yes"}, "variables[OTHER]": {"x y"}}}).Want(t, http.StatusCreated).JSON(t, &pl)
		if pl.Source != "trigger" || pl.Ref != "main" || pl.SHA != mainSHA || pl.BeforeSHA != model.ZeroRef || pl.Tag || pl.Status != "pending" ||
			pl.YAMLErrors != nil || pl.User == nil || pl.User.ID != maint.ID || pl.User.Username != "maint" || pl.ProjectID != p.ID || pl.IID == 0 ||
			!strings.HasSuffix(pl.WebURL, "/"+p.Path+"/-/pipelines/"+itoa(pl.ID)) {
			t.Fatalf("triggered pipeline %+v", pl)
		}
		if full := p.pipeline(t, pl.ID); full.Source != "trigger" || full.User == nil || full.User.ID != maint.ID {
			t.Fatalf("triggered pipeline read back %+v", full)
		}
		pushWantJobs(t, p, pl.ID, "build", "deploy", "triggered")
		if got, want := trigPipelineVariables(t, p, pl.ID), []string{"DEPLOY=yes (env_var)", "OTHER=x y (env_var)"}; !slices.Equal(got, want) {
			t.Fatalf("pipeline variables %v; want %v", got, want)
		}

		// JSON, variables as an object.
		s.Do(t, apitest.Request{Method: "POST", Path: endpoint, JSON: map[string]any{"token": tr.Token, "ref": "main",
			"variables": map[string]any{"DEPLOY": "no"}}}).Want(t, http.StatusCreated).JSON(t, &pl)
		if pl.Source != "trigger" || pl.Status != "pending" {
			t.Fatalf("JSON trigger %+v", pl)
		}
		pushWantJobs(t, p, pl.ID, "build", "triggered")
		if got, want := trigPipelineVariables(t, p, pl.ID), []string{"DEPLOY=no (env_var)"}; !slices.Equal(got, want) {
			t.Fatalf("pipeline variables %v; want %v", got, want)
		}

		// The ref in the path (a slash in it escaped), the project by path.
		s.Do(t, apitest.Request{Method: "POST", Path: fmt.Sprintf("/projects/%d/ref/%s/trigger/pipeline", p.ID, url.PathEscape("feature/one")),
			Form: url.Values{"token": {tr.Token}}}).Want(t, http.StatusCreated).JSON(t, &pl)
		if pl.Ref != "feature/one" || pl.SHA != feature || pl.Source != "trigger" {
			t.Fatalf("ref from the path: %+v", pl)
		}
		pushWantJobs(t, p, pl.ID, "build", "triggered")
		s.Do(t, apitest.Request{Method: "POST", Path: fmt.Sprintf("/projects/%s/ref/main/trigger/pipeline", url.PathEscape(p.Path)),
			Form: url.Values{"token": {tr.Token}}}).Want(t, http.StatusCreated).JSON(t, &pl)
		if pl.Ref != "main" || pl.ProjectID != p.ID {
			t.Fatalf("project by path: %+v", pl)
		}

		// A tag.
		s.Do(t, apitest.Request{Method: "POST", Path: fmt.Sprintf("/projects/%d/repository/tags", p.ID), Token: owner.Token,
			JSON: map[string]any{"tag_name": "v1", "ref": "main"}}).Want(t, http.StatusCreated)
		s.Do(t, apitest.Request{Method: "POST", Path: endpoint, Form: url.Values{"token": {tr.Token}, "ref": {"v1"}}}).
			Want(t, http.StatusCreated).JSON(t, &pl)
		if pl.Ref != "v1" || !pl.Tag || pl.SHA != mainSHA || pl.Source != "trigger" {
			t.Fatalf("tag triggered: %+v", pl)
		}

		// [skip ci] is for pushes: the push pipeline of such a commit is
		// skipped, a trigger runs it.
		quiet := trigCommit(t, p, "quiet", "[skip ci] docs only", map[string]string{"doc.md": "d\n"})
		if push := pushPipeline(t, p, "quiet", quiet); push.Status != "skipped" {
			t.Fatalf("push pipeline of an API commit with [skip ci]: %+v", push)
		}
		s.Do(t, apitest.Request{Method: "POST", Path: endpoint, Form: url.Values{"token": {tr.Token}, "ref": {"quiet"}}}).
			Want(t, http.StatusCreated).JSON(t, &pl)
		if pl.Status != "pending" || pl.SHA != quiet {
			t.Fatalf("[skip ci] commit triggered: %+v", pl)
		}
		pushWantJobs(t, p, pl.ID, "build", "triggered")

		if got := p.pipelines(t, "source=trigger&per_page=100"); len(got) != 6 {
			t.Fatalf("source=trigger lists %d pipelines; want 6", len(got))
		}
		var used trigJSON
		s.Get(t, fmt.Sprintf("/projects/%d/triggers/%d", p.ID, tr.ID), maint.Token).Want(t, http.StatusOK).JSON(t, &used)
		if used.LastUsed == nil {
			t.Fatalf("trigger after use: %+v", used)
		}
	})
}

// TestCITriggers_refused: the trigger endpoint's bad inputs. An unknown,
// deleted or foreign token is 404 whatever the project (nothing about it
// leaks); an unknown ref is GitLab's chain error; an invalid
// configuration is a stored failed pipeline (GitLab saves it for
// triggers); variables must be a map of strings.
func TestCITriggers_refused(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		owner := s.NewUser(t, "owner")
		outsider := s.NewUser(t, "outsider")
		p := newCIProject(t, s, owner, "trig", map[string]string{".gitlab-ci.yml": trigConfig})
		broken := p.commit(t, "broken", map[string]string{".gitlab-ci.yml": "build:\n  stage: nowhere\n  script: [x]\n"})
		other := newCIProject(t, s, owner, "other", map[string]string{".gitlab-ci.yml": pushBuildOnly})
		hidden := newCIProject(t, s, outsider, "hidden", map[string]string{".gitlab-ci.yml": pushBuildOnly})
		p.settle(t, 2)
		tr := trigNew(t, s, p, owner.Token, "ci")
		foreign := trigNew(t, s, other, owner.Token, "other")
		revoked := trigNew(t, s, p, owner.Token, "revoked")
		s.Do(t, apitest.Request{Method: "DELETE", Path: fmt.Sprintf("/projects/%d/triggers/%d", p.ID, revoked.ID), Token: owner.Token}).
			Want(t, http.StatusNoContent)
		post := func(projectID int64, form url.Values) *apitest.Response {
			return s.Do(t, apitest.Request{Method: "POST", Path: fmt.Sprintf("/projects/%d/trigger/pipeline", projectID), Form: form})
		}

		post(p.ID, url.Values{"ref": {"main"}}).Want(t, http.StatusBadRequest).WantBody(t, `{"error":"token is missing"}`)
		post(p.ID, url.Values{"token": {tr.Token}}).Want(t, http.StatusBadRequest).WantBody(t, `{"error":"ref is missing"}`)
		notFound := `{"message":"404 Not Found"}`
		post(p.ID, url.Values{"token": {ci.TriggerTokenPrefix + strings.Repeat("x", 40)}, "ref": {"main"}}).
			Want(t, http.StatusNotFound).WantBody(t, notFound)
		post(p.ID, url.Values{"token": {revoked.Token}, "ref": {"main"}}).Want(t, http.StatusNotFound).WantBody(t, notFound)
		post(p.ID, url.Values{"token": {foreign.Token}, "ref": {"main"}}).Want(t, http.StatusNotFound).WantBody(t, notFound)
		// A token against a private project of someone else, or none at
		// all: the same answer.
		post(hidden.ID, url.Values{"token": {tr.Token}, "ref": {"main"}}).Want(t, http.StatusNotFound).WantBody(t, notFound)
		post(s.AbsentID(t), url.Values{"token": {tr.Token}, "ref": {"main"}}).Want(t, http.StatusNotFound).WantBody(t, notFound)

		post(p.ID, url.Values{"token": {tr.Token}, "ref": {"nope"}}).Want(t, http.StatusBadRequest).
			WantBody(t, `{"message":{"base":["Reference not found"]}}`)
		post(p.ID, url.Values{"token": {tr.Token}, "ref": {"main"}, "variables": {"notahash"}}).Want(t, http.StatusBadRequest).
			WantBody(t, trigVariablesMapOnly)
		if got := p.pipelines(t, "source=trigger&per_page=100"); len(got) != 0 {
			t.Fatalf("refused triggers stored pipelines %+v", got)
		}

		// An invalid configuration: 201 and a failed pipeline with its
		// yaml_errors.
		var pl pipelineJSON
		post(p.ID, url.Values{"token": {tr.Token}, "ref": {"broken"}}).Want(t, http.StatusCreated).JSON(t, &pl)
		wantErr := "build job: chosen stage nowhere does not exist; available stages are .pre, build, test, deploy, .post"
		if pl.Status != "failed" || pl.Source != "trigger" || pl.SHA != broken || pl.YAMLErrors == nil || *pl.YAMLErrors != wantErr ||
			pl.FinishedAt == nil || pl.StartedAt != nil || pl.User == nil || pl.User.ID != owner.ID {
			t.Fatalf("invalid configuration triggered: %+v (yaml_errors %s)", pl, pushDeref(pl.YAMLErrors))
		}
		pushWantJobs(t, p, pl.ID)
		if got := p.pipelines(t, "yaml_errors=true&source=trigger"); len(got) != 1 || got[0].ID != pl.ID {
			t.Fatalf("yaml_errors=true&source=trigger: %+v", got)
		}
	})
}

// trigVariablesMapOnly is GitLab's answer to trigger variables that
// are not a map of strings (reference §9.1).
const trigVariablesMapOnly = `{"message":"variables needs to be a map of key-valued strings"}`

// TestCITriggers_variablesMustBeStrings: JSON trigger variables whose
// values are not strings (a number, a boolean, an object) are refused,
// as GitLab checks every value is a String; nothing is stored.
func TestCITriggers_variablesMustBeStrings(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		owner := s.NewUser(t, "owner")
		p := newCIProject(t, s, owner, "trig", map[string]string{".gitlab-ci.yml": trigConfig})
		p.settle(t, 1)
		tr := trigNew(t, s, p, owner.Token, "ci")
		for _, value := range []any{1, true, map[string]any{"nested": "x"}} {
			r := s.Do(t, apitest.Request{Method: "POST", Path: fmt.Sprintf("/projects/%d/trigger/pipeline", p.ID), JSON: map[string]any{
				"token": tr.Token, "ref": "main", "variables": map[string]any{"VALUE": value}}})
			if r.Status != http.StatusBadRequest || !trigSameJSON(r.Body, []byte(trigVariablesMapOnly)) {
				t.Errorf("variables {VALUE: %v}: %d %s; want 400 %s", value, r.Status, r.Body, trigVariablesMapOnly)
			}
		}
		if got := p.pipelines(t, "source=trigger&per_page=100"); len(got) != 0 {
			t.Fatalf("refused triggers stored %d pipelines", len(got))
		}
	})
}

// trigSameJSON reports whether two bodies hold the same JSON value.
func trigSameJSON(a, b []byte) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	return reflect.DeepEqual(x, y)
}

// trigCommit commits files through the API on branch (made from main
// when missing) with a message, and returns the commit.
func trigCommit(t *testing.T, p ciProject, branch, message string, files map[string]string) string {
	t.Helper()
	var actions []map[string]any
	for name, content := range files {
		actions = append(actions, map[string]any{"action": "create", "file_path": name, "content": content})
	}
	var c struct{ ID string }
	p.s.Do(t, apitest.Request{Method: "POST", Path: fmt.Sprintf("/projects/%d/repository/commits", p.ID), Token: p.Token,
		JSON: map[string]any{"branch": branch, "start_branch": "main", "commit_message": message, "actions": actions}}).
		Want(t, http.StatusCreated).JSON(t, &c)
	return c.ID
}
