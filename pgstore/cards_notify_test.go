package pgstore

import (
	"context"
	"encoding/json"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	chatprotocol "github.com/Papercusp/chat-protocol-go"
	"github.com/Papercusp/chat-protocol-go/cards"
	"github.com/Papercusp/chat-protocol-go/interactions"
	"github.com/Papercusp/chat-protocol-go/refusal"
)

// readCounter is an interactions.Store that counts the reads of one card,
// so that a test knows when a Wait has read it pending.
type readCounter struct {
	interactions.Store
	mu    sync.Mutex
	reads map[interactions.Key]int
}

func (c *readCounter) Read(ctx context.Context, key interactions.Key, caller *interactions.Caller) (interactions.Current, error) {
	cur, err := c.Store.Read(ctx, key, caller)
	c.mu.Lock()
	c.reads[key]++
	c.mu.Unlock()
	return cur, err
}

func (c *readCounter) count(key interactions.Key) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.reads[key]
}

// cardNotices listens on CardChannel on a connection of the test's own
// and records every payload.
type cardNotices struct {
	mu  sync.Mutex
	got []string
}

func listenCards(t *testing.T) *cardNotices {
	t.Helper()
	conn, err := pgx.Connect(t.Context(), testDSN)
	require.NoError(t, err)
	_, err = conn.Exec(t.Context(), "LISTEN "+CardChannel)
	require.NoError(t, err)
	n := &cardNotices{}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			msg, err := conn.WaitForNotification(ctx)
			if err != nil {
				return
			}
			n.mu.Lock()
			n.got = append(n.got, msg.Payload)
			n.mu.Unlock()
		}
	}()
	t.Cleanup(func() { cancel(); <-done; _ = conn.Close(context.Background()) })
	return n
}

func (n *cardNotices) all() []string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return slices.Clone(n.got)
}

// TestCardClosesAcrossInstances: a card closed on instance B (its own pool
// and Resolver) wakes a Resolver.Wait on instance A, whose AbortListener
// carries CardChannel into Resolver.Notify, for every kind of close; the
// notification is sent at the commit of a close only (not for an open,
// a revision or a refused answer); and a close committed while A's
// listening connection is down is caught up after the reconnection
// (NotifyAll: the waiters read again). The two instances share this test
// process, each with its own pool and its own sessions: the notification
// travels through the server as between processes.
func TestCardClosesAcrossInstances(t *testing.T) {
	f := newCardFixture(t, pgx.ReadCommitted, "")
	ctx := t.Context()
	notices := listenCards(t)
	const conv = "xcards"
	person := interactions.Caller{Principal: "p-xcards"}
	require.NoError(t, hostGrant(ctx, f.admin, person, conv))

	// Instance A: the waiting host, its listener carrying card closes.
	storeA := &readCounter{Store: f.open(), reads: map[interactions.Key]int{}}
	resA, err := interactions.New(storeA, acceptAll, &interactions.Options{CardRules: chatprotocol.ValidateCardSpec})
	require.NoError(t, err)
	poolA := newPool(t, poolOpts{searchPath: f.schema})
	var listens atomic.Int64
	var listenedAt sync.Map // connection number → time
	l, err := NewAbortListener(poolA.Config().ConnConfig, nil, nil, &AbortListenerOptions{
		Cards: resA, RetryDelay: time.Second, Logger: slog.New(slog.DiscardHandler),
		OnListen: func() { listenedAt.Store(listens.Add(1), time.Now()) },
	})
	require.NoError(t, err)
	lctx, stop := context.WithCancel(context.Background())
	ran := make(chan struct{})
	go func() { defer close(ran); _ = l.Run(lctx) }()
	t.Cleanup(func() { stop(); <-ran })
	require.Eventually(t, func() bool { return listens.Load() == 1 }, 10*time.Second, time.Millisecond)

	// Instance B: where the person's answer and the backend's closes land.
	// Its sweeper's clock is an hour ahead, so that it may expire a card
	// whose deadline A's Wait is still far from.
	storeB := f.open()
	resB, err := interactions.New(storeB, acceptAll, &interactions.Options{CardRules: chatprotocol.ValidateCardSpec})
	require.NoError(t, err)
	sweeperB, err := interactions.New(storeB, acceptAll, &interactions.Options{CardRules: chatprotocol.ValidateCardSpec,
		Clock: func() time.Time { return time.Now().Add(time.Hour) }})
	require.NoError(t, err)

	open := func(id string, timeout time.Duration) interactions.Key {
		key := interactions.Key{Conversation: conv, CorrelationID: id}
		_, err := resA.Open(ctx, interactions.NewCard{Key: key, Answerer: person,
			Spec: cards.CardSpec{Prompt: "ok?", AllowDecline: true, TimeoutMs: timeout.Milliseconds()}, Schema: interactions.SchemaRef{ID: "s", Revision: 1}})
		require.NoError(t, err)
		return key
	}
	type waited struct {
		v        interactions.View
		err      error
		at       time.Time
		connects int // the listener's connections when Wait returned
	}
	// waitOnA starts A's Wait and returns once it has read the card pending.
	waitOnA := func(key interactions.Key) <-chan waited {
		before := storeA.count(key)
		out := make(chan waited, 1)
		go func() {
			v, err := resA.Wait(ctx, key)
			out <- waited{v, err, time.Now(), l.Connects()}
		}()
		require.Eventually(t, func() bool { return storeA.count(key) > before }, 10*time.Second, time.Millisecond, "the waiter read %v", key)
		return out
	}
	answer := func(key interactions.Key, action cards.CardAction) error {
		resp := cards.CardResponse{Action: action, CorrelationID: key.CorrelationID}
		if action == cards.CardActionSubmit {
			resp.Value = json.RawMessage(`{"optionId":"yes"}`)
		}
		_, err := resB.Answer(ctx, person, key, interactions.Submission{ID: "sub-" + key.CorrelationID, Response: resp})
		return err
	}

	closes := []struct {
		name   string
		close  func(key interactions.Key) error
		status interactions.Status
	}{
		{"answer", func(k interactions.Key) error { return answer(k, cards.CardActionSubmit) }, interactions.StatusAnswered},
		{"decline", func(k interactions.Key) error { return answer(k, cards.CardActionDecline) }, interactions.StatusDeclined},
		{"cancel response", func(k interactions.Key) error { return answer(k, cards.CardActionCancel) }, interactions.StatusCancelled},
		{"backend cancel", func(k interactions.Key) error { _, err := resB.Cancel(ctx, k, "turn cancelled"); return err }, interactions.StatusCancelled},
		{"supersede", func(k interactions.Key) error { _, err := resB.Supersede(ctx, k, k.CorrelationID+"-next"); return err }, interactions.StatusSuperseded},
		{"expire", func(k interactions.Key) error { _, err := sweeperB.Expire(ctx, k); return err }, interactions.StatusExpired},
	}
	var latencies []time.Duration
	var want []string
	for i, tc := range closes {
		key := open("card-"+strconv.Itoa(i), 10*time.Minute)
		_, err := resA.Revise(ctx, key, cards.CardSpec{Prompt: "ok, really?", AllowDecline: true, TimeoutMs: (10 * time.Minute).Milliseconds()},
			interactions.SchemaRef{ID: "s", Revision: 1})
		require.NoError(t, err, "%s: a revision, which closes nothing", tc.name)
		w := waitOnA(key)
		start := time.Now()
		require.NoError(t, tc.close(key), tc.name)
		want = append(want, cardPayload(key))
		select {
		case got := <-w:
			require.NoError(t, got.err, tc.name)
			assert.Equal(t, tc.status, got.v.Status, tc.name)
			assert.Equal(t, tc.status, got.v.Record.Status, "%s: the stored record, read after the wake", tc.name)
			latencies = append(latencies, got.at.Sub(start))
		case <-time.After(10 * time.Second):
			t.Fatalf("%s on B did not wake the Wait on A", tc.name)
		}
		// A refused answer (the card is closed) rolls back: no notice.
		err = answer(key, cards.CardActionSubmit)
		require.Error(t, err, tc.name)
		require.NotEqual(t, refusal.Code(""), refusal.CodeOf(err))
	}
	slices.Sort(latencies)
	for _, d := range latencies {
		assert.Less(t, d, 2*time.Second, "a close on B wakes A's Wait within 2 s")
	}

	// The listener's connection is cut; a close committed before it is
	// back wakes the waiter after the reconnection, by the catch-up.
	key := open("card-after-cut", 0)
	w := waitOnA(key)
	var cut int
	require.NoError(t, f.admin.QueryRow(ctx, `SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
		WHERE application_name = 'pgstore-abort-listener' AND datname = current_database()`).Scan(&cut))
	require.Equal(t, 1, cut, "one listening connection")
	require.Eventually(t, func() bool {
		var n int
		require.NoError(t, f.admin.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity
			WHERE application_name = 'pgstore-abort-listener' AND datname = current_database()`).Scan(&n))
		return n == 0
	}, 10*time.Second, time.Millisecond)
	closedAt := time.Now()
	require.NoError(t, answer(key, cards.CardActionSubmit))
	require.Equal(t, 1, l.Connects(), "the close committed before the listener reconnected")
	want = append(want, cardPayload(key))
	var got waited
	select {
	case got = <-w:
	case <-time.After(10 * time.Second):
		t.Fatal("the close made while the listener was away never woke the Wait")
	}
	require.NoError(t, got.err)
	assert.Equal(t, interactions.StatusAnswered, got.v.Status)
	assert.Equal(t, 2, got.connects, "the Wait woke once the listener had reconnected")
	require.Eventually(t, func() bool { return listens.Load() == 2 }, 10*time.Second, time.Millisecond)
	relisten, _ := listenedAt.Load(int64(2))

	require.Eventually(t, func() bool { return len(notices.all()) >= len(want) }, 10*time.Second, time.Millisecond)
	time.Sleep(50 * time.Millisecond) // a notice too many would come now
	assert.Equal(t, want, notices.all(), "one notice per close, in commit order; none for an open, a revision or a refused answer")
	for _, p := range notices.all() {
		assert.LessOrEqual(t, len(p), 8000)
	}
	t.Logf("card closes on B waking a Wait on A: %d kinds, latency min %v, max %v; after a cut of the listener: woke %v after the close, %v after the reconnection",
		len(latencies), latencies[0], latencies[len(latencies)-1], got.at.Sub(closedAt), got.at.Sub(relisten.(time.Time)))
}

// TestCardNotifyPayload: the payload names the card, ids only, also for
// the longest ids of the most escaped bytes.
func TestCardNotifyPayload(t *testing.T) {
	worst := strings.Repeat("\x01", interactions.MaxIDBytes) // 6 bytes each in JSON
	for _, key := range []interactions.Key{{Conversation: "c", CorrelationID: "card-1"}, {Conversation: worst, CorrelationID: worst}} {
		p := cardPayload(key)
		assert.LessOrEqual(t, len(p), 8000)
		var ids [2]string
		require.NoError(t, json.Unmarshal([]byte(p), &ids))
		assert.Equal(t, [2]string{key.Conversation, key.CorrelationID}, ids)
	}
}
