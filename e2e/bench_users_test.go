package e2e

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"quarry/internal/apitest"
	"quarry/internal/model"
	"quarry/internal/store"
	"quarry/internal/storetest"
)

// benchUsers is the size of the user table the list benchmarks run on.
const benchUsers = 100_000

// seeded is a server shared by the benchmarks of one table, seeded once.
type seeded struct {
	once sync.Once
	s    *apitest.Server
	err  error
}

// get starts the server on first use (on PostgreSQL when
// QUARRY_BENCH_POSTGRES=1 and QUARRY_TEST_DATABASE_URL are set) and fills it
// with seed inside one transaction.
func (sd *seeded) get(b *testing.B, what string, seed func(ctx context.Context, s *apitest.Server, tx *store.Tx) error) *apitest.Server {
	sd.once.Do(func() {
		target := storetest.Target{Name: "sqlite"}
		if os.Getenv("QUARRY_BENCH_POSTGRES") != "" {
			target = storetest.Target{Name: "postgres", DatabaseURL: storetest.NewPostgresDatabase(&keepAlive{b})}
		}
		s := apitest.Start(&keepAlive{b}, target)
		start := time.Now()
		ctx := context.Background()
		sd.s, sd.err = s, s.App.DB.InTx(ctx, func(tx *store.Tx) error { return seed(ctx, s, tx) })
		fmt.Fprintf(os.Stderr, "seeded %s on %s in %s\n", what, target.Name, time.Since(start).Round(time.Millisecond))
	})
	if sd.err != nil {
		b.Fatal(sd.err)
	}
	return sd.s
}

var usersBench seeded

// usersBenchServer is a server with benchUsers users.
func usersBenchServer(b *testing.B) *apitest.Server {
	return usersBench.get(b, fmt.Sprintf("%d users", benchUsers), func(ctx context.Context, s *apitest.Server, tx *store.Tx) error {
		now := time.Now().UTC()
		for i := 0; i < benchUsers; i++ {
			u := model.User{Username: fmt.Sprintf("user%06d", i), Email: fmt.Sprintf("user%06d@example.com", i),
				Name: fmt.Sprintf("User %06d", (i*7919)%benchUsers), State: model.UserActive, Type: model.UserHuman,
				CanCreateGroup: true, ProjectsLimit: 100000, ThemeID: 1, ColorSchemeID: 1,
				CreatedAt: now.Add(time.Duration(i) * time.Millisecond), UpdatedAt: now}
			if err := tx.CreateUser(ctx, &u); err != nil {
				return err
			}
		}
		return nil
	})
}

// keepAlive hands a benchmark's TB to helpers that register cleanups, but
// keeps the server for the whole run: the cleanups run once every test
// and benchmark is done (stopBenchServers, from TestMain).
type keepAlive struct{ *testing.B }

var benchCleanups struct {
	mu  sync.Mutex
	fns []func()
}

func (k *keepAlive) Cleanup(f func()) {
	benchCleanups.mu.Lock()
	defer benchCleanups.mu.Unlock()
	benchCleanups.fns = append(benchCleanups.fns, f)
}

// stopBenchServers runs the kept servers' cleanups, last registered first.
func stopBenchServers() {
	benchCleanups.mu.Lock()
	fns := benchCleanups.fns
	benchCleanups.fns = nil
	benchCleanups.mu.Unlock()
	for i := len(fns) - 1; i >= 0; i-- {
		fns[i]()
	}
}
func (k *keepAlive) TempDir() string {
	d, err := os.MkdirTemp("", "quarry-bench-")
	if err != nil {
		k.Fatal(err)
	}
	return d
}

func benchGet(b *testing.B, url, token string) {
	b.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	req.Header.Set("PRIVATE-TOKEN", token)
	resp, err := benchClient.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 {
		b.Fatalf("GET %s: %d", url, resp.StatusCode)
	}
}

// walkKeyset follows rel="next" links for pages and returns the URL of the
// page after them.
func walkKeyset(b *testing.B, url, token string, pages int) string {
	for i := 0; i < pages; i++ {
		req, _ := http.NewRequest("GET", url, nil)
		req.Header.Set("PRIVATE-TOKEN", token)
		resp, err := benchClient.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		link := resp.Header.Get("Link")
		start, end := strings.Index(link, "<"), strings.Index(link, ">")
		if start < 0 || end < start {
			b.Fatalf("page %d has no next link", i)
		}
		url = link[start+1 : end]
	}
	return url
}

// BenchmarkUsersList lists users as the administrator (who gets the
// largest entity) at several depths, offset and keyset. Run with
// -cpu to vary parallel clients; RunParallel uses GOMAXPROCS×4 clients.
func BenchmarkUsersList(b *testing.B) {
	s := usersBenchServer(b)
	base := s.URL + "/api/v4/users?per_page=20"
	keysetDeep := walkKeyset(b, base+"&pagination=keyset&order_by=id&sort=desc", s.RootToken, 4000)
	keysetNameDeep := walkKeyset(b, base+"&pagination=keyset&order_by=name&sort=asc", s.RootToken, 4000)
	cases := []struct{ name, url string }{
		{"offset/page=1", base + "&page=1"},
		{"offset/page=40", base + "&page=40"},
		{"offset/page=4000", base + "&page=4000"},
		{"keyset/id/page=1", base + "&pagination=keyset&order_by=id&sort=desc"},
		{"keyset/id/page=4001", keysetDeep},
		{"keyset/name/page=1", base + "&pagination=keyset&order_by=name&sort=asc"},
		{"keyset/name/page=4001", keysetNameDeep},
		{"search", base + "&search=user09999"},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			b.SetParallelism(8)
			b.ReportAllocs()
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					benchGet(b, c.url, s.RootToken)
				}
			})
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "req/s")
		})
	}
}
