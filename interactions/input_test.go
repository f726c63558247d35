package interactions_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Papercusp/chat-protocol-go/interactions"
	"github.com/Papercusp/chat-protocol-go/refusal"
)

// Ids, texts and values no store can hold as sent are refused with
// invalid-input before the store is asked, by every operation.
func TestUnstorableInputRefusedBeforeTheStore(t *testing.T) {
	ctx := t.Context()
	e := newEnv(t)
	reads, transacts := e.store.Reads(), e.store.Transacts()
	for _, bad := range []string{"a\x00b", "\xff", "x\xc3"} {
		badKey := interactions.Key{Conversation: conv, CorrelationID: bad}
		_, err := e.res.Answer(ctx, alice, badKey, submit("s1", "a"))
		assert.ErrorIs(t, err, refusal.ErrInvalidInput, "%q", bad)
		_, err = e.res.Answer(ctx, interactions.Caller{Principal: bad}, cardKey, submit("s1", "a"))
		assert.ErrorIs(t, err, refusal.ErrInvalidInput, "%q", bad)
		_, err = e.res.Answer(ctx, alice, cardKey, submit(bad, "a"))
		assert.ErrorIs(t, err, refusal.ErrInvalidInput, "%q", bad)
		_, err = e.res.Read(ctx, alice, badKey)
		assert.ErrorIs(t, err, refusal.ErrInvalidInput)
		_, err = e.res.Lookup(ctx, badKey)
		assert.ErrorIs(t, err, refusal.ErrInvalidInput)
		_, err = e.res.Cancel(ctx, cardKey, bad)
		assert.ErrorIs(t, err, refusal.ErrInvalidInput)
		_, err = e.res.Supersede(ctx, cardKey, bad)
		assert.ErrorIs(t, err, refusal.ErrInvalidInput)
		_, err = e.res.Expire(ctx, badKey)
		assert.ErrorIs(t, err, refusal.ErrInvalidInput)
		_, err = e.res.Open(ctx, interactions.NewCard{Key: badKey, Answerer: alice, Spec: radioSpec(true), Schema: radioV1})
		assert.ErrorIs(t, err, refusal.ErrInvalidInput)
		spec := radioSpec(true)
		spec.Prompt = "nul\x00"
		_, err = e.res.Revise(ctx, cardKey, spec, radioV1)
		assert.ErrorIs(t, err, refusal.ErrInvalidInput)
	}
	// A value whose strings hold U+0000, escaped or in a member name.
	for _, v := range []string{`{"optionId":"a\u0000"}`, `{"\u0000":"a"}`, `{"optionId":"a","x":["\u0000"]}`} {
		sub := submit("s2", "a")
		sub.Response.Value = json.RawMessage(v)
		_, err := e.res.Answer(ctx, alice, cardKey, sub)
		assert.ErrorIs(t, err, refusal.ErrInvalidInput, v)
	}
	assert.Equal(t, reads, e.store.Reads(), "the store was not read")
	assert.Equal(t, transacts, e.store.Transacts(), "nor written")
	// An escaped backslash followed by u0000 is text, not U+0000: accepted.
	sub := submit("s3", "a")
	sub.Response.Value = json.RawMessage(`{"optionId":"a","note":"\\u0000"}`)
	_, err := e.res.Answer(ctx, alice, cardKey, sub)
	require.NotErrorIs(t, err, refusal.ErrInvalidInput)
}
