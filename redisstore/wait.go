package redisstore

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/Papercusp/chat-protocol-go/internal/patience"
	"github.com/Papercusp/chat-protocol-go/replay"
)

// subscriber is a Window's one Pub/Sub connection: it holds a watch per
// turn channel it waits on, subscribes to a turn's channel when the first
// waiter comes and unsubscribes once it has had no waiter for
// idleUnsubscribe. Every message on a channel, every confirmation of its
// subscription (the first, and those go-redis resends after reconnecting)
// and every catch-up tick wakes the channel's waiters, who read the
// bounds again: a frame appended before the subscription took effect, or
// while the connection was down, is found by that read.
type subscriber struct {
	w  *Window
	ps *redis.PubSub

	mu      sync.Mutex
	watches map[string]*watch     // by channel
	byKey   map[replay.Key]*watch // the same, by turn
	ops     []subOp               // subscriptions and unsubscriptions to send, in order
	kick    chan struct{}         // tells send that ops is not empty
}

// watch is one channel's waiters.
type watch struct {
	wake    chan struct{} // closed and replaced on every wakeup
	waiters int
	idle    time.Time // when waiters fell to 0

	// told are the bounds the newest message of the channel carried, since
	// the last confirmation of its subscription; known says there is one.
	told  replay.Bounds
	known bool

	key   replay.Key
	reads *turnReads // the turn's reads, held while the watch lives
}

// subOp is a subscription (sub) or an unsubscription to send.
type subOp struct {
	channel string
	sub     bool
}

func newSubscriber(w *Window) *subscriber {
	return &subscriber{
		w:       w,
		ps:      w.client.Subscribe(w.ctx),
		watches: make(map[string]*watch),
		byKey:   make(map[replay.Key]*watch),
		kick:    make(chan struct{}, 1),
	}
}

// close closes the Pub/Sub connection, which ends receive.
func (s *subscriber) close() { _ = s.ps.Close() }

// enter counts a waiter on key's channel, subscribing to it when it has no
// watch yet, and returns the watch.
func (s *subscriber) enter(key replay.Key) *watch {
	s.mu.Lock()
	defer s.mu.Unlock()
	wt := s.byKey[key]
	if wt == nil {
		channel := channelOf(s.w.prefix, key)
		fs := &s.w.fetches
		fs.mu.Lock()
		wt = &watch{wake: make(chan struct{}), key: key, reads: fs.hold(key)}
		fs.mu.Unlock()
		s.watches[channel] = wt
		s.byKey[key] = wt
		s.queue(subOp{channel: channel, sub: true})
	}
	wt.waiters++
	return wt
}

// leave uncounts a waiter of wt.
func (s *subscriber) leave(wt *watch) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if wt.waiters--; wt.waiters == 0 {
		wt.idle = time.Now()
	}
}

// current returns wt's wake channel, and the bounds the channel's newest
// message told when known. When the Window knows of a newer frame, whose
// message is still on its way, it returns the bounds of the read that
// found it, or unknown when the Window's own append stored it.
func (s *subscriber) current(wt *watch) (wake <-chan struct{}, told replay.Bounds, known bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	told, known = wt.told, wt.known
	if known {
		s.w.fetches.mu.Lock()
		if tr := wt.reads; tr.known > told.Latest {
			told, known = tr.cache.b, tr.cache.b.Latest == tr.known
		}
		s.w.fetches.mu.Unlock()
	}
	return wt.wake, told, known
}

// queue adds op for send. s.mu is held.
func (s *subscriber) queue(op subOp) {
	s.ops = append(s.ops, op)
	select {
	case s.kick <- struct{}{}:
	default:
	}
}

// wakeLocked wakes wt's waiters. s.mu is held.
func wakeLocked(wt *watch) {
	close(wt.wake)
	wt.wake = make(chan struct{})
}

// tell records the bounds a message of channel carried, for the waiters
// and the turn's reads, and wakes the waiters; a payload that is no bounds
// only wakes them. When the message starts the read of the frames it
// announces (prefetch), the waiters wake once that read is done, so that
// their reads take its frames without waiting again.
func (s *subscriber) tell(channel, payload string) {
	b, ok := parseBounds(payload)
	s.mu.Lock()
	defer s.mu.Unlock()
	wt := s.watches[channel]
	if wt == nil {
		return
	}
	wt.told, wt.known = b, ok
	if ok && wt.waiters > 0 {
		fs := &s.w.fetches
		fs.mu.Lock()
		wt.reads.heardBounds(b)
		c := s.w.prefetch(wt.key, wt.reads, b)
		if c != nil {
			c.wake = wt
		}
		fs.mu.Unlock()
		if c != nil {
			return
		}
	} else if ok {
		s.w.fetches.mu.Lock()
		wt.reads.heardBounds(b)
		s.w.fetches.mu.Unlock()
	}
	wakeLocked(wt)
}

// wakeAfterRead wakes wt's waiters once the read a message started is done.
func (s *subscriber) wakeAfterRead(wt *watch) {
	s.mu.Lock()
	defer s.mu.Unlock()
	wakeLocked(wt)
}

// forget forgets what the channel of wt, or of every watch when wt is
// nil, told and what the Window knows of the turn's reads (its cache): a
// failed connection, and the confirmation of a subscription that may
// follow it, may hide a restart of Redis that lost the newest frames,
// which the next reads find. s.mu is held.
func (s *subscriber) forget(wt *watch) {
	fs := &s.w.fetches
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if wt != nil {
		wt.known = false
		wt.reads.invalidate()
		return
	}
	for _, wt := range s.watches {
		wt.known = false
		wt.reads.invalidate()
	}
}

// parseBounds reads the bounds the append script publishes and stores,
// "<latest> <lower> <ended> <bytes>".
func parseBounds(s string) (replay.Bounds, bool) {
	f := strings.Fields(s)
	if len(f) != 4 {
		return replay.Bounds{}, false
	}
	latest, err1 := strconv.ParseInt(f[0], 10, 64)
	lower, err2 := strconv.ParseInt(f[1], 10, 64)
	if err1 != nil || err2 != nil || (f[2] != "0" && f[2] != "1") {
		return replay.Bounds{}, false
	}
	return replay.Bounds{Lower: lower, Latest: latest, Ended: f[2] == "1"}, true
}

// wake wakes the waiters of channel, or of every channel when channel is
// "" (a catch-up tick). It forgets what the channels' messages told, so
// that the waiters read the bounds: a confirmation of a subscription may
// follow a lost connection, whose messages were lost (it forgets the
// turn's kept frames too, see forget), and the tick is the net under a
// lost message.
func (s *subscriber) wake(channel string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if channel != "" {
		if wt := s.watches[channel]; wt != nil {
			s.forget(wt)
			wakeLocked(wt)
		}
		return
	}
	for _, wt := range s.watches {
		wt.known = false
		wakeLocked(wt)
	}
}

// sweep unsubscribes from the channels idle for longer than
// idleUnsubscribe.
func (s *subscriber) sweep(now time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for ch, wt := range s.watches {
		if wt.waiters == 0 && now.Sub(wt.idle) >= s.w.idleUnsubscribe {
			delete(s.watches, ch)
			delete(s.byKey, wt.key)
			s.w.fetches.mu.Lock()
			s.w.fetches.release(wt.key, wt.reads)
			s.w.fetches.mu.Unlock()
			s.queue(subOp{channel: ch})
		}
	}
}

// send sends the queued subscriptions and unsubscriptions, in order, on
// the Pub/Sub connection, apart from the waiters so that none blocks on
// the network. A failed send is logged: go-redis keeps the subscription
// set and sends it again when it reconnects, whose confirmations wake the
// waiters.
func (s *subscriber) send() {
	for {
		select {
		case <-s.w.ctx.Done():
			return
		case <-s.kick:
		}
		s.mu.Lock()
		ops := s.ops
		s.ops = nil
		s.mu.Unlock()
		for i := 0; i < len(ops); {
			j := i + 1
			for j < len(ops) && ops[j].sub == ops[i].sub {
				j++
			}
			names := make([]string, 0, j-i)
			for _, op := range ops[i:j] {
				names = append(names, op.channel)
			}
			var err error
			if ops[i].sub {
				err = s.ps.Subscribe(s.w.ctx, names...)
			} else {
				err = s.ps.Unsubscribe(s.w.ctx, names...)
			}
			if err != nil && s.w.ctx.Err() == nil && s.w.log != nil {
				s.w.log.Warn("redisstore: subscribing", "error", err)
			}
			i = j
		}
	}
}

// receive reads the Pub/Sub connection until the Window closes, waking
// waiters on messages and subscription confirmations, every waiter on
// each catch-up tick, and unsubscribing idle channels. go-redis
// reconnects after a read error, resubscribing to every channel.
func (s *subscriber) receive() {
	tick := s.w.catchUp
	if tick <= 0 {
		tick = time.Second
	}
	lastCatchUp, lastSweep := time.Now(), time.Now()
	for pause := 20 * time.Millisecond; s.w.ctx.Err() == nil; {
		msg, err := s.ps.ReceiveTimeout(s.w.ctx, tick)
		now := time.Now()
		if s.w.catchUp > 0 && now.Sub(lastCatchUp) >= s.w.catchUp {
			lastCatchUp = now
			s.wake("")
		}
		if now.Sub(lastSweep) >= time.Second { // the sweep walks every watch
			lastSweep = now
			s.sweep(now)
		}
		if err != nil {
			if s.w.ctx.Err() != nil || errors.Is(err, redis.ErrClosed) {
				return
			}
			if isTimeout(err) {
				_ = s.ps.Ping(s.w.ctx) // a dead connection shows on the next read
				continue
			}
			if s.w.log != nil {
				s.w.log.Warn("redisstore: the subscriber's connection failed", "error", err)
			}
			s.mu.Lock()
			s.forget(nil)
			s.mu.Unlock()
			if patience.Sleep(s.w.ctx, s.w.ctx, errClosed, pause) != nil {
				return
			}
			pause = min(2*pause, time.Second)
			continue
		}
		pause = 20 * time.Millisecond
		switch m := msg.(type) {
		case *redis.Message:
			s.tell(m.Channel, m.Payload)
		case *redis.Subscription:
			if m.Kind == "subscribe" {
				s.wake(m.Channel)
			}
		}
	}
}

// isTimeout reports whether err is a read timeout of ReceiveTimeout.
func isTimeout(err error) bool {
	var t interface{ Timeout() bool }
	return errors.As(err, &t) && t.Timeout()
}

// Wait blocks until key's turn holds a frame after cursor after, or has
// ended, or ctx is done (see [replay.Window.Wait]), and returns the bounds
// then, with ctx's error in the last case. It subscribes the Window's
// connection to the turn's channel unless it already is. Every append
// publishes the turn's bounds after it: while the channel's messages are
// known (from the first message after its subscription's confirmation,
// forgotten when the connection fails), Wait takes the newest message's
// bounds without a read: it returns them once they hold a frame after
// after, and waits for the next message when they end at after, unless
// the Window knows of a newer frame (its own append, a read: then the
// bounds of that read, or a read of the bounds). Otherwise, and after each
// (re)subscription and catch-up tick, it reads the bounds. A frame
// appended before the call is found by the first read, or told by a
// message. While Redis cannot be reached the reads retry for
// [WindowOptions.Patience]; a closed Window returns an error.
func (w *Window) Wait(ctx context.Context, key replay.Key, after int64) (replay.Bounds, error) {
	if err := ctx.Err(); err != nil {
		return replay.Bounds{}, err
	}
	wt := w.sub.enter(key)
	defer w.sub.leave(wt)
	var last replay.Bounds
	for {
		wake, told, known := w.sub.current(wt)
		if w.ctx.Err() != nil { // Close cancels, then wakes every waiter
			return last, errClosed
		}
		switch {
		case known && (told.Latest > after || told.Ended):
			// A message received since the subscriber's connection last
			// failed or was confirmed: a loss of the newest frames (a
			// restart, a failover) fails the connection first, which
			// forgets it, and the read below finds the loss.
			return told, nil
		case known && told.Latest == after:
			last = told // the newest message is the turn's state: wait for the next
		default:
			b, err := w.Bounds(ctx, key)
			if err != nil {
				return last, err
			}
			last = b
			if b.Latest > after || b.Ended {
				return b, nil
			}
		}
		select {
		case <-wake: // Close wakes every waiter too
		case <-ctx.Done():
			return last, ctx.Err()
		}
	}
}
