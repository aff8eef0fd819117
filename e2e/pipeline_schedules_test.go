package e2e

import (
	"fmt"
	"net/http"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	gitlab "gitlab.com/gitlab-org/api/client-go"

	"quarry/internal/apitest"
	"quarry/internal/storetest"
)

// Pipeline schedules as GitLab's API gives them (lib/api/ci/
// pipeline_schedules.rb, entities Ci::PipelineSchedule and
// PipelineScheduleDetails, app/policies/ci/pipeline_schedule_policy.rb,
// app/workers/run_pipeline_schedule_worker.rb).

const schedCI = `build:
  script: [echo "$SCHED_VAR"]
`

func schedPath(projectID int64, rest string) string {
	return fmt.Sprintf("/projects/%d/pipeline_schedules%s", projectID, rest)
}

// schedPipelines lists the pipelines a schedule made.
func schedPipelines(t *testing.T, s *apitest.Server, token string, projectID, id int64) []pipelineJSON {
	t.Helper()
	var out []pipelineJSON
	s.Get(t, schedPath(projectID, fmt.Sprintf("/%d/pipelines?per_page=100", id)), token).Want(t, http.StatusOK).JSON(t, &out)
	return out
}

func schedGet(t *testing.T, s *apitest.Server, token string, projectID, id int64) map[string]any {
	t.Helper()
	return s.Get(t, schedPath(projectID, fmt.Sprintf("/%d", id)), token).Want(t, http.StatusOK).Object(t)
}

func TestPipelineSchedules_crudWithClient(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		owner := s.NewUser(t, "owner")
		dev, maint, rep := s.NewUser(t, "dev"), s.NewUser(t, "maint"), s.NewUser(t, "rep")
		p := newCIProject(t, s, owner, "sched", map[string]string{".gitlab-ci.yml": schedCI})
		// main is protected (Maintainers push): the developer's schedules
		// run on a branch of their own.
		p.commit(t, "feature", map[string]string{"f.txt": "f"})
		capiAddMember(t, s, owner.Token, p.ID, dev.ID, 30)
		capiAddMember(t, s, owner.Token, p.ID, maint.ID, 40)
		capiAddMember(t, s, owner.Token, p.ID, rep.ID, 20)
		c := s.Client(t, dev.Token)

		// Create: cron_timezone defaults to UTC, active to true.
		before := time.Now().UTC()
		sc, resp, err := c.PipelineSchedules.CreatePipelineSchedule(p.ID, &gitlab.CreatePipelineScheduleOptions{
			Description: gitlab.Ptr("nightly"), Ref: gitlab.Ptr("feature"), Cron: gitlab.Ptr("0 1 * * *")})
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != http.StatusCreated {
			t.Errorf("create: %d; want 201", resp.StatusCode)
		}
		if sc.Description != "nightly" || sc.Ref != "feature" || sc.Cron != "0 1 * * *" || sc.CronTimezone != "UTC" || !sc.Active ||
			sc.Owner == nil || sc.Owner.Username != "dev" || sc.LastPipeline != nil || sc.Variables != nil {
			t.Errorf("created %+v", sc)
		}
		want := time.Date(before.Year(), before.Month(), before.Day(), 1, 0, 0, 0, time.UTC)
		if !want.After(before) {
			want = want.AddDate(0, 0, 1)
		}
		if sc.NextRunAt == nil || !sc.NextRunAt.Equal(want) {
			t.Errorf("next_run_at %v; want %s", sc.NextRunAt, want)
		}

		// A second one, inactive, in Tokyo.
		tokyo, _, err := c.PipelineSchedules.CreatePipelineSchedule(p.ID, &gitlab.CreatePipelineScheduleOptions{
			Description: gitlab.Ptr("another"), Ref: gitlab.Ptr("refs/heads/feature"), Cron: gitlab.Ptr("@hourly"),
			CronTimezone: gitlab.Ptr("Asia/Tokyo"), Active: gitlab.Ptr(false)})
		if err != nil {
			t.Fatal(err)
		}
		if tokyo.Active || tokyo.CronTimezone != "Asia/Tokyo" || tokyo.Ref != "refs/heads/feature" || tokyo.NextRunAt.Minute() != 0 {
			t.Errorf("second %+v", tokyo)
		}

		// Lists: scope and order; reporters read.
		list, _, err := s.Client(t, rep.Token).PipelineSchedules.ListPipelineSchedules(p.ID, nil)
		if err != nil || len(list) != 2 || list[0].ID != sc.ID || list[1].ID != tokyo.ID {
			t.Fatalf("list %v %v", list, err)
		}
		for scope, id := range map[gitlab.PipelineScheduleScopeValue]int64{gitlab.PipelineScheduleActive: sc.ID, gitlab.PipelineScheduleInactive: tokyo.ID} {
			got, _, err := c.PipelineSchedules.ListPipelineSchedules(p.ID, &gitlab.ListPipelineSchedulesOptions{Scope: gitlab.Ptr(scope)})
			if err != nil || len(got) != 1 || got[0].ID != id {
				t.Errorf("scope %s: %v %v", scope, got, err)
			}
		}
		desc := s.Get(t, schedPath(p.ID, "?order_by=description&sort=asc"), dev.Token).Want(t, http.StatusOK).Array(t)
		if len(desc) != 2 || desc[0]["description"] != "another" {
			t.Errorf("ordered by description: %v", desc)
		}
		byID := s.Get(t, schedPath(p.ID, "?sort=desc"), dev.Token).Want(t, http.StatusOK).Array(t)
		if len(byID) != 2 || byID[0]["id"] != float64(tokyo.ID) {
			t.Errorf("id desc: %v", byID)
		}
		s.Get(t, schedPath(p.ID, "?scope=all"), dev.Token).Want(t, http.StatusBadRequest).WantBody(t, `{"error":"scope does not have a valid value"}`)
		s.Get(t, schedPath(p.ID, "?order_by=cron"), dev.Token).Want(t, http.StatusBadRequest)

		// Variables: the owner adds, changes and removes them; values come
		// back, and only who may administer the schedule sees them.
		v, resp, err := c.PipelineSchedules.CreatePipelineScheduleVariable(p.ID, sc.ID, &gitlab.CreatePipelineScheduleVariableOptions{
			Key: gitlab.Ptr("SCHED_VAR"), Value: gitlab.Ptr("s3cret")})
		if err != nil || resp.StatusCode != http.StatusCreated || v.Key != "SCHED_VAR" || v.Value != "s3cret" || v.VariableType != gitlab.EnvVariableType {
			t.Fatalf("variable %+v %v", v, err)
		}
		v, _, err = c.PipelineSchedules.CreatePipelineScheduleVariable(p.ID, sc.ID, &gitlab.CreatePipelineScheduleVariableOptions{
			Key: gitlab.Ptr("CONF"), Value: gitlab.Ptr("a=b"), VariableType: gitlab.Ptr(gitlab.FileVariableType)})
		if err != nil || v.VariableType != gitlab.FileVariableType {
			t.Fatalf("file variable %+v %v", v, err)
		}
		v, _, err = c.PipelineSchedules.EditPipelineScheduleVariable(p.ID, sc.ID, "CONF", &gitlab.EditPipelineScheduleVariableOptions{
			Value: gitlab.Ptr("c=d")})
		if err != nil || v.Value != "c=d" || v.VariableType != gitlab.FileVariableType {
			t.Fatalf("edited variable %+v %v", v, err)
		}
		v, resp, err = c.PipelineSchedules.DeletePipelineScheduleVariable(p.ID, sc.ID, "CONF")
		if err != nil || resp.StatusCode != http.StatusAccepted || v.Key != "CONF" || v.Value != "c=d" {
			t.Fatalf("deleted variable %+v %v", v, err)
		}
		vpath := schedPath(p.ID, fmt.Sprintf("/%d/variables", sc.ID))
		for _, bad := range []struct {
			body map[string]any
			want string
		}{
			{map[string]any{"key": "SCHED_VAR", "value": "x"}, `{"message":{"key":["has already been taken"]}}`},
			{map[string]any{"key": "bad-key", "value": "x"}, `{"message":{"key":["can contain only letters, digits and '_'."]}}`},
			{map[string]any{"key": "K", "value": "x", "variable_type": "secret"}, `{"error":"variable_type does not have a valid value"}`},
			{map[string]any{"value": "x"}, `{"error":"key is missing"}`},
		} {
			s.Do(t, apitest.Request{Method: "POST", Path: vpath, Token: dev.Token, JSON: bad.body}).Want(t, http.StatusBadRequest).WantBody(t, bad.want)
		}
		s.Get(t, vpath+"/SCHED_VAR", dev.Token).Want(t, http.StatusOK).WantBody(t, `{"key":"SCHED_VAR","variable_type":"env_var","value":"s3cret"}`)
		s.Get(t, vpath+"/SCHED_VAR", rep.Token).Want(t, http.StatusForbidden)
		s.Get(t, vpath+"/NOPE", dev.Token).Want(t, http.StatusNotFound)
		s.Do(t, apitest.Request{Method: "PUT", Path: vpath + "/NOPE", Token: dev.Token, JSON: map[string]any{"value": "x"}}).
			Want(t, http.StatusNotFound).WantBody(t, `{"message":"404 Pipeline Schedule Variable Not Found"}`)
		// Not the owner: a maintainer may not change the variables (GitLab's
		// update_pipeline_schedule is the owner's), a reporter neither.
		s.Do(t, apitest.Request{Method: "POST", Path: vpath, Token: maint.Token, JSON: map[string]any{"key": "M", "value": "x"}}).Want(t, http.StatusForbidden)
		s.Do(t, apitest.Request{Method: "POST", Path: vpath, Token: rep.Token, JSON: map[string]any{"key": "M", "value": "x"}}).Want(t, http.StatusForbidden)

		got, _, err := c.PipelineSchedules.GetPipelineSchedule(p.ID, sc.ID)
		if err != nil || len(got.Variables) != 1 || got.Variables[0].Key != "SCHED_VAR" || got.Variables[0].Value != "s3cret" {
			t.Fatalf("get as owner %+v %v", got, err)
		}
		if m := schedGet(t, s, maint.Token, p.ID, sc.ID); m["variables"] == nil {
			t.Errorf("a maintainer sees no variables: %v", m)
		}
		m := schedGet(t, s, rep.Token, p.ID, sc.ID)
		if _, ok := m["variables"]; ok {
			t.Errorf("a reporter sees the variables: %v", m["variables"])
		}
		capiWantFields(t, "details", m, map[string]any{"id": float64(sc.ID), "description": "nightly", "ref": "feature", "cron": "0 1 * * *",
			"cron_timezone": "UTC", "active": true, "last_pipeline": nil})
		capiWantTypes(t, "details", m, map[string]string{"next_run_at": "string", "created_at": "string", "updated_at": "string", "owner": "object"})

		// Edit: the owner only; the next run follows the new line.
		edited, _, err := c.PipelineSchedules.EditPipelineSchedule(p.ID, sc.ID, &gitlab.EditPipelineScheduleOptions{
			Cron: gitlab.Ptr("30 2 * * *"), CronTimezone: gitlab.Ptr("Europe/Berlin"), Description: gitlab.Ptr("renamed")})
		if err != nil || edited.Cron != "30 2 * * *" || edited.Description != "renamed" || edited.Ref != "feature" || !edited.Active {
			t.Fatalf("edited %+v %v", edited, err)
		}
		berlin, _ := time.LoadLocation("Europe/Berlin")
		if l := edited.NextRunAt.In(berlin); l.Hour() != 2 || l.Minute() != 30 {
			t.Errorf("next_run_at %s; want 02:30 in Berlin", l)
		}
		s.Do(t, apitest.Request{Method: "PUT", Path: schedPath(p.ID, fmt.Sprintf("/%d", sc.ID)), Token: maint.Token,
			JSON: map[string]any{"description": "mine"}}).Want(t, http.StatusForbidden)

		// Take ownership: a maintainer (201), again (200); then they edit.
		_, resp, err = s.Client(t, maint.Token).PipelineSchedules.TakeOwnershipOfPipelineSchedule(p.ID, sc.ID)
		if err != nil || resp.StatusCode != http.StatusCreated {
			t.Fatalf("take ownership: %v %v", resp, err)
		}
		owned, resp, err := s.Client(t, maint.Token).PipelineSchedules.TakeOwnershipOfPipelineSchedule(p.ID, sc.ID)
		if err != nil || resp.StatusCode != http.StatusOK || owned.Owner.Username != "maint" {
			t.Fatalf("take ownership again: %+v %v", owned, err)
		}
		s.Do(t, apitest.Request{Method: "POST", Path: schedPath(p.ID, fmt.Sprintf("/%d/take_ownership", sc.ID)), Token: rep.Token}).Want(t, http.StatusForbidden)
		// The former owner, a developer, may no longer change it.
		s.Do(t, apitest.Request{Method: "PUT", Path: schedPath(p.ID, fmt.Sprintf("/%d", sc.ID)), Token: dev.Token,
			JSON: map[string]any{"description": "back"}}).Want(t, http.StatusForbidden)
		if _, _, err := s.Client(t, maint.Token).PipelineSchedules.EditPipelineSchedule(p.ID, sc.ID, &gitlab.EditPipelineScheduleOptions{
			Active: gitlab.Ptr(false)}); err != nil {
			t.Fatal(err)
		}

		// Delete: 204, then 404.
		s.Do(t, apitest.Request{Method: "DELETE", Path: schedPath(p.ID, fmt.Sprintf("/%d", tokyo.ID)), Token: rep.Token}).Want(t, http.StatusForbidden)
		resp, err = c.PipelineSchedules.DeletePipelineSchedule(p.ID, tokyo.ID)
		if err != nil || resp.StatusCode != http.StatusNoContent {
			t.Fatalf("delete: %v %v", resp, err)
		}
		s.Get(t, schedPath(p.ID, fmt.Sprintf("/%d", tokyo.ID)), dev.Token).Want(t, http.StatusNotFound).
			WantBody(t, `{"message":"404 Pipeline Schedule Not Found"}`)
	})
}

func TestPipelineSchedules_badInput(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		owner, rep, stranger := s.NewUser(t, "owner"), s.NewUser(t, "rep"), s.NewUser(t, "stranger")
		p := newCIProject(t, s, owner, "bad", map[string]string{".gitlab-ci.yml": schedCI})
		capiAddMember(t, s, owner.Token, p.ID, rep.ID, 20)
		ok := map[string]any{"description": "d", "ref": "main", "cron": "0 1 * * *"}
		with := func(k string, v any) map[string]any {
			out := map[string]any{}
			for a, b := range ok {
				out[a] = b
			}
			if v == nil {
				delete(out, k)
			} else {
				out[k] = v
			}
			return out
		}
		for _, c := range []struct {
			body map[string]any
			want string
		}{
			{map[string]any{}, `{"error":"description is missing, ref is missing, cron is missing"}`},
			{with("cron", nil), `{"error":"cron is missing"}`},
			{with("ref", ""), `{"error":"ref is empty"}`},
			{with("description", " "), `{"message":{"description":["can't be blank"]}}`},
			{with("cron", "not a cron"), `{"message":{"cron":["syntax is invalid"]}}`},
			{with("cron", "* * * * * *"), `{"message":{"cron":["syntax is invalid"]}}`},
			{with("cron", "@every 1m"), `{"message":{"cron":["syntax is invalid"]}}`},
			{with("cron_timezone", "Mars/Olympus"), `{"message":{"cron_timezone":["syntax is invalid"]}}`},
			{with("cron_timezone", "Local"), `{"message":{"cron_timezone":["syntax is invalid"]}}`},
			{with("active", "maybe"), `{"error":"active is invalid"}`},
		} {
			r := s.Do(t, apitest.Request{Method: "POST", Path: schedPath(p.ID, ""), Token: owner.Token, JSON: c.body})
			r.Want(t, http.StatusBadRequest).WantBody(t, c.want)
		}
		long := make([]byte, 300)
		for i := range long {
			long[i] = 'a'
		}
		s.Do(t, apitest.Request{Method: "POST", Path: schedPath(p.ID, ""), Token: owner.Token, JSON: with("description", string(long))}).
			Want(t, http.StatusBadRequest).WantBody(t, `{"message":{"description":["is too long (maximum is 255 characters)"]}}`)

		// Permissions and unknown things.
		s.Do(t, apitest.Request{Method: "POST", Path: schedPath(p.ID, ""), Token: rep.Token, JSON: ok}).Want(t, http.StatusForbidden).
			WantBody(t, `{"message":"403 Forbidden"}`)
		s.Do(t, apitest.Request{Method: "POST", Path: schedPath(p.ID, ""), Token: stranger.Token, JSON: ok}).Want(t, http.StatusNotFound).
			WantBody(t, `{"message":"404 Project Not Found"}`)
		s.Get(t, schedPath(p.ID, ""), stranger.Token).Want(t, http.StatusNotFound)
		s.Get(t, schedPath(s.AbsentID(t), ""), owner.Token).Want(t, http.StatusNotFound).WantBody(t, `{"message":"404 Project Not Found"}`)
		for _, m := range []string{"GET", "PUT", "DELETE"} {
			s.Do(t, apitest.Request{Method: m, Path: schedPath(p.ID, fmt.Sprintf("/%d", s.AbsentID(t))), Token: owner.Token, JSON: map[string]any{}}).
				Want(t, http.StatusNotFound).WantBody(t, `{"message":"404 Pipeline Schedule Not Found"}`)
		}
		s.Do(t, apitest.Request{Method: "POST", Path: schedPath(p.ID, fmt.Sprintf("/%d/play", s.AbsentID(t))), Token: owner.Token}).
			Want(t, http.StatusNotFound).WantBody(t, `{"message":"404 Pipeline Schedule Not Found"}`)
		s.Get(t, schedPath(p.ID, "/abc"), owner.Token).Want(t, http.StatusNotFound)
		s.Get(t, schedPath(p.ID, ""), "").Want(t, http.StatusUnauthorized)

		// A schedule of another project is not found through this one.
		other := newCIProject(t, s, owner, "other", map[string]string{".gitlab-ci.yml": schedCI})
		var sc struct{ ID int64 }
		s.Do(t, apitest.Request{Method: "POST", Path: schedPath(other.ID, ""), Token: owner.Token, JSON: ok}).Want(t, http.StatusCreated).JSON(t, &sc)
		s.Get(t, schedPath(p.ID, fmt.Sprintf("/%d", sc.ID)), owner.Token).Want(t, http.StatusNotFound)
		// An update is checked as a whole.
		s.Do(t, apitest.Request{Method: "PUT", Path: schedPath(other.ID, fmt.Sprintf("/%d", sc.ID)), Token: owner.Token,
			JSON: map[string]any{"cron": "0 1 * *", "cron_timezone": "Nowhere"}}).Want(t, http.StatusBadRequest).
			WantBody(t, `{"message":{"cron":["syntax is invalid"],"cron_timezone":["syntax is invalid"]}}`)
	})
}

func TestPipelineSchedules_play(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		owner, dev, rep := s.NewUser(t, "owner"), s.NewUser(t, "dev"), s.NewUser(t, "rep")
		p := newCIProject(t, s, owner, "play", map[string]string{".gitlab-ci.yml": schedCI})
		p.commit(t, "feature", map[string]string{"feature.txt": "x"})
		capiAddMember(t, s, owner.Token, p.ID, dev.ID, 30)
		capiAddMember(t, s, owner.Token, p.ID, rep.ID, 20)
		var sc struct{ ID int64 }
		s.Do(t, apitest.Request{Method: "POST", Path: schedPath(p.ID, ""), Token: dev.Token,
			JSON: map[string]any{"description": "feature", "ref": "feature", "cron": "0 0 1 1 *"}}).Want(t, http.StatusCreated).JSON(t, &sc)
		s.Do(t, apitest.Request{Method: "POST", Path: schedPath(p.ID, fmt.Sprintf("/%d/variables", sc.ID)), Token: dev.Token,
			JSON: map[string]any{"key": "SCHED_VAR", "value": "from the schedule"}}).Want(t, http.StatusCreated)

		s.Do(t, apitest.Request{Method: "POST", Path: schedPath(p.ID, fmt.Sprintf("/%d/play", sc.ID)), Token: rep.Token}).Want(t, http.StatusForbidden)
		resp, err := s.Client(t, dev.Token).PipelineSchedules.RunPipelineSchedule(p.ID, sc.ID)
		if err != nil || resp.StatusCode != http.StatusCreated {
			t.Fatalf("play: %v %v", resp, err)
		}
		s.Do(t, apitest.Request{Method: "POST", Path: schedPath(p.ID, fmt.Sprintf("/%d/play", sc.ID)), Token: owner.Token}).
			Want(t, http.StatusCreated).WantBody(t, `{"message":"201 Created"}`)
		var pls []pipelineJSON
		eventually(t, "two played pipelines", func() bool {
			pls = schedPipelines(t, s, dev.Token, p.ID, sc.ID)
			return len(pls) == 2
		})
		users := []string{}
		for _, pl := range pls {
			if pl.Source != "schedule" || pl.Ref != "feature" {
				t.Errorf("pipeline %+v; want source schedule on feature", pl)
			}
			full := p.pipeline(t, pl.ID)
			users = append(users, full.User.Username)
			var vars []map[string]any
			s.Get(t, fmt.Sprintf("/projects/%d/pipelines/%d/variables", p.ID, pl.ID), owner.Token).Want(t, http.StatusOK).JSON(t, &vars)
			if len(vars) != 1 || vars[0]["key"] != "SCHED_VAR" || vars[0]["value"] != "from the schedule" || vars[0]["variable_type"] != "env_var" {
				t.Errorf("pipeline variables %v", vars)
			}
		}
		sort.Strings(users)
		if fmt.Sprint(users) != "[dev owner]" {
			t.Errorf("played as %v; want each player", users)
		}
		// The pipelines list: order and paging as GitLab's.
		desc := s.Get(t, schedPath(p.ID, fmt.Sprintf("/%d/pipelines?sort=desc", sc.ID)), dev.Token).Want(t, http.StatusOK).Array(t)
		if len(desc) != 2 || desc[0]["id"].(float64) < desc[1]["id"].(float64) {
			t.Errorf("sort=desc %v", desc)
		}
		page := s.Get(t, schedPath(p.ID, fmt.Sprintf("/%d/pipelines?per_page=1&page=2", sc.ID)), dev.Token).Want(t, http.StatusOK)
		if arr := page.Array(t); len(arr) != 1 || arr[0]["id"] != desc[0]["id"] || page.Header.Get("X-Total") != "2" {
			t.Errorf("page 2 %v (total %s)", arr, page.Header.Get("X-Total"))
		}
		// The schedule shows its last pipeline; the next run did not move.
		m := schedGet(t, s, dev.Token, p.ID, sc.ID)
		last, _ := m["last_pipeline"].(map[string]any)
		capiWantFields(t, "last_pipeline", last, map[string]any{"id": desc[0]["id"], "ref": "feature", "status": "pending", "source": "schedule"})
		if !time.Now().Before(mustTime(t, m["next_run_at"])) {
			t.Errorf("next_run_at %v moved", m["next_run_at"])
		}
		// A protected branch the player may not push to: 403.
		s.Do(t, apitest.Request{Method: "POST", Path: fmt.Sprintf("/projects/%d/protected_branches", p.ID), Token: owner.Token,
			JSON: map[string]any{"name": "feature", "push_access_level": 40, "merge_access_level": 40}}).Want(t, http.StatusCreated)
		s.Do(t, apitest.Request{Method: "POST", Path: schedPath(p.ID, fmt.Sprintf("/%d/play", sc.ID)), Token: dev.Token}).Want(t, http.StatusForbidden)
		// Nor may they change it, its variables, or make another for it
		// (GitLab's policy prevents them on a protected ref).
		s.Do(t, apitest.Request{Method: "PUT", Path: schedPath(p.ID, fmt.Sprintf("/%d", sc.ID)), Token: dev.Token,
			JSON: map[string]any{"description": "x"}}).Want(t, http.StatusForbidden)
		s.Do(t, apitest.Request{Method: "POST", Path: schedPath(p.ID, fmt.Sprintf("/%d/variables", sc.ID)), Token: dev.Token,
			JSON: map[string]any{"key": "K", "value": "v"}}).Want(t, http.StatusForbidden)
		s.Do(t, apitest.Request{Method: "POST", Path: schedPath(p.ID, ""), Token: dev.Token,
			JSON: map[string]any{"description": "d", "ref": "refs/heads/feature", "cron": "@daily"}}).Want(t, http.StatusBadRequest).
			WantBody(t, `{"message":{"base":["The current user is not authorized to create the pipeline schedule"]}}`)
		// A schedule of the developer's own on an open branch may not be
		// moved to the protected one.
		open := schedCreate(t, s, dev.Token, p.ID, map[string]any{"description": "d", "ref": "main2", "cron": "@daily"})
		s.Do(t, apitest.Request{Method: "PUT", Path: schedPath(p.ID, fmt.Sprintf("/%d", open)), Token: dev.Token,
			JSON: map[string]any{"ref": "feature"}}).Want(t, http.StatusBadRequest).
			WantBody(t, `{"message":{"base":["The current user is not authorized to update the pipeline schedule"]}}`)
		// The owner (a maintainer of the project) still plays it.
		s.Do(t, apitest.Request{Method: "POST", Path: schedPath(p.ID, fmt.Sprintf("/%d/play", sc.ID)), Token: owner.Token}).Want(t, http.StatusCreated)
	})
}

func mustTime(t *testing.T, v any) time.Time {
	t.Helper()
	s, _ := v.(string)
	at, err := time.Parse(time.RFC3339, s)
	if err != nil {
		t.Fatalf("time %v: %v", v, err)
	}
	return at
}

// schedCreate makes a schedule through the API and returns its id.
func schedCreate(t *testing.T, s *apitest.Server, token string, projectID int64, body map[string]any) int64 {
	t.Helper()
	var sc struct{ ID int64 }
	s.Do(t, apitest.Request{Method: "POST", Path: schedPath(projectID, ""), Token: token, JSON: body}).Want(t, http.StatusCreated).JSON(t, &sc)
	return sc.ID
}

// TestPipelineSchedules_clock: the scheduler follows the process's clock.
// Moved past a schedule's next run, one pipeline runs (source schedule, as
// the owner, with the schedule's variables) and next_run_at moves to the
// next time; moved past several runs (downtime), one more runs, not one
// per missed time. An inactive schedule does not run; a schedule whose
// owner was blocked or lost the developer role does not run either (no
// pipeline, GitLab's behaviour) and its next run moves on.
func TestPipelineSchedules_clock(t *testing.T) {
	start := time.Date(2031, 4, 1, 10, 0, 30, 0, time.UTC)
	capiClockedEach(t, start, func(t *testing.T, s *apitest.Server, clk *testClock) {
		owner, blocked, demoted := s.NewUser(t, "owner"), s.NewUser(t, "blocked"), s.NewUser(t, "demoted")
		p := newCIProject(t, s, owner, "clock", map[string]string{".gitlab-ci.yml": schedCI})
		p.commit(t, "feature", map[string]string{"f.txt": "f"})
		capiAddMember(t, s, owner.Token, p.ID, blocked.ID, 30)
		capiAddMember(t, s, owner.Token, p.ID, demoted.ID, 30)
		hourly := func(desc, ref string) map[string]any {
			return map[string]any{"description": desc, "ref": ref, "cron": "0 * * * *"}
		}
		// Made first, so the scheduler takes them before the owner's (due
		// at the same time, it takes them by id).
		byBlocked := schedCreate(t, s, blocked.Token, p.ID, hourly("blocked", "feature"))
		byDemoted := schedCreate(t, s, demoted.Token, p.ID, hourly("demoted", "feature"))
		inactive := schedCreate(t, s, owner.Token, p.ID, map[string]any{"description": "off", "ref": "main", "cron": "0 * * * *", "active": false})
		id := schedCreate(t, s, owner.Token, p.ID, hourly("hourly", "main"))
		s.Do(t, apitest.Request{Method: "POST", Path: schedPath(p.ID, fmt.Sprintf("/%d/variables", id)), Token: owner.Token,
			JSON: map[string]any{"key": "SCHED_VAR", "value": "v1"}}).Want(t, http.StatusCreated)
		if got := schedGet(t, s, owner.Token, p.ID, id)["next_run_at"]; got != "2031-04-01T11:00:00.000Z" {
			t.Fatalf("next_run_at %v; want 11:00", got)
		}
		s.Do(t, apitest.Request{Method: "POST", Path: fmt.Sprintf("/users/%d/block", blocked.ID), Token: s.RootToken}).Want(t, http.StatusCreated)
		s.Do(t, apitest.Request{Method: "PUT", Path: fmt.Sprintf("/projects/%d/members/%d", p.ID, demoted.ID), Token: owner.Token,
			JSON: map[string]any{"access_level": 20}}).Want(t, http.StatusOK)

		// Nothing is due yet: nothing runs.
		s.App.Queue.Wake()
		if n := len(schedPipelines(t, s, owner.Token, p.ID, id)); n != 0 {
			t.Fatalf("%d pipelines before the time", n)
		}

		clk.Set(time.Date(2031, 4, 1, 11, 0, 30, 0, time.UTC))
		s.App.Queue.Wake()
		var pls []pipelineJSON
		eventuallyFor(t, 30*time.Second, "the 11:00 pipeline", func() bool {
			pls = schedPipelines(t, s, owner.Token, p.ID, id)
			return len(pls) > 0
		})
		if len(pls) != 1 || pls[0].Source != "schedule" || pls[0].Ref != "main" {
			t.Fatalf("pipelines %+v; want one from the schedule", pls)
		}
		if pl := p.pipeline(t, pls[0].ID); pl.User == nil || pl.User.Username != "owner" {
			t.Errorf("pipeline user %+v; want the owner", pl.User)
		}
		var vars []map[string]any
		s.Get(t, fmt.Sprintf("/projects/%d/pipelines/%d/variables", p.ID, pls[0].ID), owner.Token).Want(t, http.StatusOK).JSON(t, &vars)
		if len(vars) != 1 || vars[0]["value"] != "v1" {
			t.Errorf("pipeline variables %v", vars)
		}
		m := schedGet(t, s, owner.Token, p.ID, id)
		if m["next_run_at"] != "2031-04-01T12:00:00.000Z" {
			t.Errorf("next_run_at %v; want 12:00", m["next_run_at"])
		}
		if last, _ := m["last_pipeline"].(map[string]any); last == nil || last["id"] != float64(pls[0].ID) {
			t.Errorf("last_pipeline %v", m["last_pipeline"])
		}
		// The owner's schedule was taken after the other two, so their runs
		// were decided: no pipeline, and their next runs moved on.
		for _, other := range []int64{byBlocked, byDemoted} {
			if n := len(schedPipelines(t, s, owner.Token, p.ID, other)); n != 0 {
				t.Errorf("schedule %d of an owner without access ran %d pipelines", other, n)
			}
			o := schedGet(t, s, owner.Token, p.ID, other)
			if o["next_run_at"] != "2031-04-01T12:00:00.000Z" || o["active"] != true {
				t.Errorf("schedule %d of an owner without access: next_run_at %v, active %v", other, o["next_run_at"], o["active"])
			}
		}
		o := schedGet(t, s, owner.Token, p.ID, inactive)
		if n := len(schedPipelines(t, s, owner.Token, p.ID, inactive)); n != 0 || o["next_run_at"] != "2031-04-01T11:00:00.000Z" {
			t.Errorf("inactive schedule: %d pipelines, next_run_at %v", n, o["next_run_at"])
		}

		// Four hours and a half later (runs missed at 12, 13, 14 and 15):
		// one pipeline, and the next run is 16:00.
		clk.Set(time.Date(2031, 4, 1, 15, 30, 0, 0, time.UTC))
		s.App.Queue.Wake()
		eventuallyFor(t, 30*time.Second, "the catch-up pipeline", func() bool {
			return schedGet(t, s, owner.Token, p.ID, id)["next_run_at"] == "2031-04-01T16:00:00.000Z" &&
				len(schedPipelines(t, s, owner.Token, p.ID, id)) >= 2
		})
		// Another pass at the same time claims nothing more.
		if n, err := s.App.Schedules.RunDue(ctx(t)); err != nil || n != 0 {
			t.Errorf("a second pass claimed %d (%v)", n, err)
		}
		if n := len(schedPipelines(t, s, owner.Token, p.ID, id)); n != 2 {
			t.Errorf("%d pipelines after the downtime; want 2 (one catch-up)", n)
		}
	})
}

// TestPipelineSchedules_processesSharePostgres: two Quarry processes on
// one PostgreSQL database with one clock; when the schedules fall due,
// both schedulers run (their durable passes and extra passes called on
// both at once), and every schedule runs exactly one pipeline.
func TestPipelineSchedules_processesSharePostgres(t *testing.T) {
	t.Parallel()
	onSharedPostgres(t, func(t *testing.T, target storetest.Target, dir string) {
		clk := &testClock{now: time.Date(2031, 6, 1, 8, 0, 10, 0, time.UTC)}
		withClock := func(c *config) { c.Clock = clk.Now }
		a := apitest.StartIn(t, target, dir, withClock)
		b := apitest.StartIn(t, target, dir, withClock)
		owner := a.NewUser(t, "owner")
		p := newCIProject(t, a, owner, "shared", map[string]string{".gitlab-ci.yml": schedCI})
		const n = 6
		var ids []int64
		for i := 0; i < n; i++ {
			ids = append(ids, schedCreate(t, a, owner.Token, p.ID, map[string]any{"description": fmt.Sprint("s", i), "ref": "main", "cron": "*/5 * * * *"}))
		}
		clk.Set(time.Date(2031, 6, 1, 8, 5, 30, 0, time.UTC))
		a.App.Queue.Wake()
		b.App.Queue.Wake()
		var wg sync.WaitGroup
		for _, s := range []*apitest.Server{a, b, a, b} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if _, err := s.App.Schedules.RunDue(ctx(t)); err != nil {
					t.Errorf("pass: %v", err)
				}
			}()
		}
		wg.Wait()
		eventuallyFor(t, 30*time.Second, "every schedule ran", func() bool {
			for _, id := range ids {
				if len(schedPipelines(t, b, owner.Token, p.ID, id)) == 0 {
					return false
				}
			}
			return true
		})
		// Both processes pass once more at this time: nothing is due.
		for _, s := range []*apitest.Server{a, b} {
			if c, err := s.App.Schedules.RunDue(ctx(t)); err != nil || c != 0 {
				t.Errorf("later pass claimed %d (%v)", c, err)
			}
		}
		for _, id := range ids {
			if got := len(schedPipelines(t, a, owner.Token, p.ID, id)); got != 1 {
				t.Errorf("schedule %d ran %d pipelines; want 1", id, got)
			}
			if m := schedGet(t, a, owner.Token, p.ID, id); m["next_run_at"] != "2031-06-01T08:10:00.000Z" {
				t.Errorf("schedule %d next_run_at %v", id, m["next_run_at"])
			}
		}
		if got := len(p.pipelines(t, "source=schedule&per_page=100")); got != n {
			t.Errorf("%d schedule pipelines in the project; want %d", got, n)
		}
	})
}

// TestPipelineSchedules_variablesSealed: a schedule variable's value is
// not in the database file or dump (sealed as every CI secret), and
// reads back whole.
func TestPipelineSchedules_variablesSealed(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		owner := s.NewUser(t, "owner")
		p := newCIProject(t, s, owner, "sealed", map[string]string{".gitlab-ci.yml": schedCI})
		id := schedCreate(t, s, owner.Token, p.ID, map[string]any{"description": "d", "ref": "main", "cron": "@daily"})
		const value = "schedule-secret-4f1c9e"
		s.Do(t, apitest.Request{Method: "POST", Path: schedPath(p.ID, fmt.Sprintf("/%d/variables", id)), Token: owner.Token,
			JSON: map[string]any{"key": "SCHEDULE_SECRET_KEY", "value": value}}).Want(t, http.StatusCreated)
		vars, _ := schedGet(t, s, owner.Token, p.ID, id)["variables"].([]any)
		if len(vars) != 1 || vars[0].(map[string]any)["value"] != value {
			t.Fatalf("variables %v", vars)
		}
		dump := databaseBytes(t, s)
		if !strings.Contains(string(dump), "SCHEDULE_SECRET_KEY") {
			t.Fatalf("the dump (%d bytes) lacks the variable's key", len(dump))
		}
		if strings.Contains(string(dump), value) {
			t.Errorf("the database shows the schedule variable's value in plain text")
		}
	})
}
