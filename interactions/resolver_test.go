package interactions_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
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

func TestNewNeedsStoreAndValidator(t *testing.T) {
	st := interactionstest.NewDB().Open(nil)
	v := interactions.ValidatorFunc(func(context.Context, interactions.SchemaRef, json.RawMessage) error { return nil })
	_, err := interactions.New(nil, v, &interactions.Options{CardRules: chatprotocol.ValidateCardSpec})
	assert.Error(t, err)
	_, err = interactions.New(st, nil, &interactions.Options{CardRules: chatprotocol.ValidateCardSpec})
	assert.Error(t, err)
	_, err = interactions.New(st, v, &interactions.Options{CardRules: chatprotocol.ValidateCardSpec, MaxValueBytes: -1})
	assert.Error(t, err)
	_, err = interactions.New(st, v, nil)
	assert.Error(t, err, "the card rules are required")
	_, err = interactions.New(st, v, &interactions.Options{Clock: time.Now})
	assert.Error(t, err, "the card rules are required")
	r, err := interactions.New(st, v, &interactions.Options{CardRules: chatprotocol.ValidateCardSpec})
	require.NoError(t, err)
	assert.NotNil(t, r)
}

// misbehaving wraps a Store and bends Transact.
type misbehaving struct {
	interactions.Store
	transact func(ctx context.Context, key interactions.Key, caller *interactions.Caller, fn interactions.TxFunc) error
}

func (m misbehaving) Transact(ctx context.Context, key interactions.Key, caller *interactions.Caller, fn interactions.TxFunc) error {
	return m.transact(ctx, key, caller, fn)
}

// A store that breaks the seam's rules never makes the resolver claim a
// success it cannot prove.
func TestMisbehavingStores(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		name     string
		transact func(inner interactions.Store) func(context.Context, interactions.Key, *interactions.Caller, interactions.TxFunc) error
		want     error
		stored   interactions.Status
	}{
		{"returns without the callback", func(interactions.Store) func(context.Context, interactions.Key, *interactions.Caller, interactions.TxFunc) error {
			return func(context.Context, interactions.Key, *interactions.Caller, interactions.TxFunc) error { return nil }
		}, refusal.ErrCheckpointWriteFailed, interactions.StatusPending},
		{"invokes the callback twice after committing", func(inner interactions.Store) func(context.Context, interactions.Key, *interactions.Caller, interactions.TxFunc) error {
			return func(ctx context.Context, k interactions.Key, c *interactions.Caller, fn interactions.TxFunc) error {
				if err := inner.Transact(ctx, k, c, fn); err != nil {
					return err
				}
				return inner.Transact(ctx, k, c, fn)
			}
		}, nil, interactions.StatusAnswered},
		{"invokes the callback twice without committing", func(inner interactions.Store) func(context.Context, interactions.Key, *interactions.Caller, interactions.TxFunc) error {
			return func(ctx context.Context, k interactions.Key, c *interactions.Caller, fn interactions.TxFunc) error {
				_, _ = fn(interactions.Current{})
				return inner.Transact(ctx, k, c, fn)
			}
		}, refusal.ErrNeedsReconciliation, interactions.StatusPending},
		{"swallows the callback's refusal", func(inner interactions.Store) func(context.Context, interactions.Key, *interactions.Caller, interactions.TxFunc) error {
			return func(ctx context.Context, k interactions.Key, c *interactions.Caller, fn interactions.TxFunc) error {
				_ = inner.Transact(ctx, k, c, func(cur interactions.Current) (interactions.Change, error) {
					cur.Authority = interactions.Authority{} // the refusal: unauthorized
					return fn(cur)
				})
				return nil
			}
		}, refusal.ErrUnauthorized, interactions.StatusPending},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			v := interactions.ValidatorFunc(e.schemas.Validate)
			r, err := interactions.New(misbehaving{Store: e.store, transact: tc.transact(e.store)}, v, &interactions.Options{CardRules: chatprotocol.ValidateCardSpec, Clock: e.clock.Now})
			require.NoError(t, err)
			res, err := r.Answer(ctx, alice, cardKey, submit("s-1", "a"))
			if tc.want == nil {
				require.NoError(t, err)
				assert.True(t, res.Reconciled, "known only through the one read")
			} else {
				require.ErrorIs(t, err, tc.want)
			}
			assert.Equal(t, tc.stored, e.stored().Status)
			assert.LessOrEqual(t, len(e.db.Transitions(cardKey)), 1)
		})
	}
}

func TestSubmissionShape(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	long := strings.Repeat("x", interactions.MaxIDBytes+1)
	value := func(v string) interactions.Submission {
		s := submit("s-1", "a")
		s.Response.Value = json.RawMessage(v)
		return s
	}
	cases := []struct {
		name string
		sub  interactions.Submission
		code refusal.Code
		path string
	}{
		{"no id", submit("", "a"), refusal.CodeInvalidAnswer, ""},
		{"long id", submit(long, "a"), refusal.CodeInvalidAnswer, ""},
		{"unknown action", interactions.Submission{ID: "s-1", Response: cards.CardResponse{Action: "approve", CorrelationID: cardKey.CorrelationID}}, refusal.CodeInvalidAnswer, "/action"},
		{"submit without value", value(""), refusal.CodeInvalidAnswer, "/value"},
		{"submit of an array", value(`["a"]`), refusal.CodeInvalidAnswer, "/value"},
		{"submit of null", value(`null`), refusal.CodeInvalidAnswer, "/value"},
		{"duplicate member names", value(`{"optionId":"a","optionId":"c"}`), refusal.CodeInvalidAnswer, "/value"},
		{"invalid UTF-8", value("{\"optionId\":\"\xff\"}"), refusal.CodeInvalidAnswer, "/value"},
		{"trailing data", value(`{"optionId":"a"} {}`), refusal.CodeInvalidAnswer, "/value"},
		{"too large", value(`{"optionId":"` + strings.Repeat("a", interactions.DefaultMaxValueBytes) + `"}`), refusal.CodeFrameTooLarge, "/value"},
		{"schema refuses", submit("s-1", "z"), refusal.CodeInvalidAnswer, "/value/optionId"},
		{"decline with a value", interactions.Submission{ID: "s-1", Response: cards.CardResponse{Action: cards.CardActionDecline, CorrelationID: cardKey.CorrelationID, Value: json.RawMessage(`{}`)}}, refusal.CodeInvalidAnswer, "/value"},
		{"negative revision", interactions.Submission{ID: "s-1", Revision: -1, Response: submit("s-1", "a").Response}, refusal.CodeInvalidAnswer, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := e.res.Answer(ctx, alice, cardKey, tc.sub)
			require.Error(t, err)
			assert.Equal(t, tc.code, refusal.CodeOf(err))
			werr, ok := errors.AsType[*refusal.Error](err)
			require.True(t, ok)
			assert.Equal(t, tc.path, werr.Path)
		})
	}
	assert.Equal(t, interactions.StatusPending, e.stored().Status)
	assert.Len(t, e.db.History(cardKey), 1)
}

func TestDeclineNeedsPermission(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	k := interactions.Key{Conversation: conv, CorrelationID: "strict"}
	_, err := e.res.Open(ctx, interactions.NewCard{Key: k, Answerer: alice, Spec: radioSpec(false), Schema: radioV1})
	require.NoError(t, err)
	sub := respond("s-1", cards.CardActionDecline)
	sub.Response.CorrelationID = k.CorrelationID
	_, err = e.res.Answer(ctx, alice, k, sub)
	require.ErrorIs(t, err, refusal.ErrInvalidAnswer)
	// A null value on a decline is no value.
	sub = respond("s-1", cards.CardActionDecline)
	sub.Response.Value = json.RawMessage("null")
	res, err := e.res.Answer(ctx, alice, cardKey, sub)
	require.NoError(t, err)
	assert.Equal(t, interactions.StatusDeclined, res.Record.Status)
	assert.Nil(t, res.Record.Answer.Value)
}

// The value stored is the canonical one, and the same value spelled
// differently is the same submission.
func TestCanonicalValue(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	require.NoError(t, e.schemas.Register(interactions.SchemaRef{ID: "any", Revision: 1}, []byte(`{"type":"object"}`)))
	_, err := e.res.Revise(ctx, cardKey, radioSpec(true), interactions.SchemaRef{ID: "any", Revision: 1})
	require.NoError(t, err)
	sub := submit("s-1", "a")
	sub.Response.Value = json.RawMessage(` { "b" : 1.50, "a" : "\u0041" } `)
	res, err := e.res.Answer(ctx, alice, cardKey, sub)
	require.NoError(t, err)
	assert.Equal(t, `{"a":"A","b":1.50}`, string(res.Record.Answer.Value))
	assert.Len(t, res.Record.Answer.Digest, 64)
	sub.Response.Value = json.RawMessage(`{"a":"A","b":1.50}`)
	_, err = e.res.Answer(ctx, alice, cardKey, sub)
	require.ErrorIs(t, err, refusal.ErrDuplicateAnswer)
}

func TestUnknownSchemaRefusesAnswers(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	_, err := e.res.Revise(ctx, cardKey, radioSpec(true), interactions.SchemaRef{ID: "unregistered", Revision: 1})
	require.NoError(t, err)
	_, err = e.res.Answer(ctx, alice, cardKey, submit("s-1", "a"))
	require.ErrorIs(t, err, refusal.ErrUnknownSchema)
	// A decline carries no value and needs no schema.
	_, err = e.res.Answer(ctx, alice, cardKey, respond("s-2", cards.CardActionDecline))
	require.NoError(t, err)
}

func TestUncodedValidatorErrorIsInvalidAnswer(t *testing.T) {
	e := newEnv(t)
	v := interactions.ValidatorFunc(func(context.Context, interactions.SchemaRef, json.RawMessage) error { return errors.New("nope") })
	r, err := interactions.New(e.store, v, &interactions.Options{CardRules: chatprotocol.ValidateCardSpec, Clock: e.clock.Now})
	require.NoError(t, err)
	_, err = r.Answer(context.Background(), alice, cardKey, submit("s-1", "a"))
	require.ErrorIs(t, err, refusal.ErrInvalidAnswer)
}

// Open and Revise apply the card rules the Resolver was given, the root
// package's: a spec they refuse is refused with its code and path, and
// nothing is stored.
func TestOpenAppliesTheCardRules(t *testing.T) {
	st := interactionstest.NewDB().Open(nil)
	v := interactions.ValidatorFunc(func(context.Context, interactions.SchemaRef, json.RawMessage) error { return nil })
	r, err := interactions.New(st, v, &interactions.Options{CardRules: chatprotocol.ValidateCardSpec})
	require.NoError(t, err)
	key := interactions.Key{Conversation: "c-1", CorrelationID: "card-1"}
	bad := []cards.CardSpec{
		{Prompt: ""}, // required
		{Prompt: "Pick", Presentation: &cards.CardPresentation{Kind: "wheel"}},
		{Prompt: "Pick", Presentation: &cards.CardPresentation{Kind: cards.CardKindRadio, Options: []cards.CardOption{{ID: "a"}}}},
		{Prompt: "Pick", Presentation: &cards.CardPresentation{Kind: cards.CardKindRadio}},
		{Prompt: "Pick", TimeoutMs: -1},
	}
	for i, spec := range bad {
		_, err := r.Open(t.Context(), interactions.NewCard{Key: key, Answerer: interactions.Caller{Principal: "alice"}, Spec: spec,
			Schema: interactions.SchemaRef{ID: "s", Revision: 1}})
		require.ErrorIs(t, err, refusal.ErrInvalidCard, "spec %d", i)
		assert.Equal(t, chatprotocol.ValidateCardSpec(spec).Error(), err.Error(), "spec %d: the rules' own refusal", i)
	}
	_, err = st.Read(t.Context(), key, nil)
	require.NoError(t, err)
	good := cards.CardSpec{Prompt: "Pick", Presentation: &cards.CardPresentation{Kind: cards.CardKindRadio, Options: []cards.CardOption{{ID: "a", Label: "A"}}}}
	rec, err := r.Open(t.Context(), interactions.NewCard{Key: key, Answerer: interactions.Caller{Principal: "alice"}, Spec: good,
		Schema: interactions.SchemaRef{ID: "s", Revision: 1}})
	require.NoError(t, err)
	_, err = r.Revise(t.Context(), key, bad[2], interactions.SchemaRef{ID: "s", Revision: 1})
	require.ErrorIs(t, err, refusal.ErrInvalidCard)
	assert.Equal(t, int64(1), rec.Revision)
}
