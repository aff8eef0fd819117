package e2e

import (
	"bytes"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"

	"quarry/internal/apitest"
)

// wikiBench is a server with a public group whose wiki holds
// wikiBenchPages Markdown pages in 20 folders, pushed with git.
var wikiBench struct {
	once  sync.Once
	s     *apitest.Server
	group int64
	err   error
}

const wikiBenchPages = 500

func wikiBenchServer(b *testing.B) (*apitest.Server, int64) {
	wikiBench.once.Do(func() {
		s := apitest.Start(&keepAlive{b}, benchTarget(b))
		var g struct{ ID int64 }
		s.Do(b, apitest.Request{Method: "POST", Path: "/groups", Token: s.RootToken,
			JSON: map[string]any{"name": "handbook", "path": "handbook", "visibility": "public"}}).Want(b, 201).JSON(b, &g)
		work, err := os.MkdirTemp("", "quarry-bench-wiki-")
		if err != nil {
			wikiBench.err = err
			return
		}
		defer os.RemoveAll(work)
		w := filepath.Join(work, "w")
		if out, err := gitRun(work, "init", "-q", "-b", "main", "w"); err != nil {
			wikiBench.err = fmt.Errorf("%v: %s", err, out)
			return
		}
		for i := 0; i < wikiBenchPages; i++ {
			dir := filepath.Join(w, fmt.Sprintf("Section-%02d", i%20))
			if err := os.MkdirAll(dir, 0o755); err != nil {
				wikiBench.err = err
				return
			}
			body := fmt.Sprintf("# Page %d\n\nSome *text* with a [link](Page-%d) and a list:\n\n- one\n- two\n", i, i+1)
			if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("Page-%d.md", i)), bytes.Repeat([]byte(body), 20), 0o644); err != nil {
				wikiBench.err = err
				return
			}
		}
		for _, args := range [][]string{{"add", "."}, {"commit", "-q", "-m", "pages"},
			{"push", "-q", cloneURL(s, "handbook.wiki", "root", s.RootToken), "main"}} {
			if out, err := gitRun(w, args...); err != nil {
				wikiBench.err = fmt.Errorf("git %v: %v: %s", args, err, out)
				return
			}
		}
		wikiBench.s, wikiBench.group = s, g.ID
	})
	if wikiBench.err != nil {
		b.Fatal(wikiBench.err)
	}
	return wikiBench.s, wikiBench.group
}

// BenchmarkWikis reads and writes a group wiki of 500 pages: one page
// (raw and rendered) and the page list from 32 clients, then page
// creation from 1 and 8 clients (every writer's commit lands: a lost
// compare-and-swap is rebuilt on the new tip).
func BenchmarkWikis(b *testing.B) {
	s, group := wikiBenchServer(b)
	base := s.URL + "/api/v4/groups/" + itoa(group) + "/wikis"
	page := func(i int) string {
		k := (i * 7919) % wikiBenchPages
		return base + "/" + url.PathEscape(fmt.Sprintf("Section-%02d/Page-%d", k%20, k))
	}
	b.Run("page", func(b *testing.B) { runParallel(b, 32, func(i int) { fetch(b, page(i), "") }) })
	b.Run("page-render_html", func(b *testing.B) { runParallel(b, 32, func(i int) { fetch(b, page(i)+"?render_html=true", "") }) })
	b.Run("list-500", func(b *testing.B) { runParallel(b, 32, func(int) { fetch(b, base, "") }) })
	var seq atomic.Int64
	create := func(b *testing.B) bool {
		n := seq.Add(1)
		return postCreated(b, base, s.RootToken, map[string]any{"title": fmt.Sprintf("New/Bench page %d", n), "content": "# New\n\ntext\n"})
	}
	for _, clients := range []int{1, 8} {
		b.Run(fmt.Sprintf("create-clients=%d", clients), func(b *testing.B) { runWriters(b, clients, "pages/s", create) })
	}
}
