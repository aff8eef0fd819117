package e2e

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/bzip2"
	"compress/gzip"
	"io"
	"net/url"
	"sort"
	"strings"
	"testing"

	gitlab "gitlab.com/gitlab-org/api/client-go"

	"quarry/internal/apitest"
)

func TestCompare(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		owner := s.NewUser(t, "owner")
		id := newRepoProject(t, s, owner.Token, "cmp", "public")
		base := "/projects/" + itoa(id) + "/repository/"
		commitActions(t, s, owner.Token, id, "main", "base",
			map[string]any{"action": "create", "file_path": "keep.txt", "content": "keep\n"},
			map[string]any{"action": "create", "file_path": "gone.txt", "content": "gone\n"},
			map[string]any{"action": "create", "file_path": "old/name.txt", "content": "same content that is renamed\nline 2\nline 3\n"})
		s.Do(t, apitest.Request{Method: "POST", Path: base + "branches", Token: owner.Token, JSON: map[string]any{"branch": "topic", "ref": "main"}}).Want(t, 201)
		t1 := commitActions(t, s, owner.Token, id, "topic", "rename and delete",
			map[string]any{"action": "move", "previous_path": "old/name.txt", "file_path": "new/name.txt"},
			map[string]any{"action": "delete", "file_path": "gone.txt"})
		t2 := commitActions(t, s, owner.Token, id, "topic", "edit", map[string]any{"action": "update", "file_path": "keep.txt", "content": "kept\n"})
		// main moves on too: a merge-base compare leaves this out.
		m1 := commitActions(t, s, owner.Token, id, "main", "main only", map[string]any{"action": "create", "file_path": "main.txt", "content": "m\n"})

		gl := s.Client(t, "")
		cmp, _, err := gl.Repositories.Compare(int(id), &gitlab.CompareOptions{From: gitlab.Ptr("main"), To: gitlab.Ptr("topic")})
		if err != nil {
			t.Fatal(err)
		}
		if len(cmp.Commits) != 2 || cmp.Commits[0].ID != t1["id"] || cmp.Commits[1].ID != t2["id"] || cmp.Commit == nil || cmp.Commit.ID != t2["id"] ||
			cmp.CompareTimeout || cmp.CompareSameRef {
			t.Errorf("compare commits %+v", cmp)
		}
		changes := map[string]string{}
		for _, d := range cmp.Diffs {
			switch {
			case d.RenamedFile:
				changes[d.NewPath] = "renamed from " + d.OldPath
			case d.DeletedFile:
				changes[d.OldPath] = "deleted"
			case d.NewFile:
				changes[d.NewPath] = "new"
			default:
				changes[d.NewPath] = "modified:" + d.Diff
			}
		}
		if len(changes) != 3 || changes["new/name.txt"] != "renamed from old/name.txt" || changes["gone.txt"] != "deleted" ||
			!strings.Contains(changes["keep.txt"], "-keep\n+kept\n") || changes["main.txt"] != "" {
			t.Errorf("merge-base diffs %v", changes)
		}
		// web_url names the merge base, not "main".
		raw := s.Get(t, base+"compare?from=main&to=topic", "").Want(t, 200).Object(t)
		mb := s.Get(t, base+"merge_base?refs[]=main&refs[]=topic", "").Want(t, 200).Object(t)["id"].(string)
		if !strings.HasSuffix(raw["web_url"].(string), "/owner/cmp/-/compare/"+mb+"..."+t2["id"].(string)) {
			t.Errorf("web_url %v (merge base %s)", raw["web_url"], mb)
		}
		d0 := raw["diffs"].([]any)[0].(map[string]any)
		for _, k := range []string{"diff", "new_path", "old_path", "a_mode", "b_mode", "new_file", "renamed_file", "deleted_file", "too_large", "collapsed"} {
			if _, ok := d0[k]; !ok {
				t.Errorf("diff lacks %s: %v", k, d0)
			}
		}
		// Straight: main's own commit shows up as removed.
		straight := s.Get(t, base+"compare?from=main&to=topic&straight=true", "").Want(t, 200).Object(t)
		found := false
		for _, d := range straight["diffs"].([]any) {
			if d.(map[string]any)["old_path"] == "main.txt" && d.(map[string]any)["deleted_file"] == true {
				found = true
			}
		}
		if !found || !strings.Contains(straight["web_url"].(string), "/compare/"+m1["id"].(string)+"...") {
			t.Errorf("straight compare %v", straight)
		}
		// Same ref; reverse direction in merge-base mode.
		same := s.Get(t, base+"compare?from=topic&to="+t2["id"].(string), "").Want(t, 200).Object(t)
		if same["compare_same_ref"] != true || same["commit"] != nil || len(same["commits"].([]any)) != 0 || len(same["diffs"].([]any)) != 0 {
			t.Errorf("same ref %v", same)
		}
		rev := s.Get(t, base+"compare?from=topic&to="+url.QueryEscape(mb), "").Want(t, 200).Object(t)
		if rev["compare_same_ref"] != false || len(rev["commits"].([]any)) != 0 || len(rev["diffs"].([]any)) != 0 {
			t.Errorf("backwards compare %v", rev)
		}
		s.Get(t, base+"compare?from=main&to=nope", "").Want(t, 404).WantBody(t, `{"message":"404 Ref Not Found"}`)
		s.Get(t, base+"compare?from=main", "").Want(t, 400).WantBody(t, `{"error":"to is missing"}`)

		// Past the diff limits a file's diff is empty.
		big := strings.Repeat("a fairly long line of text to make the diff large\n", 6000)
		commitActions(t, s, owner.Token, id, "topic", "big", map[string]any{"action": "create", "file_path": "big.txt", "content": big})
		over := s.Get(t, base+"compare?from=main&to=topic", "").Want(t, 200).Object(t)
		for _, d := range over["diffs"].([]any) {
			dm := d.(map[string]any)
			if dm["new_path"] == "big.txt" && (dm["diff"] != "" || dm["too_large"] != true) {
				t.Errorf("big diff not cut: too_large=%v len=%d", dm["too_large"], len(dm["diff"].(string)))
			}
			if dm["new_path"] == "keep.txt" && dm["diff"] == "" {
				t.Errorf("small diff lost")
			}
		}
		if over["compare_timeout"] != true {
			t.Errorf("compare_timeout %v", over["compare_timeout"])
		}

		// From a fork: compare the parent's main with the fork's main.
		var fork struct{ ID int64 }
		s.Do(t, apitest.Request{Method: "POST", Path: "/projects/" + itoa(id) + "/fork", Token: owner.Token,
			JSON: map[string]any{"path": "cmp-fork", "name": "cmp-fork"}}).Want(t, 201).JSON(t, &fork)
		waitImport(t, s, owner.Token, fork.ID, "finished")
		f1 := commitActions(t, s, owner.Token, fork.ID, "main", "fork work", map[string]any{"action": "create", "file_path": "fork.txt", "content": "f\n"})
		up := commitActions(t, s, owner.Token, id, "main", "upstream work", map[string]any{"action": "create", "file_path": "up.txt", "content": "u\n"})
		fc := s.Get(t, "/projects/"+itoa(fork.ID)+"/repository/compare?from=main&to=main&from_project_id="+itoa(id), "").Want(t, 200).Object(t)
		if cs := fc["commits"].([]any); len(cs) != 1 || cs[0].(map[string]any)["id"] != f1["id"] {
			t.Errorf("fork compare commits %v (upstream %s)", fc["commits"], up["id"])
		}
		other := newRepoProject(t, s, owner.Token, "unrelated", "public")
		s.Get(t, "/projects/"+itoa(fork.ID)+"/repository/compare?from=main&to=main&from_project_id="+itoa(other), "").Want(t, 400).
			WantBody(t, `{"message":"Target project id:`+itoa(other)+` is not a fork of project id:`+itoa(fork.ID)+`"}`)
		priv := newRepoProject(t, s, owner.Token, "secret", "private")
		s.Get(t, "/projects/"+itoa(fork.ID)+"/repository/compare?from=main&to=main&from_project_id="+itoa(priv), "").Want(t, 403).
			WantBody(t, `{"message":"403 Forbidden - You don't have access to this fork's parent project"}`)
		s.Get(t, "/projects/"+itoa(priv)+"/repository/compare?from=main&to=main", "").Want(t, 404)
	})
}

func TestMergeBaseAndContributors(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		owner := s.NewUser(t, "owner")
		id := newRepoProject(t, s, owner.Token, "mb", "public")
		base := "/projects/" + itoa(id) + "/repository/"
		fork := commitActions(t, s, owner.Token, id, "main", "fork point", map[string]any{"action": "create", "file_path": "a", "content": "a"})
		for _, b := range []string{"x", "y", "z"} {
			s.Do(t, apitest.Request{Method: "POST", Path: base + "branches", Token: owner.Token, JSON: map[string]any{"branch": b, "ref": "main"}}).Want(t, 201)
			commitActions(t, s, owner.Token, id, b, "on "+b, map[string]any{"action": "create", "file_path": b, "content": b})
		}
		s.Do(t, apitest.Request{Method: "POST", Path: base + "tags", Token: owner.Token, JSON: map[string]any{"tag_name": "tz", "ref": "z"}}).Want(t, 201)
		for _, q := range []string{"refs[]=x&refs[]=y", "refs[]=x&refs[]=y&refs[]=tz", "refs=x,y"} {
			got := s.Get(t, base+"merge_base?"+q, "").Want(t, 200).Object(t)
			if got["id"] != fork["id"] || got["title"] != "fork point" || len(got["short_id"].(string)) != 8 {
				t.Errorf("%s: %v", q, got)
			}
		}
		s.Get(t, base+"merge_base?refs[]=x", "").Want(t, 400).WantBody(t, `{"message":"Provide at least 2 refs"}`)
		s.Get(t, base+"merge_base?refs[]=x&refs[]=nope", "").Want(t, 400).WantBody(t, `{"message":"Could not find ref: nope"}`)
		s.Get(t, base+"merge_base?refs[]=a1&refs[]=b2", "").Want(t, 400).WantBody(t, `{"message":"Could not find refs: a1, b2"}`)
		s.Get(t, base+"merge_base", "").Want(t, 400).WantBody(t, `{"error":"refs is missing"}`)

		// Contributors: authors of the default branch, grouped by e-mail.
		for i, a := range []struct{ name, email string }{{"zoe", "zoe@example.com"}, {"Adam", "adam@example.com"}, {"zoe", "zoe@example.com"}, {"bob", "Bob@example.com"}} {
			s.Do(t, apitest.Request{Method: "POST", Path: base + "commits", Token: owner.Token, JSON: map[string]any{"branch": "main", "commit_message": "c",
				"author_name": a.name, "author_email": a.email, "actions": []any{map[string]any{"action": "create", "file_path": "c" + itoa(int64(i)), "content": "c"}}}}).Want(t, 201)
		}
		order := func(q string) string {
			var out []string
			for _, c := range s.Get(t, base+"contributors?"+q, "").Want(t, 200).Array(t) {
				out = append(out, c["name"].(string)+":"+itoa(int64(c["commits"].(float64))))
				if c["additions"] != float64(0) || c["deletions"] != float64(0) {
					t.Errorf("additions/deletions %v", c)
				}
			}
			return strings.Join(out, ",")
		}
		// The owner made the README and the fork point commits.
		for q, want := range map[string]string{
			"":                            "Adam:1,bob:1,Owner:2,zoe:2",
			"sort=desc":                   "zoe:2,Owner:2,bob:1,Adam:1",
			"order_by=name":               "Adam:1,bob:1,Owner:2,zoe:2",
			"order_by=name&sort=desc":     "zoe:2,Owner:2,bob:1,Adam:1",
			"order_by=email&sort=asc":     "Adam:1,bob:1,Owner:2,zoe:2",
			"order_by=commits&per_page=2": "Adam:1,bob:1",
			"ref=x":                       "Owner:3",
		} {
			if got := order(q); got != want {
				t.Errorf("contributors?%s = %s, want %s", q, got, want)
			}
		}
		s.Get(t, base+"contributors?order_by=size", "").Want(t, 400)
		s.Get(t, base+"contributors?ref=nope", "").Want(t, 404)
	})
}

func TestBlame(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		owner := s.NewUser(t, "owner")
		id := newRepoProject(t, s, owner.Token, "bl", "public")
		file := "/projects/" + itoa(id) + "/repository/files/" + url.PathEscape("src/poem.txt")
		c1 := commitActions(t, s, owner.Token, id, "main", "first", map[string]any{"action": "create", "file_path": "src/poem.txt", "content": "one\ntwo\nthree\nfour\nfive\n"})
		c2 := commitActions(t, s, owner.Token, id, "main", "second", map[string]any{"action": "update", "file_path": "src/poem.txt", "content": "one\n2\n3\nfour\nfive\n"})
		c3 := commitActions(t, s, owner.Token, id, "main", "third\n\nwith a body", map[string]any{"action": "update", "file_path": "src/poem.txt", "content": "one\n2\n3\nfour\nFIVE\nsix\n"})
		type rng struct {
			commit string
			lines  string
		}
		blame := func(q string) []rng {
			var out []rng
			for _, r := range s.Get(t, file+"/blame?"+q, "").Want(t, 200).Array(t) {
				var lines []string
				for _, l := range r["lines"].([]any) {
					lines = append(lines, l.(string))
				}
				out = append(out, rng{r["commit"].(map[string]any)["id"].(string), strings.Join(lines, "|")})
			}
			return out
		}
		got := blame("ref=main")
		want := []rng{{c1["id"].(string), "one"}, {c2["id"].(string), "2|3"}, {c1["id"].(string), "four"}, {c3["id"].(string), "FIVE|six"}}
		if len(got) != len(want) {
			t.Fatalf("blame %v", got)
		}
		for i := range want {
			if got[i] != want[i] {
				t.Errorf("range %d = %v, want %v", i, got[i], want[i])
			}
		}
		// The commit object carries its full message, parents and people.
		full := s.Get(t, file+"/blame?ref=main", "").Array(t)[3]["commit"].(map[string]any)
		if full["message"] != "third\n\nwith a body" || full["parent_ids"].([]any)[0] != c2["id"] || full["author_name"] != "Owner" ||
			full["committer_email"] == "" || full["authored_date"] == nil {
			t.Errorf("blame commit %v", full)
		}
		if got := blame("ref=" + c2["id"].(string)); len(got) != 3 || got[2].lines != "four|five" {
			t.Errorf("blame at c2 %v", got)
		}
		if got := blame("ref=main&range[start]=2&range[end]=4"); len(got) != 2 || got[0].lines != "2|3" || got[1].lines != "four" {
			t.Errorf("ranged blame %v", got)
		}
		if got := blame("ref=main&range[start]=5&range[end]=100"); len(got) != 1 || got[0].lines != "FIVE|six" {
			t.Errorf("range past the end %v", got)
		}
		s.Get(t, file+"/blame?ref=main&range[start]=4&range[end]=2", "").Want(t, 400).
			WantBody(t, `{"message":"range[start] must be less than or equal to range[end]"}`)
		s.Get(t, file+"/blame?ref=main&range[start]=2", "").Want(t, 400)
		s.Get(t, file+"/blame", "").Want(t, 400).WantBody(t, `{"error":"ref is missing"}`)
		s.Get(t, file+"/blame?ref=nope", "").Want(t, 404).WantBody(t, `{"message":"404 Commit Not Found"}`)
		s.Get(t, "/projects/"+itoa(id)+"/repository/files/nope.txt/blame?ref=main", "").Want(t, 404).WantBody(t, `{"message":"404 File Not Found"}`)
		hd := s.Do(t, apitest.Request{Method: "HEAD", Path: file + "/blame?ref=main"})
		if hd.Status != 200 || len(hd.Body) != 0 || hd.Header.Get("X-Service-Last-Commit-Id") != c3["id"] || hd.Header.Get("X-Gitlab-File-Path") != "src/poem.txt" {
			t.Errorf("HEAD blame %d %v", hd.Status, hd.Header)
		}
	})
}

// archiveNames lists the member names of an archive in any format.
func archiveNames(t *testing.T, format string, data []byte) []string {
	t.Helper()
	var names []string
	if format == "zip" {
		zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
		if err != nil {
			t.Fatalf("zip: %v", err)
		}
		for _, f := range zr.File {
			names = append(names, f.Name)
		}
		sort.Strings(names)
		return names
	}
	var rd io.Reader = bytes.NewReader(data)
	switch format {
	case "tar.gz", "tgz", "gz":
		zr, err := gzip.NewReader(rd)
		if err != nil {
			t.Fatalf("%s: %v", format, err)
		}
		rd = zr
	case "tar.bz2", "tbz", "tbz2", "tb2", "bz2":
		rd = bzip2.NewReader(rd)
	}
	tr := tar.NewReader(rd)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("%s: %v", format, err)
		}
		if h.Typeflag == tar.TypeXGlobalHeader {
			continue
		}
		names = append(names, h.Name)
	}
	sort.Strings(names)
	return names
}

func TestArchive(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		owner := s.NewUser(t, "owner")
		id := newRepoProject(t, s, owner.Token, "ar", "public")
		c := commitActions(t, s, owner.Token, id, "main", "files",
			map[string]any{"action": "create", "file_path": "docs/a/b.md", "content": "b"},
			map[string]any{"action": "create", "file_path": "src/main.go", "content": "package main\n"})
		sha := c["id"].(string)
		base := "/projects/" + itoa(id) + "/repository/archive"
		pre := "ar-main-" + sha + "/"
		want := strings.Join([]string{pre, pre + "README.md", pre + "docs/", pre + "docs/a/", pre + "docs/a/b.md", pre + "src/", pre + "src/main.go"}, ",")
		for _, format := range []string{"", "tar.gz", "tar.bz2", "tbz", "tbz2", "tb2", "bz2", "tar", "zip"} {
			path, f := base, "tar.gz"
			if format != "" {
				path, f = base+"."+format, format
			}
			r := s.Get(t, path, "").Want(t, 200)
			if got := strings.Join(archiveNames(t, f, r.Body), ","); got != want {
				t.Errorf("%s members %s\nwant %s", f, got, want)
			}
			cd := r.Header.Get("Content-Disposition")
			if !strings.HasPrefix(cd, `attachment; filename="ar-main-`+sha+"."+f+`"`) {
				t.Errorf("%s disposition %q", f, cd)
			}
			ct := r.Header.Get("Content-Type")
			if (f == "zip") != (ct == "application/zip") || (f != "zip" && ct != "application/octet-stream") {
				t.Errorf("%s content type %q", f, ct)
			}
		}
		// A second download of the same archive comes from the cache:
		// the same bytes, now with a length.
		first := s.Get(t, base+".tar.bz2", "").Want(t, 200)
		again := s.Get(t, base+".tar.bz2", "").Want(t, 200)
		if !bytes.Equal(first.Body, again.Body) || again.Header.Get("Content-Length") != itoa(int64(len(again.Body))) {
			t.Errorf("cached archive: equal %v, length %q of %d", bytes.Equal(first.Body, again.Body), again.Header.Get("Content-Length"), len(again.Body))
		}
		// sha and path choose what is archived, and name it.
		s.Do(t, apitest.Request{Method: "POST", Path: "/projects/" + itoa(id) + "/repository/branches", Token: owner.Token,
			JSON: map[string]any{"branch": "feature/x", "ref": "main"}}).Want(t, 201)
		r := s.Get(t, base+".zip?sha=feature/x&path=docs/a", "").Want(t, 200)
		name := "ar-feature-x-" + sha + "-docs-a"
		if got := strings.Join(archiveNames(t, "zip", r.Body), ","); got != name+"/,"+name+"/docs/,"+name+"/docs/a/,"+name+"/docs/a/b.md" {
			t.Errorf("sub-path archive %s", got)
		}
		if cd := r.Header.Get("Content-Disposition"); !strings.Contains(cd, `filename="`+name+`.zip"`) {
			t.Errorf("disposition %q", cd)
		}
		r = s.Get(t, base+".tar?sha="+sha, "").Want(t, 200)
		if got := archiveNames(t, "tar", r.Body); got[0] != "ar-"+sha+"-"+sha+"/" {
			t.Errorf("archive by sha: %v", got[0])
		}
		s.Get(t, base+".zip?sha=nope", "").Want(t, 404).WantBody(t, `{"message":"404 File Not Found"}`)
		s.Get(t, base+".zip?path=nope", "").Want(t, 404).WantBody(t, `{"message":"404 File Not Found"}`)
		s.Get(t, base+".rar", "").Want(t, 404)
		priv := newRepoProject(t, s, owner.Token, "priv", "private")
		s.Get(t, "/projects/"+itoa(priv)+"/repository/archive", "").Want(t, 404)
		s.Get(t, "/projects/"+itoa(priv)+"/repository/archive", owner.Token).Want(t, 200)
	}, func(c *config) { c.ArchiveRateLimit = 0 })
}

func TestArchive_rateLimit(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		owner := s.NewUser(t, "owner")
		other := s.NewUser(t, "other")
		id := newRepoProject(t, s, owner.Token, "rl", "public")
		path := "/projects/" + itoa(id) + "/repository/archive.zip"
		for i := 0; i < 3; i++ {
			s.Get(t, path, owner.Token).Want(t, 200)
		}
		r := s.Get(t, path, owner.Token).Want(t, 429).
			WantBody(t, `{"message":{"error":"This archive has been requested too many times. Try again later."}}`)
		if r.Header.Get("Retry-After") == "" {
			t.Errorf("no Retry-After")
		}
		// Another user has a budget of its own; anonymous callers share
		// their address's.
		s.Get(t, path, other.Token).Want(t, 200)
		for i := 0; i < 3; i++ {
			s.Get(t, path, "").Want(t, 200)
		}
		s.Get(t, path, "").Want(t, 429)
	}, func(c *config) { c.ArchiveRateLimit = 3 })
}
