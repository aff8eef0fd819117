package e2e

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"quarry/internal/apitest"
	"quarry/internal/app"
	"quarry/internal/ci"
	cfgpkg "quarry/internal/config"
	"quarry/internal/model"
	"quarry/internal/storetest"
)

// The environment that turns the e2e test binary into a second Quarry
// process (TestMain runs ciChild instead of the tests): the database and
// the data folder it shares with the test's server.
const (
	ciChildDB  = "QUARRY_CI_CHILD_DATABASE_URL"
	ciChildDir = "QUARRY_CI_CHILD_DATA_DIR"
	// ciChildStorages are the child's --storages; with it set, the child
	// cleans up after storage moves at once and logs (JSON, level info)
	// to its stderr.
	ciChildStorages = "QUARRY_CI_CHILD_STORAGES"
)

// ciChild is the second process: a whole Quarry (its own pool, task
// workers and notification listener) on the shared database and data
// folder, driving job outcomes as the parent tells it on stdin, one
// command a line:
//
//	finish <id>…   finish each job once, eight at a time; answers "won <id>"
//	               for each finish that moved its job, then "done"
//	listen         serve the API on a free local port; answers
//	               "listening <url>", then "done"
//	drive <id>…    take and finish the release jobs of these pipelines as
//	               their resource group hands them out, until all are done;
//	               answers "done"
//
// It stops at the end of stdin.
func ciChild() int {
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	cfg := cfgpkg.Default()
	cfg.DataDir, cfg.DatabaseURL = os.Getenv(ciChildDir), os.Getenv(ciChildDB)
	if st := os.Getenv(ciChildStorages); st != "" {
		cfg.Storages, cfg.StorageMoveCleanupDelay = st, 50*time.Millisecond
		logger = slog.New(slog.NewJSONHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	}
	cfg.PasswordCost, cfg.TaskLease = 4, 2*time.Second
	ctx := context.Background()
	a, err := app.New(ctx, cfg, logger)
	if err != nil {
		fmt.Fprintln(os.Stderr, "child:", err)
		return 1
	}
	defer a.Close()
	fmt.Println("ready")
	sc := bufio.NewScanner(os.Stdin)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) == 0 {
			continue
		}
		var ids []int64
		for _, f := range fields[1:] {
			id, _ := strconv.ParseInt(f, 10, 64)
			ids = append(ids, id)
		}
		switch fields[0] {
		case "finish":
			for _, id := range finishRace(ctx, a.CI, ids) {
				fmt.Println("won", id)
			}
		case "listen":
			// Serve the API too (answers "listening <url>"), until the
			// end of stdin.
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				fmt.Fprintln(os.Stderr, "child:", err)
				return 1
			}
			srv := &http.Server{Handler: a.Handler, ReadHeaderTimeout: 10 * time.Second}
			go srv.Serve(ln)
			defer srv.Close()
			fmt.Println("listening", "http://"+ln.Addr().String())
		case "drive":
			if err := driveReleases(ctx, a, ids); err != nil {
				fmt.Fprintln(os.Stderr, "child:", err)
				return 1
			}
		}
		fmt.Println("done")
	}
	return 0
}

// finishRace finishes each job once, eight at a time, and returns the
// jobs whose finish moved them (another process may win the others).
func finishRace(ctx context.Context, svc *ci.Service, ids []int64) []int64 {
	var mu sync.Mutex
	var won []int64
	work := make(chan int64)
	var wg sync.WaitGroup
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for id := range work {
				if _, err := svc.Finish(ctx, id, ci.Outcome{Status: model.StatusSuccess}); err == nil {
					mu.Lock()
					won = append(won, id)
					mu.Unlock()
				}
			}
		}()
	}
	for _, id := range ids {
		work <- id
	}
	close(work)
	wg.Wait()
	return won
}

// driveReleases takes and finishes the release jobs of the pipelines as
// they become pending, until every one is done (at most a minute).
func driveReleases(ctx context.Context, a *app.App, pipelines []int64) error {
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		done := 0
		for _, pid := range pipelines {
			jobs, err := a.DB.PipelineJobs(ctx, pid, false)
			if err != nil {
				return err
			}
			for _, j := range jobs {
				switch {
				case j.Name != "release":
				case j.Status.Completed():
					done++
				case j.Status == model.StatusPending:
					if _, err := a.CI.Start(ctx, j.ID); err != nil {
						continue // the other process took it
					}
					if _, err := a.CI.Finish(ctx, j.ID, ci.Outcome{Status: model.StatusSuccess}); err != nil {
						return err
					}
				}
			}
		}
		if done == len(pipelines) {
			return nil
		}
	}
	return fmt.Errorf("release jobs not done after a minute")
}

// childProcess is a running ciChild.
type childProcess struct {
	in     io.WriteCloser
	lines  chan string
	stderr *syncBuffer
}

// syncBuffer is a buffer the child's stderr is copied into while a test
// reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// startChild starts the second Quarry process on the server's database and
// data folder; it stops when the test ends.
func startChild(t *testing.T, target storetest.Target, dir string, env ...string) *childProcess {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(append(os.Environ(), ciChildDB+"="+target.DatabaseURL, ciChildDir+"="+dir), env...)
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	c := &childProcess{in: in, lines: make(chan string, 1024), stderr: &syncBuffer{}}
	cmd.Stderr = c.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			c.lines <- sc.Text()
		}
		close(c.lines)
		exited <- cmd.Wait()
	}()
	t.Cleanup(func() {
		in.Close()
		select {
		case err := <-exited:
			if err != nil {
				t.Errorf("second process: %v\n%s", err, c.stderr)
			}
		case <-time.After(30 * time.Second):
			cmd.Process.Kill()
			<-exited
			t.Errorf("second process did not stop within 30s\n%s", c.stderr)
		}
	})
	if line := c.next(t, time.Minute); line != "ready" {
		t.Fatalf("second process: %q\n%s", line, c.stderr)
	}
	return c
}

// next is the child's next line of output.
func (c *childProcess) next(t *testing.T, within time.Duration) string {
	t.Helper()
	select {
	case line, ok := <-c.lines:
		if !ok {
			t.Fatalf("second process ended\n%s", c.stderr)
		}
		return line
	case <-time.After(within):
		t.Fatalf("second process silent for %v\n%s", within, c.stderr)
	}
	return ""
}

// send gives the child a command; answers collects what it says.
func (c *childProcess) send(t *testing.T, verb string, ids []int64) {
	t.Helper()
	parts := []string{verb}
	for _, id := range ids {
		parts = append(parts, strconv.FormatInt(id, 10))
	}
	if _, err := fmt.Fprintln(c.in, strings.Join(parts, " ")); err != nil {
		t.Fatal(err)
	}
}

// answers collects the child's "won" lines until "done".
func (c *childProcess) answers(t *testing.T) []int64 {
	t.Helper()
	var won []int64
	for {
		line := c.next(t, 2*time.Minute)
		if line == "done" {
			return won
		}
		if rest, ok := strings.CutPrefix(line, "won "); ok {
			id, _ := strconv.ParseInt(rest, 10, 64)
			won = append(won, id)
		}
	}
}

// TestPipelines_twoProcessesSharePostgres: two Quarry processes on one
// PostgreSQL database and data folder. Both try to finish every job of a
// 60-job stage at once: each job is finished by exactly one of them, and
// the pipeline moves on right. Then both drive the release jobs of nine
// pipelines through one resource group: no two ever hold it at once.
func TestPipelines_twoProcessesSharePostgres(t *testing.T) {
	t.Parallel()
	onSharedPostgres(t, func(t *testing.T, target storetest.Target, dir string) {
		s := apitest.StartIn(t, target, dir)
		child := startChild(t, target, dir)
		owner := s.NewUser(t, "owner")
		const n = 60
		p := newCIProject(t, s, owner, "procs", map[string]string{".gitlab-ci.yml": parallelWork(n) +
			"release: {stage: deploy, script: [x], resource_group: prod, needs: []}\n"})
		p.settle(t, 1)
		push := p.pipelines(t, "source=push")[0]
		s.Do(t, apitest.Request{Method: "POST", Path: fmt.Sprintf("/projects/%d/pipelines/%d/cancel", p.ID, push.ID),
			Token: owner.Token}).Want(t, 200)
		pl := p.createPipeline(t, "main")
		var ids []int64
		for _, j := range p.ownJobs(t, pl.ID) {
			if strings.HasPrefix(j.Name, "work ") {
				if _, err := engine(s).Start(ctx(t), j.ID); err != nil {
					t.Fatal(err)
				}
				ids = append(ids, j.ID)
			}
		}
		// Both processes try every job at once.
		child.send(t, "finish", ids)
		mine := finishRace(ctx(t), engine(s), ids)
		theirs := child.answers(t)
		wins := map[int64]int{}
		for _, id := range append(mine, theirs...) {
			wins[id]++
		}
		for _, id := range ids {
			if wins[id] != 1 {
				t.Fatalf("job %d finished %d times across the two processes; want once", id, wins[id])
			}
		}
		t.Logf("finishes won: %d by this process, %d by the second", len(mine), len(theirs))
		for _, j := range p.ownJobs(t, pl.ID) {
			if want := map[bool]string{true: "success", false: "pending"}[strings.HasPrefix(j.Name, "work ")]; j.Name != "release" && j.Status != want {
				t.Fatalf("job %s %s; want %s", j.Name, j.Status, want)
			}
		}
		if st := p.pipeline(t, pl.ID).Status; st != "running" {
			t.Fatalf("pipeline %s; want running", st)
		}

		for i := 0; i < 8; i++ {
			p.createPipeline(t, "main")
		}
		pipelines := projectPipelineIDs(t, p)
		child.send(t, "drive", pipelines)
		driveResourceGroup(t, []*apitest.Server{s}, p.ID, pipelines)
		child.answers(t)
	})
}

// A build made pending by another Quarry process on the same PostgreSQL
// wakes a runner long-polling here at once (LISTEN/NOTIFY), long before
// its long poll would end.
func TestRunners_wokenByAnotherProcess(t *testing.T) {
	t.Parallel()
	onSharedPostgres(t, func(t *testing.T, target storetest.Target, dir string) {
		s := apitest.StartIn(t, target, dir, func(c *config) { c.RunnerLongPoll = 30 * time.Second })
		child := startChild(t, target, dir)
		owner := s.NewUser(t, "wakeowner")
		p := newCIProject(t, s, owner, "wake", map[string]string{".gitlab-ci.yml": "stages: [a, b]\nfirst:\n  stage: a\n  script: [x]\n" +
			"second:\n  stage: b\n  script: [y]\n"})
		p.settle(t, 1)
		pl := p.pipelines(t, "source=push")[0]
		first := p.job(t, pl.ID, "first")
		if _, err := engine(s).Start(ctx(t), first.ID); err != nil {
			t.Fatal(err)
		}
		r := projectRunner(t, p, nil)
		version := r.request(t, "").Want(t, http.StatusNoContent).Header.Get("X-Gitlab-Last-Update")
		got := make(chan *apitest.Response, 1)
		go func() { got <- r.request(t, version) }()
		time.Sleep(200 * time.Millisecond) // parked
		start := time.Now()
		child.send(t, "finish", []int64{first.ID})
		select {
		case res := <-got:
			var job payloadJSON
			res.Want(t, http.StatusCreated).JSON(t, &job)
			if job.JobInfo.Name != "second" {
				t.Errorf("woken runner got %s", job.JobInfo.Name)
			}
			t.Logf("woken %v after the other process's finish", time.Since(start).Round(time.Millisecond))
		case <-time.After(10 * time.Second):
			t.Fatal("the parked runner was not woken by the other process")
		}
		child.answers(t)
	})
}
