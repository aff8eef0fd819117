// Command load drives GET requests at a Quarry server from many clients
// and reports throughput and latency percentiles; with -pid it also
// reports the server's peak resident memory while the load ran.
//
//	go run ./tools/load -c 32 -d 10s -token $TOKEN -pid $(pgrep quarry) URL [URL…]
//
// Requests cycle through the URLs. The resident memory is the process's
// with its children's (the warm git processes it keeps count too).
//
//	go run ./tools/load seed -token $TOKEN URL   # the data set (seed.go)
//	go run ./tools/load rss PID                  # resident memory now
//	go run ./tools/load baseline                 # the machine's limits (baseline.go)
package main

import (
	"bytes"
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
	if len(os.Args) > 1 {
		switch os.Args[1] {
		case "seed":
			seed(os.Args[2:])
			return
		case "baseline":
			baseline(os.Args[2:])
			return
		case "rss":
			pid, err := strconv.Atoi(strings.Join(os.Args[2:], ""))
			if err != nil {
				fmt.Fprintln(os.Stderr, "usage: load rss PID")
				os.Exit(2)
			}
			fmt.Printf("RSS %.1f MiB (the process %.1f MiB, its children the rest)\n", float64(treeRSSKB(pid))/1024, float64(rssKB(pid))/1024)
			return
		}
	}
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
				if kb := treeRSSKB(*pid); kb > peak.Load() {
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

// treeRSSKB is the resident set size of a process and of every process
// below it.
func treeRSSKB(pid int) int64 {
	children := map[int][]int{}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		child, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// pid (comm) state ppid …: comm may hold spaces and parentheses.
		rest := string(b[bytes.LastIndexByte(b, ')')+1:])
		if f := strings.Fields(rest); len(f) > 1 {
			if ppid, err := strconv.Atoi(f[1]); err == nil {
				children[ppid] = append(children[ppid], child)
			}
		}
	}
	total := int64(0)
	for todo := []int{pid}; len(todo) > 0; {
		p := todo[len(todo)-1]
		todo = append(todo[:len(todo)-1], children[p]...)
		total += rssKB(p)
	}
	return total
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
