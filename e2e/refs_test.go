package e2e

import (
	"encoding/base64"
	"net/url"
	"sort"
	"strings"
	"testing"
	"time"

	gitlab "gitlab.com/gitlab-org/api/client-go"

	"quarry/internal/apitest"
)

// newRepoProject makes a project with a README on main and returns its id.
func newRepoProject(t *testing.T, s *apitest.Server, token, name, vis string) int64 {
	t.Helper()
	var p struct{ ID int64 }
	s.Do(t, apitest.Request{Method: "POST", Path: "/projects", Token: token,
		JSON: map[string]any{"name": name, "visibility": vis, "initialize_with_readme": true}}).Want(t, 201).JSON(t, &p)
	return p.ID
}

// commitActions commits actions to branch through POST /repository/commits.
func commitActions(t *testing.T, s *apitest.Server, token string, id int64, branch, msg string, actions ...map[string]any) map[string]any {
	t.Helper()
	return s.Do(t, apitest.Request{Method: "POST", Path: "/projects/" + itoa(id) + "/repository/commits", Token: token,
		JSON: map[string]any{"branch": branch, "commit_message": msg, "actions": actions}}).Want(t, 201).Object(t)
}

func TestBranches(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		owner := s.NewUser(t, "owner")
		dev := s.NewUser(t, "dev")
		outsider := s.NewUser(t, "outsider")
		id := newRepoProject(t, s, owner.Token, "br", "private")
		s.Do(t, apitest.Request{Method: "POST", Path: "/projects/" + itoa(id) + "/members", Token: owner.Token,
			JSON: map[string]any{"user_id": dev.ID, "access_level": 30}}).Want(t, 201)
		gl := s.Client(t, dev.Token)

		for _, name := range []string{"feature/one", "feature/two", "fix-1"} {
			b, _, err := gl.Branches.CreateBranch(int(id), &gitlab.CreateBranchOptions{Branch: gitlab.Ptr(name), Ref: gitlab.Ptr("main")})
			if err != nil {
				t.Fatalf("create %s: %v", name, err)
			}
			if b.Name != name || b.Protected || b.Default || !b.CanPush || !b.Merged || b.Commit == nil || len(b.Commit.ID) != 40 {
				t.Errorf("created branch %+v", b)
			}
			if !strings.HasSuffix(b.WebURL, "/owner/br/-/tree/"+name) {
				t.Errorf("web_url %s", b.WebURL)
			}
		}
		// Advance one branch so that it is no longer merged.
		commitActions(t, s, dev.Token, id, "feature/two", "more", map[string]any{"action": "create", "file_path": "two.txt", "content": "2"})

		list, resp, err := gl.Branches.ListBranches(int(id), &gitlab.ListBranchesOptions{})
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, b := range list {
			names = append(names, b.Name)
			switch b.Name {
			case "main":
				if !b.Default || !b.Protected || b.CanPush || b.DevelopersCanPush {
					t.Errorf("main %+v", b)
				}
			case "feature/two":
				if b.Merged {
					t.Errorf("feature/two reported merged")
				}
			}
		}
		if strings.Join(names, ",") != "feature/one,feature/two,fix-1,main" || resp.TotalItems != 4 {
			t.Errorf("branches %v total %d", names, resp.TotalItems)
		}
		for q, want := range map[string]string{"search=feature": "feature/one,feature/two", "search=%5Efix": "fix-1", "search=two%24": "feature/two",
			"regex=%5Efeature%2F(one%7Cthree)%24": "feature/one", "per_page=2&page=2": "fix-1,main"} {
			var got []string
			for _, b := range s.Get(t, "/projects/"+itoa(id)+"/repository/branches?"+q, dev.Token).Want(t, 200).Array(t) {
				got = append(got, b["name"].(string))
			}
			if strings.Join(got, ",") != want {
				t.Errorf("%s: %v, want %s", q, got, want)
			}
		}
		s.Get(t, "/projects/"+itoa(id)+"/repository/branches?regex=(", dev.Token).Want(t, 400)

		b := s.Get(t, "/projects/"+itoa(id)+"/repository/branches/"+url.PathEscape("feature/one"), dev.Token).Want(t, 200).Object(t)
		if b["name"] != "feature/one" || b["commit"].(map[string]any)["short_id"] == "" {
			t.Errorf("get branch %v", b)
		}
		s.Get(t, "/projects/"+itoa(id)+"/repository/branches/nope", dev.Token).Want(t, 404).WantBody(t, `{"message":"404 Branch Not Found"}`)
		s.Get(t, "/projects/"+itoa(id)+"/repository/branches/main", outsider.Token).Want(t, 404).WantBody(t, `{"message":"404 Project Not Found"}`)
		s.Get(t, "/projects/"+itoa(id)+"/repository/branches/main", "").Want(t, 404)

		create := func(token string, body map[string]any) *apitest.Response {
			return s.Do(t, apitest.Request{Method: "POST", Path: "/projects/" + itoa(id) + "/repository/branches", Token: token, JSON: body})
		}
		create(dev.Token, map[string]any{"branch": "fix-1", "ref": "main"}).Want(t, 400).WantBody(t, `{"message":"Branch already exists"}`)
		create(dev.Token, map[string]any{"branch": "x", "ref": "nope"}).Want(t, 400).
			WantBody(t, `{"message":"Failed to create branch 'x': invalid reference name 'nope'"}`)
		create(dev.Token, map[string]any{"branch": "bad..name", "ref": "main"}).Want(t, 400).WantBody(t, `{"message":"Branch name is invalid"}`)
		create(dev.Token, map[string]any{"branch": "feature/one/deeper", "ref": "main"}).Want(t, 400).
			WantBody(t, `{"message":"Failed to create branch 'feature/one/deeper': Branch name conflicts with existing branch hierarchy."}`)
		create(dev.Token, map[string]any{"branch": "x"}).Want(t, 400).WantBody(t, `{"error":"ref is missing"}`)
		create(outsider.Token, map[string]any{"branch": "x", "ref": "main"}).Want(t, 404)
		// A branch from a commit SHA and from a tag.
		head := b["commit"].(map[string]any)["id"].(string)
		create(dev.Token, map[string]any{"branch": "at-sha", "ref": head}).Want(t, 201)

		del := func(token, name string) *apitest.Response {
			return s.Do(t, apitest.Request{Method: "DELETE", Path: "/projects/" + itoa(id) + "/repository/branches/" + url.PathEscape(name), Token: token})
		}
		del(dev.Token, "fix-1").Want(t, 204)
		del(dev.Token, "fix-1").Want(t, 404).WantBody(t, `{"message":"404 Branch Not Found"}`)
		del(owner.Token, "main").Want(t, 403)
		s.Do(t, apitest.Request{Method: "POST", Path: "/projects/" + itoa(id) + "/protected_branches", Token: owner.Token,
			JSON: map[string]any{"name": "feature/*", "push_access_level": 30}}).Want(t, 201)
		del(owner.Token, "feature/one").Want(t, 403)

		// Delete merged branches: at-sha goes; protected and unmerged stay.
		s.Do(t, apitest.Request{Method: "DELETE", Path: "/projects/" + itoa(id) + "/repository/merged_branches", Token: dev.Token}).Want(t, 202).
			WantBody(t, `{"message":"202 Accepted"}`)
		names = nil
		for _, b := range s.Get(t, "/projects/"+itoa(id)+"/repository/branches", dev.Token).Array(t) {
			names = append(names, b["name"].(string))
		}
		if strings.Join(names, ",") != "feature/one,feature/two,main" {
			t.Errorf("after deleting merged: %v", names)
		}
		reporter := s.NewUser(t, "reporter")
		s.Do(t, apitest.Request{Method: "POST", Path: "/projects/" + itoa(id) + "/members", Token: owner.Token,
			JSON: map[string]any{"user_id": reporter.ID, "access_level": 20}}).Want(t, 201)
		s.Do(t, apitest.Request{Method: "DELETE", Path: "/projects/" + itoa(id) + "/repository/merged_branches", Token: reporter.Token}).Want(t, 403)
		create(reporter.Token, map[string]any{"branch": "r", "ref": "main"}).Want(t, 403)
	})
}

func TestTags(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		owner := s.NewUser(t, "owner")
		id := newRepoProject(t, s, owner.Token, "tg", "public")
		gl := s.Client(t, owner.Token)
		first := s.Get(t, "/projects/"+itoa(id)+"/repository/commits/main", "").Want(t, 200).Object(t)["id"].(string)
		time.Sleep(1100 * time.Millisecond) // distinct commit times order "updated"
		second := commitActions(t, s, owner.Token, id, "main", "second", map[string]any{"action": "create", "file_path": "a", "content": "a"})["id"].(string)

		light, _, err := gl.Tags.CreateTag(int(id), &gitlab.CreateTagOptions{TagName: gitlab.Ptr("v1.10.0"), Ref: gitlab.Ptr("main")})
		if err != nil {
			t.Fatal(err)
		}
		if light.Name != "v1.10.0" || light.Target != second || light.Message != "" || light.Commit.ID != second || light.CreatedAt != nil {
			t.Errorf("lightweight tag %+v", light)
		}
		ann, _, err := gl.Tags.CreateTag(int(id), &gitlab.CreateTagOptions{TagName: gitlab.Ptr("v1.9.0"), Ref: gitlab.Ptr(first), Message: gitlab.Ptr("Release 1.9")})
		if err != nil {
			t.Fatal(err)
		}
		if ann.Target == first || len(ann.Target) != 40 || ann.Message != "Release 1.9" || ann.Commit.ID != first || ann.CreatedAt == nil {
			t.Errorf("annotated tag %+v", ann)
		}
		if _, _, err := gl.Tags.CreateTag(int(id), &gitlab.CreateTagOptions{TagName: gitlab.Ptr("v2.0.0-rc1"), Ref: gitlab.Ptr(first)}); err != nil {
			t.Fatal(err)
		}
		order := func(q string) string {
			var out []string
			for _, x := range s.Get(t, "/projects/"+itoa(id)+"/repository/tags?"+q, "").Want(t, 200).Array(t) {
				out = append(out, x["name"].(string))
			}
			return strings.Join(out, ",")
		}
		for q, want := range map[string]string{
			"order_by=name&sort=asc":    "v1.10.0,v1.9.0,v2.0.0-rc1",
			"order_by=version&sort=asc": "v1.9.0,v1.10.0,v2.0.0-rc1",
			"order_by=version":          "v2.0.0-rc1,v1.10.0,v1.9.0",
			"search=%5Ev1":              "", // filled below: both v1 tags in "updated" order
		} {
			if q == "search=%5Ev1" {
				got := strings.Split(order(q), ",")
				sort.Strings(got)
				if strings.Join(got, ",") != "v1.10.0,v1.9.0" {
					t.Errorf("search ^v1: %v", got)
				}
				continue
			}
			if got := order(q); got != want {
				t.Errorf("%s: %s, want %s", q, got, want)
			}
		}
		if got := order(""); !strings.HasPrefix(got, "v1.10.0,") {
			t.Errorf("default order (updated desc) %s", got)
		}
		g := s.Get(t, "/projects/"+itoa(id)+"/repository/tags/v1.9.0", "").Want(t, 200).Object(t)
		if g["message"] != "Release 1.9" || g["release"] != nil || g["protected"] != false {
			t.Errorf("get tag %v", g)
		}
		s.Get(t, "/projects/"+itoa(id)+"/repository/tags/nope", "").Want(t, 404).WantBody(t, `{"message":"404 Tag Not Found"}`)
		post := func(body map[string]any) *apitest.Response {
			return s.Do(t, apitest.Request{Method: "POST", Path: "/projects/" + itoa(id) + "/repository/tags", Token: owner.Token, JSON: body})
		}
		post(map[string]any{"tag_name": "v1.9.0", "ref": "main"}).Want(t, 400).WantBody(t, `{"message":"Tag v1.9.0 already exists"}`)
		post(map[string]any{"tag_name": "v3", "ref": "nope"}).Want(t, 400).WantBody(t, `{"message":"Target nope is invalid"}`)
		post(map[string]any{"tag_name": "bad tag", "ref": "main"}).Want(t, 400).WantBody(t, `{"message":"Tag name invalid"}`)
		post(map[string]any{"tag_name": "v3"}).Want(t, 400).WantBody(t, `{"error":"ref is missing"}`)
		s.Do(t, apitest.Request{Method: "POST", Path: "/projects/" + itoa(id) + "/repository/tags", JSON: map[string]any{"tag_name": "v3", "ref": "main"}}).Want(t, 401)

		s.Do(t, apitest.Request{Method: "DELETE", Path: "/projects/" + itoa(id) + "/repository/tags/v1.9.0", Token: owner.Token}).Want(t, 204)
		s.Do(t, apitest.Request{Method: "DELETE", Path: "/projects/" + itoa(id) + "/repository/tags/v1.9.0", Token: owner.Token}).Want(t, 404)
		other := s.NewUser(t, "other")
		s.Do(t, apitest.Request{Method: "DELETE", Path: "/projects/" + itoa(id) + "/repository/tags/v1.10.0", Token: other.Token}).Want(t, 403)
	})
}

func TestCommits(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		owner := s.NewUser(t, "owner")
		id := newRepoProject(t, s, owner.Token, "cm", "public")
		base := "/projects/" + itoa(id) + "/repository/"
		c1 := commitActions(t, s, owner.Token, id, "main", "Add files\n\nLonger body.\n\nChangelog: added\nSigned-off-by: A <a@x>",
			map[string]any{"action": "create", "file_path": "src/a.txt", "content": "one\ntwo\n"},
			map[string]any{"action": "create", "file_path": "src/b.sh", "content": base64.StdEncoding.EncodeToString([]byte("echo hi\n")), "encoding": "base64"},
			map[string]any{"action": "create", "file_path": "old.txt", "content": "old\n"})
		if c1["title"] != "Add files" || c1["stats"].(map[string]any)["additions"] != float64(4) || c1["project_id"] != float64(id) ||
			c1["status"] != nil || c1["last_pipeline"] != nil || len(c1["short_id"].(string)) != 8 {
			t.Errorf("created commit %v", c1)
		}
		if tr := c1["trailers"].(map[string]any); tr["Changelog"] != "added" || tr["Signed-off-by"] != "A <a@x>" {
			t.Errorf("trailers %v", c1["trailers"])
		}
		c2 := commitActions(t, s, owner.Token, id, "main", "Rework",
			map[string]any{"action": "update", "file_path": "src/a.txt", "content": "one\n2\n"},
			map[string]any{"action": "move", "previous_path": "old.txt", "file_path": "new/place.txt"},
			map[string]any{"action": "chmod", "file_path": "src/b.sh", "execute_filemode": true},
			map[string]any{"action": "delete", "file_path": "README.md"})
		st := c2["stats"].(map[string]any)
		if st["additions"] != float64(1) || st["total"].(float64) < 2 || c2["parent_ids"].([]any)[0] != c1["id"] {
			t.Errorf("second commit %v", c2)
		}
		tree := map[string]string{}
		for _, e := range s.Get(t, base+"tree?recursive=true&per_page=100", "").Array(t) {
			tree[e["path"].(string)] = e["mode"].(string)
		}
		sh := s.Get(t, "/projects/"+itoa(id)+"/repository/files/src%2Fb.sh?ref=main", "").Want(t, 200)
		if sh.Object(t)["execute_filemode"] != true || sh.Header.Get("X-Service-Execute-Filemode") != "true" {
			t.Errorf("execute_filemode of src/b.sh: %v", sh.Header)
		}
		if a := s.Get(t, "/projects/"+itoa(id)+"/repository/files/src%2Fa.txt?ref=main", "").Object(t); a["execute_filemode"] != false {
			t.Errorf("execute_filemode of src/a.txt: %v", a["execute_filemode"])
		}
		if tree["src/b.sh"] != "100755" || tree["new/place.txt"] != "100644" || tree["old.txt"] != "" || tree["README.md"] != "" {
			t.Errorf("tree after actions %v", tree)
		}
		// Diff of the second commit: rename, chmod, deletion, modification.
		kinds := map[string]string{}
		for _, d := range s.Get(t, base+"commits/"+c2["id"].(string)+"/diff", "").Want(t, 200).Array(t) {
			k := "modified"
			switch {
			case d["renamed_file"] == true:
				k = "renamed from " + d["old_path"].(string)
			case d["deleted_file"] == true:
				k = "deleted"
			case d["new_file"] == true:
				k = "new"
			}
			if d["b_mode"] == "100755" && d["a_mode"] == "100644" {
				k = "chmod"
			}
			kinds[d["new_path"].(string)] = k
		}
		if kinds["new/place.txt"] != "renamed from old.txt" || kinds["README.md"] != "deleted" || kinds["src/b.sh"] != "chmod" || kinds["src/a.txt"] != "modified" {
			t.Errorf("diff kinds %v", kinds)
		}
		// Errors of the commits endpoint.
		post := func(body map[string]any) *apitest.Response {
			return s.Do(t, apitest.Request{Method: "POST", Path: base + "commits", Token: owner.Token, JSON: body})
		}
		post(map[string]any{"branch": "main", "commit_message": "m", "actions": []any{map[string]any{"action": "update", "file_path": "nope", "content": "x"}}}).
			Want(t, 400).WantBody(t, `{"message":"A file with this name doesn't exist"}`)
		post(map[string]any{"branch": "main", "commit_message": "m", "actions": []any{map[string]any{"action": "explode", "file_path": "x"}}}).Want(t, 400)
		post(map[string]any{"branch": "main", "commit_message": "m", "actions": []any{}}).Want(t, 400)
		post(map[string]any{"branch": "main", "actions": []any{map[string]any{"action": "create", "file_path": "x", "content": "x"}}}).Want(t, 400).
			WantBody(t, `{"error":"commit_message is missing"}`)
		post(map[string]any{"branch": "main", "commit_message": "m", "actions": []any{map[string]any{"action": "update", "file_path": "src/a.txt", "content": "z",
			"last_commit_id": c1["id"]}}}).Want(t, 400)
		// A new branch from start_branch.
		post(map[string]any{"branch": "topic", "start_branch": "main", "commit_message": "topic",
			"actions": []any{map[string]any{"action": "create", "file_path": "t.txt", "content": "t"}}}).Want(t, 201)

		// Single commit, by SHA, branch and tag; stats=false.
		g := s.Get(t, base+"commits/"+c1["id"].(string), "").Want(t, 200).Object(t)
		if g["message"] != c1["message"] || g["stats"] == nil || !strings.HasSuffix(g["web_url"].(string), "/owner/cm/-/commit/"+c1["id"].(string)) {
			t.Errorf("get commit %v", g)
		}
		if g := s.Get(t, base+"commits/main?stats=false", "").Want(t, 200).Object(t); g["id"] != c2["id"] || g["stats"] != nil {
			t.Errorf("commit by branch %v", g)
		}
		s.Get(t, base+"commits/"+strings.Repeat("0", 40), "").Want(t, 404).WantBody(t, `{"message":"404 Commit Not Found"}`)
		s.Get(t, base+"commits/nope", "").Want(t, 404)
		s.Get(t, base+"commits/"+strings.Repeat("0", 40)+"/diff", "").Want(t, 404)
		// Refs holding a commit: c1 is on main and topic, and tagged.
		s.Do(t, apitest.Request{Method: "POST", Path: base + "tags", Token: owner.Token, JSON: map[string]any{"tag_name": "v1", "ref": c1["id"]}}).Want(t, 201)
		refs := func(q string) string {
			var out []string
			for _, r := range s.Get(t, base+"commits/"+c1["id"].(string)+"/refs"+q, "").Want(t, 200).Array(t) {
				out = append(out, r["type"].(string)+":"+r["name"].(string))
			}
			return strings.Join(out, ",")
		}
		if got := refs(""); got != "branch:main,branch:topic,tag:v1" {
			t.Errorf("refs of c1: %s", got)
		}
		if got := refs("?type=tag"); got != "tag:v1" {
			t.Errorf("tag refs of c1: %s", got)
		}
		if got := refs("?type=branch&per_page=1&page=2"); got != "branch:topic" {
			t.Errorf("second branch page: %s", got)
		}
		s.Get(t, base+"commits/"+c2["id"].(string)+"/refs?type=tag", "").Want(t, 200).WantBody(t, "[]")
		s.Get(t, base+"commits/"+strings.Repeat("0", 40)+"/refs", "").Want(t, 404).WantBody(t, `{"message":"404 Commit Not Found"}`)
		s.Get(t, base+"commits/main/refs?type=remote", "").Want(t, 400)

		// Listing: default branch, ref_name, path, all, since/until, paging.
		ids := func(q string) []string {
			var out []string
			r := s.Get(t, base+"commits?"+q, "").Want(t, 200)
			for _, c := range r.Array(t) {
				out = append(out, c["id"].(string))
			}
			return out
		}
		all := ids("")
		if len(all) != 3 || all[0] != c2["id"] || all[1] != c1["id"] {
			t.Errorf("commits of main %v", all)
		}
		if got := ids("ref_name=topic"); len(got) != 4 {
			t.Errorf("commits of topic %d", len(got))
		}
		if got := ids("path=src/b.sh"); len(got) != 2 {
			t.Errorf("commits touching src/b.sh: %d", len(got))
		}
		if got := ids("path=new"); len(got) != 1 || got[0] != c2["id"] {
			t.Errorf("commits touching new/: %v", got)
		}
		if got := ids("all=true"); len(got) != 4 {
			t.Errorf("all commits %d", len(got))
		}
		if got := ids("author=Owner"); len(got) != 3 {
			t.Errorf("commits by Owner: %d", len(got))
		}
		if got := ids("author=nobody"); len(got) != 0 {
			t.Errorf("commits by nobody: %v", got)
		}
		if got := ids("first_parent=true"); len(got) != 3 {
			t.Errorf("first-parent history %v", got)
		}
		if got := ids("ref_name=nope"); len(got) != 0 {
			t.Errorf("unknown ref %v", got)
		}
		future := url.QueryEscape(time.Now().Add(time.Hour).UTC().Format(time.RFC3339))
		past := url.QueryEscape(time.Now().Add(-time.Hour).UTC().Format(time.RFC3339))
		if got := ids("since=" + future); len(got) != 0 {
			t.Errorf("since future %v", got)
		}
		if got := ids("until=" + past); len(got) != 0 {
			t.Errorf("until past %v", got)
		}
		if got := ids("since=" + past + "&until=" + future); len(got) != 3 {
			t.Errorf("since/until window %v", got)
		}
		s.Get(t, base+"commits?since=yesterday", "").Want(t, 400)
		r := s.Get(t, base+"commits?per_page=2&page=2", "").Want(t, 200)
		if n := len(r.Array(t)); n != 1 || r.Header.Get("X-Total") != "3" || r.Header.Get("X-Total-Pages") != "2" || r.Header.Get("X-Page") != "2" {
			t.Errorf("page 2: %d items, headers %v", n, r.Header)
		}
		gl := s.Client(t, owner.Token)
		// (The client reads extended_trailers as strings where GitLab sends
		// arrays, so the listing skips the commit that has trailers.)
		cs, _, err := gl.Commits.ListCommits(int(id), &gitlab.ListCommitsOptions{RefName: gitlab.Ptr("main"), Path: gitlab.Ptr("new"), WithStats: gitlab.Ptr(true)})
		if err != nil || len(cs) != 1 || cs[0].Stats == nil || cs[0].Stats.Additions != 1 {
			t.Errorf("client list commits %v %+v", err, cs)
		}
	})
}
