package e2e

import (
	"net/http"
	"testing"

	gitlab "gitlab.com/gitlab-org/api/client-go"

	"quarry/internal/apitest"
	"quarry/internal/model"
	"quarry/internal/protectedenvs"
)

// The protected environments API with the official client, and the
// service's two questions (Protected, MayDeploy) on what it stored.
func TestProtectedEnvironments_API(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		owner := s.NewUser(t, "owner")
		dev := s.NewUser(t, "dev")
		deployer := s.NewUser(t, "deployer")
		reporter := s.NewUser(t, "reporter")
		inGroup := s.NewUser(t, "ingroup")
		var p, g struct{ ID int64 }
		s.Do(t, apitest.Request{Method: "POST", Path: "/projects", Token: owner.Token, JSON: map[string]any{"name": "envs"}}).Want(t, 201).JSON(t, &p)
		s.Do(t, apitest.Request{Method: "POST", Path: "/groups", Token: owner.Token, JSON: map[string]any{"name": "ops", "path": "ops"}}).Want(t, 201).JSON(t, &g)
		s.Do(t, apitest.Request{Method: "POST", Path: "/groups/" + itoa(g.ID) + "/members", Token: owner.Token, JSON: map[string]any{"user_id": inGroup.ID, "access_level": 10}}).Want(t, 201)
		for id, lvl := range map[int64]int{dev.ID: 30, deployer.ID: 30, reporter.ID: 20} {
			s.Do(t, apitest.Request{Method: "POST", Path: "/projects/" + itoa(p.ID) + "/members", Token: owner.Token, JSON: map[string]any{"user_id": id, "access_level": lvl}}).Want(t, 201)
		}
		c := s.Client(t, owner.Token).ProtectedEnvironments

		// Protect "production" (no such environment exists: the name is
		// protected ahead of it).
		pe, _, err := c.ProtectRepositoryEnvironments(p.ID, &gitlab.ProtectRepositoryEnvironmentsOptions{
			Name: gitlab.Ptr("production"),
			DeployAccessLevels: &[]*gitlab.EnvironmentAccessOptions{
				{AccessLevel: gitlab.Ptr(gitlab.MaintainerPermissions)},
				{UserID: gitlab.Ptr(deployer.ID)},
				{GroupID: gitlab.Ptr(g.ID), GroupInheritanceType: gitlab.Ptr(int64(1))},
			},
			RequiredApprovalCount: gitlab.Ptr(int64(1)),
			ApprovalRules:         &[]*gitlab.EnvironmentApprovalRuleOptions{{AccessLevel: gitlab.Ptr(gitlab.MaintainerPermissions), RequiredApprovalCount: gitlab.Ptr(int64(2))}},
		})
		if err != nil {
			t.Fatal(err)
		}
		if pe.Name != "production" || len(pe.DeployAccessLevels) != 3 || pe.RequiredApprovalCount != 1 || len(pe.ApprovalRules) != 1 {
			t.Fatalf("protected: %+v", pe)
		}
		d := pe.DeployAccessLevels
		if d[0].AccessLevel != gitlab.MaintainerPermissions || d[0].AccessLevelDescription != "Maintainers" || d[0].ID == 0 ||
			d[1].UserID != deployer.ID || d[1].AccessLevelDescription != "Deployer" || d[2].GroupID != g.ID || d[2].AccessLevelDescription != "ops" ||
			d[2].GroupInheritanceType != 1 {
			t.Errorf("deploy access levels: %+v %+v %+v", d[0], d[1], d[2])
		}
		if r := pe.ApprovalRules[0]; r.AccessLevel != gitlab.MaintainerPermissions || r.RequiredApprovalCount != 2 {
			t.Errorf("approval rule: %+v", r)
		}
		// The raw shape: every field GitLab sends, nulls included.
		raw := s.Get(t, "/projects/"+itoa(p.ID)+"/protected_environments/production", owner.Token).Want(t, 200).Object(t)
		first := raw["deploy_access_levels"].([]any)[0].(map[string]any)
		for _, k := range []string{"id", "access_level", "access_level_description", "user_id", "group_id", "group_inheritance_type"} {
			if _, ok := first[k]; !ok {
				t.Errorf("deploy access level without %s: %v", k, first)
			}
		}
		if _, ok := raw["approval_rules"].([]any)[0].(map[string]any)["required_approvals"]; !ok {
			t.Errorf("approval rule without required_approvals: %v", raw["approval_rules"])
		}

		// The service's questions.
		svc := protectedenvs.New(s.App.DB, s.App.Projects)
		proj := model.Project{ID: p.ID}
		cx := ctx(t)
		if ok, err := svc.Protected(cx, p.ID, "production"); err != nil || !ok {
			t.Errorf("Protected(production) = %v, %v", ok, err)
		}
		if ok, err := svc.Protected(cx, p.ID, "staging"); err != nil || ok {
			t.Errorf("Protected(staging) = %v, %v", ok, err)
		}
		for _, tc := range []struct {
			who  string
			id   int64
			env  string
			want bool
		}{
			{"owner (maintainer level)", owner.ID, "production", true},
			{"developer", dev.ID, "production", false},
			{"named user", deployer.ID, "production", true},
			{"group member", inGroup.ID, "production", true},
			{"reporter", reporter.ID, "production", false},
			{"admin", s.RootID(t), "production", true},
			{"nobody", 0, "production", false},
			{"developer, unprotected", dev.ID, "staging", true},
		} {
			if ok, err := svc.MayDeploy(cx, proj, tc.env, tc.id); err != nil || ok != tc.want {
				t.Errorf("MayDeploy(%s, %s) = %v, %v; want %v", tc.who, tc.env, ok, err, tc.want)
			}
		}

		// Update: drop the user grant, add developers, change the count.
		pe, _, err = c.UpdateProtectedEnvironments(p.ID, "production", &gitlab.UpdateProtectedEnvironmentsOptions{
			DeployAccessLevels: &[]*gitlab.UpdateEnvironmentAccessOptions{
				{ID: gitlab.Ptr(d[1].ID), Destroy: gitlab.Ptr(true)},
				{AccessLevel: gitlab.Ptr(gitlab.DeveloperPermissions)},
			},
			RequiredApprovalCount: gitlab.Ptr(int64(0)),
		})
		if err != nil {
			t.Fatal(err)
		}
		if len(pe.DeployAccessLevels) != 3 || pe.RequiredApprovalCount != 0 || pe.DeployAccessLevels[0].ID != d[0].ID {
			t.Errorf("updated: %+v", pe)
		}
		if ok, _ := svc.MayDeploy(cx, proj, "production", dev.ID); !ok {
			t.Error("developer may not deploy after developers were allowed")
		}

		list, resp, err := c.ListProtectedEnvironments(p.ID, nil)
		if err != nil || len(list) != 1 || resp.Header.Get("X-Total") != "1" {
			t.Errorf("list: %v %d", err, len(list))
		}
		// Refusals and bad input.
		base := "/projects/" + itoa(p.ID) + "/protected_environments"
		one := map[string]any{"access_level": 40}
		s.Do(t, apitest.Request{Method: "POST", Path: base, Token: owner.Token, JSON: map[string]any{"deploy_access_levels": []any{one}}}).Want(t, 400).WantBody(t, `{"error":"name is missing"}`)
		s.Do(t, apitest.Request{Method: "POST", Path: base, Token: owner.Token, JSON: map[string]any{"name": "staging"}}).Want(t, 400).WantBody(t, `{"error":"deploy_access_levels is missing"}`)
		s.Do(t, apitest.Request{Method: "POST", Path: base, Token: owner.Token, JSON: map[string]any{"name": "production", "deploy_access_levels": []any{one}}}).Want(t, 422).
			WantBody(t, `{"message":["Name has already been taken"]}`)
		s.Do(t, apitest.Request{Method: "POST", Path: base, Token: owner.Token, JSON: map[string]any{"name": "staging", "deploy_access_levels": []any{}}}).Want(t, 422)
		s.Do(t, apitest.Request{Method: "POST", Path: base, Token: owner.Token, JSON: map[string]any{"name": "staging", "deploy_access_levels": []any{map[string]any{"access_level": 35}}}}).Want(t, 422)
		s.Do(t, apitest.Request{Method: "POST", Path: base, Token: owner.Token, JSON: map[string]any{"name": "staging", "deploy_access_levels": []any{map[string]any{"access_level": 40, "user_id": dev.ID}}}}).Want(t, 422)
		s.Do(t, apitest.Request{Method: "POST", Path: base, Token: owner.Token, JSON: map[string]any{"name": "staging", "deploy_access_levels": []any{map[string]any{"user_id": s.AbsentID(t)}}}}).Want(t, 422)
		s.Do(t, apitest.Request{Method: "POST", Path: base, Token: owner.Token, JSON: map[string]any{"name": "staging", "deploy_access_levels": []any{one}, "required_approval_count": -1}}).Want(t, 422)
		s.Do(t, apitest.Request{Method: "POST", Path: base, Token: owner.Token, JSON: map[string]any{"name": "staging", "deploy_access_levels": "x"}}).Want(t, 400)
		s.Get(t, base+"/nope", owner.Token).Want(t, 404).WantBody(t, `{"message":"404 Not found"}`)
		s.Do(t, apitest.Request{Method: "PUT", Path: base + "/nope", Token: owner.Token, JSON: map[string]any{"required_approval_count": 1}}).Want(t, 404)
		_, resp, err = s.Client(t, dev.Token).ProtectedEnvironments.ProtectRepositoryEnvironments(p.ID, &gitlab.ProtectRepositoryEnvironmentsOptions{
			Name: gitlab.Ptr("dev-env"), DeployAccessLevels: &[]*gitlab.EnvironmentAccessOptions{{AccessLevel: gitlab.Ptr(gitlab.DeveloperPermissions)}}})
		if resp == nil || resp.StatusCode != http.StatusForbidden {
			t.Errorf("developer protects: %v", err)
		}
		s.Get(t, base, dev.Token).Want(t, 403)
		s.Get(t, base, s.NewUser(t, "outsider").Token).Want(t, 404)
		// Unprotect.
		s.Do(t, apitest.Request{Method: "DELETE", Path: base + "/production", Token: dev.Token}).Want(t, 403)
		if _, err := c.UnprotectEnvironment(p.ID, "production"); err != nil {
			t.Fatal(err)
		}
		s.Do(t, apitest.Request{Method: "DELETE", Path: base + "/production", Token: owner.Token}).Want(t, 404)
		if ok, err := svc.MayDeploy(cx, proj, "production", dev.ID); err != nil || !ok {
			t.Errorf("after unprotect MayDeploy = %v, %v", ok, err)
		}
	})
}
