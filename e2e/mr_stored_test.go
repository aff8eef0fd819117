package e2e

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	"quarry/internal/apitest"
	"quarry/internal/model"
	"quarry/internal/store"
)

// mrGitCount counts the git processes a merge request's read may start in
// a project's repository (merge-tree, merge-base, diff-tree, fetch): the
// ones that check a merge and count its changes.
type mrGitCount struct {
	mu sync.Mutex
	n  map[string]int
}

func countMRGit(t *testing.T, s *apitest.Server, diskPath string) *mrGitCount {
	t.Helper()
	c := &mrGitCount{n: map[string]int{}}
	runner := s.App.GitRunner()
	runner.Observe(func(gitDir, name string) {
		switch name {
		case "merge-tree", "merge-base", "diff-tree", "fetch":
		default:
			return
		}
		if strings.HasSuffix(strings.TrimSuffix(gitDir, "/"), strings.TrimSuffix(diskPath, "/")) {
			c.mu.Lock()
			c.n[name]++
			c.mu.Unlock()
		}
	})
	t.Cleanup(func() { runner.Observe(nil) })
	return c
}

// during returns the processes counted while fn ran.
func (c *mrGitCount) during(fn func()) map[string]int {
	c.mu.Lock()
	clear(c.n)
	c.mu.Unlock()
	fn()
	c.mu.Lock()
	defer c.mu.Unlock()
	return copyCounts(c.n)
}

// TestMergeRequests_storedWhenTipsMove: the merge status, conflicts and
// changes count of a merge request are computed when its branches move
// (the refs-changed event) and stored: right after a push to the source
// or to the target, with no request in between, the row holds them, and
// reading the merge request then starts no git process. Tips moved
// behind the application's back (no event) are seen by the next read,
// which computes and stores what follows; a writer that computed for
// tips or diff refs no longer current stores nothing.
func TestMergeRequests_storedWhenTipsMove(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		ctx := context.Background()
		owner := s.NewUser(t, "mrsowner")
		p := mrProject(t, s, owner, "stored", "private")
		// No pipelines: their push work runs git of its own.
		mrSettings(t, p, map[string]any{"builds_access_level": "disabled"})
		base := p.commit(t, "main", map[string]string{"a.txt": "one\n"})
		head := p.commit(t, "feature", map[string]string{"a.txt": "two\n", "b.txt": "b\n"})
		mr := mrOpen(t, p, "feature", "main", "Change a")
		if mr.MergeStatus != "can_be_merged" || mr.HasConflicts || mr.ChangesCount != "2" || mr.SHA != head {
			t.Fatalf("created: %s conflicts %v changes %s sha %s", mr.MergeStatus, mr.HasConflicts, mr.ChangesCount, mr.SHA)
		}
		row := func() model.MergeRequest {
			t.Helper()
			m, err := s.App.DB.MergeRequest(ctx, p.ID, mr.IID)
			if err != nil {
				t.Fatal(err)
			}
			return m
		}
		dbp, err := s.App.DB.ProjectByID(ctx, p.ID)
		if err != nil {
			t.Fatal(err)
		}
		procs := countMRGit(t, s, dbp.DiskPath)
		read := func(what string, wantProcs bool) mrJSON {
			t.Helper()
			var got mrJSON
			by := procs.during(func() { got = mrGet(t, p, owner.Token, mr.IID) })
			if n := len(by); (n > 0) != wantProcs {
				t.Errorf("%s: git processes of the read %v; want any: %v", what, by, wantProcs)
			}
			return got
		}
		if got := read("nothing moved", false); got.MergeStatus != "can_be_merged" || got.ChangesCount != "2" {
			t.Errorf("nothing moved: %s changes %s", got.MergeStatus, got.ChangesCount)
		}

		// A push to the source: the event moves the diff refs, counts the
		// changes and checks the merge.
		head2 := mrFile(t, p, "POST", "feature", "c.txt", "c\n")
		eventually(t, "the push to the source computed and stored", func() bool {
			m := row()
			return m.HeadSHA == head2 && m.ChangesKnown() && m.MergeStatus != model.MergeUnchecked && m.MergeStatusSource == head2
		})
		if m := row(); m.ChangedFiles != 3 || m.MergeStatus != model.MergeCanBeMerged || m.Conflicts || m.MergeStatusTarget != base || !m.FastForward {
			t.Errorf("stored after the source push: %+v", m.Check())
		}
		got := read("after the source push", false)
		if got.SHA != head2 || got.DiffRefs.HeadSHA != head2 || got.DiffRefs.BaseSHA != base || got.ChangesCount != "3" ||
			got.MergeStatus != "can_be_merged" || got.HasConflicts || got.DetailedMergeStatus != "mergeable" {
			t.Errorf("after the source push: sha %s diff_refs %+v changes %s %s/%s conflicts %v", got.SHA, got.DiffRefs, got.ChangesCount,
				got.MergeStatus, got.DetailedMergeStatus, got.HasConflicts)
		}

		// A git push to the target with a conflicting change of a.txt.
		conflicting := p.commit(t, "side", map[string]string{"a.txt": "three\n"})
		c := mrCloneOf(t, p)
		c.git(t, "push", "-q", cloneURL(s, p.Path, "owner", p.Token), conflicting+":refs/heads/main")
		eventually(t, "the push to the target computed and stored", func() bool {
			m := row()
			return m.MergeStatusTarget == conflicting && m.MergeStatus != model.MergeUnchecked
		})
		if m := row(); m.MergeStatus != model.MergeCannotBeMerged || !m.Conflicts || m.MergeStatusSource != head2 || m.FastForward ||
			m.ChangedFiles != 3 || m.HeadSHA != head2 || m.StartSHA != base {
			t.Errorf("stored after the target push: %+v changes %d head %s start %s", m.Check(), m.ChangedFiles, m.HeadSHA, m.StartSHA)
		}
		got = read("after the target push", false)
		if got.MergeStatus != "cannot_be_merged" || !got.HasConflicts || got.DetailedMergeStatus != "broken_status" ||
			got.ChangesCount != "3" || got.DiffRefs.StartSHA != base {
			t.Errorf("after the target push: %s/%s conflicts %v changes %s diff_refs %+v", got.MergeStatus, got.DetailedMergeStatus,
				got.HasConflicts, got.ChangesCount, got.DiffRefs)
		}
		var list []mrJSON
		s.Get(t, mrPath(p, 0, ""), owner.Token).Want(t, http.StatusOK).JSON(t, &list)
		if len(list) != 1 || list[0].MergeStatus != "cannot_be_merged" || !list[0].HasConflicts {
			t.Errorf("listed after the target push: %+v", list)
		}

		// The target moved back behind the application's back: no event;
		// the next read checks the merge again and stores it, the one
		// after runs no git.
		git(t, repoDir(t, s, p.ID), "update-ref", "refs/heads/main", base, conflicting)
		got = read("main moved without an event", true)
		if got.MergeStatus != "can_be_merged" || got.HasConflicts || got.DetailedMergeStatus != "mergeable" {
			t.Errorf("main moved without an event: %s/%s conflicts %v", got.MergeStatus, got.DetailedMergeStatus, got.HasConflicts)
		}
		if m := row(); m.MergeStatusTarget != base || m.MergeStatus != model.MergeCanBeMerged || m.Conflicts {
			t.Errorf("stored by the read: %+v", m.Check())
		}
		read("read again", false)

		// Compare-and-set: a check made from an outdated row, or a count
		// of diff refs that moved, is not stored.
		stale := row().Check()
		stale.Target = conflicting
		err = s.App.DB.InTx(ctx, func(tx *store.Tx) error {
			if ok, err := tx.SetMergeCheck(ctx, mr.ID, stale, model.MergeCheck{Status: model.MergeCannotBeMerged, Source: head, Target: conflicting,
				Conflicts: true}); ok || err != nil {
				return fmt.Errorf("a check over a stale one: stored %v, %v", ok, err)
			}
			if ok, err := tx.SetChangesCount(ctx, mr.ID, base, head, 2); ok || err != nil {
				return fmt.Errorf("a count of old diff refs: stored %v, %v", ok, err)
			}
			return nil
		})
		if err != nil {
			t.Error(err)
		}
		if m := row(); m.MergeStatusTarget != base || m.MergeStatus != model.MergeCanBeMerged || m.ChangedFiles != 3 || m.ChangesHead != head2 {
			t.Errorf("after the refused writes: %+v changes %d of %s", m.Check(), m.ChangedFiles, m.ChangesHead)
		}
	})
}
