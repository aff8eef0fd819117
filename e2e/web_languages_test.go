package e2e

import (
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"quarry/internal/apitest"
)

// TestWeb_languages: a project's overview shows its languages bar —
// each language of the default branch with its share as GET
// /projects/:id/languages gives it (Markdown and unknown files not
// counted), largest first, each segment with the width class of its
// whole percent and its colour — and no bar to a visitor who may not
// read the code, nor for a repository without code.
func TestWeb_languages(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		alice := s.NewUser(t, "alice")
		p := s.Do(t, apitest.Request{Method: "POST", Path: "/projects", Token: alice.Token, JSON: map[string]any{
			"name": "polyglot", "visibility": "public", "initialize_with_readme": true}}).Want(t, http.StatusCreated).Object(t)
		id := int64(p["id"].(float64))
		actions := []map[string]any{
			{"action": "create", "file_path": "main.go", "content": strings.Repeat("g", 600)},
			{"action": "create", "file_path": "web/app.js", "content": strings.Repeat("j", 300)},
			{"action": "create", "file_path": "run.sh", "content": strings.Repeat("s", 97)},
			{"action": "create", "file_path": "tool.rb", "content": "rbx"},
			{"action": "create", "file_path": "notes.txt", "content": strings.Repeat("t", 5000)},
		}
		s.Do(t, apitest.Request{Method: "POST", Path: fmt.Sprintf("/projects/%d/repository/commits", id), Token: alice.Token,
			JSON: map[string]any{"branch": "main", "commit_message": "code", "actions": actions}}).Want(t, http.StatusCreated)
		if err := s.App.Projects.RepositoryChanged(t.Context(), id); err != nil {
			t.Fatal(err)
		}
		api := s.Get(t, fmt.Sprintf("/projects/%d/languages", id), "").Want(t, http.StatusOK).Object(t)
		want := map[string]float64{"Go": 60, "JavaScript": 30, "Shell": 9.7, "Ruby": 0.3}
		for k, v := range want {
			if api[k] != v {
				t.Errorf("API languages %v; want %v", api, want)
				break
			}
		}

		page := newBrowser(s).get(t, "/alice/polyglot").want(t, http.StatusOK)
		section := regexp.MustCompile(`(?s)<section class="languages".*?</section>`).FindString(page.Body)
		if section == "" {
			t.Fatalf("no languages bar in the overview:\n%s", page.Body)
		}
		legend := regexp.MustCompile(`<span class="name">([^<]*)</span><span class="pct">([^<]*)</span>`).FindAllStringSubmatch(section, -1)
		var got []string
		for _, m := range legend {
			got = append(got, m[1]+" "+m[2])
		}
		if w := "Go 60.0%, JavaScript 30.0%, Shell 9.7%, Ruby 0.3%"; strings.Join(got, ", ") != w {
			t.Errorf("legend %q; want %q", strings.Join(got, ", "), w)
		}
		segs := regexp.MustCompile(`<span class="(lang-w-\d+) (lang-c-[0-9a-f]{6})" title="([^"]*)"></span>`).FindAllStringSubmatch(section, -1)
		var bar []string
		for _, m := range segs {
			bar = append(bar, m[3]+" "+m[1]+" "+m[2])
		}
		if w := "Go 60.0% lang-w-60 lang-c-00add8, JavaScript 30.0% lang-w-30 lang-c-f1e05a, Shell 9.7% lang-w-10 lang-c-89e051, Ruby 0.3% lang-w-1 lang-c-701516"; strings.Join(bar, ", ") != w {
			t.Errorf("bar %q; want %q", strings.Join(bar, ", "), w)
		}
		if strings.Contains(section, "style=") {
			t.Errorf("inline style in the bar: %s", section)
		}
		// The style sheet holds the classes the bar uses.
		css := regexp.MustCompile(`href="(/assets/app-[0-9a-f]{16}\.css)"`).FindStringSubmatch(page.Body)
		if css == nil {
			t.Fatal("no style sheet")
		}
		sheet := newBrowser(s).do(t, "GET", css[1], nil, map[string]string{"Accept-Encoding": "identity"}).want(t, http.StatusOK).Body
		for _, c := range []string{".lang-w-60{width:60%}", ".lang-w-1{width:1%}", ".lang-c-00add8{background:#00add8}"} {
			if !strings.Contains(sheet, c) {
				t.Errorf("style sheet lacks %s", c)
			}
		}

		// A project of prose only has no bar.
		s.Do(t, apitest.Request{Method: "POST", Path: "/projects", Token: alice.Token, JSON: map[string]any{
			"name": "prose", "visibility": "public", "initialize_with_readme": true}}).Want(t, http.StatusCreated)
		newBrowser(s).get(t, "/alice/prose").want(t, http.StatusOK).lacks(t, `data-testid="languages"`)

		// A visitor who may not read the code sees the project, no bar.
		s.Do(t, apitest.Request{Method: "PUT", Path: fmt.Sprintf("/projects/%d", id), Token: alice.Token,
			JSON: map[string]any{"repository_access_level": "private"}}).Want(t, http.StatusOK)
		newBrowser(s).get(t, "/alice/polyglot").want(t, http.StatusOK).lacks(t, `data-testid="languages"`, "JavaScript")
	})
}
