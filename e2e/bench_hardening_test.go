package e2e

import (
	"fmt"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"quarry/internal/apitest"
)

// BenchmarkHostileBodies sends, per iteration, 8 concurrent 99 MB bodies
// from callers without credentials — JSON to POST /projects and a
// 20-million-element array to the runner registration — while a client
// reads /version as fast as it can. It reports the process's resident
// memory growth at its peak (the whole test process: the server runs in
// it) and /version's p99 during the attack. Bodies from unknown callers
// are refused unread, so memory stays flat and /version fast.
func BenchmarkHostileBodies(b *testing.B) {
	s := apitest.Start(&keepAlive{b}, benchTarget(b))
	const size, attackers = 99 << 20, 8
	heads := []string{
		fmt.Sprintf("POST /api/v4/projects HTTP/1.1\r\nHost: q\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", size),
		fmt.Sprintf("POST /api/v4/runners HTTP/1.1\r\nHost: q\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", size),
	}
	base := residentBytes(b)
	var peak int64
	var lat []time.Duration
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { // the peak of resident memory
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			case <-time.After(5 * time.Millisecond):
				peak = max(peak, residentBytes(b)-base)
			}
		}
	}()
	go func() { // /version meanwhile
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			start := time.Now()
			req, _ := http.NewRequest("GET", s.URL+"/api/v4/version", nil)
			req.Header.Set("PRIVATE-TOKEN", s.RootToken)
			res, err := benchClient.Do(req)
			if err == nil {
				res.Body.Close()
				lat = append(lat, time.Since(start))
			}
		}
	}()
	b.ResetTimer()
	for range b.N {
		var aw sync.WaitGroup
		for i := range attackers {
			aw.Add(1)
			go func() {
				defer aw.Done()
				status, _, sent := rawPost(b, s, heads[i%2], size, '[')
				if !strings.HasPrefix(status, "401") && !strings.HasPrefix(status, "413") {
					b.Errorf("hostile body answered %q", status)
				}
				if sent > 32<<20 {
					b.Errorf("the server took %d MiB of a hostile body", sent>>20)
				}
			}()
		}
		aw.Wait()
	}
	b.StopTimer()
	close(stop)
	wg.Wait()
	slices.Sort(lat)
	p99 := time.Duration(0)
	if len(lat) > 0 {
		p99 = lat[len(lat)*99/100]
	}
	b.ReportMetric(float64(peak)/(1<<20), "MiB-rss-growth")
	b.ReportMetric(float64(p99.Microseconds())/1000, "ms-version-p99")
	b.ReportMetric(float64(b.N*attackers)/b.Elapsed().Seconds(), "bodies/s")
}

// residentBytes is this process's resident set size.
func residentBytes(b *testing.B) int64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		b.Fatal(err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			return kb << 10
		}
	}
	b.Fatal("no VmRSS in /proc/self/status")
	return 0
}
