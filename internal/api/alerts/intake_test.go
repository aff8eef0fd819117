package alerts

import (
	"net/http"
	"strings"
	"testing"

	"quarry/internal/alerts"
)

func TestMatchIntake(t *testing.T) {
	for _, c := range []struct {
		path, project, identifier string
		route                     alerts.Route
		ok                        bool
	}{
		{"/g/p/alerts/notify/my-tool/abc123.json", "g/p", "abc123", alerts.ByIdentifier, true},
		{"/g/sub/p/alerts/notify/x/ABC.json", "g/sub/p", "ABC", alerts.ByIdentifier, true},
		{"/g/p/alerts/notify.json", "g/p", "", alerts.Legacy, true},
		{"/g/alerts/alerts/notify.json", "g/alerts", "", alerts.Legacy, true},
		{"/g/p/prometheus/alerts/notify.json", "g/p", "", alerts.PrometheusLegacy, true},
		{"/p/alerts/notify.json", "", "", 0, false},
		{"/g/p/alerts/notify/x/ab-c.json", "", "", 0, false},
		{"/g/p/alerts/notify//abc.json", "", "", 0, false},
		{"/g/p/alerts/notify/abc.json", "", "", 0, false},
		{"/g//p/alerts/notify.json", "", "", 0, false},
		{"/api/v4/alerts/notify.json", "", "", 0, false},
		{"/g/-/p/alerts/notify.json", "", "", 0, false},
		{"/g/p/alerts/notify/x/abc.xml", "", "", 0, false},
	} {
		req, ok := MatchIntake(c.path)
		if ok != c.ok || (ok && (req.ProjectPath != c.project || req.Identifier != c.identifier || req.Route != c.route)) {
			t.Errorf("%s: %+v %v", c.path, req, ok)
		}
	}
}

func TestIntakeKey(t *testing.T) {
	for _, c := range []struct{ header, want string }{
		{"Bearer k1", "k1"},
		{"bearer   k2 ", "k2"},
		{"Basic Omsz", "k3"},         // ":k3"
		{"Basic dXNlcjprNA==", "k4"}, // "user:k4"
		{"Basic !!", ""},
		{"Token k5", ""},
		{"", ""},
	} {
		r, _ := http.NewRequest("POST", "/", nil)
		r.Header.Set("Authorization", c.header)
		if got := intakeKey(r); got != c.want {
			t.Errorf("%q: %q; want %q", c.header, got, c.want)
		}
	}
}

func FuzzMatchIntake(f *testing.F) {
	for _, s := range []string{"/g/p/alerts/notify/n/abc.json", "/g/p/alerts/notify.json", "/g/p/prometheus/alerts/notify.json", "/a/alerts/notify/alerts/notify.json"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, path string) {
		req, ok := MatchIntake(path)
		if !ok {
			return
		}
		if !strings.Contains(req.ProjectPath, "/") || strings.HasPrefix(req.ProjectPath, "/") || strings.HasSuffix(req.ProjectPath, "/") ||
			!strings.HasPrefix(path, "/"+req.ProjectPath+"/") {
			t.Fatalf("%q → project %q", path, req.ProjectPath)
		}
		if req.Route == alerts.ByIdentifier && !alnum(req.Identifier) {
			t.Fatalf("%q → identifier %q", path, req.Identifier)
		}
	})
}
