package interactions_test

import (
	"testing"

	chatprotocol "github.com/Papercusp/chat-protocol-go"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Papercusp/chat-protocol-go/interactions"
	"github.com/Papercusp/chat-protocol-go/interactions/interactionstest"
	"github.com/Papercusp/chat-protocol-go/internal/testkit/observetest"
	"github.com/Papercusp/chat-protocol-go/observe"
	"github.com/Papercusp/chat-protocol-go/refusal"
)

// Each Answer is one submission and one outcome on its context: stored,
// duplicate, late or refused, with the card's identity and the code, and
// never the submitted value (a validator's refusal is reported by code
// only).
func TestObserverSeesAnswers(t *testing.T) {
	e := newEnv(t)
	obs := &observetest.Recorder{}
	res, err := interactions.New(e.db.Open(nil), interactions.ValidatorFunc(e.schemas.Validate),
		&interactions.Options{CardRules: chatprotocol.ValidateCardSpec, Clock: e.clock.Now, Observer: obs})
	require.NoError(t, err)
	ctx := t.Context()

	_, err = res.Answer(ctx, alice, cardKey, submit("s-0", "secret-z"))
	require.ErrorIs(t, err, refusal.ErrInvalidAnswer)
	_, err = res.Answer(ctx, alice, cardKey, submit("s-1", "a"))
	require.NoError(t, err)
	_, err = res.Answer(ctx, alice, cardKey, submit("s-1", "a"))
	require.ErrorIs(t, err, refusal.ErrDuplicateAnswer)
	_, err = res.Answer(ctx, alice, cardKey, submit("s-2", "b"))
	require.ErrorIs(t, err, refusal.ErrAlreadyAnswered)
	_, err = res.Answer(ctx, visitor, cardKey, submit("s-3", "a"))
	require.ErrorIs(t, err, refusal.ErrUnauthorized)

	type seen struct {
		kind   observe.Kind
		phase  observe.Phase
		code   refusal.Code
		status string
		span   int
	}
	var got []seen
	for _, ev := range obs.Events() {
		assert.Equal(t, cardKey.Conversation, ev.Conversation)
		assert.Equal(t, cardKey.CorrelationID, ev.Card)
		assert.NoError(t, ev.Err, "a refusal's cause is not reported: it may quote the value")
		got = append(got, seen{ev.Kind, ev.Phase, ev.Code, ev.Status, ev.Span})
	}
	answered := string(interactions.StatusAnswered)
	assert.Equal(t, []seen{
		{observe.AnswerSubmit, observe.Start, "", "", 1},
		{observe.AnswerRefuse, observe.End, refusal.CodeInvalidAnswer, "", 1},
		{observe.AnswerSubmit, observe.Start, "", "", 2},
		{observe.AnswerStore, observe.End, "", answered, 2},
		{observe.AnswerSubmit, observe.Start, "", "", 3},
		{observe.AnswerDuplicate, observe.End, refusal.CodeDuplicateAnswer, answered, 3},
		{observe.AnswerSubmit, observe.Start, "", "", 4},
		{observe.AnswerLate, observe.End, refusal.CodeAlreadyAnswered, "", 4},
		{observe.AnswerSubmit, observe.Start, "", "", 5},
		{observe.AnswerRefuse, observe.End, refusal.CodeUnauthorized, "", 5},
	}, got)
	assert.Empty(t, obs.Faults())
}

// A store failure is reported with its cause, for the operator.
func TestObserverSeesStoreFailure(t *testing.T) {
	e := newEnv(t)
	obs := &observetest.Recorder{}
	st := e.db.Open(nil)
	res, err := interactions.New(st, interactions.ValidatorFunc(e.schemas.Validate),
		&interactions.Options{CardRules: chatprotocol.ValidateCardSpec, Clock: e.clock.Now, Observer: obs})
	require.NoError(t, err)
	st.Inject(interactionstest.Failpoint{Op: interactionstest.OpRead, Fault: interactionstest.FaultUnavailable})

	_, err = res.Answer(t.Context(), alice, cardKey, submit("s-1", "a"))
	require.ErrorIs(t, err, refusal.ErrStoreUnavailable)
	events := obs.Events()
	require.Len(t, events, 2)
	assert.Equal(t, observe.AnswerRefuse, events[1].Kind)
	assert.Equal(t, refusal.CodeStoreUnavailable, events[1].Code)
	assert.ErrorIs(t, events[1].Err, interactionstest.ErrUnavailable)
}
