package e2e

import (
	"fmt"
	"io"
	"net/http"
	"net/url"
	"runtime"
	"strings"
	"sync"
	"testing"

	"quarry/internal/apitest"
	"quarry/internal/store"
	"quarry/internal/web"
)

// webBench is the make-tree repository's server with a README added at
// the root (the overview renders it), a signed-in user's session and a
// file of ~6.5 KB for the blob page.
var webBench struct {
	once    sync.Once
	s       *apitest.Server
	project string // "root/big-repo"
	file    string // the path of a ~6.5 KB file
	session string // a signed-in user's session id
	err     error
}

func webBenchServer(b *testing.B) *apitest.Server {
	s, id, paths := repositoryBenchServer(b)
	webBench.once.Do(func() {
		webBench.s, webBench.project = s, "root/big-repo"
		readme := "# big-repo\n\nThe make-tree repository: ~2,000 files in nested folders.\n\n" +
			"- [the first package](pkg00)\n- a list\n- of **words**\n\n```go\nfunc main() {}\n```\n"
		r := s.Do(b, apitest.Request{Method: "POST", Path: fmt.Sprintf("/projects/%d/repository/files/README.md", id), Token: s.RootToken,
			JSON: map[string]any{"branch": "main", "content": readme, "commit_message": "Add a README"}})
		if r.Status != http.StatusCreated && r.Status != http.StatusBadRequest { // 400: there already
			webBench.err = fmt.Errorf("README: %d", r.Status)
			return
		}
		for _, p := range paths {
			var f struct {
				Size int64 `json:"size"`
			}
			s.Do(b, apitest.Request{Method: "GET", Path: fmt.Sprintf("/projects/%d/repository/files/%s?ref=main", id, url.PathEscape(p)),
				Token: s.RootToken}).Want(b, http.StatusOK).JSON(b, &f)
			if f.Size >= 6400 && f.Size <= 6700 {
				webBench.file = p
				break
			}
		}
		if webBench.file == "" {
			webBench.err = fmt.Errorf("no file of ~6.5 KB")
			return
		}
		s.NewUser(b, "webbench")
		br := newBrowser(s)
		if p := br.signIn(b, "webbench", webPassword); p.Status != http.StatusSeeOther || br.cookie == "" {
			webBench.err = fmt.Errorf("sign in: %d", p.Status)
			return
		}
		webBench.session = br.cookie
	})
	if webBench.err != nil {
		b.Fatal(webBench.err)
	}
	return webBench.s
}

// BenchmarkWebPages reads the pages of the make-tree repository's public
// project from 32 clients, as an anonymous visitor and as a signed-in
// user: the overview (root folder, README, languages), the root folder's
// tree page and the blob page of a ~6.5 KB file, highlighted. It reports
// req/s, statements and the CPU time per page (server and client, one
// process: steadier than req/s on a shared machine).
func BenchmarkWebPages(b *testing.B) {
	s := webBenchServer(b)
	base := s.URL + "/" + webBench.project
	pages := []struct{ name, url string }{
		{"overview", base},
		{"tree", base + "/-/tree/main"},
		{"blob", base + "/-/blob/main/" + webBench.file},
	}
	for _, who := range []struct{ name, session string }{{"anonymous", ""}, {"signed-in", webBench.session}} {
		for _, p := range pages {
			b.Run(p.name+"/"+who.name, func(b *testing.B) {
				benchWebGet(b, p.url, who.session) // warm: the first answer fills the caches
				b.SetParallelism(max(1, 32/runtime.GOMAXPROCS(0)))
				b.ReportAllocs()
				before, cpu := store.Statements(), processCPU()
				b.ResetTimer()
				b.RunParallel(func(pb *testing.PB) {
					for pb.Next() {
						benchWebGet(b, p.url, who.session)
					}
				})
				b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "req/s")
				b.ReportMetric(float64(store.Statements()-before)/float64(b.N), "stmts/op")
				b.ReportMetric(float64((processCPU()-cpu).Microseconds())/float64(b.N), "cpu-µs/op")
			})
		}
	}
}

// benchWebGet gets a page as a browser would, with the session's cookie
// when there is one, and fails unless it is a 200 page of HTML.
func benchWebGet(b *testing.B, u, session string) {
	req, _ := http.NewRequest("GET", u, nil)
	req.Header.Set("Accept", "text/html,application/xhtml+xml")
	if session != "" {
		req.AddCookie(&http.Cookie{Name: web.SessionCookie, Value: session})
	}
	resp, err := benchClient.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") {
		b.Fatalf("GET %s: %d %s", u, resp.StatusCode, resp.Header.Get("Content-Type"))
	}
}
