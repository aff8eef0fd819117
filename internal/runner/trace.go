package runner

import (
	"context"
	"fmt"
	"hash/crc32"
	"log/slog"
	"math/rand/v2"
	"sync"
	"time"
)

const (
	// maxPatchSize is the most one PATCH /jobs/:id/trace carries.
	maxPatchSize = 1 << 20
	// logLimit is the most of a job's log the runner keeps and sends, as
	// gitlab-runner's default output_limit (4 MiB); the job runs on.
	logLimit = 4 << 20
)

// jobLog is the log of one job. What the job writes is masked, kept in
// memory (up to logLimit) and sent to the server by a goroutine of its own
// (start): a PATCH at least every interval while there is new output, and a
// keep-alive PUT state=running after keepAlive without contact. What the
// server answers may cancel the job: onCancel for a graceful cancel
// (Job-Status: canceling), onAbort when the job is over for the server (403,
// Job-Status: canceled or failed). finish stops the goroutine, sends the
// rest and the final state.
type jobLog struct {
	c     *client
	id    int64
	token string
	log   *slog.Logger
	tm    timing

	onCancel func()
	onAbort  func()

	mu       sync.Mutex
	masker   *masker // writes into data; guarded by mu
	data     []byte  // the masked log; only ever appended to (trace_reset resends it)
	crc      uint32
	full     bool      // logLimit reached
	sent     int       // the server holds data[:sent]
	contact  time.Time // the server's last accepted PATCH or PUT
	interval time.Duration
	gone     bool // 404 or 403 (or Job-Status canceled/failed): send no more log

	stop      chan struct{}
	stopCalls context.CancelFunc // ends the sender's request in flight
	done      chan struct{}
}

func newJobLog(c *client, id int64, token string, secrets []string, tm timing, log *slog.Logger) *jobLog {
	l := &jobLog{c: c, id: id, token: token, log: log, tm: tm, interval: tm.traceInterval,
		onCancel: func() {}, onAbort: func() {}, contact: time.Now()}
	l.masker = newMasker(logSink{l}, secrets)
	return l
}

// logSink appends masked text to the log; the caller holds mu.
type logSink struct{ l *jobLog }

func (s logSink) Write(p []byte) (int, error) {
	l := s.l
	if l.full {
		return len(p), nil
	}
	if room := logLimit - len(l.data); len(p) > room {
		p = p[:room]
		l.full = true
	}
	l.data = append(l.data, p...)
	l.crc = crc32.Update(l.crc, crc32.IEEETable, p)
	if l.full {
		note := fmt.Sprintf("\n%sJob's log exceeded limit of %d bytes.\nJob execution will continue but no more output will be collected.%s\n", ansiYellow, logLimit, ansiReset)
		l.data = append(l.data, note...)
		l.crc = crc32.Update(l.crc, crc32.IEEETable, []byte(note))
	}
	return len(p), nil
}

// Write adds p to the log, masked. It never fails.
func (l *jobLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.masker.Write(p)
	return len(p), nil
}

// Printf writes a formatted line part to the log.
func (l *jobLog) Printf(format string, args ...any) {
	fmt.Fprintf(l, format, args...)
}

// output is the checksum and size of the log so far, as PUT /jobs/:id
// reports them.
func (l *jobLog) output() jobOutput {
	l.mu.Lock()
	defer l.mu.Unlock()
	return jobOutput{Checksum: fmt.Sprintf("crc32:%08x", l.crc), Bytesize: len(l.data)}
}

// Bytes returns a copy of the log so far (tests, the runner's own log).
func (l *jobLog) Bytes() []byte {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]byte(nil), l.data...)
}

// start runs the sender until finish.
func (l *jobLog) start(ctx context.Context) {
	l.stop = make(chan struct{})
	l.done = make(chan struct{})
	ctx, l.stopCalls = context.WithCancel(ctx)
	go func() {
		defer close(l.done)
		t := time.NewTimer(l.currentInterval())
		defer t.Stop()
		for {
			select {
			case <-l.stop:
				return
			case <-t.C:
			}
			l.tick(ctx)
			t.Reset(l.currentInterval())
		}
	}()
}

func (l *jobLog) currentInterval() time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.interval
}

// setInterval follows the server's X-GitLab-Trace-Update-Interval, but
// never waits longer than tm.traceInterval: people watch logs live.
func (l *jobLog) setInterval(d time.Duration) {
	if d <= 0 {
		return
	}
	l.mu.Lock()
	l.interval = min(d, l.tm.traceInterval)
	l.mu.Unlock()
}

// tick is one round of the sender: new output goes out, and a job quiet
// for keepAlive is touched.
func (l *jobLog) tick(ctx context.Context) {
	l.mu.Lock()
	gone := l.gone
	l.mu.Unlock()
	if gone {
		return
	}
	a, sent, err := l.patch(ctx)
	if err != nil {
		if ctx.Err() == nil {
			l.log.Warn("append job log", "err", err)
		}
		return
	}
	if sent {
		l.react(a)
	}
	l.mu.Lock()
	quiet := time.Since(l.contact) >= l.tm.keepAlive
	l.mu.Unlock()
	if !quiet {
		return
	}
	a, err = l.c.updateJob(ctx, l.id, jobUpdate{Token: l.token, State: "running", Output: l.output()})
	if err != nil {
		if ctx.Err() == nil {
			l.log.Warn("keep job alive", "err", err)
		}
		return
	}
	l.setInterval(a.Interval)
	if a.Code == 200 {
		l.mu.Lock()
		l.contact = time.Now()
		l.mu.Unlock()
	}
	if a.Code == 404 {
		a.Code = 403 // the job is gone: same as forbidden
	}
	l.react(a)
}

// react hands the server's word on the job to the build.
func (l *jobLog) react(a answer) {
	switch {
	case a.Code == 403 || a.aborted():
		l.mu.Lock()
		l.gone = true
		l.mu.Unlock()
		l.onAbort()
	case a.canceling():
		l.onCancel()
	}
}

// pending is how many bytes the server does not hold yet.
func (l *jobLog) pending() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.gone {
		return 0
	}
	return len(l.data) - l.sent
}

// patch sends the next part of the log (at most maxPatchSize) and moves
// the sent offset by the answer: 202 past the part, 416 to the size the
// server holds (Range: 0-<size>), so the next patch resends from there.
// sent is false when there was nothing to send.
func (l *jobLog) patch(ctx context.Context) (a answer, sent bool, err error) {
	l.mu.Lock()
	start := l.sent
	chunk := l.data[start:min(len(l.data), start+maxPatchSize)]
	gone := l.gone
	l.mu.Unlock()
	if len(chunk) == 0 || gone {
		return a, false, nil
	}
	a, err = l.c.patchTrace(ctx, l.id, l.token, chunk, start)
	if err != nil {
		return a, false, err
	}
	l.setInterval(a.Interval)
	l.mu.Lock()
	defer l.mu.Unlock()
	switch a.Code {
	case 202:
		l.sent = start + len(chunk)
		l.contact = time.Now()
	case 416:
		l.sent = nextOffset(a.RemoteSize, len(l.data))
		l.contact = time.Now()
	case 404:
		l.gone = true
	}
	return a, true, nil
}

// nextOffset is where to resend from after a 416: the size the server
// holds, or 0 (the whole log, which the server truncates to) when the
// server's size is missing or more than the runner ever wrote.
func nextOffset(remote, have int) int {
	if remote < 0 || remote > have {
		return 0
	}
	return remote
}

// result is how a job ended, as the final PUT /jobs/:id reports it.
type result struct {
	State    string // "success" or "failed"
	Reason   string // failure_reason when failed
	ExitCode int    // the script's exit status (0: none)
	// Silent: the server ended the job (canceled it, or it vanished);
	// nothing more is sent.
	Silent bool
}

// finish stops the sender, flushes what the masker held back, sends the
// rest of the log and then the final state, until the server takes it (200)
// or ends the job (403, 404, Job-Status canceled/failed). 202 is retried
// after the server's interval, 412 (checksum mismatch) resends the whole
// log first, anything else is retried with backoff. ctx bounds it all.
func (l *jobLog) finish(ctx context.Context, r result) {
	close(l.stop)
	l.stopCalls() // a patch cut short is sent again: the server truncates to its offset
	<-l.done
	l.mu.Lock()
	l.masker.Close()
	l.mu.Unlock()
	if r.Silent {
		return
	}
	bo := backoff{min: l.tm.retryBase, max: 30 * l.tm.retryBase}
	for l.sendAll(ctx, &bo) {
		out := l.output()
		a, err := l.c.updateJob(ctx, l.id, jobUpdate{Token: l.token, State: r.State, FailureReason: r.Reason,
			ExitCode: r.ExitCode, Checksum: out.Checksum, Output: out})
		wait := bo.next()
		switch {
		case err != nil:
			l.log.Warn("send final job state", "err", err)
		case a.Code == 200:
			return
		case a.Code == 403 || a.Code == 404 || a.aborted():
			l.log.Warn("send final job state: the server ended the job", "code", a.Code, "job_status", a.JobStatus)
			return
		case a.Code == 202:
			// Accepted, not completed: ask again after the server's
			// interval.
			bo.reset()
			wait = min(max(a.Interval, l.tm.retryBase), 30*l.tm.retryBase)
		case a.Code == 412:
			// The server's log differs from ours: send it all again.
			l.log.Info("final job state: log checksum mismatch; resending the log")
			l.mu.Lock()
			l.sent, l.gone = 0, false
			l.mu.Unlock()
		default:
			l.log.Warn("send final job state", "code", a.Code)
		}
		if !sleep(ctx, wait) {
			break
		}
	}
	l.log.Error("final job state not sent", "err", context.Cause(ctx))
}

// sendAll patches until the server holds the whole log (or will take no
// more). It returns false when ctx ended first.
func (l *jobLog) sendAll(ctx context.Context, bo *backoff) bool {
	for l.pending() > 0 {
		a, _, err := l.patch(ctx)
		switch {
		case err != nil:
			l.log.Warn("append job log", "err", err)
		case a.Code == 202 || a.Code == 404:
			bo.reset()
			continue
		case a.Code == 403 || a.aborted():
			return true // the final PUT will hear the same
		case a.Code == 416:
			// Resend from the server's size; back off in case it keeps
			// refusing.
		default:
			l.log.Warn("append job log", "code", a.Code)
		}
		if !sleep(ctx, bo.next()) {
			return false
		}
	}
	return ctx.Err() == nil
}

// backoff waits min, doubling up to max, each wait with jitter (between
// half and all of it).
type backoff struct {
	min, max, cur time.Duration
}

func (b *backoff) next() time.Duration {
	if b.cur == 0 {
		b.cur = b.min
	} else {
		b.cur = min(2*b.cur, b.max)
	}
	half := b.cur / 2
	return half + rand.N(b.cur-half+1)
}

func (b *backoff) reset() { b.cur = 0 }

// sleep waits d; false when ctx ended first.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
