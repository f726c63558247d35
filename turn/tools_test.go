package turn_test

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"sync"
	"testing"
	"time"

	chatprotocol "github.com/Papercusp/chat-protocol-go"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Papercusp/chat-protocol-go/recovery"
	"github.com/Papercusp/chat-protocol-go/refusal"
	"github.com/Papercusp/chat-protocol-go/replay"
	"github.com/Papercusp/chat-protocol-go/turn"
)

// A tool call appends tool_call under the provider's id (or its slot
// when it has none), runs the tool once as the effect of its slot, and
// appends tool_result from the stored result: ok, error or cancelled as
// the tool said.
func TestToolCalls(t *testing.T) {
	ctx := t.Context()
	h := newHost(t)
	p := h.start("t-1")
	search := &counter{output: `{"hits":2}`}
	res, err := p.RunToolCall(ctx, turn.ToolCall{ID: "call_abc", Name: "search", Input: json.RawMessage(`{"q":"refund"}`)}, search.tool)
	require.NoError(t, err)
	assert.Equal(t, turn.ToolResult{CallID: "call_abc", Status: chatprotocol.ToolResultOK, Output: json.RawMessage(`{"hits":2}`)}, res)

	res, err = p.RunToolCall(ctx, turn.ToolCall{Name: "charge"}, func(context.Context) (json.RawMessage, error) {
		return nil, &turn.ToolError{Status: chatprotocol.ToolResultError, Output: json.RawMessage(`{"reason":"card declined"}`)}
	})
	require.NoError(t, err)
	assert.Equal(t, turn.ToolResult{CallID: "tool-2", Status: chatprotocol.ToolResultError, Output: json.RawMessage(`{"reason":"card declined"}`)}, res)

	res, err = p.RunToolCall(ctx, turn.ToolCall{Name: "broken"}, func(context.Context) (json.RawMessage, error) {
		return json.RawMessage(`{"a":1,"a":2}`), nil // duplicated names: no tool_result may carry it
	})
	require.NoError(t, err)
	assert.Equal(t, turn.ToolResult{CallID: "tool-3", Status: chatprotocol.ToolResultError}, res)
	res, err = p.RunToolCall(ctx, turn.ToolCall{Name: "garbled"}, func(context.Context) (json.RawMessage, error) {
		return json.RawMessage(`not json`), nil
	})
	require.NoError(t, err)
	assert.Equal(t, turn.ToolResult{CallID: "tool-4", Status: chatprotocol.ToolResultError}, res)

	// The same call again is that call: its result, no second launch.
	res, err = p.RunToolCall(ctx, turn.ToolCall{ID: "call_abc", Name: "search"}, search.tool)
	require.NoError(t, err)
	assert.Equal(t, "call_abc", res.CallID)
	assert.EqualValues(t, 1, search.launches.Load())
	_, err = p.RunToolCall(ctx, turn.ToolCall{ID: "call_abc", Name: "other"}, search.tool)
	assert.ErrorIs(t, err, refusal.ErrInvalidEvent)
	require.NoError(t, p.Complete(ctx))

	tt, _ := h.state("t-1").Turn("t-1")
	require.Len(t, tt.ToolCalls, 4)
	assert.Equal(t, chatprotocol.ToolCallStatus("ok"), tt.ToolCalls[0].Status)
	assert.JSONEq(t, `{"q":"refund"}`, string(tt.ToolCalls[0].Input))
	assert.Equal(t, chatprotocol.ToolCallStatus("error"), tt.ToolCalls[1].Status)
	rec, err := h.rec.Load(ctx, worker, refOf("t-1"))
	require.NoError(t, err)
	for i, want := range []recovery.EffectState{"completed", "completed", "completed", "completed", "pending"} {
		assert.Equal(t, want, rec.Effects[i].State, "slot %d", i+1)
	}
}

// The turn's tool calls are bounded by its slots.
func TestToolSlots(t *testing.T) {
	ctx := t.Context()
	h := newHost(t)
	opts := h.options()
	opts.ToolSlots = 1
	p, err := turn.Start(ctx, h.window, key, opts)
	require.NoError(t, err)
	c := &counter{output: `1`}
	_, err = p.RunToolCall(ctx, turn.ToolCall{Name: "a"}, c.tool)
	require.NoError(t, err)
	_, err = p.RunToolCall(ctx, turn.ToolCall{Name: "b"}, c.tool)
	assert.ErrorIs(t, err, refusal.ErrUnknownEffect)
	assert.EqualValues(t, 1, c.launches.Load())
}

// A tool whose outcome it cannot tell needs reconciliation: the error says
// so, the stream says so with lifecycle needs-reconciliation, the tool is
// never run again, and Reconcile settles the call with the host's verified
// result.
func TestUnknownOutcome(t *testing.T) {
	ctx := t.Context()
	h := newHost(t)
	p := h.start("t-1")
	runs := 0
	flaky := func(context.Context) (json.RawMessage, error) {
		runs++
		return nil, errors.New("timeout after sending the request")
	}
	_, err := p.RunToolCall(ctx, turn.ToolCall{ID: "call-1", Name: "charge"}, flaky)
	require.ErrorIs(t, err, refusal.ErrNeedsReconciliation)
	_, err = p.RunToolCall(ctx, turn.ToolCall{ID: "call-1", Name: "charge"}, flaky)
	require.ErrorIs(t, err, refusal.ErrNeedsReconciliation)
	assert.Equal(t, 1, runs, "never a silent retry")
	assert.Equal(t, []turn.PendingCall{{ToolCall: turn.ToolCall{ID: "call-1", Name: "charge"}, Slot: "tool-1"}}, p.Pending())

	res, err := p.Reconcile(ctx, "call-1", func(context.Context) (json.RawMessage, error) {
		return json.RawMessage(`{"charged":true}`), nil
	})
	require.NoError(t, err)
	assert.Equal(t, turn.ToolResult{CallID: "call-1", Status: chatprotocol.ToolResultOK, Output: json.RawMessage(`{"charged":true}`)}, res)
	assert.Empty(t, p.Pending())
	require.NoError(t, p.Complete(ctx))

	envs := h.envelopes("t-1")
	assert.Equal(t, []string{"lifecycle", "tool_call", "lifecycle", "tool_result", "lifecycle"}, types(envs))
	assert.Equal(t, chatprotocol.LifecycleNeedsReconciliation, envs[2].Event.(*chatprotocol.LifecycleEvent).Status, "once, however often it is asked")
	_, err = p.Reconcile(ctx, "nope", nil)
	assert.ErrorIs(t, err, refusal.ErrUnknownCall)
}

// A Producer started again on the same window and stores, as after a
// crash, goes on at the latest seq plus one; a completed tool is not
// launched again, and one whose result never reached the stream gets its
// stored result; an admitted tool without a result needs reconciliation.
func TestRestartInProcess(t *testing.T) {
	ctx := t.Context()
	w := &lossy{Window: replay.NewMemory(nil)}
	h := newHostOn(t, w)
	p1 := h.start("t-1")
	require.NoError(t, p1.Delta(ctx, "Looking it up. "))
	search := &counter{output: `{"hits":2}`}
	_, err := p1.RunToolCall(ctx, turn.ToolCall{ID: "call_a", Name: "search"}, search.tool)
	require.NoError(t, err)

	// Call c: admitted, still running when the process "crashes".
	slow := newGate()
	stuck, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		_, err := p1.RunToolCall(stuck, turn.ToolCall{ID: "call_c", Name: "pay"}, slow.tool)
		done <- err
	}()
	<-slow.started
	cancel() // the worker stops waiting: its outcome is unknown
	require.ErrorIs(t, <-done, refusal.ErrNeedsReconciliation)

	// Call b: its effect completes, but its tool_result never lands.
	book := &counter{output: `{"booked":"B-7"}`}
	w.fail(ok, before, before, before)
	_, err = p1.RunToolCall(ctx, turn.ToolCall{ID: "call_b", Name: "book"}, book.tool)
	require.ErrorIs(t, err, turn.ErrUnsettled)
	assert.EqualValues(t, 1, book.launches.Load())
	before := h.envelopes("t-1")

	p2 := h.start("t-1")
	assert.Equal(t, before[len(before)-1].Seq, p2.Latest())
	assert.Equal(t, []turn.PendingCall{
		{ToolCall: turn.ToolCall{ID: "call_c", Name: "pay"}, Slot: "tool-2"},
		{ToolCall: turn.ToolCall{ID: "call_b", Name: "book"}, Slot: "tool-3"},
	}, p2.Pending())

	res, err := p2.RunToolCall(ctx, turn.ToolCall{ID: "call_a", Name: "search"}, search.tool)
	require.NoError(t, err)
	assert.Equal(t, `{"hits":2}`, string(res.Output))
	res, err = p2.RunToolCall(ctx, turn.ToolCall{ID: "call_b", Name: "book"}, book.tool)
	require.NoError(t, err)
	assert.Equal(t, `{"booked":"B-7"}`, string(res.Output))
	assert.EqualValues(t, 1, search.launches.Load())
	assert.EqualValues(t, 1, book.launches.Load(), "the stored result, not a second booking")

	_, err = p2.RunToolCall(ctx, turn.ToolCall{ID: "call_c", Name: "pay"}, slow.tool)
	var lease *recovery.LeaseError
	require.ErrorAs(t, err, &lease, "in flight under the first worker's lease")
	h.leases.Advance(recovery.DefaultLease + time.Second)
	_, err = p2.RunToolCall(ctx, turn.ToolCall{ID: "call_c", Name: "pay"}, slow.tool)
	require.ErrorIs(t, err, refusal.ErrNeedsReconciliation)

	// A new call of the resumed turn takes the next slot.
	res, err = p2.RunToolCall(ctx, turn.ToolCall{Name: "search"}, search.tool)
	require.NoError(t, err)
	assert.Equal(t, "tool-4", res.CallID)
	close(slow.release)
	require.NoError(t, p2.Complete(ctx))

	envs := h.envelopes("t-1")
	assert.Equal(t, before, envs[:len(before)], "the resumed turn appends after what was there")
	tt, _ := h.state("t-1").Turn("t-1")
	require.Len(t, tt.ToolCalls, 4)
	assert.Equal(t, chatprotocol.ToolCallPending, tt.ToolCalls[1].Status, "call_c awaits reconciliation")
	assert.Equal(t, chatprotocol.ToolCallStatus("ok"), tt.ToolCalls[2].Status)
	assert.Equal(t, chatprotocol.LifecycleCompleted, tt.Status)
}

// A resumed turn whose start the window pruned cannot tell its tool calls
// and cards: those calls are refused with stale-cursor, text goes on.
func TestResumePruned(t *testing.T) {
	ctx := t.Context()
	h := newHostOn(t, replay.NewMemory(&replay.MemoryOptions{MaxFrames: 3}))
	p1 := h.start("t-1")
	for range 5 {
		require.NoError(t, p1.Delta(ctx, "x"))
	}
	p2 := h.start("t-1")
	_, err := p2.RunToolCall(ctx, turn.ToolCall{Name: "search"}, (&counter{output: `1`}).tool)
	assert.ErrorIs(t, err, refusal.ErrStaleCursor)
	_, err = p2.Ask(ctx, helpfulCard("k-1"))
	assert.ErrorIs(t, err, refusal.ErrStaleCursor)
	require.NoError(t, p2.Delta(ctx, "y"))
	require.NoError(t, p2.Complete(ctx))
	assert.Equal(t, int64(8), p2.Latest())
}

// Tool calls made at once take distinct slots and each gets its own
// result.
func TestParallelToolCalls(t *testing.T) {
	ctx := t.Context()
	h := newHost(t)
	p := h.start("t-1")
	const n = 8
	results := make([]turn.ToolResult, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			out := json.RawMessage(`{"i":` + strconv.Itoa(i) + `}`)
			var err error
			results[i], err = p.RunToolCall(ctx, turn.ToolCall{ID: "call_" + strconv.Itoa(i), Name: "lookup"}, func(context.Context) (json.RawMessage, error) {
				return out, nil
			})
			assert.NoError(t, err)
		})
	}
	wg.Wait()
	require.NoError(t, p.Complete(ctx))
	for i, r := range results {
		assert.Equal(t, "call_"+strconv.Itoa(i), r.CallID)
		assert.Equal(t, `{"i":`+strconv.Itoa(i)+`}`, string(r.Output))
	}
	tt, _ := h.state("t-1").Turn("t-1")
	require.Len(t, tt.ToolCalls, n)
	rec, err := h.rec.Load(ctx, worker, refOf("t-1"))
	require.NoError(t, err)
	for i := range n {
		assert.Equal(t, recovery.EffectCompleted, rec.Effects[i].State)
	}
}

// A turn interrupted by a host going away is resumed by the next Producer,
// which ends it.
func TestInterruptedTurnResumes(t *testing.T) {
	ctx := t.Context()
	h := newHost(t)
	p1 := h.start("t-1")
	require.NoError(t, p1.Delta(ctx, "Half "))
	require.NoError(t, p1.Interrupt(ctx, "shutting down"))
	p2 := h.start("t-1")
	require.NoError(t, p2.Delta(ctx, "and half."))
	require.NoError(t, p2.Complete(ctx))
	assert.Equal(t, []string{"lifecycle", "delta", "lifecycle", "delta", "lifecycle"}, types(h.envelopes("t-1")))
	tt, _ := h.state("t-1").Turn("t-1")
	assert.Equal(t, "Half and half.", tt.Text())
	assert.Equal(t, chatprotocol.LifecycleCompleted, tt.Status)
}

// A tool call announced first (a provider stream asked for it) takes its
// slot and appears once: the later RunToolCall with its id runs it and
// adds only the tool_result. AnnounceToolCall needs no recovery; the terminal lifecycle
// carries the reason set; a clock at the zero time stamps no at.
func TestAnnounceToolCallThenRun(t *testing.T) {
	h := newHost(t)
	p := h.start("t-1")
	ctx := t.Context()
	require.NoError(t, p.AnnounceToolCall(ctx, turn.ToolCall{ID: "call_9", Name: "search_docs", Input: json.RawMessage(`{"q":"x"}`)}))
	c := &counter{output: `{"hits":2}`}
	res, err := p.RunToolCall(ctx, turn.ToolCall{ID: "call_9", Name: "search_docs"}, c.tool)
	require.NoError(t, err)
	assert.Equal(t, `{"hits":2}`, string(res.Output))
	assert.Equal(t, int64(1), c.launches.Load())
	p.SetReason("stop")
	require.NoError(t, p.Complete(ctx))
	envs := h.envelopes("t-1")
	assert.Equal(t, []string{"lifecycle", "tool_call", "tool_result", "lifecycle"}, types(envs))
	assert.Equal(t, "stop", envs[3].Event.(*chatprotocol.LifecycleEvent).Reason)
	rec, err := h.rec.Load(ctx, worker, refOf("t-1"))
	require.NoError(t, err)
	assert.Equal(t, recovery.EffectCompleted, rec.Effects[0].State, "the announced call ran as slot 1")

	bare := replay.NewMemory(nil)
	q, err := turn.Start(ctx, bare, key, &turn.Options{Now: func() time.Time { return time.Time{} }})
	require.NoError(t, err)
	require.NoError(t, q.AnnounceToolCall(ctx, turn.ToolCall{ID: "call_1", Name: "lookup"}))
	require.NoError(t, q.Complete(ctx))
	_, frames, err := bare.Read(ctx, key, 0, replay.DefaultPageBytes)
	require.NoError(t, err)
	require.Len(t, frames, 3)
	for _, f := range frames {
		env, err := chatprotocol.ParseEnvelope(f.Data)
		require.NoError(t, err)
		assert.Empty(t, env.At, "no at under a zero clock")
	}
}
