package e2e

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"

	"quarry/internal/apitest"
)

// geoNodeKeys are the keys of GitLab's GeoNode entity, each with the JSON
// type it has ("null|string": null or a string).
var geoNodeKeys = map[string]string{
	"id": "number", "name": "string", "url": "string", "internal_url": "string", "primary": "bool", "enabled": "bool",
	"current": "bool", "files_max_capacity": "number", "repos_max_capacity": "number", "verification_max_capacity": "number",
	"container_repositories_max_capacity": "number", "selective_sync_type": "null|string", "selective_sync_shards": "array",
	"selective_sync_namespace_ids": "array", "minimum_reverification_interval": "number", "sync_object_storage": "bool",
	"clone_protocol": "string", "web_edit_url": "string", "web_geo_projects_url": "null|string", "_links": "object",
}

// wantShape fails unless obj has exactly the keys of want, each of its
// type.
func wantShape(t *testing.T, what string, obj map[string]any, want map[string]string) {
	t.Helper()
	for k, typ := range want {
		v, ok := obj[k]
		if !ok {
			t.Errorf("%s: no %q", what, k)
			continue
		}
		if got := usrJSONType(v); !strings.Contains("|"+typ+"|", "|"+got+"|") {
			t.Errorf("%s: %s is %s (%v); want %s", what, k, got, v, typ)
		}
	}
	for k := range obj {
		if _, ok := want[k]; !ok {
			t.Errorf("%s: unexpected key %q", what, k)
		}
	}
}

// wantFields fails unless obj holds each of want's values (compared as
// JSON would decode them).
func wantFields(t *testing.T, what string, obj map[string]any, want map[string]any) {
	t.Helper()
	for k, w := range want {
		if got := fmt.Sprint(obj[k]); got != fmt.Sprint(w) {
			t.Errorf("%s: %s = %s; want %s", what, k, got, fmt.Sprint(w))
		}
	}
}

func createGeoNode(t *testing.T, s *apitest.Server, body map[string]any) map[string]any {
	t.Helper()
	return s.Do(t, apitest.Request{Method: "POST", Path: "/geo_nodes", Token: s.RootToken, JSON: body}).Want(t, http.StatusCreated).Object(t)
}

func nodeID(n map[string]any) int64 { return int64(n["id"].(float64)) }

// TestGeoNodes_crud: every field of a node with its defaults and types,
// through create, list, read, update, repair and delete; URLs end with a
// slash; the node at this server's URL is the current one.
func TestGeoNodes_crud(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		// A secondary with nothing but the required attributes.
		sec := createGeoNode(t, s, map[string]any{"name": "  Secondary One ", "url": "https://secondary.example.com"})
		id := nodeID(sec)
		wantShape(t, "created secondary", sec, geoNodeKeys)
		api := fmt.Sprintf("%s/api/v4/geo_nodes/%d", s.URL, id)
		wantFields(t, "created secondary", sec, map[string]any{
			"name": "Secondary One", "url": "https://secondary.example.com/", "internal_url": "https://secondary.example.com/",
			"primary": false, "enabled": true, "current": false, "files_max_capacity": 10, "repos_max_capacity": 25,
			"verification_max_capacity": 100, "container_repositories_max_capacity": 10, "selective_sync_type": nil,
			"selective_sync_shards": []any{}, "selective_sync_namespace_ids": []any{}, "minimum_reverification_interval": 7,
			"sync_object_storage": false, "clone_protocol": "http",
			"web_edit_url":         fmt.Sprintf("%s/admin/geo/nodes/%d/edit", s.URL, id),
			"web_geo_projects_url": "https://secondary.example.com/admin/geo/projects",
			"_links":               map[string]any{"self": api, "status": api + "/status", "repair": api + "/repair"},
		})
		for _, secret := range []string{"access_key", "secret_access_key", "secret"} {
			if _, ok := sec[secret]; ok {
				t.Errorf("a node shows its %s", secret)
			}
		}

		// The primary, at this server's URL: the current node. Every
		// attribute set, as a form this time.
		g := s.Do(t, apitest.Request{Method: "POST", Path: "/groups", Token: s.RootToken,
			JSON: map[string]any{"name": "Synced", "path": "synced"}}).Want(t, http.StatusCreated).Object(t)
		gid := int64(g["id"].(float64))
		form := url.Values{"name": {"Primary"}, "url": {s.URL}, "internal_url": {"http://primary.internal:8080"}, "primary": {"true"},
			"enabled": {"true"}, "files_max_capacity": {"11"}, "repos_max_capacity": {"26"}, "verification_max_capacity": {"101"},
			"container_repositories_max_capacity": {"12"}, "sync_object_storage": {"true"}, "selective_sync_type": {"namespaces"},
			"selective_sync_shards[]": {"default"}, "selective_sync_namespace_ids": {itoa(gid)}, "minimum_reverification_interval": {"9"}}
		prim := s.Do(t, apitest.Request{Method: "POST", Path: "/geo_nodes", Token: s.RootToken, Form: form}).Want(t, http.StatusCreated).Object(t)
		pid := nodeID(prim)
		wantShape(t, "created primary", prim, geoNodeKeys)
		wantFields(t, "created primary", prim, map[string]any{
			"name": "Primary", "url": s.URL + "/", "internal_url": "http://primary.internal:8080/", "primary": true, "current": true,
			"files_max_capacity": 11, "repos_max_capacity": 26, "verification_max_capacity": 101, "container_repositories_max_capacity": 12,
			"sync_object_storage": true, "selective_sync_type": "namespaces", "selective_sync_shards": []any{"default"},
			"selective_sync_namespace_ids": []any{float64(gid)}, "minimum_reverification_interval": 9, "web_geo_projects_url": nil,
		})

		// List, paginated, by id; one node.
		list := s.Get(t, "/geo_nodes?per_page=1", s.RootToken).Want(t, http.StatusOK)
		if list.Header.Get("X-Total") != "2" || list.Header.Get("X-Next-Page") != "2" {
			t.Errorf("list headers: total %q next %q", list.Header.Get("X-Total"), list.Header.Get("X-Next-Page"))
		}
		if a := list.Array(t); len(a) != 1 || nodeID(a[0]) != id {
			t.Errorf("first page: %v", a)
		}
		all := s.Get(t, "/geo_nodes", s.RootToken).Want(t, http.StatusOK).Array(t)
		if len(all) != 2 || nodeID(all[1]) != pid || all[1]["current"] != true || all[0]["current"] != false {
			t.Errorf("list: %v", all)
		}
		got := s.Get(t, fmt.Sprintf("/geo_nodes/%d", id), s.RootToken).Want(t, http.StatusOK).Object(t)
		wantShape(t, "read", got, geoNodeKeys)
		wantFields(t, "read", got, map[string]any{"name": "Secondary One", "current": false})

		// Update: everything but the role; an internal URL equal to the
		// URL reads as the URL, null clears it.
		up := s.Do(t, apitest.Request{Method: "PUT", Path: fmt.Sprintf("/geo_nodes/%d", id), Token: s.RootToken, JSON: map[string]any{
			"name": "Secondary Renamed", "url": "https://sec2.example.com/geo", "internal_url": "https://sec2-internal.example.com",
			"primary": true, "enabled": false, "files_max_capacity": 0, "repos_max_capacity": 1, "verification_max_capacity": 2,
			"container_repositories_max_capacity": 3, "sync_object_storage": true, "selective_sync_type": "shards",
			"selective_sync_shards": "default", "selective_sync_namespace_ids": []any{gid}, "minimum_reverification_interval": 30,
		}}).Want(t, http.StatusOK).Object(t)
		wantShape(t, "updated", up, geoNodeKeys)
		wantFields(t, "updated", up, map[string]any{
			"name": "Secondary Renamed", "url": "https://sec2.example.com/geo/", "internal_url": "https://sec2-internal.example.com/",
			"primary": false, "enabled": false, "files_max_capacity": 0, "repos_max_capacity": 1, "verification_max_capacity": 2,
			"container_repositories_max_capacity": 3, "sync_object_storage": true, "selective_sync_type": "shards",
			"selective_sync_shards": []any{"default"}, "selective_sync_namespace_ids": []any{float64(gid)},
			"minimum_reverification_interval": 30, "web_geo_projects_url": "https://sec2.example.com/geo/admin/geo/projects",
		})
		up = s.Do(t, apitest.Request{Method: "PUT", Path: fmt.Sprintf("/geo_nodes/%d", id), Token: s.RootToken, JSON: map[string]any{
			"internal_url": nil, "selective_sync_type": nil, "selective_sync_shards": []any{}, "selective_sync_namespace_ids": nil,
		}}).Want(t, http.StatusOK).Object(t)
		wantFields(t, "cleared", up, map[string]any{"internal_url": "https://sec2.example.com/geo/", "selective_sync_type": nil,
			"selective_sync_shards": []any{}, "selective_sync_namespace_ids": []any{}, "name": "Secondary Renamed"})
		up = s.Do(t, apitest.Request{Method: "PUT", Path: fmt.Sprintf("/geo_nodes/%d", id), Token: s.RootToken,
			JSON: map[string]any{"internal_url": "HTTPS://sec2.example.com/geo/"}}).Want(t, http.StatusOK).Object(t)
		wantFields(t, "internal URL as the URL", up, map[string]any{"internal_url": "https://sec2.example.com/geo/"})

		// Repair answers the node; a deleted group leaves the node's list.
		rep := s.Do(t, apitest.Request{Method: "POST", Path: fmt.Sprintf("/geo_nodes/%d/repair", pid), Token: s.RootToken}).Want(t, http.StatusOK).Object(t)
		wantShape(t, "repaired", rep, geoNodeKeys)
		wantFields(t, "repaired", rep, map[string]any{"id": pid, "name": "Primary", "current": true})

		// Delete; then every node route is a 404 for it.
		s.Do(t, apitest.Request{Method: "DELETE", Path: fmt.Sprintf("/geo_nodes/%d", id), Token: s.RootToken}).Want(t, http.StatusNoContent)
		for _, r := range []apitest.Request{
			{Path: fmt.Sprintf("/geo_nodes/%d", id)},
			{Method: "PUT", Path: fmt.Sprintf("/geo_nodes/%d", id), JSON: map[string]any{"name": "x"}},
			{Method: "DELETE", Path: fmt.Sprintf("/geo_nodes/%d", id)},
			{Method: "POST", Path: fmt.Sprintf("/geo_nodes/%d/repair", id)},
			{Path: fmt.Sprintf("/geo_nodes/%d/status", id)},
			{Path: fmt.Sprintf("/geo_nodes/%d", s.AbsentID(t))},
		} {
			r.Token = s.RootToken
			s.Do(t, r).Want(t, http.StatusNotFound).WantBody(t, `{"message":"404 GeoNode Not Found"}`)
		}
		s.Get(t, "/geo_nodes/notanumber", s.RootToken).Want(t, http.StatusNotFound)
		if a := s.Get(t, "/geo_nodes", s.RootToken).Want(t, http.StatusOK).Array(t); len(a) != 1 || nodeID(a[0]) != pid {
			t.Errorf("after delete: %v", a)
		}
	})
}

// TestGeoNodes_permissions: administrators only; a user is refused (403),
// an anonymous caller asked to authenticate (401), on every route.
func TestGeoNodes_permissions(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		n := createGeoNode(t, s, map[string]any{"name": "n", "url": "http://n.example.com"})
		user := s.NewUser(t, "plain")
		path := fmt.Sprintf("/geo_nodes/%d", nodeID(n))
		for _, r := range []apitest.Request{
			{Method: "POST", Path: "/geo_nodes", JSON: map[string]any{"name": "m", "url": "http://m.example.com"}},
			{Path: "/geo_nodes"}, {Path: "/geo_nodes/status"}, {Path: "/geo_nodes/current/failures"},
			{Path: path}, {Method: "PUT", Path: path, JSON: map[string]any{"name": "x"}}, {Method: "DELETE", Path: path},
			{Method: "POST", Path: path + "/repair"}, {Path: path + "/status"},
		} {
			r.Token = user.Token
			s.Do(t, r).Want(t, http.StatusForbidden).WantBody(t, `{"message":"403 Forbidden"}`)
			r.Token = ""
			s.Do(t, r).Want(t, http.StatusUnauthorized).WantBody(t, `{"message":"401 Unauthorized"}`)
		}
		got := s.Get(t, path, s.RootToken).Want(t, http.StatusOK).Object(t)
		if got["name"] != "n" {
			t.Errorf("after refusals: %v", got)
		}
		if a := s.Get(t, "/geo_nodes", s.RootToken).Array(t); len(a) != 1 {
			t.Errorf("refused create made a node: %v", a)
		}
	})
}

// TestGeoNodes_validation: each invalid attribute answers GitLab's message
// and changes nothing.
func TestGeoNodes_validation(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		prim := createGeoNode(t, s, map[string]any{"name": "Main", "url": "https://main.example.com", "primary": true})
		sec := createGeoNode(t, s, map[string]any{"name": "Copy", "url": "https://copy.example.com/"})
		s.NewUser(t, "someone")
		var userNS struct {
			ID int64 `json:"id"`
		}
		s.Get(t, "/namespaces/someone", s.RootToken).Want(t, http.StatusOK).JSON(t, &userNS)
		long := strings.Repeat("n", 256)
		for _, c := range []struct {
			name string
			body map[string]any
			want string
		}{
			{"missing name and url", map[string]any{}, `{"error":"name is missing, url is missing"}`},
			{"missing url", map[string]any{"name": "x"}, `{"error":"url is missing"}`},
			{"null name", map[string]any{"name": nil, "url": "https://x.example.com"}, `{"error":"name is missing"}`},
			{"blank name", map[string]any{"name": "  ", "url": "https://x.example.com"}, `{"message":{"name":["can't be blank"]}}`},
			{"long name", map[string]any{"name": long, "url": "https://x.example.com"}, `{"message":{"name":["is too long (maximum is 255 characters)"]}}`},
			{"taken name", map[string]any{"name": "cOpY", "url": "https://x.example.com"}, `{"message":{"name":["has already been taken"]}}`},
			{"blank url", map[string]any{"name": "x", "url": ""}, `{"message":{"url":["can't be blank","must be a valid URL"]}}`},
			{"ftp url", map[string]any{"name": "x", "url": "ftp://x.example.com"}, `{"message":{"url":["is blocked: Only allowed schemes are http, https"]}}`},
			{"no scheme", map[string]any{"name": "x", "url": "x.example.com"}, `{"message":{"url":["is blocked: Only allowed schemes are http, https"]}}`},
			{"bad host", map[string]any{"name": "x", "url": "http://-x.example.com"}, `{"message":{"url":["is blocked: Hostname or IP address invalid"]}}`},
			{"no host", map[string]any{"name": "x", "url": "http://"}, `{"message":{"url":["is blocked: Host cannot be resolved or invalid"]}}`},
			{"bad port", map[string]any{"name": "x", "url": "http://x.example.com:99999"}, `{"message":{"url":["is blocked: URI is invalid"]}}`},
			{"newline", map[string]any{"name": "x", "url": "http://x.example.com/%0a"}, `{"message":{"url":["is blocked: URI is invalid"]}}`},
			{"query", map[string]any{"name": "x", "url": "http://x.example.com/?a=b"}, `{"message":{"url":["must be a valid URL"]}}`},
			{"long url", map[string]any{"name": "x", "url": "http://x.example.com/" + strings.Repeat("a", 1024)}, `{"message":{"url":["is too long (maximum is 1024 characters)"]}}`},
			{"taken url", map[string]any{"name": "x", "url": "HTTPS://copy.example.com"}, `{"message":{"url":["has already been taken"]}}`},
			{"bad internal url", map[string]any{"name": "x", "url": "https://x.example.com", "internal_url": "javascript:alert(1)"}, `{"message":{"internal_url":["is blocked: Only allowed schemes are http, https"]}}`},
			{"second primary", map[string]any{"name": "x", "url": "https://x.example.com", "primary": true}, `{"message":{"primary":["node already exists"]}}`},
			{"sync type", map[string]any{"name": "x", "url": "https://x.example.com", "selective_sync_type": "everything"}, `{"message":{"selective_sync_type":["is not included in the list"]}}`},
			{"negative capacity", map[string]any{"name": "x", "url": "https://x.example.com", "files_max_capacity": -1}, `{"message":{"files_max_capacity":["must be greater than or equal to 0"]}}`},
			{"huge capacity", map[string]any{"name": "x", "url": "https://x.example.com", "repos_max_capacity": 3000000000}, `{"message":{"repos_max_capacity":["must be less than or equal to 2147483647"]}}`},
			{"negative verification", map[string]any{"name": "x", "url": "https://x.example.com", "verification_max_capacity": -5}, `{"message":{"verification_max_capacity":["must be greater than or equal to 0"]}}`},
			{"negative containers", map[string]any{"name": "x", "url": "https://x.example.com", "container_repositories_max_capacity": -1}, `{"message":{"container_repositories_max_capacity":["must be greater than or equal to 0"]}}`},
			{"zero interval", map[string]any{"name": "x", "url": "https://x.example.com", "minimum_reverification_interval": 0}, `{"message":{"minimum_reverification_interval":["must be greater than or equal to 1"]}}`},
			{"absent group", map[string]any{"name": "x", "url": "https://x.example.com", "selective_sync_namespace_ids": []any{s.AbsentID(t)}}, `{"message":{"selective_sync_namespace_ids":["must name existing groups"]}}`},
			{"user namespace", map[string]any{"name": "x", "url": "https://x.example.com", "selective_sync_namespace_ids": []any{userNS.ID}}, `{"message":{"selective_sync_namespace_ids":["must name existing groups"]}}`},
			{"unknown shard", map[string]any{"name": "x", "url": "https://x.example.com", "selective_sync_shards": []any{"default", "elsewhere"}}, `{"message":{"selective_sync_shards":["must name configured repository storages"]}}`},
			{"locks out", map[string]any{"name": "x", "url": s.URL}, `{"message":{"base":["Current node must be the primary node or you will be locking yourself out"]}}`},
			{"several", map[string]any{"name": "", "url": "gopher://x", "files_max_capacity": -1}, `{"message":{"name":["can't be blank"],"url":["is blocked: Only allowed schemes are http, https"],"files_max_capacity":["must be greater than or equal to 0"]}}`},
			// Wrong types are Grape's.
			{"name list", map[string]any{"name": []any{"a"}, "url": "https://x.example.com"}, `{"error":"name is invalid"}`},
			{"url hash", map[string]any{"name": "x", "url": map[string]any{"a": "b"}}, `{"error":"url is invalid"}`},
			{"enabled text", map[string]any{"name": "x", "url": "https://x.example.com", "enabled": "maybe"}, `{"error":"enabled is invalid"}`},
			{"primary list", map[string]any{"name": "x", "url": "https://x.example.com", "primary": []any{true}}, `{"error":"primary is invalid"}`},
			{"capacity text", map[string]any{"name": "x", "url": "https://x.example.com", "files_max_capacity": "ten"}, `{"error":"files_max_capacity is invalid"}`},
			{"capacity fraction", map[string]any{"name": "x", "url": "https://x.example.com", "repos_max_capacity": 1.5}, `{"error":"repos_max_capacity is invalid"}`},
			{"capacity past 64 bits", map[string]any{"name": "x", "url": "https://x.example.com", "repos_max_capacity": "99999999999999999999"}, `{"error":"repos_max_capacity is invalid"}`},
			{"ids text", map[string]any{"name": "x", "url": "https://x.example.com", "selective_sync_namespace_ids": []any{"one"}}, `{"error":"selective_sync_namespace_ids is invalid"}`},
			{"shards objects", map[string]any{"name": "x", "url": "https://x.example.com", "selective_sync_shards": []any{map[string]any{"a": 1}}}, `{"error":"selective_sync_shards is invalid"}`},
		} {
			t.Run(c.name, func(t *testing.T) {
				s.Do(t, apitest.Request{Method: "POST", Path: "/geo_nodes", Token: s.RootToken, JSON: c.body}).Want(t, http.StatusBadRequest).WantBody(t, c.want)
			})
		}
		if a := s.Get(t, "/geo_nodes", s.RootToken).Array(t); len(a) != 2 {
			t.Fatalf("refused creates made nodes: %d", len(a))
		}

		// Updates: the same rules; the node is left as it was.
		path := fmt.Sprintf("/geo_nodes/%d", nodeID(sec))
		before := s.Get(t, path, s.RootToken).Want(t, http.StatusOK).Object(t)
		for _, c := range []struct {
			name, path string
			body       map[string]any
			want       string
		}{
			{"blank name", path, map[string]any{"name": ""}, `{"message":{"name":["can't be blank"]}}`},
			{"taken name", path, map[string]any{"name": "MAIN"}, `{"message":{"name":["has already been taken"]}}`},
			{"taken url", path, map[string]any{"url": "https://main.example.com/"}, `{"message":{"url":["has already been taken"]}}`},
			{"bad url", path, map[string]any{"url": "mailto:a@b"}, `{"message":{"url":["is blocked: Only allowed schemes are http, https"]}}`},
			{"sync type", path, map[string]any{"selective_sync_type": "all"}, `{"message":{"selective_sync_type":["is not included in the list"]}}`},
			{"capacity", path, map[string]any{"files_max_capacity": -2}, `{"message":{"files_max_capacity":["must be greater than or equal to 0"]}}`},
			{"locks out", path, map[string]any{"url": s.URL + "/"}, `{"message":{"base":["Current node must be the primary node or you will be locking yourself out"]}}`},
			{"type", path, map[string]any{"enabled": "perhaps"}, `{"error":"enabled is invalid"}`},
			{"primary off", fmt.Sprintf("/geo_nodes/%d", nodeID(prim)), map[string]any{"enabled": false}, `{"message":{"enabled":["Geo primary node cannot be disabled"]}}`},
		} {
			t.Run("update "+c.name, func(t *testing.T) {
				s.Do(t, apitest.Request{Method: "PUT", Path: c.path, Token: s.RootToken, JSON: c.body}).Want(t, http.StatusBadRequest).WantBody(t, c.want)
			})
		}
		after := s.Get(t, path, s.RootToken).Want(t, http.StatusOK).Object(t)
		if fmt.Sprint(after) != fmt.Sprint(before) {
			t.Errorf("refused updates changed the node:\n%v\n%v", before, after)
		}
		if p := s.Get(t, fmt.Sprintf("/geo_nodes/%d", nodeID(prim)), s.RootToken).Object(t); p["enabled"] != true {
			t.Errorf("primary disabled: %v", p)
		}
	})
}

// TestGeoNodes_concurrentWriters: updates of different attributes at once
// all land (none is lost to another's compare-and-set), and of racing
// creators of a primary or of one name exactly one wins.
func TestGeoNodes_concurrentWriters(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		n := createGeoNode(t, s, map[string]any{"name": "racy", "url": "https://racy.example.com"})
		path := fmt.Sprintf("/geo_nodes/%d", nodeID(n))
		changes := []map[string]any{
			{"files_max_capacity": 1}, {"repos_max_capacity": 2}, {"verification_max_capacity": 3},
			{"container_repositories_max_capacity": 4}, {"minimum_reverification_interval": 5}, {"sync_object_storage": true},
			{"selective_sync_type": "shards"}, {"internal_url": "https://racy-internal.example.com"},
		}
		var wg sync.WaitGroup
		statuses := make([]int, len(changes))
		for i, c := range changes {
			wg.Add(1)
			go func() {
				defer wg.Done()
				statuses[i] = s.Do(t, apitest.Request{Method: "PUT", Path: path, Token: s.RootToken, JSON: c}).Status
			}()
		}
		wg.Wait()
		for i, st := range statuses {
			if st != http.StatusOK {
				t.Errorf("update %v: %d", changes[i], st)
			}
		}
		got := s.Get(t, path, s.RootToken).Want(t, http.StatusOK).Object(t)
		wantFields(t, "after racing updates", got, map[string]any{"files_max_capacity": 1, "repos_max_capacity": 2,
			"verification_max_capacity": 3, "container_repositories_max_capacity": 4, "minimum_reverification_interval": 5,
			"sync_object_storage": true, "selective_sync_type": "shards", "internal_url": "https://racy-internal.example.com/"})

		for _, race := range []struct {
			what string
			body func(i int) map[string]any
			lost string
		}{
			{"primary", func(i int) map[string]any {
				return map[string]any{"name": fmt.Sprintf("p%d", i), "url": fmt.Sprintf("https://p%d.example.com", i), "primary": true}
			}, `{"message":{"primary":["node already exists"]}}`},
			{"name", func(i int) map[string]any {
				return map[string]any{"name": "Twin", "url": fmt.Sprintf("https://twin%d.example.com", i)}
			}, `{"message":{"name":["has already been taken"]}}`},
		} {
			const n = 6
			resps := make([]*apitest.Response, n)
			for i := range n {
				wg.Add(1)
				go func() {
					defer wg.Done()
					resps[i] = s.Do(t, apitest.Request{Method: "POST", Path: "/geo_nodes", Token: s.RootToken, JSON: race.body(i)})
				}()
			}
			wg.Wait()
			won := 0
			for _, r := range resps {
				switch r.Status {
				case http.StatusCreated:
					won++
				case http.StatusBadRequest:
					r.WantBody(t, race.lost)
				default:
					t.Errorf("racing %s: %d %s", race.what, r.Status, r.Body)
				}
			}
			if won != 1 {
				t.Errorf("racing %s: %d won; want 1", race.what, won)
			}
		}
	})
}
