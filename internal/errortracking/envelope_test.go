package errortracking

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

func TestParseEnvelope(t *testing.T) {
	for _, c := range []struct {
		name  string
		body  string
		types []string
		last  string // the last item's payload
		bad   bool
	}{
		{"event with length", "{\"event_id\":\"x\"}\n{\"type\":\"event\",\"length\":7}\n{\"a\":1}\n", []string{"event"}, `{"a":1}`, false},
		{"no trailing newline", "{}\n{\"type\":\"event\",\"length\":7}\n{\"a\":1}", []string{"event"}, `{"a":1}`, false},
		{"without length", "{}\n{\"type\":\"event\"}\n{\"a\":1}\n{\"type\":\"session\"}\n{}\n", []string{"event", "session"}, `{}`, false},
		{"length holding newlines", "{}\n{\"type\":\"attachment\",\"length\":5}\na\nb\nc\n{\"type\":\"event\",\"length\":2}\n{}", []string{"attachment", "event"}, `{}`, false},
		{"header only", "{}\n", nil, "", false},
		{"no header", "", nil, "", true},
		{"header not JSON", "nope\n", nil, "", true},
		{"header an array", "[]\n", nil, "", true},
		{"item header not JSON", "{}\nxx\n{}\n", nil, "", true},
		{"item without type", "{}\n{\"length\":2}\n{}\n", nil, "", true},
		{"length past the end", "{}\n{\"type\":\"event\",\"length\":99}\n{}\n", nil, "", true},
		{"negative length", "{}\n{\"type\":\"event\",\"length\":-1}\n{}\n", nil, "", true},
		{"fractional length", "{}\n{\"type\":\"event\",\"length\":1.5}\n{}\n", nil, "", true},
	} {
		items, err := ParseEnvelope([]byte(c.body))
		if (err != nil) != c.bad {
			t.Errorf("%s: err = %v; want failure %v", c.name, err, c.bad)
			continue
		}
		var types []string
		for _, it := range items {
			types = append(types, it.Type)
		}
		if strings.Join(types, ",") != strings.Join(c.types, ",") {
			t.Errorf("%s: types %v; want %v", c.name, types, c.types)
		}
		if len(items) > 0 && string(items[len(items)-1].Payload) != c.last {
			t.Errorf("%s: last payload %q; want %q", c.name, items[len(items)-1].Payload, c.last)
		}
	}
	many := "{}\n" + strings.Repeat("{\"type\":\"session\"}\n{}\n", maxItems+1)
	if _, err := ParseEnvelope([]byte(many)); err == nil {
		t.Errorf("%d items: accepted", maxItems+1)
	}
}

func FuzzParseEnvelope(f *testing.F) {
	f.Add([]byte("{\"event_id\":\"x\"}\n{\"type\":\"event\",\"length\":7}\n{\"a\":1}\n"))
	f.Add([]byte("{}\n{\"type\":\"event\"}\n{\"exception\":{\"values\":[{\"type\":\"E\"}]}}\n"))
	f.Add([]byte("{}\n{\"type\":\"attachment\",\"length\":3}\n\n\n\n"))
	f.Add([]byte("{}\n{\"type\":\"x\",\"length\":1e3}\n"))
	f.Fuzz(func(t *testing.T, body []byte) {
		items, err := ParseEnvelope(body)
		if err != nil {
			return
		}
		if len(items) > maxItems {
			t.Fatalf("%d items", len(items))
		}
		for _, it := range items {
			if it.Type == "" || !bytes.Contains(body, it.Payload) {
				t.Fatalf("item %q: payload not from the body", it.Type)
			}
		}
	})
}

func TestReport(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, c := range []struct {
		name, event                   string
		wantName, wantDesc, wantActor string
		wantPlatform                  string
		wantAt                        time.Time
		err                           error
	}{
		{"exception, culprit from the last frame",
			`{"platform":"ruby","timestamp":"2021-09-06T16:24:32Z","exception":{"values":[{"type":"ActionView::MissingTemplate","value":"Missing template posts/edit","stacktrace":{"frames":[{"function":"a","module":"m"},{"function":"edit","module":"PostsController"}]}}]}}`,
			"ActionView::MissingTemplate", "Missing template posts/edit", "edit(PostsController)", "ruby", time.Date(2021, 9, 6, 16, 24, 32, 0, time.UTC), nil},
		{"transaction is the culprit",
			`{"transaction":"PostsController#show","timestamp":1630945472.25,"exception":{"values":[{"type":"E","value":"v","stacktrace":{"frames":[{"function":"f","module":"m"}]}}]}}`,
			"E", "v", "PostsController#show", "", time.Unix(1630945472, 250000000).UTC(), nil},
		{"numeric string timestamp", `{"timestamp":"1630945472","exception":{"values":[{"type":"E"}]}}`,
			"E", "", "unknown", "", time.Unix(1630945472, 0).UTC(), nil},
		{"legacy exception list", `{"exception":[{"type":"E","value":"v"}],"culprit":"here"}`, "E", "v", "here", "", now, nil},
		{"message string", `{"message":"disk full\nsecond line","logger":"app"}`, "disk full", "disk full\nsecond line", "app", "", now, nil},
		{"message object", `{"message":{"formatted":"hello 1","message":"hello %d"}}`, "hello 1", "hello 1", "unknown", "", now, nil},
		{"logentry", `{"logentry":{"message":"raw"}}`, "raw", "raw", "unknown", "", now, nil},
		{"exception without type", `{"exception":{"values":[{"value":"v"}]}}`, "Error", "v", "unknown", "", now, nil},
		{"neither", `{"platform":"go"}`, "", "", "", "", now, errUnsupported},
		{"empty exception list", `{"exception":{"values":[]}}`, "", "", "", "", now, errUnsupported},
		{"not JSON", `{"a":`, "", "", "", "", now, errParse},
		{"two documents", `{} {}`, "", "", "", "", now, errParse},
	} {
		r, err := report(7, []byte(c.event), now)
		if err != c.err {
			t.Errorf("%s: err = %v; want %v", c.name, err, c.err)
			continue
		}
		if err != nil {
			continue
		}
		if r.Name != c.wantName || r.Description != c.wantDesc || r.Actor != c.wantActor || r.Platform != c.wantPlatform ||
			r.OccurredAt != c.wantAt.UnixMicro() || r.ProjectID != 7 {
			t.Errorf("%s: got %q %q %q %q %v", c.name, r.Name, r.Description, r.Actor, r.Platform, time.UnixMicro(r.OccurredAt).UTC())
		}
	}
	long := `{"exception":{"values":[{"type":"` + strings.Repeat("é", 300) + `","value":"` + strings.Repeat("v", 2000) + `"}]}}`
	r, err := report(1, []byte(long), now)
	if err != nil || len([]rune(r.Name)) != maxName || len(r.Description) != maxDescription {
		t.Errorf("long values: %v %d %d", err, len([]rune(r.Name)), len(r.Description))
	}
}

func FuzzReport(f *testing.F) {
	f.Add([]byte(`{"exception":{"values":[{"type":"E","value":"v","stacktrace":{"frames":[{"function":"f","module":"m"}]}}]},"timestamp":1630945472.13}`))
	f.Add([]byte(`{"message":"m","timestamp":"2021-09-06T16:24:32.123Z","environment":"prod","level":"warning"}`))
	f.Add([]byte(`{"exception":[{"type":"\xff"}],"timestamp":-5}`))
	f.Fuzz(func(t *testing.T, event []byte) {
		r, err := report(1, event, time.Unix(0, 0))
		if err != nil {
			return
		}
		if r.Name == "" || r.Actor == "" || len([]rune(r.Name)) > maxName || len([]rune(r.Description)) > maxDescription || len([]rune(r.Actor)) > maxActor {
			t.Fatalf("report %+v", r)
		}
	})
}
