package interactions_test

import (
	"context"
	"strings"
	"testing"

	chatprotocol "github.com/Papercusp/chat-protocol-go"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Papercusp/chat-protocol-go/interactions"
	"github.com/Papercusp/chat-protocol-go/refusal"
)

func TestOpen(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	rec := e.stored()
	assert.Equal(t, interactions.RecordVersion, rec.Version)
	assert.Equal(t, int64(1), rec.Revision)
	assert.Equal(t, interactions.StatusPending, rec.Status)
	assert.Equal(t, interactions.Scope{Conversation: conv, Caller: alice}, rec.Scope)
	assert.Equal(t, epoch.UnixMilli(), rec.CreatedAt)
	assert.Equal(t, epoch.Add(cardTimeout).UnixMilli(), rec.ExpiresAt)
	assert.Empty(t, e.db.Transitions(cardKey), "opening stores no transition")

	_, err := e.res.Open(ctx, interactions.NewCard{Key: cardKey, Answerer: alice, Spec: radioSpec(true), Schema: radioV1})
	require.ErrorIs(t, err, refusal.ErrCardExists)

	long := strings.Repeat("x", interactions.MaxIDBytes+1)
	good := interactions.NewCard{Key: interactions.Key{Conversation: conv, CorrelationID: "new"}, Answerer: alice, Spec: radioSpec(true), Schema: radioV1}
	for name, mutate := range map[string]func(c *interactions.NewCard){
		"no conversation":      func(c *interactions.NewCard) { c.Key.Conversation = "" },
		"long correlation id":  func(c *interactions.NewCard) { c.Key.CorrelationID = long },
		"nobody to answer":     func(c *interactions.NewCard) { c.Answerer = interactions.Caller{Tenant: "t1"} },
		"long tenant":          func(c *interactions.NewCard) { c.Answerer.Tenant = long },
		"no schema":            func(c *interactions.NewCard) { c.Schema = interactions.SchemaRef{} },
		"schema revision zero": func(c *interactions.NewCard) { c.Schema.Revision = 0 },
		"negative timeout":     func(c *interactions.NewCard) { c.Spec.TimeoutMs = -1 },
	} {
		c := good
		mutate(&c)
		_, err := e.res.Open(ctx, c)
		require.ErrorIs(t, err, refusal.ErrInvalidCard, name)
	}
	// A card without a timeout never expires; a public card is bound to its
	// public owner.
	c := good
	c.Spec.TimeoutMs, c.Answerer = 0, visitor
	rec, err = e.res.Open(ctx, c)
	require.NoError(t, err)
	assert.Zero(t, rec.ExpiresAt)
	assert.False(t, rec.Expired(1<<62))
	e.db.Grant(visitor, conv)
	view, err := e.res.Read(ctx, visitor, c.Key)
	require.NoError(t, err)
	assert.Equal(t, rec, view.Record)
}

func TestReviseAdvancesTheRevision(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	spec := radioSpec(false)
	spec.TimeoutMs = 5 * 60 * 1000
	e.clock.Advance(cardTimeout / 2)
	rec, err := e.res.Revise(ctx, cardKey, spec, radioV2)
	require.NoError(t, err)
	assert.Equal(t, int64(2), rec.Revision)
	assert.Equal(t, radioV2, rec.Schema)
	assert.Equal(t, epoch.UnixMilli(), rec.CreatedAt, "creation time is not metadata")
	assert.Equal(t, epoch.UnixMilli()+spec.TimeoutMs, rec.ExpiresAt, "the deadline follows the new timeout from creation")
	assert.Equal(t, rec, e.stored())
	assert.Empty(t, e.db.Transitions(cardKey), "a metadata change has no workflow effect")

	_, err = e.res.Revise(ctx, cardKey, spec, interactions.SchemaRef{})
	require.ErrorIs(t, err, refusal.ErrInvalidCard)
	_, err = e.res.Revise(ctx, interactions.Key{Conversation: conv, CorrelationID: "none"}, spec, radioV1)
	require.ErrorIs(t, err, refusal.ErrCardNotFound)
	_, err = e.res.Cancel(ctx, cardKey, "")
	require.NoError(t, err)
	_, err = e.res.Revise(ctx, cardKey, spec, radioV1)
	require.ErrorIs(t, err, refusal.ErrCardCancelled, "a terminal record never changes")
}

func TestSupersedeAndLookup(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	for _, by := range []string{"", cardKey.CorrelationID, strings.Repeat("x", interactions.MaxIDBytes+1)} {
		_, err := e.res.Supersede(ctx, cardKey, by)
		require.ErrorIs(t, err, refusal.ErrInvalidCard)
	}
	res, err := e.res.Supersede(ctx, cardKey, "card-2")
	require.NoError(t, err)
	assert.Equal(t, interactions.StatusSuperseded, res.Record.Status)
	assert.Equal(t, "card-2", res.Record.SupersededBy)
	assert.Equal(t, epoch.UnixMilli(), res.Transition.At)

	view, err := e.res.Lookup(ctx, cardKey)
	require.NoError(t, err)
	assert.Equal(t, res.Record, view.Record)
	_, err = e.res.Lookup(ctx, interactions.Key{Conversation: otherConv, CorrelationID: cardKey.CorrelationID})
	require.ErrorIs(t, err, refusal.ErrCardNotFound)
	_, err = e.res.Lookup(ctx, interactions.Key{})
	require.ErrorIs(t, err, refusal.ErrCardNotFound)
	for _, op := range []func() error{
		func() error { _, err := e.res.Cancel(ctx, interactions.Key{}, ""); return err },
		func() error { _, err := e.res.Expire(ctx, interactions.Key{}); return err },
		func() error { _, err := e.res.Read(ctx, alice, interactions.Key{}); return err },
		func() error { _, err := e.res.Answer(ctx, alice, interactions.Key{}, submit("s", "a")); return err },
	} {
		require.ErrorIs(t, op(), refusal.ErrCardNotFound)
	}
}

func TestSnapshotAndTerminal(t *testing.T) {
	e := newEnv(t)
	text, ok := e.schemas.SchemaJSON(radioV1)
	require.True(t, ok)
	snap := e.stored().Snapshot(text)
	assert.Equal(t, cardKey.CorrelationID, snap.CorrelationID)
	assert.Equal(t, epoch.UnixMilli(), snap.CreatedAt)
	assert.Equal(t, "Ship it?", snap.Prompt)
	assert.JSONEq(t, text, snap.DataSchemaJSON)

	for s, terminal := range map[interactions.Status]bool{
		interactions.StatusPending: false, interactions.StatusAnswered: true, interactions.StatusDeclined: true,
		interactions.StatusCancelled: true, interactions.StatusExpired: true, interactions.StatusSuperseded: true, "other": false,
	} {
		assert.Equal(t, terminal, s.Terminal(), s)
	}
}

// A stored record of another version or an unknown status is refused,
// not guessed at.
func TestUnknownRecordsFailClosed(t *testing.T) {
	ctx := context.Background()
	for name, rec := range map[string]interactions.Record{
		"version 2":      {Version: 2, Key: cardKey, Scope: interactions.Scope{Conversation: conv, Caller: alice}, Revision: 1, Status: interactions.StatusPending},
		"unknown status": {Version: 1, Key: cardKey, Scope: interactions.Scope{Conversation: conv, Caller: alice}, Revision: 1, Status: "paused"},
	} {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t)
			store := fixedStore{cur: interactions.Current{Record: &rec, Authority: interactions.Authority{Active: true, Scope: rec.Scope}}}
			r, err := interactions.New(store, interactions.ValidatorFunc(e.schemas.Validate), &interactions.Options{CardRules: chatprotocol.ValidateCardSpec})
			require.NoError(t, err)
			_, err = r.Answer(ctx, alice, cardKey, submit("s-1", "a"))
			require.ErrorIs(t, err, refusal.ErrUnsupportedVersion)
			_, err = r.Cancel(ctx, cardKey, "")
			require.ErrorIs(t, err, refusal.ErrUnsupportedVersion)
		})
	}
}

// fixedStore serves one Current and refuses to write.
type fixedStore struct{ cur interactions.Current }

func (s fixedStore) Read(context.Context, interactions.Key, *interactions.Caller) (interactions.Current, error) {
	return s.cur, nil
}

func (s fixedStore) Transact(_ context.Context, _ interactions.Key, _ *interactions.Caller, fn interactions.TxFunc) error {
	if _, err := fn(s.cur); err != nil {
		return err
	}
	return &refusal.Error{Code: refusal.CodeCheckpointWriteFailed}
}
