package e2e

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	gitlab "gitlab.com/gitlab-org/api/client-go"

	"quarry/internal/apitest"
)

// Releases and their asset links, as GitLab's Releases API gives them
// (lib/api/releases.rb, lib/api/entities/release.rb,
// app/services/releases/create_service.rb, app/models/releases/link.rb).

func newReleaseProject(t *testing.T, s *apitest.Server, token, name, vis string) (id int64, path, mainSHA string) {
	t.Helper()
	p := s.Do(t, apitest.Request{Method: "POST", Path: "/projects", Token: token, JSON: map[string]any{"name": name,
		"visibility": vis, "initialize_with_readme": true}}).Want(t, http.StatusCreated).Object(t)
	id = int64(p["id"].(float64))
	sha := s.Get(t, "/projects/"+itoa(id)+"/repository/branches/main", token).Want(t, http.StatusOK).Object(t)["commit"].(map[string]any)["id"].(string)
	return id, p["path_with_namespace"].(string), sha
}

func TestReleases_clientRoundTrip(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		c := s.Root(t)
		pid, path, sha := newReleaseProject(t, s, s.RootToken, "Rel Proj", "private")
		base := "/projects/" + itoa(pid)
		s.Do(t, apitest.Request{Method: "POST", Path: base + "/milestones", Token: s.RootToken, JSON: map[string]any{"title": "M1"}}).Want(t, http.StatusCreated)

		// A release of a new tag made from a branch, with a link and a
		// milestone; the tag name holds a slash.
		tag := "release/v1.0"
		pkg := gitlab.PackageLinkType
		rel, _, err := c.Releases.CreateRelease(pid, &gitlab.CreateReleaseOptions{
			Name: gitlab.Ptr("First"), TagName: gitlab.Ptr(tag), Ref: gitlab.Ptr("main"), Description: gitlab.Ptr("**notes**"),
			Milestones: &[]string{"M1"},
			Assets: &gitlab.ReleaseAssetsOptions{Links: []*gitlab.ReleaseAssetLinkOptions{{
				Name: gitlab.Ptr("app"), URL: gitlab.Ptr("https://dl.test/app"), DirectAssetPath: gitlab.Ptr("/bin/app"), LinkType: &pkg}}},
		})
		if err != nil {
			t.Fatalf("create release: %v", err)
		}
		if rel.TagName != tag || rel.Name != "First" || rel.Description != "**notes**" || rel.Commit.ID != sha || rel.Author.Username != "root" {
			t.Errorf("release: %+v", rel)
		}
		if len(rel.Milestones) != 1 || rel.Milestones[0].Title != "M1" || rel.UpcomingRelease {
			t.Errorf("milestones: %+v", rel.Milestones)
		}
		if rel.Assets.Count != 5 || len(rel.Assets.Sources) != 4 || len(rel.Assets.Links) != 1 {
			t.Fatalf("assets: %+v", rel.Assets)
		}
		web := s.URL + "/" + path
		if got, want := rel.Assets.Sources[0].URL, web+"/-/archive/release%2Fv1.0/rel-proj-release-v1.0.zip"; rel.Assets.Sources[0].Format != "zip" || got != want {
			t.Errorf("zip source %q; want %q", got, want)
		}
		l := rel.Assets.Links[0]
		if l.Name != "app" || l.LinkType != gitlab.PackageLinkType || l.DirectAssetURL != web+"/-/releases/release%2Fv1.0/downloads/bin/app" {
			t.Errorf("link: %+v", l)
		}
		if rel.CommitPath != "/"+path+"/-/commit/"+sha || rel.TagPath != "/"+path+"/-/tags/release%2Fv1.0" {
			t.Errorf("paths: %q %q", rel.CommitPath, rel.TagPath)
		}
		if rel.Links.Self != web+"/-/releases/release%2Fv1.0" || rel.Links.EditURL != rel.Links.Self+"/edit" {
			t.Errorf("_links: %+v", rel.Links)
		}
		// The tag exists now.
		s.Get(t, base+"/repository/tags/"+url.PathEscape(tag), s.RootToken).Want(t, http.StatusOK)

		// A second, older release of an existing tag.
		s.Do(t, apitest.Request{Method: "POST", Path: base + "/repository/tags", Token: s.RootToken, JSON: map[string]any{"tag_name": "v0.9", "ref": "main"}}).Want(t, http.StatusCreated)
		old := time.Date(2020, 1, 2, 3, 4, 5, 0, time.UTC)
		rel2, _, err := c.Releases.CreateRelease(pid, &gitlab.CreateReleaseOptions{TagName: gitlab.Ptr("v0.9"), ReleasedAt: &old})
		if err != nil {
			t.Fatalf("create v0.9: %v", err)
		}
		if rel2.Name != "v0.9" || !rel2.ReleasedAt.Equal(old) || len(rel2.Milestones) != 0 {
			t.Errorf("v0.9: %+v", rel2)
		}

		list, resp, err := c.Releases.ListReleases(pid, &gitlab.ListReleasesOptions{})
		if err != nil || len(list) != 2 || list[0].TagName != tag || list[1].TagName != "v0.9" || resp.TotalItems != 2 {
			t.Fatalf("list: %v %v", list, err)
		}
		list, _, _ = c.Releases.ListReleases(pid, &gitlab.ListReleasesOptions{Sort: gitlab.Ptr("asc"), IncludeHTMLDescription: gitlab.Ptr(true)})
		if len(list) != 2 || list[0].TagName != "v0.9" || !strings.Contains(list[1].DescriptionHTML, "<strong>notes</strong>") {
			t.Errorf("asc list: %+v", list)
		}
		// Keyset pages.
		r := s.Get(t, base+"/releases?pagination=keyset&per_page=1&order_by=created_at&sort=asc", s.RootToken).Want(t, http.StatusOK)
		next := apitest.Links(t, r.Header)["next"]
		if a := r.Array(t); len(a) != 1 || a[0]["tag_name"] != tag || next == "" {
			t.Fatalf("keyset page: %v %v", a, r.Header)
		}
		r = s.Get(t, next, s.RootToken).Want(t, http.StatusOK)
		if a := r.Array(t); len(a) != 1 || a[0]["tag_name"] != "v0.9" || apitest.Links(t, r.Header)["next"] != "" {
			t.Errorf("second keyset page: %v %v", a, r.Header)
		}

		got, _, err := c.Releases.GetRelease(pid, tag)
		if err != nil || got.Name != "First" || got.Commit.ID != sha {
			t.Fatalf("get: %+v %v", got, err)
		}
		upd, _, err := c.Releases.UpdateRelease(pid, tag, &gitlab.UpdateReleaseOptions{Name: gitlab.Ptr("Renamed"), Milestones: &[]string{}})
		if err != nil || upd.Name != "Renamed" || upd.Description != "**notes**" || len(upd.Milestones) != 0 {
			t.Fatalf("update: %+v %v", upd, err)
		}
		latest, _, err := c.Releases.GetLatestRelease(pid)
		if err != nil || latest.TagName != tag {
			t.Fatalf("latest: %+v %v", latest, err)
		}

		// Links.
		links, _, err := c.ReleaseLinks.ListReleaseLinks(pid, tag, nil)
		if err != nil || len(links) != 1 {
			t.Fatalf("links: %v %v", links, err)
		}
		nl, _, err := c.ReleaseLinks.CreateReleaseLink(pid, tag, &gitlab.CreateReleaseLinkOptions{Name: gitlab.Ptr("book"), URL: gitlab.Ptr("ftp://dl.test/book")})
		if err != nil || nl.LinkType != gitlab.OtherLinkType || nl.DirectAssetURL != "ftp://dl.test/book" {
			t.Fatalf("create link: %+v %v", nl, err)
		}
		rb := gitlab.RunbookLinkType
		ul, _, err := c.ReleaseLinks.UpdateReleaseLink(pid, tag, nl.ID, &gitlab.UpdateReleaseLinkOptions{LinkType: &rb})
		if err != nil || ul.LinkType != gitlab.RunbookLinkType || ul.Name != "book" {
			t.Fatalf("update link: %+v %v", ul, err)
		}
		gl, _, err := c.ReleaseLinks.GetReleaseLink(pid, tag, nl.ID)
		if err != nil || gl.LinkType != gitlab.RunbookLinkType {
			t.Fatalf("get link: %+v %v", gl, err)
		}
		if _, _, err := c.ReleaseLinks.DeleteReleaseLink(pid, tag, nl.ID); err != nil {
			t.Fatalf("delete link: %v", err)
		}
		s.Get(t, base+"/releases/"+url.PathEscape(tag)+"/assets/links/"+itoa(nl.ID), s.RootToken).Want(t, http.StatusNotFound)

		// Deleting a release keeps its tag; a release whose tag is gone
		// still shows the commit it was made at.
		if _, _, err := c.Releases.DeleteRelease(pid, tag); err != nil {
			t.Fatalf("delete: %v", err)
		}
		s.Get(t, base+"/releases/"+url.PathEscape(tag), s.RootToken).Want(t, http.StatusNotFound).WantBody(t, `{"message":"404 Not Found"}`)
		s.Get(t, base+"/repository/tags/"+url.PathEscape(tag), s.RootToken).Want(t, http.StatusOK)
		s.Do(t, apitest.Request{Method: "DELETE", Path: base + "/repository/tags/v0.9", Token: s.RootToken}).Want(t, http.StatusNoContent)
		v := s.Get(t, base+"/releases/v0.9", s.RootToken).Want(t, http.StatusOK).Object(t)
		if v["commit"].(map[string]any)["id"] != sha {
			t.Errorf("release of a removed tag: %v", v)
		}
	})
}

func TestReleases_errors(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		pid, _, _ := newReleaseProject(t, s, s.RootToken, "errs", "private")
		base := "/projects/" + itoa(pid) + "/releases"
		post := func(body map[string]any) *apitest.Response {
			return s.Do(t, apitest.Request{Method: "POST", Path: base, Token: s.RootToken, JSON: body})
		}
		post(map[string]any{"tag_name": "v1", "ref": "main"}).Want(t, http.StatusCreated)
		post(map[string]any{"tag_name": "v1", "ref": "main"}).Want(t, http.StatusConflict).WantBody(t, `{"message":"Release already exists"}`)
		post(map[string]any{"tag_name": "v2"}).Want(t, 422).WantBody(t, `{"message":"Ref is not specified"}`)
		post(map[string]any{"tag_name": "v2", "ref": "nope"}).Want(t, http.StatusBadRequest).WantBody(t, `{"message":"Target nope is invalid"}`)
		post(map[string]any{"tag_name": "v2", "ref": "main", "milestones": []string{"nope", "gone"}}).
			Want(t, http.StatusBadRequest).WantBody(t, `{"message":"Milestone(s) not found: nope, gone"}`)
		post(map[string]any{"ref": "main"}).Want(t, http.StatusBadRequest).WantBody(t, `{"error":"tag_name is missing"}`)
		post(map[string]any{"tag_name": "v2", "ref": "main", "assets": map[string]any{"links": []any{
			map[string]any{"name": "a", "url": "javascript:alert(1)"}}}}).
			Want(t, http.StatusBadRequest).WantBody(t, `{"message":"Validation failed: Links url is blocked: Only allowed schemes are http, https, ftp"}`)
		// Nothing was made by the refused calls: v2 has no tag.
		s.Get(t, "/projects/"+itoa(pid)+"/repository/tags/v2", s.RootToken).Want(t, http.StatusNotFound)

		links := base + "/v1/assets/links"
		link := func(body map[string]any) *apitest.Response {
			return s.Do(t, apitest.Request{Method: "POST", Path: links, Token: s.RootToken, JSON: body})
		}
		link(map[string]any{"name": "a", "url": "https://x.test/a"}).Want(t, http.StatusCreated)
		link(map[string]any{"name": "b", "url": "not a url"}).Want(t, http.StatusBadRequest).
			WantBody(t, `{"message":["Url is blocked: Only allowed schemes are http, https, ftp"]}`)
		link(map[string]any{"name": "a", "url": "https://x.test/other"}).Want(t, http.StatusBadRequest).
			WantBody(t, `{"message":["Name has already been taken"]}`)
		link(map[string]any{"name": "c", "url": "https://x.test/a"}).Want(t, http.StatusBadRequest).
			WantBody(t, `{"message":["Url has already been taken"]}`)
		link(map[string]any{"name": "c", "url": "https://x.test/c", "link_type": "movie"}).Want(t, http.StatusBadRequest).
			WantBody(t, `{"error":"link_type does not have a valid value"}`)
		link(map[string]any{"name": "c"}).Want(t, http.StatusBadRequest).WantBody(t, `{"error":"url is missing"}`)
		s.Get(t, base+"/v9/assets/links", s.RootToken).Want(t, http.StatusNotFound)
		s.Do(t, apitest.Request{Method: "PUT", Path: base + "/v9", Token: s.RootToken, JSON: map[string]any{"name": "x"}}).
			Want(t, http.StatusNotFound).WantBody(t, `{"message":"Tag does not exist"}`)
		// The permalink redirects to the latest release (the helper
		// follows it).
		if v := s.Get(t, base+"/permalink/latest", s.RootToken).Want(t, http.StatusOK).Object(t); v["tag_name"] != "v1" {
			t.Errorf("latest: %v", v)
		}
		s.Get(t, base+"?order_by=name", s.RootToken).Want(t, http.StatusBadRequest).WantBody(t, `{"error":"order_by does not have a valid value"}`)
	})
}

func TestReleases_permissions(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		reporter, developer, guest, stranger := s.NewUser(t, "rep"), s.NewUser(t, "dev"), s.NewUser(t, "gst"), s.NewUser(t, "str")
		add := func(pid int64, u apitest.User, level int) {
			s.Do(t, apitest.Request{Method: "POST", Path: "/projects/" + itoa(pid) + "/members", Token: s.RootToken,
				JSON: map[string]any{"user_id": u.ID, "access_level": level}}).Want(t, http.StatusCreated)
		}
		priv, _, _ := newReleaseProject(t, s, s.RootToken, "priv", "private")
		add(priv, reporter, 20)
		add(priv, developer, 30)
		base := "/projects/" + itoa(priv) + "/releases"
		create := func(token, tag string) *apitest.Response {
			return s.Do(t, apitest.Request{Method: "POST", Path: base, Token: token, JSON: map[string]any{"tag_name": tag, "ref": "main"}})
		}
		create(reporter.Token, "r1").Want(t, http.StatusForbidden)
		create(developer.Token, "d1").Want(t, http.StatusCreated)
		s.Get(t, base, reporter.Token).Want(t, http.StatusOK)
		if e := s.Get(t, base+"/d1", reporter.Token).Want(t, http.StatusOK).Object(t)["_links"].(map[string]any); e["edit_url"] != nil {
			t.Errorf("a reporter's release shows edit_url: %v", e)
		}
		s.Do(t, apitest.Request{Method: "PUT", Path: base + "/d1", Token: reporter.Token, JSON: map[string]any{"name": "x"}}).Want(t, http.StatusForbidden)
		s.Do(t, apitest.Request{Method: "DELETE", Path: base + "/d1", Token: reporter.Token}).Want(t, http.StatusForbidden)
		s.Get(t, base, stranger.Token).Want(t, http.StatusNotFound).WantBody(t, `{"message":"404 Project Not Found"}`)
		create(stranger.Token, "s1").Want(t, http.StatusNotFound)
		s.Get(t, base, "").Want(t, http.StatusNotFound)
		s.Do(t, apitest.Request{Method: "DELETE", Path: base + "/d1", Token: developer.Token}).Want(t, http.StatusOK)

		pub, _, _ := newReleaseProject(t, s, s.RootToken, "pub", "public")
		add(pub, guest, 10)
		pbase := "/projects/" + itoa(pub) + "/releases"
		s.Do(t, apitest.Request{Method: "POST", Path: pbase, Token: s.RootToken, JSON: map[string]any{"tag_name": "v1", "ref": "main"}}).Want(t, http.StatusCreated)
		s.Get(t, pbase+"/v1", guest.Token).Want(t, http.StatusOK)
		s.Get(t, pbase, "").Want(t, http.StatusOK)
		s.Do(t, apitest.Request{Method: "POST", Path: pbase, Token: guest.Token, JSON: map[string]any{"tag_name": "g1", "ref": "main"}}).Want(t, http.StatusForbidden)
		s.Do(t, apitest.Request{Method: "POST", Path: pbase, JSON: map[string]any{"tag_name": "g1", "ref": "main"}}).Want(t, http.StatusUnauthorized)

		// A group's releases: those of its projects the caller reads.
		g := s.Do(t, apitest.Request{Method: "POST", Path: "/groups", Token: s.RootToken, JSON: map[string]any{"name": "rg", "path": "rg", "visibility": "public"}}).
			Want(t, http.StatusCreated).Object(t)
		gid := int64(g["id"].(float64))
		for _, vis := range []string{"public", "private"} {
			p := s.Do(t, apitest.Request{Method: "POST", Path: "/projects", Token: s.RootToken, JSON: map[string]any{"name": "g" + vis,
				"visibility": vis, "initialize_with_readme": true, "namespace_id": gid}}).Want(t, http.StatusCreated).Object(t)
			s.Do(t, apitest.Request{Method: "POST", Path: "/projects/" + itoa(int64(p["id"].(float64))) + "/releases", Token: s.RootToken,
				JSON: map[string]any{"tag_name": "v-" + vis, "ref": "main"}}).Want(t, http.StatusCreated)
		}
		if a := s.Get(t, "/groups/rg/releases", s.RootToken).Want(t, http.StatusOK).Array(t); len(a) != 2 {
			t.Errorf("root's group releases: %v", a)
		}
		if a := s.Get(t, "/groups/rg/releases", stranger.Token).Want(t, http.StatusOK).Array(t); len(a) != 1 || a[0]["tag_name"] != "v-public" {
			t.Errorf("a stranger's group releases: %v", a)
		}
	})
}

func TestReleases_jobToken(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		owner := s.NewUser(t, "relowner")
		p := newCIProject(t, s, owner, "relci", map[string]string{".gitlab-ci.yml": "build:\n  script: [echo hi]\n"})
		p.settle(t, 1)
		other, _, _ := newReleaseProject(t, s, owner.Token, "other", "private")
		job := projectRunner(t, p, nil).take(t)
		jt := map[string]string{"JOB-TOKEN": job.Token}
		base := "/projects/" + itoa(p.ID) + "/releases"
		r := s.Do(t, apitest.Request{Method: "POST", Path: base, Header: jt, JSON: map[string]any{"tag_name": "ci-1", "ref": "main",
			"description": "from CI"}}).Want(t, http.StatusCreated).Object(t)
		if r["author"].(map[string]any)["username"] != "relowner" || r["tag_name"] != "ci-1" {
			t.Errorf("job's release: %v", r)
		}
		s.Do(t, apitest.Request{Method: "PUT", Path: base + "/ci-1", Header: jt, JSON: map[string]any{"name": "CI one"}}).Want(t, http.StatusOK)
		s.Do(t, apitest.Request{Path: base + "/ci-1", Header: jt}).Want(t, http.StatusOK)
		s.Do(t, apitest.Request{Method: "POST", Path: base + "/ci-1/assets/links", Header: jt, JSON: map[string]any{"name": "a", "url": "https://x.test/a"}}).
			Want(t, http.StatusCreated)
		if res := s.Do(t, apitest.Request{Method: "DELETE", Path: base + "/ci-1", Header: jt}); res.Status < 400 {
			t.Errorf("a job token deleted a release: %d", res.Status)
		}
		if res := s.Do(t, apitest.Request{Method: "POST", Path: "/projects/" + itoa(other) + "/releases", Header: jt,
			JSON: map[string]any{"tag_name": "x", "ref": "main"}}); res.Status < 400 {
			t.Errorf("a job token made a release of another project: %d", res.Status)
		}
		s.Get(t, base+"/ci-1", owner.Token).Want(t, http.StatusOK)
	})
}

// Releases of one new tag made at once: one wins, the others are 409.
func TestReleases_concurrentCreate(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		pid, _, _ := newReleaseProject(t, s, s.RootToken, "race", "private")
		const n = 6
		codes := make(chan int, n)
		for range n {
			go func() {
				res := s.Do(t, apitest.Request{Method: "POST", Path: "/projects/" + itoa(pid) + "/releases", Token: s.RootToken,
					JSON: map[string]any{"tag_name": "v1", "ref": "main"}})
				codes <- res.Status
			}()
		}
		count := map[int]int{}
		for range n {
			select {
			case c := <-codes:
				count[c]++
			case <-time.After(30 * time.Second):
				t.Fatal("no answer within 30s")
			}
		}
		if count[http.StatusCreated] != 1 || count[http.StatusConflict] != n-1 {
			t.Errorf("answers %v; want one 201 and %d 409", count, n-1)
		}
	})
}
