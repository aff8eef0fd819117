package e2e

import (
	"bytes"
	"net/http"
	"strings"
	"testing"

	gitlab "gitlab.com/gitlab-org/api/client-go"

	"quarry/internal/apitest"
)

// TestWikis_officialClient drives project and group wikis through the
// official Go client's WikisService and GroupWikisService: every call it
// makes decodes, and the values are the ones GitLab would give.
func TestWikis_officialClient(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		owner := s.NewUser(t, "owner")
		c := s.Client(t, owner.Token)
		p, _, err := c.Projects.CreateProject(&gitlab.CreateProjectOptions{Name: gitlab.Ptr("docs"), Visibility: gitlab.Ptr(gitlab.PublicVisibility)})
		if err != nil {
			t.Fatal(err)
		}
		g, _, err := c.Groups.CreateGroup(&gitlab.CreateGroupOptions{Name: gitlab.Ptr("team"), Path: gitlab.Ptr("team"), Visibility: gitlab.Ptr(gitlab.PrivateVisibility)})
		if err != nil {
			t.Fatal(err)
		}

		// Project wiki.
		w, _, err := c.Wikis.CreateWikiPage(p.ID, &gitlab.CreateWikiPageOptions{Title: gitlab.Ptr("Guide/Getting Started"),
			Content: gitlab.Ptr("# Start\n\nRead *this*."), Format: gitlab.Ptr(gitlab.WikiFormatMarkdown)})
		if err != nil {
			t.Fatal(err)
		}
		if w.Slug != "Guide/Getting-Started" || w.Title != "Getting Started" || w.Format != gitlab.WikiFormatMarkdown || w.Encoding != "UTF-8" {
			t.Errorf("created %+v", w)
		}
		if _, _, err := c.Wikis.CreateWikiPage(p.ID, &gitlab.CreateWikiPageOptions{Title: gitlab.Ptr("Notes"), Content: gitlab.Ptr("= Notes"),
			Format: gitlab.Ptr(gitlab.WikiFormatASCIIDoc)}); err != nil {
			t.Fatal(err)
		}
		list, _, err := c.Wikis.ListWikis(p.ID, &gitlab.ListWikisOptions{WithContent: gitlab.Ptr(true)})
		if err != nil {
			t.Fatal(err)
		}
		if len(list) != 2 || list[0].Slug != "Guide/Getting-Started" || list[1].Slug != "Notes" || list[1].Format != gitlab.WikiFormatASCIIDoc || list[1].Content != "= Notes" {
			t.Errorf("list %+v %+v", list[0], list[len(list)-1])
		}
		got, _, err := c.Wikis.GetWikiPage(p.PathWithNamespace, "Guide/Getting-Started", &gitlab.GetWikiPageOptions{RenderHTML: gitlab.Ptr(true)})
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(got.Content, "<h1") || !strings.Contains(got.Content, "<em>this</em>") {
			t.Errorf("rendered %q", got.Content)
		}
		edited, _, err := c.Wikis.EditWikiPage(p.ID, "Guide/Getting-Started", &gitlab.EditWikiPageOptions{Title: gitlab.Ptr("First Steps"), Format: gitlab.Ptr(gitlab.WikiFormatOrg)})
		if err != nil {
			t.Fatal(err)
		}
		if edited.Slug != "Guide/First-Steps" || edited.Format != gitlab.WikiFormatOrg || edited.Content != "# Start\n\nRead *this*." {
			t.Errorf("edited %+v", edited)
		}
		if _, resp, err := c.Wikis.GetWikiPage(p.ID, "Guide/Getting-Started", nil); err == nil || resp.StatusCode != http.StatusNotFound {
			t.Errorf("old slug after rename: %v", err)
		}
		att, _, err := c.Wikis.UploadWikiAttachment(p.ID, bytes.NewReader([]byte("GIF89a")), "diagram.gif", nil)
		if err != nil {
			t.Fatal(err)
		}
		if att.FileName != "diagram.gif" || att.Branch != "main" || !strings.HasPrefix(att.FilePath, "uploads/") ||
			att.Link.URL != att.FilePath || att.Link.Markdown != "![diagram]("+att.FilePath+")" {
			t.Errorf("attachment %+v", att)
		}
		if resp, err := c.Wikis.DeleteWikiPage(p.ID, "Notes"); err != nil || resp.StatusCode != http.StatusNoContent {
			t.Fatalf("delete: %v", err)
		}
		if list, _, _ := c.Wikis.ListWikis(p.ID, nil); len(list) != 1 || list[0].Content != "" {
			t.Errorf("after delete %+v", list)
		}
		// Anonymous reads a public project's wiki.
		if _, _, err := s.Client(t, "").Wikis.GetWikiPage(p.ID, "Guide/First-Steps", nil); err != nil {
			t.Errorf("anonymous read: %v", err)
		}

		// Group wiki.
		gw, _, err := c.GroupWikis.CreateGroupWikiPage(g.ID, &gitlab.CreateGroupWikiPageOptions{Title: gitlab.Ptr("Team Rules"), Content: gitlab.Ptr("Be kind.")})
		if err != nil {
			t.Fatal(err)
		}
		if gw.Slug != "Team-Rules" || gw.Title != "Team Rules" || gw.Format != gitlab.WikiFormatMarkdown {
			t.Errorf("group page %+v", gw)
		}
		if _, _, err := c.GroupWikis.EditGroupWikiPage(g.ID, "Team-Rules", &gitlab.EditGroupWikiPageOptions{Content: gitlab.Ptr("Be kinder.")}); err != nil {
			t.Fatal(err)
		}
		gl, _, err := c.GroupWikis.ListGroupWikis("team", &gitlab.ListGroupWikisOptions{WithContent: gitlab.Ptr(true)})
		if err != nil || len(gl) != 1 || gl[0].Content != "Be kinder." {
			t.Fatalf("group list %+v %v", gl, err)
		}
		if _, resp, err := s.Client(t, "").GroupWikis.GetGroupWikiPage(g.ID, "Team-Rules", nil); err == nil || resp.StatusCode != http.StatusNotFound {
			t.Errorf("anonymous read of a private group's wiki: %v", err)
		}
		if _, err := c.GroupWikis.DeleteGroupWikiPage(g.ID, "Team-Rules"); err != nil {
			t.Fatal(err)
		}
	})
}
