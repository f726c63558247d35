package pgstore

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	chatprotocol "github.com/Papercusp/chat-protocol-go"
	"github.com/Papercusp/chat-protocol-go/interactions"
	"github.com/Papercusp/chat-protocol-go/recovery"
)

// abortRecord is an Aborter that records its calls.
type abortRecord struct {
	mu    sync.Mutex
	calls map[recovery.TurnRef][][]string
}

func (a *abortRecord) Abort(_ context.Context, turn recovery.TurnRef, inFlight []string) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.calls[turn] = append(a.calls[turn], inFlight)
	return nil
}

func (a *abortRecord) of(turn recovery.TurnRef) [][]string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.calls[turn]
}

// TestAbortListenerWatchTurn: a turn watched with WatchTurn, none of whose
// effects runs here, is aborted when another instance cancels it (with
// no effect in flight), also when the cancellation commits while the
// listening connection is down (the catch-up read after the
// reconnection); a turn not watched, or no longer, is not.
func TestAbortListenerWatchTurn(t *testing.T) {
	needDB(t)
	ctx := t.Context()
	st := newRecoveryStore(t, poolOpts{})
	pool := newPool(t, poolOpts{})
	rec := &abortRecord{calls: map[recovery.TurnRef][][]string{}}
	var listens atomic.Int64
	l, err := NewAbortListener(pool.Config().ConnConfig, st, rec, &AbortListenerOptions{
		RetryDelay: 500 * time.Millisecond, Logger: slog.New(slog.DiscardHandler),
		OnListen: func() { listens.Add(1) },
	})
	require.NoError(t, err)
	lctx, stop := context.WithCancel(context.Background())
	ran := make(chan struct{})
	go func() { defer close(ran); _ = l.Run(lctx) }()
	t.Cleanup(func() { stop(); <-ran })
	require.Eventually(t, func() bool { return listens.Load() == 1 }, 10*time.Second, time.Millisecond)

	// Another instance: its own store and pool, no aborter of its own.
	other := recovery.New(recovery.Host{Store: newRecoveryStore(t, poolOpts{}), Authorizer: allowAll{}}, nil)
	conv := "watchturn-" + randomSuffix()
	turn := func(name string) recovery.TurnRef {
		ref := recovery.TurnRef{Conversation: conv, Turn: name}
		_, err := other.Start(ctx, "host", ref, []string{"tool-1"})
		require.NoError(t, err)
		return ref
	}
	watched, unwatched, released := turn("watched"), turn("unwatched"), turn("released")
	defer l.WatchTurn(watched)()
	stopReleased := l.WatchTurn(released)
	stopReleased()
	stopReleased() // idempotent

	for _, ref := range []recovery.TurnRef{unwatched, released, watched} {
		require.NoError(t, other.Cancel(ctx, "host", ref))
	}
	require.Eventually(t, func() bool { return len(rec.of(watched)) == 1 }, 10*time.Second, time.Millisecond, "the watched turn is aborted")
	assert.Empty(t, rec.of(watched)[0], "no effect of it ran here")
	assert.Empty(t, rec.of(unwatched), "a turn not watched is not aborted")
	assert.Empty(t, rec.of(released), "a turn no longer watched is not aborted")

	// Cancelled while the listener is away: the catch-up read aborts it.
	late := turn("late")
	defer l.WatchTurn(late)()
	admin := newPool(t, poolOpts{})
	var n int
	require.NoError(t, admin.QueryRow(ctx, `SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
		WHERE application_name = 'pgstore-abort-listener' AND datname = current_database()`).Scan(&n))
	require.Equal(t, 1, n)
	require.Eventually(t, func() bool {
		require.NoError(t, admin.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity
			WHERE application_name = 'pgstore-abort-listener' AND datname = current_database()`).Scan(&n))
		return n == 0
	}, 10*time.Second, time.Millisecond)
	require.NoError(t, other.Cancel(ctx, "host", late))
	require.Eventually(t, func() bool { return len(rec.of(late)) == 1 }, 10*time.Second, time.Millisecond, "aborted by the catch-up")
	require.Eventually(t, func() bool { return listens.Load() == 2 }, 10*time.Second, time.Millisecond, "the catch-up ran after the reconnection")
	assert.Len(t, rec.of(watched), 2, "the catch-up aborts the watched cancelled turn again (abort is idempotent)")
}

// TestNewAbortListenerArguments: a ConnConfig is always needed; a store and
// an aborter too, unless the listener only carries card closes.
func TestNewAbortListenerArguments(t *testing.T) {
	cfg, err := pgx.ParseConfig("postgres://u@127.0.0.1:1/db")
	require.NoError(t, err)
	st := &RecoveryStore{}
	res, err := interactions.New(interactions.NewMemoryStore(nil, nil), acceptAll, &interactions.Options{CardRules: chatprotocol.ValidateCardSpec})
	require.NoError(t, err)
	cards := &AbortListenerOptions{Cards: res}
	_, err = NewAbortListener(nil, st, &abortRecord{}, nil)
	assert.Error(t, err, "no ConnConfig")
	_, err = NewAbortListener(cfg, nil, &abortRecord{}, nil)
	assert.Error(t, err, "no store")
	_, err = NewAbortListener(cfg, st, nil, cards)
	assert.Error(t, err, "a store without an aborter, even with Cards")
	_, err = NewAbortListener(cfg, nil, nil, nil)
	assert.Error(t, err, "neither, without Cards")
	_, err = NewAbortListener(cfg, nil, nil, cards)
	assert.NoError(t, err, "cards only")
	_, err = NewAbortListener(cfg, st, &abortRecord{}, cards)
	assert.NoError(t, err, "both")
}
