package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"quarry/internal/apitest"
	"quarry/internal/git/gitrepo"
)

// branchRepo builds a work tree whose main has one commit dated base, and
// branches: at main's commit ("merged") or at a commit of their own on
// top of it dated base plus the given offset. It returns the work tree
// and the commit of each branch.
type branchSpec struct {
	name  string
	after time.Duration // 0: at main's commit; else an own commit this long after main's
}

func gitEnv(dir string, env []string, args ...string) (string, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), append([]string{"GIT_TERMINAL_PROMPT=0", "GIT_ASKPASS=/bin/false", "GIT_CONFIG_NOSYSTEM=1",
		"GIT_CONFIG_GLOBAL=/dev/null", "GIT_AUTHOR_NAME=Ann", "GIT_AUTHOR_EMAIL=ann@example.com", "GIT_COMMITTER_NAME=Cid",
		"GIT_COMMITTER_EMAIL=cid@example.com"}, env...)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("git %v: %v: %s", args, err, out)
	}
	return strings.TrimSpace(string(out)), nil
}

var branchBase = time.Date(2021, 3, 4, 5, 6, 7, 0, time.UTC)

// pushBranches pushes main and specs to the project at path (owner's
// token) and returns the commit of every branch.
func pushBranches(t *testing.T, s *apitest.Server, path string, owner apitest.User, specs []branchSpec) map[string]string {
	t.Helper()
	w := filepath.Join(t.TempDir(), "w")
	dated := func(d time.Time) []string {
		v := fmt.Sprintf("%d +0000", d.Unix())
		return []string{"GIT_AUTHOR_DATE=" + v, "GIT_COMMITTER_DATE=" + v}
	}
	must := func(env []string, args ...string) string {
		out, err := gitEnv(w, env, args...)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	if err := os.MkdirAll(w, 0o755); err != nil {
		t.Fatal(err)
	}
	must(nil, "init", "-q", "-b", "main")
	if err := os.WriteFile(filepath.Join(w, "README.md"), []byte("hello\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	must(nil, "add", ".")
	must(dated(branchBase), "commit", "-q", "-m", "seed\n\nthe body")
	main := must(nil, "rev-parse", "HEAD")
	tree := must(nil, "rev-parse", "HEAD^{tree}")
	commits := map[string]string{"main": main}
	for _, b := range specs {
		at := main
		if b.after != 0 {
			at = must(dated(branchBase.Add(b.after)), "commit-tree", "-p", main, "-m", "work on "+b.name, tree)
		}
		must(nil, "update-ref", "refs/heads/"+b.name, at)
		commits[b.name] = at
	}
	must(nil, "push", "-q", cloneURL(s, path, owner.Username, owner.Token), "refs/heads/*:refs/heads/*")
	return commits
}

func branchNames(list []map[string]any) string {
	names := make([]string, len(list))
	for i, b := range list {
		names[i] = b["name"].(string)
	}
	return strings.Join(names, ",")
}

func TestBranches_sortSearchRegexAndFlags(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		owner := s.NewUser(t, "owner")
		dev := s.NewUser(t, "dev")
		var p struct{ ID int64 }
		s.Do(t, apitest.Request{Method: "POST", Path: "/projects", Token: owner.Token, JSON: map[string]any{"name": "sorted"}}).Want(t, 201).JSON(t, &p)
		s.Do(t, apitest.Request{Method: "POST", Path: "/projects/" + itoa(p.ID) + "/members", Token: owner.Token,
			JSON: map[string]any{"user_id": dev.ID, "access_level": 30}}).Want(t, 201)
		commits := pushBranches(t, s, owner.Username+"/sorted", owner, []branchSpec{
			{"alpha", 365 * 24 * time.Hour}, {"Beta-x", 0}, {"feature/one", 2 * 365 * 24 * time.Hour}, {"feature/two", 0},
			{"hotfix-1", 90 * 24 * time.Hour}, {"xfeature", 0}})
		s.Do(t, apitest.Request{Method: "POST", Path: "/projects/" + itoa(p.ID) + "/protected_branches", Token: owner.Token,
			JSON: map[string]any{"name": "feature/*", "push_access_level": 40, "merge_access_level": 30}}).Want(t, 201)
		base := "/projects/" + itoa(p.ID) + "/repository/branches"

		for _, c := range []struct{ query, want string }{
			{"", "Beta-x,alpha,feature/one,feature/two,hotfix-1,main,xfeature"}, // by name, bytewise
			{"sort=name_asc", "Beta-x,alpha,feature/one,feature/two,hotfix-1,main,xfeature"},
			{"sort=updated_desc", "feature/one,alpha,hotfix-1,Beta-x,feature/two,main,xfeature"}, // ties by name
			{"sort=updated_asc", "Beta-x,feature/two,main,xfeature,hotfix-1,alpha,feature/one"},
			{"search=feature", "feature/one,feature/two,xfeature"},
			{"search=FEATURE", "feature/one,feature/two,xfeature"},
			{"search=%5Efeature", "feature/one,feature/two"},
			{"search=one%24", "feature/one"},
			{"search=%5EMAIN%24", "main"},
			{"search=%5Emai%24", ""},
			{"search=%5E%24", ""},
			{"search=%5E", "Beta-x,alpha,feature/one,feature/two,hotfix-1,main,xfeature"},
			{"regex=%5Efeature%2Ft", "feature/two"},
			{"regex=-", "Beta-x,hotfix-1"},
			{"regex=%5E%5Ba-f%5D&search=a", "alpha,feature/one,feature/two"},
			{"search=feature&sort=updated_desc", "feature/one,feature/two,xfeature"},
			// Filters and order come before the page.
			{"search=feature&per_page=2&page=2", "xfeature"},
			{"sort=updated_desc&per_page=3&page=1", "feature/one,alpha,hotfix-1"},
		} {
			r := s.Get(t, base+"?"+c.query, dev.Token).Want(t, 200)
			var list []map[string]any
			r.JSON(t, &list)
			if got := branchNames(list); got != c.want {
				t.Errorf("%s: got %q; want %q", c.query, got, c.want)
			}
			if c.query == "search=feature&per_page=2&page=2" && r.Header.Get("X-Total") != "3" {
				t.Errorf("%s: X-Total %q; want 3", c.query, r.Header.Get("X-Total"))
			}
		}
		s.Get(t, base+"?sort=name_desc", dev.Token).Want(t, 400).WantBody(t, `{"error":"sort does not have a valid value"}`)
		s.Get(t, base+"?regex=(", dev.Token).Want(t, 400).WantBody(t, `{"message":"Regex is invalid"}`)
		s.Get(t, base+"?regex="+strings.Repeat("a", 1025), dev.Token).Want(t, 400).WantBody(t, `{"message":"Regex is invalid"}`)

		// The flags and the commit of each branch, as a developer sees them.
		want := map[string]struct{ merged, protected, isDefault, devPush, devMerge, canPush bool }{
			"alpha":       {false, false, false, true, true, true},
			"Beta-x":      {true, false, false, true, true, true},
			"feature/one": {false, true, false, false, true, false},
			"feature/two": {true, true, false, false, true, false},
			"hotfix-1":    {false, false, false, true, true, true},
			"main":        {false, true, true, false, false, false},
			"xfeature":    {true, false, false, true, true, true},
		}
		var list []map[string]any
		s.Get(t, base+"?per_page=100", dev.Token).Want(t, 200).JSON(t, &list)
		if len(list) != len(want) {
			t.Fatalf("%d branches; want %d", len(list), len(want))
		}
		for _, b := range list {
			name := b["name"].(string)
			w := want[name]
			got := [6]any{b["merged"], b["protected"], b["default"], b["developers_can_push"], b["developers_can_merge"], b["can_push"]}
			if exp := [6]any{w.merged, w.protected, w.isDefault, w.devPush, w.devMerge, w.canPush}; got != exp {
				t.Errorf("%s: merged, protected, default, developers_can_push, developers_can_merge, can_push = %v; want %v", name, got, exp)
			}
			c := b["commit"].(map[string]any)
			if c["id"] != commits[name] || c["short_id"] != commits[name][:8] {
				t.Errorf("%s: commit %v; want %s", name, c["id"], commits[name])
			}
			wantTitle, wantDate := "work on "+name, branchBase.Add(map[string]time.Duration{"alpha": 365 * 24 * time.Hour,
				"feature/one": 2 * 365 * 24 * time.Hour, "hotfix-1": 90 * 24 * time.Hour}[name])
			if commits[name] == commits["main"] {
				wantTitle = "seed"
			}
			if c["title"] != wantTitle || c["author_name"] != "Ann" || c["committer_email"] != "cid@example.com" {
				t.Errorf("%s: commit %v", name, c)
			}
			if when, err := time.Parse(time.RFC3339, c["committed_date"].(string)); err != nil || !when.Equal(wantDate) {
				t.Errorf("%s: committed_date %v; want %s", name, c["committed_date"], wantDate)
			}
			if wu := b["web_url"]; wu != s.URL+"/"+owner.Username+"/sorted/-/tree/"+name {
				t.Errorf("%s: web_url %v", name, wu)
			}
			// The single branch says the same.
			one := s.Get(t, base+"/"+url.PathEscape(name), dev.Token).Want(t, 200).Object(t)
			if !reflect.DeepEqual(one, b) {
				t.Errorf("%s: single branch %v; in the list %v", name, one, b)
			}
		}
		if c := list[0]["commit"].(map[string]any); c["message"] != "seed\n\nthe body\n" || fmt.Sprint(c["parent_ids"]) != "[]" {
			t.Errorf("Beta-x commit %v", c)
		}
		s.Get(t, base+"/nope", dev.Token).Want(t, 404).WantBody(t, `{"message":"404 Branch Not Found"}`)
	})
}

// TestBranches_manyBranchesPage lists a project of 150 branches page by
// page: each flag right on every page, the list follows pushes and API
// writes at once, and the git processes a page starts do not grow with
// its size.
func TestBranches_manyBranchesPage(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		owner := s.NewUser(t, "owner")
		var specs []branchSpec
		for i := 0; i < 150; i++ {
			var after time.Duration
			if i%3 != 0 {
				after = time.Duration(i) * time.Hour
			}
			prefix := "b"
			if i%5 == 0 {
				prefix = "rel"
			}
			specs = append(specs, branchSpec{fmt.Sprintf("%s-%03d", prefix, i), after})
		}
		ids := map[string]int64{}
		var commits map[string]string
		for _, name := range []string{"many-a", "many-b"} {
			var p struct{ ID int64 }
			s.Do(t, apitest.Request{Method: "POST", Path: "/projects", Token: owner.Token, JSON: map[string]any{"name": name}}).Want(t, 201).JSON(t, &p)
			ids[name] = p.ID
			commits = pushBranches(t, s, owner.Username+"/"+name, owner, specs)
			s.Do(t, apitest.Request{Method: "POST", Path: "/projects/" + itoa(p.ID) + "/protected_branches", Token: owner.Token,
				JSON: map[string]any{"name": "rel-*", "push_access_level": 30, "merge_access_level": 40}}).Want(t, 201)
		}
		expect := func(t *testing.T, b map[string]any) {
			t.Helper()
			name := b["name"].(string)
			own := commits[name] != commits["main"]
			rel := strings.HasPrefix(name, "rel-")
			isMain := name == "main"
			got := [5]any{b["merged"], b["protected"], b["default"], b["developers_can_push"], b["developers_can_merge"]}
			want := [5]any{!own && !isMain, rel || isMain, isMain, !isMain, !rel && !isMain}
			if got != want {
				t.Errorf("%s: merged, protected, default, developers_can_push, developers_can_merge = %v; want %v", name, got, want)
			}
			if b["commit"].(map[string]any)["id"] != commits[name] || b["can_push"] != true {
				t.Errorf("%s: commit %v, can_push %v", name, b["commit"].(map[string]any)["id"], b["can_push"])
			}
		}
		base := func(name string) string { return "/projects/" + itoa(ids[name]) + "/repository/branches" }
		seen := 0
		for page := 1; page <= 4; page++ {
			r := s.Get(t, fmt.Sprintf("%s?per_page=40&page=%d", base("many-a"), page), owner.Token).Want(t, 200)
			var list []map[string]any
			r.JSON(t, &list)
			if r.Header.Get("X-Total") != "151" {
				t.Errorf("X-Total %q; want 151", r.Header.Get("X-Total"))
			}
			for _, b := range list {
				expect(t, b)
			}
			seen += len(list)
		}
		if seen != 151 {
			t.Errorf("%d branches over the pages; want 151", seen)
		}

		// The git processes of a page: the same for 1 branch as for 100,
		// on a cold repository (many-b was never listed), and at most two
		// (the refs, the merged check); a page listed again starts none.
		runner := s.App.GitRunner()
		var mu sync.Mutex
		counts := map[string]int{}
		dirB := gitrepo.HashedPath("", ids["many-b"])
		runner.Observe(func(gitDir, name string) {
			if strings.HasSuffix(gitDir, dirB) {
				mu.Lock()
				counts[name]++
				mu.Unlock()
			}
		})
		t.Cleanup(func() { runner.Observe(nil) })
		measure := func(query string) (int, map[string]int) {
			mu.Lock()
			clear(counts)
			mu.Unlock()
			var list []map[string]any
			s.Get(t, base("many-b")+"?"+query, owner.Token).Want(t, 200).JSON(t, &list)
			for _, b := range list {
				expect(t, b)
			}
			mu.Lock()
			defer mu.Unlock()
			n := 0
			for _, c := range counts {
				n += c
			}
			return n, copyCounts(counts)
		}
		// The push's background work on many-b (statistics, pipelines,
		// retried with backoff) must be over before counting: two quiet
		// seconds (half a second let a retry land in the measurement on
		// a loaded PostgreSQL run).
		for deadline := time.Now().Add(60 * time.Second); ; {
			mu.Lock()
			clear(counts)
			mu.Unlock()
			time.Sleep(2 * time.Second)
			mu.Lock()
			seen := copyCounts(counts)
			mu.Unlock()
			if len(seen) == 0 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("git processes on many-b do not stop: %v", seen)
			}
		}
		one, oneBy := measure("per_page=1&page=7")
		hundred, hundredBy := measure("per_page=100&page=1")
		if one > 2 || hundred > 2 || oneBy["for-each-ref"] == 0 {
			t.Errorf("git processes: page of 1 %v, page of 100 %v; want at most 2 each", oneBy, hundredBy)
		}
		// Once the refs state is a few seconds old (gitrepo's refsSettle)
		// the snapshot is kept: the same page again starts none.
		for deadline := time.Now().Add(15 * time.Second); ; {
			again, by := measure("per_page=100&page=1")
			if again == 0 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("git processes of a page listed again: %v; want none once the refs settled", by)
			}
			time.Sleep(200 * time.Millisecond)
		}
		if again, by := measure("per_page=100&page=2&sort=updated_desc&search=b-"); again > 1 {
			t.Errorf("git processes of another page of the same refs: %v; want at most the merged check", by)
		}
		runner.Observe(nil)

		// Writes show at once: an API branch, a pushed one, a deletion.
		s.Do(t, apitest.Request{Method: "POST", Path: base("many-a"), Token: owner.Token, JSON: map[string]any{"branch": "rel-new", "ref": "b-001"}}).Want(t, 201)
		got := s.Get(t, base("many-a")+"?search=%5Erel-new%24", owner.Token).Want(t, 200).Array(t)
		if len(got) != 1 || got[0]["protected"] != true || got[0]["commit"].(map[string]any)["id"] != commits["b-001"] {
			t.Errorf("new branch %v", got)
		}
		w := filepath.Join(t.TempDir(), "c")
		if _, err := gitEnv(filepath.Dir(w), nil, "clone", "-q", "--bare", cloneURL(s, owner.Username+"/many-a", owner.Username, owner.Token), w); err != nil {
			t.Fatal(err)
		}
		if _, err := gitEnv(w, nil, "push", "-q", cloneURL(s, owner.Username+"/many-a", owner.Username, owner.Token), commits["b-002"]+":refs/heads/pushed", ":refs/heads/b-004"); err != nil {
			t.Fatal(err)
		}
		got = s.Get(t, base("many-a")+"?search=%5Epushed%24", owner.Token).Want(t, 200).Array(t)
		if len(got) != 1 || got[0]["merged"] != false || got[0]["commit"].(map[string]any)["id"] != commits["b-002"] {
			t.Errorf("pushed branch %v", got)
		}
		s.Get(t, base("many-a")+"/b-004", owner.Token).Want(t, 404)
		if r := s.Get(t, base("many-a")+"?per_page=1", owner.Token).Want(t, 200); r.Header.Get("X-Total") != "152" {
			t.Errorf("X-Total after the writes %q; want 152", r.Header.Get("X-Total"))
		}
		// Moving main changes what is merged.
		if _, err := gitEnv(w, nil, "push", "-q", "-f", cloneURL(s, owner.Username+"/many-a", owner.Username, owner.Token), commits["b-002"]+":refs/heads/main"); err != nil {
			t.Fatal(err)
		}
		one2 := s.Get(t, base("many-a")+"/pushed", owner.Token).Want(t, 200).Object(t)
		if one2["merged"] != true { // at main's new commit
			t.Errorf("pushed after main moved: merged %v; want true", one2["merged"])
		}
		if m := s.Get(t, base("many-a")+"/main", owner.Token).Want(t, 200).Object(t); m["merged"] != false || m["default"] != true {
			t.Errorf("main: merged %v, default %v", m["merged"], m["default"])
		}
		if b := s.Get(t, base("many-a")+"/b-003", owner.Token).Want(t, 200).Object(t); b["merged"] != true {
			t.Errorf("b-003 (at the old main) after main moved: merged %v; want true", b["merged"])
		}
		if b := s.Get(t, base("many-a")+"/b-001", owner.Token).Want(t, 200).Object(t); b["merged"] != false {
			t.Errorf("b-001 after main moved: merged %v; want false", b["merged"])
		}
	})
}

func copyCounts(m map[string]int) map[string]int {
	out := make(map[string]int, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

func TestTags_snapshotKinds(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		owner := s.NewUser(t, "owner")
		var p struct{ ID int64 }
		s.Do(t, apitest.Request{Method: "POST", Path: "/projects", Token: owner.Token, JSON: map[string]any{"name": "tagged"}}).Want(t, 201).JSON(t, &p)
		commits := pushBranches(t, s, owner.Username+"/tagged", owner, []branchSpec{{"later", time.Hour}})
		w := filepath.Join(t.TempDir(), "c")
		remote := cloneURL(s, owner.Username+"/tagged", owner.Username, owner.Token)
		if _, err := gitEnv(filepath.Dir(w), nil, "clone", "-q", remote, w); err != nil {
			t.Fatal(err)
		}
		for _, args := range [][]string{{"tag", "light", commits["later"]}, {"tag", "-a", "-m", "annotated\n\nbody", "ann", commits["main"]},
			{"tag", "-a", "-m", "nested", "nest", "ann"}, {"tag", "-a", "-m", "a tree", "treetag", "main^{tree}"}, {"push", "-q", remote, "--tags"}} {
			if _, err := gitEnv(w, []string{"GIT_COMMITTER_DATE=1700000000 +0000"}, args...); err != nil {
				t.Fatal(err)
			}
		}
		base := "/projects/" + itoa(p.ID) + "/repository/tags"
		var list []map[string]any
		s.Get(t, base+"?order_by=name&sort=asc", owner.Token).Want(t, 200).JSON(t, &list)
		if got := branchNames(list); got != "ann,light,nest" { // the tag of a tree has no commit
			t.Fatalf("tags %q", got)
		}
		byName := map[string]map[string]any{}
		for _, tg := range list {
			byName[tg["name"].(string)] = tg
			one := s.Get(t, base+"/"+tg["name"].(string), owner.Token).Want(t, 200).Object(t)
			if !reflect.DeepEqual(one, tg) {
				t.Errorf("%s: single tag %v; in the list %v", tg["name"], one, tg)
			}
		}
		if c := byName["light"]["commit"].(map[string]any); c["id"] != commits["later"] || byName["light"]["target"] != commits["later"] || byName["light"]["created_at"] != nil {
			t.Errorf("light %v", byName["light"])
		}
		ann := byName["ann"]
		if ann["commit"].(map[string]any)["id"] != commits["main"] || ann["target"] == commits["main"] || ann["message"] != "annotated\n\nbody" || ann["created_at"] != "2023-11-14T22:13:20.000Z" {
			t.Errorf("ann %v", ann)
		}
		if c := byName["nest"]["commit"].(map[string]any); c["id"] != commits["main"] || byName["nest"]["message"] != "nested" {
			t.Errorf("nest %v", byName["nest"])
		}
		s.Get(t, base+"?order_by=updated", owner.Token).Want(t, 200).JSON(t, &list)
		if got := branchNames(list); got != "light,ann,nest" {
			t.Errorf("tags by update %q", got)
		}
		s.Get(t, base+"/treetag", owner.Token).Want(t, http.StatusNotFound)
		// A deleted tag is gone at once.
		s.Do(t, apitest.Request{Method: "DELETE", Path: base + "/light", Token: owner.Token}).Want(t, 204)
		s.Get(t, base+"/light", owner.Token).Want(t, http.StatusNotFound)
		var after []json.RawMessage
		s.Get(t, base, owner.Token).Want(t, 200).JSON(t, &after)
		if len(after) != 2 {
			t.Errorf("%d tags after the deletion; want 2", len(after))
		}
	})
}
