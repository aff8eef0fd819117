package e2e

import (
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	gitlab "gitlab.com/gitlab-org/api/client-go"

	"quarry/internal/apitest"
	"quarry/internal/model"
)

// settingSamples are valid new values for the attributes a generic
// change (flip a bool, add one to a number, a word for a string) would
// make invalid.
var settingSamples = map[string]any{
	"archive_builds_in_human_readable":         "3 days",
	"default_artifacts_expire_in":              "2 days",
	"default_branch_name":                      "trunk",
	"default_ci_config_path":                   "ci/pipeline.yml",
	"personal_access_token_prefix":             "qp-",
	"enabled_git_access_protocol":              "http",
	"import_sources":                           []any{"git", "gitlab_project"},
	"restricted_visibility_levels":             []any{"internal"},
	"default_group_visibility":                 "internal",
	"default_project_visibility":               "internal",
	"default_snippet_visibility":               "public",
	"polling_interval_multiplier":              "2.5",
	"external_authorization_service_timeout":   1.5,
	"elasticsearch_url":                        []any{"http://search.example:9200"},
	"after_sign_out_path":                      "https://example.com/bye",
	"home_page_url":                            "https://example.com/",
	"asset_proxy_url":                          "https://proxy.example/",
	"plantuml_url":                             "https://plantuml.example/",
	"kroki_url":                                "https://kroki.example/",
	"external_authorization_service_url":       "https://authz.example/",
	"external_pipeline_validation_service_url": "https://validate.example/",
	"rsa_key_restriction":                      2048,
	"dsa_key_restriction":                      -1,
	"ecdsa_key_restriction":                    384,
	"ed25519_key_restriction":                  256,
	"ecdsa_sk_key_restriction":                 256,
	"ed25519_sk_key_restriction":               256,
	"eks_account_id":                           "123456789012",
	"eks_access_key_id":                        "AKIAABCDEFGHIJKLMNOP",
	"max_personal_access_token_lifetime":       30,
	"first_day_of_week":                        6,
}

// settingsLeftAlone are attributes the generic round trip skips: they
// switch a feature on that needs companions (tested with them below) or
// name configured storages.
var settingsLeftAlone = map[string]bool{
	"akismet_enabled": true, "asset_proxy_enabled": true, "domain_denylist_enabled": true, "eks_integration_enabled": true,
	"enforce_terms": true, "external_authorization_service_enabled": true, "plantuml_enabled": true, "kroki_enabled": true,
	"require_two_factor_authentication": true, "repository_storages": true, "repository_storages_weighted": true,
	"email_restrictions_enabled": true, "admin_mode": true, "enabled_git_access_protocol": true,
	"restricted_visibility_levels": true, "allow_runner_registration_token": true, "external_auth_client_cert": true,
}

func TestSettings_roundTrip(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		first := s.Get(t, "/application/settings", s.RootToken).Want(t, http.StatusOK).Object(t)
		if first["id"] != float64(1) || first["created_at"] == nil || first["updated_at"] == nil {
			t.Fatalf("id %v, created_at %v, updated_at %v", first["id"], first["created_at"], first["updated_at"])
		}
		for _, a := range model.SettingAttributes() {
			_, shown := first[a.Name]
			if a.Secret == shown {
				t.Errorf("%s: shown %v; secret %v", a.Name, shown, a.Secret)
			}
		}
		for alias, to := range map[string]string{"admin_notification_email": "abuse_notification_email", "asset_proxy_whitelist": "asset_proxy_allowlist",
			"signin_enabled": "password_authentication_enabled_for_web", "password_authentication_enabled": "password_authentication_enabled_for_web",
			"allow_local_requests_from_hooks_and_services": "allow_local_requests_from_web_hooks_and_services"} {
			if !jsonEqual(first[alias], first[to]) {
				t.Errorf("%s = %v; want %s's %v", alias, first[alias], to, first[to])
			}
		}
		// GitLab's defaults, with their JSON types.
		for name, want := range map[string]any{"default_projects_limit": 100000.0, "default_branch_protection": 2.0, "signup_enabled": true,
			"default_project_visibility": "private", "restricted_visibility_levels": []any{}, "domain_allowlist": nil, "max_attachment_size": 10.0,
			"max_import_size": 0.0, "session_expire_delay": 10080.0, "snippet_size_limit": 52428800.0, "issues_create_limit": 300.0,
			"raw_blob_request_limit": 300.0, "wiki_page_max_content_bytes": 52428800.0, "polling_interval_multiplier": "1.0",
			"deletion_adjourned_period": 7.0, "diff_max_patch_bytes": 204800.0, "default_artifacts_expire_in": "30 days",
			"external_authorization_service_timeout": 0.5, "housekeeping_bitmaps_enabled": true, "repository_storages_weighted": map[string]any{"default": 100.0}} {
			if !jsonEqual(first[name], want) {
				t.Errorf("default %s = %#v; want %#v", name, first[name], want)
			}
		}
		// Every attribute changes, one request each, and reads back with
		// its type.
		for _, a := range model.SettingAttributes() {
			if a.Secret || settingsLeftAlone[a.Name] {
				continue
			}
			next := settingSample(t, a.Name, first[a.Name])
			got := s.Do(t, apitest.Request{Method: "PUT", Path: "/application/settings", Token: s.RootToken,
				JSON: map[string]any{a.Name: next}})
			if got.Status != http.StatusOK {
				t.Errorf("PUT %s=%v: %d %s", a.Name, next, got.Status, got.Body)
				continue
			}
			want := next
			if a.Name == "archive_builds_in_human_readable" {
				want = "3 days"
			}
			if v := got.Object(t)[a.Name]; !jsonEqual(v, want) {
				t.Errorf("PUT %s=%#v answered %#v", a.Name, next, v)
			}
			if v := s.Get(t, "/application/settings", s.RootToken).Object(t)[a.Name]; !jsonEqual(v, want) {
				t.Errorf("after PUT %s=%#v, GET shows %#v", a.Name, next, v)
			}
		}
		// Query parameters and legacy names work too.
		s.Do(t, apitest.Request{Method: "PUT", Path: "/application/settings?default_projects_limit=7&domain_whitelist=a.example,b.example", Token: s.RootToken}).
			Want(t, http.StatusOK)
		got := s.Get(t, "/application/settings", s.RootToken).Object(t)
		if !jsonEqual(got["default_projects_limit"], 7) || !jsonEqual(got["domain_allowlist"], []any{"a.example", "b.example"}) {
			t.Errorf("query update: limit %v, allowlist %v", got["default_projects_limit"], got["domain_allowlist"])
		}
		s.Do(t, apitest.Request{Method: "PUT", Path: "/application/settings", Token: s.RootToken,
			Form: map[string][]string{"admin_notification_email": {"abuse@example.com"}, "repository_storages_weighted[default]": {"80"}}}).Want(t, http.StatusOK)
		got = s.Get(t, "/application/settings", s.RootToken).Object(t)
		if got["abuse_notification_email"] != "abuse@example.com" || got["admin_notification_email"] != "abuse@example.com" ||
			!jsonEqual(got["repository_storages_weighted"], map[string]any{"default": 80}) {
			t.Errorf("form update: %v %v %v", got["abuse_notification_email"], got["admin_notification_email"], got["repository_storages_weighted"])
		}
		// The official Go client decodes the whole object, and python-gitlab's
		// own test (default_projects_limit 42) passes.
		c := s.Root(t)
		if _, _, err := c.Settings.UpdateSettings(&gitlab.UpdateSettingsOptions{DefaultProjectsLimit: gitlab.Ptr(int64(42))}); err != nil {
			t.Fatal(err)
		}
		st, _, err := c.Settings.GetSettings()
		if err != nil || st.DefaultProjectsLimit != 42 || st.PollingIntervalMultiplier != 2.5 || st.ID != 1 || st.CreatedAt == nil {
			t.Errorf("Go client: %+v, %v", st, err)
		}
	})
}

// settingSample is a valid value for name other than its current one.
func settingSample(t *testing.T, name string, cur any) any {
	if v, ok := settingSamples[name]; ok {
		return v
	}
	switch v := cur.(type) {
	case bool:
		return !v
	case float64:
		return v + 1
	case nil:
		if strings.HasSuffix(name, "_id") || strings.HasSuffix(name, "_timeout") || strings.HasSuffix(name, "_lifetime") {
			return 5.0
		}
		if name == "domain_allowlist" {
			return []any{"example.com", "*.example.org"}
		}
		return "set " + name
	case string:
		return v + "-changed"
	case []any:
		if strings.HasSuffix(name, "_ids") {
			return []any{3.0, 4.0}
		}
		return []any{"one.example", "two.example"}
	}
	t.Fatalf("no sample for %s (%T)", name, cur)
	return nil
}

func jsonEqual(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	if bytes.Equal(x, y) {
		return true
	}
	var xa, ya any
	_ = json.Unmarshal(x, &xa)
	_ = json.Unmarshal(y, &ya)
	x, _ = json.Marshal(xa)
	y, _ = json.Marshal(ya)
	return bytes.Equal(x, y)
}

func TestSettings_validation(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		before := s.Get(t, "/application/settings", s.RootToken).Object(t)
		for _, c := range []struct {
			body map[string]any
			want string
		}{
			{map[string]any{"deletion_adjourned_period": 91}, `{"message":{"deletion_adjourned_period":["must be less than or equal to 90"]}}`},
			{map[string]any{"deletion_adjourned_period": -1}, `{"message":{"deletion_adjourned_period":["must be greater than or equal to 0"]}}`},
			{map[string]any{"external_authorization_service_timeout": 11}, `{"message":{"external_authorization_service_timeout":["must be less than or equal to 10"]}}`},
			{map[string]any{"external_authorization_service_timeout": 0}, `{"message":{"external_authorization_service_timeout":["must be greater than or equal to 0.001"]}}`},
			{map[string]any{"diff_max_patch_bytes": 100}, `{"message":{"diff_max_patch_bytes":["must be greater than or equal to 204800"]}}`},
			{map[string]any{"diff_max_files": 5000}, `{"message":{"diff_max_files":["must be less than or equal to 3000"]}}`},
			{map[string]any{"diff_max_lines": 10}, `{"message":{"diff_max_lines":["must be greater than or equal to 50000"]}}`},
			{map[string]any{"first_day_of_week": 3}, `{"message":{"first_day_of_week":["is not included in the list"]}}`},
			{map[string]any{"rsa_key_restriction": 1000}, `{"message":{"rsa_key_restriction":["must be forbidden, allowed, 1024, 2048, 3072, or 4096"]}}`},
			{map[string]any{"ed25519_key_restriction": 512}, `{"message":{"ed25519_key_restriction":["must be forbidden, allowed, or 256"]}}`},
			{map[string]any{"archive_builds_in_human_readable": "2 hours"}, `{"message":{"archive_builds_in_seconds":["must be at least 1 day"]}}`},
			{map[string]any{"default_projects_limit": -1}, `{"message":{"default_projects_limit":["must be greater than or equal to 0"]}}`},
			{map[string]any{"max_attachment_size": 0}, `{"message":{"max_attachment_size":["must be greater than 0"]}}`},
			{map[string]any{"default_branch_protection": 7}, `{"error":"default_branch_protection does not have a valid value"}`},
			{map[string]any{"enabled_git_access_protocol": "ftp"}, `{"error":"enabled_git_access_protocol does not have a valid value"}`},
			{map[string]any{"import_sources": []string{"svn"}}, `{"error":"import_sources does not have a valid value"}`},
			{map[string]any{"default_project_visibility": "secret"}, `{"error":"default_project_visibility does not have a valid value"}`},
			{map[string]any{"restricted_visibility_levels": []string{"hidden"}}, `{"message":{"restricted_visibility_levels":["'hidden' is not a valid visibility level"]}}`},
			{map[string]any{"restricted_visibility_levels": []string{"private"}}, `{"message":{"default_group_visibility":["cannot be set to a restricted visibility level"],"default_project_visibility":["cannot be set to a restricted visibility level"],"default_snippet_visibility":["cannot be set to a restricted visibility level"]}}`},
			{map[string]any{"signup_enabled": "maybe"}, `{"error":"signup_enabled is invalid"}`},
			{map[string]any{"default_projects_limit": "many"}, `{"error":"default_projects_limit is invalid"}`},
			{map[string]any{"akismet_enabled": true}, `{"error":"akismet_api_key is missing"}`},
			{map[string]any{"asset_proxy_enabled": true, "asset_proxy_url": "https://p.example/"}, `{"error":"asset_proxy_secret_key is missing"}`},
			{map[string]any{"domain_denylist_enabled": true}, `{"error":"domain_denylist is missing"}`},
			{map[string]any{"domain_denylist_enabled": true, "domain_denylist": []string{}}, `{"message":{"domain_denylist":["Domain denylist cannot be empty if denylist is enabled."]}}`},
			{map[string]any{"enforce_terms": true, "terms": ""}, `{"message":{"terms":["can't be blank"]}}`},
			{map[string]any{"external_authorization_service_enabled": true}, `{"error":"external_authorization_service_url is missing, external_authorization_service_default_label is missing, external_authorization_service_timeout is missing"}`},
			{map[string]any{"external_auth_client_cert": "-----BEGIN CERTIFICATE-----"}, `{"error":"external_auth_client_key is missing"}`},
			{map[string]any{"external_auth_client_cert": "not a certificate", "external_auth_client_key": "k"}, `{"message":{"external_auth_client_cert":["must be a valid PEM certificate"]}}`},
			{map[string]any{"eks_integration_enabled": true, "eks_account_id": "12", "eks_access_key_id": "AKIAABCDEFGHIJKLMNOP", "eks_secret_access_key": "s"}, `{"message":{"eks_account_id":["must be a 12-digit number"]}}`},
			{map[string]any{"asset_proxy_enabled": true, "asset_proxy_url": "not a url", "asset_proxy_secret_key": "k"}, `{"message":{"asset_proxy_url":["must be a valid URL"]}}`},
			{map[string]any{"personal_access_token_prefix": "bad prefix!"}, `{"message":{"personal_access_token_prefix":["can contain only letters of the Base64 alphabet (RFC4648) with the addition of '@', ':' and '.'"]}}`},
			{map[string]any{"default_artifacts_expire_in": "soon"}, `{"message":{"default_artifacts_expire_in":["is not a correct duration"]}}`},
			{map[string]any{"deactivate_dormant_users_period": 30}, `{"message":{"deactivate_dormant_users_period":["'30' days of inactivity must be greater than or equal to 90"]}}`},
			{map[string]any{"wiki_page_max_content_bytes": 10}, `{"message":{"wiki_page_max_content_bytes":["must be greater than or equal to 1024"]}}`},
			{map[string]any{"default_branch_name": "bad..name"}, `{"message":{"default_branch_name":["is invalid"]}}`},
			{map[string]any{"repository_storages_weighted": map[string]any{"default": 101}}, `{"message":{"repository_storages_weighted_default":["value must be between 0 and 100"]}}`},
			{map[string]any{"repository_storages_weighted": map[string]any{"nowhere": 10}}, `{"message":{"repository_storages_weighted":["can't include: nowhere"]}}`},
			{map[string]any{"repository_storages_weighted": map[string]any{"default": 0}}, `{"message":{"repository_storages_weighted":["must have at least one non-zero weight"]}}`},
			{map[string]any{"email_restrictions_enabled": true, "email_restrictions": "(["}, `{"message":{"email_restrictions":["not valid RE2 syntax: error parsing regexp: missing closing ]: ` + "`[`" + `"]}}`},
			{map[string]any{"unknown_setting": 1}, ""},
		} {
			resp := s.Do(t, apitest.Request{Method: "PUT", Path: "/application/settings", Token: s.RootToken, JSON: c.body})
			if resp.Status != http.StatusBadRequest {
				t.Errorf("PUT %v: %d %s; want 400", c.body, resp.Status, resp.Body)
				continue
			}
			if c.want != "" {
				var got, want any
				_ = json.Unmarshal(resp.Body, &got)
				_ = json.Unmarshal([]byte(c.want), &want)
				if !jsonEqual(got, want) {
					t.Errorf("PUT %v: %s; want %s", c.body, resp.Body, c.want)
				}
			} else if !bytes.Contains(resp.Body, []byte("at least one parameter must be provided")) {
				t.Errorf("PUT %v: %s; want at least one parameter", c.body, resp.Body)
			}
		}
		after := s.Get(t, "/application/settings", s.RootToken).Object(t)
		delete(before, "updated_at")
		delete(after, "updated_at")
		if !jsonEqual(before, after) {
			t.Errorf("refused updates changed the settings")
		}
		if after["updated_at"] != before["updated_at"] {
			t.Errorf("updated_at moved")
		}
		// A non-administrator sees nothing and changes nothing; anonymous
		// callers must sign in.
		alice := s.NewUser(t, "alice")
		s.Get(t, "/application/settings", alice.Token).Want(t, http.StatusForbidden).WantBody(t, `{"message":"403 Forbidden"}`)
		s.Do(t, apitest.Request{Method: "PUT", Path: "/application/settings", Token: alice.Token, JSON: map[string]any{"signup_enabled": false}}).
			Want(t, http.StatusForbidden)
		s.Get(t, "/application/settings", "").Want(t, http.StatusUnauthorized)
	})
}

// Secret attributes are written and kept, but no response shows them and
// the database holds them sealed.
func TestSettings_secretsNeverShown(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		secrets := map[string]string{"akismet_api_key": "akismet-secret-4f1c", "asset_proxy_secret_key": "proxy-secret-93ab",
			"eks_secret_access_key": "eks-secret-77de", "elasticsearch_password": "es-password-11aa",
			"elasticsearch_aws_secret_access_key": "es-aws-secret-55bb", "external_pipeline_validation_service_token": "validation-token-66cc",
			"external_auth_client_key_pass": "key-pass-88dd"}
		body := map[string]any{"akismet_enabled": true, "asset_proxy_enabled": true, "asset_proxy_url": "https://proxy.example/"}
		for k, v := range secrets {
			body[k] = v
		}
		resp := s.Do(t, apitest.Request{Method: "PUT", Path: "/application/settings", Token: s.RootToken, JSON: body}).Want(t, http.StatusOK)
		got := s.Get(t, "/application/settings", s.RootToken).Want(t, http.StatusOK)
		for name, v := range secrets {
			for _, b := range [][]byte{resp.Body, got.Body} {
				if bytes.Contains(b, []byte(v)) || bytes.Contains(b, []byte(`"`+name+`"`)) {
					t.Errorf("%s shown in a response", name)
				}
			}
		}
		if o := got.Object(t); o["akismet_enabled"] != true || o["asset_proxy_enabled"] != true {
			t.Errorf("enabled flags: %v %v", o["akismet_enabled"], o["asset_proxy_enabled"])
		}
		// Kept: enabling needs the key only when the request switches it
		// on, and the stored key still satisfies the model's rule.
		s.Do(t, apitest.Request{Method: "PUT", Path: "/application/settings", Token: s.RootToken, JSON: map[string]any{"signup_enabled": false}}).
			Want(t, http.StatusOK)
		if path := s.SQLitePath(); path != "" && s.Target.DatabaseURL == "" {
			s.Stop()
			for _, f := range []string{path, path + "-wal"} {
				raw, err := os.ReadFile(f)
				if err != nil {
					continue
				}
				for name, v := range secrets {
					if bytes.Contains(raw, []byte(v)) {
						t.Errorf("%s stored in the clear in %s", name, f)
					}
				}
			}
		}
	})
}

// A change made through one Quarry instance reaches another on the same
// PostgreSQL through the store's notifications, long before its cache's
// periodic re-read (30 s).
func TestSettings_seenByOtherInstance(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		if s.Target.DatabaseURL == "" {
			return // one process per SQLite file; the cache is refreshed in-process (TestSettings_roundTrip)
		}
		other := apitest.StartIn(t, s.Target, s.DataDir)
		if v := other.Get(t, "/application/settings", other.RootToken).Object(t)["default_projects_limit"]; v != 100000.0 {
			t.Fatalf("other instance: %v", v)
		}
		start := time.Now()
		s.Do(t, apitest.Request{Method: "PUT", Path: "/application/settings", Token: s.RootToken, JSON: map[string]any{"default_projects_limit": 4242}}).
			Want(t, http.StatusOK)
		deadline := start.Add(3 * time.Second)
		for {
			if v := other.Get(t, "/application/settings", other.RootToken).Object(t)["default_projects_limit"]; v == 4242.0 {
				t.Logf("seen by the other instance after %v", time.Since(start).Round(time.Millisecond))
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("the other instance still shows the old value after %v", time.Since(start))
			}
			time.Sleep(20 * time.Millisecond)
		}
	})
}

// Administrators changing different attributes at once all keep their
// change: an update lost to another is applied again over its result.
func TestSettings_concurrentUpdates(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		changes := map[string]any{"issues_create_limit": 11.0, "notes_create_limit": 12.0, "raw_blob_request_limit": 13.0,
			"terminal_max_session_time": 14.0, "session_expire_delay": 15.0, "local_markdown_version": 16.0,
			"two_factor_grace_period": 17.0, "geo_status_timeout": 18.0}
		var wg sync.WaitGroup
		codes := make(chan int, len(changes))
		for name, v := range changes {
			wg.Add(1)
			go func() {
				defer wg.Done()
				codes <- s.Do(t, apitest.Request{Method: "PUT", Path: "/application/settings", Token: s.RootToken,
					JSON: map[string]any{name: v}}).Status
			}()
		}
		wg.Wait()
		close(codes)
		for c := range codes {
			if c != http.StatusOK {
				t.Errorf("concurrent update answered %d", c)
			}
		}
		got := s.Get(t, "/application/settings", s.RootToken).Object(t)
		for name, v := range changes {
			if got[name] != v {
				t.Errorf("%s = %v; want %v (a concurrent update was lost)", name, got[name], v)
			}
		}
	})
}
