package redisstore

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
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
//
// A waiter takes mu shared while it finds its turn's watch and counts
// itself on it; the sweep removes a watch without waiters under mu held
// exclusively, so that no waiter counts itself on a removed watch. The
// waiters read a watch's state without a lock.
type subscriber struct {
	w  *Window
	ps *redis.PubSub

	mu      sync.RWMutex
	watches map[string]*watch     // by channel
	byKey   map[replay.Key]*watch // the same, by turn
	ops     []subOp               // subscriptions and unsubscriptions to send, in order
	kick    chan struct{}         // tells send that ops is not empty
}

// wakeShards is the number of wake channels of a watch: its waiters are
// spread over them, so that the hundreds a turn may have do not all take
// one channel's lock when they wake.
const wakeShards = 16

// wakeSet is a watch's wake channels, all closed on a wakeup.
type wakeSet [wakeShards]chan struct{}

// newWakeSet returns open wake channels.
func newWakeSet() *wakeSet {
	var ws wakeSet
	for i := range ws {
		ws[i] = make(chan struct{})
	}
	return &ws
}

// close closes the channels, waking their waiters.
func (ws *wakeSet) close() {
	for _, c := range ws {
		close(c)
	}
}

// watch is one channel's waiters.
type watch struct {
	// state is what the waiters read without a lock; it is replaced,
	// never changed, under mu.
	state atomic.Pointer[watchState]
	mu    sync.Mutex

	waiters atomic.Int64 // counted under subscriber.mu, shared or not
	left    atomic.Bool  // a waiter left since the sweep last looked
	idle    time.Time    // when the sweep found the watch idle; under subscriber.mu

	key   replay.Key
	reads *turnReads // the turn's reads, held while the watch lives
}

// watchState is a watch's wake channels, closed and replaced on every
// wakeup, and what the channel told: the bounds its newest message
// carried, since the last confirmation of its subscription; known says
// there is one.
type watchState struct {
	wake  *wakeSet
	told  replay.Bounds
	known bool
}

// set replaces wt's state with told and known, and with new wake channels
// when wake is set; it returns the wake channels to close, nil when none.
// The caller closes them after releasing its locks, so that the waiters
// it wakes find none held. wt.mu is held.
func (wt *watch) set(told replay.Bounds, known, wake bool) *wakeSet {
	old := wt.state.Load()
	st := &watchState{wake: old.wake, told: told, known: known}
	if wake {
		st.wake = newWakeSet()
	}
	wt.state.Store(st)
	if wake {
		return old.wake
	}
	return nil
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
// watch yet, and returns the watch and the waiter's wake channel (an
// index of the watch's wakeSet).
func (s *subscriber) enter(key replay.Key) (*watch, int) {
	s.mu.RLock()
	if wt := s.byKey[key]; wt != nil {
		n := wt.waiters.Add(1)
		s.mu.RUnlock()
		return wt, int(n % wakeShards)
	}
	s.mu.RUnlock()
	s.mu.Lock()
	defer s.mu.Unlock()
	wt := s.byKey[key]
	if wt == nil {
		channel := channelOf(s.w.prefix, key)
		fs := &s.w.fetches
		fs.mu.Lock()
		wt = &watch{key: key, reads: fs.hold(key)}
		fs.mu.Unlock()
		wt.state.Store(&watchState{wake: newWakeSet()})
		s.watches[channel] = wt
		s.byKey[key] = wt
		s.queue(subOp{channel: channel, sub: true})
	}
	return wt, int(wt.waiters.Add(1) % wakeShards)
}

// leave uncounts a waiter of wt. It marks its leaving first, so that the
// sweep that sees no waiter sees the mark.
func (s *subscriber) leave(wt *watch) {
	if !wt.left.Load() {
		wt.left.Store(true)
	}
	wt.waiters.Add(-1)
}

// current returns wt's wake channel of index shard, and the bounds the
// channel's newest message told when known. When the Window knows of a
// newer frame, whose message is still on its way, it returns the bounds
// of the read that found it, or unknown when the Window's own append
// stored it. The wake channel is that of the state read: any later change
// of the state that may concern the waiter closes it.
func (s *subscriber) current(wt *watch, shard int) (wake <-chan struct{}, told replay.Bounds, known bool) {
	st := wt.state.Load()
	told, known = st.told, st.known
	if known {
		if v := wt.reads.view.Load(); v.known > told.Latest {
			told, known = v.cache.b, v.cache.b.Latest == v.known
		}
	}
	return st.wake[shard], told, known
}

// queue adds op for send. s.mu is held.
func (s *subscriber) queue(op subOp) {
	s.ops = append(s.ops, op)
	select {
	case s.kick <- struct{}{}:
	default:
	}
}

// tell records the bounds a message of channel carried, for the waiters
// and the turn's reads, and wakes the waiters; a payload that is no bounds
// only wakes them. When the message starts the read of the frames it
// announces (prefetch), the waiters wake once that read is done, so that
// their reads take its frames without waiting again.
func (s *subscriber) tell(channel, payload string) {
	b, ok := parseBounds(payload)
	s.mu.RLock() // the sweep does not release wt.reads meanwhile
	wt := s.watches[channel]
	if wt == nil {
		s.mu.RUnlock()
		return
	}
	wt.mu.Lock()
	wake := true
	if ok {
		fs := &s.w.fetches
		fs.mu.Lock()
		wt.reads.heardBounds(b)
		if wt.waiters.Load() > 0 {
			if c := s.w.prefetch(wt.key, wt.reads, b); c != nil {
				c.wake, wake = wt, false
			}
		}
		fs.mu.Unlock()
	}
	old := wt.set(b, ok, wake)
	wt.mu.Unlock()
	s.mu.RUnlock()
	if old != nil {
		old.close()
	}
}

// wakeAfterRead wakes wt's waiters once the read a message started is done.
func (s *subscriber) wakeAfterRead(wt *watch) {
	wt.mu.Lock()
	st := wt.state.Load()
	old := wt.set(st.told, st.known, true)
	wt.mu.Unlock()
	old.close()
}

// forget forgets what the channel of wt, or of every watch when wt is
// nil, told and what the Window knows of the turn's reads (its cache): a
// failed connection, and the confirmation of a subscription that may
// follow it, may hide a restart of Redis that lost the newest frames,
// which the next reads find; it wakes the waiters when wake is set, and
// returns the wake channels to close. s.mu is held, shared or not.
func (s *subscriber) forget(wt *watch, wake bool) []*wakeSet {
	if wt == nil {
		var olds []*wakeSet
		for _, wt := range s.watches {
			olds = append(olds, s.forget(wt, wake)...)
		}
		return olds
	}
	wt.mu.Lock()
	defer wt.mu.Unlock()
	fs := &s.w.fetches
	fs.mu.Lock()
	wt.reads.invalidate()
	fs.mu.Unlock()
	if old := wt.set(wt.state.Load().told, false, wake); old != nil {
		return []*wakeSet{old}
	}
	return nil
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
// "" (a catch-up tick, Close). It forgets what the channels' messages
// told, so that the waiters read the bounds: a confirmation of a
// subscription may follow a lost connection, whose messages were lost (it
// forgets the turn's kept frames too, see forget), and the tick is the
// net under a lost message.
func (s *subscriber) wake(channel string) {
	var olds []*wakeSet
	s.mu.RLock()
	if channel != "" {
		if wt := s.watches[channel]; wt != nil {
			olds = s.forget(wt, true)
		}
	} else {
		for _, wt := range s.watches {
			wt.mu.Lock()
			olds = append(olds, wt.set(wt.state.Load().told, false, true))
			wt.mu.Unlock()
		}
	}
	s.mu.RUnlock()
	for _, ws := range olds {
		ws.close()
	}
}

// sweep unsubscribes from the channels idle for longer than
// idleUnsubscribe: it finds a watch idle when it has no waiter and none
// left since the sweep before, marking the time, and removes it once it
// has stayed so for idleUnsubscribe since that mark. It holds mu
// exclusively, under which no waiter counts itself.
func (s *subscriber) sweep(now time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for ch, wt := range s.watches {
		switch {
		case wt.waiters.Load() != 0:
		case wt.left.Swap(false) || wt.idle.IsZero():
			wt.idle = now
		case now.Sub(wt.idle) >= s.w.idleUnsubscribe:
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
			s.mu.RLock()
			s.forget(nil, false)
			s.mu.RUnlock()
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
	wt, shard := w.sub.enter(key)
	defer w.sub.leave(wt)
	var last replay.Bounds
	for {
		wake, told, known := w.sub.current(wt, shard)
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
