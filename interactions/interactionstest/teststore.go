package interactionstest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Papercusp/chat-protocol-go/cards"
	"github.com/Papercusp/chat-protocol-go/interactions"
	"github.com/Papercusp/chat-protocol-go/refusal"
)

// The cast of the checks.
var (
	suiteKey    = interactions.Key{Conversation: "suite-conv", CorrelationID: "suite-card"}
	suiteCaller = interactions.Caller{Principal: "suite-principal", Tenant: "suite-tenant", Customer: "suite-customer"}
)

// pendingRecord is a version-1 pending record with every member set.
func pendingRecord(key interactions.Key) *interactions.Record {
	step := 0.5
	return &interactions.Record{
		Version: interactions.RecordVersion, Key: key,
		Scope: interactions.Scope{Conversation: key.Conversation, Caller: suiteCaller},
		Spec: cards.CardSpec{
			Prompt: "Pick one", AllowDecline: true, TimeoutMs: 60000, FallbackText: "reply a or b",
			Presentation: &cards.CardPresentation{
				Kind: "slider", Options: []cards.CardOption{{ID: "a", Label: "A", Style: "primary"}},
				Min: &cards.CardBound{Number: 1}, Max: &cards.CardBound{Date: "2026-12-31"}, Step: step,
			},
		},
		Schema:   interactions.SchemaRef{ID: "suite-schema", Revision: 3},
		Revision: 1, Status: interactions.StatusPending, CreatedAt: 1_700_000_000_000, ExpiresAt: 1_700_000_060_000,
	}
}

// answered returns rec closed by a submit of value, and its transition.
func answered(rec *interactions.Record, id, value string) (*interactions.Record, *interactions.Transition) {
	next := *rec
	next.Revision++
	next.Status = interactions.StatusAnswered
	next.ClosedAt = rec.CreatedAt + 1000
	next.Answer = &interactions.Answer{SubmissionID: id, Action: cards.CardActionSubmit, Value: json.RawMessage(value), Digest: "d-" + id}
	resp := cards.CardResponse{Action: cards.CardActionSubmit, CorrelationID: rec.Key.CorrelationID, Value: json.RawMessage(value)}
	return &next, &interactions.Transition{Key: rec.Key, Status: next.Status, Revision: next.Revision, At: next.ClosedAt, Response: &resp}
}

// put stores rec as a new card through a fresh worker.
func put(t tb, f *fixture, rec *interactions.Record) {
	t.Helper()
	err := open(t, f).Transact(t.Context(), rec.Key, nil, func(cur interactions.Current) (interactions.Change, error) {
		return interactions.Change{Next: rec}, nil
	})
	require.NoError(t, err, "storing a new card")
}

// read returns the committed record under key through a fresh worker.
func read(t tb, f *fixture, key interactions.Key) *interactions.Record {
	t.Helper()
	cur, err := open(t, f).Read(t.Context(), key, nil)
	require.NoError(t, err)
	return cur.Record
}

// sameRecord asserts two records are equal, comparing answer values as
// JSON (a store may reformat them).
func sameRecord(t tb, want, got *interactions.Record, msg string) {
	t.Helper()
	if want == nil || got == nil {
		assert.Equal(t, want, got, msg)
		return
	}
	w, g := *want, *got
	if w.Answer != nil && g.Answer != nil {
		wa, ga := *w.Answer, *g.Answer
		assert.JSONEq(t, string(wa.Value), string(ga.Value), msg)
		wa.Value, ga.Value = nil, nil
		w.Answer, g.Answer = &wa, &ga
	}
	assert.Equal(t, w, g, msg)
}

// sameTransitions asserts two transition lists are equal, comparing
// response values as JSON.
func sameTransitions(t tb, want, got []interactions.Transition, msg string) {
	t.Helper()
	norm := func(trs []interactions.Transition) []interactions.Transition {
		out := make([]interactions.Transition, len(trs))
		for i, tr := range trs {
			if tr.Response != nil {
				r := *tr.Response
				var v any
				if len(r.Value) > 0 && json.Unmarshal(r.Value, &v) == nil {
					r.Value, _ = json.Marshal(v)
				}
				tr.Response = &r
			}
			out[i] = tr
		}
		return out
	}
	assert.Equal(t, norm(want), norm(got), msg)
}

func checkRoundTrip(t tb, f *fixture) {
	rec := pendingRecord(suiteKey)
	var saw *interactions.Record
	seen := false
	err := open(t, f).Transact(t.Context(), suiteKey, nil, func(cur interactions.Current) (interactions.Change, error) {
		saw, seen = cur.Record, true
		return interactions.Change{Next: rec}, nil
	})
	require.NoError(t, err)
	require.True(t, seen, "callback invoked")
	assert.Nil(t, saw, "no card before the first write")
	sameRecord(t, rec, read(t, f, suiteKey), "pending record through a fresh worker")
	assert.Empty(t, transitions(t, f, suiteKey), "opening stores no transition")

	next, tr := answered(rec, "s-1", `{"optionId":"a","note":"ü \u003c"}`)
	err = open(t, f).Transact(t.Context(), suiteKey, nil, func(cur interactions.Current) (interactions.Change, error) {
		sameRecord(t, rec, cur.Record, "the callback sees the committed record")
		return interactions.Change{Next: next, Transition: tr}, nil
	})
	require.NoError(t, err)
	sameRecord(t, next, read(t, f, suiteKey), "terminal record through a fresh worker")
	sameTransitions(t, []interactions.Transition{*tr}, transitions(t, f, suiteKey), "the transition is stored with the record")
	other := interactions.Key{Conversation: suiteKey.Conversation, CorrelationID: "never-written"}
	assert.Nil(t, read(t, f, other), "a missing card reads as nil")
}

func checkCallbackOnce(t tb, f *fixture) {
	rec := pendingRecord(suiteKey)
	put(t, f, rec)
	var calls atomic.Int32
	next, tr := answered(rec, "s-1", `{}`)
	err := open(t, f).Transact(t.Context(), suiteKey, nil, func(interactions.Current) (interactions.Change, error) {
		calls.Add(1)
		return interactions.Change{Next: next, Transition: tr}, nil
	})
	require.NoError(t, err)
	assert.Equal(t, int32(1), calls.Load(), "a committing transaction invokes its callback once")
	calls.Store(0)
	refused := errors.New("refused")
	err = open(t, f).Transact(t.Context(), suiteKey, nil, func(interactions.Current) (interactions.Change, error) {
		calls.Add(1)
		return interactions.Change{}, refused
	})
	assert.ErrorIs(t, err, refused)
	assert.Equal(t, int32(1), calls.Load(), "a refusing transaction invokes its callback once")
}

func checkRefusalWritesNothing(t tb, f *fixture) {
	rec := pendingRecord(suiteKey)
	put(t, f, rec)
	refused := &refusal.Error{Code: refusal.CodeAlreadyAnswered}
	next, tr := answered(rec, "s-1", `{}`)
	err := open(t, f).Transact(t.Context(), suiteKey, nil, func(interactions.Current) (interactions.Change, error) {
		return interactions.Change{Next: next, Transition: tr}, refused
	})
	require.Error(t, err, "the callback's refusal is returned")
	assert.ErrorIs(t, err, refused)
	sameRecord(t, rec, read(t, f, suiteKey), "a refusal writes nothing")
	assert.Empty(t, transitions(t, f, suiteKey))
}

func checkReadOnlyWritesNothing(t tb, f *fixture) {
	rec := pendingRecord(suiteKey)
	put(t, f, rec)
	err := open(t, f).Transact(t.Context(), suiteKey, nil, func(interactions.Current) (interactions.Change, error) {
		return interactions.Change{}, nil
	})
	require.NoError(t, err)
	sameRecord(t, rec, read(t, f, suiteKey), "a read-only result writes nothing, revision included")
	assert.Empty(t, transitions(t, f, suiteKey))
}

func checkRefusesInvalidNext(t tb, f *fixture) {
	rec := pendingRecord(suiteKey)
	put(t, f, rec)
	other := interactions.Key{Conversation: suiteKey.Conversation, CorrelationID: "other-card"}
	bad := map[string]func() *interactions.Record{
		"another key": func() *interactions.Record {
			n := *rec
			n.Key, n.Revision = other, 1
			return &n
		},
		"same revision": func() *interactions.Record { n := *rec; n.Spec.Prompt = "changed"; return &n },
		"revision skips": func() *interactions.Record {
			n := *rec
			n.Spec.Prompt, n.Revision = "changed", rec.Revision+2
			return &n
		},
	}
	for name, next := range bad {
		err := open(t, f).Transact(t.Context(), suiteKey, nil, func(interactions.Current) (interactions.Change, error) {
			return interactions.Change{Next: next()}, nil
		})
		assert.Error(t, err, "a change with %s is refused", name)
		sameRecord(t, rec, read(t, f, suiteKey), "nothing written for "+name)
		assert.Nil(t, read(t, f, other), "nothing written elsewhere for "+name)
	}
}

func checkAuthorityIsCurrent(t tb, f *fixture) {
	put(t, f, pendingRecord(suiteKey))
	want := interactions.Authority{Active: true, Scope: interactions.Scope{Conversation: suiteKey.Conversation, Caller: suiteCaller}}
	st := open(t, f)
	authority := func() (fromRead, fromTransact interactions.Authority) {
		t.Helper()
		cur, err := st.Read(t.Context(), suiteKey, &suiteCaller)
		require.NoError(t, err)
		err = st.Transact(t.Context(), suiteKey, &suiteCaller, func(c interactions.Current) (interactions.Change, error) {
			fromTransact = c.Authority
			return interactions.Change{}, nil
		})
		require.NoError(t, err)
		return cur.Authority, fromTransact
	}
	r, tx := authority()
	assert.Equal(t, interactions.Authority{}, r, "no authority before a grant")
	assert.Equal(t, interactions.Authority{}, tx, "no authority before a grant")
	grant(t, f, suiteCaller, suiteKey.Conversation)
	r, tx = authority()
	assert.Equal(t, want, r, "Read reports the grant")
	assert.Equal(t, want, tx, "Transact reports the grant")
	revoke(t, f, suiteCaller, suiteKey.Conversation)
	r, tx = authority()
	for _, a := range []interactions.Authority{r, tx} {
		assert.False(t, a.Active && a.Scope == want.Scope, "the same worker sees the revocation at once, got %+v", a)
	}
	cur, err := st.Read(t.Context(), suiteKey, nil)
	require.NoError(t, err)
	assert.Equal(t, interactions.Authority{}, cur.Authority, "no caller, no authority")
}

// inFence starts a Transact on a fresh worker whose callback signals entry
// and blocks until released; done receives its result.
func inFence(t tb, f *fixture, caller *interactions.Caller, fn interactions.TxFunc) (entered <-chan interactions.Current, release func(), done <-chan error) {
	in, out := make(chan interactions.Current, 1), make(chan error, 1)
	gate := make(chan struct{})
	st := open(t, f)
	go func() {
		out <- st.Transact(t.Context(), suiteKey, caller, func(cur interactions.Current) (interactions.Change, error) {
			in <- cur
			<-gate
			return fn(cur)
		})
	}()
	var once sync.Once
	return in, func() { once.Do(func() { close(gate) }) }, out
}

func checkAuthorityIsFenced(t tb, f *fixture) {
	rec := pendingRecord(suiteKey)
	put(t, f, rec)
	grant(t, f, suiteCaller, suiteKey.Conversation)
	next, tr := answered(rec, "s-1", `{}`)
	entered, release, done := inFence(t, f, &suiteCaller, func(cur interactions.Current) (interactions.Change, error) {
		return interactions.Change{Next: next, Transition: tr}, nil
	})
	defer release()
	var cur interactions.Current
	select {
	case cur = <-entered:
	case err := <-done:
		require.NoError(t, err)
		require.Fail(t, "Transact returned without invoking its callback")
	}
	require.True(t, cur.Authority.Active, "the caller is authorized when the transaction starts")
	revoked := make(chan struct{})
	var revokeErr error
	go func() {
		revokeErr = f.Revoke(t.Context(), suiteCaller, suiteKey.Conversation)
		close(revoked)
	}()
	var revokedFirst bool
	select {
	case <-revoked:
		revokedFirst = true
	case <-time.After(f.fenceWait):
	}
	release()
	err := <-done
	<-revoked
	require.NoError(t, revokeErr, "Revoke")
	if revokedFirst {
		assert.Error(t, err, "a revocation committed while the answer relying on it was decided, and the answer committed too")
	}
}

func checkCardIsFenced(t tb, f *fixture) {
	rec := pendingRecord(suiteKey)
	put(t, f, rec)
	next, tr := answered(rec, "s-first", `{}`)
	entered, release, done := inFence(t, f, nil, func(interactions.Current) (interactions.Change, error) {
		return interactions.Change{Next: next, Transition: tr}, nil
	})
	defer release()
	select {
	case <-entered:
	case err := <-done:
		require.NoError(t, err)
		require.Fail(t, "Transact returned without invoking its callback")
	}
	second := make(chan error, 1)
	var secondSaw *interactions.Record
	st := open(t, f)
	go func() {
		second <- st.Transact(t.Context(), suiteKey, nil, func(cur interactions.Current) (interactions.Change, error) {
			secondSaw = cur.Record
			if cur.Record == nil || cur.Record.Status != interactions.StatusPending {
				return interactions.Change{}, nil
			}
			n, tr := answered(cur.Record, "s-second", `{}`)
			return interactions.Change{Next: n, Transition: tr}, nil
		})
	}()
	select {
	case err := <-second:
		release()
		<-done
		assert.Fail(t, "a second worker got through the fence while the first was deciding", "second Transact returned %v", err)
		return
	case <-time.After(f.fenceWait):
	}
	release()
	require.NoError(t, <-done)
	require.NoError(t, <-second)
	require.NotNil(t, secondSaw)
	assert.Equal(t, interactions.StatusAnswered, secondSaw.Status, "the second worker decided on the first one's commit")
	stored := read(t, f, suiteKey)
	require.NotNil(t, stored)
	require.NotNil(t, stored.Answer)
	assert.Equal(t, "s-first", stored.Answer.SubmissionID)
	assert.Len(t, transitions(t, f, suiteKey), 1)
}

func checkRacingWorkers(t tb, f *fixture) {
	rec := pendingRecord(suiteKey)
	put(t, f, rec)
	const n = 8
	var sawPending atomic.Int32
	errs := make([]error, n)
	stores := make([]interactions.Store, n)
	for i := range stores {
		stores[i] = open(t, f)
	}
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			<-start
			errs[i] = stores[i].Transact(t.Context(), suiteKey, nil, func(cur interactions.Current) (interactions.Change, error) {
				if cur.Record == nil || cur.Record.Status != interactions.StatusPending {
					return interactions.Change{}, nil
				}
				sawPending.Add(1)
				next, tr := answered(cur.Record, fmt.Sprintf("s-%d", i), `{}`)
				return interactions.Change{Next: next, Transition: tr}, nil
			})
		})
	}
	close(start)
	wg.Wait()
	for i, err := range errs {
		assert.NoError(t, err, "worker %d", i)
	}
	assert.Equal(t, int32(1), sawPending.Load(), "exactly one worker decided on the pending card")
	assert.Len(t, transitions(t, f, suiteKey), 1)
	stored := read(t, f, suiteKey)
	require.NotNil(t, stored)
	assert.Equal(t, rec.Revision+1, stored.Revision)
}

func checkCancelledContext(t tb, f *fixture) {
	rec := pendingRecord(suiteKey)
	put(t, f, rec)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	next, tr := answered(rec, "s-1", `{}`)
	err := open(t, f).Transact(ctx, suiteKey, nil, func(interactions.Current) (interactions.Change, error) {
		return interactions.Change{Next: next, Transition: tr}, nil
	})
	assert.Error(t, err, "a cancelled context fails the transaction")
	sameRecord(t, rec, read(t, f, suiteKey), "and commits nothing")
	_, err = open(t, f).Read(ctx, suiteKey, nil)
	assert.Error(t, err, "a cancelled context fails a read")
}
