package alerts

import (
	"bytes"
	"crypto/sha1"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"quarry/internal/model"
)

// Payload limits: GitLab's deep-size check (1 MiB, 100 levels) applied to
// the request body before it is decoded.
const (
	MaxPayloadBytes = 1 << 20
	MaxPayloadDepth = 100
	// MaxPrometheusAlerts is how many alerts of one Alertmanager
	// notification are processed; the rest are dropped.
	MaxPrometheusAlerts = 100
)

// Truncation lengths of the alert's fields (GitLab's, in characters).
const (
	maxTitle       = 200
	maxDescription = 1_000
	maxService     = 100
	maxTool        = 100
	maxHosts       = 255
	maxEnvironment = 255
	maxRunbook     = 1_000
)

// DefaultTitle is the title of an alert whose payload has none.
const DefaultTitle = "New: Alert"

// PrometheusTool is the monitoring tool of alerts from Alertmanager.
const PrometheusTool = "Prometheus"

// Normalized is what the intake makes of one alert payload.
type Normalized struct {
	Title, Description, Service, MonitoringTool, Environment, Runbook string
	Hosts                                                             []string
	Severity                                                          model.AlertSeverity
	StartedAt                                                         time.Time
	// Resolving says the payload ends the alert; EndedAt is when (nil:
	// now).
	Resolving bool
	EndedAt   *time.Time
	// Fingerprint is the SHA-1 (hex) grouping occurrences; "" for none.
	Fingerprint string
}

// Decode checks a body against the payload limits and decodes it: a JSON
// object whose numbers stay json.Number. Any refusal is a 400.
func Decode(body []byte) (map[string]any, error) {
	if len(body) > MaxPayloadBytes || !depthWithin(body, MaxPayloadDepth) {
		return nil, model.BadRequest("payload too large")
	}
	d := json.NewDecoder(bytes.NewReader(body))
	d.UseNumber()
	var v map[string]any
	if err := d.Decode(&v); err != nil || v == nil {
		return nil, model.BadRequest("payload is not a JSON object")
	}
	if _, err := d.Token(); err == nil {
		return nil, model.BadRequest("payload is not one JSON object")
	}
	return v, nil
}

// depthWithin reports whether the JSON text b nests arrays and objects at
// most max levels deep (strings skipped; malformed text is the decoder's
// to refuse).
func depthWithin(b []byte, max int) bool {
	depth, inString, escaped := 0, false, false
	for _, c := range b {
		switch {
		case inString:
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
		case c == '"':
			inString = true
		case c == '{' || c == '[':
			depth++
			if depth > max {
				return false
			}
		case c == '}' || c == ']':
			depth--
		}
	}
	return true
}

// severities maps a payload's severity (lower-cased) to the alert's.
var severities = map[string]model.AlertSeverity{
	"critical": model.SeverityCritical, "high": model.SeverityHigh, "medium": model.SeverityMedium,
	"low": model.SeverityLow, "info": model.SeverityInfo, "unknown": model.SeverityUnknown,
}

// prometheusSeverities adds Alertmanager's usual labels (GitLab's
// additional mapping for Prometheus alerts).
var prometheusSeverities = map[string]model.AlertSeverity{
	"s1": model.SeverityCritical, "s2": model.SeverityHigh, "s3": model.SeverityMedium, "s4": model.SeverityLow, "s5": model.SeverityInfo,
	"p1": model.SeverityCritical, "p2": model.SeverityHigh, "p3": model.SeverityMedium, "p4": model.SeverityLow, "p5": model.SeverityInfo,
	"debug": model.SeverityInfo, "information": model.SeverityInfo, "notice": model.SeverityInfo,
	"warn": model.SeverityLow, "warning": model.SeverityLow, "minor": model.SeverityLow,
	"error": model.SeverityMedium, "major": model.SeverityHigh, "emergency": model.SeverityCritical,
	"fatal": model.SeverityCritical, "alert": model.SeverityMedium, "page": model.SeverityHigh,
}

func severity(v any, prometheus bool) model.AlertSeverity {
	s, ok := v.(string)
	if !ok {
		return model.SeverityCritical
	}
	s = strings.ToLower(strings.TrimSpace(s))
	if sv, ok := severities[s]; ok {
		return sv
	}
	if sv, ok := prometheusSeverities[s]; ok && prometheus {
		return sv
	}
	return model.SeverityCritical
}

// fingerprintExcluded are the keys a payload without a fingerprint is
// hashed without: they change between occurrences of one alert.
var fingerprintExcluded = []string{"start_time", "end_time", "hosts"}

// Generic normalizes a payload of the generic HTTP endpoint: the spec's
// fields, or where the integration maps a field, the value at its path.
// now stands in for a missing start time.
func Generic(payload map[string]any, mappings []model.AlertMapping, now time.Time) Normalized {
	get := func(field string, keys ...string) any {
		for _, m := range mappings {
			if m.FieldName == field {
				return present(dig(payload, m.Path))
			}
		}
		for _, k := range keys {
			if v := present(payload[k]); v != nil {
				return v
			}
		}
		return nil
	}
	n := Normalized{
		Title:          truncate(text(get("title", "title")), maxTitle, "..."),
		Description:    truncate(text(get("description", "description")), maxDescription, "..."),
		Service:        truncate(text(get("service", "service")), maxService, "..."),
		MonitoringTool: truncate(text(get("monitoring_tool", "monitoring_tool")), maxTool, "..."),
		Environment:    truncate(text(get("gitlab_environment_name", "gitlab_environment_name", "service_environment_name")), maxEnvironment, ""),
		Runbook:        truncate(text(payload["runbook"]), maxRunbook, "..."),
		Hosts:          hosts(get("hosts", "hosts")),
		Severity:       severity(get("severity", "severity"), false),
		StartedAt:      now.UTC(),
	}
	if n.Title == "" {
		n.Title = DefaultTitle
	}
	if t, ok := parseTime(get("start_time", "start_time"), false); ok {
		n.StartedAt = t
	}
	if t, ok := parseTime(get("end_time", "end_time"), true); ok {
		n.Resolving, n.EndedAt = true, &t
	}
	if fp := get("fingerprint", "fingerprint"); fp != nil {
		n.Fingerprint = fingerprint(fp)
	} else {
		rest := make(map[string]any, len(payload))
		for k, v := range payload {
			rest[k] = v
		}
		for _, k := range fingerprintExcluded {
			delete(rest, k)
		}
		if len(rest) > 0 {
			b, err := json.Marshal(rest) // keys sorted: a canonical text
			if err == nil {
				n.Fingerprint = sha1Hex(string(b))
			}
		}
	}
	return n
}

// IsPrometheus reports whether a payload is an Alertmanager webhook
// notification GitLab processes: version "4" and all of its keys.
func IsPrometheus(payload map[string]any) bool {
	for _, k := range []string{"version", "groupKey", "status", "receiver", "groupLabels", "commonLabels", "commonAnnotations", "externalURL", "alerts"} {
		if _, ok := payload[k]; !ok {
			return false
		}
	}
	return payload["version"] == "4"
}

// PrometheusAlerts returns the alerts of an Alertmanager notification (at
// most MaxPrometheusAlerts; entries that are not objects dropped).
func PrometheusAlerts(payload map[string]any) []map[string]any {
	list, _ := payload["alerts"].([]any)
	var out []map[string]any
	for _, v := range list {
		if len(out) == MaxPrometheusAlerts {
			break
		}
		if m, ok := v.(map[string]any); ok {
			out = append(out, m)
		}
	}
	return out
}

// Prometheus normalizes one alert of an Alertmanager notification as
// GitLab does; ok is false when it has no title or no startsAt (GitLab's
// required attributes).
func Prometheus(alert map[string]any, now time.Time) (n Normalized, ok bool) {
	labels, _ := alert["labels"].(map[string]any)
	annotations, _ := alert["annotations"].(map[string]any)
	first := func(vs ...any) any {
		for _, v := range vs {
			if v = present(v); v != nil {
				return v
			}
		}
		return nil
	}
	title := text(first(annotations["title"], annotations["summary"], labels["alertname"]))
	startsRaw := text(present(alert["startsAt"]))
	if title == "" || startsRaw == "" {
		return n, false
	}
	n = Normalized{
		Title:          truncate(title, maxTitle, "..."),
		Description:    truncate(text(present(annotations["description"])), maxDescription, "..."),
		MonitoringTool: PrometheusTool,
		Environment:    truncate(text(present(labels["gitlab_environment_name"])), maxEnvironment, ""),
		Runbook:        truncate(text(present(annotations["runbook"])), maxRunbook, "..."),
		Severity:       severity(labels["severity"], true),
		StartedAt:      now.UTC(),
	}
	if t, ok := parseTime(startsRaw, false); ok {
		n.StartedAt = t
	}
	if alert["status"] == "resolved" {
		n.Resolving = true
		// Alertmanager's "no end" is the zero time.
		if t, ok := parseTime(alert["endsAt"], false); ok && t.Year() > 1 {
			n.EndedAt = &t
		}
	}
	// GitLab's fingerprint of a Prometheus alert: its start, title and
	// query (g0.expr of the generator URL), joined by "/".
	query := ""
	if g, ok := alert["generatorURL"].(string); ok {
		if u, err := url.Parse(g); err == nil {
			query = u.Query().Get("g0.expr")
		}
	}
	n.Fingerprint = sha1Hex(startsRaw + "/" + title + "/" + query)
	return n, true
}

// dig follows path through objects (string steps) and arrays (number
// steps); nil when the path leads nowhere.
func dig(v any, path []any) any {
	if len(path) == 0 {
		return nil
	}
	for _, step := range path {
		switch s := step.(type) {
		case string:
			m, ok := v.(map[string]any)
			if !ok {
				return nil
			}
			v = m[s]
		case float64, json.Number, int:
			a, ok := v.([]any)
			i, ok2 := index(s)
			if !ok || !ok2 || i < 0 || i >= len(a) {
				return nil
			}
			v = a[i]
		default:
			return nil
		}
	}
	return v
}

func index(s any) (int, bool) {
	switch x := s.(type) {
	case int:
		return x, true
	case float64:
		if x != float64(int(x)) {
			return 0, false
		}
		return int(x), true
	case json.Number:
		n, err := strconv.Atoi(x.String())
		return n, err == nil
	}
	return 0, false
}

// present is v unless it is blank (nil, "", whitespace, an empty array or
// object), Ruby's presence.
func present(v any) any {
	switch x := v.(type) {
	case nil:
		return nil
	case string:
		if strings.TrimSpace(x) == "" {
			return nil
		}
	case []any:
		if len(x) == 0 {
			return nil
		}
	case map[string]any:
		if len(x) == 0 {
			return nil
		}
	case bool:
		if !x {
			return nil
		}
	}
	return v
}

// text is a value as text: strings as they are, numbers and booleans as
// written, arrays and objects as JSON.
func text(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case json.Number:
		return x.String()
	case bool:
		return strconv.FormatBool(x)
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// flatten appends the leaves of nested arrays as text.
func flatten(v any, out []string) []string {
	if a, ok := v.([]any); ok {
		for _, e := range a {
			out = flatten(e, out)
		}
		return out
	}
	return append(out, text(v))
}

// hosts is a string or an array as a list of hosts, cut to maxHosts
// characters in all (later hosts shortened, then dropped).
func hosts(v any) []string {
	if v == nil {
		return nil
	}
	hs := flatten(v, nil)
	total := 0
	out := make([]string, 0, len(hs))
	for _, h := range hs {
		left := maxHosts - total
		if left <= 0 {
			break
		}
		h = truncate(h, left, "")
		total += utf8.RuneCountInString(h)
		out = append(out, h)
	}
	return out
}

// fingerprint hashes a payload's fingerprint: an array's leaves joined,
// anything else as text.
func fingerprint(v any) string {
	return sha1Hex(strings.Join(flatten(v, nil), ""))
}

func sha1Hex(s string) string {
	sum := sha1.Sum([]byte(s))
	return hex.EncodeToString(sum[:])
}

// truncate cuts s to n characters, the last of them omission (Ruby's
// String#truncate). Invalid UTF-8 is replaced first.
func truncate(s string, n int, omission string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	keep := n - utf8.RuneCountInString(omission)
	if keep < 0 {
		keep = 0
	}
	i := 0
	for j := range s {
		if i == keep {
			return s[:j] + omission
		}
		i++
	}
	return s + omission
}

// timeLayouts are the time texts a payload may hold (ISO 8601 and its
// common relatives).
var timeLayouts = []string{time.RFC3339Nano, "2006-01-02T15:04:05.999999999", "2006-01-02 15:04:05.999999999Z07:00",
	"2006-01-02 15:04:05.999999999 -0700", "2006-01-02 15:04:05.999999999 MST", "2006-01-02 15:04:05.999999999",
	"2006-01-02T15:04Z07:00", "2006-01-02", time.RFC1123Z, time.RFC1123}

// parseTime reads a time: a text in one of timeLayouts, or where
// epochMillis is set also a number (or digits) of milliseconds since the
// epoch. ok is false for anything else.
func parseTime(v any, epochMillis bool) (time.Time, bool) {
	var s string
	switch x := v.(type) {
	case string:
		s = strings.TrimSpace(x)
	case json.Number:
		s = x.String()
	default:
		return time.Time{}, false
	}
	if s == "" || len(s) > 64 {
		return time.Time{}, false
	}
	if epochMillis && strings.Trim(s, "0123456789") == "" {
		ms, err := strconv.ParseInt(s, 10, 64)
		if err != nil || ms > 253402300799999 {
			return time.Time{}, false
		}
		return time.UnixMilli(ms).UTC(), true
	}
	for _, l := range timeLayouts {
		if t, err := time.Parse(l, s); err == nil {
			if t.Year() > 9999 {
				return time.Time{}, false
			}
			return t.UTC(), true
		}
	}
	return time.Time{}, false
}
