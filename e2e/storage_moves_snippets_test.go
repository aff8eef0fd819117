package e2e

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"quarry/internal/apitest"
	"quarry/internal/git/gitrepo"
	"quarry/internal/model"
)

type smSnippet struct {
	ID                int64  `json:"id"`
	RepositoryStorage string `json:"repository_storage"`
	HTTPURLToRepo     string `json:"http_url_to_repo"`
}

// TestStorageMoves_snippets: a snippet's move waits for a push in flight;
// meanwhile API edits and new pushes are refused with GitLab's message
// and clones and raw reads are served; then the repository is on the
// destination only, edited and pushed there. A bulk move takes the rest
// of the source's snippets (personal and of projects) and lists none on
// it afterwards.
func TestStorageMoves_snippets(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		owner := s.NewUser(t, "owner")
		p := smNewProject(t, s, owner, "withsnippets")
		newSnippet := func(path, title string) smSnippet {
			var sn smSnippet
			s.Do(t, apitest.Request{Method: "POST", Path: path, Token: owner.Token, JSON: map[string]any{"title": title,
				"visibility": "private", "files": []map[string]any{{"file_path": "a.txt", "content": "a\n"}}}}).
				Want(t, http.StatusCreated).JSON(t, &sn)
			s.Get(t, fmt.Sprintf("/snippets/%d", sn.ID), s.RootToken).Want(t, http.StatusOK).JSON(t, &sn)
			if sn.RepositoryStorage != "default" {
				t.Fatalf("a new snippet on %q; want default (the only storage with weight)", sn.RepositoryStorage)
			}
			return sn
		}
		personal := newSnippet("/snippets", "mine")
		ofProject := newSnippet(fmt.Sprintf("/projects/%d/snippets", p.ID), "theirs")
		third := newSnippet("/snippets", "another")
		rel := gitrepo.SnippetPath(personal.ID)
		if !strings.HasSuffix(personal.HTTPURLToRepo, fmt.Sprintf("/snippets/%d.git", personal.ID)) {
			t.Fatalf("http_url_to_repo %q", personal.HTTPURLToRepo)
		}

		work := t.TempDir()
		url := cloneURL(s, fmt.Sprintf("snippets/%d", personal.ID), "owner", owner.Token)
		gitOut(t, work, "clone", "-q", url, "w")
		w := filepath.Join(work, "w")

		release := holdPush(t, s, fmt.Sprintf("snippets/%d", personal.ID), owner.Token)
		eventually(t, "the push's lease", func() bool { return smLiveLeases(t, s, model.ContainerSnippet, personal.ID) == 1 })
		var m struct {
			smMove
			Snippet map[string]any `json:"snippet"`
		}
		s.Do(t, apitest.Request{Method: "POST", Path: fmt.Sprintf("/snippets/%d/repository_storage_moves", personal.ID), Token: s.RootToken,
			JSON: map[string]any{"destination_storage_name": "second"}}).Want(t, http.StatusCreated).JSON(t, &m)
		if m.State != "scheduled" || m.SourceStorageName != "default" || m.DestinationStorageName != "second" {
			t.Errorf("scheduled move %+v", m)
		}
		movePath := fmt.Sprintf("/snippets/%d/repository_storage_moves/%d", personal.ID, m.ID)
		smWaitMove(t, s, movePath, inState("started"))

		// Read-only while the move waits for the push.
		readOnly := `{"message":"` + model.RepositoryReadOnlyMessage + `"}`
		s.Do(t, apitest.Request{Method: "PUT", Path: fmt.Sprintf("/snippets/%d", personal.ID), Token: owner.Token,
			JSON: map[string]any{"files": []map[string]any{{"action": "update", "file_path": "a.txt", "content": "during\n"}}}}).
			Want(t, http.StatusForbidden).WantBody(t, readOnly)
		s.Do(t, apitest.Request{Method: "DELETE", Path: fmt.Sprintf("/snippets/%d", personal.ID), Token: owner.Token}).
			Want(t, http.StatusForbidden).WantBody(t, readOnly)
		smCommit(t, w, "during.txt")
		if out, err := gitRun(w, "push", "origin", "HEAD"); err == nil || !strings.Contains(out, model.RepositoryReadOnlyMessage) {
			t.Errorf("push during the move: %v\n%s", err, out)
		}
		gitOut(t, work, "clone", "-q", url, "during")
		if got := string(s.Get(t, fmt.Sprintf("/snippets/%d/raw", personal.ID), owner.Token).Want(t, http.StatusOK).Body); got != "a\n" {
			t.Errorf("raw during the move: %q", got)
		}
		// A second move of a snippet that is moving is refused.
		s.Do(t, apitest.Request{Method: "POST", Path: fmt.Sprintf("/snippets/%d/repository_storage_moves", personal.ID), Token: s.RootToken,
			JSON: map[string]any{"destination_storage_name": "second"}}).Want(t, http.StatusBadRequest).
			WantBody(t, `{"message":{"snippet":["is read-only"]}}`)

		release()
		end := smWaitMove(t, s, movePath, inState("finished", "failed"))
		if end.State != "finished" || end.ErrorMessage != nil {
			t.Fatalf("move ended %s: %v", end.State, end.ErrorMessage)
		}
		if !smExists(smRoot(s, "second"), rel) || smExists(smRoot(s, "default"), rel) {
			t.Errorf("on disk: second %v, default %v; want only second", smExists(smRoot(s, "second"), rel), smExists(smRoot(s, "default"), rel))
		}
		var after smSnippet
		s.Get(t, fmt.Sprintf("/snippets/%d", personal.ID), s.RootToken).Want(t, http.StatusOK).JSON(t, &after)
		if after.RepositoryStorage != "second" {
			t.Errorf("after the move the snippet is on %q", after.RepositoryStorage)
		}
		gitOut(t, w, "push", "-q", "origin", "HEAD")
		s.Do(t, apitest.Request{Method: "PUT", Path: fmt.Sprintf("/snippets/%d", personal.ID), Token: owner.Token,
			JSON: map[string]any{"files": []map[string]any{{"action": "update", "file_path": "a.txt", "content": "after\n"}}}}).
			Want(t, http.StatusOK)
		if got := gitOut(t, smRoot(s, "second"), "--git-dir", rel, "log", "--format=%s", "-2"); !strings.Contains(got, "during.txt") ||
			!strings.Contains(got, "Update snippet") {
			t.Errorf("the push and the edit after the move are not on the destination: %q", got)
		}
		gitOut(t, work, "clone", "-q", url, "after")
		if b, err := os.ReadFile(filepath.Join(work, "after", "a.txt")); err != nil || string(b) != "after\n" {
			t.Errorf("a clone after the move: %q %v", b, err)
		}

		// The record, in each list and read.
		rec := s.Get(t, fmt.Sprintf("/snippet_repository_storage_moves/%d", m.ID), s.RootToken).Want(t, http.StatusOK).Object(t)
		smCheckRecord(t, rec, map[string]any{"id": m.ID, "state": "finished", "source_storage_name": "default",
			"destination_storage_name": "second", "error_message": nil}, "snippet",
			[]string{"id", "title", "description", "visibility", "updated_at", "created_at", "project_id", "web_url", "raw_url",
				"ssh_url_to_repo", "http_url_to_repo"})
		if sn, _ := rec["snippet"].(map[string]any); sn["id"] != float64(personal.ID) || sn["title"] != "mine" {
			t.Errorf("the record's snippet: %v", sn)
		}
		for _, path := range []string{fmt.Sprintf("/snippets/%d/repository_storage_moves", personal.ID), "/snippet_repository_storage_moves"} {
			if list := s.Get(t, path, s.RootToken).Want(t, http.StatusOK).Array(t); len(list) != 1 || list[0]["id"] != float64(m.ID) {
				t.Errorf("%s: %v", path, list)
			}
		}
		s.Get(t, fmt.Sprintf("/snippets/%d/repository_storage_moves", 999999), s.RootToken).Want(t, http.StatusNotFound).
			WantBody(t, `{"message":"404 Snippet Not Found"}`)
		s.Get(t, fmt.Sprintf("/snippets/%d/repository_storage_moves", personal.ID), owner.Token).Want(t, http.StatusForbidden)

		// Bulk: the rest of default's snippets go to second.
		s.Do(t, apitest.Request{Method: "POST", Path: "/snippet_repository_storage_moves", Token: s.RootToken,
			JSON: map[string]any{"source_storage_name": "default", "destination_storage_name": "second"}}).
			Want(t, http.StatusAccepted).WantBody(t, `{"message":"202 Accepted"}`)
		eventually(t, "every snippet on second", func() bool {
			list := s.Get(t, "/snippets/all?repository_storage=default", s.RootToken).Want(t, http.StatusOK).Array(t)
			return len(list) == 0
		})
		for _, id := range []int64{ofProject.ID, third.ID} {
			var sn smSnippet
			s.Get(t, fmt.Sprintf("/snippets/%d", id), s.RootToken).Want(t, http.StatusOK).JSON(t, &sn)
			if sn.RepositoryStorage != "second" || !smExists(smRoot(s, "second"), gitrepo.SnippetPath(id)) {
				t.Errorf("snippet %d after the bulk move: %q", id, sn.RepositoryStorage)
			}
		}
		eventually(t, "the bulk moves finished", func() bool {
			list := s.Get(t, "/snippet_repository_storage_moves", s.RootToken).Want(t, http.StatusOK).Array(t)
			for _, r := range list {
				if r["state"] != "finished" {
					return false
				}
			}
			return len(list) == 3
		})
		if got := string(s.Get(t, fmt.Sprintf("/projects/%d/snippets/%d/raw", p.ID, ofProject.ID), owner.Token).Want(t, http.StatusOK).Body); got != "a\n" {
			t.Errorf("the project's snippet after its move: %q", got)
		}
	}, moveOpts)
}
