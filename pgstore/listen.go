package pgstore

import (
	"context"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/Papercusp/chat-protocol-go/replay"
)

// listener holds a Window's one listening connection: LISTEN on
// notifyChannel, a notification wakes the readers of its turn in this
// process, and a reconnect, or CatchUpInterval without one, wakes all of
// them for a catch-up read, since notifications sent while the connection
// was away, or queued behind a slow one, are not waited for.
type listener struct {
	cfg       *pgx.ConnConfig
	log       *slog.Logger
	catchUp   time.Duration // <0: no periodic catch-up
	noCatchUp bool          // the noCatchUp flaw

	mu      sync.Mutex
	watches map[replay.Key]*watch
	all     chan struct{} // closed and replaced to wake every reader

	connects      atomic.Int64 // LISTENs that succeeded
	notifications atomic.Int64
	// onNotify is called with the turn of each notification that readers
	// of this process wait for; it must not block: it starts the read of
	// the turn's bounds that is then published.
	onNotify func(key replay.Key)
	catchUps atomic.Int64
	conn     atomic.Pointer[pgx.Conn] // the live connection, for tests
}

// watch is the readers of one turn waiting in this process.
type watch struct {
	refs int
	cur  *wake // the next wake, not yet published
}

// wake is one wake of a turn's readers, after a notification: the bounds
// read by a statement that started after the notification arrived (ok
// false when that read failed), published by closing ch. Wakes form a
// chain, so that a reader that was busy while several were published
// sees each of them in turn.
type wake struct {
	ch   chan struct{}
	b    replay.Bounds
	ok   bool
	next *wake // set before ch is closed
}

func newListener(cfg *pgx.ConnConfig, log *slog.Logger, catchUp time.Duration, noCatchUp bool) *listener {
	return &listener{cfg: cfg, log: log, catchUp: catchUp, noCatchUp: noCatchUp,
		watches: make(map[replay.Key]*watch), all: make(chan struct{})}
}

// watch registers a reader of key; unwatch with the result.
func (l *listener) watch(key replay.Key) *watch {
	l.mu.Lock()
	defer l.mu.Unlock()
	wt := l.watches[key]
	if wt == nil {
		wt = &watch{cur: &wake{ch: make(chan struct{})}}
		l.watches[key] = wt
	}
	wt.refs++
	return wt
}

func (l *listener) unwatch(key replay.Key, wt *watch) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if wt.refs--; wt.refs == 0 {
		delete(l.watches, key)
	}
}

// watching reports whether a reader of key waits, for tests.
func (l *listener) watching(key replay.Key) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.watches[key] != nil
}

// next returns wt's next wake, to wait on from now.
func (l *listener) next(wt *watch) *wake {
	l.mu.Lock()
	defer l.mu.Unlock()
	return wt.cur
}

// allSignal returns the channel closed on the next wake of every reader
// (nil, never closed, with the noCatchUp flaw). Take it before a read.
func (l *listener) allSignal() <-chan struct{} {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.noCatchUp {
		return nil
	}
	return l.all
}

// publish wakes key's readers with bounds b, read after a notification.
func (l *listener) publish(key replay.Key, b replay.Bounds, ok bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	wt := l.watches[key]
	if wt == nil {
		return
	}
	w := wt.cur
	w.b, w.ok, w.next = b, ok, &wake{ch: make(chan struct{})}
	wt.cur = w.next
	close(w.ch)
}

func (l *listener) wakeAll() {
	l.catchUps.Add(1)
	l.mu.Lock()
	defer l.mu.Unlock()
	close(l.all)
	l.all = make(chan struct{})
}

func (l *listener) warn(msg string, args ...any) {
	if l.log != nil {
		l.log.Warn(msg, args...)
	}
}

// run holds the listening connection until ctx ends, reconnecting with a
// growing pause (20 ms to 1 s) whenever it breaks, and wakes every reader
// each catch-up interval whether or not the connection is up.
func (l *listener) run(ctx context.Context) {
	if l.catchUp > 0 && !l.noCatchUp {
		done := make(chan struct{})
		defer func() { <-done }()
		go func() {
			defer close(done)
			every(ctx, l.catchUp, l.wakeAll)
		}()
	}
	for pause := 20 * time.Millisecond; ctx.Err() == nil; pause = min(2*pause, time.Second) {
		if l.listen(ctx) {
			pause = 20 * time.Millisecond
		}
		t := time.NewTimer(pause)
		select {
		case <-ctx.Done():
		case <-t.C:
		}
		t.Stop()
	}
}

// listen connects, LISTENs and dispatches notifications until the
// connection breaks or ctx ends; it reports whether LISTEN succeeded.
func (l *listener) listen(ctx context.Context) bool {
	conn, err := pgx.ConnectConfig(ctx, l.cfg)
	if err != nil {
		if ctx.Err() == nil {
			l.warn("pgstore: window listener: connect failed", "err", err)
		}
		return false
	}
	defer func() {
		l.conn.Store(nil)
		cctx, cancel := context.WithTimeout(context.Background(), time.Second)
		_ = conn.Close(cctx)
		cancel()
	}()
	if _, err := conn.Exec(ctx, "LISTEN "+notifyChannel); err != nil {
		if ctx.Err() == nil {
			l.warn("pgstore: window listener: LISTEN failed", "err", err)
		}
		return false
	}
	l.conn.Store(conn)
	l.connects.Add(1)
	if !l.noCatchUp {
		l.wakeAll() // what was notified while no connection listened
	}
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			if ctx.Err() == nil {
				l.warn("pgstore: window listener: connection lost", "err", err)
			}
			return true
		}
		l.notifications.Add(1)
		if key, ok := parseNotification(n.Payload); ok && l.onNotify != nil && l.watching(key) {
			l.onNotify(key)
		}
	}
}

// encodeNotification is the payload naming key: the byte length of the
// conversation id in decimal, a colon, the conversation id, then the turn
// id. Ids only, at most 256 bytes each, far below the server's 8,000-byte
// limit on a payload.
func encodeNotification(key replay.Key) string {
	return strconv.Itoa(len(key.ConversationID)) + ":" + key.ConversationID + key.TurnID
}

// parseNotification is encodeNotification's inverse; ok is false for a
// payload it did not write (anyone may NOTIFY on the channel).
func parseNotification(payload string) (key replay.Key, ok bool) {
	n, rest, found := strings.Cut(payload, ":")
	if !found || len(n) == 0 || len(n) > 3 {
		return key, false
	}
	size, err := strconv.Atoi(n)
	if err != nil || size < 1 || size > len(rest) || strconv.Itoa(size) != n {
		return key, false
	}
	key = replay.Key{ConversationID: rest[:size], TurnID: rest[size:]}
	return key, key.TurnID != ""
}
