package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"quarry/internal/apitest"
)

// Group export and import in GitLab's format (reference §7): a group
// with its subgroups, labels, milestones, badges, boards, members and
// wiki goes out as an archive and comes back, under a new path and under
// a parent, with nothing lost.

// gxSnap is what a group holds that an export carries, ids aside.
type gxSnap struct {
	Name, Path, Description string
	Labels                  []string
	Milestones              []string
	Badges                  []string
	Boards                  []string
	Members                 []string
	Wiki                    []string
	Subgroups               []gxSnap
}

func gxGet[T any](t testing.TB, s *apitest.Server, path, token string) T {
	t.Helper()
	var v T
	s.Get(t, path, token).Want(t, http.StatusOK).JSON(t, &v)
	return v
}

// gxSnapshot reads a group and its subgroups through the API.
func gxSnapshot(t *testing.T, s *apitest.Server, token string, id int64) gxSnap {
	t.Helper()
	base := fmt.Sprintf("/groups/%d", id)
	g := gxGet[struct{ Name, Path, Description string }](t, s, base, token)
	snap := gxSnap{Name: g.Name, Path: g.Path, Description: g.Description}
	for _, l := range gxGet[[]labelJSON](t, s, base+"/labels?per_page=100", token) {
		d := ""
		if l.Description != nil {
			d = *l.Description
		}
		snap.Labels = append(snap.Labels, l.Name+"|"+l.Color+"|"+d)
	}
	type ms struct {
		IID                             int64
		Title, State                    string
		Description, StartDate, DueDate *string
		StartDateJ                      *string `json:"start_date"`
		DueDateJ                        *string `json:"due_date"`
	}
	for _, m := range gxGet[[]ms](t, s, base+"/milestones?per_page=100", token) {
		snap.Milestones = append(snap.Milestones, fmt.Sprintf("%d|%s|%s|%s|%s|%s", m.IID, m.Title, m.State, deref(m.Description),
			deref(m.StartDateJ), deref(m.DueDateJ)))
	}
	type badge struct {
		Name     *string
		LinkURL  string `json:"link_url"`
		ImageURL string `json:"image_url"`
		Kind     string
	}
	for _, b := range gxGet[[]badge](t, s, base+"/badges?per_page=100", token) {
		if b.Kind == "group" {
			snap.Badges = append(snap.Badges, deref(b.Name)+"|"+b.LinkURL+"|"+b.ImageURL)
		}
	}
	type board struct {
		Name            string
		HideBacklogList bool `json:"hide_backlog_list"`
		HideClosedList  bool `json:"hide_closed_list"`
		Lists           []bdList
	}
	for _, b := range gxGet[[]board](t, s, base+"/boards?per_page=100", token) {
		names := []string{}
		for _, l := range b.Lists {
			names = append(names, fmt.Sprintf("%d:%s", l.Position, l.Label.Name))
		}
		snap.Boards = append(snap.Boards, fmt.Sprintf("%s|%v|%v|%s", b.Name, b.HideBacklogList, b.HideClosedList, strings.Join(names, ",")))
	}
	type member struct {
		Username    string
		AccessLevel int     `json:"access_level"`
		ExpiresAt   *string `json:"expires_at"`
	}
	for _, m := range gxGet[[]member](t, s, base+"/members?per_page=100", token) {
		snap.Members = append(snap.Members, fmt.Sprintf("%s|%d|%s", m.Username, m.AccessLevel, deref(m.ExpiresAt)))
	}
	type page struct{ Slug, Title, Content, Format string }
	for _, p := range gxGet[[]page](t, s, base+"/wikis?with_content=1", token) {
		snap.Wiki = append(snap.Wiki, p.Slug+"|"+p.Title+"|"+p.Format+"|"+p.Content)
	}
	for _, l := range [][]string{snap.Labels, snap.Milestones, snap.Badges, snap.Boards, snap.Members, snap.Wiki} {
		slices.Sort(l)
	}
	type sub struct{ ID int64 }
	subs := gxGet[[]sub](t, s, base+"/subgroups?per_page=100", token)
	for _, sg := range subs {
		snap.Subgroups = append(snap.Subgroups, gxSnapshot(t, s, token, sg.ID))
	}
	slices.SortFunc(snap.Subgroups, func(a, b gxSnap) int { return strings.Compare(a.Path, b.Path) })
	return snap
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// gxExport exports a group and downloads the archive once it is ready.
func gxExport(t testing.TB, s *apitest.Server, token string, id int64) (body []byte, header http.Header) {
	t.Helper()
	s.Do(t, apitest.Request{Method: "POST", Path: fmt.Sprintf("/groups/%d/export", id), Token: token}).
		Want(t, http.StatusAccepted).WantBody(t, `{"message":"202 Accepted"}`)
	return gxDownload(t, s, token, id)
}

// gxDownload downloads a group's export once it is ready.
func gxDownload(t testing.TB, s *apitest.Server, token string, id int64) (body []byte, header http.Header) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		r := s.Get(t, fmt.Sprintf("/groups/%d/export/download", id), token)
		if r.Status == http.StatusOK {
			return r.Body, r.Header
		}
		if r.Status != http.StatusNotFound || !strings.Contains(string(r.Body), "not available yet") || time.Now().After(deadline) {
			t.Fatalf("download: %d %s", r.Status, r.Body)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// gxImport imports an archive and waits for its group's import to end;
// it returns the group's id and its import fields.
func gxImport(t testing.TB, s *apitest.Server, token, name, path string, parent int64, archive []byte) (int64, gxImportState) {
	t.Helper()
	fields := map[string]string{"name": name, "path": path}
	if parent != 0 {
		fields["parent_id"] = itoa(parent)
	}
	s.Do(t, apitest.Request{Method: "POST", Path: "/groups/import", Token: token, Multipart: fields,
		Files: map[string]apitest.File{"file": {Name: "export.tar.gz", Content: archive}}}).
		Want(t, http.StatusAccepted).WantBody(t, `{"message":"202 Accepted"}`)
	full := path
	if parent != 0 {
		full = gxGet[struct {
			FullPath string `json:"full_path"`
		}](t, s, "/groups/"+itoa(parent), token).FullPath + "/" + path
	}
	return gxWaitImport(t, s, token, full)
}

type gxImportState struct {
	ID               int64
	Visibility       string
	ImportStatus     string  `json:"import_status"`
	ImportError      *string `json:"import_error"`
	ImportStatistics *struct {
		Groups   int
		Imported map[string]int
		Skipped  map[string]int
	} `json:"import_statistics"`
}

func gxWaitImport(t testing.TB, s *apitest.Server, token, fullPath string) (int64, gxImportState) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		st := gxGet[gxImportState](t, s, "/groups/"+urlPath(fullPath), token)
		if st.ImportStatus == "finished" || st.ImportStatus == "failed" {
			return st.ID, st
		}
		if time.Now().After(deadline) {
			t.Fatalf("import of %s still %s", fullPath, st.ImportStatus)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func urlPath(p string) string { return strings.ReplaceAll(p, "/", "%2F") }

// gxFill gives a group labels, milestones, badges and a board with label
// lists, named after tag.
func gxFill(t *testing.T, s *apitest.Server, token string, id int64, tag string) {
	t.Helper()
	base := fmt.Sprintf("/groups/%d", id)
	var ls []labelJSON
	for i, c := range []string{"#FF0000", "red", "#0a0"} {
		ls = append(ls, lblCreate(t, s, base+"/labels", token, map[string]any{"name": fmt.Sprintf("%s-l%d", tag, i), "color": c,
			"description": "about " + tag}))
	}
	for _, m := range []map[string]any{
		{"title": tag + " v1", "description": "first", "start_date": "2026-01-01", "due_date": "2026-02-01"},
		{"title": tag + " v2"},
		{"title": tag + " v3", "due_date": "2020-05-05"},
	} {
		var made struct{ ID int64 }
		s.Do(t, apitest.Request{Method: "POST", Path: base + "/milestones", Token: token, JSON: m}).Want(t, 201).JSON(t, &made)
		if m["title"] == tag+" v3" {
			s.Do(t, apitest.Request{Method: "PUT", Path: fmt.Sprintf("%s/milestones/%d", base, made.ID), Token: token,
				JSON: map[string]any{"state_event": "close"}}).Want(t, 200)
		}
	}
	s.Do(t, apitest.Request{Method: "POST", Path: base + "/badges", Token: token, JSON: map[string]any{"name": tag + " badge",
		"link_url": "https://example.com/%{project_path}", "image_url": "https://example.com/%{default_branch}.svg"}}).Want(t, 201)
	var b struct{ ID int64 }
	s.Do(t, apitest.Request{Method: "POST", Path: base + "/boards", Token: token, JSON: map[string]any{"name": tag + " board"}}).
		Want(t, 201).JSON(t, &b)
	s.Do(t, apitest.Request{Method: "PUT", Path: fmt.Sprintf("%s/boards/%d", base, b.ID), Token: token,
		JSON: map[string]any{"hide_backlog_list": true}}).Want(t, 200)
	for _, l := range []labelJSON{ls[2], ls[0]} {
		s.Do(t, apitest.Request{Method: "POST", Path: fmt.Sprintf("%s/boards/%d/lists", base, b.ID), Token: token,
			JSON: map[string]any{"label_id": l.ID}}).Want(t, 201)
	}
}

// gxUnlimited lifts the per-minute rates of group exports, downloads and
// imports (a test polls the download as a client would).
func gxUnlimited(t testing.TB, s *apitest.Server) {
	t.Helper()
	s.Do(t, apitest.Request{Method: "PUT", Path: "/application/settings", Token: s.RootToken, JSON: map[string]any{
		"group_export_limit": 0, "group_download_export_limit": 0, "group_import_limit": 0}}).Want(t, 200)
}

func TestGroupExport_roundTrip(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		gxUnlimited(t, s)
		owner, kept, gone := s.NewUser(t, "gxowner"), s.NewUser(t, "gxkept"), s.NewUser(t, "gxgone")
		// Members are matched by the public e-mail the archive carries.
		for _, u := range []apitest.User{owner, kept} {
			var me struct{ Email string }
			s.Get(t, "/users/"+itoa(u.ID), s.RootToken).Want(t, 200).JSON(t, &me)
			s.Do(t, apitest.Request{Method: "PUT", Path: "/users/" + itoa(u.ID), Token: s.RootToken,
				JSON: map[string]any{"public_email": me.Email}}).Want(t, 200)
		}
		top, _ := agGroup(t, s, owner.Token, "gxtop", 0)
		s.Do(t, apitest.Request{Method: "PUT", Path: "/groups/" + itoa(top), Token: owner.Token,
			JSON: map[string]any{"description": "the top group", "visibility": "internal"}}).Want(t, 200)
		sub, _ := agGroup(t, s, owner.Token, "gxsub", top)
		leaf, _ := agGroup(t, s, owner.Token, "gxleaf", sub)
		side, _ := agGroup(t, s, owner.Token, "gxside", top)
		for i, g := range []int64{top, sub, leaf, side} {
			gxFill(t, s, owner.Token, g, fmt.Sprintf("g%d", i))
		}
		s.Do(t, apitest.Request{Method: "POST", Path: fmt.Sprintf("/groups/%d/members", top), Token: owner.Token,
			JSON: map[string]any{"user_id": kept.ID, "access_level": 30, "expires_at": "2099-01-01"}}).Want(t, 201)
		s.Do(t, apitest.Request{Method: "POST", Path: fmt.Sprintf("/groups/%d/members", sub), Token: owner.Token,
			JSON: map[string]any{"user_id": gone.ID, "access_level": 20}}).Want(t, 201)
		s.Do(t, apitest.Request{Method: "POST", Path: fmt.Sprintf("/groups/%d/wikis", top), Token: owner.Token,
			JSON: map[string]any{"title": "Home", "content": "# Welcome\nto the group"}}).Want(t, 201)
		s.Do(t, apitest.Request{Method: "POST", Path: fmt.Sprintf("/groups/%d/wikis", leaf), Token: owner.Token,
			JSON: map[string]any{"title": "Leaf notes", "content": "leafy", "format": "rdoc"}}).Want(t, 201)
		var att struct {
			FilePath string `json:"file_path"`
		}
		s.Do(t, apitest.Request{Method: "POST", Path: fmt.Sprintf("/groups/%d/wikis/attachments", top), Token: owner.Token,
			Files: map[string]apitest.File{"file": {Name: "diagram.png", Content: []byte("\x89PNG pretend")}}}).Want(t, 201).JSON(t, &att)
		before := gxSnapshot(t, s, owner.Token, top)

		archive, hdr := gxExport(t, s, owner.Token, top)
		if ct := hdr.Get("Content-Type"); ct != "application/octet-stream" {
			t.Errorf("download Content-Type %q", ct)
		}
		name := regexp.MustCompile(`^attachment; filename="(\d{4}-\d\d-\d\d_\d\d-\d\d-\d{3}_gxtop_export\.tar\.gz)"`)
		if !name.MatchString(hdr.Get("Content-Disposition")) {
			t.Errorf("download Content-Disposition %q", hdr.Get("Content-Disposition"))
		}

		// The member without a public e-mail stays behind; so does one whose
		// user does not exist (here: a user deleted since).
		id, st := gxImport(t, s, owner.Token, "Copied", "gxcopy", 0, archive)
		if st.ImportStatus != "finished" || st.Visibility != "private" || st.ImportStatistics == nil ||
			st.ImportStatistics.Groups != 4 || st.ImportStatistics.Skipped["members"] != 1 || st.ImportStatistics.Imported["wikis"] != 2 {
			t.Fatalf("import: %+v %+v", st, st.ImportStatistics)
		}
		after := gxSnapshot(t, s, owner.Token, id)
		want := before
		want.Name, want.Path = "Copied", "gxcopy"
		want.Subgroups = slices.Clone(before.Subgroups)
		for i := range want.Subgroups {
			want.Subgroups[i].Members = slices.DeleteFunc(slices.Clone(want.Subgroups[i].Members),
				func(m string) bool { return strings.HasPrefix(m, "gxgone|") })
		}
		gxSame(t, "import at the top", after, want)

		// The wiki's attachment came with it.
		work := t.TempDir()
		w := wikiClone(t, s, work, "gxcopy.wiki", owner.Token, "wiki")
		if got := gitOut(t, w, "show", "HEAD:"+att.FilePath); got != "\x89PNG pretend" {
			t.Errorf("attachment %q holds %q", att.FilePath, got)
		}

		// Under a parent, visibility is the parent's at most.
		parent, _ := agGroup(t, s, owner.Token, "gxparent", 0)
		s.Do(t, apitest.Request{Method: "PUT", Path: "/groups/" + itoa(parent), Token: owner.Token,
			JSON: map[string]any{"visibility": "public"}}).Want(t, 200)
		id2, st2 := gxImport(t, s, owner.Token, "Nested", "gxnested", parent, archive)
		if st2.ImportStatus != "finished" || st2.Visibility != "internal" {
			t.Fatalf("nested import: %+v", st2)
		}
		want.Name, want.Path = "Nested", "gxnested"
		gxSame(t, "import under a parent", gxSnapshot(t, s, owner.Token, id2), want)

		// Quarry's export of the import is the same archive, ids aside:
		// exported again and imported again, nothing changes.
		again, _ := gxExport(t, s, owner.Token, id)
		id3, st3 := gxImport(t, s, owner.Token, "Copied again", "gxcopy2", 0, again)
		if st3.ImportStatus != "finished" {
			t.Fatalf("second import: %+v", st3)
		}
		want.Name, want.Path = "Copied again", "gxcopy2"
		gxSame(t, "import of the import's export", gxSnapshot(t, s, owner.Token, id3), want)
	})
}

func gxSame(t *testing.T, what string, got, want gxSnap) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		g, _ := json.MarshalIndent(got, "", " ")
		w, _ := json.MarshalIndent(want, "", " ")
		t.Errorf("%s:\ngot  %s\nwant %s", what, g, w)
	}
}

// TestGroupExport_expires: a finished export is downloadable for
// --group-export-ttl, then gone: 404 "Not found or has expired", and its
// file removed.
func TestGroupExport_expires(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		gxUnlimited(t, s)
		owner := s.NewUser(t, "gxexp")
		id, _ := agGroup(t, s, owner.Token, "gxexpiring", 0)
		if body, _ := gxExport(t, s, owner.Token, id); len(body) == 0 {
			t.Fatal("empty archive")
		}
		files := filepath.Join(s.DataDir, "group_exports", itoa(id), "*")
		if found, _ := filepath.Glob(files); len(found) != 1 {
			t.Fatalf("export files %v", found)
		}
		eventuallyFor(t, 30*time.Second, "the export expired", func() bool {
			r := s.Get(t, fmt.Sprintf("/groups/%d/export/download", id), owner.Token)
			return r.Status == http.StatusNotFound && string(r.Body) == `{"message":"404 Not found or has expired"}`
		})
		eventuallyFor(t, 30*time.Second, "the export's file removed", func() bool {
			found, _ := filepath.Glob(files)
			return len(found) == 0
		})
	}, func(c *config) { c.GroupExportTTL = time.Second })
}
