package chatprotocol

import (
	"encoding/json"
	"testing"

	"github.com/Papercusp/chat-protocol-go/refusal"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRegisteredEventsRegistry(t *testing.T) {
	reg, err := NewRegistry(map[string]Channel{"products": ChannelEvent}, WithReasoning(), WithSources())
	require.NoError(t, err)
	assert.Equal(t, []string{"products", "reasoning", "source"}, reg.Types())
	for _, typ := range []string{EventTypeReasoning, EventTypeSource} {
		ch, ok := reg.Channel(typ)
		require.True(t, ok, typ)
		assert.Equal(t, ChannelEvent, ch, typ)
		assert.True(t, reg.Registered(typ), typ)
	}
	assert.False(t, reg.Registered("products"))

	only, err := NewRegistry(nil, WithReasoning())
	require.NoError(t, err)
	assert.True(t, only.Registered(EventTypeReasoning))
	assert.False(t, only.Registered(EventTypeSource))
	var none *Registry
	assert.False(t, none.Registered(EventTypeReasoning))

	// The names are reserved: a product type of the same name is refused,
	// with or without the option.
	for _, typ := range []string{EventTypeReasoning, EventTypeSource} {
		_, err := NewRegistry(map[string]Channel{typ: ChannelEvent})
		require.Error(t, err, typ)
		assert.Equal(t, refusal.CodeUnsupportedEvent, refusal.CodeOf(err), typ)
		_, err = NewRegistry(map[string]Channel{typ: ChannelState}, WithReasoning(), WithSources())
		assert.Equal(t, refusal.CodeUnsupportedEvent, refusal.CodeOf(err), typ)
	}
}

func TestRegisteredEventsRoundTrip(t *testing.T) {
	reg, err := NewRegistry(nil, WithReasoning(), WithSources())
	require.NoError(t, err)
	p := NewEnvelopeParser(&ParserOptions{Registry: reg})

	r, err := Reasoning{Text: "1071 = 2*462 + 147\n\"<b>\""}.Event()
	require.NoError(t, err)
	s, err := WebSource{URL: "https://example.com/w?a=1&b=2", Title: "Weather"}.Event()
	require.NoError(t, err)
	bare, err := WebSource{URL: "https://example.com/x"}.Event()
	require.NoError(t, err)
	assert.JSONEq(t, `{"type":"source","url":"https://example.com/x"}`, string(bare.Raw))

	for i, ev := range []Event{r, s, bare} {
		env := ChatEventEnvelope{ConversationID: "c-1", TurnID: "t-1", EventID: "t-1:1", Seq: 1, Event: ev}
		data, err := env.AppendJSON(nil)
		require.NoError(t, err, i)
		got, err := p.Parse(data)
		require.NoError(t, err, string(data))
		assert.Equal(t, ev, got.Event, i)
	}
	rr, ok := ReasoningOf(r)
	require.True(t, ok)
	assert.Equal(t, "1071 = 2*462 + 147\n\"<b>\"", rr.Text)
	ss, ok := WebSourceOf(s)
	require.True(t, ok)
	assert.Equal(t, WebSource{URL: "https://example.com/w?a=1&b=2", Title: "Weather"}, ss)
	_, ok = ReasoningOf(s)
	assert.False(t, ok)
	_, ok = WebSourceOf(&DeltaEvent{Text: "x"})
	assert.False(t, ok)
	_, ok = WebSourceOf(&AppEvent{Type: "source", Raw: []byte(`{"type":"source","URL":"x","url":"y"}`)})
	assert.False(t, ok, "a case variant is not the shape")

	// Without the registration, the same frame is refused.
	data, err := (&ChatEventEnvelope{ConversationID: "c-1", TurnID: "t-1", EventID: "t-1:1", Seq: 1, Event: r}).AppendJSON(nil)
	require.NoError(t, err)
	_, err = ParseEnvelope(data)
	assert.Equal(t, refusal.CodeUnsupportedEvent, refusal.CodeOf(err))
}

func TestRegisteredEventsRefusals(t *testing.T) {
	_, err := Reasoning{Text: "bad\xff"}.Event()
	assert.Equal(t, refusal.CodeInvalidEvent, refusal.CodeOf(err))
	_, err = WebSource{}.Event()
	assert.Equal(t, refusal.CodeInvalidEvent, refusal.CodeOf(err))
	_, err = WebSource{URL: "https://example.com", Title: "\xff"}.Event()
	assert.Equal(t, refusal.CodeInvalidEvent, refusal.CodeOf(err))
}

// TestRegisteredEventsLeaveNoTrace: the reducer records neither event
// (docs/contract.md section 6.5).
func TestRegisteredEventsLeaveNoTrace(t *testing.T) {
	reg, err := NewRegistry(nil, WithReasoning(), WithSources())
	require.NoError(t, err)
	p := NewEnvelopeParser(&ParserOptions{Registry: reg})
	r, _ := Reasoning{Text: "thinking"}.Event()
	s, _ := WebSource{URL: "https://example.com"}.Event()
	st := NewChatStateV1("c-1")
	for i, ev := range []Event{&LifecycleEvent{Status: LifecycleStarted}, r, &DeltaEvent{Text: "answer"}, s, &LifecycleEvent{Status: LifecycleCompleted}} {
		env := ChatEventEnvelope{ConversationID: "c-1", TurnID: "t-1", EventID: "t-1:" + itoa(i+1), Seq: int64(i + 1), Event: ev}
		data, err := env.AppendJSON(nil)
		require.NoError(t, err)
		parsed, err := p.Parse(data)
		require.NoError(t, err)
		require.NoError(t, st.Apply(parsed))
	}
	require.Len(t, st.Turns, 1)
	assert.Equal(t, "answer", st.Turns[0].Text())
	assert.Equal(t, LifecycleCompleted, st.Turns[0].Status)
	out, err := json.Marshal(st)
	require.NoError(t, err)
	assert.NotContains(t, string(out), "thinking")
	assert.NotContains(t, string(out), "example.com")
}
