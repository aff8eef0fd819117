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
)

// BenchmarkErrorTrackingCollector sends Sentry envelopes (one event with
// a 30-frame stack trace, about 3 KiB, as an SDK sends them) from 32
// clients to the collector, all into one error: each is a key lookup, an
// upsert-and-increment of the error and an insert of the event. It
// reports events per second and the peak heap above the start (the
// server runs in this process). QUARRY_BENCH_POSTGRES=1 with
// QUARRY_TEST_DATABASE_URL runs it on PostgreSQL.
func BenchmarkErrorTrackingCollector(b *testing.B) {
	const clients = 32
	s := apitest.Start(&keepAlive{b}, benchTarget(b), func(c *config) { c.LogLevel = "error" })
	p := s.Do(b, apitest.Request{Method: "POST", Path: "/projects", Token: s.RootToken,
		JSON: map[string]any{"name": "bench-errors", "visibility": "private"}}).Want(b, http.StatusCreated).Object(b)
	id := int64(p["id"].(float64))
	base := "/projects/" + itoa(id) + "/error_tracking"
	s.Do(b, apitest.Request{Method: "PUT", Path: base + "/settings", Token: s.RootToken,
		JSON: map[string]any{"active": true, "integrated": true}}).Want(b, http.StatusOK)
	key := s.Do(b, apitest.Request{Method: "POST", Path: base + "/client_keys", Token: s.RootToken}).Want(b, http.StatusCreated).Object(b)

	var frames bytes.Buffer
	for i := range 30 {
		if i > 0 {
			frames.WriteString(",")
		}
		fmt.Fprintf(&frames, `{"function":"handler%d","module":"github.com/acme/app/internal/server","filename":"server.go","lineno":%d,"abs_path":"/src/app/internal/server/server.go","in_app":true}`, i, 100+i)
	}
	event := fmt.Sprintf(`{"event_id":"9ec79c33ec9942ab8353589fcb2e04dc","platform":"go","level":"error","environment":"production","release":"v1.0.0",
		"timestamp":"2026-01-02T03:04:05Z","exception":{"values":[{"type":"*net.OpError","value":"dial tcp 10.0.0.1:5432: connect: connection refused",
		"stacktrace":{"frames":[%s]}}]}}`, frames.String())
	body := []byte(envelope("event", event))
	url := fmt.Sprintf("%s/api/v4/error_tracking/collector/api/%d/envelope/", s.URL, id)
	auth := "Sentry sentry_version=7, sentry_client=sentry.go/0.46.2, sentry_key=" + key["public_key"].(string)
	client := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: clients}}
	defer client.CloseIdleConnections()

	heap := startHeapPeak()
	var next atomic.Int64
	var failed atomic.Value
	var wg sync.WaitGroup
	b.ResetTimer()
	for range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for next.Add(1) <= int64(b.N) {
				req, _ := http.NewRequest("POST", url, bytes.NewReader(body))
				req.Header.Set("Content-Type", "application/x-sentry-envelope")
				req.Header.Set("X-Sentry-Auth", auth)
				resp, err := client.Do(req)
				if err != nil {
					failed.Store(err.Error())
					return
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					failed.Store(resp.Status)
					return
				}
			}
		}()
	}
	wg.Wait()
	b.StopTimer()
	if v := failed.Load(); v != nil {
		b.Fatal(v)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
	b.ReportMetric(heap.MiB(), "heap-MiB")
	b.ReportMetric(heap.RetainedMiB(), "retained-MiB")
	errs := s.Get(b, base+"/errors", s.RootToken).Want(b, http.StatusOK).Array(b)
	if len(errs) != 1 || errs[0]["count"].(float64) < float64(b.N) {
		b.Fatalf("errors after %d events: %v", b.N, errs)
	}
}
