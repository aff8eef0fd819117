package e2e

import (
	"bytes"
	"crypto/sha1"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"quarry/internal/apitest"
	"quarry/internal/storetest"
)

// Alert management end to end: HTTP integrations (keys shown once, hashed,
// reset), the intake at projects' alert URLs in GitLab's order of checks
// and codes, normalisation and grouping by fingerprint, Alertmanager's
// webhook, the alerts API and its permissions.

// alertProject makes a private project "ops/app" owned by a new user and
// returns the owner and the project's id.
func alertProject(t testing.TB, s *apitest.Server) (apitest.User, int64) {
	t.Helper()
	owner := s.NewUser(t, "alertowner")
	var g, p struct{ ID int64 }
	s.Do(t, apitest.Request{Method: "POST", Path: "/groups", Token: owner.Token,
		JSON: map[string]any{"name": "ops", "path": "ops", "visibility": "private"}}).Want(t, 201).JSON(t, &g)
	s.Do(t, apitest.Request{Method: "POST", Path: "/projects", Token: owner.Token,
		JSON: map[string]any{"name": "app", "namespace_id": g.ID, "visibility": "private"}}).Want(t, 201).JSON(t, &p)
	return owner, p.ID
}

type alertIntegration struct {
	ID     int64  `json:"id"`
	Name   string `json:"name"`
	Active bool   `json:"active"`
	Type   string `json:"type"`
	URL    string `json:"url"`
	Token  string `json:"token"`
}

func newIntegration(t testing.TB, s *apitest.Server, token string, project int64, body map[string]any) alertIntegration {
	t.Helper()
	var in alertIntegration
	s.Do(t, apitest.Request{Method: "POST", Path: "/projects/" + itoa(project) + "/alert_management/http_integrations", Token: token,
		JSON: body}).Want(t, 201).JSON(t, &in)
	return in
}

// notify posts body (JSON text) to url with an Authorization header.
func notify(t *testing.T, s *apitest.Server, url, authz, body string) *apitest.Response {
	t.Helper()
	h := map[string]string{"Content-Type": "application/json"}
	if authz != "" {
		h["Authorization"] = authz
	}
	return s.Do(t, apitest.Request{Method: "POST", Path: url, Header: h, Raw: []byte(body)})
}

func bearer(key string) string { return "Bearer " + key }

func alertGet(t *testing.T, s *apitest.Server, token string, project, iid int64) map[string]any {
	t.Helper()
	return s.Get(t, "/projects/"+itoa(project)+"/alert_management/alerts/"+itoa(iid), token).Want(t, 200).Object(t)
}

// created reads the intake's answer: one alert's iid and title.
func created(t *testing.T, r *apitest.Response) (int64, string) {
	t.Helper()
	var out []struct {
		IID   int64  `json:"iid"`
		Title string `json:"title"`
	}
	r.Want(t, 200).JSON(t, &out)
	if len(out) != 1 {
		t.Fatalf("intake answered %s; want one alert", r.Body)
	}
	return out[0].IID, out[0].Title
}

func TestAlerts_integrations(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		owner, project := alertProject(t, s)
		base := "/projects/" + itoa(project) + "/alert_management/http_integrations"
		in := newIntegration(t, s, owner.Token, project, map[string]any{"name": "Tool One!"})
		if !regexp.MustCompile(`^[0-9a-f]{32}$`).MatchString(in.Token) || in.Type != "http" || !in.Active || in.Name != "Tool One!" {
			t.Errorf("created %+v", in)
		}
		if !regexp.MustCompile(`^` + regexp.QuoteMeta(s.URL) + `/ops/app/alerts/notify/tool-one/[0-9a-f]{16}\.json$`).MatchString(in.URL) {
			t.Errorf("url %q", in.URL)
		}
		// The key is shown once: never on reads.
		got := s.Get(t, base+"/"+itoa(in.ID), owner.Token).Want(t, 200).Object(t)
		if _, ok := got["token"]; ok || got["url"] != in.URL {
			t.Errorf("read %v", got)
		}
		if list := s.Get(t, base, owner.Token).Want(t, 200).Array(t); len(list) != 1 || list[0]["token"] != nil {
			t.Errorf("list %v", list)
		}
		s.Do(t, apitest.Request{Method: "PUT", Path: base + "/" + itoa(in.ID), Token: owner.Token,
			JSON: map[string]any{"name": "renamed", "active": false}}).Want(t, 200)
		got = s.Get(t, base+"/"+itoa(in.ID), owner.Token).Want(t, 200).Object(t)
		if got["name"] != "renamed" || got["active"] != false {
			t.Errorf("updated %v", got)
		}
		// Reset: a new key, the old one refused.
		var reset alertIntegration
		s.Do(t, apitest.Request{Method: "POST", Path: base + "/" + itoa(in.ID) + "/reset_token", Token: owner.Token}).Want(t, 200).JSON(t, &reset)
		if reset.Token == "" || reset.Token == in.Token {
			t.Errorf("reset %+v", reset)
		}
		s.Do(t, apitest.Request{Method: "PUT", Path: base + "/" + itoa(in.ID), Token: owner.Token, JSON: map[string]any{"active": true}}).Want(t, 200)
		notify(t, s, in.URL, bearer(in.Token), `{"title":"x"}`).Want(t, 401)
		notify(t, s, in.URL, bearer(reset.Token), `{"title":"x"}`).Want(t, 200)

		// Validation.
		s.Do(t, apitest.Request{Method: "POST", Path: base, Token: owner.Token, JSON: map[string]any{}}).Want(t, 400).WantBody(t, `{"error":"name is missing"}`)
		s.Do(t, apitest.Request{Method: "POST", Path: base, Token: owner.Token, JSON: map[string]any{"name": "x", "type": "pagerduty"}}).Want(t, 400)
		s.Do(t, apitest.Request{Method: "POST", Path: base, Token: owner.Token, JSON: map[string]any{"name": "x",
			"payload_attribute_mappings": []any{map[string]any{"field_name": "nope", "path": []any{"a"}}}}}).Want(t, 400)
		s.Do(t, apitest.Request{Method: "POST", Path: base, Token: owner.Token, JSON: map[string]any{"name": "x",
			"payload_attribute_mappings": []any{map[string]any{"field_name": "title", "path": []any{}}}}}).Want(t, 400)
		prom := newIntegration(t, s, owner.Token, project, map[string]any{"name": "Prometheus", "type": "prometheus"})
		if prom.URL != s.URL+"/ops/app/prometheus/alerts/notify.json" {
			t.Errorf("prometheus url %q", prom.URL)
		}
		s.Do(t, apitest.Request{Method: "POST", Path: base, Token: owner.Token, JSON: map[string]any{"name": "again", "type": "prometheus"}}).Want(t, 400)

		// Permissions: maintainers up; a developer 403, a stranger 404.
		dev, stranger := s.NewUser(t, "alertdev"), s.NewUser(t, "alertstranger")
		s.Do(t, apitest.Request{Method: "POST", Path: "/projects/" + itoa(project) + "/members", Token: owner.Token,
			JSON: map[string]any{"user_id": dev.ID, "access_level": 30}}).Want(t, 201)
		s.Get(t, base, dev.Token).Want(t, 403)
		s.Get(t, base, stranger.Token).Want(t, 404)
		s.Do(t, apitest.Request{Method: "POST", Path: base + "/" + itoa(in.ID) + "/reset_token", Token: dev.Token}).Want(t, 403)
		s.Get(t, base+"/"+itoa(s.AbsentID(t)), owner.Token).Want(t, 404)

		s.Do(t, apitest.Request{Method: "DELETE", Path: base + "/" + itoa(in.ID), Token: owner.Token}).Want(t, 204)
		notify(t, s, in.URL, bearer(reset.Token), `{"title":"x"}`).Want(t, 403)
		// The alert it opened stays.
		alertGet(t, s, owner.Token, project, 1)
	})
}

func TestAlerts_intakeAuthAndCodes(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		owner, project := alertProject(t, s)
		in := newIntegration(t, s, owner.Token, project, map[string]any{"name": "generic"})
		basic := func(user, pass string) string {
			return "Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+pass))
		}
		for i, authz := range []string{bearer(in.Token), basic("", in.Token), basic("anyone", in.Token)} {
			iid, title := created(t, notify(t, s, in.URL, authz, fmt.Sprintf(`{"title":"auth %d"}`, i)))
			if title != fmt.Sprintf("auth %d", i) || iid != int64(i+1) {
				t.Errorf("form %d: %d %q", i, iid, title)
			}
		}
		// Credentials in the URL: the client sends them as Basic.
		u, _ := url.Parse(in.URL)
		u.User = url.UserPassword("", in.Token)
		created(t, notify(t, s, u.String(), "", `{"title":"in the url"}`))
		// The legacy URL reaches the project's first HTTP integration.
		created(t, notify(t, s, s.URL+"/ops/app/alerts/notify.json", bearer(in.Token), `{"title":"legacy"}`))

		deep := strings.Repeat(`{"a":`, 101) + `1` + strings.Repeat(`}`, 101)
		big := `{"title":"big","blob":"` + strings.Repeat("x", 1<<20) + `"}`
		unknown := strings.Replace(in.URL, "/generic/", "/generic/", 1)
		unknown = unknown[:strings.LastIndex(unknown, "/")] + "/0000000000000000.json"
		for _, c := range []struct {
			name, url, authz, body string
			want                   int
		}{
			{"oversized", in.URL, bearer(in.Token), big, 400},
			{"too deep", in.URL, bearer(in.Token), deep, 400},
			{"oversized before the integration", unknown, "", big, 400},
			{"unknown integration", unknown, bearer(in.Token), `{}`, 403},
			{"no key", in.URL, "", `{}`, 401},
			{"bad key", in.URL, bearer("0123456789abcdef0123456789abcdef"), `{}`, 401},
			{"bad basic", in.URL, "Basic !!!", `{}`, 401},
			{"not json", in.URL, bearer(in.Token), `{"title":`, 400},
			{"not an object", in.URL, bearer(in.Token), `[1,2]`, 400},
			{"no project", s.URL + "/ops/none/alerts/notify.json", bearer(in.Token), `{}`, 404},
			{"resolving nothing open", in.URL, bearer(in.Token), `{"title":"never opened","end_time":"2024-01-01T00:00:00Z"}`, 400},
		} {
			r := notify(t, s, c.url, c.authz, c.body)
			if r.Status != c.want || (c.want != 200 && len(r.Body) != 0) {
				t.Errorf("%s: %d %q; want %d without body", c.name, r.Status, r.Body, c.want)
			}
		}
		// An inactive integration is 403, whatever the key.
		s.Do(t, apitest.Request{Method: "PUT", Path: "/projects/" + itoa(project) + "/alert_management/http_integrations/" + itoa(in.ID),
			Token: owner.Token, JSON: map[string]any{"active": false}}).Want(t, 200)
		notify(t, s, in.URL, bearer(in.Token), `{}`).Want(t, 403)
		notify(t, s, in.URL, "", `{}`).Want(t, 403)
		// Only POST.
		s.Do(t, apitest.Request{Method: "GET", Path: in.URL}).Want(t, 405)
	})
}

func TestAlerts_grouping(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		owner, project := alertProject(t, s)
		in := newIntegration(t, s, owner.Token, project, map[string]any{"name": "generic"})
		post := func(body string) (int64, string) {
			t.Helper()
			return created(t, notify(t, s, in.URL, bearer(in.Token), body))
		}
		// A repeat of an open alert counts; start_time and hosts do not
		// tell occurrences apart.
		a, title := post(`{"title":"disk full","service":"db","hosts":"db1","start_time":"2024-05-01T10:00:00Z","custom":{"n":[1,2]}}`)
		b, _ := post(`{"title":"disk full","service":"db","hosts":["db2","db3"],"start_time":"2024-05-01T10:05:00Z","custom":{"n":[1,2]}}`)
		if a != b || title != "disk full" {
			t.Fatalf("repeat opened %d after %d", b, a)
		}
		got := alertGet(t, s, owner.Token, project, a)
		if got["event_count"] != 2.0 || got["status"] != "triggered" || got["severity"] != "critical" || got["service"] != "db" ||
			got["started_at"] != "2024-05-01T10:00:00Z" || got["ended_at"] != nil || fmt.Sprint(got["hosts"]) != "[db1]" {
			t.Errorf("grouped %v", got)
		}
		if p, _ := got["payload"].(map[string]any); p["custom"] == nil {
			t.Errorf("custom fields not kept: %v", got["payload"])
		}
		// end_time resolves it (ISO time).
		r, _ := post(`{"title":"disk full","service":"db","custom":{"n":[1,2]},"end_time":"2024-05-01T11:00:00Z"}`)
		got = alertGet(t, s, owner.Token, project, r)
		if r != a || got["status"] != "resolved" || got["ended_at"] != "2024-05-01T11:00:00Z" || got["event_count"] != 2.0 {
			t.Errorf("resolved %v", got)
		}
		// After resolution the same alert opens a new one.
		c, _ := post(`{"title":"disk full","service":"db","custom":{"n":[1,2]}}`)
		if c == a {
			t.Errorf("a resolved alert was reused")
		}
		// end_time as epoch milliseconds.
		post(`{"title":"disk full","service":"db","custom":{"n":[1,2]},"end_time":1714561200000}`)
		if got = alertGet(t, s, owner.Token, project, c); got["status"] != "resolved" || got["ended_at"] != "2024-05-01T11:00:00Z" {
			t.Errorf("epoch end %v", got)
		}

		// Fingerprints: a string and the array of its parts are one alert.
		f1, _ := post(`{"title":"one","fingerprint":"ab"}`)
		f2, _ := post(`{"title":"two","fingerprint":["a","b"]}`)
		f3, _ := post(`{"title":"three","fingerprint":["a",["b"]],"end_time":"2024-06-01T00:00:00Z"}`)
		if f1 != f2 || f2 != f3 {
			t.Errorf("fingerprints ab, [a b], [a [b]]: %d %d %d", f1, f2, f3)
		}
		if got = alertGet(t, s, owner.Token, project, f1); got["fingerprint"] != "da23614e02469a0d7c7bd1bdab5c9c474b1904dc" {
			t.Errorf("fingerprint %v; want sha1(ab)", got["fingerprint"])
		}

		// Severities: case-insensitive, anything else critical; the
		// default title.
		for _, c := range []struct{ sev, want string }{{`"HIGH"`, "high"}, {`"Low"`, "low"}, {`"info"`, "info"}, {`"unknown"`, "unknown"},
			{`"warning"`, "critical"}, {`7`, "critical"}, {`null`, "critical"}} {
			iid, title := post(`{"severity":` + c.sev + `,"fingerprint":"sev-` + strings.Trim(c.sev, `"`) + `"}`)
			if got := alertGet(t, s, owner.Token, project, iid); got["severity"] != c.want || title != "New: Alert" {
				t.Errorf("severity %s: %v %q; want %s", c.sev, got["severity"], title, c.want)
			}
		}
		// Truncation and the environment's two names.
		iid, title := post(`{"title":"` + strings.Repeat("t", 250) + `","description":"` + strings.Repeat("d", 1200) + `","service_environment_name":"production",` +
			`"hosts":["` + strings.Repeat("h", 200) + `","` + strings.Repeat("i", 100) + `","j"]}`)
		got = alertGet(t, s, owner.Token, project, iid)
		hosts, _ := got["hosts"].([]any)
		if len(title) != 200 || !strings.HasSuffix(title, "...") || len(got["description"].(string)) != 1000 ||
			len(hosts) != 2 || len(hosts[1].(string)) != 55 || got["environment"].(map[string]any)["name"] != "production" {
			t.Errorf("truncated %q %v", title, got)
		}
		iid, _ = post(`{"title":"gl env","gitlab_environment_name":"staging"}`)
		if got = alertGet(t, s, owner.Token, project, iid); got["environment"].(map[string]any)["name"] != "staging" {
			t.Errorf("environment %v", got["environment"])
		}
		// The monitoring tool and description are kept; an empty payload
		// has no fingerprint: every post opens an alert.
		e1, _ := post(`{}`)
		e2, _ := post(`{}`)
		if e1 == e2 {
			t.Errorf("empty payloads grouped")
		}
	})
}

func TestAlerts_customMapping(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		owner, project := alertProject(t, s)
		path := func(steps ...any) []any { return steps }
		in := newIntegration(t, s, owner.Token, project, map[string]any{"name": "mapped", "payload_attribute_mappings": []any{
			map[string]any{"field_name": "title", "path": path("alert", "name"), "type": "string"},
			map[string]any{"field_name": "severity", "path": path("alert", "level"), "type": "string"},
			map[string]any{"field_name": "fingerprint", "path": path("alert", "id"), "type": "string"},
			map[string]any{"field_name": "end_time", "path": path("alert", "closed"), "type": "datetime"},
			map[string]any{"field_name": "hosts", "path": path("targets", 0, "hosts"), "type": "array"},
		}})
		got := s.Get(t, "/projects/"+itoa(project)+"/alert_management/http_integrations/"+itoa(in.ID), owner.Token).Want(t, 200).Object(t)
		if ms, _ := got["payload_attribute_mappings"].([]any); len(ms) != 5 {
			t.Fatalf("mappings %v", got)
		}
		body := `{"title":"ignored","alert":{"name":"mapped title","level":"Medium","id":"X-1"},"targets":[{"hosts":["h1","h2"]}]}`
		iid, title := created(t, notify(t, s, in.URL, bearer(in.Token), body))
		again, _ := created(t, notify(t, s, in.URL, bearer(in.Token), body))
		a := alertGet(t, s, owner.Token, project, iid)
		if title != "mapped title" || again != iid || a["severity"] != "medium" || a["event_count"] != 2.0 || fmt.Sprint(a["hosts"]) != "[h1 h2]" {
			t.Errorf("mapped %q %v", title, a)
		}
		// The spec's end_time is not the mapped field: still open.
		created(t, notify(t, s, in.URL, bearer(in.Token), `{"alert":{"name":"mapped title","id":"X-1"},"end_time":"2024-01-01T00:00:00Z"}`))
		if a = alertGet(t, s, owner.Token, project, iid); a["status"] != "triggered" || a["event_count"] != 3.0 {
			t.Errorf("unmapped end_time %v", a)
		}
		created(t, notify(t, s, in.URL, bearer(in.Token), `{"alert":{"name":"mapped title","id":"X-1","closed":"2024-01-01T00:00:00Z"}}`))
		if a = alertGet(t, s, owner.Token, project, iid); a["status"] != "resolved" {
			t.Errorf("mapped end_time %v", a)
		}
	})
}

// alertmanagerBody is Alertmanager's webhook body (version 4) for one
// alert in status.
func alertmanagerBody(status, endsAt string) string {
	return `{"receiver":"quarry","status":"` + status + `","alerts":[{"status":"` + status + `",` +
		`"labels":{"alertname":"HighLatency","instance":"web-1:9090","job":"web","severity":"warning"},` +
		`"annotations":{"summary":"Latency above 500ms","description":"p99 latency is 734ms"},` +
		`"startsAt":"2024-05-01T10:00:00.123Z","endsAt":"` + endsAt + `",` +
		`"generatorURL":"http://prometheus:9090/graph?g0.expr=histogram_quantile%280.99%2C+rate%28x%5B5m%5D%29%29+%3E+0.5&g0.tab=1",` +
		`"fingerprint":"c1a4b6f0e3d2a1b0"}],` +
		`"groupLabels":{"alertname":"HighLatency"},"commonLabels":{"alertname":"HighLatency","severity":"warning"},` +
		`"commonAnnotations":{"summary":"Latency above 500ms"},"externalURL":"http://alertmanager:9093",` +
		`"version":"4","groupKey":"{}:{alertname=\"HighLatency\"}","truncatedAlerts":0}`
}

func TestAlerts_alertmanager(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		owner, project := alertProject(t, s)
		prom := newIntegration(t, s, owner.Token, project, map[string]any{"name": "Prometheus", "type": "prometheus"})
		http1 := newIntegration(t, s, owner.Token, project, map[string]any{"name": "generic"})
		for _, c := range []struct {
			url, key string
			iid      int64
		}{{prom.URL, prom.Token, 1}, {http1.URL, http1.Token, 2}} {
			firing := alertmanagerBody("firing", "0001-01-01T00:00:00Z")
			notify(t, s, c.url, bearer(c.key), firing).Want(t, 201).WantText(t, "")
			notify(t, s, c.url, bearer(c.key), firing).Want(t, 201).WantText(t, "")
			a := alertGet(t, s, owner.Token, project, c.iid)
			if a["title"] != "Latency above 500ms" || a["severity"] != "low" || a["event_count"] != 2.0 || a["status"] != "triggered" ||
				a["monitoring_tool"] != "Prometheus" || a["description"] != "p99 latency is 734ms" || a["ended_at"] != nil ||
				a["started_at"] != "2024-05-01T10:00:00.123Z" {
				t.Errorf("firing %v", a)
			}
			notify(t, s, c.url, bearer(c.key), alertmanagerBody("resolved", "2024-05-01T10:30:00Z")).Want(t, 201)
			if a = alertGet(t, s, owner.Token, project, c.iid); a["status"] != "resolved" || a["ended_at"] != "2024-05-01T10:30:00Z" || a["event_count"] != 2.0 {
				t.Errorf("resolved %v", a)
			}
			// GitLab's fingerprint: startsAt/title/query.
			sum := sha1.Sum([]byte("2024-05-01T10:00:00.123Z/Latency above 500ms/histogram_quantile(0.99, rate(x[5m])) > 0.5"))
			if a["fingerprint"] != hex.EncodeToString(sum[:]) {
				t.Errorf("fingerprint %v", a["fingerprint"])
			}
			notify(t, s, c.url, bearer("wrong"), alertmanagerBody("firing", "0001-01-01T00:00:00Z")).Want(t, 401)
		}
		// The Prometheus URL takes only Alertmanager's notifications.
		notify(t, s, prom.URL, bearer(prom.Token), `{"title":"generic"}`).Want(t, 422)
		if list := s.Get(t, "/projects/"+itoa(project)+"/alert_management/alerts", owner.Token).Want(t, 200).Array(t); len(list) != 2 {
			t.Errorf("%d alerts; want 2", len(list))
		}
	})
}

func TestAlerts_api(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		owner, project := alertProject(t, s)
		in := newIntegration(t, s, owner.Token, project, map[string]any{"name": "generic"})
		base := "/projects/" + itoa(project) + "/alert_management/alerts"
		for i, sev := range []string{"critical", "high", "low", "info", "medium"} {
			created(t, notify(t, s, in.URL, bearer(in.Token), fmt.Sprintf(`{"title":"alert %d","severity":%q,"service":"svc-%d","fingerprint":"f%d"}`, i, sev, i, i)))
		}
		created(t, notify(t, s, in.URL, bearer(in.Token), `{"fingerprint":"f1"}`))
		rep, dev, stranger := s.NewUser(t, "alertrep"), s.NewUser(t, "alertdev"), s.NewUser(t, "alertnobody")
		for _, m := range []struct {
			id    int64
			level int
		}{{rep.ID, 20}, {dev.ID, 30}} {
			s.Do(t, apitest.Request{Method: "POST", Path: "/projects/" + itoa(project) + "/members", Token: owner.Token,
				JSON: map[string]any{"user_id": m.id, "access_level": m.level}}).Want(t, 201)
		}
		titles := func(r *apitest.Response) string {
			var out []string
			for _, a := range r.Array(t) {
				out = append(out, a["title"].(string))
				if _, ok := a["payload"]; ok {
					t.Errorf("list carries payloads")
				}
			}
			return strings.Join(out, ",")
		}
		for _, c := range []struct{ query, want string }{
			{"", "alert 4,alert 3,alert 2,alert 1,alert 0"},
			{"?sort=created_asc", "alert 0,alert 1,alert 2,alert 3,alert 4"},
			{"?sort=severity_desc", "alert 0,alert 1,alert 4,alert 2,alert 3"},
			{"?sort=events_desc", "alert 1,alert 4,alert 3,alert 2,alert 0"},
			{"?severity=low,info", "alert 3,alert 2"},
			{"?search=SVC-3", "alert 3"},
			{"?status=resolved", ""},
		} {
			if got := titles(s.Get(t, base+c.query, rep.Token).Want(t, 200)); got != c.want {
				t.Errorf("%s: %s; want %s", c.query, got, c.want)
			}
		}
		s.Get(t, base+"?sort=name", rep.Token).Want(t, 400)
		s.Get(t, base+"?status=open", rep.Token).Want(t, 400)
		// Keyset pages by severity.
		var seen []string
		next := base + "?pagination=keyset&per_page=2&sort=severity_desc"
		for i := 0; next != "" && i < 5; i++ {
			r := s.Get(t, next, rep.Token).Want(t, 200)
			seen = append(seen, titles(r))
			next = apitest.Links(t, r.Header)["next"]
		}
		if strings.Join(seen, "|") != "alert 0,alert 1|alert 4,alert 2|alert 3" {
			t.Errorf("keyset pages %v", seen)
		}
		// Offset pages carry totals.
		if r := s.Get(t, base+"?per_page=2&page=2", rep.Token).Want(t, 200); r.Header.Get("X-Total") != "5" || titles(r) != "alert 2,alert 1" {
			t.Errorf("offset page: %s %s", r.Header.Get("X-Total"), r.Body)
		}

		// Status changes: developers up, by the transition table.
		put := func(token string, body map[string]any) *apitest.Response {
			return s.Do(t, apitest.Request{Method: "PUT", Path: base + "/1", Token: token, JSON: body})
		}
		put(rep.Token, map[string]any{"status": "acknowledged"}).Want(t, 403)
		s.Get(t, base, stranger.Token).Want(t, 404)
		s.Get(t, base+"/99", rep.Token).Want(t, 404)
		put(dev.Token, map[string]any{"status": "closed"}).Want(t, 400)
		put(dev.Token, map[string]any{}).Want(t, 400)
		a := put(dev.Token, map[string]any{"status": "acknowledged", "assignee_ids": []int64{dev.ID, stranger.ID}}).Want(t, 200).Object(t)
		if as, _ := a["assignees"].([]any); a["status"] != "acknowledged" || len(as) != 1 || as[0].(map[string]any)["username"] != "alertdev" {
			t.Errorf("acknowledged %v", a)
		}
		a = put(dev.Token, map[string]any{"status": "resolved"}).Want(t, 200).Object(t)
		if a["status"] != "resolved" || a["ended_at"] == nil {
			t.Errorf("resolved %v", a)
		}
		// A repeat now opens a new alert; reopening the old one would
		// make two open alerts of one fingerprint: refused.
		iid, _ := created(t, notify(t, s, in.URL, bearer(in.Token), `{"fingerprint":"f0"}`))
		if iid != 6 {
			t.Errorf("new alert %d; want 6", iid)
		}
		put(dev.Token, map[string]any{"status": "triggered"}).Want(t, 400)
		// An ignored alert is still open.
		s.Do(t, apitest.Request{Method: "PUT", Path: base + "/6", Token: dev.Token, JSON: map[string]any{"status": "ignored"}}).Want(t, 200)
		put(dev.Token, map[string]any{"status": "triggered"}).Want(t, 400)
		s.Do(t, apitest.Request{Method: "PUT", Path: base + "/6", Token: dev.Token, JSON: map[string]any{"status": "resolved"}}).Want(t, 200)
		a = put(dev.Token, map[string]any{"status": "triggered", "assignee_ids": []int64{}}).Want(t, 200).Object(t)
		if a["status"] != "triggered" || a["ended_at"] != nil || len(a["assignees"].([]any)) != 0 {
			t.Errorf("reopened %v", a)
		}
	})
}

// TestAlerts_concurrentIntake posts one payload 32 times at once: one
// open alert with 32 events.
func TestAlerts_concurrentIntake(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		owner, project := alertProject(t, s)
		in := newIntegration(t, s, owner.Token, project, map[string]any{"name": "storm"})
		iids := alertStorm(t, []string{in.URL}, in.Token, 32, `{"title":"storm","fingerprint":"storm-1"}`)
		if len(iids) != 1 {
			t.Fatalf("iids %v; want one alert", iids)
		}
		list := s.Get(t, "/projects/"+itoa(project)+"/alert_management/alerts", owner.Token).Want(t, 200).Array(t)
		if len(list) != 1 || list[0]["event_count"] != 32.0 || list[0]["iid"] != 1.0 {
			t.Errorf("alerts %v", list)
		}
		// The iid given back by losers: the next alert is 2.
		if iid, _ := created(t, notify(t, s, in.URL, bearer(in.Token), `{"fingerprint":"other"}`)); iid != 2 {
			t.Errorf("next iid %d; want 2", iid)
		}
	})
}

// alertStorm posts body n times at once, spread over urls, and returns
// the iids answered.
func alertStorm(t *testing.T, urls []string, key string, n int, body string) map[int64]int {
	t.Helper()
	var mu sync.Mutex
	iids := map[int64]int{}
	var wg sync.WaitGroup
	client := &http.Client{Timeout: 60 * time.Second}
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			req, _ := http.NewRequest("POST", urls[i%len(urls)], bytes.NewReader([]byte(body)))
			req.Header.Set("Authorization", "Bearer "+key)
			resp, err := client.Do(req)
			if err != nil {
				t.Error(err)
				return
			}
			defer resp.Body.Close()
			var out []struct{ IID int64 }
			if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || resp.StatusCode != 200 || len(out) != 1 {
				t.Errorf("post %d: %d %v", i, resp.StatusCode, err)
				return
			}
			mu.Lock()
			iids[out[0].IID]++
			mu.Unlock()
		}(i)
	}
	wg.Wait()
	return iids
}

// TestAlerts_concurrentIntakeTwoProcesses spreads 32 posts of one payload
// over two Quarry processes on one PostgreSQL: one open alert, 32 events.
func TestAlerts_concurrentIntakeTwoProcesses(t *testing.T) {
	t.Parallel()
	onSharedPostgres(t, func(t *testing.T, target storetest.Target, dir string) {
		s := apitest.StartIn(t, target, dir)
		owner, project := alertProject(t, s)
		in := newIntegration(t, s, owner.Token, project, map[string]any{"name": "storm"})
		child := startChild(t, target, dir)
		child.send(t, "listen", nil)
		childURL, ok := strings.CutPrefix(child.next(t, time.Minute), "listening ")
		if !ok || child.next(t, time.Minute) != "done" {
			t.Fatalf("second process did not listen")
		}
		there := childURL + strings.TrimPrefix(in.URL, s.URL)
		iids := alertStorm(t, []string{in.URL, there}, in.Token, 32, `{"title":"storm","fingerprint":"two-processes"}`)
		if len(iids) != 1 {
			t.Fatalf("iids %v; want one alert", iids)
		}
		list := s.Get(t, "/projects/"+itoa(project)+"/alert_management/alerts", owner.Token).Want(t, 200).Array(t)
		if len(list) != 1 || list[0]["event_count"] != 32.0 {
			t.Errorf("alerts %v", list)
		}
	})
}

func TestAlerts_metricImages(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		owner, project := alertProject(t, s)
		in := newIntegration(t, s, owner.Token, project, map[string]any{"name": "generic"})
		created(t, notify(t, s, in.URL, bearer(in.Token), `{"title":"with images"}`))
		rep, dev := s.NewUser(t, "imgrep"), s.NewUser(t, "imgdev")
		for _, m := range []struct {
			id    int64
			level int
		}{{rep.ID, 20}, {dev.ID, 30}} {
			s.Do(t, apitest.Request{Method: "POST", Path: "/projects/" + itoa(project) + "/members", Token: owner.Token,
				JSON: map[string]any{"user_id": m.id, "access_level": m.level}}).Want(t, 201)
		}
		base := "/projects/" + itoa(project) + "/alert_management_alerts/1/metric_images"
		png := []byte("\x89PNG\r\n\x1a\nnot really")
		upload := func(token, name string, content []byte, fields map[string]string) *apitest.Response {
			return s.Do(t, apitest.Request{Method: "POST", Path: base, Token: token, Multipart: fields,
				Files: map[string]apitest.File{"file": {Name: name, Content: content}}})
		}
		img := upload(dev.Token, "cpu graph.png", png, map[string]string{"url": "https://grafana.example/d/1", "url_text": "CPU"}).Want(t, 201).Object(t)
		fp, _ := img["file_path"].(string)
		if img["filename"] != "cpu_graph" || img["url"] != "https://grafana.example/d/1" || img["url_text"] != "CPU" ||
			!regexp.MustCompile(`^/uploads/-/system/alert_metric_image/file/\d+/[0-9a-f]{32}/cpu_graph\.png$`).MatchString(fp) {
			t.Errorf("uploaded %v", img)
		}
		s.Get(t, fp, "").Want(t, 200).WantText(t, string(png))
		upload(rep.Token, "a.png", png, nil).Want(t, 403)
		upload(dev.Token, "a.exe", png, nil).Want(t, 400)
		s.Do(t, apitest.Request{Method: "POST", Path: base, Token: dev.Token, Multipart: map[string]string{"url": "x"}}).Want(t, 400)
		upload(dev.Token, "a.png", png, map[string]string{"url": "ftp://x"}).Want(t, 400)
		// Past the attachment limit (1 MiB here).
		s.Do(t, apitest.Request{Method: "PUT", Path: "/application/settings", Token: s.RootToken, JSON: map[string]any{"max_attachment_size": 1}}).Want(t, 200)
		if r := upload(dev.Token, "big.png", bytes.Repeat([]byte("x"), 1<<20+1), nil); r.Status != 400 && r.Status != 413 {
			t.Errorf("oversized upload: %d", r.Status)
		}
		list := s.Get(t, base, rep.Token).Want(t, 200).Array(t)
		if len(list) != 1 || list[0]["id"] != img["id"] {
			t.Errorf("list %v", list)
		}
		s.Get(t, "/projects/"+itoa(project)+"/alert_management_alerts/9/metric_images", rep.Token).Want(t, 404).WantBody(t, `{"message":"Alert not found"}`)
		id := itoa(int64(img["id"].(float64)))
		s.Do(t, apitest.Request{Method: "PUT", Path: base + "/" + id, Token: rep.Token, JSON: map[string]any{"url_text": "no"}}).Want(t, 403)
		up := s.Do(t, apitest.Request{Method: "PUT", Path: base + "/" + id, Token: dev.Token, JSON: map[string]any{"url_text": "CPU, 5m"}}).Want(t, 200).Object(t)
		if up["url_text"] != "CPU, 5m" || up["url"] != "https://grafana.example/d/1" {
			t.Errorf("updated %v", up)
		}
		s.Do(t, apitest.Request{Method: "DELETE", Path: base + "/" + id, Token: dev.Token}).Want(t, 204)
		s.Do(t, apitest.Request{Method: "DELETE", Path: base + "/" + id, Token: dev.Token}).Want(t, 404)
		s.Get(t, fp, "").Want(t, 404)

		// A project's removal takes its images' files with it.
		kept := upload(dev.Token, "kept.png", png, nil).Want(t, 201).Object(t)["file_path"].(string)
		s.Get(t, kept, "").Want(t, 200)
		s.Do(t, apitest.Request{Method: "DELETE", Path: "/projects/" + itoa(project), Token: owner.Token}).Want(t, 202)
		eventuallyFor(t, 30*time.Second, "the removed project's image file gone", func() bool {
			return s.Get(t, kept, "").Status == 404
		})
	})
}
