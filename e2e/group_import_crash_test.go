package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"mime/multipart"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"quarry/internal/apitest"
	"quarry/internal/importexport"
	"quarry/internal/storetest"
)

// gxBigArchive builds a GitLab-format archive of a root group with n
// subgroups of labels labels each.
func gxBigArchive(t testing.TB, n, labels int) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := importexport.NewWriter(&buf)
	add := func(name string, v any) {
		var b []byte
		switch x := v.(type) {
		case string:
			b = []byte(x)
		case []byte:
			b = x
		default:
			var err error
			if b, err = json.Marshal(v); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Bytes(name, b); err != nil {
			t.Fatal(err)
		}
	}
	add("VERSION", "0.2.4")
	add("GITLAB_VERSION", "16.11.0")
	var ids strings.Builder
	for i := 0; i <= n; i++ {
		fmt.Fprintf(&ids, "%d\n", 9000+i)
	}
	add("tree/groups/_all.ndjson", ids.String())
	for i := 0; i <= n; i++ {
		id := 9000 + i
		g := map[string]any{"id": id, "name": fmt.Sprintf("Group %d", i), "path": fmt.Sprintf("g%d", i), "visibility_level": 0,
			"description": "", "parent_id": nil}
		if i > 0 {
			g["parent_id"] = 9000
		}
		add(fmt.Sprintf("tree/groups/%d.json", id), g)
		var ls bytes.Buffer
		for j := 0; j < labels; j++ {
			b, _ := json.Marshal(map[string]any{"id": id*100000 + j, "title": fmt.Sprintf("label %d", j), "color": "#336699",
				"description": strings.Repeat("words ", 20), "group_id": id, "type": "GroupLabel", "priorities": []any{}})
			ls.Write(append(b, '\n'))
		}
		add(fmt.Sprintf("tree/groups/%d/labels.ndjson", id), ls.Bytes())
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestGroupImport_killedMidImport: the server is killed with SIGKILL
// while an import is half done. After a restart the import resumes
// where it stopped and ends finished, every group and label there once.
func TestGroupImport_killedMidImport(t *testing.T) {
	t.Parallel()
	const subgroups, labels = 24, 60
	archive := gxBigArchive(t, subgroups, labels)
	for _, d := range storetest.Dialects() {
		t.Run(d, func(t *testing.T) {
			t.Parallel()
			target := apitest.NewTarget(t, d)
			dir := t.TempDir()
			first := apitest.StartIn(t, target, dir, moveOpts)
			gxUnlimited(t, first)
			first.Stop()

			base, kill := startMoveChild(t, target, dir)
			token := strings.TrimSpace(string(mustRead(t, filepath.Join(dir, "initial_root_token"))))
			var body bytes.Buffer
			mw := multipart.NewWriter(&body)
			_ = mw.WriteField("name", "Big")
			_ = mw.WriteField("path", "big")
			fw, _ := mw.CreateFormFile("file", "export.tar.gz")
			_, _ = fw.Write(archive)
			_ = mw.Close()
			req, _ := http.NewRequest("POST", base+"/api/v4/groups/import", &body)
			req.Header.Set("PRIVATE-TOKEN", token)
			req.Header.Set("Content-Type", mw.FormDataContentType())
			resp, err := http.DefaultClient.Do(req)
			if err != nil || resp.StatusCode != http.StatusAccepted {
				t.Fatalf("import: %v %v", resp, err)
			}
			resp.Body.Close()
			// Killed once some groups are in and others are not.
			var st gxImportState
			for deadline := time.Now().Add(60 * time.Second); ; {
				childDo(t, base, token, "GET", "/groups/big", "", &st)
				if st.ImportStatistics != nil && st.ImportStatistics.Groups > 0 || st.ImportStatus == "finished" {
					kill()
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("the import never started: %+v", st)
				}
				time.Sleep(2 * time.Millisecond)
			}
			if st.ImportStatistics != nil {
				t.Logf("killed with %d of %d groups imported (%s)", st.ImportStatistics.Groups, subgroups+1, st.ImportStatus)
			}

			s := apitest.StartIn(t, target, dir, moveOpts)
			id, st := gxWaitImport(t, s, s.RootToken, "big")
			if st.ImportStatus != "finished" || st.ImportStatistics.Groups != subgroups+1 ||
				st.ImportStatistics.Imported["labels"] != (subgroups+1)*labels {
				why := ""
				if st.ImportError != nil {
					why = *st.ImportError
				}
				t.Fatalf("after the restart: %+v %+v: %q", st, st.ImportStatistics, why)
			}
			type sub struct {
				ID   int64
				Path string
			}
			var subs []sub
			s.Walk(t, fmt.Sprintf("/groups/%d/subgroups?per_page=100", id), s.RootToken, func(r *apitest.Response) {
				var page []sub
				r.JSON(t, &page)
				subs = append(subs, page...)
			})
			if len(subs) != subgroups {
				t.Fatalf("%d subgroups; want %d", len(subs), subgroups)
			}
			for _, g := range append(subs, sub{ID: id}) {
				r := s.Get(t, fmt.Sprintf("/groups/%d/labels?per_page=1&include_ancestor_groups=false", g.ID), s.RootToken).Want(t, 200)
				if total := r.Header.Get("X-Total"); total != fmt.Sprint(labels) {
					t.Errorf("group %s has %s labels; want %d", g.Path, total, labels)
				}
			}
			// The work folder goes right after the finished state is saved.
			eventuallyFor(t, 10*time.Second, "the group import work folder removed", func() bool {
				left, _ := filepath.Glob(filepath.Join(dir, "tmp", "group_imports", "*"))
				return len(left) == 0
			})
			s.Stop()

			// Killed again while it writes an export of that group; after a
			// restart the export is written whole, and imports as the same.
			base, kill = startMoveChild(t, target, dir)
			var accepted struct{ Message string }
			childDo(t, base, token, "POST", fmt.Sprintf("/groups/%d/export", id), "", &accepted)
			work := filepath.Join(dir, "tmp", "group_exports", fmt.Sprintf("%d-1", id))
			for deadline := time.Now().Add(60 * time.Second); ; {
				if _, err := osStat(work); err == nil {
					break
				}
				if time.Now().After(deadline) {
					t.Fatal("the export never started")
				}
				time.Sleep(time.Millisecond)
			}
			kill()
			s = apitest.StartIn(t, target, dir, moveOpts)
			again, _ := gxDownload(t, s, s.RootToken, id)
			_, st = gxImport(t, s, s.RootToken, "Big again", "big2", 0, again)
			if st.ImportStatus != "finished" || st.ImportStatistics.Groups != subgroups+1 ||
				st.ImportStatistics.Imported["labels"] != (subgroups+1)*labels {
				t.Fatalf("the export written after the restart imports as %+v %+v", st, st.ImportStatistics)
			}
			// The work folder goes right after the finished state is saved.
			eventuallyFor(t, 10*time.Second, "the group export work folder removed", func() bool {
				left, _ := filepath.Glob(filepath.Join(dir, "tmp", "group_exports", "*"))
				return len(left) == 0
			})
		})
	}
}

// TestGroupImport_processesSharePostgres: three Quarry processes on one
// PostgreSQL database and data folder. This one takes the uploads and
// runs no background work; the two others run the imports: each ends
// finished, every group and label there once (an import run twice would
// make its subgroups twice or fail on them).
func TestGroupImport_processesSharePostgres(t *testing.T) {
	t.Parallel()
	onSharedPostgres(t, func(t *testing.T, target storetest.Target, dir string) {
		s := apitest.StartIn(t, target, dir, moveOpts, func(c *config) { c.TaskWorkers = 0 })
		gxUnlimited(t, s)
		storages := movesChildStorages(dir)
		_ = []*childProcess{startChild(t, target, dir, storages), startChild(t, target, dir, storages)}
		const imports, subgroups, labels = 6, 5, 20
		archive := gxBigArchive(t, subgroups, labels)
		for i := 0; i < imports; i++ {
			s.Do(t, apitest.Request{Method: "POST", Path: "/groups/import", Token: s.RootToken,
				Multipart: map[string]string{"name": fmt.Sprintf("Shared %d", i), "path": fmt.Sprintf("shared%d", i)},
				Files:     map[string]apitest.File{"file": {Name: "export.tar.gz", Content: archive}}}).Want(t, http.StatusAccepted)
		}
		for i := 0; i < imports; i++ {
			id, st := gxWaitImport(t, s, s.RootToken, fmt.Sprintf("shared%d", i))
			if st.ImportStatus != "finished" || st.ImportStatistics.Groups != subgroups+1 ||
				st.ImportStatistics.Imported["labels"] != (subgroups+1)*labels {
				t.Fatalf("import %d: %+v %+v", i, st, st.ImportStatistics)
			}
			if n := len(s.Get(t, fmt.Sprintf("/groups/%d/subgroups", id), s.RootToken).Want(t, http.StatusOK).Array(t)); n != subgroups {
				t.Errorf("import %d made %d subgroups; want %d", i, n, subgroups)
			}
		}
	})
}
