// Command load drives GET requests at a Quarry server from many clients
// and reports throughput and latency percentiles; with -pid it also
// reports the server's peak resident memory while the load ran.
//
//	go run ./tools/load -c 32 -d 10s -token $TOKEN -pid $(pgrep quarry) URL [URL…]
//
// Requests cycle through the URLs.
package main

import (
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

func main() {
	clients := flag.Int("c", 32, "concurrent clients")
	duration := flag.Duration("d", 10*time.Second, "how long to run")
	token := flag.String("token", "", "PRIVATE-TOKEN to send")
	pid := flag.Int("pid", 0, "server process whose peak RSS to report")
	flag.Parse()
	urls := flag.Args()
	if len(urls) == 0 {
		fmt.Fprintln(os.Stderr, "usage: load [-c N] [-d D] [-token T] [-pid P] URL [URL…]")
		os.Exit(2)
	}
	client := &http.Client{Transport: &http.Transport{MaxIdleConns: *clients, MaxIdleConnsPerHost: *clients}}
	var next, failed atomic.Int64
	var mu sync.Mutex
	var lat []time.Duration
	var peak atomic.Int64
	done := make(chan struct{})
	if *pid > 0 {
		go func() {
			for {
				if kb := rssKB(*pid); kb > peak.Load() {
					peak.Store(kb)
				}
				select {
				case <-done:
					return
				case <-time.After(50 * time.Millisecond):
				}
			}
		}()
	}
	deadline := time.Now().Add(*duration)
	var wg sync.WaitGroup
	for i := 0; i < *clients; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var mine []time.Duration
			for time.Now().Before(deadline) {
				u := urls[int(next.Add(1))%len(urls)]
				req, _ := http.NewRequest("GET", u, nil)
				if *token != "" {
					req.Header.Set("PRIVATE-TOKEN", *token)
				}
				start := time.Now()
				resp, err := client.Do(req)
				if err == nil {
					_, err = io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					if resp.StatusCode != http.StatusOK {
						err = fmt.Errorf("status %d", resp.StatusCode)
					}
				}
				if err != nil {
					failed.Add(1)
					continue
				}
				mine = append(mine, time.Since(start))
			}
			mu.Lock()
			lat = append(lat, mine...)
			mu.Unlock()
		}()
	}
	wg.Wait()
	close(done)
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	pct := func(p float64) time.Duration {
		if len(lat) == 0 {
			return 0
		}
		return lat[int(float64(len(lat)-1)*p)]
	}
	fmt.Printf("%d requests, %d failed, %.0f req/s, p50 %s, p90 %s, p99 %s\n", len(lat), failed.Load(),
		float64(len(lat))/duration.Seconds(), pct(0.5).Round(time.Microsecond), pct(0.9).Round(time.Microsecond), pct(0.99).Round(time.Microsecond))
	if *pid > 0 {
		fmt.Printf("server peak RSS %.1f MiB\n", float64(peak.Load())/1024)
	}
}

// rssKB reads a process's resident set size from /proc.
func rssKB(pid int) int64 {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			n, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return n
		}
	}
	return 0
}
