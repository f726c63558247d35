package interactions_test

import (
	"context"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Papercusp/chat-protocol-go/cards"
	"github.com/Papercusp/chat-protocol-go/interactions"
	"github.com/Papercusp/chat-protocol-go/refusal"
)

// I1: a duplicate answer — (a) the same submission again, (b) a different
// one after success, (c) two racing.
func TestI1DuplicateAnswer(t *testing.T) {
	ctx := context.Background()

	t.Run("a same submission again", func(t *testing.T) {
		e := newEnv(t)
		first, err := e.res.Answer(ctx, alice, cardKey, submit("s-1", "a"))
		require.NoError(t, err)
		require.NotNil(t, first.Transition)
		assert.Equal(t, interactions.StatusAnswered, first.Record.Status)
		assert.JSONEq(t, `{"optionId":"a"}`, string(first.Record.Answer.Value))

		// The retry, through another worker, is told it is a duplicate and
		// gets the stored record; nothing more is written.
		_, other := e.worker()
		again, err := other.Answer(ctx, alice, cardKey, submit("s-1", "a"))
		require.ErrorIs(t, err, refusal.ErrDuplicateAnswer)
		assert.Equal(t, first.Record, again.Record)
		assert.Nil(t, again.Transition)
		assert.Len(t, e.db.History(cardKey), 2)
		assert.Len(t, e.db.Transitions(cardKey), 1)
	})

	t.Run("b different submission after success", func(t *testing.T) {
		e := newEnv(t)
		_, err := e.res.Answer(ctx, alice, cardKey, submit("s-1", "a"))
		require.NoError(t, err)
		// Another submission's id is already-answered; this submission's
		// id with another action or value is idempotency-key-reused.
		for name, c := range map[string]struct {
			sub  interactions.Submission
			want refusal.Sentinel
		}{
			"other value":         {submit("s-1", "b"), refusal.ErrIdempotencyKeyReused},
			"same id, other verb": {respond("s-1", cards.CardActionCancel), refusal.ErrIdempotencyKeyReused},
			"other id":            {submit("s-2", "a"), refusal.ErrAlreadyAnswered},
			"decline":             {respond("s-3", cards.CardActionDecline), refusal.ErrAlreadyAnswered},
		} {
			res, err := e.res.Answer(ctx, alice, cardKey, c.sub)
			require.ErrorIs(t, err, c.want, name)
			assert.Zero(t, res, name)
		}
		assert.Equal(t, "s-1", e.stored().Answer.SubmissionID)
		assert.JSONEq(t, `{"optionId":"a"}`, string(e.stored().Answer.Value))
		assert.Len(t, e.db.Transitions(cardKey), 1)
	})

	t.Run("c two racing", func(t *testing.T) {
		for _, identical := range []bool{false, true} {
			e := newEnv(t)
			const n = 8
			errs := make([]error, n)
			var wg sync.WaitGroup
			start := make(chan struct{})
			for i := range n {
				_, res := e.worker()
				sub := submit("s-"+string(rune('a'+i)), []string{"a", "b"}[i%2])
				if identical {
					sub = submit("s-same", "a")
				}
				wg.Go(func() {
					<-start
					_, errs[i] = res.Answer(ctx, alice, cardKey, sub)
				})
			}
			close(start)
			wg.Wait()
			loser := refusal.ErrAlreadyAnswered
			if identical {
				loser = refusal.ErrDuplicateAnswer
			}
			wins := 0
			for _, err := range errs {
				if err == nil {
					wins++
					continue
				}
				assert.ErrorIs(t, err, loser)
			}
			assert.Equal(t, 1, wins, "identical=%v", identical)
			assert.Len(t, e.db.Transitions(cardKey), 1)
			assert.Len(t, e.db.History(cardKey), 2)
		}
	})

	t.Run("c racing inside the validation window", func(t *testing.T) {
		// A validates outside the transaction; B answers meanwhile. A's
		// transaction sees B's answer and A never advances the card.
		e := newEnv(t)
		_, b := e.worker()
		var bErr error
		e.beforeValidate = func() {
			e.beforeValidate = nil
			_, bErr = b.Answer(ctx, alice, cardKey, submit("s-b", "b"))
		}
		_, err := e.res.Answer(ctx, alice, cardKey, submit("s-a", "a"))
		require.NoError(t, bErr)
		require.ErrorIs(t, err, refusal.ErrAlreadyAnswered)
		assert.Equal(t, "s-b", e.stored().Answer.SubmissionID)
		assert.Len(t, e.db.Transitions(cardKey), 1)
	})

	t.Run("b reused id inside the validation window", func(t *testing.T) {
		// A validates its value; meanwhile the same submission id lands
		// with another value. A's transaction tells the reuse apart from
		// another submission's answer, and writes nothing.
		e := newEnv(t)
		_, b := e.worker()
		var bErr error
		e.beforeValidate = func() {
			e.beforeValidate = nil
			_, bErr = b.Answer(ctx, alice, cardKey, submit("s-1", "b"))
		}
		_, err := e.res.Answer(ctx, alice, cardKey, submit("s-1", "a"))
		require.NoError(t, bErr)
		require.ErrorIs(t, err, refusal.ErrIdempotencyKeyReused)
		assert.JSONEq(t, `{"optionId":"b"}`, string(e.stored().Answer.Value))
		assert.Len(t, e.db.Transitions(cardKey), 1)
	})
}

// I2: a late answer — expired (fake clock), cancelled, answered — each told
// apart.
func TestI2LateAnswer(t *testing.T) {
	ctx := context.Background()

	t.Run("expired", func(t *testing.T) {
		e := newEnv(t)
		e.clock.Advance(cardTimeout - 1e6) // 1 ms before the deadline: still open
		view, err := e.res.Read(ctx, alice, cardKey)
		require.NoError(t, err)
		assert.Equal(t, interactions.StatusPending, view.Status)
		_, err = e.res.Expire(ctx, cardKey)
		require.ErrorIs(t, err, refusal.ErrNotExpired)

		e.clock.Advance(1e6) // exactly the deadline
		_, err = e.res.Answer(ctx, alice, cardKey, submit("s-1", "a"))
		require.ErrorIs(t, err, refusal.ErrAnswerExpired)
		view, err = e.res.Read(ctx, alice, cardKey)
		require.NoError(t, err)
		assert.Equal(t, interactions.StatusExpired, view.Status, "effective status")
		assert.Equal(t, interactions.StatusPending, view.Record.Status, "not advanced by the refusal")
		assert.Empty(t, e.db.Transitions(cardKey))

		closed, err := e.res.Expire(ctx, cardKey)
		require.NoError(t, err)
		assert.Equal(t, interactions.StatusExpired, closed.Transition.Status)
		_, err = e.res.Answer(ctx, alice, cardKey, submit("s-1", "a"))
		require.ErrorIs(t, err, refusal.ErrAnswerExpired)
		_, err = e.res.Cancel(ctx, cardKey, "turn cancelled")
		require.ErrorIs(t, err, refusal.ErrAnswerExpired)
		assert.Len(t, e.db.Transitions(cardKey), 1)
	})

	t.Run("expires while validating", func(t *testing.T) {
		e := newEnv(t)
		e.beforeValidate = func() { e.clock.Advance(cardTimeout) }
		_, err := e.res.Answer(ctx, alice, cardKey, submit("s-1", "a"))
		require.ErrorIs(t, err, refusal.ErrAnswerExpired)
		assert.Len(t, e.db.History(cardKey), 1)
	})

	t.Run("cancelled", func(t *testing.T) {
		e := newEnv(t)
		res, err := e.res.Cancel(ctx, cardKey, "turn cancelled")
		require.NoError(t, err)
		assert.Equal(t, "turn cancelled", res.Transition.Reason)
		_, err = e.res.Answer(ctx, alice, cardKey, submit("s-1", "a"))
		require.ErrorIs(t, err, refusal.ErrCardCancelled)
		_, err = e.res.Cancel(ctx, cardKey, "again")
		require.ErrorIs(t, err, refusal.ErrCardCancelled)
	})

	t.Run("cancelled by the person", func(t *testing.T) {
		e := newEnv(t)
		res, err := e.res.Answer(ctx, alice, cardKey, respond("s-1", cards.CardActionCancel))
		require.NoError(t, err)
		assert.Equal(t, interactions.StatusCancelled, res.Record.Status)
		require.NotNil(t, res.Transition.Response)
		assert.Equal(t, cards.CardActionCancel, res.Transition.Response.Action)
		_, err = e.res.Answer(ctx, alice, cardKey, submit("s-2", "a"))
		require.ErrorIs(t, err, refusal.ErrCardCancelled)
	})

	t.Run("answered", func(t *testing.T) {
		e := newEnv(t)
		_, err := e.res.Answer(ctx, alice, cardKey, respond("s-1", cards.CardActionDecline))
		require.NoError(t, err)
		assert.Equal(t, interactions.StatusDeclined, e.stored().Status)
		_, err = e.res.Answer(ctx, alice, cardKey, submit("s-2", "a"))
		require.ErrorIs(t, err, refusal.ErrAlreadyAnswered)
		_, err = e.res.Cancel(ctx, cardKey, "turn cancelled")
		require.ErrorIs(t, err, refusal.ErrAlreadyAnswered)
		_, err = e.res.Expire(ctx, cardKey)
		require.ErrorIs(t, err, refusal.ErrAlreadyAnswered)
	})

	t.Run("told apart", func(t *testing.T) {
		codes := map[refusal.Code]bool{}
		for _, close := range []func(e *env) error{
			func(e *env) error { e.clock.Advance(cardTimeout); return nil },
			func(e *env) error { _, err := e.res.Cancel(ctx, cardKey, ""); return err },
			func(e *env) error { _, err := e.res.Answer(ctx, alice, cardKey, submit("s-0", "b")); return err },
			func(e *env) error { _, err := e.res.Supersede(ctx, cardKey, "card-2"); return err },
		} {
			e := newEnv(t)
			require.NoError(t, close(e))
			_, err := e.res.Answer(ctx, alice, cardKey, submit("s-1", "a"))
			require.Error(t, err)
			codes[refusal.CodeOf(err)] = true
		}
		assert.Equal(t, map[refusal.Code]bool{
			refusal.CodeAnswerExpired: true, refusal.CodeCardCancelled: true,
			refusal.CodeAlreadyAnswered: true, refusal.CodeCardSuperseded: true,
		}, codes)
	})
}

// I3: an answer bound to a superseded card, a stale revision, an old schema
// or a foreign conversation, tenant, customer or principal.
func TestI3Binding(t *testing.T) {
	ctx := context.Background()

	t.Run("superseded card", func(t *testing.T) {
		e := newEnv(t)
		next := interactions.Key{Conversation: conv, CorrelationID: "card-2"}
		_, err := e.res.Open(ctx, interactions.NewCard{Key: next, Answerer: alice, Spec: radioSpec(false), Schema: radioV2})
		require.NoError(t, err)
		res, err := e.res.Supersede(ctx, cardKey, "card-2")
		require.NoError(t, err)
		assert.Equal(t, "card-2", res.Transition.SupersededBy)
		_, err = e.res.Answer(ctx, alice, cardKey, submit("s-1", "a"))
		require.ErrorIs(t, err, refusal.ErrCardSuperseded)
		// The answer did not land on the replacement either.
		view, err := e.res.Read(ctx, alice, next)
		require.NoError(t, err)
		assert.Equal(t, interactions.StatusPending, view.Record.Status)
	})

	t.Run("stale revision named by the submission", func(t *testing.T) {
		e := newEnv(t)
		_, err := e.res.Revise(ctx, cardKey, radioSpec(true), radioV1)
		require.NoError(t, err)
		sub := submit("s-1", "a")
		sub.Revision = 1
		_, err = e.res.Answer(ctx, alice, cardKey, sub)
		require.ErrorIs(t, err, refusal.ErrStaleRevision)
		sub.Revision = 2
		_, err = e.res.Answer(ctx, alice, cardKey, sub)
		require.NoError(t, err)
	})

	t.Run("revised while validating", func(t *testing.T) {
		e := newEnv(t)
		e.beforeValidate = func() {
			e.beforeValidate = nil
			spec := radioSpec(true)
			spec.Prompt = "Ship it today?"
			_, err := e.res.Revise(ctx, cardKey, spec, radioV1)
			require.NoError(t, err)
		}
		_, err := e.res.Answer(ctx, alice, cardKey, submit("s-1", "a"))
		require.ErrorIs(t, err, refusal.ErrStaleRevision)
		assert.Equal(t, interactions.StatusPending, e.stored().Status)
		// A fresh attempt validates against the current revision and lands.
		_, err = e.res.Answer(ctx, alice, cardKey, submit("s-1", "a"))
		require.NoError(t, err)
		assert.Equal(t, int64(3), e.stored().Revision)
	})

	t.Run("old schema", func(t *testing.T) {
		e := newEnv(t)
		e.beforeValidate = func() {
			e.beforeValidate = nil
			_, err := e.res.Revise(ctx, cardKey, radioSpec(true), radioV2)
			require.NoError(t, err)
		}
		_, err := e.res.Answer(ctx, alice, cardKey, submit("s-1", "b"))
		require.ErrorIs(t, err, refusal.ErrSchemaMismatch)
		// The new schema is what the next attempt is validated against.
		_, err = e.res.Answer(ctx, alice, cardKey, submit("s-1", "c"))
		require.NoError(t, err)
		assert.Equal(t, radioV2, e.stored().Schema)
	})

	t.Run("foreign scope looks like no card", func(t *testing.T) {
		e := newEnv(t)
		missingSub := submit("s-1", "a")
		missingSub.Response.CorrelationID = "no-such-card"
		_, missing := e.res.Answer(ctx, alice, interactions.Key{Conversation: conv, CorrelationID: "no-such-card"}, missingSub)
		require.ErrorIs(t, missing, refusal.ErrCardNotFound)

		e.db.Grant(visitor, conv)
		e.db.Grant(alice, otherConv)
		foreignKey := interactions.Key{Conversation: otherConv, CorrelationID: cardKey.CorrelationID}
		cases := []struct {
			name   string
			caller interactions.Caller
			key    interactions.Key
			setup  func()
		}{
			{"principal", bob, cardKey, nil},
			{"public owner", visitor, cardKey, nil},
			{"conversation", alice, foreignKey, nil},
			{"tenant", aliceT2, cardKey, func() { e.db.Grant(aliceT2, conv) }},
			{"customer", aliceC2, cardKey, func() { e.db.Grant(aliceC2, conv) }},
			{"no longer a participant", alice, cardKey, func() { e.db.Grant(alice, conv); e.db.Revoke(alice, conv) }},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				if tc.setup != nil {
					tc.setup()
				}
				sub := submit("s-1", "a")
				sub.Response.CorrelationID = tc.key.CorrelationID
				_, err := e.res.Answer(ctx, tc.caller, tc.key, sub)
				require.ErrorIs(t, err, refusal.ErrCardNotFound)
				assert.Equal(t, missing.Error(), err.Error(), "same refusal as a missing card")
				_, err = e.res.Read(ctx, tc.caller, tc.key)
				require.ErrorIs(t, err, refusal.ErrCardNotFound)
				assert.Equal(t, interactions.StatusPending, e.stored().Status)
			})
		}
		assert.Empty(t, e.db.Transitions(cardKey))
	})

	t.Run("stale session or no authority", func(t *testing.T) {
		e := newEnv(t)
		// alice moved to tenant t2: a session still claiming t1 is refused.
		e.db.Grant(aliceT2, conv)
		_, err := e.res.Answer(ctx, alice, cardKey, submit("s-1", "a"))
		require.ErrorIs(t, err, refusal.ErrUnauthorized)

		e = newEnv(t)
		e.db.Suspend(alice)
		_, err = e.res.Answer(ctx, alice, cardKey, submit("s-1", "a"))
		require.ErrorIs(t, err, refusal.ErrUnauthorized)
		_, err = e.res.Read(ctx, alice, cardKey)
		require.ErrorIs(t, err, refusal.ErrUnauthorized)

		_, err = e.res.Answer(ctx, interactions.Caller{Tenant: "t1"}, cardKey, submit("s-1", "a"))
		require.ErrorIs(t, err, refusal.ErrUnauthorized, "a caller naming nobody")
	})

	t.Run("revoked while validating", func(t *testing.T) {
		e := newEnv(t)
		e.beforeValidate = func() { e.db.Revoke(alice, conv) }
		_, err := e.res.Answer(ctx, alice, cardKey, submit("s-1", "a"))
		require.ErrorIs(t, err, refusal.ErrCardNotFound)
		assert.Equal(t, interactions.StatusPending, e.stored().Status)

		e = newEnv(t)
		e.beforeValidate = func() { e.db.Suspend(alice) }
		_, err = e.res.Answer(ctx, alice, cardKey, submit("s-1", "a"))
		require.ErrorIs(t, err, refusal.ErrUnauthorized)
		assert.Equal(t, interactions.StatusPending, e.stored().Status)
	})

	t.Run("submitted fields grant nothing", func(t *testing.T) {
		e := newEnv(t)
		// bob names alice's card in the body and alice's revision: he is
		// still bob.
		sub := submit("s-1", "a")
		sub.Revision = 1
		_, err := e.res.Answer(ctx, bob, cardKey, sub)
		require.ErrorIs(t, err, refusal.ErrCardNotFound)
		// A body naming another card than the request is malformed.
		sub.Response.CorrelationID = "card-9"
		_, err = e.res.Answer(ctx, alice, cardKey, sub)
		require.ErrorIs(t, err, refusal.ErrInvalidAnswer)
	})
}
