package interactions_test

import (
	"context"
	"sync"
	"testing"
	"time"

	chatprotocol "github.com/Papercusp/chat-protocol-go"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Papercusp/chat-protocol-go/cards"
	"github.com/Papercusp/chat-protocol-go/interactions"
	"github.com/Papercusp/chat-protocol-go/interactions/interactionstest"
	"github.com/Papercusp/chat-protocol-go/refusal"
)

// closes records what OnClose received.
type closes struct {
	mu  sync.Mutex
	got []interactions.Result
}

func (c *closes) add(_ context.Context, res interactions.Result) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.got = append(c.got, res)
}

func (c *closes) all() []interactions.Result {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]interactions.Result(nil), c.got...)
}

// waitEnv is newEnv's database with a resolver that reports its closes.
func waitEnv(t *testing.T) (*env, *interactions.Resolver, *closes, *interactionstest.Store) {
	e := newEnv(t)
	c := &closes{}
	st := e.db.Open(nil)
	res, err := interactions.New(st, e.schemas, &interactions.Options{CardRules: chatprotocol.ValidateCardSpec, Clock: e.clock.Now, OnClose: c.add})
	require.NoError(t, err)
	return e, res, c, st
}

// waitAsync runs Wait on its own goroutine.
func waitAsync(ctx context.Context, res *interactions.Resolver, key interactions.Key) <-chan interactions.View {
	out := make(chan interactions.View, 1)
	go func() {
		v, err := res.Wait(ctx, key)
		if err != nil {
			close(out)
			return
		}
		out <- v
	}()
	return out
}

// Every terminal change wakes the card's waiters and is reported to
// OnClose once, with the stored record; opening and revising are not.
func TestWaitWakesOnEveryClose(t *testing.T) {
	ctx := t.Context()
	for _, tc := range []struct {
		name   string
		close  func(e *env, res *interactions.Resolver) error
		status interactions.Status
	}{
		{"answer", func(e *env, res *interactions.Resolver) error {
			_, err := res.Answer(ctx, alice, cardKey, submit("s-1", "a"))
			return err
		}, interactions.StatusAnswered},
		{"decline", func(e *env, res *interactions.Resolver) error {
			_, err := res.Answer(ctx, alice, cardKey, respond("s-1", cards.CardActionDecline))
			return err
		}, interactions.StatusDeclined},
		{"cancel response", func(e *env, res *interactions.Resolver) error {
			_, err := res.Answer(ctx, alice, cardKey, respond("s-1", cards.CardActionCancel))
			return err
		}, interactions.StatusCancelled},
		{"backend cancel", func(e *env, res *interactions.Resolver) error {
			_, err := res.Cancel(ctx, cardKey, "turn cancelled")
			return err
		}, interactions.StatusCancelled},
		{"supersede", func(e *env, res *interactions.Resolver) error {
			_, err := res.Supersede(ctx, cardKey, "card-2")
			return err
		}, interactions.StatusSuperseded},
		{"expire", func(e *env, res *interactions.Resolver) error {
			e.clock.Advance(cardTimeout)
			_, err := res.Expire(ctx, cardKey)
			return err
		}, interactions.StatusExpired},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, res, c, _ := waitEnv(t)
			_, err := res.Revise(ctx, cardKey, radioSpec(true), radioV1)
			require.NoError(t, err)
			woken := waitAsync(ctx, res, cardKey)
			require.Never(t, func() bool { return len(woken) > 0 }, 20*time.Millisecond, time.Millisecond, "a pending card does not wake")
			require.NoError(t, tc.close(e, res))
			select {
			case v := <-woken:
				assert.Equal(t, tc.status, v.Status)
				assert.Equal(t, e.stored(), v.Record)
			case <-time.After(5 * time.Second):
				t.Fatal("the waiter was not woken")
			}
			got := c.all()
			require.Len(t, got, 1, "one close reported, none for Revise")
			assert.Equal(t, tc.status, got[0].Record.Status)
			require.NotNil(t, got[0].Transition)
			assert.Equal(t, tc.status, got[0].Transition.Status)
		})
	}
}

// A close committed by another resolver (another instance) reaches this
// one's waiters through Notify; a closed card returns at once, with no
// close reported again; a refused answer reports nothing.
func TestWaitAcrossResolvers(t *testing.T) {
	ctx := t.Context()
	e, res, c, st := waitEnv(t)
	woken := waitAsync(ctx, res, cardKey)
	require.Eventually(t, func() bool { return st.Reads() == 1 }, 5*time.Second, time.Millisecond, "the waiter read the pending card")
	_, err := e.res.Answer(ctx, alice, cardKey, submit("s-1", "b")) // another resolver, no OnClose
	require.NoError(t, err)
	require.Never(t, func() bool { return len(woken) > 0 }, 20*time.Millisecond, time.Millisecond, "no notification yet")
	res.Notify(cardKey)
	select {
	case v := <-woken:
		assert.Equal(t, interactions.StatusAnswered, v.Status)
		assert.Equal(t, `{"optionId":"b"}`, string(v.Record.Answer.Value))
	case <-time.After(5 * time.Second):
		t.Fatal("Notify did not wake the waiter")
	}
	v, err := res.Wait(ctx, cardKey)
	require.NoError(t, err)
	assert.Equal(t, interactions.StatusAnswered, v.Status)
	_, err = res.Answer(ctx, alice, cardKey, submit("s-2", "a"))
	require.ErrorIs(t, err, refusal.ErrAlreadyAnswered)
	assert.Empty(t, c.all())
}

// NotifyAll wakes every waiter of the process: each reads its card again,
// the closed one returns, the pending one goes on waiting.
func TestNotifyAllRereads(t *testing.T) {
	ctx := t.Context()
	e, res, _, st := waitEnv(t)
	other := interactions.Key{Conversation: conv, CorrelationID: "card-other"}
	_, err := e.res.Open(ctx, interactions.NewCard{Key: other, Answerer: alice, Spec: radioSpec(true), Schema: radioV1})
	require.NoError(t, err)
	woken := waitAsync(ctx, res, cardKey)
	pending := waitAsync(ctx, res, other)
	require.Eventually(t, func() bool { return st.Reads() == 2 }, 5*time.Second, time.Millisecond, "both waiters read their card")
	_, err = e.res.Answer(ctx, alice, cardKey, submit("s-1", "a")) // another resolver, unreported here
	require.NoError(t, err)
	require.Never(t, func() bool { return len(woken) > 0 }, 20*time.Millisecond, time.Millisecond, "no notification yet")
	res.NotifyAll()
	select {
	case v := <-woken:
		assert.Equal(t, interactions.StatusAnswered, v.Status)
	case <-time.After(5 * time.Second):
		t.Fatal("NotifyAll did not wake the waiter")
	}
	require.Eventually(t, func() bool { return st.Reads() == 4 }, 5*time.Second, time.Millisecond, "both waiters read again")
	require.Never(t, func() bool { return len(pending) > 0 }, 20*time.Millisecond, time.Millisecond, "the pending card's waiter goes on waiting")
	_, err = e.res.Cancel(ctx, other, "done")
	require.NoError(t, err)
	res.Notify(other)
	select {
	case v := <-pending:
		assert.Equal(t, interactions.StatusCancelled, v.Status)
	case <-time.After(5 * time.Second):
		t.Fatal("the pending card's waiter was not woken")
	}
}

// A lost acknowledgement whose commit the one read finds is a close too.
func TestOnCloseAfterReconciledAck(t *testing.T) {
	e, res, c, st := waitEnv(t)
	st.Inject(interactionstest.Failpoint{Op: interactionstest.OpTransact, Fault: interactionstest.FaultLostAckCommitted})
	out, err := res.Answer(t.Context(), alice, cardKey, submit("s-1", "a"))
	require.NoError(t, err)
	require.True(t, out.Reconciled)
	got := c.all()
	require.Len(t, got, 1)
	assert.True(t, got[0].Reconciled)
	assert.Equal(t, e.stored(), got[0].Record)
}

// A card past its deadline returns expired without anyone storing the
// expiry; a Wait whose ctx ends returns its error; an unknown card is
// card-not-found.
func TestWaitDeadlineAndRefusals(t *testing.T) {
	ctx := t.Context()
	e, res, _, _ := waitEnv(t)
	short, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
	defer cancel()
	_, err := res.Wait(short, cardKey)
	require.ErrorIs(t, err, context.DeadlineExceeded)

	_, err = res.Wait(ctx, interactions.Key{Conversation: conv, CorrelationID: "nope"})
	require.ErrorIs(t, err, refusal.ErrCardNotFound)

	e.clock.Advance(cardTimeout)
	v, err := res.Wait(ctx, cardKey)
	require.NoError(t, err)
	assert.Equal(t, interactions.StatusExpired, v.Status)
	assert.Equal(t, interactions.StatusPending, v.Record.Status, "the expiry is not stored by a read")
}

// With the real clock, a waiter wakes at the card's deadline by itself.
func TestWaitWakesAtTheDeadline(t *testing.T) {
	ctx := t.Context()
	s := newSessions(nil)
	res, err := interactions.New(s.store, e2eSchemas(t), &interactions.Options{CardRules: chatprotocol.ValidateCardSpec})
	require.NoError(t, err)
	spec := radioSpec(false)
	spec.TimeoutMs = 30
	_, err = res.Open(ctx, interactions.NewCard{Key: cardKey, Answerer: alice, Spec: spec, Schema: radioV1})
	require.NoError(t, err)
	start := time.Now()
	v, err := res.Wait(ctx, cardKey)
	require.NoError(t, err)
	assert.Equal(t, interactions.StatusExpired, v.Status)
	assert.GreaterOrEqual(t, time.Since(start), 25*time.Millisecond)
}

func e2eSchemas(t *testing.T) interactions.Validator {
	e := newEnv(t)
	return e.schemas
}
