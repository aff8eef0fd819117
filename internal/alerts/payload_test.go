package alerts

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"quarry/internal/model"
)

var testNow = time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)

func mustDecode(t testing.TB, s string) map[string]any {
	t.Helper()
	v, err := Decode([]byte(s))
	if err != nil {
		t.Fatalf("decode %s: %v", s, err)
	}
	return v
}

func TestGeneric(t *testing.T) {
	sha1ab := "da23614e02469a0d7c7bd1bdab5c9c474b1904dc"
	for _, c := range []struct {
		name, payload string
		check         func(n Normalized) bool
	}{
		{"defaults", `{}`, func(n Normalized) bool {
			return n.Title == DefaultTitle && n.Severity == model.SeverityCritical && n.StartedAt.Equal(testNow) && n.Fingerprint == "" && !n.Resolving
		}},
		{"blank title", `{"title":"  "}`, func(n Normalized) bool { return n.Title == DefaultTitle }},
		{"severity any case", `{"severity":"MeDiUm"}`, func(n Normalized) bool { return n.Severity == model.SeverityMedium }},
		{"severity unknown", `{"severity":"unknown"}`, func(n Normalized) bool { return n.Severity == model.SeverityUnknown }},
		{"severity not listed", `{"severity":"warning"}`, func(n Normalized) bool { return n.Severity == model.SeverityCritical }},
		{"severity not a string", `{"severity":3}`, func(n Normalized) bool { return n.Severity == model.SeverityCritical }},
		{"fingerprint string", `{"fingerprint":"ab"}`, func(n Normalized) bool { return n.Fingerprint == sha1ab }},
		{"fingerprint array", `{"fingerprint":["a",["b"]]}`, func(n Normalized) bool { return n.Fingerprint == sha1ab }},
		{"fingerprint number", `{"fingerprint":12}`, func(n Normalized) bool { return n.Fingerprint == sha1Hex("12") }},
		{"fingerprint empty array", `{"fingerprint":[],"a":1}`, func(n Normalized) bool { return n.Fingerprint == sha1Hex(`{"a":1,"fingerprint":[]}`) }},
		{"payload hash ignores times and hosts", `{"b":2,"a":1,"start_time":"x","end_time":"y","hosts":"h"}`, func(n Normalized) bool {
			return n.Fingerprint == sha1Hex(`{"a":1,"b":2}`)
		}},
		{"start time", `{"start_time":"2024-01-02T03:04:05+02:00"}`, func(n Normalized) bool {
			return n.StartedAt.Equal(time.Date(2024, 1, 2, 1, 4, 5, 0, time.UTC))
		}},
		{"bad start time", `{"start_time":"yesterday"}`, func(n Normalized) bool { return n.StartedAt.Equal(testNow) }},
		{"end time iso", `{"end_time":"2024-01-02 03:04:05"}`, func(n Normalized) bool {
			return n.Resolving && n.EndedAt.Equal(time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC))
		}},
		{"end time epoch ms", `{"end_time":1704164645000}`, func(n Normalized) bool {
			return n.Resolving && n.EndedAt.Equal(time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC))
		}},
		{"end time epoch ms text", `{"end_time":"1704164645000"}`, func(n Normalized) bool { return n.Resolving }},
		{"end time unparsable", `{"end_time":"soon"}`, func(n Normalized) bool { return !n.Resolving }},
		{"hosts string", `{"hosts":"h1"}`, func(n Normalized) bool { return len(n.Hosts) == 1 && n.Hosts[0] == "h1" }},
		{"hosts nested", `{"hosts":["h1",["h2",3]]}`, func(n Normalized) bool { return strings.Join(n.Hosts, ",") == "h1,h2,3" }},
		{"title truncated", `{"title":"` + strings.Repeat("é", 300) + `"}`, func(n Normalized) bool {
			return utf8.RuneCountInString(n.Title) == 200 && strings.HasSuffix(n.Title, "...")
		}},
		{"environment spec name", `{"service_environment_name":"prod"}`, func(n Normalized) bool { return n.Environment == "prod" }},
		{"environment gitlab name first", `{"service_environment_name":"a","gitlab_environment_name":"b"}`, func(n Normalized) bool { return n.Environment == "b" }},
		{"title number", `{"title":42}`, func(n Normalized) bool { return n.Title == "42" }},
	} {
		t.Run(c.name, func(t *testing.T) {
			if n := Generic(mustDecode(t, c.payload), nil, testNow); !c.check(n) {
				t.Errorf("%s → %+v", c.payload, n)
			}
		})
	}
}

func TestGeneric_mapping(t *testing.T) {
	ms := []model.AlertMapping{
		{FieldName: "title", Path: []any{"a", "b"}},
		{FieldName: "hosts", Path: []any{"list", 1}},
		{FieldName: "end_time", Path: []any{"closed"}},
	}
	n := Generic(mustDecode(t, `{"title":"no","a":{"b":"yes"},"list":["x",["h1","h2"]],"end_time":"2024-01-01T00:00:00Z"}`), ms, testNow)
	if n.Title != "yes" || strings.Join(n.Hosts, ",") != "h1,h2" || n.Resolving {
		t.Errorf("mapped %+v", n)
	}
	// A mapped path that leads nowhere is a missing value.
	n = Generic(mustDecode(t, `{"title":"no","list":[]}`), ms, testNow)
	if n.Title != DefaultTitle || n.Hosts != nil {
		t.Errorf("missing %+v", n)
	}
}

func TestDecode_limits(t *testing.T) {
	for _, c := range []struct {
		name, body string
		ok         bool
	}{
		{"object", `{"a":1}`, true},
		{"depth 100", strings.Repeat(`[`, 99) + strings.Repeat(`]`, 99) + ``, false},
		{"depth 100 in object", `{"a":` + strings.Repeat(`[`, 99) + strings.Repeat(`]`, 99) + `}`, true},
		{"depth 101", `{"a":` + strings.Repeat(`[`, 100) + strings.Repeat(`]`, 100) + `}`, false},
		{"brackets in strings", `{"a":"` + strings.Repeat(`[`, 200) + `"}`, true},
		{"too large", `{"a":"` + strings.Repeat("x", MaxPayloadBytes) + `"}`, false},
		{"two values", `{}{}`, false},
		{"null", `null`, false},
		{"array", `[]`, false},
	} {
		_, err := Decode([]byte(c.body))
		if (err == nil) != c.ok {
			t.Errorf("%s: %v; want ok %v", c.name, err, c.ok)
		}
	}
}

func TestPrometheus(t *testing.T) {
	alert := mustDecode(t, `{"status":"resolved","labels":{"alertname":"A","severity":"Warning"},"annotations":{},`+
		`"startsAt":"2024-05-01T10:00:00Z","endsAt":"2024-05-01T11:00:00Z","generatorURL":"http://p/graph?g0.expr=up+%3D%3D+0"}`)
	n, ok := Prometheus(alert, testNow)
	if !ok || n.Title != "A" || n.Severity != model.SeverityLow || !n.Resolving || n.EndedAt == nil ||
		n.Fingerprint != sha1Hex("2024-05-01T10:00:00Z/A/up == 0") || n.MonitoringTool != PrometheusTool {
		t.Errorf("%+v %v", n, ok)
	}
	firing := mustDecode(t, `{"status":"firing","labels":{"alertname":"A","severity":"p2"},"annotations":{"title":"T","summary":"S"},`+
		`"startsAt":"2024-05-01T10:00:00Z","endsAt":"0001-01-01T00:00:00Z"}`)
	if n, ok = Prometheus(firing, testNow); !ok || n.Title != "T" || n.Severity != model.SeverityHigh || n.Resolving {
		t.Errorf("%+v", n)
	}
	if _, ok := Prometheus(mustDecode(t, `{"labels":{"alertname":"A"}}`), testNow); ok {
		t.Errorf("no startsAt accepted")
	}
	if _, ok := Prometheus(mustDecode(t, `{"startsAt":"2024-05-01T10:00:00Z"}`), testNow); ok {
		t.Errorf("no title accepted")
	}
}

// checkNormalized holds what every normalized payload keeps to.
func checkNormalized(t *testing.T, n Normalized) {
	t.Helper()
	if n.Title == "" || utf8.RuneCountInString(n.Title) > maxTitle || utf8.RuneCountInString(n.Description) > maxDescription ||
		utf8.RuneCountInString(n.Service) > maxService || utf8.RuneCountInString(n.MonitoringTool) > maxTool {
		t.Fatalf("lengths %+v", n)
	}
	if utf8.RuneCountInString(strings.Join(n.Hosts, "")) > maxHosts {
		t.Fatalf("hosts %q", n.Hosts)
	}
	if n.Fingerprint != "" && len(n.Fingerprint) != 40 {
		t.Fatalf("fingerprint %q", n.Fingerprint)
	}
	if n.Severity < model.SeverityCritical || n.Severity > model.SeverityUnknown {
		t.Fatalf("severity %d", n.Severity)
	}
	if !utf8.ValidString(n.Title) || !utf8.ValidString(n.Description) {
		t.Fatalf("invalid text %+v", n)
	}
}

func FuzzNormalize(f *testing.F) {
	for _, s := range []string{`{}`, `{"title":"t","severity":"HIGH","hosts":["a",["b"]],"fingerprint":[1,"x"],"end_time":1700000000000}`,
		`{"start_time":"2024-01-01","end_time":"2024-01-02T00:00:00Z","service":"s","monitoring_tool":"m"}`,
		alertmanagerSeed, `{"title":"\xff\xfe"}`, `{"hosts":"` + strings.Repeat("h", 300) + `"}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		p, err := Decode(body)
		if err != nil {
			return
		}
		checkNormalized(t, Generic(p, nil, testNow))
		if IsPrometheus(p) {
			for _, a := range PrometheusAlerts(p) {
				if n, ok := Prometheus(a, testNow); ok {
					checkNormalized(t, n)
				}
			}
		}
	})
}

const alertmanagerSeed = `{"version":"4","groupKey":"g","status":"firing","receiver":"r","groupLabels":{},"commonLabels":{},` +
	`"commonAnnotations":{},"externalURL":"http://am","alerts":[{"status":"firing","labels":{"alertname":"A","severity":"warning"},` +
	`"annotations":{"summary":"S"},"startsAt":"2024-05-01T10:00:00Z","endsAt":"0001-01-01T00:00:00Z","generatorURL":"http://p/graph?g0.expr=up"}]}`

func FuzzMappingPath(f *testing.F) {
	f.Add([]byte(`[{"field_name":"title","path":["a",0,"b"]}]`), []byte(`{"a":[{"b":"t"}]}`))
	f.Add([]byte(`[{"field_name":"hosts","path":["h"],"type":"array"},{"field_name":"end_time","path":["e"],"type":"datetime"}]`), []byte(`{"h":["x"],"e":1}`))
	f.Add([]byte(`[{"field_name":"fingerprint","path":[1.5,-1,"x"]}]`), []byte(`[]`))
	f.Fuzz(func(t *testing.T, mappings, body []byte) {
		var ms []model.AlertMapping
		d := json.NewDecoder(strings.NewReader(string(mappings)))
		d.UseNumber()
		if err := d.Decode(&ms); err != nil || ValidateMappings(ms) != nil {
			return
		}
		p, err := Decode(body)
		if err != nil {
			return
		}
		checkNormalized(t, Generic(p, normalizeMappings(ms), testNow))
	})
}
