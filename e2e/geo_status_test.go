package e2e

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"quarry/internal/apitest"
	"quarry/internal/app"
	"quarry/internal/buildinfo"
	"quarry/internal/geo"
	"quarry/internal/model"
	"quarry/internal/secrets"
)

// geoStatusKeys are the keys of a node status, each with its JSON type:
// GitLab's scalars, every counter of every kind (a number or null) and
// every percentage (a string).
func geoStatusKeys() map[string]string {
	keys := map[string]string{
		"geo_node_id": "number", "healthy": "bool", "health": "string", "health_status": "string",
		"missing_oauth_application": "bool", "db_replication_lag_seconds": "null|number", "replication_slots_count": "null|number",
		"replication_slots_used_count": "null|number", "replication_slots_used_in_percentage": "string",
		"replication_slots_max_retained_wal_bytes": "null|number", "last_event_id": "null|number", "last_event_timestamp": "number",
		"cursor_last_event_id": "null|number", "cursor_last_event_timestamp": "number",
		"last_successful_status_check_timestamp": "number", "version": "string", "revision": "string",
		"projects_count": "null|number", "selective_sync_type": "null|string", "namespaces": "array", "updated_at": "string",
		"storage_shards": "array", "storage_shards_match": "bool", "_links": "object",
	}
	for _, n := range model.GeoCounterNames() {
		keys[n] = "null|number"
	}
	for _, p := range model.GeoPercentages {
		keys[p[0]+"_in_percentage"] = "string"
	}
	return keys
}

// geoCountsSetUp makes what a status counts: projects (their
// repositories), wiki pages in two of them, a group wiki, and three job
// artifacts. It returns the number of projects.
func geoCountsSetUp(t *testing.T, s *apitest.Server) int {
	t.Helper()
	owner := s.NewUser(t, "geoowner")
	var ids []int64
	for i := range 3 {
		var p struct{ ID int64 }
		s.Do(t, apitest.Request{Method: "POST", Path: "/projects", Token: owner.Token, JSON: map[string]any{"name": fmt.Sprintf("geo%d", i),
			"initialize_with_readme": i != 2}}).Want(t, http.StatusCreated).JSON(t, &p)
		ids = append(ids, p.ID)
	}
	for _, id := range ids[:2] {
		s.Do(t, apitest.Request{Method: "POST", Path: fmt.Sprintf("/projects/%d/wikis", id), Token: owner.Token,
			JSON: map[string]any{"title": "Home", "content": "hello"}}).Want(t, http.StatusCreated)
	}
	var g struct{ ID int64 }
	s.Do(t, apitest.Request{Method: "POST", Path: "/groups", Token: owner.Token, JSON: map[string]any{"name": "GeoGroup", "path": "geogroup"}}).
		Want(t, http.StatusCreated).JSON(t, &g)
	s.Do(t, apitest.Request{Method: "POST", Path: fmt.Sprintf("/groups/%d/wikis", g.ID), Token: owner.Token,
		JSON: map[string]any{"title": "Group home", "content": "hi"}}).Want(t, http.StatusCreated)
	ci := newCIProject(t, s, owner, "geoci", map[string]string{".gitlab-ci.yml": capiNoPush + "a: {script: [x]}\nb: {script: [x]}\n"})
	pl := ci.createPipeline(t, "main")
	jobs := ci.ownJobs(t, pl.ID)
	if len(jobs) != 2 {
		t.Fatalf("jobs: %v", jobs)
	}
	for _, j := range jobs {
		capiStoreArchive(t, s, j.ID, "zip of "+j.Name)
	}
	capiJUnit(t, s, jobs[0].ID, "<testsuites/>")
	return len(ids) + 1
}

// TestGeoNodes_primaryStatus: the current node's status counts what there
// is: projects, their repositories and wikis on disk, group wikis, job
// artifacts; what Quarry does not keep (LFS, packages, uploads, …) and
// what a primary does not sync is null; every key of GitLab's entity is
// there, percentages as "0.00%" strings.
func TestGeoNodes_primaryStatus(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		projects := geoCountsSetUp(t, s)
		prim := createGeoNode(t, s, map[string]any{"name": "here", "url": s.URL, "primary": true})
		other := createGeoNode(t, s, map[string]any{"name": "there", "url": "https://there.example.com"})
		id := nodeID(prim)
		st := s.Get(t, fmt.Sprintf("/geo_nodes/%d/status", id), s.RootToken).Want(t, http.StatusOK).Object(t)
		wantShape(t, "primary status", st, geoStatusKeys())
		api := fmt.Sprintf("%s/api/v4/geo_nodes/%d", s.URL, id)
		want := map[string]any{
			"geo_node_id": id, "healthy": true, "health": "Healthy", "health_status": "Healthy", "missing_oauth_application": false,
			"projects_count": projects, "repositories_count": projects, "wikis_count": 2, "group_wiki_repositories_count": 1,
			"job_artifacts_count": 3, "repositories_synced_count": nil, "repositories_failed_count": nil, "wikis_synced_count": nil,
			"job_artifacts_synced_count": nil, "repositories_synced_in_percentage": "0.00%", "job_artifacts_synced_in_percentage": "0.00%",
			"uploads_count": nil, "lfs_objects_count": nil, "merge_request_diffs_count": nil, "snippet_repositories_count": nil,
			"package_files_count": nil, "container_repositories_count": nil, "design_repositories_count": nil,
			"pages_deployments_count": nil, "terraform_state_versions_count": nil, "pipeline_artifacts_count": nil,
			"job_artifacts_checksummed_count": nil, "repositories_checksummed_count": nil, "repositories_checked_count": nil,
			"last_event_id": nil, "last_event_timestamp": 0, "cursor_last_event_id": nil, "db_replication_lag_seconds": nil,
			"version": buildinfo.APIVersion, "revision": buildinfo.Revision(), "selective_sync_type": nil,
			"storage_shards": []any{map[string]any{"name": "default"}}, "storage_shards_match": true,
			"_links": map[string]any{"self": api + "/status", "node": api},
		}
		if s.Target.DatabaseURL == "" {
			want["replication_slots_count"], want["replication_slots_used_in_percentage"] = nil, "0.00%"
		}
		wantFields(t, "primary status", st, want)
		if s.Target.DatabaseURL != "" {
			// PostgreSQL's replication slots, as the database reports them.
			if _, ok := st["replication_slots_count"].(float64); !ok {
				t.Errorf("replication_slots_count on PostgreSQL: %v", st["replication_slots_count"])
			}
		}
		if ts := int64(st["last_successful_status_check_timestamp"].(float64)); time.Since(time.Unix(ts, 0)) > time.Minute {
			t.Errorf("last_successful_status_check_timestamp %d", ts)
		}

		// A node that never pushed has no status; the list holds the
		// current node's alone.
		s.Get(t, fmt.Sprintf("/geo_nodes/%d/status", nodeID(other)), s.RootToken).Want(t, http.StatusNotFound).
			WantBody(t, `{"message":"404 Status for Geo node not found Not Found"}`)
		all := s.Get(t, "/geo_nodes/status", s.RootToken).Want(t, http.StatusOK)
		if a := all.Array(t); len(a) != 1 || a[0]["geo_node_id"] != float64(id) || all.Header.Get("X-Total") != "1" {
			t.Errorf("statuses: %v", a)
		}
		s.Get(t, fmt.Sprintf("/geo_nodes/%d/status?refresh=maybe", id), s.RootToken).Want(t, http.StatusBadRequest).
			WantBody(t, `{"error":"refresh is invalid"}`)
		// A primary has no failures to show.
		s.Get(t, "/geo_nodes/current/failures", s.RootToken).Want(t, http.StatusForbidden).
			WantBody(t, `{"message":"403 Forbidden - Failures can only be requested from a secondary node"}`)

		// Counts follow what there is: a new project and a deleted one.
		owner := s.NewUser(t, "later")
		var p struct{ ID int64 }
		s.Do(t, apitest.Request{Method: "POST", Path: "/projects", Token: owner.Token, JSON: map[string]any{"name": "late"}}).
			Want(t, http.StatusCreated).JSON(t, &p)
		st = s.Get(t, fmt.Sprintf("/geo_nodes/%d/status", id), s.RootToken).Want(t, http.StatusOK).Object(t)
		wantFields(t, "after a new project", st, map[string]any{"projects_count": projects + 1, "repositories_count": projects + 1})
		s.Do(t, apitest.Request{Method: "DELETE", Path: fmt.Sprintf("/projects/%d", p.ID), Token: owner.Token}).Want(t, http.StatusAccepted)
		eventually(t, "the deleted project leaves the counts", func() bool {
			st = s.Get(t, fmt.Sprintf("/geo_nodes/%d/status", id), s.RootToken).Want(t, http.StatusOK).Object(t)
			return st["projects_count"] == float64(projects) && st["repositories_count"] == float64(projects)
		})
	})
}

// pushStatus sends a status document as the node with these credentials,
// signed at signedAt.
func pushStatus(t *testing.T, s *apitest.Server, key, secret string, doc []byte, signedAt time.Time) *apitest.Response {
	t.Helper()
	return s.Do(t, apitest.Request{Method: "POST", Path: "/geo_nodes/status", Raw: doc,
		Header: map[string]string{"Content-Type": "application/json", "Authorization": geo.Sign(key, secret, doc, signedAt)}})
}

// statusDoc is a status document checked at at, with counters.
func statusDoc(at time.Time, counters map[string]int64) []byte {
	var st model.GeoStatus
	st.Health = model.GeoHealthy
	st.LastSuccessfulStatusCheckAt = at
	st.Version, st.Revision = "17.5.0", "feedbeef"
	st.StorageShards = []string{"default"}
	for k, v := range counters {
		st.SetCounter(k, v)
	}
	return geo.EncodeStatus(&st)
}

// TestGeoNodes_statusPush: a secondary's status push is accepted with its
// node's credentials and served as that node's status; wrong credentials,
// a body the signature does not cover, an old or a disabled node's push
// are refused (401) unread; a malformed status is a 400; an older status
// does not replace a newer one. The secret is sealed at rest and shown by
// no API.
func TestGeoNodes_statusPush(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		createGeoNode(t, s, map[string]any{"name": "here", "url": s.URL, "primary": true})
		sec := createGeoNode(t, s, map[string]any{"name": "copy", "url": "https://copy.example.com"})
		id := nodeID(sec)
		key, secret, err := s.App.DB.GeoNodeCredentials(ctx(t), id)
		if err != nil {
			t.Fatal(err)
		}
		now := time.Now()
		doc := statusDoc(now.Add(-time.Second), map[string]int64{"repositories_count": 4, "repositories_synced_count": 3,
			"repositories_failed_count": 1, "wikis_count": 2, "wikis_synced_count": 2})
		got := pushStatus(t, s, key, secret, doc, now).Want(t, http.StatusCreated).Object(t)
		wantShape(t, "accepted", got, geoStatusKeys())
		st := s.Get(t, fmt.Sprintf("/geo_nodes/%d/status", id), s.RootToken).Want(t, http.StatusOK).Object(t)
		wantShape(t, "pushed status", st, geoStatusKeys())
		wantFields(t, "pushed status", st, map[string]any{"geo_node_id": id, "healthy": true, "health_status": "Healthy",
			"repositories_count": 4, "repositories_synced_count": 3, "repositories_failed_count": 1,
			"repositories_synced_in_percentage": "75.00%", "wikis_synced_in_percentage": "100.00%", "version": "17.5.0",
			"revision": "feedbeef", "last_successful_status_check_timestamp": float64(now.Add(-time.Second).Unix()), "job_artifacts_count": nil,
			"storage_shards_match": true, "projects_count": nil})
		if a := s.Get(t, "/geo_nodes/status", s.RootToken).Want(t, http.StatusOK).Array(t); len(a) != 2 || a[1]["geo_node_id"] != float64(id) {
			t.Errorf("statuses: %v", a)
		}

		// Refused: each a 401, the stored status unchanged.
		_, otherSecret := geo.NewCredentials()
		newer := statusDoc(now, map[string]int64{"repositories_count": 99})
		unauthorized := `{"message":"401 Unauthorized"}`
		for _, c := range []struct {
			name   string
			header string
			body   []byte
		}{
			{"no header", "", newer},
			{"a user's token", "Bearer " + s.RootToken, newer},
			{"another secret", geo.Sign(key, otherSecret, newer, now), newer},
			{"unknown key", geo.Sign("0123456789abcdef0123", secret, newer, now), newer},
			{"another body", geo.Sign(key, secret, newer, now), statusDoc(now, map[string]int64{"repositories_count": 100})},
			{"expired", geo.Sign(key, secret, newer, now.Add(-5*time.Minute)), newer},
			{"malformed", "GL-Geo " + key + ":not.a.token", newer},
			{"too long", "GL-Geo " + key + ":" + strings.Repeat("x", 3000), newer},
		} {
			h := map[string]string{"Content-Type": "application/json"}
			if c.header != "" {
				h["Authorization"] = c.header
			}
			s.Do(t, apitest.Request{Method: "POST", Path: "/geo_nodes/status", Raw: c.body, Header: h}).
				Want(t, http.StatusUnauthorized).WantBody(t, unauthorized)
		}
		// A body past the bound is refused once the node is known.
		big := append([]byte(`{"x":"`), bytes.Repeat([]byte("a"), geo.MaxStatusDocument)...)
		big = append(big, `"}`...)
		pushStatus(t, s, key, secret, big, now).Want(t, http.StatusRequestEntityTooLarge)
		for _, c := range []struct{ doc, want string }{
			{`{"last_successful_status_check_timestamp": 1, "repositories_count": "many"}`, `{"error":"repositories_count is invalid"}`},
			{`{"repositories_count": 1}`, `{"error":"last_successful_status_check_timestamp is missing"}`},
			{`[1, 2]`, `{"error":"status is invalid"}`},
		} {
			pushStatus(t, s, key, secret, []byte(c.doc), now).Want(t, http.StatusBadRequest).WantBody(t, c.want)
		}
		// An older status is dropped; a newer one replaces it.
		pushStatus(t, s, key, secret, statusDoc(now.Add(-time.Hour), map[string]int64{"repositories_count": 1}), now).Want(t, http.StatusCreated)
		if st := s.Get(t, fmt.Sprintf("/geo_nodes/%d/status", id), s.RootToken).Object(t); st["repositories_count"] != float64(4) {
			t.Errorf("an older push replaced the status: %v", st["repositories_count"])
		}
		pushStatus(t, s, key, secret, newer, now).Want(t, http.StatusCreated)
		if st := s.Get(t, fmt.Sprintf("/geo_nodes/%d/status", id), s.RootToken).Object(t); st["repositories_count"] != float64(99) {
			t.Errorf("a newer push: %v", st["repositories_count"])
		}
		// A status from a clock ahead is taken as of now, so the next one
		// still replaces it.
		pushStatus(t, s, key, secret, statusDoc(now.Add(time.Hour), map[string]int64{"repositories_count": 7}), now).Want(t, http.StatusCreated)
		pushStatus(t, s, key, secret, statusDoc(time.Now().Add(time.Second), map[string]int64{"repositories_count": 8}), time.Now()).Want(t, http.StatusCreated)
		if st := s.Get(t, fmt.Sprintf("/geo_nodes/%d/status", id), s.RootToken).Object(t); st["repositories_count"] != float64(8) {
			t.Errorf("after a push from the future: %v", st["repositories_count"])
		}
		// A disabled node's pushes are refused.
		s.Do(t, apitest.Request{Method: "PUT", Path: fmt.Sprintf("/geo_nodes/%d", id), Token: s.RootToken,
			JSON: map[string]any{"enabled": false}}).Want(t, http.StatusOK)
		pushStatus(t, s, key, secret, newer, now).Want(t, http.StatusUnauthorized).WantBody(t, unauthorized)

		// The secret: sealed in its column, in no answer.
		db, q := rawDB(t, s)
		var stored, storedKey string
		if err := db.QueryRow(q("SELECT secret_access_key, access_key FROM geo_nodes WHERE id = ?"), id).Scan(&stored, &storedKey); err != nil {
			t.Fatal(err)
		}
		if _, ok := secrets.SealedWith(stored); !ok || strings.Contains(stored, secret) || storedKey != key {
			t.Errorf("stored secret %q (key %q): want it sealed", stored, storedKey)
		}
		for _, path := range []string{"/geo_nodes", fmt.Sprintf("/geo_nodes/%d", id), "/geo_nodes/status", fmt.Sprintf("/geo_nodes/%d/status", id)} {
			if b := s.Get(t, path, s.RootToken).Body; bytes.Contains(b, []byte(secret)) || bytes.Contains(b, []byte(key)) {
				t.Errorf("%s shows the node's credentials", path)
			}
		}
		// Repair leaves working credentials alone.
		s.Do(t, apitest.Request{Method: "POST", Path: fmt.Sprintf("/geo_nodes/%d/repair", id), Token: s.RootToken}).Want(t, http.StatusOK)
		if k2, s2, err := s.App.DB.GeoNodeCredentials(ctx(t), id); err != nil || k2 != key || s2 != secret {
			t.Errorf("repair changed working credentials: %v", err)
		}
		// Deleting the node removes its status with it.
		s.Do(t, apitest.Request{Method: "DELETE", Path: fmt.Sprintf("/geo_nodes/%d", id), Token: s.RootToken}).Want(t, http.StatusNoContent)
		if a := s.Get(t, "/geo_nodes/status", s.RootToken).Array(t); len(a) != 1 {
			t.Errorf("statuses after delete: %v", a)
		}
		pushStatus(t, s, key, secret, newer, time.Now()).Want(t, http.StatusUnauthorized)
	})
}

// TestGeoNodes_credentials: a node's secret is sealed again by a key
// rotation and still signs after a restart; a secret that no longer opens
// authenticates nobody until the node is repaired, which gives the node
// new credentials (read by the node from the database it shares).
func TestGeoNodes_credentials(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		createGeoNode(t, s, map[string]any{"name": "here", "url": s.URL, "primary": true})
		id := nodeID(createGeoNode(t, s, map[string]any{"name": "copy", "url": "https://copy.example.com"}))
		key, secret, err := s.App.DB.GeoNodeCredentials(ctx(t), id)
		if err != nil {
			t.Fatal(err)
		}
		cfg := s.App.Config
		s.Stop()
		_, next, err := app.RotateSecretsKey(context.Background(), cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
		if err != nil {
			t.Fatal(err)
		}
		db, q := rawDB(t, s)
		var stored string
		if err := db.QueryRow(q("SELECT secret_access_key FROM geo_nodes WHERE id = ?"), id).Scan(&stored); err != nil {
			t.Fatal(err)
		}
		if kid, ok := secrets.SealedWith(stored); !ok || kid != next.KeyID {
			t.Errorf("after rotation the secret is sealed with %q (%v); want %s", kid, ok, next.KeyID)
		}
		s = apitest.StartIn(t, s.Target, s.DataDir)
		if k2, s2, err := s.App.DB.GeoNodeCredentials(ctx(t), id); err != nil || k2 != key || s2 != secret {
			t.Fatalf("credentials after rotation: %v", err)
		}
		pushStatus(t, s, key, secret, statusDoc(time.Now(), nil), time.Now()).Want(t, http.StatusCreated)

		// A secret that does not open: pushes are refused; repair mends it.
		db, q = rawDB(t, s)
		if _, err := db.Exec(q("UPDATE geo_nodes SET secret_access_key = ? WHERE id = ?"), "qs1:nokey:AAAA", id); err != nil {
			t.Fatal(err)
		}
		pushStatus(t, s, key, secret, statusDoc(time.Now(), nil), time.Now()).Want(t, http.StatusUnauthorized)
		s.Do(t, apitest.Request{Method: "POST", Path: fmt.Sprintf("/geo_nodes/%d/repair", id), Token: s.RootToken}).Want(t, http.StatusOK)
		k3, s3, err := s.App.DB.GeoNodeCredentials(ctx(t), id)
		if err != nil || k3 == key || s3 == secret || s3 == "" {
			t.Fatalf("repaired credentials: %q, %v", k3, err)
		}
		pushStatus(t, s, key, secret, statusDoc(time.Now(), nil), time.Now()).Want(t, http.StatusUnauthorized)
		pushStatus(t, s, k3, s3, statusDoc(time.Now(), nil), time.Now()).Want(t, http.StatusCreated)
	})
}
