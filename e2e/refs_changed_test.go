package e2e

import (
	"context"
	"net/http"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"quarry/internal/apitest"
	"quarry/internal/model"
)

// eventLog subscribes to a running server's refs-changed events.
type eventLog struct {
	mu   sync.Mutex
	seen []model.RefsChanged
}

func subscribe(t *testing.T, s *apitest.Server) *eventLog {
	l := &eventLog{}
	s.App.Events.OnRefsChanged("test-"+t.Name(), func(_ context.Context, e model.RefsChanged) error {
		l.mu.Lock()
		defer l.mu.Unlock()
		l.seen = append(l.seen, e)
		return nil
	})
	return l
}

// next waits for the next event of a source.
func (l *eventLog) next(t *testing.T, source string, after int) model.RefsChanged {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		l.mu.Lock()
		for _, e := range l.seen[min(after, len(l.seen)):] {
			if e.Source == source {
				l.mu.Unlock()
				return e
			}
		}
		l.mu.Unlock()
	}
	t.Fatalf("no %s event after 10s", source)
	return model.RefsChanged{}
}

func (l *eventLog) len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.seen)
}

// TestRefsChanged_pushAndAPICommitAlike: a git push and an API commit that
// move a branch the same way produce the same event, but for the source:
// the project, the actor, the ref with its old and new ids.
func TestRefsChanged_pushAndAPICommitAlike(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		events := subscribe(t, s)
		owner := s.NewUser(t, "owner")
		var p struct{ ID int64 }
		s.Do(t, apitest.Request{Method: "POST", Path: "/projects", Token: owner.Token, JSON: map[string]any{"name": "evt", "initialize_with_readme": true}}).
			Want(t, http.StatusCreated).JSON(t, &p)
		created := events.next(t, model.RefsSourceAPI, 0)
		if created.ProjectID != p.ID || created.ActorID != owner.ID || len(created.Updates) != 1 || created.Updates[0].Old != model.ZeroRef ||
			created.Updates[0].Ref != "refs/heads/main" {
			t.Fatalf("README commit event %+v", created)
		}
		tip := created.Updates[0].New

		// An API commit on main.
		n := events.len()
		var c struct{ ID string }
		s.Do(t, apitest.Request{Method: "POST", Path: "/projects/" + itoa(p.ID) + "/repository/commits", Token: owner.Token, JSON: map[string]any{
			"branch": "main", "commit_message": "api", "actions": []map[string]any{{"action": "create", "file_path": "a.txt", "content": "a"}}}}).
			Want(t, http.StatusCreated).JSON(t, &c)
		api := events.next(t, model.RefsSourceAPI, n)

		// A push on main.
		work := t.TempDir()
		w := filepath.Join(work, "w")
		if out, err := gitRun(work, "clone", "-q", cloneURL(s, "owner/evt", "owner", owner.Token), "w"); err != nil {
			t.Fatalf("clone: %v\n%s", err, out)
		}
		writeFile(t, filepath.Join(w, "b.txt"), "b\n")
		gitRun(w, "add", ".")
		gitRun(w, "commit", "-q", "-m", "pushed")
		if out, err := gitRun(w, "push", "-q", "origin", "main"); err != nil {
			t.Fatalf("push: %v\n%s", err, out)
		}
		head, _ := gitRun(w, "rev-parse", "HEAD")
		push := events.next(t, model.RefsSourcePush, 0)

		want := []model.RefUpdate{{Ref: "refs/heads/main", Old: tip, New: c.ID}}
		if api.ProjectID != p.ID || api.ActorID != owner.ID || len(api.Updates) != 1 || api.Updates[0] != want[0] {
			t.Errorf("API commit event %+v; want updates %+v", api, want)
		}
		want = []model.RefUpdate{{Ref: "refs/heads/main", Old: c.ID, New: trim(head)}}
		if push.ProjectID != p.ID || push.ActorID != owner.ID || len(push.Updates) != 1 || push.Updates[0] != want[0] {
			t.Errorf("push event %+v; want updates %+v", push, want)
		}
		if api.At.IsZero() || push.At.IsZero() {
			t.Errorf("times %v, %v", api.At, push.At)
		}

		// Branches and tags made or removed through the API are events too;
		// a push of a tag and a deleted branch as well.
		n = events.len()
		s.Do(t, apitest.Request{Method: "POST", Path: "/projects/" + itoa(p.ID) + "/repository/branches", Token: owner.Token,
			JSON: map[string]any{"branch": "dev", "ref": "main"}}).Want(t, http.StatusCreated)
		e := events.next(t, model.RefsSourceAPI, n)
		if e.Updates[0] != (model.RefUpdate{Ref: "refs/heads/dev", Old: model.ZeroRef, New: trim(head)}) {
			t.Errorf("branch event %+v", e.Updates)
		}
		n = events.len()
		gitRun(w, "tag", "v1")
		if out, err := gitRun(w, "push", "-q", "origin", "v1", ":dev"); err != nil {
			t.Fatalf("push tag, delete dev: %v\n%s", err, out)
		}
		e = events.next(t, model.RefsSourcePush, n)
		got := map[string]model.RefUpdate{}
		for _, u := range e.Updates {
			got[u.Ref] = u
		}
		if got["refs/tags/v1"].New != trim(head) || got["refs/heads/dev"].New != model.ZeroRef || len(got) != 2 {
			t.Errorf("tag and delete push %+v", e.Updates)
		}
	})
}

func trim(s string) string {
	for len(s) > 0 && (s[len(s)-1] == '\n' || s[len(s)-1] == '\r') {
		s = s[:len(s)-1]
	}
	return s
}
