package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"os"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"quarry/internal/apitest"
	"quarry/internal/model"
	"quarry/internal/runner"
	"quarry/internal/store"
	"quarry/internal/storetest"
)

// BenchmarkRunnerWake measures how long a job made pending takes to reach
// a runner that is long-polling for one: from the call that plays a
// manual job to the runner's 201, with 1 and with 50 runners parked.
// Reported: mean (ns/op), p50 and p99 in ms.
func BenchmarkRunnerWake(b *testing.B) {
	for _, n := range []int{1, 50} {
		b.Run(fmt.Sprintf("runners=%d", n), func(b *testing.B) { benchWake(b, n) })
	}
}

func benchWake(b *testing.B, n int) {
	s := apitest.Start(&keepAlive{b}, benchTarget(b), func(c *config) { c.RunnerLongPoll = time.Minute })
	defer s.Stop()
	owner := apitest.User{ID: s.RootID(b), Username: "root", Token: s.RootToken}
	project := newBenchProject(b, s, owner, map[string]string{".gitlab-ci.yml": "manual:\n  when: manual\n  parallel: 100\n  script: [\"true\"]\n"})
	var pl []pipelineJSON
	for deadline := time.Now().Add(10 * time.Second); len(pl) == 0; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			b.Fatal("no push pipeline")
		}
		s.Get(b, fmt.Sprintf("/projects/%d/pipelines", project), s.RootToken).JSON(b, &pl)
	}
	var runner struct{ Token string }
	s.Do(b, apitest.Request{Method: "POST", Path: "/user/runners", Token: s.RootToken,
		JSON: map[string]any{"runner_type": "project_type", "project_id": project}}).Want(b, http.StatusCreated).JSON(b, &runner)
	manualJobs := func(pipelineID int64) []jobJSON {
		var jobs []jobJSON
		s.Get(b, fmt.Sprintf("/projects/%d/pipelines/%d/jobs?per_page=100&scope=manual", project, pipelineID), s.RootToken).JSON(b, &jobs)
		return jobs
	}
	jobs := manualJobs(pl[0].ID)

	// The runners park with the current queue version; each one that gets
	// a job hands it to got and parks again.
	got := make(chan time.Time, 1)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	client := &http.Client{}
	version := func(last string) (int, string) {
		body, _ := json.Marshal(map[string]any{"token": runner.Token, "last_update": last,
			"info": map[string]any{"features": map[string]bool{"upload_multiple_artifacts": true}}})
		res, err := client.Post(s.URL+"/api/v4/jobs/request", "application/json", bytes.NewReader(body))
		if err != nil {
			return 0, last
		}
		_, _ = io.Copy(io.Discard, res.Body)
		res.Body.Close()
		return res.StatusCode, res.Header.Get("X-Gitlab-Last-Update")
	}
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			last := ""
			for {
				select {
				case <-stop:
					return
				default:
				}
				code, v := version(last)
				switch code {
				case http.StatusCreated:
					got <- time.Now()
				case http.StatusNoContent:
					last = v
				}
			}
		}()
	}
	time.Sleep(200 * time.Millisecond) // every runner parked
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if len(jobs) == 0 {
			// Every manual job played: a new pipeline brings 100 more.
			b.StopTimer()
			var npl pipelineJSON
			s.Do(b, apitest.Request{Method: "POST", Path: fmt.Sprintf("/projects/%d/pipeline", project), Token: s.RootToken,
				JSON: map[string]any{"ref": "main"}}).Want(b, http.StatusCreated).JSON(b, &npl)
			jobs = manualJobs(npl.ID)
			b.StartTimer()
		}
		job := jobs[0]
		jobs = jobs[1:]
		start := time.Now()
		s.Do(b, apitest.Request{Method: "POST", Path: fmt.Sprintf("/projects/%d/jobs/%d/play", project, job.ID), Token: s.RootToken}).
			Want(b, http.StatusOK)
		select {
		case at := <-got:
			lat = append(lat, at.Sub(start))
		case <-time.After(10 * time.Second):
			b.Fatal("no runner got the job within 10s")
		}
	}
	b.StopTimer()
	close(stop)
	s.App.StopRunnerQueue()
	wg.Wait()
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	b.ReportMetric(ms(lat[len(lat)/2]), "p50-ms")
	b.ReportMetric(ms(lat[len(lat)*99/100]), "p99-ms")
}

// BenchmarkArtifact200MB uploads a 200 MB artifact through the runner
// protocol and downloads it through the API: the server streams both, so
// the heap does not grow with the file. Reported: the peak growth of the
// heap in use (heap-MB) and all bytes allocated (alloc-MB) by the whole
// process (server and client) per round trip.
func BenchmarkArtifact200MB(b *testing.B) {
	const size = 200 << 20
	s := apitest.Start(&keepAlive{b}, storetest.Target{Name: "sqlite"})
	defer s.Stop()
	owner := apitest.User{ID: s.RootID(b), Username: "root", Token: s.RootToken}
	project := newBenchProject(b, s, owner, map[string]string{".gitlab-ci.yml": "big:\n  script: [\"true\"]\n"})
	var runner struct{ Token string }
	s.Do(b, apitest.Request{Method: "POST", Path: "/user/runners", Token: s.RootToken,
		JSON: map[string]any{"runner_type": "project_type", "project_id": project}}).Want(b, http.StatusCreated).JSON(b, &runner)
	// The instance allows artifacts of the size.
	s.Do(b, apitest.Request{Method: "PUT", Path: "/application/settings", Token: s.RootToken,
		JSON: map[string]any{"max_artifacts_size": 1024}}).Want(b, 200)
	b.ResetTimer()
	var peak, alloc uint64
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		if i > 0 {
			s.Do(b, apitest.Request{Method: "POST", Path: fmt.Sprintf("/projects/%d/pipeline", project), Token: s.RootToken,
				JSON: map[string]any{"ref": "main"}}).Want(b, http.StatusCreated)
		}
		var job payloadJSON
		for deadline := time.Now().Add(10 * time.Second); job.ID == 0; {
			if time.Now().After(deadline) {
				b.Fatal("no job")
			}
			res := s.Do(b, apitest.Request{Method: "POST", Path: "/jobs/request", JSON: map[string]any{"token": runner.Token}})
			if res.Status == http.StatusCreated {
				res.JSON(b, &job)
			}
		}
		b.StartTimer()
		p, a := heapDuring(func() {
			// Upload: a multipart body written as it is sent.
			pr, pw := io.Pipe()
			mw := multipart.NewWriter(pw)
			go func() {
				fw, err := mw.CreateFormFile("file", "artifacts.zip")
				if err == nil {
					_, err = io.CopyN(fw, zeroReader{}, size)
				}
				if err == nil {
					err = mw.Close()
				}
				pw.CloseWithError(err)
			}()
			req, _ := http.NewRequest("POST", fmt.Sprintf("%s/api/v4/jobs/%d/artifacts?artifact_type=archive", s.URL, job.ID), pr)
			req.Header.Set("Content-Type", mw.FormDataContentType())
			req.Header.Set("JOB-TOKEN", job.Token)
			res, err := http.DefaultClient.Do(req)
			if err != nil || res.StatusCode != http.StatusCreated {
				b.Fatalf("upload: %v %v", err, res)
			}
			res.Body.Close()
			// Download.
			req, _ = http.NewRequest("GET", fmt.Sprintf("%s/api/v4/projects/%d/jobs/%d/artifacts", s.URL, project, job.ID), nil)
			req.Header.Set("PRIVATE-TOKEN", s.RootToken)
			res, err = http.DefaultClient.Do(req)
			if err != nil || res.StatusCode != http.StatusOK {
				b.Fatalf("download: %v %v", err, res)
			}
			n, _ := io.Copy(io.Discard, res.Body)
			res.Body.Close()
			if n != size {
				b.Fatalf("downloaded %d bytes of %d", n, size)
			}
		})
		peak, alloc = max(peak, p), max(alloc, a)
		b.StopTimer()
		s.Do(b, apitest.Request{Method: "PUT", Path: fmt.Sprintf("/jobs/%d", job.ID), JSON: map[string]any{"token": job.Token, "state": "success"}}).
			Want(b, http.StatusOK)
		b.StartTimer()
	}
	b.ReportMetric(float64(peak)/(1<<20), "heap-MB")
	b.ReportMetric(float64(alloc)/(1<<20), "alloc-MB")
	b.SetBytes(2 * size)
}

// heapDuring runs f and reports how far the heap in use rose above where
// it started (sampled every millisecond) and the bytes allocated.
func heapDuring(f func()) (peak, alloc uint64) {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	done := make(chan struct{})
	var sampled sync.WaitGroup
	sampled.Add(1)
	go func() {
		defer sampled.Done()
		var m runtime.MemStats
		for {
			select {
			case <-done:
				return
			case <-time.After(time.Millisecond):
				runtime.ReadMemStats(&m)
				if m.HeapInuse > before.HeapInuse && m.HeapInuse-before.HeapInuse > peak {
					peak = m.HeapInuse - before.HeapInuse
				}
			}
		}
	}()
	f()
	close(done)
	sampled.Wait()
	runtime.ReadMemStats(&after)
	return peak, after.TotalAlloc - before.TotalAlloc
}

// zeroReader reads zeros.
type zeroReader struct{}

func (zeroReader) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

// BenchmarkQuarryRunner1000Jobs runs a pipeline of 1,000 trivial jobs
// (script: "true") through quarry runner taking 8 jobs at once, from the
// pipeline's creation to its success, and checks every job ran exactly
// once. Reported: jobs/s.
func BenchmarkQuarryRunner1000Jobs(b *testing.B) {
	n := runnerBenchJobs()
	var ci strings.Builder
	for i := range n {
		fmt.Fprintf(&ci, "j%d:\n  script: [\"true\"]\n", i)
	}
	s := apitest.Start(&keepAlive{b}, benchTarget(b))
	defer s.Stop()
	owner := apitest.User{ID: s.RootID(b), Username: "root", Token: s.RootToken}
	// The configuration lives on a branch the push pipeline does not run
	// (the benchmark's pipelines are made through the API).
	project := newBenchProject(b, s, owner, map[string]string{"bench.txt": "bench\n"})
	s.Do(b, apitest.Request{Method: "POST", Path: fmt.Sprintf("/projects/%d/repository/commits", project), Token: s.RootToken,
		JSON: map[string]any{"branch": "bench", "start_branch": "main", "commit_message": "ci",
			"actions": []map[string]any{{"action": "create", "file_path": ".gitlab-ci.yml", "content": ci.String()}}}}).Want(b, http.StatusCreated)
	var reg struct{ Token string }
	s.Do(b, apitest.Request{Method: "POST", Path: "/user/runners", Token: s.RootToken,
		JSON: map[string]any{"runner_type": "project_type", "project_id": project}}).Want(b, http.StatusCreated).JSON(b, &reg)
	cfg, err := runner.Register(context.Background(), runner.RegisterOptions{URL: s.URL, Token: reg.Token, BuildsDir: b.TempDir(), Concurrent: 8})
	if err != nil {
		b.Fatal(err)
	}
	rctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- runner.Run(rctx, cfg, nil) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			b.Error(err)
		}
	}()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		var pl pipelineJSON
		s.Do(b, apitest.Request{Method: "POST", Path: fmt.Sprintf("/projects/%d/pipeline", project), Token: s.RootToken,
			JSON: map[string]any{"ref": "bench"}}).Want(b, http.StatusCreated).JSON(b, &pl)
		for deadline := time.Now().Add(5 * time.Minute); ; time.Sleep(50 * time.Millisecond) {
			s.Get(b, fmt.Sprintf("/projects/%d/pipelines/%d", project, pl.ID), s.RootToken).JSON(b, &pl)
			if pl.Status == "success" {
				break
			}
			if pl.Status == "failed" || pl.Status == "canceled" || time.Now().After(deadline) {
				b.Fatalf("pipeline %d: %s", pl.ID, pl.Status)
			}
		}
		b.StopTimer()
		// Each job ran once: 1,000 jobs, none retried, each taken by the
		// runner and succeeded.
		jobs, _, err := s.App.DB.Jobs(context.Background(), store.JobFilter{ProjectID: project, PipelineIDs: []int64{pl.ID}, Retried: true},
			model.Page{Number: 1, PerPage: 2 * n})
		if err != nil {
			b.Fatal(err)
		}
		if len(jobs) != n {
			b.Fatalf("%d jobs; want %d", len(jobs), n)
		}
		for _, j := range jobs {
			if j.Status != model.StatusSuccess || j.Retried || j.RunnerID == 0 {
				b.Fatalf("job %s: %s retried=%v runner=%d", j.Name, j.Status, j.Retried, j.RunnerID)
			}
		}
		b.StartTimer()
	}
	b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "jobs/s")
}

// runnerBenchJobs is the size of BenchmarkQuarryRunner1000Jobs's pipeline
// (QUARRY_BENCH_JOBS changes it when profiling).
func runnerBenchJobs() int {
	if v, err := strconv.Atoi(os.Getenv("QUARRY_BENCH_JOBS")); err == nil && v > 0 {
		return v
	}
	return 1000
}

// benchTarget is SQLite, or PostgreSQL with QUARRY_BENCH_POSTGRES set.
func benchTarget(b *testing.B) storetest.Target {
	if os.Getenv("QUARRY_BENCH_POSTGRES") != "" {
		return storetest.Target{Name: "postgres", DatabaseURL: storetest.NewPostgresDatabase(&keepAlive{b})}
	}
	return storetest.Target{Name: "sqlite"}
}
