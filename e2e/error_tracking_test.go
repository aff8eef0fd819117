package e2e

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/getsentry/sentry-go"

	"quarry/internal/apitest"
)

// Integrated error tracking as GitLab has it (lib/api/error_tracking/*,
// app/services/error_tracking/collect_error_service.rb): settings and
// client keys for maintainers, a collector a stock Sentry SDK reports to
// with the DSN Quarry hands out, and the errors read back.

// etProject is a private project with integrated error tracking on and
// one client key; it returns the project's id and the key.
func etProject(t *testing.T, s *apitest.Server, name string) (int64, map[string]any) {
	t.Helper()
	p := s.Do(t, apitest.Request{Method: "POST", Path: "/projects", Token: s.RootToken,
		JSON: map[string]any{"name": name, "visibility": "private"}}).Want(t, http.StatusCreated).Object(t)
	id := int64(p["id"].(float64))
	base := "/projects/" + itoa(id) + "/error_tracking"
	s.Do(t, apitest.Request{Method: "PUT", Path: base + "/settings", Token: s.RootToken,
		JSON: map[string]any{"active": true, "integrated": true}}).Want(t, http.StatusOK)
	k := s.Do(t, apitest.Request{Method: "POST", Path: base + "/client_keys", Token: s.RootToken}).Want(t, http.StatusCreated).Object(t)
	return id, k
}

// etErrors lists a project's errors (as root).
func etErrors(t *testing.T, s *apitest.Server, id int64, query string) []map[string]any {
	t.Helper()
	return s.Get(t, "/projects/"+itoa(id)+"/error_tracking/errors"+query, s.RootToken).Want(t, http.StatusOK).Array(t)
}

type quotaError struct{ n int }

func (e *quotaError) Error() string { return fmt.Sprintf("quota exceeded by %d", e.n) }

func sameFailure() error { return errors.New("connection refused") }

func TestErrorTracking_sentrySDK(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		id, key := etProject(t, s, "sdk")
		dsn := key["sentry_dsn"].(string)
		u, _ := url.Parse(s.URL)
		if want := fmt.Sprintf("http://%s@%s/api/v4/error_tracking/collector/%d", key["public_key"], u.Host, id); dsn != want || key["tracker_dsn"] != want {
			t.Fatalf("dsn = %q; want %q", dsn, want)
		}
		client, err := sentry.NewClient(sentry.ClientOptions{Dsn: dsn, Environment: "staging", Release: "v1.2.3"})
		if err != nil {
			t.Fatal(err)
		}
		defer client.Close()
		hub := sentry.NewHub(client, sentry.NewScope())
		hub.CaptureException(&quotaError{n: 3})
		hub.CaptureMessage("disk almost full")
		for range 3 {
			hub.CaptureException(sameFailure())
		}
		if !client.Flush(20 * time.Second) {
			t.Fatal("sentry client did not flush")
		}

		errs := etErrors(t, s, id, "?sort=frequency")
		if len(errs) != 3 {
			t.Fatalf("errors = %d; want 3: %v", len(errs), errs)
		}
		byName := map[string]map[string]any{}
		for _, e := range errs {
			byName[e["name"].(string)] = e
		}
		repeated := byName["*errors.errorString"]
		if repeated == nil || repeated["count"] != float64(3) || repeated["message"] != "connection refused" || repeated["status"] != "unresolved" ||
			repeated["platform"] != "go" || repeated["title"] != "*errors.errorString connection refused" || errs[0]["id"] != repeated["id"] {
			t.Errorf("repeated exception: %v", repeated)
		}
		if c, _ := repeated["culprit"].(string); !strings.Contains(c, "sameFailure(") && !strings.Contains(c, "(quarry/e2e)") {
			t.Errorf("culprit = %q; want function(module) of the last frame", c)
		}
		quota := byName["*e2e.quotaError"]
		if quota == nil || quota["count"] != float64(1) || quota["message"] != "quota exceeded by 3" {
			t.Errorf("exception: %v", quota)
		}
		msg := byName["disk almost full"]
		if msg == nil || msg["count"] != float64(1) || msg["title"] != "disk almost full" {
			t.Errorf("message: %v (all: %v)", msg, errs)
		}

		// The events keep the payload whole: the stack trace, environment,
		// release.
		evs := s.Get(t, fmt.Sprintf("/projects/%d/error_tracking/errors/%v/events", id, quota["id"]), s.RootToken).Want(t, 200).Array(t)
		if len(evs) != 1 || evs[0]["environment"] != "staging" || evs[0]["level"] != "error" {
			t.Fatalf("events: %v", evs)
		}
		payload := evs[0]["payload"].(map[string]any)
		ex := payload["exception"].([]any)
		if m, ok := payload["exception"].(map[string]any); ok {
			ex = m["values"].([]any)
		}
		frames := ex[0].(map[string]any)["stacktrace"].(map[string]any)["frames"].([]any)
		if len(frames) == 0 || payload["release"] != "v1.2.3" {
			t.Errorf("payload: %v", payload)
		}
		evs = s.Get(t, fmt.Sprintf("/projects/%d/error_tracking/errors/%v/events?per_page=2", id, repeated["id"]), s.RootToken).Want(t, 200).Array(t)
		if len(evs) != 2 {
			t.Errorf("a page of events: %d", len(evs))
		}

		// A wrong key: nothing stored.
		bad := strings.Replace(dsn, key["public_key"].(string), "glet_00000000000000000000000000000000", 1)
		badClient, err := sentry.NewClient(sentry.ClientOptions{Dsn: bad})
		if err != nil {
			t.Fatal(err)
		}
		defer badClient.Close()
		sentry.NewHub(badClient, sentry.NewScope()).CaptureException(errors.New("should not land"))
		badClient.Flush(20 * time.Second)
		if n := len(etErrors(t, s, id, "")); n != 3 {
			t.Errorf("after a wrong key: %d errors; want 3", n)
		}
	})
}

// envelope builds a Sentry envelope of items (type, payload).
func envelope(items ...string) []byte {
	var b bytes.Buffer
	b.WriteString(`{"event_id":"9ec79c33ec9942ab8353589fcb2e04dc","sent_at":"2026-01-02T03:04:05Z"}` + "\n")
	for i := 0; i+1 < len(items); i += 2 {
		fmt.Fprintf(&b, `{"type":%q,"length":%d}`+"\n%s\n", items[i], len(items[i+1]), items[i+1])
	}
	return b.Bytes()
}

func exceptionEvent(typ, value, fn string) string {
	return fmt.Sprintf(`{"platform":"python","level":"error","timestamp":1767323045.5,"exception":{"values":[{"type":%q,"value":%q,
		"stacktrace":{"frames":[{"function":"main","module":"app"},{"function":%q,"module":"app.views"}]}}]}}`, typ, value, fn)
}

func gz(b []byte) []byte {
	var out bytes.Buffer
	w := gzip.NewWriter(&out)
	_, _ = w.Write(b)
	w.Close()
	return out.Bytes()
}

func TestErrorTracking_collectorRaw(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		id, key := etProject(t, s, "rawcollector")
		pk := key["public_key"].(string)
		col := fmt.Sprintf("/error_tracking/collector/api/%d", id)
		post := func(path string, body []byte, hdr map[string]string) *apitest.Response {
			t.Helper()
			h := map[string]string{"Content-Type": "application/x-sentry-envelope"}
			for k, v := range hdr {
				h[k] = v
			}
			return s.Do(t, apitest.Request{Method: "POST", Path: path, Raw: body, Header: h})
		}
		auth := map[string]string{"X-Sentry-Auth": "Sentry sentry_version=7, sentry_client=raven-python/1.0, sentry_timestamp=1767323045, sentry_key=" + pk + ", sentry_secret="}

		// Plain envelope through X-Sentry-Auth: 200, empty body.
		r := post(col+"/envelope/", envelope("event", exceptionEvent("ZeroDivisionError", "division by zero", "divide")), auth).Want(t, 200)
		if len(r.Body) != 0 {
			t.Errorf("collector body = %q; want empty", r.Body)
		}
		// Gzip through sentry_key, no trailing slash; a new value updates
		// the description, the group stays one (type, culprit, platform).
		post(col+"/envelope?sentry_key="+pk, gz(envelope("event", exceptionEvent("ZeroDivisionError", "division by zero (2)", "divide"))),
			map[string]string{"Content-Encoding": "gzip"}).Want(t, 200)
		// A chunked body without Content-Length (the Node SDK's).
		pr, pw := io.Pipe()
		go func() {
			body := gz(envelope("event", exceptionEvent("ZeroDivisionError", "division by zero (3)", "divide")))
			for len(body) > 0 {
				n := min(len(body), 7)
				_, _ = pw.Write(body[:n])
				body = body[n:]
			}
			pw.Close()
		}()
		req, _ := http.NewRequest("POST", s.URL+"/api/v4"+col+"/envelope/?sentry_key="+pk, pr)
		req.Header.Set("Content-Encoding", "gzip")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 || req.ContentLength != 0 {
			t.Errorf("chunked: %d (length %d)", resp.StatusCode, req.ContentLength)
		}
		// /store with a trailing slash (the Python SDK's), JSON body.
		post(col+"/store/", []byte(exceptionEvent("KeyError", "'user'", "lookup")), map[string]string{
			"Content-Type": "application/json", "X-Sentry-Auth": "Sentry sentry_key=" + pk + ",sentry_version=7"}).Want(t, 200)
		// Items GitLab drops: a transaction, a session, a client report.
		post(col+"/envelope/?sentry_key="+pk, envelope("transaction", `{"type":"transaction"}`, "session", `{"sid":"x"}`, "client_report", `{}`), nil).Want(t, 200)

		errs := etErrors(t, s, id, "?sort=last_seen")
		if len(errs) != 2 {
			t.Fatalf("errors: %v", errs)
		}
		var zero map[string]any
		for _, e := range errs {
			if e["name"] == "ZeroDivisionError" {
				zero = e
			}
		}
		if zero == nil || zero["count"] != float64(3) || zero["culprit"] != "divide(app.views)" || zero["message"] != "division by zero (3)" ||
			zero["first_seen"] != "2026-01-02T03:04:05.500Z" {
			t.Errorf("grouped error: %v", zero)
		}

		// Refusals, and nothing stored by any of them.
		other, otherKey := etProject(t, s, "other")
		for _, c := range []struct {
			name   string
			path   string
			body   []byte
			hdr    map[string]string
			status int
			want   string
		}{
			{"wrong key", col + "/envelope?sentry_key=glet_0123456789abcdef0123456789abcdef", envelope("event", exceptionEvent("E", "v", "f")), nil, 404, `{"message":"404 Not Found"}`},
			{"not a key", col + "/envelope?sentry_key=nope", envelope("event", exceptionEvent("E", "v", "f")), nil, 404, `{"message":"404 Not Found"}`},
			{"another project's key", col + "/envelope?sentry_key=" + otherKey["public_key"].(string), envelope("event", exceptionEvent("E", "v", "f")), nil, 404, `{"message":"404 Not Found"}`},
			{"missing project", fmt.Sprintf("/error_tracking/collector/api/%d/envelope?sentry_key=%s", s.AbsentID(t), pk), envelope("event", exceptionEvent("E", "v", "f")), nil, 404, `{"message":"404 Project Not Found"}`},
			{"no key", col + "/envelope", envelope("event", exceptionEvent("E", "v", "f")), nil, 401, `{"message":"401 Unauthorized"}`},
			{"unknown item", col + "/envelope?sentry_key=" + pk, envelope("bogus", `{}`), nil, 400, `{"message":"400 Bad Request"}`},
			{"not an envelope", col + "/envelope?sentry_key=" + pk, []byte("garbage"), nil, 400, `{"message":"400 Bad request - Failed to parse sentry request"}`},
			{"bad gzip", col + "/envelope?sentry_key=" + pk, []byte("garbage"), map[string]string{"Content-Encoding": "gzip"}, 400, `{"message":"400 Bad request - Failed to parse sentry request"}`},
			{"no exception or message", col + "/store?sentry_key=" + pk, []byte(`{"platform":"go"}`), nil, 400, `{"message":"400 Bad request - Unsupported sentry payload"}`},
			{"store not JSON", col + "/store?sentry_key=" + pk, []byte(`{"platform":`), nil, 400, `{"message":"400 Bad request - Failed to parse sentry request"}`},
			{"too large", col + "/store?sentry_key=" + pk, bytes.Repeat([]byte("x"), 3<<20), nil, 413, ""},
			{"too large once inflated", col + "/envelope?sentry_key=" + pk, gz(bytes.Repeat([]byte(" "), 8<<20)), map[string]string{"Content-Encoding": "gzip"}, 413, ""},
			{"subpath", col + "/envelope/x?sentry_key=" + pk, envelope("event", exceptionEvent("E", "v", "f")), nil, 404, ""},
		} {
			r := post(c.path, c.body, c.hdr)
			if r.Status != c.status || (c.want != "" && strings.TrimSpace(string(r.Body)) != c.want) {
				t.Errorf("%s: %d %s; want %d %s", c.name, r.Status, r.Body, c.status, c.want)
			}
		}
		// Integrated tracking off: 404; and a deleted key: 404.
		base := "/projects/" + itoa(other) + "/error_tracking"
		ocol := fmt.Sprintf("/error_tracking/collector/api/%d/store?sentry_key=%s", other, otherKey["public_key"])
		post(ocol, []byte(exceptionEvent("E", "v", "f")), nil).Want(t, 200)
		s.Do(t, apitest.Request{Method: "PATCH", Path: base + "/settings", Token: s.RootToken, JSON: map[string]any{"active": true, "integrated": false}}).Want(t, 200)
		post(ocol, []byte(exceptionEvent("E", "v", "f")), nil).Want(t, 404)
		s.Do(t, apitest.Request{Method: "PATCH", Path: base + "/settings", Token: s.RootToken, JSON: map[string]any{"active": false, "integrated": true}}).Want(t, 200)
		post(ocol, []byte(exceptionEvent("E", "v", "f")), nil).Want(t, 404)
		s.Do(t, apitest.Request{Method: "PATCH", Path: base + "/settings", Token: s.RootToken, JSON: map[string]any{"active": true}}).Want(t, 200)
		post(ocol, []byte(exceptionEvent("E", "v", "f")), nil).Want(t, 200)
		s.Do(t, apitest.Request{Method: "DELETE", Path: fmt.Sprintf("%s/client_keys/%v", base, otherKey["id"]), Token: s.RootToken}).Want(t, 200)
		post(ocol, []byte(exceptionEvent("E", "v", "f")), nil).Want(t, 404)
		if n := len(etErrors(t, s, id, "")); n != 2 {
			t.Errorf("errors after refusals: %d; want 2", n)
		}
		if e := etErrors(t, s, other, ""); len(e) != 1 || e[0]["count"] != float64(2) {
			t.Errorf("other project's errors: %v", e)
		}
	})
}

func TestErrorTracking_settingsAndKeys(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		owner := s.NewUser(t, "etowner")
		p := s.Do(t, apitest.Request{Method: "POST", Path: "/projects", Token: owner.Token,
			JSON: map[string]any{"name": "keys", "visibility": "private"}}).Want(t, http.StatusCreated).Object(t)
		id := int64(p["id"].(float64))
		base := "/projects/" + itoa(id) + "/error_tracking"
		members := map[string]apitest.User{}
		for name, level := range map[string]int{"etdev": 30, "etreporter": 20, "etmaint": 40} {
			u := s.NewUser(t, name)
			s.Do(t, apitest.Request{Method: "POST", Path: "/projects/" + itoa(id) + "/members", Token: owner.Token,
				JSON: map[string]any{"user_id": u.ID, "access_level": level}}).Want(t, http.StatusCreated)
			members[name] = u
		}
		stranger := s.NewUser(t, "etstranger")
		maint := members["etmaint"].Token

		s.Get(t, base+"/settings", maint).WantBody(t, `{"message":"404 Error Tracking Setting Not Found"}`)
		s.Do(t, apitest.Request{Method: "PATCH", Path: base + "/settings", Token: maint, JSON: map[string]any{"active": true}}).
			Want(t, 404).WantBody(t, `{"message":"404 Error Tracking Setting Not Found"}`)
		s.Do(t, apitest.Request{Method: "PUT", Path: base + "/settings", Token: maint, JSON: map[string]any{"active": true}}).
			Want(t, 400).WantBody(t, `{"error":"integrated is missing"}`)
		s.Do(t, apitest.Request{Method: "PUT", Path: base + "/settings", Token: maint, JSON: map[string]any{"active": true, "integrated": true}}).
			Want(t, 200).WantBody(t, `{"active":true,"project_name":null,"sentry_external_url":null,"tracker_external_url":null,"api_url":null,"integrated":true}`)
		s.Do(t, apitest.Request{Method: "PATCH", Path: base + "/settings", Token: maint, JSON: map[string]any{"active": false}}).
			Want(t, 200).WantBody(t, `{"active":false,"project_name":null,"sentry_external_url":null,"tracker_external_url":null,"api_url":null,"integrated":true}`)
		s.Get(t, base+"/settings", owner.Token).Want(t, 200)

		k1 := s.Do(t, apitest.Request{Method: "POST", Path: base + "/client_keys", Token: maint}).Want(t, 201).Object(t)
		k2 := s.Do(t, apitest.Request{Method: "POST", Path: base + "/client_keys", Token: owner.Token}).Want(t, 201).Object(t)
		pk := k1["public_key"].(string)
		if len(pk) != 37 || !strings.HasPrefix(pk, "glet_") || strings.Trim(pk[5:], "0123456789abcdef") != "" || k1["active"] != true || len(k1) != 5 {
			t.Errorf("key: %v", k1)
		}
		keys := s.Get(t, base+"/client_keys", maint).Want(t, 200).Array(t)
		if len(keys) != 2 || keys[0]["id"] != k1["id"] || keys[1]["public_key"] != k2["public_key"] {
			t.Errorf("keys: %v", keys)
		}
		del := s.Do(t, apitest.Request{Method: "DELETE", Path: fmt.Sprintf("%s/client_keys/%v", base, k1["id"]), Token: maint}).Want(t, 200).Object(t)
		if del["public_key"] != pk || del["sentry_dsn"] != k1["sentry_dsn"] {
			t.Errorf("deleted key: %v", del)
		}
		s.Do(t, apitest.Request{Method: "DELETE", Path: fmt.Sprintf("%s/client_keys/%v", base, k1["id"]), Token: maint}).Want(t, 404)
		s.Do(t, apitest.Request{Method: "DELETE", Path: base + "/client_keys/abc", Token: maint}).Want(t, 404)

		// Permissions: maintainers and up; others who see the project 403;
		// those who do not 404; anonymous 401.
		for _, c := range []struct {
			who    string
			token  string
			status int
		}{{"developer", members["etdev"].Token, 403}, {"reporter", members["etreporter"].Token, 403}, {"stranger", stranger.Token, 404}, {"anonymous", "", 401}} {
			for _, r := range []apitest.Request{
				{Method: "GET", Path: base + "/settings"},
				{Method: "PATCH", Path: base + "/settings", JSON: map[string]any{"active": true}},
				{Method: "PUT", Path: base + "/settings", JSON: map[string]any{"active": true, "integrated": true}},
				{Method: "GET", Path: base + "/client_keys"},
				{Method: "POST", Path: base + "/client_keys"},
				{Method: "DELETE", Path: fmt.Sprintf("%s/client_keys/%v", base, k2["id"])},
			} {
				r.Token = c.token
				if got := s.Do(t, r).Status; got != c.status {
					t.Errorf("%s %s %s: %d; want %d", c.who, r.Method, r.Path, got, c.status)
				}
			}
		}
		if n := len(s.Get(t, base+"/client_keys", owner.Token).Want(t, 200).Array(t)); n != 1 {
			t.Errorf("keys after refused deletes: %d", n)
		}
	})
}

func TestErrorTracking_errorsAPI(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		id, key := etProject(t, s, "triage")
		pk := key["public_key"].(string)
		store := func(typ, value, fn string, ts float64) {
			t.Helper()
			body := strings.Replace(exceptionEvent(typ, value, fn), "1767323045.5", fmt.Sprint(ts), 1)
			s.Do(t, apitest.Request{Method: "POST", Path: fmt.Sprintf("/error_tracking/collector/api/%d/store?sentry_key=%s", id, pk), Raw: []byte(body)}).Want(t, 200)
		}
		// a: 3 events, oldest first seen; b: 1 event, newest; c: 2 events.
		store("AError", "a", "fa", 1000)
		store("AError", "a", "fa", 1001)
		store("AError", "a", "fa", 1002)
		store("CError", "a long description that goes on and on past the sixty-four characters of a title", "fc", 2000)
		store("CError", "c", "fc", 2001)
		store("BError", "b", "fb", 3000)
		names := func(list []map[string]any) string {
			var out []string
			for _, e := range list {
				out = append(out, e["name"].(string))
			}
			return strings.Join(out, ",")
		}
		for q, want := range map[string]string{
			"":                   "BError,CError,AError",
			"?sort=last_seen":    "BError,CError,AError",
			"?sort=first_seen":   "BError,CError,AError",
			"?sort=frequency":    "AError,CError,BError",
			"?query=berr":        "BError",
			"?query=c":           "CError",
			"?status=resolved":   "",
			"?status=unresolved": "BError,CError,AError",
		} {
			if got := names(etErrors(t, s, id, q)); got != want {
				t.Errorf("errors%s = %s; want %s", q, got, want)
			}
		}
		s.Get(t, fmt.Sprintf("/projects/%d/error_tracking/errors?sort=nope", id), s.RootToken).Want(t, 400)
		// Keyset pages by frequency.
		var seen []string
		s.Walk(t, fmt.Sprintf("/projects/%d/error_tracking/errors?sort=frequency&pagination=keyset&per_page=1", id), s.RootToken, func(r *apitest.Response) {
			seen = append(seen, names(r.Array(t)))
		})
		if strings.Join(seen, ",") != "AError,CError,BError" {
			t.Errorf("keyset pages: %v", seen)
		}
		r := s.Get(t, fmt.Sprintf("/projects/%d/error_tracking/errors?per_page=2&page=2", id), s.RootToken).Want(t, 200)
		if names(r.Array(t)) != "AError" || r.Header.Get("X-Total") != "3" {
			t.Errorf("offset page 2: %s total %s", names(r.Array(t)), r.Header.Get("X-Total"))
		}

		all := etErrors(t, s, id, "")
		b, c := all[0], all[1]
		if c["title"] != "CError c" || len([]rune(fmt.Sprint(b["title"]))) > 64 {
			t.Errorf("titles: %v / %v", b["title"], c["title"])
		}
		one := s.Get(t, fmt.Sprintf("/projects/%d/error_tracking/errors/%v", id, b["id"]), s.RootToken).Want(t, 200).Object(t)
		if one["id"] != b["id"] || one["count"] != float64(1) || one["first_seen"] != "1970-01-01T00:50:00.000Z" ||
			!strings.HasSuffix(one["external_url"].(string), fmt.Sprintf("/-/error_tracking/%v/details", b["id"])) {
			t.Errorf("error: %v", one)
		}
		s.Get(t, fmt.Sprintf("/projects/%d/error_tracking/errors/%d", id, 999999), s.RootToken).Want(t, 404).WantBody(t, `{"message":"404 Error Not Found"}`)

		// Status changes: developers up; a resolved error stays resolved
		// when a new event arrives (GitLab's report_error leaves status).
		dev, rep, guest := s.NewUser(t, "etdev2"), s.NewUser(t, "etrep2"), s.NewUser(t, "etguest2")
		for u, level := range map[apitest.User]int{dev: 30, rep: 20, guest: 10} {
			s.Do(t, apitest.Request{Method: "POST", Path: "/projects/" + itoa(id) + "/members", Token: s.RootToken,
				JSON: map[string]any{"user_id": u.ID, "access_level": level}}).Want(t, http.StatusCreated)
		}
		bpath := fmt.Sprintf("/projects/%d/error_tracking/errors/%v", id, b["id"])
		s.Get(t, bpath, rep.Token).Want(t, 200)
		s.Get(t, bpath+"/events", rep.Token).Want(t, 200)
		s.Get(t, bpath, guest.Token).Want(t, 403)
		s.Get(t, fmt.Sprintf("/projects/%d/error_tracking/errors", id), guest.Token).Want(t, 403)
		s.Do(t, apitest.Request{Method: "PUT", Path: bpath, Token: rep.Token, JSON: map[string]any{"status": "resolved"}}).Want(t, 403)
		s.Do(t, apitest.Request{Method: "PUT", Path: bpath, Token: dev.Token, JSON: map[string]any{"status": "done"}}).Want(t, 400)
		got := s.Do(t, apitest.Request{Method: "PUT", Path: bpath, Token: dev.Token, JSON: map[string]any{"status": "resolved"}}).Want(t, 200).Object(t)
		if got["status"] != "resolved" {
			t.Errorf("after resolve: %v", got)
		}
		s.Do(t, apitest.Request{Method: "PUT", Path: bpath, Token: dev.Token, JSON: map[string]any{"status": "resolved"}}).Want(t, 200)
		store("BError", "b again", "fb", 3001)
		got = s.Get(t, bpath, rep.Token).Want(t, 200).Object(t)
		if got["status"] != "resolved" || got["count"] != float64(2) || got["message"] != "b again" {
			t.Errorf("resolved error after a new event: %v", got)
		}
		if n := names(etErrors(t, s, id, "?status=resolved")); n != "BError" {
			t.Errorf("resolved: %s", n)
		}
		s.Do(t, apitest.Request{Method: "PUT", Path: bpath, Token: dev.Token, JSON: map[string]any{"status": "ignored"}}).Want(t, 200)
		s.Do(t, apitest.Request{Method: "PUT", Path: bpath, Token: s.RootToken, JSON: map[string]any{"status": "unresolved"}}).Want(t, 200)
		stranger := s.NewUser(t, "etstranger2")
		s.Get(t, bpath, stranger.Token).Want(t, 404)
		s.Get(t, bpath, "").Want(t, 401)
	})
}

// Events of one new error from many clients at once: one error, every
// event counted (the upsert-and-increment races nothing away).
func TestErrorTracking_concurrentEvents(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		id, key := etProject(t, s, "racing")
		url := fmt.Sprintf("%s/api/v4/error_tracking/collector/api/%d/envelope/?sentry_key=%s", s.URL, id, key["public_key"])
		body := envelope("event", exceptionEvent("RaceError", "boom", "race"))
		const clients, each = 8, 10
		errs := make(chan error, clients)
		for range clients {
			go func() {
				for range each {
					resp, err := http.Post(url, "application/x-sentry-envelope", bytes.NewReader(body))
					if err != nil {
						errs <- err
						return
					}
					resp.Body.Close()
					if resp.StatusCode != 200 {
						errs <- fmt.Errorf("status %d", resp.StatusCode)
						return
					}
				}
				errs <- nil
			}()
		}
		for range clients {
			select {
			case err := <-errs:
				if err != nil {
					t.Fatal(err)
				}
			case <-time.After(60 * time.Second):
				t.Fatal("clients did not finish")
			}
		}
		list := etErrors(t, s, id, "")
		if len(list) != 1 || list[0]["count"] != float64(clients*each) {
			t.Fatalf("errors: %v", list)
		}
		r := s.Get(t, fmt.Sprintf("/projects/%d/error_tracking/errors/%v/events?per_page=1", id, list[0]["id"]), s.RootToken).Want(t, 200)
		if r.Header.Get("X-Total") != itoa(clients*each) {
			t.Errorf("events X-Total = %q", r.Header.Get("X-Total"))
		}
	})
}
