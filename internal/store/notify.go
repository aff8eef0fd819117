package store

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
)

// Notifications are hints that something changed in the database: "a task
// is waiting", "a job was queued". A transaction sends them with
// tx.Notify; they reach subscribers (db.Subscribe) of every process on the
// same database only if, and after, the transaction commits. Delivery is
// best effort — a subscriber that falls behind, or a listener connection
// that breaks, loses notifications — so a subscriber must treat one as a
// reason to re-read the database, and must re-read now and then anyway.
//
// On SQLite (one process per database file) delivery is in-process, after
// commit, to the subscribers of the same DB value. On PostgreSQL, Notify is pg_notify inside the transaction and
// each DB keeps one dedicated LISTEN connection (opened on the first
// Subscribe) that fans notifications out to its local subscribers; it
// reconnects after a failure. Channels are scoped to the connection's
// schema, so Quarry instances in different schemas of one database do not
// hear each other.

// MaxNotifyPayload is the largest payload Notify accepts, in bytes
// (PostgreSQL's limit is just under 8000).
const MaxNotifyPayload = 7999

// validChannel is the form of a channel name: a short lower-case
// identifier, safe to send to LISTEN.
var validChannel = regexp.MustCompile(`^[a-z][a-z0-9_]{0,29}$`)

// checkChannel reports a channel name that is not a safe identifier.
func checkChannel(channel string) error {
	if !validChannel.MatchString(channel) {
		return fmt.Errorf("notification channel %q: want a lower-case identifier of at most 30 characters", channel)
	}
	return nil
}

// Notify sends payload on channel to every subscriber once this transaction
// commits; nothing is sent if it rolls back. Identical notifications (same
// channel and payload) within one transaction may arrive once. Notify only
// works inside DB.InTx.
func (tx *Tx) Notify(ctx context.Context, channel, payload string) error {
	if err := checkChannel(channel); err != nil {
		return err
	}
	if len(payload) > MaxNotifyPayload || strings.IndexByte(payload, 0) >= 0 {
		return fmt.Errorf("notification on %q: payload of %d bytes is too long or holds a NUL byte", channel, len(payload))
	}
	if !tx.inTx {
		return fmt.Errorf("notification on %q: not inside a transaction", channel)
	}
	if tx.dialect == Postgres {
		// PostgreSQL delivers it at the commit; it goes with the COMMIT
		// (one round trip fewer).
		return tx.withCommit(ctx, "SELECT pg_notify(?, ?)", []any{tx.notes.wire(channel), payload}, func(br pgx.BatchResults) error {
			if _, err := br.Exec(); err != nil {
				return fmt.Errorf("notify %q: %w", channel, err)
			}
			return nil
		})
	}
	key := [2]string{channel, payload}
	if tx.notified[key] {
		return nil
	}
	if tx.notified == nil {
		tx.notified = map[[2]string]bool{}
	}
	tx.notified[key] = true
	tx.afterCommit(func() { tx.notes.deliver(channel, payload) })
	return nil
}

// Subscription receives the notifications of one channel. Read C; call
// Close when done.
type Subscription struct {
	// C carries the payloads, normally in commit order. It is
	// closed by Close and when the DB closes. After the PostgreSQL listener
	// reconnects, C receives one "" because notifications may have been
	// missed meanwhile.
	C <-chan string

	c       chan string
	channel string
	n       *notifier
	ready   chan struct{}
	isReady bool // ready closed; guarded by n.mu
	done    bool // c closed; guarded by n.mu
}

// Ready is closed once the subscription is live: notifications committed
// after that are delivered (while the listener connection holds). On
// SQLite it is closed from the start.
func (s *Subscription) Ready() <-chan struct{} { return s.ready }

// Close ends the subscription and closes C. It may be called more than
// once, and after the DB has closed.
func (s *Subscription) Close() {
	n := s.n
	n.mu.Lock()
	defer n.mu.Unlock()
	if s.done {
		return
	}
	s.done = true
	close(s.c)
	delete(n.subs[s.channel], s)
	if len(n.subs[s.channel]) == 0 {
		delete(n.subs, s.channel)
		n.changedLocked() // UNLISTEN
	}
}

// subscriptionBuffer is how many payloads a subscriber may fall behind
// before newer ones are dropped.
const subscriptionBuffer = 64

// Subscribe starts receiving the notifications of channel. It does not wait
// for the network: on PostgreSQL, wait for Ready before relying on
// delivery. It fails only for a bad channel name or a closed DB.
func (db *DB) Subscribe(channel string) (*Subscription, error) {
	if err := checkChannel(channel); err != nil {
		return nil, err
	}
	n := db.notes
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.closed {
		return nil, errors.New("subscribe: database closed")
	}
	c := make(chan string, subscriptionBuffer)
	s := &Subscription{C: c, c: c, channel: channel, n: n, ready: make(chan struct{})}
	if n.subs[channel] == nil {
		n.subs[channel] = map[*Subscription]struct{}{}
	}
	n.subs[channel][s] = struct{}{}
	if n.connURL == "" || n.live[channel] {
		s.markReadyLocked()
	} else {
		n.startLocked()
		n.changedLocked()
	}
	return s, nil
}

func (s *Subscription) markReadyLocked() {
	if !s.isReady {
		s.isReady = true
		close(s.ready)
	}
}

// notifier holds a DB's subscribers and, on PostgreSQL, its listener.
type notifier struct {
	mu     sync.Mutex
	subs   map[string]map[*Subscription]struct{}
	closed bool

	// PostgreSQL only: connURL opens the LISTEN connection; scope is
	// appended to channel names on the wire.
	connURL string
	scope   string
	// The listener goroutine: started on the first Subscribe, stopped by
	// close (stop, then wait for done).
	started bool
	stop    context.CancelFunc
	done    chan struct{}
	// live are the channels LISTENed on the current connection; dirty
	// says the subscribed channels changed since the last sync;
	// interrupt, while the listener waits, ends the wait so it syncs.
	live      map[string]bool
	dirty     bool
	interrupt context.CancelFunc
	connected bool  // a connection has been made before (so a new one is a reconnect)
	err       error // why the listener is not listening now; nil while it is
}

// ListenError says why this DB's PostgreSQL listener is not listening at
// the moment (it keeps retrying); nil while it listens, before the first
// Subscribe, and on SQLite.
func (db *DB) ListenError() error {
	db.notes.mu.Lock()
	defer db.notes.mu.Unlock()
	return db.notes.err
}

func newNotifier() *notifier {
	return &notifier{subs: map[string]map[*Subscription]struct{}{}, live: map[string]bool{}}
}

// newPostgresNotifier returns the notifier of a PostgreSQL DB whose
// connections use schema.
func newPostgresNotifier(connURL, schema string) *notifier {
	n := newNotifier()
	n.connURL, n.scope = connURL, channelScope(schema)
	return n
}

var plainSchema = regexp.MustCompile(`^[a-z_][a-z0-9_]{0,31}$`)

// channelScope turns a schema name into the suffix of wire channel names:
// the name itself when short and plain, else a hash of it, so that a
// channel (≤ 30 bytes) plus "@" and the scope fits PostgreSQL's 63-byte
// identifiers.
func channelScope(schema string) string {
	if plainSchema.MatchString(schema) {
		return schema
	}
	sum := sha256.Sum256([]byte(schema))
	return hex.EncodeToString(sum[:8])
}

// wire is channel's name on PostgreSQL.
func (n *notifier) wire(channel string) string { return channel + "@" + n.scope }

// deliver hands payload to the local subscribers of channel without
// blocking: a subscriber whose buffer is full misses it.
func (n *notifier) deliver(channel, payload string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	for s := range n.subs[channel] {
		select {
		case s.c <- payload:
		default:
		}
	}
}

// close stops the listener, waits for it, and closes every subscription.
func (n *notifier) close() {
	n.mu.Lock()
	if n.closed {
		n.mu.Unlock()
		return
	}
	n.closed = true
	for _, subs := range n.subs {
		for s := range subs {
			s.done = true
			close(s.c)
		}
	}
	n.subs = map[string]map[*Subscription]struct{}{}
	started, stop, done := n.started, n.stop, n.done
	n.mu.Unlock()
	if started {
		stop()
		<-done
	}
}

// startLocked starts the listener goroutine unless it runs.
func (n *notifier) startLocked() {
	if n.started || n.closed {
		return
	}
	ctx, stop := context.WithCancel(context.Background())
	n.started, n.stop, n.done = true, stop, make(chan struct{})
	go n.listen(ctx)
}

// changedLocked tells the listener that the subscribed channels changed.
func (n *notifier) changedLocked() {
	if n.connURL == "" {
		return
	}
	n.dirty = true
	if n.interrupt != nil {
		n.interrupt()
	}
}

// Listener timing: reconnect delays grow from retryMin to retryMax; an idle
// connection is pinged every healthInterval so that a dead one is noticed.
const (
	retryMin       = 50 * time.Millisecond
	retryMax       = 5 * time.Second
	healthInterval = 30 * time.Second
)

// listen keeps a LISTEN connection until ctx ends, reconnecting after
// failures.
func (n *notifier) listen(ctx context.Context) {
	defer close(n.done)
	delay := retryMin
	for {
		connected, err := n.session(ctx)
		n.mu.Lock()
		n.live = map[string]bool{}
		n.interrupt = nil
		n.err = fmt.Errorf("listen for notifications: %w", err)
		n.mu.Unlock()
		if connected {
			delay = retryMin
		}
		t := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		delay = min(2*delay, retryMax)
	}
}

// session runs one LISTEN connection until it fails or ctx ends; connected
// reports whether it got as far as connecting.
func (n *notifier) session(ctx context.Context) (connected bool, err error) {
	conn, err := pgx.Connect(ctx, n.connURL)
	if err != nil {
		return false, err
	}
	defer func() {
		cctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = conn.Close(cctx)
	}()
	n.mu.Lock()
	reconnected := n.connected
	n.connected = true
	n.dirty = true
	n.err = nil
	n.mu.Unlock()
	for {
		if err := n.sync(ctx, conn); err != nil {
			return true, err
		}
		if reconnected {
			// Whatever was sent while the connection was down is lost.
			reconnected = false
			n.mu.Lock()
			for ch := range n.subs {
				for s := range n.subs[ch] {
					select {
					case s.c <- "":
					default:
					}
				}
			}
			n.mu.Unlock()
		}
		wctx, cancel := context.WithTimeout(ctx, healthInterval)
		n.mu.Lock()
		if n.dirty {
			n.mu.Unlock()
			cancel()
			continue
		}
		n.interrupt = cancel
		n.mu.Unlock()
		note, err := conn.WaitForNotification(wctx)
		n.mu.Lock()
		n.interrupt = nil
		n.mu.Unlock()
		waitErr := wctx.Err()
		cancel()
		if note != nil {
			if ch, ok := strings.CutSuffix(note.Channel, "@"+n.scope); ok {
				n.deliver(ch, note.Payload)
			}
		}
		switch {
		case err == nil:
		case ctx.Err() != nil:
			return true, ctx.Err()
		case errors.Is(waitErr, context.Canceled):
			// Interrupted: the subscribed channels changed.
		case errors.Is(waitErr, context.DeadlineExceeded):
			pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			err := conn.Ping(pctx)
			cancel()
			if err != nil {
				return true, err
			}
		default:
			return true, err
		}
	}
}

// sync makes the connection LISTEN to exactly the subscribed channels, and
// marks the subscriptions of newly LISTENed channels ready.
func (n *notifier) sync(ctx context.Context, conn *pgx.Conn) error {
	n.mu.Lock()
	n.dirty = false
	var add, drop []string
	for ch := range n.subs {
		if !n.live[ch] {
			add = append(add, ch)
		}
	}
	for ch := range n.live {
		if n.subs[ch] == nil {
			drop = append(drop, ch)
		}
	}
	n.mu.Unlock()
	for _, ch := range add {
		if _, err := conn.Exec(ctx, "LISTEN "+pgx.Identifier{n.wire(ch)}.Sanitize()); err != nil {
			return fmt.Errorf("listen %q: %w", ch, err)
		}
		n.mu.Lock()
		n.live[ch] = true
		for s := range n.subs[ch] {
			s.markReadyLocked()
		}
		n.mu.Unlock()
	}
	for _, ch := range drop {
		if _, err := conn.Exec(ctx, "UNLISTEN "+pgx.Identifier{n.wire(ch)}.Sanitize()); err != nil {
			return fmt.Errorf("unlisten %q: %w", ch, err)
		}
		n.mu.Lock()
		delete(n.live, ch)
		n.mu.Unlock()
	}
	return nil
}
