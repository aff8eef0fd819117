// Package runner is Quarry's CI runner: a client of GitLab's public runner
// protocol (/api/v4/runners, /api/v4/jobs), speaking what the official
// gitlab-runner speaks with its shell executor, so it works against Quarry
// and against GitLab. It knows nothing of Quarry's insides.
//
// A runner registers once (Register: a registration token buys a runner
// token, or a glrt- token is verified), keeps the answer in a Config, and
// then Run takes jobs: each worker long-polls POST /jobs/request; a job is
// fetched with git into <builds_dir>/<job id>, its dependencies' archives
// unpacked there, its steps run by bash with the job's variables, its log
// masked and streamed with PATCH /jobs/:id/trace, its artifacts uploaded,
// and its end reported with PUT /jobs/:id.
package runner

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"quarry/internal/git"
)

// RegisterOptions are the inputs of Register, as `quarry runner register`
// takes them.
type RegisterOptions struct {
	URL string
	// Token is either a runner authentication token (glrt-…, made on the
	// server beforehand), which is verified, or a registration token,
	// which buys a new runner.
	Token string
	// Description, Tags, RunUntagged and Locked describe a new runner
	// (registration token only; a glrt- runner was described when it was
	// made).
	Description string
	Tags        []string
	RunUntagged bool
	Locked      bool
	// BuildsDir and Concurrent (default 1) are copied into the Config.
	BuildsDir  string
	Concurrent int
	// SystemID names this machine; empty makes a new one. Keep the one of
	// an earlier config of the same machine.
	SystemID          string
	Version, Revision string
	HTTPClient        *http.Client
}

// Register makes this machine a runner of the server at o.URL and returns
// its Config, not yet saved (SaveConfig). A token starting "glrt-" is
// checked with POST /runners/verify (200); any other token is a
// registration token for POST /runners (201), whose answer holds the new
// runner's token.
func Register(ctx context.Context, o RegisterOptions) (Config, error) {
	cfg := Config{URL: o.URL, SystemID: o.SystemID, Description: o.Description, BuildsDir: o.BuildsDir,
		Concurrent: o.Concurrent, Version: o.Version, Revision: o.Revision, HTTPClient: o.HTTPClient}
	if o.Token == "" {
		return cfg, errors.New("register runner: a token is required")
	}
	if cfg.SystemID == "" {
		cfg.SystemID = NewSystemID()
	}
	if cfg.Concurrent <= 0 {
		cfg.Concurrent = 1
	}
	c, err := newClient(cfg)
	if err != nil {
		return cfg, err
	}
	var reg registration
	if strings.HasPrefix(o.Token, "glrt-") {
		reg, err = c.verify(ctx, o.Token, cfg.SystemID)
	} else {
		reg, err = c.register(ctx, registerRequest{Token: o.Token, Description: o.Description,
			RunUntagged: o.RunUntagged, Locked: o.Locked, TagList: strings.Join(o.Tags, ",")})
	}
	if err != nil {
		return cfg, err
	}
	cfg.ID, cfg.Token = reg.ID, reg.Token
	if reg.TokenExpiresAt != nil {
		cfg.TokenExpiresAt = *reg.TokenExpiresAt
	}
	return cfg, nil
}

// Unregister deletes the runner of cfg on its server (DELETE /runners,
// 204). Its token stops working; the caller forgets the Config.
func Unregister(ctx context.Context, cfg Config) error {
	c, err := newClient(cfg)
	if err != nil {
		return err
	}
	return c.unregister(ctx, cfg.Token)
}

// timing are the waits of the runner; tests shorten them.
type timing struct {
	traceInterval time.Duration // longest wait between log patches while output comes
	keepAlive     time.Duration // PUT state=running after this long without contact
	afterScript   time.Duration // longest after_script
	finalTimeout  time.Duration // longest final report (log and state)
	shutdownGrace time.Duration // … once the runner is stopping
	retryBase     time.Duration // first wait before retrying an upload or the final state
	pollMin       time.Duration // first wait after a failed job request
	pollMax       time.Duration // longest wait after failed job requests
	quietPoll     time.Duration // wait after an empty answer that came at once
}

func defaultTiming() timing {
	return timing{
		traceInterval: time.Second,
		// A quiet job still asks every 3 s whether it was canceled.
		keepAlive:     3 * time.Second,
		afterScript:   5 * time.Minute,
		finalTimeout:  5 * time.Minute,
		shutdownGrace: 30 * time.Second,
		retryBase:     time.Second,
		pollMin:       100 * time.Millisecond,
		pollMax:       5 * time.Second,
		quietPoll:     time.Second,
	}
}

// runner is a running Run.
type runner struct {
	cfg      Config
	c        *client
	git      *git.Runner
	bash     string
	hostname string
	log      *slog.Logger
	tm       timing
}

// Run takes jobs from the server of cfg and runs them, cfg.Concurrent at a
// time (default 1), until ctx ends. It returns an error at once when cfg
// is unusable (no URL or token) or bash or git cannot be found; otherwise
// it returns nil once ctx ended and every worker stopped: running jobs are
// aborted (their scripts killed) and reported failed with
// runner_system_failure, the report taking at most 30 s more. No goroutine
// or process it started outlives it.
//
// Each worker long-polls POST /jobs/request (the server may park it up to
// about 50 s), backing off from 100 ms up to 5 s with jitter after errors
// (5xx, 409, 403, no answer). A job runs in <BuildsDir>/<job id>, removed
// afterwards; its scripts run in bash with the runner's environment (less
// QUARRY_* variables) plus the job's variables. log (nil: none) gets a
// record when a job starts and ends and for the protocol's failures; it
// never sees a token.
//
// Run may run inside the server's process (quarry serve --with-runner):
// cfg then needs only URL (the server's own address), Token (of a runner
// the server registered, e.g. with Register) and a BuildsDir of its own.
func Run(ctx context.Context, cfg Config, log *slog.Logger) error {
	return run(ctx, cfg, log, defaultTiming())
}

func run(ctx context.Context, cfg Config, log *slog.Logger, tm timing) error {
	cfg, err := cfg.normalized()
	if err != nil {
		return err
	}
	c, err := newClient(cfg)
	if err != nil {
		return err
	}
	bash, err := exec.LookPath("bash")
	if err != nil {
		return fmt.Errorf("runner: %w", err)
	}
	if err := os.MkdirAll(cfg.BuildsDir, 0o755); err != nil {
		return fmt.Errorf("runner: builds dir: %w", err)
	}
	g, err := git.NewRunner("", filepath.Join(cfg.BuildsDir, ".git-home"))
	if err != nil {
		return fmt.Errorf("runner: %w", err)
	}
	host, _ := os.Hostname()
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	r := &runner{cfg: cfg, c: c, git: g, bash: bash, hostname: host, tm: tm,
		log: log.With("runner_id", cfg.ID, "system_id", cfg.SystemID)}
	r.log.Info("runner started", "server", c.base.Redacted(), "concurrent", cfg.Concurrent, "builds_dir", cfg.BuildsDir)
	var wg sync.WaitGroup
	for slot := range cfg.Concurrent {
		wg.Go(func() { r.work(ctx, slot) })
	}
	wg.Wait()
	r.log.Info("runner stopped")
	return nil
}

// work asks for jobs and runs them, one at a time, until ctx ends.
func (r *runner) work(ctx context.Context, slot int) {
	bo := backoff{min: r.tm.pollMin, max: r.tm.pollMax}
	lastUpdate := ""
	for ctx.Err() == nil {
		asked := time.Now()
		j, next, err := r.c.requestJob(ctx, r.cfg.Token, r.cfg.SystemID, lastUpdate)
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			wait := bo.next()
			r.log.Warn("request job", "err", err, "retry_in", wait.Round(time.Millisecond))
			sleep(ctx, wait)
			continue
		}
		bo.reset()
		if j == nil {
			// Nothing to do. The server parks the request until its
			// queue changes; an unchanged answer that came at once means
			// it does not, so ask a little later.
			if next == lastUpdate && time.Since(asked) < r.tm.quietPoll {
				sleep(ctx, r.tm.quietPoll)
			}
			lastUpdate = next
			continue
		}
		r.runJob(ctx, slot, j)
		lastUpdate = "" // ask afresh: the queue moved on meanwhile
	}
}
