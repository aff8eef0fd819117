package e2e

import (
	"bytes"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"quarry/internal/apitest"
)

// TestMergeRequestCache_acrossProcesses: a merge request is read through
// one server (B), which keeps its encodings (detail and list), and
// changed through another (A) on the same database; every change shows
// in B's next reads, whatever row it changed: the merge request's own
// (title, labels, a merge), its assignees and reviewers, its author's
// name, its project's group's path, its source branch (a push: new head,
// new head pipeline) and its head pipeline's status. On PostgreSQL B's
// answers are also byte for byte those of a third server with the entity
// cache off (C), for each caller; on SQLite A and B are one server.
func TestMergeRequestCache_acrossProcesses(t *testing.T) {
	apitest.Each(t, func(t *testing.T, a *apitest.Server) {
		b, c := a, (*apitest.Server)(nil)
		if a.Target.DatabaseURL != "" {
			b = apitest.StartIn(t, a.Target, a.DataDir, shortPoll)
			c = apitest.StartIn(t, a.Target, a.DataDir, shortPoll, func(c *config) { c.EntityCacheBytes = 0 })
		}
		owner := a.NewUser(t, "mrcowner")
		dev := a.NewUser(t, "mrcdev")
		var g struct {
			ID int64 `json:"id"`
		}
		a.Do(t, apitest.Request{Method: "POST", Path: "/groups", Token: owner.Token,
			JSON: map[string]any{"name": "MRC Group", "path": "mrc-group", "visibility": "public"}}).Want(t, http.StatusCreated).JSON(t, &g)
		var pj struct {
			ID                int64  `json:"id"`
			PathWithNamespace string `json:"path_with_namespace"`
		}
		a.Do(t, apitest.Request{Method: "POST", Path: "/projects", Token: owner.Token, JSON: map[string]any{"name": "mrc", "namespace_id": g.ID,
			"visibility": "public", "initialize_with_readme": true}}).Want(t, http.StatusCreated).JSON(t, &pj)
		p := ciProject{s: a, ID: pj.ID, Path: pj.PathWithNamespace, Token: owner.Token}
		p.commit(t, "main", map[string]string{".gitlab-ci.yml": mrCI})
		a.Do(t, apitest.Request{Method: "POST", Path: fmt.Sprintf("/projects/%d/members", p.ID), Token: owner.Token,
			JSON: map[string]any{"user_id": dev.ID, "access_level": 30}}).Want(t, http.StatusCreated)
		p.commit(t, "topic", map[string]string{"topic.txt": "one\n"})
		// The push's pipeline is made after the push: wait for it, so it
		// does not land between two reads that must agree.
		eventually(t, "the topic push's pipeline", func() bool {
			var pls []struct{}
			a.Get(t, fmt.Sprintf("/projects/%d/pipelines?ref=topic&source=push", p.ID), owner.Token).Want(t, http.StatusOK).JSON(t, &pls)
			return len(pls) == 1
		})
		var mr mrJSON
		a.Do(t, apitest.Request{Method: "POST", Path: fmt.Sprintf("/projects/%d/merge_requests", p.ID), Token: owner.Token,
			JSON: map[string]any{"source_branch": "topic", "target_branch": "main", "title": "Cache me", "labels": "one"}}).
			Want(t, http.StatusCreated).JSON(t, &mr)
		detailPath := fmt.Sprintf("/projects/%d/merge_requests/%d", p.ID, mr.IID)
		listPath := fmt.Sprintf("/projects/%d/merge_requests?state=all", p.ID)
		callers := []string{owner.Token, dev.Token, ""}

		// read returns B's detail as the author; every caller's detail and
		// list are read twice through B (the second from the cache) and
		// agree, and on PostgreSQL equal C's bytes.
		read := func(t *testing.T) map[string]any {
			t.Helper()
			for _, path := range []string{detailPath, listPath} {
				for _, tok := range callers {
					first := b.Do(t, apitest.Request{Path: path, Token: tok}).Want(t, http.StatusOK).Body
					again := b.Do(t, apitest.Request{Path: path, Token: tok}).Want(t, http.StatusOK).Body
					if !bytes.Equal(first, again) {
						t.Fatalf("GET %s: a second read differs:\n%s\n%s", path, first, again)
					}
					if c != nil {
						plain := c.Do(t, apitest.Request{Path: path, Token: tok}).Want(t, http.StatusOK).Body
						// Each server links to its own address.
						if plain = bytes.ReplaceAll(plain, []byte(c.URL), []byte(b.URL)); !bytes.Equal(first, plain) {
							t.Fatalf("GET %s: cached\n%s\nuncached\n%s", path, first, plain)
						}
					}
				}
			}
			return b.Get(t, detailPath, owner.Token).Want(t, http.StatusOK).Object(t)
		}
		want := func(t *testing.T, got map[string]any, key string, v any) {
			t.Helper()
			if fmt.Sprint(got[key]) != fmt.Sprint(v) {
				t.Errorf("%s = %v; want %v", key, got[key], v)
			}
		}
		names := func(got map[string]any, key string) string {
			var out []string
			list, _ := got[key].([]any)
			for _, u := range list {
				out = append(out, fmt.Sprint(u.(map[string]any)["username"]))
			}
			return strings.Join(out, ",")
		}
		headPipeline := func(got map[string]any) (sha, status string) {
			pl, _ := got["head_pipeline"].(map[string]any)
			return fmt.Sprint(pl["sha"]), fmt.Sprint(pl["status"])
		}

		// The pipelines of a push and of a merge request are made after
		// the write that asks for them: wait for them through B.
		settled := func(t *testing.T, head, status string) {
			t.Helper()
			eventually(t, "head pipeline at "+head+" "+status, func() bool {
				got := b.Get(t, detailPath, owner.Token).Want(t, http.StatusOK).Object(t)
				// A head has two pipelines (mrCI): the branch's push and
				// the merge request's, made in either order by two
				// subscribers; the later is the head pipeline. Wait for
				// both, or the second lands between two reads.
				var pls []struct{}
				a.Get(t, fmt.Sprintf("/projects/%d/pipelines?sha=%s", p.ID, head), owner.Token).Want(t, http.StatusOK).JSON(t, &pls)
				sha, st := headPipeline(got)
				return len(pls) == 2 && got["sha"] == head && sha == head && (status == "" || st == status)
			})
		}
		settled(t, mr.SHA, "")
		got := read(t)
		want(t, got, "title", "Cache me")
		want(t, got, "labels", []string{"one"})

		edit := func(t *testing.T, body map[string]any) map[string]any {
			t.Helper()
			a.Do(t, apitest.Request{Method: "PUT", Path: detailPath, Token: owner.Token, JSON: body}).Want(t, http.StatusOK)
			return read(t)
		}
		want(t, edit(t, map[string]any{"title": "Retitled"}), "title", "Retitled")
		want(t, edit(t, map[string]any{"labels": "one,two"}), "labels", []string{"one", "two"})
		got = edit(t, map[string]any{"assignee_ids": []int64{dev.ID, owner.ID}})
		if names(got, "assignees") != "mrcdev,mrcowner" {
			t.Errorf("assignees %v", got["assignees"])
		}
		if got = edit(t, map[string]any{"reviewer_ids": []int64{dev.ID}}); names(got, "reviewers") != "mrcdev" {
			t.Errorf("reviewers %v", got["reviewers"])
		}

		a.Do(t, apitest.Request{Method: "PUT", Path: fmt.Sprintf("/users/%d", owner.ID), Token: a.RootToken,
			JSON: map[string]any{"name": "Renamed Owner"}}).Want(t, http.StatusOK)
		got = read(t)
		if au, _ := got["author"].(map[string]any); au["name"] != "Renamed Owner" {
			t.Errorf("author %v", got["author"])
		}
		if as, _ := got["assignees"].([]any); len(as) != 2 || as[1].(map[string]any)["name"] != "Renamed Owner" {
			t.Errorf("assignees %v", got["assignees"])
		}

		a.Do(t, apitest.Request{Method: "PUT", Path: fmt.Sprintf("/groups/%d", g.ID), Token: owner.Token,
			JSON: map[string]any{"name": "MRC Renamed", "path": "mrc-renamed"}}).Want(t, http.StatusOK)
		got = read(t)
		if refs, _ := got["references"].(map[string]any); refs["full"] != "mrc-renamed/mrc!"+itoa(mr.IID) {
			t.Errorf("references %v", got["references"])
		}
		if u := fmt.Sprint(got["web_url"]); !strings.Contains(u, "/mrc-renamed/mrc/-/merge_requests/") {
			t.Errorf("web_url %s", u)
		}

		head := p.commit(t, "topic", map[string]string{"topic.txt": "two\n"})
		settled(t, head, "")
		got = read(t)
		want(t, got, "sha", head)

		r := projectRunner(t, p, nil)
		eventually(t, "every job finished", func() bool {
			job, ok := r.takeNow(t)
			if ok {
				r.update(t, job, map[string]any{"state": "success"}).Want(t, http.StatusOK)
			}
			_, st := headPipeline(b.Get(t, detailPath, owner.Token).Want(t, http.StatusOK).Object(t))
			return !ok && st == "success"
		})
		got = read(t)
		if _, st := headPipeline(got); st != "success" {
			t.Errorf("head_pipeline %v", got["head_pipeline"])
		}

		a.Do(t, apitest.Request{Method: "PUT", Path: detailPath + "/merge", Token: owner.Token}).Want(t, http.StatusOK)
		got = read(t)
		want(t, got, "state", "merged")
		if mb, _ := got["merged_by"].(map[string]any); mb["username"] != "mrcowner" {
			t.Errorf("merged_by %v", got["merged_by"])
		}
		want(t, got, "detailed_merge_status", "not_open")
	}, shortPoll)
}
