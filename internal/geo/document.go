package geo

import (
	"bytes"
	"encoding/json"
	"sort"
	"time"
	"unicode/utf8"

	"quarry/internal/model"
)

// A status travels between nodes, and rests in the database, as one JSON
// object: the keys GitLab's status carries (counters by name, timestamps
// in Unix seconds), without what the receiving node adds itself (the
// node's id and selective sync, its health by time, links).

// MaxStatusDocument bounds a status document a node pushes.
const MaxStatusDocument = 64 << 10

// Bounds of a status document's values.
const (
	maxStatusText   = 255
	maxHealthText   = 1024
	maxShards       = 100
	maxStatusNumber = 1 << 53
	maxTimestamp    = 253402300799 // 9999-12-31T23:59:59Z
)

// The scalar keys of a status document.
const (
	keyHealth         = "health"
	keyMissingOAuth   = "missing_oauth_application"
	keyReplicationLag = "db_replication_lag_seconds"
	keySlots          = "replication_slots_count"
	keySlotsUsed      = "replication_slots_used_count"
	keySlotsWAL       = "replication_slots_max_retained_wal_bytes"
	keyLastEvent      = "last_event_id"
	keyLastEventAt    = "last_event_timestamp"
	keyCursor         = "cursor_last_event_id"
	keyCursorAt       = "cursor_last_event_timestamp"
	keyChecked        = "last_successful_status_check_timestamp"
	keyVersion        = "version"
	keyRevision       = "revision"
	keyProjects       = "projects_count"
	keyShards         = "storage_shards"
)

type shard struct {
	Name string `json:"name"`
}

// EncodeStatus is the document of s.
func EncodeStatus(s *model.GeoStatus) []byte {
	doc := map[string]any{
		keyHealth: s.Health, keyMissingOAuth: s.MissingOAuthApplication,
		keyReplicationLag: s.DBReplicationLagSeconds, keySlots: s.ReplicationSlotsCount, keySlotsUsed: s.ReplicationSlotsUsedCount,
		keySlotsWAL: s.ReplicationSlotsMaxRetainedWALBytes, keyLastEvent: s.LastEventID, keyLastEventAt: unixPtr(s.LastEventAt),
		keyCursor: s.CursorLastEventID, keyCursorAt: unixPtr(s.CursorLastEventAt), keyChecked: s.LastSuccessfulStatusCheckAt.Unix(),
		keyVersion: s.Version, keyRevision: s.Revision, keyProjects: s.ProjectsCount,
	}
	shards := make([]shard, len(s.StorageShards))
	for i, n := range s.StorageShards {
		shards[i] = shard{Name: n}
	}
	doc[keyShards] = shards
	for _, name := range model.GeoCounterNames() {
		doc[name] = s.Counter(name)
	}
	b, err := json.Marshal(doc)
	if err != nil {
		panic("geo: encode status: " + err.Error()) // plain values only
	}
	return b
}

func unixPtr(t *time.Time) *int64 {
	if t == nil {
		return nil
	}
	n := t.Unix()
	return &n
}

// ParseStatus reads a status document. Keys it does not know are left
// out (a newer node may send more); a known key of the wrong type or out
// of bounds is a Grape-style 400 naming it. The time of the check is
// required.
func ParseStatus(doc []byte) (model.GeoStatus, error) {
	var s model.GeoStatus
	if len(doc) > MaxStatusDocument {
		return s, model.TooLarge()
	}
	var m map[string]json.RawMessage
	d := json.NewDecoder(bytes.NewReader(doc))
	if err := d.Decode(&m); err != nil || m == nil || d.More() {
		return s, model.Param("status is invalid")
	}
	p := docParser{m: m}
	s.Health = p.text(keyHealth, maxHealthText)
	s.MissingOAuthApplication = p.boolean(keyMissingOAuth)
	s.DBReplicationLagSeconds = p.number(keyReplicationLag)
	s.ReplicationSlotsCount = p.number(keySlots)
	s.ReplicationSlotsUsedCount = p.number(keySlotsUsed)
	s.ReplicationSlotsMaxRetainedWALBytes = p.number(keySlotsWAL)
	s.LastEventID = p.number(keyLastEvent)
	s.LastEventAt = p.timestamp(keyLastEventAt)
	s.CursorLastEventID = p.number(keyCursor)
	s.CursorLastEventAt = p.timestamp(keyCursorAt)
	if at := p.timestamp(keyChecked); at != nil {
		s.LastSuccessfulStatusCheckAt = *at
	} else if p.bad == "" {
		p.bad = keyChecked + " is missing"
	}
	s.Version = p.text(keyVersion, maxStatusText)
	s.Revision = p.text(keyRevision, maxStatusText)
	s.ProjectsCount = p.number(keyProjects)
	s.StorageShards = p.shards(keyShards)
	for _, name := range model.GeoCounterNames() {
		if v := p.number(name); v != nil {
			s.SetCounter(name, *v)
		}
	}
	if p.bad != "" {
		return model.GeoStatus{}, model.Param(p.bad)
	}
	return s, nil
}

// docParser reads typed values out of a document, noting the first key
// that is wrong.
type docParser struct {
	m   map[string]json.RawMessage
	bad string
}

func (p *docParser) fail(key string) {
	if p.bad == "" {
		p.bad = key + " is invalid"
	}
}

// raw is a key's value, nil when absent or null.
func (p *docParser) raw(key string) json.RawMessage {
	v, ok := p.m[key]
	if !ok || bytes.Equal(bytes.TrimSpace(v), []byte("null")) {
		return nil
	}
	return v
}

func (p *docParser) text(key string, limit int) string {
	v := p.raw(key)
	if v == nil {
		return ""
	}
	var s string
	if err := json.Unmarshal(v, &s); err != nil || utf8.RuneCountInString(s) > limit {
		p.fail(key)
		return ""
	}
	return s
}

func (p *docParser) boolean(key string) bool {
	v := p.raw(key)
	if v == nil {
		return false
	}
	var b bool
	if err := json.Unmarshal(v, &b); err != nil {
		p.fail(key)
	}
	return b
}

func (p *docParser) integer(key string, limit int64) *int64 {
	v := p.raw(key)
	if v == nil {
		return nil
	}
	var n int64
	if err := json.Unmarshal(v, &n); err != nil || n < 0 || n > limit {
		p.fail(key)
		return nil
	}
	return &n
}

func (p *docParser) number(key string) *int64 { return p.integer(key, maxStatusNumber) }

func (p *docParser) timestamp(key string) *time.Time {
	n := p.integer(key, maxTimestamp)
	if n == nil {
		return nil
	}
	t := time.Unix(*n, 0).UTC()
	return &t
}

func (p *docParser) shards(key string) []string {
	v := p.raw(key)
	if v == nil {
		return nil
	}
	var list []shard
	if err := json.Unmarshal(v, &list); err != nil || len(list) > maxShards {
		p.fail(key)
		return nil
	}
	seen := map[string]bool{}
	var out []string
	for _, sh := range list {
		if sh.Name == "" || utf8.RuneCountInString(sh.Name) > maxStatusText {
			p.fail(key)
			return nil
		}
		if !seen[sh.Name] {
			seen[sh.Name] = true
			out = append(out, sh.Name)
		}
	}
	sort.Strings(out)
	return out
}
