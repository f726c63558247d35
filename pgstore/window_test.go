package pgstore

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	chatprotocol "github.com/Papercusp/chat-protocol-go"
	"github.com/Papercusp/chat-protocol-go/internal/testkit/cutproxy"
	"github.com/Papercusp/chat-protocol-go/refusal"
	"github.com/Papercusp/chat-protocol-go/replay"
	"github.com/Papercusp/chat-protocol-go/replay/replaytest"
)

// newTestWindow returns a Window on a pool of the test database (session
// isolation iso), both closed when t ends. The periodic catch-up read is
// off unless opts sets it, so that the notifications alone must wake
// every Wait of the kit.
func newTestWindow(t testing.TB, iso pgx.TxIsoLevel, opts WindowOptions) *Window {
	t.Helper()
	pool := newPool(t, poolOpts{iso: iso, maxConns: 8})
	if opts.CatchUpInterval == 0 {
		opts.CatchUpInterval = -1
	}
	w, err := NewWindow(pool, &opts)
	require.NoError(t, err)
	t.Cleanup(w.Close)
	return w
}

// TestWindowConformance runs replaytest.TestWindow on a Window under read
// committed and serializable, with notifications alone waking each Wait;
// window_instances_test.go follows turns on three instances through cut
// connections and killed processes.
func TestWindowConformance(t *testing.T) {
	for _, iso := range isolations {
		t.Run(isoName(iso), func(t *testing.T) {
			needDB(t)
			replaytest.TestWindow(t, replaytest.Config{
				NewSubject:   windowSubject(iso, WindowOptions{}),
				NewRetaining: retainingSubject(iso),
				Readers:      200,
				Timeout:      10 * time.Second,
			})
		})
	}
}

// TestWindowFlawNotifyEarlyCaught: a window that notifies before its
// commit fails the conformance kit: its readers wake, read before the
// frame is visible, and wait for a notification that never comes.
func TestWindowFlawNotifyEarlyCaught(t *testing.T) {
	needDB(t)
	err := replaytest.Check(t.Context(), replaytest.Config{
		NewSubject: windowSubject(pgx.ReadCommitted, WindowOptions{flaws: windowFlaws{notifyEarly: true, notifyEarlyBy: 30 * time.Millisecond}}),
		Readers:    20,
		Timeout:    time.Second,
	})
	require.Error(t, err, "the kit passes a window that notifies before commit")
	failed := failedChecks(err)
	t.Logf("checks failed by the notify-before-commit window: %v", failed)
	require.Subset(t, []string{"wait-wakes-on-append", "wait-wakes-on-end", "wait-unknown-turn", "isolation", "fan-out"}, failed,
		"only the checks whose readers wait for an append fail")
	require.NotEmpty(t, failed)
}

// failedChecks names the checks of replaytest.Check's error.
func failedChecks(err error) []string {
	var names []string
	for _, e := range err.(interface{ Unwrap() []error }).Unwrap() {
		if ce, ok := errors.AsType[*replaytest.CheckError](e); ok {
			names = append(names, ce.Check)
		}
	}
	return names
}

// lostNotification cuts the listener's connection of a reader's window
// while it waits, holds it away while another instance appends (so the
// notification reaches no one), and lets it reconnect: it returns the
// bounds the Wait returned, or its error after 3 s.
func lostNotification(t *testing.T, flaws windowFlaws, catchUp time.Duration, reconnect bool) (replay.Bounds, error) {
	t.Helper()
	writer := newTestWindow(t, pgx.ReadCommitted, WindowOptions{})
	proxy, cfg := listenProxy(t)
	reader := newTestWindow(t, pgx.ReadCommitted, WindowOptions{ListenConfig: cfg, CatchUpInterval: catchUp, flaws: flaws})
	require.Eventually(t, func() bool { return reader.lis.connects.Load() == 1 }, 5*time.Second, time.Millisecond)

	key := replay.Key{ConversationID: "c-lost-" + randomSuffix(), TurnID: "t"}
	_, err := writer.Append(t.Context(), key, testEnvelope(key, 1, "one"))
	require.NoError(t, err)
	// The notification of seq 1 is in before the Wait starts: nothing
	// but a catch-up read can wake it.
	require.Eventually(t, func() bool { return reader.lis.notifications.Load() == 1 }, 5*time.Second, time.Millisecond)
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Second)
	defer cancel()
	done := make(chan waitOutcome, 1)
	go func() {
		b, err := reader.Wait(ctx, key, 1)
		done <- waitOutcome{b, err}
	}()
	require.Eventually(t, func() bool { return reader.lis.watching(key) }, 5*time.Second, time.Millisecond)

	proxy.Hold(true)
	require.Equal(t, 1, proxy.CutAll(), "the listener's one connection is cut")
	require.Eventually(t, func() bool { return reader.lis.conn.Load() == nil }, 5*time.Second, time.Millisecond)
	_, err = writer.Append(t.Context(), key, testEnvelope(key, 2, "two"))
	require.NoError(t, err)
	if reconnect {
		proxy.Hold(false)
		require.Eventually(t, func() bool { return reader.lis.connects.Load() == 2 }, 5*time.Second, time.Millisecond)
	}
	res := <-done
	return res.b, res.err
}

type waitOutcome struct {
	b   replay.Bounds
	err error
}

func TestWindowCatchUpAfterListenerCut(t *testing.T) {
	needDB(t)
	t.Run("reconnect", func(t *testing.T) {
		b, err := lostNotification(t, windowFlaws{}, -1, true)
		require.NoError(t, err, "the catch-up read after the listener reconnected finds the frame")
		require.Equal(t, replay.Bounds{Latest: 2}, b)
	})
	t.Run("periodic-while-away", func(t *testing.T) {
		b, err := lostNotification(t, windowFlaws{}, 200*time.Millisecond, false)
		require.NoError(t, err, "the periodic catch-up read finds the frame while the listener is away")
		require.Equal(t, replay.Bounds{Latest: 2}, b)
	})
	t.Run("flaw-no-catch-up", func(t *testing.T) {
		_, err := lostNotification(t, windowFlaws{noCatchUp: true}, 200*time.Millisecond, true)
		require.ErrorIs(t, err, context.DeadlineExceeded, "a window without catch-up reads waits forever on a committed frame")
	})
}

// TestWindowWaitReadsFirst: a Wait that starts after the frame it waits
// for was committed, and its notification already delivered, returns at
// once, from its first catch-up read; the window without catch-up reads
// blocks. (The kit catches that flaw too, but only when a notification
// lands after the Wait registered, a race: its "ended", "wait-lost-wakeup"
// and "wait-wakes-on-end" checks fail in most runs, not all.)
func TestWindowWaitReadsFirst(t *testing.T) {
	needDB(t)
	wait := func(t *testing.T, flaws windowFlaws) (replay.Bounds, error) {
		w := newTestWindow(t, pgx.ReadCommitted, WindowOptions{flaws: flaws})
		require.Eventually(t, func() bool { return w.lis.connects.Load() == 1 }, 5*time.Second, time.Millisecond)
		key := replay.Key{ConversationID: "c-first-" + randomSuffix(), TurnID: "t"}
		_, err := w.Append(t.Context(), key, testEnvelope(key, 1, "one"))
		require.NoError(t, err)
		_, err = w.Append(t.Context(), key, testEnvelope(key, 2, "")) // the end
		require.NoError(t, err)
		require.Eventually(t, func() bool { return w.lis.notifications.Load() == 2 }, 5*time.Second, time.Millisecond)
		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		defer cancel()
		return w.Wait(ctx, key, 1)
	}
	b, err := wait(t, windowFlaws{})
	require.NoError(t, err)
	require.Equal(t, replay.Bounds{Latest: 2, Ended: true}, b)
	_, err = wait(t, windowFlaws{noCatchUp: true})
	require.ErrorIs(t, err, context.DeadlineExceeded, "without its first read, a Wait blocks on a committed frame")
}

// listenProxy is a cutting proxy in front of the test server and the
// connection configuration of a listener through it.
func listenProxy(t *testing.T) (*cutproxy.Proxy, *pgx.ConnConfig) {
	t.Helper()
	cfg, err := pgx.ParseConfig(testDSN)
	require.NoError(t, err)
	proxy := startCutProxy(t, nil, net.JoinHostPort(cfg.Host, strconv.Itoa(int(cfg.Port))))
	host, port, err := splitHostPort(proxy.Addr())
	require.NoError(t, err)
	cfg.Host, cfg.Port, cfg.Fallbacks = host, port, nil
	return proxy, cfg
}

// startCutProxy starts a cutting proxy (opts: nil forwards without
// cutting) that sends each new connection to the next of targets in turn,
// closed when t ends.
func startCutProxy(t testing.TB, opts *cutproxy.Options, targets ...string) *cutproxy.Proxy {
	t.Helper()
	p, err := cutproxy.New("", opts)
	require.NoError(t, err)
	p.SetTargets(targets...)
	t.Cleanup(func() { _ = p.Close() })
	return p
}

func randomSuffix() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// testEnvelope is a delta of key's turn at seq, or its end when text is "".
func testEnvelope(key replay.Key, seq int64, text string) *chatprotocol.ChatEventEnvelope {
	var ev chatprotocol.Event = &chatprotocol.DeltaEvent{Text: text}
	if text == "" {
		ev = &chatprotocol.LifecycleEvent{Status: chatprotocol.LifecycleCompleted}
	}
	return &chatprotocol.ChatEventEnvelope{ConversationID: key.ConversationID, TurnID: key.TurnID,
		EventID: "e-" + strconv.FormatInt(seq, 10), Seq: seq, Event: ev}
}

func TestWindowTrim(t *testing.T) {
	pool := newPool(t, poolOpts{})
	w, err := NewWindow(pool, &WindowOptions{TrimInterval: -1, MaxAge: time.Hour, EndedTTL: time.Minute, TombstoneTTL: 2 * time.Hour})
	require.NoError(t, err)
	t.Cleanup(w.Close)
	ctx := t.Context()
	conv := "c-trim-" + randomSuffix()
	ended, live, fresh := replay.Key{ConversationID: conv, TurnID: "ended"}, replay.Key{ConversationID: conv, TurnID: "live"}, replay.Key{ConversationID: conv, TurnID: "fresh"}
	for _, k := range []replay.Key{ended, live, fresh} {
		for seq := int64(1); seq <= 3; seq++ {
			text := "x"
			if seq == 3 && k == ended {
				text = ""
			}
			_, err := w.Append(ctx, k, testEnvelope(k, seq, text))
			require.NoError(t, err)
		}
	}
	backdate := func(k replay.Key, by string) {
		_, err := pool.Exec(ctx, "UPDATE pgstore_replay_turns SET appended_at = now() - $3::interval WHERE conversation_id = $1 AND turn_id = $2", k.ConversationID, k.TurnID, by)
		require.NoError(t, err)
	}
	backdate(ended, "2 minutes") // past EndedTTL
	backdate(live, "2 minutes")  // within MaxAge: kept
	r, err := w.Trim(ctx)
	require.NoError(t, err)
	require.GreaterOrEqual(t, r.Trimmed, int64(1))

	b, frames, err := w.Read(ctx, ended, 0, replay.DefaultPageBytes)
	require.ErrorIs(t, err, refusal.ErrStaleCursor)
	require.Empty(t, frames)
	require.Equal(t, replay.Bounds{Lower: 3, Latest: 3, Ended: true}, b, "the trimmed turn is a tombstone")
	b, frames, err = w.Read(ctx, live, 0, replay.DefaultPageBytes)
	require.NoError(t, err)
	require.Len(t, frames, 3)
	require.Equal(t, replay.Bounds{Latest: 3}, b)

	backdate(live, "90 minutes") // past MaxAge
	_, err = w.Trim(ctx)
	require.NoError(t, err)
	b, _, err = w.Read(ctx, live, 3, replay.DefaultPageBytes)
	require.NoError(t, err)
	require.Equal(t, replay.Bounds{Lower: 3, Latest: 3}, b)
	f, err := w.Append(ctx, live, testEnvelope(live, 4, "after the trim"))
	require.NoError(t, err, "a writer of a trimmed live turn continues at latest+1")
	require.Equal(t, int64(4), f.Seq)
	b, frames, err = w.Read(ctx, live, 3, replay.DefaultPageBytes)
	require.NoError(t, err)
	require.Equal(t, replay.Bounds{Lower: 3, Latest: 4}, b)
	require.Len(t, frames, 1)

	backdate(ended, "3 hours") // past TombstoneTTL
	r, err = w.Trim(ctx)
	require.NoError(t, err)
	require.GreaterOrEqual(t, r.Forgotten, int64(1))
	b, _, err = w.Read(ctx, ended, 0, replay.DefaultPageBytes)
	require.NoError(t, err)
	require.Equal(t, replay.Bounds{}, b, "a forgotten turn is unknown")
	b, frames, err = w.Read(ctx, fresh, 0, replay.DefaultPageBytes)
	require.NoError(t, err)
	require.Len(t, frames, 3, "a fresh turn is untouched")
	require.Equal(t, replay.Bounds{Latest: 3}, b)
}

func TestWindowCapabilities(t *testing.T) {
	w := &Window{}
	c := w.Capabilities()
	require.Equal(t, chatprotocol.ChatCapabilities{ConnectionReplay: true, PersistedHistory: true}, c)
	require.False(t, c.Has(chatprotocol.CapabilityInterruptedTurnRecovery), "restart recovery takes TurnRecovery")
}

func TestNotificationPayload(t *testing.T) {
	for _, key := range []replay.Key{
		{ConversationID: "c", TurnID: "t"},
		{ConversationID: "conv:1", TurnID: "turn:2"},
		{ConversationID: strings.Repeat("é", 128), TurnID: strings.Repeat("x", 256)},
	} {
		p := encodeNotification(key)
		require.LessOrEqual(t, len(p), 8000, "payloads stay under the server's limit")
		got, ok := parseNotification(p)
		require.True(t, ok)
		require.Equal(t, key, got)
	}
	for _, p := range []string{"", ":", "0:", "1:c", "2:c", "01:ct", "x:ct", "-1:ct", "9999:ct"} {
		_, ok := parseNotification(p)
		require.False(t, ok, "payload %q", p)
	}
}

func FuzzParseNotification(f *testing.F) {
	for _, s := range []string{"1:ct", "3:abcdef", "", ":", "01:x", "256:" + strings.Repeat("a", 300)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, payload string) {
		key, ok := parseNotification(payload)
		if ok {
			require.Equal(t, payload, encodeNotification(key), "a payload parsed is the one that encodes its key")
		}
	})
}
