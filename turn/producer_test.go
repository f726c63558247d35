package turn_test

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	chatprotocol "github.com/Papercusp/chat-protocol-go"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Papercusp/chat-protocol-go/refusal"
	"github.com/Papercusp/chat-protocol-go/replay"
	"github.com/Papercusp/chat-protocol-go/turn"
)

// A turn starts with lifecycle started as seq 1; every envelope has the
// next seq, the event id "<turnId>:<seq>" and the clock's at; it ends with
// one terminal lifecycle carrying the usage, and nothing but a late
// tool_result may follow (docs/contract.md sections 5.1 and 16).
func TestATurnFromStartToEnd(t *testing.T) {
	ctx := t.Context()
	h := newHost(t)
	p := h.start("t-1")
	require.NoError(t, p.Delta(ctx, "Refunds are "))
	h.clock.Advance(1500 * time.Millisecond)
	require.NoError(t, p.Delta(ctx, "accepted."))
	require.NoError(t, p.Provenance(ctx, "openai", "gpt-x", "req-1"))
	tokens := int64(42)
	p.SetUsage(chatprotocol.Usage{TotalTokens: &tokens})
	require.NoError(t, p.Complete(ctx))
	require.NoError(t, p.Complete(ctx), "End of an ended turn changes nothing")

	envs := h.envelopes("t-1")
	assert.Equal(t, []string{"lifecycle", "delta", "delta", "provenance", "lifecycle"}, types(envs))
	for i, env := range envs {
		assert.Equal(t, "t-1:"+string(rune('1'+i)), env.EventID)
	}
	assert.Equal(t, chatprotocol.LifecycleStarted, envs[0].Event.(*chatprotocol.LifecycleEvent).Status)
	assert.Equal(t, "2026-03-01T12:00:00.000Z", envs[0].At)
	assert.Equal(t, "2026-03-01T12:00:01.500Z", envs[2].At)
	end := envs[4].Event.(*chatprotocol.LifecycleEvent)
	assert.Equal(t, chatprotocol.LifecycleCompleted, end.Status)
	require.NotNil(t, end.Usage)
	assert.Equal(t, int64(42), *end.Usage.TotalTokens)

	s := h.state("t-1")
	tt, _ := s.Turn("t-1")
	assert.Equal(t, "Refunds are accepted.", tt.Text())
	assert.Equal(t, chatprotocol.LifecycleCompleted, tt.Status)
	assert.Equal(t, []chatprotocol.Provenance{{Provider: "openai", Model: "gpt-x", RequestID: "req-1"}}, tt.Provenance)

	assert.ErrorIs(t, p.Delta(ctx, "more"), refusal.ErrTurnTerminated)
	assert.ErrorIs(t, p.Provenance(ctx, "x", "", ""), refusal.ErrTurnTerminated)
	assert.ErrorIs(t, p.Interrupt(ctx, "shutdown"), refusal.ErrTurnTerminated)
	_, err := p.RunToolCall(ctx, turn.ToolCall{Name: "search"}, (&counter{output: `{}`}).tool)
	assert.ErrorIs(t, err, refusal.ErrTurnTerminated)
	assert.Len(t, h.envelopes("t-1"), 5, "nothing after the end")

	_, err = turn.Start(ctx, h.window, key, h.options())
	assert.ErrorIs(t, err, refusal.ErrTurnTerminated, "an ended turn is not started again")
	rec, err := h.rec.Load(ctx, worker, refOf("t-1"))
	require.NoError(t, err)
	assert.Equal(t, "completed", string(rec.Status), "the end committed through recovery")
}

// A failure is an error event with its explicit retry permission, then
// lifecycle failed; a cause's text never reaches the stream.
func TestFailuresAreErrorEventsThenFailed(t *testing.T) {
	ctx := t.Context()
	cases := []struct {
		err       error
		code      chatprotocol.ErrorCode
		retryable bool
		after     *int64
	}{
		{&turn.Failure{Code: "rate-limited", Message: "try again soon", Retryable: true, RetryAfter: 2 * time.Second}, "rate-limited", true, ptr(int64(2000))},
		{fmt.Errorf("model loop: %w", &turn.Failure{Code: "quota", Message: "out of credit", Err: errors.New("secret account 42")}), "quota", false, nil},
		{errors.New("dial tcp 10.0.0.7:5432: secret host"), chatprotocol.ErrorCode(refusal.CodeInternal), false, nil},
		{refusal.New(refusal.CodeNeedsReconciliation, "", "effect outcome unknown"), "needs-reconciliation", false, nil},
	}
	for i, c := range cases {
		h := newHost(t)
		id := "t-" + string(rune('1'+i))
		p := h.start(id)
		require.NoError(t, p.End(ctx, c.err))
		envs := h.envelopes(id)
		require.Equal(t, []string{"lifecycle", "error", "lifecycle"}, types(envs))
		ev := envs[1].Event.(*chatprotocol.ErrorEvent)
		assert.Equal(t, c.code, ev.Code)
		assert.Equal(t, c.retryable, ev.Retryable)
		assert.Equal(t, c.after, ev.RetryAfterMs)
		assert.NotContains(t, ev.Message, "secret")
		assert.Equal(t, chatprotocol.LifecycleFailed, envs[2].Event.(*chatprotocol.LifecycleEvent).Status)
		rec, err := h.rec.Load(ctx, worker, refOf(id))
		require.NoError(t, err)
		assert.Equal(t, "failed", string(rec.Status), "the end committed through recovery")
	}
}

// Text over the frame limit goes out as several deltas, each within the
// limit, that join to the text.
func TestLongTextIsSplit(t *testing.T) {
	ctx := t.Context()
	const limit = 400
	h := newHostOn(t, replay.NewMemory(&replay.MemoryOptions{MaxFrameBytes: limit}))
	opts := h.options()
	opts.MaxFrameBytes = limit
	p, err := turn.Start(ctx, h.window, key, opts)
	require.NoError(t, err)
	text := strings.Repeat("héllo \"wörld\"\n\u0001 ", 100)
	require.NoError(t, p.Delta(ctx, text))
	require.NoError(t, p.Delta(ctx, "short"))
	envs := h.envelopes("t-1")
	require.Greater(t, len(envs), 4)
	var joined strings.Builder
	for _, env := range envs[1:] {
		b, err := env.AppendJSON(nil)
		require.NoError(t, err)
		assert.LessOrEqual(t, len(b), limit)
		joined.WriteString(env.Event.(*chatprotocol.DeltaEvent).Text)
	}
	assert.Equal(t, text+"short", joined.String())
}

// Concurrent writers of one turn get contiguous seqs and every text once.
func TestConcurrentUse(t *testing.T) {
	ctx := t.Context()
	h := newHost(t)
	p := h.start("t-1")
	const writers, each = 8, 100
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := range each {
				assert.NoError(t, p.Delta(ctx, string(rune('a'+w))+strings.Repeat("x", i%3)+"|"))
			}
		})
	}
	wg.Wait()
	require.NoError(t, p.Complete(ctx))
	envs := h.envelopes("t-1")
	require.Len(t, envs, writers*each+2)
	tt, _ := h.state("t-1").Turn("t-1")
	for w := range writers {
		assert.Equal(t, each, strings.Count(tt.Text(), string(rune('a'+w))))
	}
}

// Emit appends the events the Producer keeps no account of and refuses
// those its methods write.
func TestEmit(t *testing.T) {
	ctx := t.Context()
	h := newHost(t)
	p := h.start("t-1")
	require.NoError(t, p.Emit(ctx, &chatprotocol.ResultEvent{Blocks: []chatprotocol.ResultBlock{{Kind: chatprotocol.ResultBlockText, Text: "done"}}}))
	require.NoError(t, p.Emit(ctx, &chatprotocol.DeltaEvent{Text: "hi"}))
	for _, ev := range []chatprotocol.Event{
		&chatprotocol.LifecycleEvent{Status: chatprotocol.LifecycleCompleted},
		&chatprotocol.ToolCallEvent{CallID: "x", Name: "n"},
		&chatprotocol.CardClosedEvent{CorrelationID: "k"},
	} {
		assert.ErrorIs(t, p.Emit(ctx, ev), refusal.ErrInvalidEvent, ev.EventType())
	}
	assert.Equal(t, []string{"lifecycle", "result", "delta"}, types(h.envelopes("t-1")))
}

// Ids a produced turn cannot carry are refused before anything is
// written.
func TestStartRefusesIDs(t *testing.T) {
	ctx := t.Context()
	h := newHost(t)
	_, err := turn.Start(ctx, h.window, replay.Key{ConversationID: conversation, TurnID: strings.Repeat("t", turn.MaxTurnIDBytes+1)}, h.options())
	assert.ErrorIs(t, err, refusal.ErrInvalidEnvelope)
	_, err = turn.Start(ctx, h.window, replay.Key{TurnID: "t"}, h.options())
	assert.ErrorIs(t, err, refusal.ErrInvalidEnvelope)
	p, err := turn.Start(ctx, h.window, replay.Key{ConversationID: conversation, TurnID: strings.Repeat("t", turn.MaxTurnIDBytes)}, nil)
	require.NoError(t, err, "the longest turn id gives event ids within 256 bytes")
	require.NoError(t, p.Complete(ctx))
}

func ptr[T any](v T) *T { return &v }
