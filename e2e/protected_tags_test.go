package e2e

import (
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"testing"

	gitlab "gitlab.com/gitlab-org/api/client-go"

	"quarry/internal/apitest"
)

// The protected tags API with the official client: list, get, protect
// (wildcards, grants), unprotect, and its refusals.
func TestProtectedTags_API(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		owner := s.NewUser(t, "owner")
		dev := s.NewUser(t, "dev")
		var p struct{ ID int64 }
		s.Do(t, apitest.Request{Method: "POST", Path: "/projects", Token: owner.Token, JSON: map[string]any{"name": "tagged", "initialize_with_readme": true}}).Want(t, 201).JSON(t, &p)
		s.Do(t, apitest.Request{Method: "POST", Path: "/projects/" + itoa(p.ID) + "/members", Token: owner.Token, JSON: map[string]any{"user_id": dev.ID, "access_level": 30}}).Want(t, 201)
		c := s.Client(t, owner.Token).ProtectedTags

		pt, _, err := c.ProtectRepositoryTags(p.ID, &gitlab.ProtectRepositoryTagsOptions{Name: gitlab.Ptr("v*")})
		if err != nil {
			t.Fatal(err)
		}
		if pt.Name != "v*" || len(pt.CreateAccessLevels) != 1 || pt.CreateAccessLevels[0].AccessLevel != gitlab.MaintainerPermissions ||
			pt.CreateAccessLevels[0].AccessLevelDescription != "Maintainers" || pt.CreateAccessLevels[0].ID == 0 {
			t.Errorf("protected v*: %+v %+v", pt, pt.CreateAccessLevels)
		}
		pt, _, err = c.ProtectRepositoryTags(p.ID, &gitlab.ProtectRepositoryTagsOptions{Name: gitlab.Ptr("release/1"),
			CreateAccessLevel: gitlab.Ptr(gitlab.DeveloperPermissions),
			AllowedToCreate:   &[]*gitlab.TagsPermissionOptions{{UserID: gitlab.Ptr(dev.ID)}}})
		if err != nil {
			t.Fatal(err)
		}
		if len(pt.CreateAccessLevels) != 2 || pt.CreateAccessLevels[0].AccessLevelDescription != "Developers + Maintainers" || pt.CreateAccessLevels[1].UserID != dev.ID {
			t.Errorf("protected release/1: %+v", pt.CreateAccessLevels)
		}
		list, resp, err := c.ListProtectedTags(p.ID, nil)
		if err != nil || len(list) != 2 || list[0].Name != "release/1" || list[1].Name != "v*" || resp.Header.Get("X-Total") != "2" {
			t.Fatalf("list: %v %+v", err, list)
		}
		got, _, err := c.GetProtectedTag(p.ID, "release/1")
		if err != nil || got.Name != "release/1" {
			t.Errorf("get release/1 (encoded): %v %+v", err, got)
		}
		_, resp, err = c.GetProtectedTag(p.ID, "nope")
		if resp == nil || resp.StatusCode != http.StatusNotFound {
			t.Errorf("unknown protected tag: %v", err)
		}
		base := "/projects/" + itoa(p.ID) + "/protected_tags"
		s.Get(t, base+"/nope", owner.Token).Want(t, 404).WantBody(t, `{"message":"404 Not found"}`)
		// Bad input.
		s.Do(t, apitest.Request{Method: "POST", Path: base, Token: owner.Token, JSON: map[string]any{}}).Want(t, 400).WantBody(t, `{"error":"name is missing"}`)
		s.Do(t, apitest.Request{Method: "POST", Path: base, Token: owner.Token, JSON: map[string]any{"name": ""}}).Want(t, 422).WantBody(t, `{"message":["Name can't be blank"]}`)
		s.Do(t, apitest.Request{Method: "POST", Path: base, Token: owner.Token, JSON: map[string]any{"name": "v*"}}).Want(t, 422).
			WantBody(t, `{"message":["Name has already been taken"]}`)
		s.Do(t, apitest.Request{Method: "POST", Path: base, Token: owner.Token, JSON: map[string]any{"name": "x", "create_access_level": 60}}).Want(t, 400).
			WantBody(t, `{"error":"create_access_level does not have a valid value"}`)
		s.Do(t, apitest.Request{Method: "POST", Path: base, Token: owner.Token, JSON: map[string]any{"name": "x", "allowed_to_create": []map[string]any{{"user_id": s.AbsentID(t)}}}}).Want(t, 422)
		s.Do(t, apitest.Request{Method: "POST", Path: base, Token: owner.Token, JSON: map[string]any{"name": "x", "allowed_to_create": []map[string]any{{}}}}).Want(t, 400)
		// Developers do not manage; outsiders do not see the project.
		_, resp, err = s.Client(t, dev.Token).ProtectedTags.ProtectRepositoryTags(p.ID, &gitlab.ProtectRepositoryTagsOptions{Name: gitlab.Ptr("d*")})
		if resp == nil || resp.StatusCode != http.StatusForbidden {
			t.Errorf("developer protects: %v", err)
		}
		s.Get(t, base, dev.Token).Want(t, 403)
		s.Do(t, apitest.Request{Method: "DELETE", Path: base + "/" + url.PathEscape("v*"), Token: dev.Token}).Want(t, 403)
		outsider := s.NewUser(t, "outsider")
		s.Get(t, base, outsider.Token).Want(t, 404)
		// Unprotect.
		if _, err := c.UnprotectRepositoryTags(p.ID, "v*"); err != nil {
			t.Fatal(err)
		}
		resp, err = c.UnprotectRepositoryTags(p.ID, "v*")
		if err == nil || resp == nil || resp.StatusCode != http.StatusNotFound {
			t.Errorf("unprotect twice: %v", err)
		}
		if list, _, _ := c.ListProtectedTags(p.ID, nil); len(list) != 1 {
			t.Errorf("after unprotect: %d", len(list))
		}
	})
}

// Protected tags over git and through the tags and releases APIs: a
// developer may not create a tag only maintainers may create, and may
// once developers are allowed; nobody moves a protected tag by push;
// deletion goes through the API, by maintainers.
func TestProtectedTags_enforced(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		owner := s.NewUser(t, "owner")
		dev := s.NewUser(t, "dev")
		var p struct{ ID int64 }
		s.Do(t, apitest.Request{Method: "POST", Path: "/projects", Token: owner.Token, JSON: map[string]any{"name": "repo", "initialize_with_readme": true}}).Want(t, 201).JSON(t, &p)
		s.Do(t, apitest.Request{Method: "POST", Path: "/projects/" + itoa(p.ID) + "/members", Token: owner.Token, JSON: map[string]any{"user_id": dev.ID, "access_level": 30}}).Want(t, 201)
		base := "/projects/" + itoa(p.ID)
		s.Do(t, apitest.Request{Method: "POST", Path: base + "/protected_tags", Token: owner.Token, JSON: map[string]any{"name": "v*"}}).Want(t, 201)

		work := t.TempDir()
		if out, err := gitRun(work, "clone", "-q", cloneURL(s, "owner/repo", "dev", dev.Token), "dev"); err != nil {
			t.Fatalf("clone: %v\n%s", err, out)
		}
		dc := filepath.Join(work, "dev")
		gitRun(dc, "tag", "v1")
		gitRun(dc, "tag", "other")
		out, err := gitRun(dc, "push", "origin", "v1")
		if err == nil || !strings.Contains(out, "You are not allowed to create this tag as it is protected.") {
			t.Errorf("developer pushes protected tag v1: %v\n%s", err, out)
		}
		if out, err := gitRun(dc, "push", "origin", "other"); err != nil {
			t.Errorf("developer pushes unprotected tag: %v\n%s", err, out)
		}
		// Through the API: GitLab's 400 with the hook's message; a release
		// making the tag is 403 Access Denied.
		s.Do(t, apitest.Request{Method: "POST", Path: base + "/repository/tags", Token: dev.Token, JSON: map[string]any{"tag_name": "v2", "ref": "main"}}).
			Want(t, 400).WantBody(t, `{"message":"You are not allowed to create this tag as it is protected."}`)
		s.Do(t, apitest.Request{Method: "POST", Path: base + "/releases", Token: dev.Token, JSON: map[string]any{"tag_name": "v2", "ref": "main"}}).
			Want(t, 403).WantBody(t, `{"message":"Access Denied"}`)
		s.Do(t, apitest.Request{Method: "POST", Path: base + "/repository/tags", Token: dev.Token, JSON: map[string]any{"tag_name": "w1", "ref": "main"}}).Want(t, 201)

		// The maintainer may create it, over git and through the API.
		if out, err := gitRun(work, "clone", "-q", cloneURL(s, "owner/repo", "owner", owner.Token), "own"); err != nil {
			t.Fatalf("clone: %v\n%s", err, out)
		}
		oc := filepath.Join(work, "own")
		gitRun(oc, "tag", "v1")
		if out, err := gitRun(oc, "push", "origin", "v1"); err != nil {
			t.Errorf("maintainer pushes v1: %v\n%s", err, out)
		}
		s.Do(t, apitest.Request{Method: "POST", Path: base + "/repository/tags", Token: owner.Token, JSON: map[string]any{"tag_name": "v3", "ref": "main"}}).Want(t, 201)
		// Nobody moves or deletes a protected tag by push.
		writeFile(t, filepath.Join(oc, "n.txt"), "n\n")
		gitRun(oc, "add", ".")
		gitRun(oc, "commit", "-q", "-m", "next")
		gitRun(oc, "tag", "-f", "v1")
		if out, err := gitRun(oc, "push", "-f", "origin", "v1"); err == nil || !strings.Contains(out, "Protected tags cannot be updated.") {
			t.Errorf("maintainer moves v1: %v\n%s", err, out)
		}
		if out, err := gitRun(oc, "push", "origin", ":refs/tags/v1"); err == nil || !strings.Contains(out, "You can only delete protected tags using the web interface.") {
			t.Errorf("maintainer deletes v1 by push: %v\n%s", err, out)
		}
		if out, err := gitRun(dc, "push", "origin", ":refs/tags/v3"); err == nil || !strings.Contains(out, "Only a project maintainer or owner can delete a protected tag.") {
			t.Errorf("developer deletes v3 by push: %v\n%s", err, out)
		}
		// Deletion through the API: maintainers only.
		s.Do(t, apitest.Request{Method: "DELETE", Path: base + "/repository/tags/v3", Token: dev.Token}).Want(t, 403)
		s.Do(t, apitest.Request{Method: "DELETE", Path: base + "/repository/tags/w1", Token: dev.Token}).Want(t, 204)
		s.Do(t, apitest.Request{Method: "DELETE", Path: base + "/repository/tags/v3", Token: owner.Token}).Want(t, 204)

		// Developers allowed: the developer's push and API tag go through.
		s.Do(t, apitest.Request{Method: "DELETE", Path: base + "/protected_tags/" + url.PathEscape("v*"), Token: owner.Token}).Want(t, 204)
		s.Do(t, apitest.Request{Method: "POST", Path: base + "/protected_tags", Token: owner.Token, JSON: map[string]any{"name": "v*", "create_access_level": 30}}).Want(t, 201)
		gitRun(dc, "tag", "v5")
		if out, err := gitRun(dc, "push", "origin", "v5"); err != nil {
			t.Errorf("developer pushes v5 with developers allowed: %v\n%s", err, out)
		}
		s.Do(t, apitest.Request{Method: "POST", Path: base + "/repository/tags", Token: dev.Token, JSON: map[string]any{"tag_name": "v6", "ref": "main"}}).Want(t, 201)
		// No one: not even the maintainer.
		s.Do(t, apitest.Request{Method: "POST", Path: base + "/protected_tags", Token: owner.Token, JSON: map[string]any{"name": "locked-*", "create_access_level": 0}}).Want(t, 201)
		s.Do(t, apitest.Request{Method: "POST", Path: base + "/repository/tags", Token: owner.Token, JSON: map[string]any{"tag_name": "locked-1", "ref": "main"}}).Want(t, 400)
	})
}
