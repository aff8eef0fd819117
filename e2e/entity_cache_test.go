package e2e

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"quarry/internal/apitest"
)

// get reads path through the counter's server and returns the entity and
// the statements it cost.
func (qc *queryCounter) get(t *testing.T, path, token string) (map[string]any, int64) {
	t.Helper()
	obj := qc.s.Do(t, apitest.Request{Path: qc.url + "/api/v4" + path, Token: token}).Want(t, http.StatusOK).Object(t)
	select {
	case n := <-qc.counts:
		return obj, n
	case <-time.After(10 * time.Second):
		t.Fatalf("GET %s: no query count", path)
		return nil, 0
	}
}

// TestEntityCache_acrossProcesses: projects and users are read through
// one server (B), which keeps their encodings, and edited through another
// (A) on the same database; every edit shows in B's next read, whatever
// row it changed: the project's own, its topics, a topic's name, its
// group's name, the groups it is shared with, the reader's membership.
// Two processes share a database only on PostgreSQL; on SQLite A and B
// are one server (the edits still go through the API, the reads through
// the cache).
func TestEntityCache_acrossProcesses(t *testing.T) {
	apitest.Each(t, func(t *testing.T, a *apitest.Server) {
		b := a
		if a.Target.DatabaseURL != "" {
			b = apitest.StartIn(t, a.Target, a.DataDir)
		}
		qc := newQueryCounter(t, b)
		owner := a.NewUser(t, "ecowner")
		reader := a.NewUser(t, "ecreader")
		var g, h struct {
			ID int64 `json:"id"`
		}
		a.Do(t, apitest.Request{Method: "POST", Path: "/groups", Token: owner.Token,
			JSON: map[string]any{"name": "EC Group", "path": "ec-group", "visibility": "public"}}).Want(t, http.StatusCreated).JSON(t, &g)
		a.Do(t, apitest.Request{Method: "POST", Path: "/groups", Token: owner.Token,
			JSON: map[string]any{"name": "EC Share", "path": "ec-share", "visibility": "public"}}).Want(t, http.StatusCreated).JSON(t, &h)
		var p struct {
			ID int64 `json:"id"`
		}
		a.Do(t, apitest.Request{Method: "POST", Path: "/projects", Token: owner.Token, JSON: map[string]any{"name": "cached",
			"namespace_id": g.ID, "visibility": "public", "topics": []string{"ectopic"}, "description": "first"}}).Want(t, http.StatusCreated).JSON(t, &p)
		path := fmt.Sprintf("/projects/%d", p.ID)

		// read returns B's project for the reader, read twice: the second
		// read is served from the cache (two statements fewer than a miss:
		// the wide row and the topics) and is the same entity. A first
		// read after an edit of what the cached encoding shows misses; a
		// caller of another class misses the encoding only (the row is
		// kept: one statement, the topics); after an edit of a part
		// spliced in (shares, permissions) it hits, fresh all the same.
		const first, miss, hit, classMiss = 0, 1, 2, 3
		read := func(t *testing.T, expect int) map[string]any {
			t.Helper()
			got, n1 := qc.get(t, path, reader.Token)
			again, n2 := qc.get(t, path, reader.Token)
			if fmt.Sprint(got) != fmt.Sprint(again) {
				t.Fatalf("a second read differs:\n%v\n%v", got, again)
			}
			switch {
			case expect == miss && n2 != n1-2:
				// A miss reads the wide row and the topics.
				t.Errorf("statements: %d for a first read after the edit, %d for the next; want two fewer (a miss, then cached)", n1, n2)
			case expect == classMiss && n2 != n1-1:
				t.Errorf("statements: %d for a first read as another class, %d for the next; want one fewer (the topics)", n1, n2)
			case expect == hit && n2 != n1:
				t.Errorf("statements: %d for a first read after the edit, %d for the next; want the same (cached)", n1, n2)
			}
			return got
		}
		want := func(t *testing.T, got map[string]any, key string, v any) {
			t.Helper()
			if fmt.Sprint(got[key]) != fmt.Sprint(v) {
				t.Errorf("%s = %v; want %v", key, got[key], v)
			}
		}
		got := read(t, first)
		want(t, got, "description", "first")
		want(t, got, "topics", []string{"ectopic"})
		want(t, got, "permissions", map[string]any{"project_access": nil, "group_access": nil})

		a.Do(t, apitest.Request{Method: "PUT", Path: path, Token: owner.Token,
			JSON: map[string]any{"description": "second", "topics": []string{"ectopic", "more"}}}).Want(t, http.StatusOK)
		got = read(t, miss)
		want(t, got, "description", "second")
		want(t, got, "topics", []string{"ectopic", "more"})

		var topic []struct {
			ID int64 `json:"id"`
		}
		a.Get(t, "/topics?search=more", a.RootToken).Want(t, http.StatusOK).JSON(t, &topic)
		if len(topic) != 1 {
			t.Fatalf("topics %v", topic)
		}
		a.Do(t, apitest.Request{Method: "PUT", Path: fmt.Sprintf("/topics/%d", topic[0].ID), Token: a.RootToken,
			JSON: map[string]any{"name": "renamed"}}).Want(t, http.StatusOK)
		want(t, read(t, miss), "topics", []string{"ectopic", "renamed"})

		a.Do(t, apitest.Request{Method: "PUT", Path: fmt.Sprintf("/groups/%d", g.ID), Token: owner.Token,
			JSON: map[string]any{"name": "EC Renamed", "path": "ec-renamed"}}).Want(t, http.StatusOK)
		got = read(t, miss)
		want(t, got, "path_with_namespace", "ec-renamed/cached")
		want(t, got, "name_with_namespace", "EC Renamed / cached")
		if ns, _ := got["namespace"].(map[string]any); ns["name"] != "EC Renamed" || ns["full_path"] != "ec-renamed" {
			t.Errorf("namespace %v", ns)
		}

		a.Do(t, apitest.Request{Method: "POST", Path: path + "/star", Token: owner.Token}).Want(t, http.StatusCreated)
		want(t, read(t, miss), "star_count", 1)

		a.Do(t, apitest.Request{Method: "POST", Path: path + "/share", Token: owner.Token,
			JSON: map[string]any{"group_id": h.ID, "group_access": 30}}).Want(t, http.StatusCreated)
		a.Do(t, apitest.Request{Method: "PUT", Path: fmt.Sprintf("/groups/%d", h.ID), Token: owner.Token,
			JSON: map[string]any{"name": "EC Shared Renamed"}}).Want(t, http.StatusOK)
		got = read(t, hit)
		if sh, _ := got["shared_with_groups"].([]any); len(sh) != 1 || sh[0].(map[string]any)["group_name"] != "EC Shared Renamed" {
			t.Errorf("shared_with_groups %v", got["shared_with_groups"])
		}

		a.Do(t, apitest.Request{Method: "POST", Path: path + "/members", Token: owner.Token,
			JSON: map[string]any{"user_id": reader.ID, "access_level": 40}}).Want(t, http.StatusCreated)
		// A maintainer is another class of caller (the CI settings).
		got = read(t, classMiss)
		want(t, got, "permissions", map[string]any{"project_access": map[string]any{"access_level": 40, "notification_level": 3}, "group_access": nil})
		if _, ok := got["runners_token"]; !ok {
			t.Errorf("a maintainer's entity has no runners_token: %v", got)
		}

		// The lists are spliced from the same encodings.
		var list []map[string]any
		b.Get(t, "/projects?search=cached", reader.Token).Want(t, http.StatusOK).JSON(t, &list)
		a.Do(t, apitest.Request{Method: "PUT", Path: path, Token: owner.Token, JSON: map[string]any{"description": "third"}}).Want(t, http.StatusOK)
		b.Get(t, "/projects?search=cached", reader.Token).Want(t, http.StatusOK).JSON(t, &list)
		if len(list) != 1 || list[0]["description"] != "third" {
			t.Errorf("list after the edit: %v", list)
		}

		// Users: the administrator's view.
		u, _ := qc.get(t, fmt.Sprintf("/users/%d", reader.ID), b.RootToken)
		want(t, u, "bio", "")
		a.Do(t, apitest.Request{Method: "PUT", Path: fmt.Sprintf("/users/%d", reader.ID), Token: a.RootToken,
			JSON: map[string]any{"bio": "edited elsewhere"}}).Want(t, http.StatusOK)
		u, _ = qc.get(t, fmt.Sprintf("/users/%d", reader.ID), b.RootToken)
		want(t, u, "bio", "edited elsewhere")

		// A personal project's owner is kept by the owner's version: a
		// rename elsewhere shows in the next read.
		var mine struct {
			ID int64 `json:"id"`
		}
		a.Do(t, apitest.Request{Method: "POST", Path: "/projects", Token: owner.Token,
			JSON: map[string]any{"name": "mine", "visibility": "public"}}).Want(t, http.StatusCreated).JSON(t, &mine)
		minePath := fmt.Sprintf("/projects/%d", mine.ID)
		got, _ = qc.get(t, minePath, reader.Token)
		if o, _ := got["owner"].(map[string]any); o["name"] != "Ecowner" {
			t.Errorf("owner %v; want Ecowner", got["owner"])
		}
		a.Do(t, apitest.Request{Method: "PUT", Path: fmt.Sprintf("/users/%d", owner.ID), Token: a.RootToken,
			JSON: map[string]any{"name": "Owner Renamed"}}).Want(t, http.StatusOK)
		got, _ = qc.get(t, minePath, reader.Token)
		if o, _ := got["owner"].(map[string]any); o["name"] != "Owner Renamed" {
			t.Errorf("owner after the rename elsewhere: %v", got["owner"])
		}
	})
}
