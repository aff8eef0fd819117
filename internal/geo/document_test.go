package geo

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"quarry/internal/model"
)

func TestStatusDocument_roundTrip(t *testing.T) {
	at := time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)
	lag := int64(3)
	var s model.GeoStatus
	s.Health = model.GeoHealthy
	s.DBReplicationLagSeconds = &lag
	s.LastEventAt = &at
	s.LastSuccessfulStatusCheckAt = at
	s.Version, s.Revision = "17.5.0", "abcdef12"
	s.StorageShards = []string{"default", "fast"}
	s.SetCounter("repositories_count", 4)
	s.SetCounter("repositories_synced_count", 3)
	doc := EncodeStatus(&s)
	got, err := ParseStatus(doc)
	if err != nil {
		t.Fatal(err)
	}
	if again := EncodeStatus(&got); !bytes.Equal(again, doc) {
		t.Errorf("round trip:\n%s\n%s", doc, again)
	}
	if *got.Counter("repositories_synced_count") != 3 || got.Counter("wikis_count") != nil || *got.DBReplicationLagSeconds != 3 ||
		!got.LastEventAt.Equal(at) || got.CursorLastEventAt != nil {
		t.Errorf("parsed %+v", got)
	}
	var m map[string]any
	if err := json.Unmarshal(doc, &m); err != nil {
		t.Fatal(err)
	}
	for _, name := range model.GeoCounterNames() {
		if _, ok := m[name]; !ok {
			t.Errorf("document lacks %s", name)
		}
	}
}

func TestParseStatus_invalid(t *testing.T) {
	ok := `"last_successful_status_check_timestamp": 1714564800`
	for _, c := range []struct {
		doc, want string
	}{
		{`[]`, "status is invalid"},
		{`null`, "status is invalid"},
		{`{} {}`, "status is invalid"},
		{`{`, "status is invalid"},
		{`{}`, "last_successful_status_check_timestamp is missing"},
		{`{"last_successful_status_check_timestamp": "soon"}`, "last_successful_status_check_timestamp is invalid"},
		{`{"last_successful_status_check_timestamp": -1}`, "last_successful_status_check_timestamp is invalid"},
		{`{"last_successful_status_check_timestamp": 1e30}`, "last_successful_status_check_timestamp is invalid"},
		{`{` + ok + `, "repositories_count": 1.5}`, "repositories_count is invalid"},
		{`{` + ok + `, "repositories_count": -1}`, "repositories_count is invalid"},
		{`{` + ok + `, "repositories_count": "3"}`, "repositories_count is invalid"},
		{`{` + ok + `, "wikis_failed_count": 9007199254740993}`, "wikis_failed_count is invalid"},
		{`{` + ok + `, "health": 5}`, "health is invalid"},
		{`{` + ok + `, "health": "` + strings.Repeat("h", 1025) + `"}`, "health is invalid"},
		{`{` + ok + `, "version": "` + strings.Repeat("v", 256) + `"}`, "version is invalid"},
		{`{` + ok + `, "missing_oauth_application": "no"}`, "missing_oauth_application is invalid"},
		{`{` + ok + `, "storage_shards": [{"name": ""}]}`, "storage_shards is invalid"},
		{`{` + ok + `, "storage_shards": "default"}`, "storage_shards is invalid"},
		{`{` + ok + `, "storage_shards": [` + strings.Repeat(`{"name":"a"},`, 100) + `{"name":"b"}]}`, "storage_shards is invalid"},
	} {
		_, err := ParseStatus([]byte(c.doc))
		if model.KindOf(err) != model.KindParam || err.Error() != c.want {
			t.Errorf("ParseStatus(%.60s): %v; want %q", c.doc, err, c.want)
		}
	}
	if _, err := ParseStatus(bytes.Repeat([]byte(" "), MaxStatusDocument+1)); model.KindOf(err) != model.KindTooLarge {
		t.Errorf("a document past the bound: %v", err)
	}
	// Unknown keys are left out; nulls are nil.
	s, err := ParseStatus([]byte(`{` + ok + `, "future_key": {"a": [1]}, "repositories_count": null, "storage_shards": [{"name":"b"},{"name":"a"},{"name":"b"}]}`))
	if err != nil || s.Counter("repositories_count") != nil || len(s.StorageShards) != 2 || s.StorageShards[0] != "a" {
		t.Errorf("lenient parse: %+v, %v", s, err)
	}
}

// FuzzParseStatus: any document either parses to a status whose own
// document parses to the same, or is refused as a classified 400 or 413.
func FuzzParseStatus(f *testing.F) {
	var s model.GeoStatus
	s.LastSuccessfulStatusCheckAt = time.Unix(1714564800, 0)
	s.SetCounter("job_artifacts_count", 2)
	f.Add(EncodeStatus(&s))
	f.Add([]byte(`{"last_successful_status_check_timestamp": 1, "storage_shards": [{"name": "x"}]}`))
	f.Add([]byte(`{"a":[[[[[]]]]]}`))
	f.Fuzz(func(t *testing.T, doc []byte) {
		st, err := ParseStatus(doc)
		if err != nil {
			if k := model.KindOf(err); k != model.KindParam && k != model.KindTooLarge {
				t.Fatalf("ParseStatus(%q): unclassified %v", doc, err)
			}
			return
		}
		enc := EncodeStatus(&st)
		again, err := ParseStatus(enc)
		if err != nil || !bytes.Equal(EncodeStatus(&again), enc) {
			t.Fatalf("ParseStatus(%q): its document %s does not read back: %v", doc, enc, err)
		}
	})
}
