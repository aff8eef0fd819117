package e2e

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"quarry/internal/apitest"
	"quarry/internal/store"
)

// BenchmarkAlertIntake posts alerts to one HTTP integration from 32
// clients at once, as a monitoring tool's storm does: "grouped" posts one
// fingerprint (every post one more event of one alert), "distinct" a new
// fingerprint each time (every post a new alert). It reports posts per
// second, the statements a post sends and the peak heap above the start
// (the server runs in this process). QUARRY_BENCH_POSTGRES=1 with
// QUARRY_TEST_DATABASE_URL runs it on PostgreSQL.
func BenchmarkAlertIntake(b *testing.B) {
	const clients = 32
	s := apitest.Start(&keepAlive{b}, benchTarget(b), func(c *config) { c.LogLevel = "error" })
	defer s.Stop()
	owner, project := alertProject(b, s)
	in := newIntegration(b, s, owner.Token, project, map[string]any{"name": "bench"})
	client := &http.Client{Timeout: time.Minute, Transport: &http.Transport{MaxIdleConnsPerHost: clients, MaxConnsPerHost: clients}}
	var seq atomic.Int64
	for _, c := range []struct {
		name string
		body func() []byte
	}{
		{"grouped", func() []byte {
			return []byte(`{"title":"CPU above 90%","severity":"high","service":"api","hosts":["web-1"],"monitoring_tool":"bench","fingerprint":"cpu-api"}`)
		}},
		{"distinct", func() []byte {
			return []byte(fmt.Sprintf(`{"title":"CPU above 90%%","severity":"high","service":"api","hosts":["web-1"],"monitoring_tool":"bench","fingerprint":"cpu-%d"}`, seq.Add(1)))
		}},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			work := make(chan struct{}, b.N)
			for i := 0; i < b.N; i++ {
				work <- struct{}{}
			}
			close(work)
			h := startHeapPeak()
			before := store.Statements()
			start := time.Now()
			b.ResetTimer()
			var wg sync.WaitGroup
			for w := 0; w < clients; w++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for range work {
						req, _ := http.NewRequest("POST", in.URL, bytes.NewReader(c.body()))
						req.Header.Set("Authorization", "Bearer "+in.Token)
						req.Header.Set("Content-Type", "application/json")
						resp, err := client.Do(req)
						if err != nil {
							b.Error(err)
							return
						}
						_, _ = io.Copy(io.Discard, resp.Body)
						resp.Body.Close()
						if resp.StatusCode != http.StatusOK {
							b.Errorf("status %d", resp.StatusCode)
							return
						}
					}
				}()
			}
			wg.Wait()
			b.StopTimer()
			secs := time.Since(start).Seconds()
			b.ReportMetric(float64(b.N)/secs, "posts/s")
			b.ReportMetric(float64(store.Statements()-before)/float64(b.N), "stmts/op")
			b.ReportMetric(h.MiB(), "heap-MiB")
			b.ReportMetric(h.RetainedMiB(), "retained-MiB")
		})
	}
}
