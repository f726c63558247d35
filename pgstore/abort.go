package pgstore

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/Papercusp/chat-protocol-go/interactions"
	"github.com/Papercusp/chat-protocol-go/recovery"
	"github.com/Papercusp/chat-protocol-go/refusal"
)

// AbortChannel is the LISTEN/NOTIFY channel on which EndTurn announces a
// cancellation: the payload is the JSON array [conversation, turn]. The
// server delivers the notification when the cancellation commits, never
// before and never for one that rolled back.
const AbortChannel = "pgstore_turn_cancelled"

// abortPayload is the notification payload naming turn.
func abortPayload(turn recovery.TurnRef) string {
	b, _ := json.Marshal([2]string{turn.Conversation, turn.Turn}) // strings always encode
	return string(b)
}

// AbortListenerOptions tunes an [AbortListener]; nil means all defaults.
type AbortListenerOptions struct {
	// RetryDelay is the pause before reconnecting after the listening
	// connection failed; 0 means 100 ms.
	RetryDelay time.Duration
	// OnListen, when set, is called each time the listener is listening
	// again: after LISTEN succeeded and the catch-up read that follows it
	// ran (tests and metrics wait for it).
	OnListen func()
	// Logger receives connection failures; nil means [slog.Default]().
	Logger *slog.Logger
	// Cards, when set, also receives the card closes committed by any
	// instance: the listener LISTENs on [CardChannel] too, calls
	// Cards.Notify for each close, and Cards.NotifyAll after each
	// (re)connection, so that a close missed meanwhile is read again by
	// the waiters (docs/contract.md section 13.2, item 8).
	Cards *interactions.Resolver
}

// AbortListener carries cancellations across instances (docs/contract.md
// section 13.4): a cancellation committed by [recovery.TurnRecovery.Cancel]
// in any process reaches the abort hook of every process that runs an
// execution of the turn. It holds one listening connection of its own
// (LISTEN [AbortChannel]): use one AbortListener per process, connected
// directly to the primary or through a pooler in session mode.
//
// The executions to reach are the ones this process registered, through
// [AbortListener.Launcher] or [AbortListener.Watch], and the turns it runs
// ([AbortListener.WatchTurn]). On a notification for a watched turn, and
// for every watched turn whose committed status is cancelled when it
// (re)connects, the listener calls the [recovery.Aborter] with the effects
// watched in this process, only after the cancellation committed. The
// Aborter must be idempotent: the process that cancelled calls it too.
// With [AbortListenerOptions].Cards it carries card closes on the same
// connection.
//
// Its methods are safe for concurrent use.
type AbortListener struct {
	cfg      *pgx.ConnConfig
	store    *RecoveryStore
	aborter  recovery.Aborter
	retry    time.Duration
	onListen func()
	log      *slog.Logger
	cards    *interactions.Resolver

	mu      sync.Mutex
	watched map[recovery.TurnRef]map[string]int
	turns   map[recovery.TurnRef]int // watched by WatchTurn

	connects atomic.Int64
}

// NewAbortListener returns a listener that connects with cfg (use the
// ConnConfig of the host's pool: pool.Config().ConnConfig), reads turns
// through store and aborts through aborter. It returns an error for a nil
// cfg, and for a nil store or aborter, unless both are nil and opts.Cards
// is set (a host that only carries card closes). Call Run to listen.
func NewAbortListener(cfg *pgx.ConnConfig, store *RecoveryStore, aborter recovery.Aborter, opts *AbortListenerOptions) (*AbortListener, error) {
	cardsOnly := opts != nil && opts.Cards != nil && store == nil && aborter == nil
	if cfg == nil || (!cardsOnly && (store == nil || aborter == nil)) {
		return nil, errors.New("pgstore: NewAbortListener needs a ConnConfig, a store and an aborter")
	}
	l := &AbortListener{cfg: cfg.Copy(), store: store, aborter: aborter, retry: 100 * time.Millisecond,
		log: slog.Default(), watched: map[recovery.TurnRef]map[string]int{}, turns: map[recovery.TurnRef]int{}}
	if l.cfg.RuntimeParams == nil {
		l.cfg.RuntimeParams = map[string]string{}
	}
	l.cfg.RuntimeParams["application_name"] = "pgstore-abort-listener"
	if opts != nil {
		if opts.RetryDelay > 0 {
			l.retry = opts.RetryDelay
		}
		l.onListen = opts.OnListen
		if opts.Logger != nil {
			l.log = opts.Logger
		}
		l.cards = opts.Cards
	}
	return l, nil
}

// WatchTurn registers turn as running in this process until stop is
// called (stop is idempotent): its cancellation, committed by any
// instance, then calls the Aborter even while none of its effects is in
// flight, so that the turn's model loop stops too (package turn's Runs ends its
// Context). Call it before that package's Start: a cancellation committed before
// that is seen by Start, one after it by the listener.
func (l *AbortListener) WatchTurn(turn recovery.TurnRef) (stop func()) {
	l.mu.Lock()
	l.turns[turn]++
	l.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			l.mu.Lock()
			defer l.mu.Unlock()
			if l.turns[turn]--; l.turns[turn] <= 0 {
				delete(l.turns, turn)
			}
		})
	}
}

// Watch registers effect as running in this process until stop is
// called; stop is idempotent. A host that launches without Launcher calls
// it from its Launch, before the execution starts.
func (l *AbortListener) Watch(effect recovery.EffectRef) (stop func()) {
	l.mu.Lock()
	m := l.watched[effect.Turn]
	if m == nil {
		m = map[string]int{}
		l.watched[effect.Turn] = m
	}
	m[effect.Effect]++
	l.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			l.mu.Lock()
			defer l.mu.Unlock()
			if m := l.watched[effect.Turn]; m != nil {
				if m[effect.Effect]--; m[effect.Effect] <= 0 {
					delete(m, effect.Effect)
				}
				if len(m) == 0 {
					delete(l.watched, effect.Turn)
				}
			}
		})
	}
}

// Launcher wraps inner so that each execution it starts is watched from
// before its Launch until its Wait returned.
func (l *AbortListener) Launcher(inner recovery.Launcher) recovery.Launcher {
	return recovery.LauncherFunc(func(ctx context.Context, effect recovery.EffectRef) (recovery.Execution, error) {
		stop := l.Watch(effect)
		exec, err := inner.Launch(ctx, effect)
		if err != nil || exec == nil {
			stop()
			return exec, err
		}
		return watchedExecution{exec: exec, stop: stop}, nil
	})
}

// watchedExecution stops watching its effect when Wait returns.
type watchedExecution struct {
	exec recovery.Execution
	stop func()
}

func (w watchedExecution) Wait(ctx context.Context) (recovery.Result, error) {
	res, err := w.exec.Wait(ctx)
	if ctx.Err() == nil {
		w.stop() // the outcome is known: nothing left to abort
	}
	return res, err
}

// watchedEffects returns the effects of turn watched now, and whether the
// turn is watched at all (an effect of it, or the turn by WatchTurn).
func (l *AbortListener) watchedEffects(turn recovery.TurnRef) ([]string, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	_, whole := l.turns[turn]
	effects := l.watched[turn]
	return slices.Collect(maps.Keys(effects)), whole || effects != nil
}

// watchedTurns returns the turns watched now.
func (l *AbortListener) watchedTurns() []recovery.TurnRef {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := slices.Collect(maps.Keys(l.watched))
	for turn := range l.turns {
		if l.watched[turn] == nil {
			out = append(out, turn)
		}
	}
	return out
}

// Connects returns how many times the listener connected so far.
func (l *AbortListener) Connects() int { return int(l.connects.Load()) }

// Run listens until ctx ends, reconnecting after any failure (after
// RetryDelay), and returns ctx's error.
func (l *AbortListener) Run(ctx context.Context) error {
	for {
		err := l.session(ctx)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		l.log.Warn("pgstore: abort listener connection lost; reconnecting", "err", err)
		t := time.NewTimer(l.retry)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
	}
}

// session is one listening connection: connect, LISTEN, catch up, then
// abort on each notification until the connection fails.
func (l *AbortListener) session(ctx context.Context) error {
	conn, err := pgx.ConnectConfig(ctx, l.cfg)
	if err != nil {
		return err
	}
	defer func() { _ = conn.Close(context.WithoutCancel(ctx)) }()
	listen := "LISTEN " + AbortChannel
	if l.cards != nil {
		listen += "; LISTEN " + CardChannel
	}
	if _, err := conn.Exec(ctx, listen); err != nil {
		return err
	}
	l.connects.Add(1)
	if l.cards != nil {
		l.cards.NotifyAll() // closes sent while no connection listened
	}
	if err := l.catchUp(ctx); err != nil {
		return err // reconnect, and read again
	}
	if l.onListen != nil {
		l.onListen()
	}
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			return err
		}
		var ids [2]string
		if json.Unmarshal([]byte(n.Payload), &ids) != nil {
			continue // not ours
		}
		if n.Channel == CardChannel {
			l.cards.Notify(interactions.Key{Conversation: ids[0], CorrelationID: ids[1]})
			continue
		}
		turn := recovery.TurnRef{Conversation: ids[0], Turn: ids[1]}
		if effects, ok := l.watchedEffects(turn); ok {
			l.abort(ctx, turn, effects)
		}
	}
}

// catchUp aborts every watched turn whose committed status is cancelled:
// the cancellations whose notification may have been missed.
// A turn that cannot be read fails the catch-up, and so the session: the
// next one reads it again.
func (l *AbortListener) catchUp(ctx context.Context) error {
	if l.store == nil {
		return nil
	}
	for _, turn := range l.watchedTurns() {
		rec, err := l.store.LoadTurn(ctx, turn)
		switch {
		case err != nil && refusal.CodeOf(err) != refusal.CodeTurnNotRunning:
			return err
		case err != nil || rec.Status != recovery.TurnCancelled:
			continue
		}
		if effects, ok := l.watchedEffects(turn); ok {
			l.abort(ctx, turn, effects)
		}
	}
	return nil
}

func (l *AbortListener) abort(ctx context.Context, turn recovery.TurnRef, effects []string) {
	if l.aborter == nil {
		return
	}
	if err := l.aborter.Abort(ctx, turn, effects); err != nil {
		l.log.Warn("pgstore: abort hook failed", "conversation", turn.Conversation, "turn", turn.Turn, "err", err)
	}
}
