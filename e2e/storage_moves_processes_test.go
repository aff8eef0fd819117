package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"quarry/internal/apitest"
	"quarry/internal/storetest"
)

// TestStorageMoves_processesSharePostgres: three Quarry processes on one
// PostgreSQL database and data folder. This one schedules a bulk move of
// 30 projects and runs no moves itself (--storage-move-concurrency 0);
// the two others run them: every move is started by exactly one of them
// and finishes, and afterwards no project is on the source, every
// repository is on the destination only, and git fsck finds it whole.
func TestStorageMoves_processesSharePostgres(t *testing.T) {
	t.Parallel()
	onSharedPostgres(t, func(t *testing.T, target storetest.Target, dir string) {
		s := apitest.StartIn(t, target, dir, moveOpts, func(c *config) { c.StorageMoveConcurrency = 0 })
		storages := movesChildStorages(dir)
		children := []*childProcess{startChild(t, target, dir, storages), startChild(t, target, dir, storages)}

		owner := s.NewUser(t, "owner")
		const n = 30
		var rels []string
		for i := 0; i < n; i++ {
			p := smNewProject(t, s, owner, fmt.Sprintf("shared%02d", i))
			rels = append(rels, smDiskPath(t, s, p.ID))
		}
		s.Do(t, apitest.Request{Method: "POST", Path: "/project_repository_storage_moves", Token: s.RootToken,
			JSON: map[string]any{"source_storage_name": "default", "destination_storage_name": "second"}}).
			Want(t, http.StatusAccepted)
		var moves []smMove
		eventuallyFor(t, 2*time.Minute, "every move finished", func() bool {
			s.Get(t, "/project_repository_storage_moves?per_page=100", s.RootToken).Want(t, http.StatusOK).JSON(t, &moves)
			done := 0
			for _, m := range moves {
				if m.State == "failed" || m.State == "cleanup failed" {
					t.Fatalf("move %d %s: %v", m.ID, m.State, m.ErrorMessage)
				}
				if m.State == "finished" {
					done++
				}
			}
			return len(moves) == n && done == n
		})
		if list := s.Get(t, "/projects?repository_storage=default", s.RootToken).Want(t, http.StatusOK).Array(t); len(list) != 0 {
			t.Errorf("%d projects still on default", len(list))
		}
		for _, rel := range rels {
			if !smExists(smRoot(s, "second"), rel) || smExists(smRoot(s, "default"), rel) {
				t.Errorf("%s on disk: second %v, default %v", rel, smExists(smRoot(s, "second"), rel), smExists(smRoot(s, "default"), rel))
				continue
			}
			gitOut(t, smRoot(s, "second"), "--git-dir", rel, "fsck", "--no-progress")
		}

		// Who started what: each child logs "storage move started".
		started := map[int64]int{}
		for i, c := range children {
			mine := 0
			for _, line := range strings.Split(c.stderr.String(), "\n") {
				var rec struct {
					Msg    string `json:"msg"`
					MoveID int64  `json:"move_id"`
				}
				if json.Unmarshal([]byte(line), &rec) == nil && rec.Msg == "storage move started" {
					started[rec.MoveID]++
					mine++
				}
			}
			t.Logf("process %d started %d moves", i+2, mine)
		}
		for _, m := range moves {
			if started[m.ID] != 1 {
				t.Errorf("move %d started %d times across the processes; want once", m.ID, started[m.ID])
			}
		}
	})
}

// onSharedPostgres runs body on a fresh PostgreSQL database and data folder
// for several processes to share; on SQLite there is no such test (one
// SQLite file has one Quarry process).
func onSharedPostgres(t *testing.T, body func(t *testing.T, target storetest.Target, dir string)) {
	for _, d := range storetest.Dialects() {
		if d != "postgres" {
			continue
		}
		t.Run(d, func(t *testing.T) {
			body(t, apitest.NewTarget(t, d), t.TempDir())
		})
	}
}

// movesChildStorages is the child process's setting of moveOpts'
// storages on dir.
func movesChildStorages(dir string) string {
	return ciChildStorages + "=second=" + filepath.Join(dir, "second") + ",broken=" + filepath.Join(dir, "not-a-folder", "repos")
}
