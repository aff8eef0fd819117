package e2e

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"quarry/internal/apitest"
)

// Group import of hostile, broken and foreign archives, of archives in
// the exact shapes GitLab writes, and the permissions and rates of export
// and import (reference §7).

// gxEntry is one entry of a test archive: a regular file unless Type
// says otherwise (tar.TypeDir, tar.TypeSymlink, tar.TypeLink…).
type gxEntry struct {
	Name     string
	Type     byte
	Content  string
	Linkname string
}

// gxTarGz builds a tar.gz of entries, in their order.
func gxTarGz(t *testing.T, entries []gxEntry) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for _, e := range entries {
		h := &tar.Header{Name: e.Name, Typeflag: e.Type, Linkname: e.Linkname, Mode: 0o644, ModTime: time.Unix(1574269313, 0)}
		switch e.Type {
		case 0:
			h.Typeflag = tar.TypeReg
			h.Size = int64(len(e.Content))
		case tar.TypeDir:
			h.Mode = 0o755
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatalf("tar header %q: %v", e.Name, err)
		}
		if h.Typeflag == tar.TypeReg {
			if _, err := tw.Write([]byte(e.Content)); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// gxMinimal is the smallest valid archive: one group, no relation.
func gxMinimal(extra ...gxEntry) []gxEntry { return gxTree("4351\n", extra...) }

// gxTree is an archive of group 4351 and, listed by all, the groups of
// extra.
func gxTree(all string, extra ...gxEntry) []gxEntry {
	return append([]gxEntry{
		{Name: "VERSION", Content: "0.2.4"},
		{Name: "tree/groups/_all.ndjson", Content: all},
		{Name: "tree/groups/4351.json", Content: `{"id":4351,"name":"Minimal","path":"minimal","visibility_level":0,"parent_id":null}`},
	}, extra...)
}

// gxUpload posts an import and returns the response, whatever it is.
func gxUpload(t *testing.T, s *apitest.Server, token string, fields map[string]string, archive []byte) *apitest.Response {
	t.Helper()
	req := apitest.Request{Method: "POST", Path: "/groups/import", Token: token, Multipart: fields}
	if archive != nil {
		req.Files = map[string]apitest.File{"file": {Name: "export.tar.gz", Content: archive}}
	}
	if req.Multipart == nil {
		req.Multipart = map[string]string{}
	}
	return s.Do(t, req)
}

// gxNothingLeft fails unless no group lives at path ("" for no path)
// and the server's import staging directory is empty or absent.
func gxNothingLeft(t *testing.T, s *apitest.Server, path string) {
	t.Helper()
	if path != "" {
		s.Get(t, "/groups/"+urlPath(path), s.RootToken).Want(t, http.StatusNotFound)
	}
	if left := gxStaged(t, s); len(left) > 0 {
		t.Errorf("the import staging directory holds %v after a refused import", left)
	}
}

// gxStaged lists the server's import staging directory.
func gxStaged(t *testing.T, s *apitest.Server) []string {
	t.Helper()
	left, err := os.ReadDir(filepath.Join(s.DataDir, "tmp", "group_imports"))
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	var names []string
	for _, e := range left {
		names = append(names, e.Name())
	}
	return names
}

// gxStagingCleared waits until a finished import's unpacked archive is
// gone (it is removed once the import is recorded as finished).
func gxStagingCleared(t *testing.T, s *apitest.Server) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for len(gxStaged(t, s)) > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("the import staging directory still holds %v", gxStaged(t, s))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func gxRandom(t *testing.T, n int) string {
	t.Helper()
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestGroupImport_hostileArchives(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		gxUnlimited(t, s)
		user := s.NewUser(t, "gxhostile")
		settings := func(m map[string]any) {
			s.Do(t, apitest.Request{Method: "PUT", Path: "/application/settings", Token: s.RootToken, JSON: m}).Want(t, 200)
		}

		valid := gxTarGz(t, gxMinimal(gxEntry{Name: "tree/groups/4351/labels.ndjson",
			Content: strings.Repeat(`{"id":1,"title":"Bug","color":"#FF0000","type":"GroupLabel"}`+"\n", 200)}))
		corrupt := slices.Clone(valid)
		corrupt[len(corrupt)/2] ^= 0xFF
		child := func(id, parent int64) gxEntry {
			return gxEntry{Name: fmt.Sprintf("tree/groups/%d.json", id),
				Content: fmt.Sprintf(`{"id":%d,"name":"Sub %d","path":"sub-%d","visibility_level":0,"parent_id":%d}`, id, id, id, parent)}
		}

		cases := []struct {
			name     string
			settings map[string]any // applied before, undone after
			archive  []byte
			status   int
			body     string // the whole body as JSON, or
			contains string // a part of the message
		}{
			{name: "not gzip", archive: []byte("this is not an archive at all, just some text\n"), status: 400, contains: "gzip"},
			{name: "truncated", archive: valid[:len(valid)/2], status: 400, contains: "truncated"},
			{name: "corrupted byte", archive: corrupt, status: 400, contains: "corrupt"},
			{name: "dot-dot entry", archive: gxTarGz(t, gxMinimal(gxEntry{Name: "../evil", Content: "x"})), status: 400, contains: "../evil"},
			{name: "absolute entry", archive: gxTarGz(t, gxMinimal(gxEntry{Name: "/etc/x", Content: "x"})), status: 400, contains: "/etc/x"},
			{name: "symlink", archive: gxTarGz(t, gxMinimal(gxEntry{Name: "tree/groups/4351/labels.ndjson", Type: tar.TypeSymlink,
				Linkname: "/etc/passwd"})), status: 400, contains: "link"},
			{name: "hard link", archive: gxTarGz(t, gxMinimal(gxEntry{Name: "tree/groups/4351/labels.ndjson", Type: tar.TypeLink,
				Linkname: "VERSION"})), status: 400, contains: "link"},
			{name: "over max_import_size", settings: map[string]any{"max_import_size": 1},
				archive: gxTarGz(t, gxMinimal(gxEntry{Name: "tree/groups/4351/blob", Content: gxRandom(t, 3<<19)})),
				status:  413, body: `{"message":"413 Request Entity Too Large"}`},
			{name: "decompression bomb", settings: map[string]any{"max_decompressed_archive_size": 1},
				archive: gxTarGz(t, gxMinimal(gxEntry{Name: "tree/groups/4351/zeros", Content: strings.Repeat("\x00", 10<<20)})),
				status:  400, contains: "more than 1 MiB"},
			{name: "old version", archive: gxTarGz(t, append([]gxEntry{{Name: "VERSION", Content: "0.2.3\n"}}, gxMinimal()[1:]...)),
				status: 400, body: `{"message":"Import version mismatch: Required 0.2.4 but was 0.2.3"}`},
			{name: "no VERSION", archive: gxTarGz(t, gxMinimal()[1:]), status: 400, contains: "VERSION"},
			{name: "no tree", archive: gxTarGz(t, []gxEntry{{Name: "VERSION", Content: "0.2.4"}}), status: 400, contains: "tree/"},
			{name: "no _all.ndjson", archive: gxTarGz(t, append(gxMinimal()[:1], gxMinimal()[2])), status: 400, contains: "_all.ndjson"},
			{name: "subgroup before its parent", archive: gxTarGz(t, gxTree("4351\n4353\n4352\n", child(4353, 4352), child(4352, 4351))), status: 400, contains: "before its parent"},
			{name: "subgroup with an invalid path", archive: gxTarGz(t, gxTree("4351\n4352\n", gxEntry{Name: "tree/groups/4352.json",
				Content: `{"id":4352,"name":"Bad","path":"bad path!","visibility_level":0,"parent_id":4351}`})), status: 400, contains: "invalid path"},
			{name: "two subgroups with one path", archive: gxTarGz(t, gxTree("4351\n4352\n4353\n4354\n", child(4352, 4351), child(4353, 4351),
				gxEntry{Name: "tree/groups/4354.json", Content: `{"id":4354,"name":"Other","path":"SUB-4352","parent_id":4351}`})), status: 400,
				body: `{"message":"Groups 4352 and 4354 of the archive have the same parent and the same path \"SUB-4352\""}`},
			{name: "device entry", archive: gxTarGz(t, gxMinimal(gxEntry{Name: "tree/null", Type: tar.TypeChar})), status: 400,
				contains: "tree/null"},
			{name: "invalid JSON line", archive: gxTarGz(t, gxMinimal(gxEntry{Name: "tree/groups/4351/milestones.ndjson",
				Content: `{"id":1,"iid":1,"title":"ok"}` + "\n" + `{"id":2,"iid":2,"title":` + "\n"})), status: 400,
				body: `{"message":"tree/groups/4351/milestones.ndjson: line 2 is not valid JSON"}`},
			{name: "legacy group.json", archive: gxTarGz(t, []gxEntry{{Name: "VERSION", Content: "0.2.4"},
				{Name: "group.json", Content: `{"name":"Legacy","path":"legacy","children":[]}`}}), status: 400, contains: "legacy"},
			{name: "only group.json", archive: gxTarGz(t, []gxEntry{{Name: "group.json", Content: `{"name":"Legacy","path":"legacy"}`}}),
				status: 400, contains: "VERSION"},
		}
		for i, c := range cases {
			if c.settings != nil {
				settings(c.settings)
			}
			path := fmt.Sprintf("gxhostile-%d", i)
			r := gxUpload(t, s, user.Token, map[string]string{"name": "Hostile", "path": path}, c.archive)
			if c.settings != nil {
				settings(map[string]any{"max_import_size": 0, "max_decompressed_archive_size": 25600})
			}
			if r.Status != c.status {
				t.Errorf("%s: status %d; want %d; body %s", c.name, r.Status, c.status, r.Body)
				continue
			}
			if c.body != "" {
				r.WantBody(t, c.body)
			} else {
				var m struct{ Message string }
				if err := json.Unmarshal(r.Body, &m); err != nil || m.Message == "" || !strings.Contains(m.Message, c.contains) {
					t.Errorf("%s: body %s; want a message saying %q", c.name, r.Body, c.contains)
				}
			}
			gxNothingLeft(t, s, path)
		}

		// The valid archive is fine: the cases above were refused for what
		// they were made to hold.
		if _, st := gxImport(t, s, user.Token, "Valid", "gxhostile-valid", 0, valid); st.ImportStatus != "finished" {
			t.Fatalf("valid import: %+v", st)
		}
		gxStagingCleared(t, s)

		// Missing fields are named, GitLab's way.
		minimal := gxTarGz(t, gxMinimal())
		for _, c := range []struct {
			fields  map[string]string
			archive []byte
			want    string
		}{
			{map[string]string{"path": "gxmiss"}, minimal, `{"error":"name is missing"}`},
			{map[string]string{"name": "Missing"}, minimal, `{"error":"path is missing"}`},
			{map[string]string{"name": "Missing", "path": "gxmiss"}, nil, `{"error":"file is missing"}`},
		} {
			gxUpload(t, s, user.Token, c.fields, c.archive).Want(t, 400).WantBody(t, c.want)
			gxNothingLeft(t, s, "gxmiss")
		}

		// A taken path is GitLab's failure to save, and leaves nothing.
		agGroup(t, s, user.Token, "gxtaken", 0)
		gxUpload(t, s, user.Token, map[string]string{"name": "Taken", "path": "gxtaken"}, minimal).Want(t, 400).
			WantBody(t, `{"message":"Failed to save group {:path=>[\"has already been taken\"]}"}`)
		gxNothingLeft(t, s, "")

		// A parent the user cannot see is 404; one they may not create in
		// is 403; neither leaves anything.
		other := s.NewUser(t, "gxhostileother")
		hidden, _ := agGroup(t, s, other.Token, "gxhidden", 0)
		shared, _ := agGroup(t, s, other.Token, "gxdevonly", 0)
		s.Do(t, apitest.Request{Method: "POST", Path: fmt.Sprintf("/groups/%d/members", shared), Token: other.Token,
			JSON: map[string]any{"user_id": user.ID, "access_level": 30}}).Want(t, 201)
		gxUpload(t, s, user.Token, map[string]string{"name": "In", "path": "gxin", "parent_id": itoa(hidden)}, minimal).Want(t, 404)
		gxNothingLeft(t, s, "gxhidden/gxin")
		gxUpload(t, s, user.Token, map[string]string{"name": "In", "path": "gxin", "parent_id": itoa(shared)}, minimal).Want(t, 403)
		gxNothingLeft(t, s, "gxdevonly/gxin")

		// Imports racing for one path: one wins, the others fail to save
		// and leave nothing.
		res := make([]*apitest.Response, 4)
		var wg sync.WaitGroup
		for i := range res {
			wg.Add(1)
			go func() {
				defer wg.Done()
				res[i] = gxUpload(t, s, user.Token, map[string]string{"name": "Race", "path": "gxrace"}, minimal)
			}()
		}
		wg.Wait()
		won := 0
		for _, r := range res {
			switch {
			case r.Status == http.StatusAccepted:
				won++
			case r.Status != http.StatusBadRequest || !strings.Contains(string(r.Body), "has already been taken"):
				t.Errorf("racing import: %d %s", r.Status, r.Body)
			}
		}
		if won != 1 {
			t.Errorf("%d racing imports to one path accepted; want 1", won)
		}
		gxWaitImport(t, s, user.Token, "gxrace")
		gxStagingCleared(t, s)

		// A user who may not create groups imports none.
		s.Do(t, apitest.Request{Method: "PUT", Path: "/users/" + itoa(user.ID), Token: s.RootToken,
			JSON: map[string]any{"can_create_group": false}}).Want(t, 200)
		gxUpload(t, s, user.Token, map[string]string{"name": "Refused", "path": "gxrefused"}, minimal).Want(t, 403)
		gxNothingLeft(t, s, "gxrefused")
	})
}

// gxJSONL joins records as ndjson lines.
func gxJSONL(t *testing.T, recs ...any) string {
	t.Helper()
	var b strings.Builder
	for _, r := range recs {
		j, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(j)
		b.WriteByte('\n')
	}
	return b.String()
}

type obj = map[string]any

// gxGitLabGroup is tree/groups/<id>.json as GitLab 15–17 write it.
func gxGitLabGroup(id int64, name, path string, level int, parent any) obj {
	return obj{
		"name": name, "path": path, "owner_id": nil, "created_at": "2019-11-20 17:01:53 UTC", "updated_at": "2019-11-20 17:05:44 UTC",
		"description": "Group " + name, "avatar": obj{"url": nil}, "membership_lock": false, "share_with_group_lock": false,
		"visibility_level": level, "request_access_enabled": true, "ldap_sync_status": "ready", "ldap_sync_error": nil,
		"ldap_sync_last_update_at": nil, "ldap_sync_last_successful_update_at": nil, "ldap_sync_last_sync_at": nil,
		"lfs_enabled": nil, "parent_id": parent, "shared_runners_minutes_limit": nil, "repository_size_limit": nil,
		"require_two_factor_authentication": false, "two_factor_grace_period": 48, "plan_id": nil, "project_creation_level": 2,
		"trial_ends_on": nil, "saml_discovery_token": "rBKx3ioz", "runners_token": "token", "subgroup_creation_level": 1,
		"emails_disabled": nil, "emails_enabled": true, "max_pages_size": nil, "id": id,
	}
}

func gxGitLabLabel(id, group int64, title, color string, desc any) obj {
	return obj{"id": id, "title": title, "color": color, "project_id": nil, "created_at": "2019-11-20T17:02:20.549Z",
		"updated_at": "2019-11-20T17:02:20.549Z", "template": false, "description": desc, "group_id": group, "type": "GroupLabel",
		"priorities": []any{}, "textColor": "#FFFFFF"}
}

// gxGitLabArchive is an export of a three-level group as GitLab writes
// it, ids from 4351; its members name gxmatch@example.com (to be found
// here) and others (not).
func gxGitLabArchive(t *testing.T, importerEmail string) []byte {
	t.Helper()
	const root, child, grand = 4351, 4352, 4353
	ts := "2019-11-20T17:02:20.546Z"
	member := func(id, group int64, level int, userID int64, email any, username string) obj {
		return obj{"id": id, "access_level": level, "source_id": group, "source_type": "Namespace", "user_id": userID,
			"notification_level": 3, "created_at": ts, "updated_at": ts, "created_by_id": nil, "invite_email": nil, "invite_token": nil,
			"invite_accepted_at": nil, "requested_at": nil, "expires_at": nil, "ldap": false, "override": false,
			"user": obj{"id": userID, "public_email": email, "username": username}}
	}
	doing := gxGitLabLabel(23453, root, "Doing", "#5CB85C", "in progress")
	board := obj{"id": 173, "project_id": nil, "created_at": ts, "updated_at": ts, "name": "Sprint", "milestone_id": nil, "group_id": root,
		"weight": nil, "hide_backlog_list": false, "hide_closed_list": true}
	list := func(id int64, typ string, label any, pos any) obj {
		l := obj{"id": id, "board_id": 173, "label_id": nil, "list_type": typ, "position": pos, "created_at": ts, "updated_at": ts,
			"user_id": nil, "milestone_id": nil, "max_issue_count": 0, "max_issue_weight": 0, "limit_metric": nil, "iteration_id": nil,
			"board": board}
		if lb, ok := label.(obj); ok {
			l["label_id"], l["label"] = lb["id"], lb
		}
		return l
	}
	boardLine := obj{}
	for k, v := range board {
		boardLine[k] = v
	}
	boardLine["labels"] = []any{}
	boardLine["lists"] = []any{
		list(601, "backlog", nil, nil),
		list(602, "label", gxGitLabLabel(23452, root, "Feature", "#428BCA", nil), 1),
		list(603, "label", doing, 0), // not in labels.ndjson
		list(604, "closed", nil, nil),
	}
	epic := func(id, iid int64) obj {
		return obj{"id": id, "iid": iid, "group_id": root, "author_id": 1, "title": fmt.Sprintf("Epic %d", iid), "state_id": "opened",
			"description": "an epic", "created_at": ts, "updated_at": ts, "parent_id": nil, "relative_position": nil,
			"notes": []any{obj{"id": id*10 + 1, "note": "a note", "noteable_type": "Epic", "author_id": 1, "created_at": ts,
				"author": obj{"name": "Administrator"}, "events": []any{}, "award_emoji": []any{}}},
			"label_links": []any{obj{"id": id*10 + 2, "label_id": 23451, "target_type": "Epic",
				"label": gxGitLabLabel(23451, root, "Bug", "#D9534F", "Something is broken")}},
			"award_emoji": []any{}, "events": []any{}, "resource_state_events": []any{}}
	}
	ms := func(id, iid int64, group int64, title, state string, start, due any) obj {
		return obj{"id": id, "title": title, "project_id": nil, "description": "Milestone " + title, "due_date": due,
			"created_at": ts, "updated_at": ts, "state": state, "iid": iid, "start_date": start, "group_id": group}
	}
	badge := func(id, group int64, name any, link, image string) obj {
		b := obj{"id": id, "link_url": link, "image_url": image, "project_id": nil, "group_id": group, "created_at": ts,
			"updated_at": ts, "type": "GroupBadge"}
		if name != nil {
			b["name"] = name
		}
		return b
	}
	rel := func(group int64, name, content string) gxEntry {
		return gxEntry{Name: fmt.Sprintf("tree/groups/%d/%s.ndjson", group, name), Content: content}
	}
	j := func(v any) string {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	return gxTarGz(t, []gxEntry{
		{Name: "tree/", Type: tar.TypeDir},
		{Name: "VERSION", Content: "0.2.4"},
		{Name: "GITLAB_VERSION", Content: "16.11.1"},
		{Name: "GITLAB_REVISION", Content: "8f6d4c3e2a1"},
		{Name: "tree/groups/_all.ndjson", Content: "4351\n4352\n4353\n"},
		{Name: "tree/groups/4351.json", Content: j(gxGitLabGroup(root, "GitLab Root", "gl-root", 10, nil))},
		{Name: "tree/groups/4352.json", Content: j(gxGitLabGroup(child, "GitLab Child", "gl-child", 20, root))},
		{Name: "tree/groups/4353.json", Content: j(gxGitLabGroup(grand, "GitLab Grandchild", "gl-grand", 0, child))},
		rel(root, "labels", gxJSONL(t, gxGitLabLabel(23451, root, "Bug", "#D9534F", "Something is broken"),
			gxGitLabLabel(23452, root, "Feature", "#428BCA", nil))),
		rel(root, "milestones", gxJSONL(t, ms(501, 1, root, "v1.0", "active", "2024-04-01", "2024-05-01"),
			ms(502, 2, root, "v0.9", "closed", nil, nil))),
		rel(root, "badges", gxJSONL(t, badge(71, root, nil, "https://localhost:3443/%{default_branch}", "https://localhost:3443/badge.svg"),
			badge(72, root, "Coverage", "https://ci.example.com/%{project_path}", "https://ci.example.com/%{project_path}/coverage.svg"))),
		rel(root, "boards", gxJSONL(t, boardLine)),
		rel(root, "members", gxJSONL(t,
			member(81, root, 50, 1, importerEmail, "root"),
			member(82, root, 30, 2, "gxmatch@example.com", "matched"),
			member(83, root, 40, 3, "nobody-here@example.com", "stranger"),
			member(84, root, 20, 4, nil, "private-email"))),
		rel(root, "epics", gxJSONL(t, epic(901, 1), epic(902, 2))),
		rel(root, "iterations_cadences", gxJSONL(t, obj{"id": 11, "group_id": root, "title": "Cadence", "automatic": true,
			"start_date": "2024-01-01", "duration_in_weeks": 2, "iterations": []any{}})),
		rel(root, "epic_boards", gxJSONL(t, obj{"id": 21, "name": "Epics", "group_id": root, "hide_backlog_list": false,
			"epic_lists": []any{obj{"id": 22, "list_type": "label", "position": 0, "label": doing}}})),
		rel(root, "namespace_settings", gxJSONL(t, obj{"prevent_sharing_groups_outside_hierarchy": false})),
		rel(root, "user_contributions", gxJSONL(t, obj{"id": 1, "username": "root"}, obj{"id": 2, "username": "matched"})),
		rel(child, "labels", gxJSONL(t, gxGitLabLabel(23461, child, "Child label", "#FF00FF", "on the child"))),
		rel(child, "milestones", gxJSONL(t, ms(511, 1, child, "child-m", "active", nil, "2025-01-31"))),
		rel(child, "members", gxJSONL(t, member(85, child, 10, 2, "gxmatch@example.com", "matched"))),
		rel(child, "namespace_settings", gxJSONL(t, obj{"prevent_sharing_groups_outside_hierarchy": false})),
		rel(grand, "namespace_settings", gxJSONL(t, obj{"prevent_sharing_groups_outside_hierarchy": false})),
		rel(grand, "badges", gxJSONL(t, badge(73, grand, "Grand", "https://example.org/g", "https://example.org/g.svg"))),
	})
}

func TestGroupImport_gitLabArchive(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		gxUnlimited(t, s)
		importer := s.NewUser(t, "gximporter")
		var u struct {
			ID int64
		}
		s.Do(t, apitest.Request{Method: "POST", Path: "/users", Token: s.RootToken, JSON: map[string]any{
			"username": "gxmatch", "email": "gxmatch@example.com", "name": "Matched", "password": "Quarry-test-pass-1",
			"skip_confirmation": true}}).Want(t, 201).JSON(t, &u)
		s.Do(t, apitest.Request{Method: "PUT", Path: "/users/" + itoa(u.ID), Token: s.RootToken,
			JSON: map[string]any{"public_email": "gxmatch@example.com"}}).Want(t, 200)
		archive := gxGitLabArchive(t, "gximporter@example.com")

		id, st := gxImport(t, s, importer.Token, "Imported", "gximported", 0, archive)
		if st.ImportStatus != "finished" || st.ImportError != nil || st.Visibility != "private" || st.ImportStatistics == nil {
			t.Fatalf("import: %+v", st)
		}
		stats := st.ImportStatistics
		if stats.Groups != 3 {
			t.Errorf("groups %d; want 3", stats.Groups)
		}
		wantSkipped := map[string]int{"epics": 2, "iterations_cadences": 1, "epic_boards": 1, "namespace_settings": 3,
			"user_contributions": 2, "members": 2}
		for k, v := range wantSkipped {
			if stats.Skipped[k] != v {
				t.Errorf("skipped %s: %d; want %d (all: %v)", k, stats.Skipped[k], v, stats.Skipped)
			}
		}
		wantImported := map[string]int{"labels": 4, "milestones": 3, "badges": 3, "boards": 1, "board_lists": 2, "members": 2}
		for k, v := range wantImported {
			if stats.Imported[k] != v {
				t.Errorf("imported %s: %d; want %d (all: %v)", k, stats.Imported[k], v, stats.Imported)
			}
		}

		// A subgroup's labels include its ancestors' (the API's default).
		ownerLine := "gximporter|50|"
		rootLabels := []string{"Bug|#D9534F|Something is broken", "Doing|#5CB85C|in progress", "Feature|#428BCA|"}
		childLabels := append(slices.Clone(rootLabels), "Child label|#FF00FF|on the child")
		slices.Sort(childLabels)
		grand := gxSnap{Name: "GitLab Grandchild", Path: "gl-grand", Description: "Group GitLab Grandchild",
			Labels: childLabels,
			Badges: []string{"Grand|https://example.org/g|https://example.org/g.svg"}, Members: []string{ownerLine}}
		childSnap := gxSnap{Name: "GitLab Child", Path: "gl-child", Description: "Group GitLab Child",
			Labels:     childLabels,
			Milestones: []string{"1|child-m|active|Milestone child-m||2025-01-31"},
			Members:    []string{ownerLine, "gxmatch|10|"}, Subgroups: []gxSnap{grand}}
		want := gxSnap{Name: "Imported", Path: "gximported", Description: "Group GitLab Root",
			Labels:     []string{"Bug|#D9534F|Something is broken", "Doing|#5CB85C|in progress", "Feature|#428BCA|"},
			Milestones: []string{"1|v1.0|active|Milestone v1.0|2024-04-01|2024-05-01", "2|v0.9|closed|Milestone v0.9||"},
			Badges: []string{"Coverage|https://ci.example.com/%{project_path}|https://ci.example.com/%{project_path}/coverage.svg",
				"|https://localhost:3443/%{default_branch}|https://localhost:3443/badge.svg"},
			Boards:    []string{"Sprint|false|true|0:Doing,1:Feature"},
			Members:   []string{ownerLine, "gxmatch|30|"},
			Subgroups: []gxSnap{childSnap}}
		slices.Sort(want.Badges)
		got := gxSnapshot(t, s, importer.Token, id)
		gxSame(t, "GitLab archive at the top", got, want)

		// Visibility: private at the top, all below it capped by it.
		gxVisibilities(t, s, importer.Token, "gximported", []string{"private", "private", "private"})

		// Under a public parent the root keeps its internal level, the
		// child's public is capped to it, the grandchild stays private.
		parent, _ := agGroup(t, s, importer.Token, "gxpub", 0)
		s.Do(t, apitest.Request{Method: "PUT", Path: "/groups/" + itoa(parent), Token: importer.Token,
			JSON: map[string]any{"visibility": "public"}}).Want(t, 200)
		_, st2 := gxImport(t, s, importer.Token, "Nested", "gxnested", parent, archive)
		if st2.ImportStatus != "finished" {
			t.Fatalf("nested import: %+v", st2)
		}
		gxVisibilities(t, s, importer.Token, "gxpub/gxnested", []string{"internal", "internal", "private"})

		// The group's other attributes came from the archive's numbers.
		g := gxGet[map[string]any](t, s, "/groups/"+urlPath("gximported"), importer.Token)
		for k, v := range map[string]any{"project_creation_level": "developer", "subgroup_creation_level": "maintainer",
			"request_access_enabled": true, "two_factor_grace_period": float64(48)} {
			if g[k] != v {
				t.Errorf("imported group %s = %v; want %v", k, g[k], v)
			}
		}
	})
}

// gxVisibilities checks the visibility of a group, its child and
// grandchild (paths gl-child, gl-grand).
func gxVisibilities(t *testing.T, s *apitest.Server, token, top string, want []string) {
	t.Helper()
	for i, p := range []string{top, top + "/gl-child", top + "/gl-child/gl-grand"} {
		g := gxGet[struct {
			Visibility string
			FullName   string `json:"full_name"`
		}](t, s, "/groups/"+urlPath(p), token)
		if g.Visibility != want[i] {
			t.Errorf("%s visibility %s; want %s", p, g.Visibility, want[i])
		}
	}
}

const gxTooMany = `{"message":{"error":"This endpoint has been requested too many times. Try again later."}}`

// gxExportFiles lists a group's export files on disk.
func gxExportFiles(t *testing.T, s *apitest.Server, id int64) []string {
	t.Helper()
	es, err := os.ReadDir(filepath.Join(s.DataDir, "group_exports", itoa(id)))
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	return names
}

// gxOneExportFile waits until the group has exactly one export file on
// disk, whose name ends with suffix, and returns it.
func gxOneExportFile(t *testing.T, s *apitest.Server, id int64, suffix string) string {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		names := gxExportFiles(t, s, id)
		if len(names) == 1 && strings.HasSuffix(names[0], suffix) {
			return names[0]
		}
		if time.Now().After(deadline) {
			t.Fatalf("export files of group %d: %v; want one ending %q", id, names, suffix)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// gxEmptied waits until dir is empty or absent (an export's work
// folder goes once its export is recorded as finished).
func gxEmptied(t *testing.T, dir string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		es, err := os.ReadDir(dir)
		if err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		if len(es) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s still holds %d entries", dir, len(es))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func gxFileName(t *testing.T, h http.Header) string {
	t.Helper()
	cd := h.Get("Content-Disposition")
	const pre = `attachment; filename="`
	i := strings.Index(cd, pre)
	if i < 0 {
		t.Fatalf("Content-Disposition %q", cd)
	}
	name, _, _ := strings.Cut(cd[i+len(pre):], `"`)
	return name
}

func TestGroupExport_permissionsAndLimits(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		gxUnlimited(t, s)
		owner, maint, stranger := s.NewUser(t, "gxpowner"), s.NewUser(t, "gxpmaint"), s.NewUser(t, "gxpstranger")
		g, _ := agGroup(t, s, owner.Token, "gxperm", 0)
		s.Do(t, apitest.Request{Method: "POST", Path: fmt.Sprintf("/groups/%d/members", g), Token: owner.Token,
			JSON: map[string]any{"user_id": maint.ID, "access_level": 40}}).Want(t, 201)
		export := fmt.Sprintf("/groups/%d/export", g)
		download := export + "/download"

		// Only the Owner exports and downloads; others learn nothing more
		// than they see.
		s.Do(t, apitest.Request{Method: "POST", Path: export, Token: maint.Token}).Want(t, 403)
		s.Do(t, apitest.Request{Method: "POST", Path: export, Token: stranger.Token}).Want(t, 404)
		s.Get(t, download, maint.Token).Want(t, 403)
		s.Get(t, download, stranger.Token).Want(t, 404)
		s.Get(t, download, owner.Token).Want(t, 404).WantBody(t, `{"message":"404 Not found or has expired"}`)
		if names := gxExportFiles(t, s, g); len(names) != 0 {
			t.Errorf("refused exports left %v", names)
		}

		// Two exports at once: both accepted, one finished export left.
		for range 2 {
			s.Do(t, apitest.Request{Method: "POST", Path: export, Token: owner.Token}).Want(t, 202).WantBody(t, `{"message":"202 Accepted"}`)
		}
		_, hdr := gxExport(t, s, owner.Token, g)
		first := gxFileName(t, hdr)
		gxOneExportFile(t, s, g, first)

		// A new export replaces the old: a new name, the old file gone.
		time.Sleep(5 * time.Millisecond) // the name counts milliseconds
		_, hdr = gxExport(t, s, owner.Token, g)
		second := gxFileName(t, hdr)
		if second == first {
			t.Errorf("second export has the first's name %q", first)
		}
		gxOneExportFile(t, s, g, second)
		gxEmptied(t, filepath.Join(s.DataDir, "tmp", "group_exports"))

		// The rates, each per minute.
		s.Do(t, apitest.Request{Method: "PUT", Path: "/application/settings", Token: s.RootToken, JSON: map[string]any{
			"group_export_limit": 1, "group_download_export_limit": 1, "group_import_limit": 1}}).Want(t, 200)
		fresh := s.NewUser(t, "gxprate")
		fg, _ := agGroup(t, s, fresh.Token, "gxrate", 0)
		fexport := fmt.Sprintf("/groups/%d/export", fg)
		s.Do(t, apitest.Request{Method: "POST", Path: fexport, Token: fresh.Token}).Want(t, 202)
		s.Do(t, apitest.Request{Method: "POST", Path: fexport, Token: fresh.Token}).Want(t, 429).WantBody(t, gxTooMany)

		// Downloads count per user and group: root has not downloaded the
		// owner's finished export yet.
		s.Get(t, download, s.RootToken).Want(t, 200)
		s.Get(t, download, s.RootToken).Want(t, 429).WantBody(t, gxTooMany)

		minimal := gxTarGz(t, gxMinimal())
		gxUpload(t, s, fresh.Token, map[string]string{"name": "Rated", "path": "gxrated"}, minimal).Want(t, 202)
		gxUpload(t, s, fresh.Token, map[string]string{"name": "Rated 2", "path": "gxrated2"}, minimal).Want(t, 429).WantBody(t, gxTooMany)
		gxWaitImport(t, s, fresh.Token, "gxrated")
		gxStagingCleared(t, s)
		gxNothingLeft(t, s, "gxrated2")
	})
}
