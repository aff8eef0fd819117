package e2e

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"quarry/internal/apitest"
)

func TestCore_errorShapesAndHeaders(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		r := s.Get(t, "/no/such/route", s.RootToken).Want(t, http.StatusNotFound).WantBody(t, `{"error":"404 Not Found"}`)
		if got := r.Header.Get("Content-Type"); got != "application/json" {
			t.Errorf("content type %q", got)
		}
		if id := r.Header.Get("X-Request-Id"); len(id) != 26 {
			t.Errorf("request id %q", id)
		}
		r = s.Do(t, apitest.Request{Method: "PATCH", Path: "/users", Token: s.RootToken}).Want(t, http.StatusMethodNotAllowed)
		r.WantBody(t, `{"error":"405 Not Allowed"}`)
		if allow := r.Header.Get("Allow"); !strings.Contains(allow, "GET") || !strings.Contains(allow, "POST") {
			t.Errorf("Allow %q", allow)
		}
		// An incoming request id is kept.
		r = s.Do(t, apitest.Request{Path: "/version", Token: s.RootToken, Header: map[string]string{"X-Request-Id": "abc-123"}}).Want(t, 200)
		if got := r.Header.Get("X-Request-Id"); got != "abc-123" {
			t.Errorf("request id %q; want the caller's", got)
		}
		s.Get(t, "/api/v3/user", "").Want(t, http.StatusGone)
	})
}

func TestCore_version(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		s.Get(t, "/version", "").Want(t, http.StatusUnauthorized).WantBody(t, `{"message":"401 Unauthorized"}`)
		v, _, err := s.Root(t).Version.GetVersion()
		if err != nil {
			t.Fatal(err)
		}
		if v.Version == "" || v.Revision == "" {
			t.Errorf("version %+v", v)
		}
		u := s.NewUser(t, "reader", "read_user")
		s.Get(t, "/version", u.Token).Want(t, http.StatusOK)
	})
}

func TestCore_healthEndpoints(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		r := s.Get(t, "/-/health", "").Want(t, http.StatusOK)
		if string(r.Body) != "Quarry OK" {
			t.Errorf("health body %q", r.Body)
		}
		s.Get(t, "/-/liveness", "").Want(t, http.StatusOK).WantBody(t, `{"status":"ok"}`)
		r = s.Get(t, "/-/readiness?all=1", "").Want(t, http.StatusOK)
		m := r.Object(t)
		if m["status"] != "ok" || m["db_check"] == nil {
			t.Errorf("readiness %s", r.Body)
		}
		s.Get(t, "/users?username=root", "").Want(t, http.StatusOK)
		r = s.Get(t, "/-/metrics", "").Want(t, http.StatusOK)
		body := string(r.Body)
		if !strings.Contains(body, `quarry_http_requests_total{code="200",method="GET",route="GET /api/v4/users"}`) {
			t.Errorf("metrics lack the users route:\n%s", grep(body, "quarry_http_requests_total"))
		}
		if strings.Contains(body, "username=root") {
			t.Error("metrics label raw paths")
		}
	})
}

func grep(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// Parameters arrive as query, form, multipart or JSON, with Grape's
// booleans and arrays.
func TestCore_parameterForms(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		u := s.NewUser(t, "forms")
		path := "/users/" + itoa(u.ID)
		s.Do(t, apitest.Request{Method: "PUT", Path: path, Token: s.RootToken, Form: url.Values{"bio": {"from a form"}, "external": {"1"}}}).Want(t, 200)
		s.Do(t, apitest.Request{Method: "PUT", Path: path + "?location=from+the+query", Token: s.RootToken}).Want(t, 200)
		s.Do(t, apitest.Request{Method: "PUT", Path: path, Token: s.RootToken, Multipart: map[string]string{"organization": "multipart", "private_profile": "yes"}}).Want(t, 200)
		r := s.Do(t, apitest.Request{Method: "PUT", Path: path, Token: s.RootToken, JSON: map[string]any{"job_title": "json", "can_create_group": false}}).Want(t, 200)
		m := r.Object(t)
		for k, want := range map[string]any{"bio": "from a form", "external": true, "location": "from the query",
			"organization": "multipart", "private_profile": true, "job_title": "json", "can_create_group": false} {
			if m[k] != want {
				t.Errorf("%s = %v; want %v", k, m[k], want)
			}
		}
		s.Do(t, apitest.Request{Method: "PUT", Path: path, Token: s.RootToken, JSON: map[string]any{"external": "maybe"}}).
			Want(t, 400).WantBody(t, `{"error":"external is invalid"}`)
		s.Do(t, apitest.Request{Method: "PUT", Path: path, Token: s.RootToken, JSON: map[string]any{"projects_limit": "many"}}).
			Want(t, 400).WantBody(t, `{"error":"projects_limit is invalid"}`)
		s.Do(t, apitest.Request{Method: "PUT", Path: path, Token: s.RootToken, Header: map[string]string{"Content-Type": "application/json"}}).Want(t, 200)
		bad := s.Do(t, apitest.Request{Method: "POST", Path: "/users", Token: s.RootToken, Form: url.Values{}, Header: map[string]string{"Content-Type": "application/json"}})
		if bad.Status != 400 {
			t.Errorf("status %d", bad.Status)
		}
	})
}
