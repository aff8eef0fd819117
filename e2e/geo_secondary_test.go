package e2e

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"quarry/internal/apitest"
	"quarry/internal/app"
	"quarry/internal/geo"
	"quarry/internal/git/gitrepo"
)

const readOnlyBody = `{"message":"You cannot perform write operations on a read-only instance"}`

// secondaryOf starts a second Quarry, the secondary node named name, on
// s's database and data folder but with repository storage of its own
// (dir): what an operator copied there is what it has. It pushes its
// status every 100 ms.
//
// Two processes share one database only on PostgreSQL (one SQLite file
// has one Quarry process): there both run side by side, in this test
// process, as two Quarry processes would. On SQLite s is stopped first
// and the secondary takes its place on the file, so its read-only mode
// and its status are tested on both databases, and its pushes reach a
// running primary on PostgreSQL only.
func secondaryOf(t *testing.T, s *apitest.Server, name, dir string) *apitest.Server {
	t.Helper()
	if s.Target.DatabaseURL == "" {
		s.Stop()
	}
	return apitest.StartIn(t, s.Target, s.DataDir, func(c *config) {
		c.GeoNodeName = name
		c.Storages = "default=" + dir
		c.GeoStatusInterval = 100 * time.Millisecond
	})
}

// copyRepository copies a bare repository from s's default storage to
// dir, as an operator keeping a secondary's storage in step would.
func copyRepository(t *testing.T, s *apitest.Server, rel, dir string) {
	t.Helper()
	dst := filepath.Join(dir, rel)
	if err := os.MkdirAll(filepath.Dir(dst), 0o750); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("cp", "-a", filepath.Join(s.DataDir, "repositories", rel), dst).CombinedOutput(); err != nil {
		t.Fatalf("copy %s: %v\n%s", rel, err, out)
	}
}

// TestGeoSecondary_readOnly: a process named for a secondary node serves
// reads — the API, and clones of what its storage holds — and refuses
// every write (the API's POST, PUT, PATCH and DELETE, and git pushes) with
// GitLab's read-only message. Its own status counts what its storage
// holds of what the database names, and its failures list what is
// missing. On PostgreSQL it pushes that status to the running primary,
// signed with its node's credentials, and the primary serves it.
func TestGeoSecondary_readOnly(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		owner := s.NewUser(t, "geoowner")
		// alpha has a job artifact, in the data folder both share.
		ci := newCIProject(t, s, owner, "alpha", map[string]string{".gitlab-ci.yml": capiNoPush + "a: {script: [x]}\n"})
		artifact := capiStoreArchive(t, s, ci.ownJobs(t, ci.createPipeline(t, "main").ID)[0].ID, "zip")
		a := struct {
			ID                int64
			PathWithNamespace string
		}{ci.ID, ci.Path}
		var b struct {
			ID int64 `json:"id"`
		}
		s.Do(t, apitest.Request{Method: "POST", Path: "/projects", Token: owner.Token, JSON: map[string]any{"name": "beta",
			"initialize_with_readme": true}}).Want(t, http.StatusCreated).JSON(t, &b)
		s.Do(t, apitest.Request{Method: "POST", Path: fmt.Sprintf("/projects/%d/wikis", a.ID), Token: owner.Token,
			JSON: map[string]any{"title": "Home", "content": "hello"}}).Want(t, http.StatusCreated)
		eventually(t, "the wiki's size recorded", func() bool {
			st, _ := s.Get(t, fmt.Sprintf("/projects/%d?statistics=true", a.ID), s.RootToken).Want(t, 200).Object(t)["statistics"].(map[string]any)
			n, _ := st["wiki_size"].(float64)
			return n > 0
		})
		prim := createGeoNode(t, s, map[string]any{"name": "main", "url": s.URL, "primary": true})
		node := createGeoNode(t, s, map[string]any{"name": "Copy", "url": "https://copy.example.com"})
		id := nodeID(node)
		dir := t.TempDir()
		copyRepository(t, s, gitrepo.HashedPath("", a.ID), dir) // alpha's repository, not its wiki; nothing of beta

		sec := secondaryOf(t, s, "copy", dir)
		// Reads work.
		if got := sec.Get(t, fmt.Sprintf("/projects/%d", a.ID), owner.Token).Want(t, http.StatusOK).Object(t); got["name"] != "alpha" {
			t.Errorf("read on the secondary: %v", got)
		}
		nodes := sec.Get(t, "/geo_nodes", sec.RootToken).Want(t, http.StatusOK).Array(t)
		if len(nodes) != 2 || nodes[0]["current"] != false || nodes[1]["current"] != true {
			t.Errorf("nodes on the secondary: %v", nodes)
		}
		// Writes are refused, whoever asks.
		for _, r := range []apitest.Request{
			{Method: "POST", Path: "/projects", Token: owner.Token, JSON: map[string]any{"name": "gamma"}},
			{Method: "PUT", Path: fmt.Sprintf("/projects/%d", a.ID), Token: owner.Token, JSON: map[string]any{"description": "x"}},
			{Method: "DELETE", Path: fmt.Sprintf("/projects/%d", b.ID), Token: owner.Token},
			{Method: "PATCH", Path: "/user/status", Token: owner.Token, JSON: map[string]any{"message": "x"}},
			{Method: "POST", Path: "/geo_nodes", Token: sec.RootToken, JSON: map[string]any{"name": "n", "url": "https://n.example.com"}},
			{Method: "PUT", Path: fmt.Sprintf("/geo_nodes/%d", id), Token: sec.RootToken, JSON: map[string]any{"name": "n"}},
			{Method: "POST", Path: "/geo_nodes/status", Raw: []byte("{}")},
			{Method: "POST", Path: "/projects", JSON: map[string]any{"name": "anon"}},
			// The web's forms too: signing in writes a session.
			{Method: "POST", Path: sec.URL + "/users/sign_in", Form: url.Values{"user[login]": {"geoowner"}, "user[password]": {webPassword}}},
		} {
			sec.Do(t, r).Want(t, http.StatusForbidden).WantBody(t, readOnlyBody)
		}
		// git: a clone of what is here works, a push is refused.
		work := t.TempDir()
		if out, err := gitRun(work, "clone", "-q", cloneURL(sec, a.PathWithNamespace, "o", owner.Token), "alpha"); err != nil {
			t.Fatalf("clone from the secondary: %v\n%s", err, out)
		}
		wc := filepath.Join(work, "alpha")
		writeFile(t, filepath.Join(wc, "new.txt"), "new\n")
		gitRun(wc, "add", ".")
		gitRun(wc, "commit", "-q", "-m", "new")
		if out, err := gitRun(wc, "push", "origin", "HEAD:feature"); err == nil || !strings.Contains(out, "403") {
			t.Errorf("push to the secondary: %v\n%s", err, out)
		}

		// Its failures: alpha's wiki and beta's repository are not here.
		wantFailures := func(query string, want ...string) {
			t.Helper()
			list := sec.Get(t, "/geo_nodes/current/failures"+query, sec.RootToken).Want(t, http.StatusOK).Array(t)
			var got []string
			for _, f := range list {
				got = append(got, fmt.Sprintf("%v:%v:%v", f["project_id"], f["last_repository_sync_failure"], f["last_wiki_sync_failure"]))
			}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("failures%s: %v; want %v", query, got, want)
			}
		}
		alphaWiki := fmt.Sprintf("%d:<nil>:%s", a.ID, geo.MissingWiki)
		betaRepo := fmt.Sprintf("%d:%s:<nil>", b.ID, geo.MissingRepository)
		wantFailures("", alphaWiki, betaRepo)
		wantFailures("?type=wiki", alphaWiki)
		wantFailures("?type=repository&failure_type=sync", betaRepo)
		wantFailures("?failure_type=verification")
		wantFailures("?failure_type=checksum_mismatch")
		one := sec.Get(t, "/geo_nodes/current/failures?per_page=1", sec.RootToken).Want(t, http.StatusOK)
		if one.Header.Get("X-Total") != "2" || len(one.Array(t)) != 1 {
			t.Errorf("failures page: %s %s", one.Header, one.Body)
		}
		wantShape(t, "failure", sec.Get(t, "/geo_nodes/current/failures", sec.RootToken).Array(t)[0], map[string]string{
			"project_id": "number", "last_repository_synced_at": "null", "last_repository_successful_sync_at": "null",
			"last_wiki_synced_at": "null", "last_wiki_successful_sync_at": "null", "repository_retry_count": "null",
			"wiki_retry_count": "null", "last_repository_sync_failure": "null|string", "last_wiki_sync_failure": "null|string",
			"last_repository_verification_failure": "null", "last_wiki_verification_failure": "null",
			"repository_verification_checksum_sha": "null", "wiki_verification_checksum_sha": "null",
			"repository_checksum_mismatch": "bool", "wiki_checksum_mismatch": "bool",
		})
		sec.Get(t, "/geo_nodes/current/failures?failure_type=other", sec.RootToken).Want(t, http.StatusNotFound).
			WantBody(t, `{"message":"404 Failure type unknown Not Found"}`)
		sec.Get(t, "/geo_nodes/current/failures?type=lfs", sec.RootToken).Want(t, http.StatusBadRequest).
			WantBody(t, `{"error":"type does not have a valid value"}`)

		// Its status, as it computes it: what the database names, and how
		// much of it is here.
		want := map[string]any{"geo_node_id": id, "healthy": true, "projects_count": 2, "repositories_count": 2,
			"repositories_synced_count": 1, "repositories_failed_count": 1, "repositories_registry_count": 2,
			"repositories_synced_in_percentage": "50.00%", "wikis_count": 1, "wikis_synced_count": 0, "wikis_failed_count": 1,
			"wikis_synced_in_percentage": "0.00%", "job_artifacts_count": 1, "job_artifacts_synced_count": 1,
			"job_artifacts_failed_count": 0, "group_wiki_repositories_count": 0, "replication_slots_count": nil, "uploads_count": nil}
		st := sec.Get(t, fmt.Sprintf("/geo_nodes/%d/status", id), sec.RootToken).Want(t, http.StatusOK).Object(t)
		wantShape(t, "secondary's own status", st, geoStatusKeys())
		wantFields(t, "secondary's own status", st, want)
		// An artifact whose file is not on this node's disk is not synced.
		if err := os.Remove(filepath.Join(s.DataDir, "jobs", artifact.Path)); err != nil {
			t.Fatal(err)
		}
		want["job_artifacts_synced_count"], want["job_artifacts_failed_count"] = 0, 1
		st = sec.Get(t, fmt.Sprintf("/geo_nodes/%d/status", id), sec.RootToken).Want(t, http.StatusOK).Object(t)
		wantFields(t, "without the artifact's file", st, want)

		if s.Target.DatabaseURL == "" {
			return // the primary is stopped: one SQLite file, one process
		}
		// The primary: no failures of its own; the secondary's status as
		// pushed, following what the secondary's storage gets.
		s.Get(t, "/geo_nodes/current/failures", s.RootToken).Want(t, http.StatusForbidden)
		var pushed map[string]any
		eventually(t, "the secondary's status, as it is now, reaches the primary", func() bool {
			r := s.Get(t, fmt.Sprintf("/geo_nodes/%d/status", id), s.RootToken)
			if r.Status != http.StatusOK {
				return false
			}
			pushed = r.Object(t)
			return pushed["job_artifacts_failed_count"] == float64(1)
		})
		wantShape(t, "pushed status", pushed, geoStatusKeys())
		wantFields(t, "pushed status", pushed, want)
		copyRepository(t, s, gitrepo.HashedPath("", b.ID), dir)
		eventually(t, "the copied repository counts as synced", func() bool {
			pushed = s.Get(t, fmt.Sprintf("/geo_nodes/%d/status", id), s.RootToken).Want(t, http.StatusOK).Object(t)
			return pushed["repositories_synced_count"] == float64(2)
		})
		wantFields(t, "after the copy", pushed, map[string]any{"repositories_failed_count": 0, "repositories_synced_in_percentage": "100.00%"})
		if a := s.Get(t, "/geo_nodes/status", s.RootToken).Want(t, http.StatusOK).Array(t); len(a) != 2 ||
			a[0]["geo_node_id"] != float64(nodeID(prim)) || a[1]["geo_node_id"] != float64(id) {
			t.Errorf("statuses on the primary: %v", a)
		}
		wantFailures("", alphaWiki)
	})
}

// TestGeoSecondary_unregistered: a process named for a node the primary
// does not know is read-only too (it was told it is a copy), and knows
// no current node.
func TestGeoSecondary_unregistered(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		s.Stop()
		ghost := apitest.StartIn(t, s.Target, s.DataDir, func(c *config) { c.GeoNodeName = "ghost" })
		ghost.Do(t, apitest.Request{Method: "POST", Path: "/projects", Token: ghost.RootToken, JSON: map[string]any{"name": "p"}}).
			Want(t, http.StatusForbidden).WantBody(t, readOnlyBody)
		ghost.Get(t, "/geo_nodes/current/failures", ghost.RootToken).Want(t, http.StatusNotFound).
			WantBody(t, `{"message":"404 Geo node not found Not Found"}`)
		ghost.Get(t, "/geo_nodes", ghost.RootToken).Want(t, http.StatusOK)

		// A database behind this version: a secondary does not migrate it,
		// it refuses to start.
		cfg := ghost.App.Config
		ghost.Stop()
		db, q := rawDB(t, s)
		if _, err := db.Exec(q("DELETE FROM goose_db_version WHERE version_id = (SELECT MAX(version_id) FROM goose_db_version)")); err != nil {
			t.Fatal(err)
		}
		a, err := app.New(context.Background(), cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
		if err == nil {
			a.Close()
			t.Fatal("a secondary started on a database behind its version")
		}
		if !strings.Contains(err.Error(), "a secondary does not migrate") {
			t.Errorf("start on a database behind: %v", err)
		}
	})
}
