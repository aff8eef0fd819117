package e2e

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"quarry/internal/apitest"
	"quarry/internal/model"
	"quarry/internal/storetest"
)

// What a crash leaves, built through the store and git as the dead process
// would have left it, and what the next start makes of it.

// recoveryWait bounds the wait for a recovery after a restart.
const recoveryWait = 30 * time.Second

// waitRecovered polls cond until it holds, at most recoveryWait.
func waitRecovered(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(recoveryWait); ; time.Sleep(50 * time.Millisecond) {
		if cond() {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("after %s: %s", recoveryWait, what)
		}
	}
}

// deadMergeCommit makes, in the bare repository at dir, the merge commit
// a merge of head into tip would have made (after a squash of head onto
// the merge base, with squash), without moving anything; it returns the
// merge commit and the squash commit ("" without squash).
func deadMergeCommit(t *testing.T, dir, tip, head string, squash bool) (merge, squashed string) {
	t.Helper()
	merged := head
	if squash {
		base := git(t, dir, "merge-base", tip, head)
		squashed = git(t, dir, "commit-tree", head+"^{tree}", "-p", base, "-m", "squashed")
		merged = squashed
	}
	tree := strings.Fields(git(t, dir, "merge-tree", "--write-tree", tip, merged))[0]
	return git(t, dir, "commit-tree", tree, "-p", tip, "-p", merged, "-m", "Merge (cut short)"), squashed
}

// TestCrashRecovery_mergeCutShort: merges whose process died while they
// held their merge request's lock. After a restart, a merge that had moved
// the target branch (with a merge commit, or a squash and a merge commit)
// is merged, with its commits, its merger and the target's refs-changed
// event (a pipeline on the merge commit); one whose head reached the
// target otherwise is merged; one that had not moved it (before or after
// recording what it was about to do) is open again and merges; a lock
// whose lease has not ended is left alone.
func TestCrashRecovery_mergeCutShort(t *testing.T) {
	apitest.Each(t, func(t *testing.T, first *apitest.Server) {
		dir := first.DataDir
		first.Stop()
		// This process runs no background work: nothing recovers before
		// the restart.
		a := apitest.StartIn(t, first.Target, dir, func(c *config) { c.TaskWorkers = 0 })
		owner := a.NewUser(t, "crashmerger")
		p := newCIProject(t, a, owner, "crashmerge", map[string]string{".gitlab-ci.yml": "test: {script: [x]}\n"})
		repo := repoDir(t, a, p.ID)
		names := []string{"moved", "squashed", "pushed", "unmoved", "recorded", "alive"}
		mrs := map[string]mrJSON{}
		heads := map[string]string{}
		for _, n := range names {
			heads[n] = p.commit(t, n, map[string]string{n + ".txt": n + "\n"})
			mrs[n] = mrOpen(t, p, n, "main", n)
		}
		ctx := context.Background()
		past, future := time.Now().Add(-time.Minute), time.Now().Add(time.Hour)
		// lock locks a merge request as a merge by owner did, with its
		// lease ending at until and the result it recorded (nil: none).
		lock := func(n string, until time.Time, r *model.MergeResult) {
			t.Helper()
			err := a.App.DB.InTx(ctx, func(tx *storeTx) error {
				token := "dead-" + n
				ok, err := tx.LockMergeRequest(ctx, mrs[n].ID, model.MergeLock{Token: token, UserID: owner.ID, Until: until})
				if err != nil || !ok {
					return fmt.Errorf("lock: %v %w", ok, err)
				}
				if r == nil {
					return nil
				}
				if ok, err := tx.RenewMergeLock(ctx, mrs[n].ID, token, until, r); err != nil || !ok {
					return fmt.Errorf("record: %v %w", ok, err)
				}
				return nil
			})
			if err != nil {
				t.Fatalf("%s: %v", n, err)
			}
		}
		// move moves main from tip to next, as the dead merge did.
		move := func(next, tip string) { git(t, repo, "update-ref", "refs/heads/main", next, tip) }

		tip := git(t, repo, "rev-parse", "main")
		moved, _ := deadMergeCommit(t, repo, tip, heads["moved"], false)
		lock("moved", past, &model.MergeResult{Branch: "main", Head: heads["moved"], OldTip: tip, NewTip: moved, MergeCommit: moved})
		move(moved, tip)

		tip = moved
		squashMerge, squash := deadMergeCommit(t, repo, tip, heads["squashed"], true)
		lock("squashed", past, &model.MergeResult{Branch: "main", Head: heads["squashed"], OldTip: tip, NewTip: squashMerge,
			MergeCommit: squashMerge, SquashCommit: squash, Squash: true})
		move(squashMerge, tip)

		// Someone merged "pushed" by a push; its merge died before it
		// recorded anything.
		tip = squashMerge
		pushed, _ := deadMergeCommit(t, repo, tip, heads["pushed"], false)
		lock("pushed", past, nil)
		move(pushed, tip)

		lock("unmoved", past, nil)
		tip = pushed
		notMoved, _ := deadMergeCommit(t, repo, tip, heads["recorded"], false)
		lock("recorded", past, &model.MergeResult{Branch: "main", Head: heads["recorded"], OldTip: tip, NewTip: notMoved, MergeCommit: notMoved})
		lock("alive", future, nil)
		a.Stop()

		b := apitest.StartIn(t, first.Target, dir)
		p.s = b
		state := func(n string) mrJSON { return mrGet(t, p, owner.Token, mrs[n].IID) }
		for n, want := range map[string]string{"moved": "merged", "squashed": "merged", "pushed": "merged", "unmoved": "opened",
			"recorded": "opened"} {
			waitRecovered(t, fmt.Sprintf("!%d (%s) %s", mrs[n].IID, n, want), func() bool { return state(n).State == want })
		}
		for n, want := range map[string][2]string{"moved": {moved, ""}, "squashed": {squashMerge, squash}, "pushed": {"", ""}} {
			m := state(n)
			if m.MergeCommitSHA != want[0] || m.SquashCommitSHA != want[1] || m.MergedBy == nil || m.MergedBy.ID != owner.ID ||
				m.MergedAt == nil {
				t.Errorf("%s: merge_commit_sha %q squash_commit_sha %q merged_by %v merged_at %v; want %q, %q, %s", n, m.MergeCommitSHA,
					m.SquashCommitSHA, m.MergedBy, m.MergedAt, want[0], want[1], owner.Username)
			}
		}
		// What follows the target's move followed: a pipeline on each
		// merge commit the dead merges made.
		for _, sha := range []string{moved, squashMerge} {
			waitRecovered(t, "a pipeline on "+sha, func() bool { return len(p.pipelines(t, "sha="+sha)) == 1 })
		}
		if got := state("alive").State; got != "locked" {
			t.Errorf("a lock whose lease has not ended: %s; want locked", got)
		}
		mrDo(t, p, "PUT", owner.Token, mrs["alive"].IID, "/merge", nil).Want(t, http.StatusMethodNotAllowed)
		mrDo(t, p, "PUT", owner.Token, mrs["moved"].IID, "/merge", nil).Want(t, http.StatusMethodNotAllowed)
		// The merge requests opened again merge (and close) as any.
		if m := mrMerge(t, p, owner.Token, mrs["unmoved"].IID, nil); m.State != "merged" || m.MergeCommitSHA == "" {
			t.Errorf("unmoved merged again: %s %q", m.State, m.MergeCommitSHA)
		}
		if m := mrUpdate(t, p, owner.Token, mrs["recorded"].IID, map[string]any{"state_event": "close"}); m.State != "closed" {
			t.Errorf("recorded closed: %s", m.State)
		}
		// The commit the dead merge made but never put on main is not there.
		if c := mrCloneOf(t, p); c.contains(t, "main", notMoved) {
			t.Errorf("main holds %s, which the dead merge never put there", notMoved)
		}
	})
}

// TestCrashRecovery_projectRepository: project creations cut short after
// the transaction that stored the project (and its create_repository
// task): no repository at all, one half built aside, one made in place
// without its configuration, one made without its README commit. After a
// restart each has its whole repository: configured (a push with -o
// ci.skip is taken), with its README where asked, recorded as not empty.
func TestCrashRecovery_projectRepository(t *testing.T) {
	apitest.Each(t, func(t *testing.T, first *apitest.Server) {
		dir := first.DataDir
		first.Stop()
		a := apitest.StartIn(t, first.Target, dir, func(c *config) { c.TaskWorkers = 0 })
		owner := a.NewUser(t, "crashcreator")
		ctx := context.Background()
		u, err := a.App.DB.UserByID(ctx, owner.ID)
		if err != nil {
			t.Fatal(err)
		}
		type cut struct {
			readme bool
			leave  func(t *testing.T, repo string) // what the crash left on disk
		}
		cuts := map[string]cut{
			"missing": {readme: true},
			"bare":    {readme: false},
			"aside": {readme: true, leave: func(t *testing.T, repo string) {
				if err := os.MkdirAll(filepath.Join(repo+".creating-0123456789abcdef", "objects"), 0o750); err != nil {
					t.Fatal(err)
				}
			}},
			"unconfigured": {readme: true, leave: func(t *testing.T, repo string) {
				git(t, t.TempDir(), "init", "-q", "--bare", "--initial-branch", "main", repo)
			}},
			"noreadme": {readme: true, leave: func(t *testing.T, repo string) {
				git(t, t.TempDir(), "init", "-q", "--bare", "--initial-branch", "main", repo)
				for _, kv := range [][2]string{{"core.commitGraph", "true"}, {"fetch.writeCommitGraph", "true"},
					{"receive.advertisePushOptions", "true"}, {"gc.auto", "0"}} {
					git(t, repo, "config", kv[0], kv[1])
				}
			}},
		}
		ids := map[string]int64{}
		for name, c := range cuts {
			// The project's transaction: its row and its task.
			pr := storetest.NewProject(t, a.App.DB, u, func(p *model.Project) { p.Name, p.Path = name, "cut-"+name })
			err := a.App.DB.InTx(ctx, func(tx *storeTx) error {
				_, err := tx.EnqueueTask(ctx, &model.Task{Kind: "create_repository", MaxAttempts: 5,
					Payload: fmt.Sprintf(`{"project_id":%d,"readme":%v}`, pr.ID, c.readme)}, time.Now())
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
			ids[name] = pr.ID
			repo := filepath.Join(dir, "repositories", pr.DiskPath)
			if err := os.MkdirAll(filepath.Dir(repo), 0o750); err != nil {
				t.Fatal(err)
			}
			if c.leave != nil {
				c.leave(t, repo)
			}
		}
		a.Stop()

		b := apitest.StartIn(t, first.Target, dir)
		for name, c := range cuts {
			id := ids[name]
			repo := repoDir(t, b, id)
			if c.readme {
				waitRecovered(t, name+": recorded as not empty", func() bool {
					return b.Get(t, fmt.Sprintf("/projects/%d", id), owner.Token).Want(t, http.StatusOK).Object(t)["empty_repo"] == false
				})
				b.Get(t, fmt.Sprintf("/projects/%d/repository/files/README.md?ref=main", id), owner.Token).Want(t, http.StatusOK)
			} else {
				waitRecovered(t, name+": its repository", func() bool {
					_, err := os.Stat(filepath.Join(repo, "HEAD"))
					return err == nil
				})
			}
			if got := git(t, repo, "config", "receive.advertisePushOptions"); got != "true" {
				t.Errorf("%s: receive.advertisePushOptions %q", name, got)
			}
		}
		// A push with a push option is taken by the repaired repository.
		var pr struct {
			PathWithNamespace string `json:"path_with_namespace"`
		}
		b.Get(t, fmt.Sprintf("/projects/%d", ids["bare"]), owner.Token).Want(t, http.StatusOK).JSON(t, &pr)
		work := t.TempDir()
		git(t, work, "init", "-q", "--initial-branch", "main", "w")
		w := filepath.Join(work, "w")
		if err := os.WriteFile(filepath.Join(w, "f.txt"), []byte("f\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		git(t, w, "add", ".")
		git(t, w, "commit", "-q", "-m", "first")
		if out, err := gitRun(w, "push", "-q", "-o", "ci.skip", cloneURL(b, pr.PathWithNamespace, "owner", owner.Token), "HEAD:main"); err != nil {
			t.Errorf("push -o ci.skip: %v\n%s", err, out)
		}
	})
}
