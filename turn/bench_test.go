package turn_test

import (
	"context"
	"encoding/json"
	"strconv"
	"testing"

	chatprotocol "github.com/Papercusp/chat-protocol-go"

	"github.com/Papercusp/chat-protocol-go/recovery"
	"github.com/Papercusp/chat-protocol-go/replay"
	"github.com/Papercusp/chat-protocol-go/turn"
)

// The baselines and the Producer's figures are meant to be read in one run:
//
//	go test ./turn -run '^$' -bench . -benchmem -count 10 | benchstat -
//
// Delta is the Producer's overhead per delta over the bare Append it wraps
// (target: at most 1.2x, and no allocation beyond the envelope's); ToolCall
// over a bare TurnRecovery.Execute on the same store (at most 1.1x).

const benchText = "Refunds are accepted within 30 days of delivery. "

// benchTurns bounds the deltas of one turn in the delta benchmarks, so that
// the window's retention works the same in both.
const benchTurns = 5000

// benchAt is the at of the baselines' envelopes.
const benchAt = "2026-03-01T12:00:00.000Z"

// byHand builds envelopes as a host without a Producer would: the next
// seq, the event id "<turnId>:<seq>" in one allocation, a fixed at.
type byHand struct {
	key replay.Key
	seq int64
	buf []byte
}

func (h *byHand) next(ev chatprotocol.Event) *chatprotocol.ChatEventEnvelope {
	h.seq++
	h.buf = strconv.AppendInt(append(append(h.buf[:0], h.key.TurnID...), ':'), h.seq, 10)
	return &chatprotocol.ChatEventEnvelope{ConversationID: h.key.ConversationID, TurnID: h.key.TurnID,
		EventID: string(h.buf), Seq: h.seq, Event: ev, At: benchAt}
}

// BenchmarkAppend is the baseline of BenchmarkDelta: the same envelopes,
// ids and timestamp included, appended to the same window (held, as the
// Producer holds it, as a replay.Window) directly.
func BenchmarkAppend(b *testing.B) {
	ctx := context.Background()
	var w replay.Window = replay.NewMemory(nil)
	var h byHand
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if i%benchTurns == 0 {
			h.key, h.seq = replay.Key{ConversationID: "c", TurnID: "t-" + strconv.Itoa(i)}, 0
		}
		if _, err := w.Append(ctx, h.key, h.next(&chatprotocol.DeltaEvent{Text: benchText})); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDelta is Producer.Delta on a memory window: the seq, the event
// id, the at and the lifecycle checks around the same Append.
func BenchmarkDelta(b *testing.B) {
	ctx := context.Background()
	w := replay.NewMemory(nil)
	var p *turn.Producer
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if i%benchTurns == 0 {
			b.StopTimer()
			var err error
			if p, err = turn.Start(ctx, w, replay.Key{ConversationID: "c", TurnID: "t-" + strconv.Itoa(i)}, nil); err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
		}
		if err := p.Delta(ctx, benchText); err != nil {
			b.Fatal(err)
		}
	}
}

// benchHost is a TurnRecovery over an in-memory store that lets the
// worker do everything.
func benchHost() (*recovery.TurnRecovery, *turn.Runs) {
	runs := turn.NewRuns()
	return recovery.New(recovery.Host{Store: recovery.NewMemoryStore(nil), Authorizer: allowList{}, Aborter: runs}, nil), runs
}

// benchTool is the tool of the tool-call benchmarks.
func benchTool(context.Context) (json.RawMessage, error) { return json.RawMessage(`{"hits":2}`), nil }

// BenchmarkExecute is the baseline of BenchmarkToolCall: the same tool run
// through TurnRecovery.Execute on the same store, a new turn of
// turn.DefaultToolSlots effects every turn.DefaultToolSlots calls.
func BenchmarkExecute(b *testing.B) {
	ctx := context.Background()
	rec, _ := benchHost()
	slots := make([]string, turn.DefaultToolSlots)
	for i := range slots {
		slots[i] = "tool-" + strconv.Itoa(i+1)
	}
	launcher := recovery.LauncherFunc(func(context.Context, recovery.EffectRef) (recovery.Execution, error) {
		return recovery.Go(ctx, func(ctx context.Context) (recovery.Result, error) {
			out, err := benchTool(ctx)
			return recovery.Result{Data: out}, err
		}), nil
	})
	var ref recovery.TurnRef
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if i%turn.DefaultToolSlots == 0 {
			b.StopTimer()
			ref = recovery.TurnRef{Conversation: "c", Turn: "t-" + strconv.Itoa(i)}
			if _, err := rec.Start(ctx, worker, ref, slots); err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
		}
		if _, err := rec.Execute(ctx, worker, recovery.EffectRef{Turn: ref, Effect: slots[i%turn.DefaultToolSlots]}, launcher); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkExecuteWired is BenchmarkExecute with its tool_call and
// tool_result appended by hand around it, on a memory window: what a host
// without a Producer writes for a tool call.
func BenchmarkExecuteWired(b *testing.B) {
	ctx := context.Background()
	rec, _ := benchHost()
	var w replay.Window = replay.NewMemory(nil)
	slots := make([]string, turn.DefaultToolSlots)
	for i := range slots {
		slots[i] = "tool-" + strconv.Itoa(i+1)
	}
	launcher := recovery.LauncherFunc(func(context.Context, recovery.EffectRef) (recovery.Execution, error) {
		return recovery.Go(ctx, func(ctx context.Context) (recovery.Result, error) {
			out, err := benchTool(ctx)
			return recovery.Result{Data: out}, err
		}), nil
	})
	var h byHand
	var ref recovery.TurnRef
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if i%turn.DefaultToolSlots == 0 {
			b.StopTimer()
			h.key, h.seq = replay.Key{ConversationID: "c", TurnID: "t-" + strconv.Itoa(i)}, 0
			ref = recovery.TurnRef{Conversation: "c", Turn: h.key.TurnID}
			if _, err := rec.Start(ctx, worker, ref, slots); err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
		}
		id := "call_" + strconv.Itoa(i)
		if _, err := w.Append(ctx, h.key, h.next(&chatprotocol.ToolCallEvent{CallID: id, Name: "search"})); err != nil {
			b.Fatal(err)
		}
		res, err := rec.Execute(ctx, worker, recovery.EffectRef{Turn: ref, Effect: slots[i%turn.DefaultToolSlots]}, launcher)
		if err != nil {
			b.Fatal(err)
		}
		ev := &chatprotocol.ToolResultEvent{CallID: id, Status: chatprotocol.ToolResultOK, Output: res.Data}
		if _, err := w.Append(ctx, h.key, h.next(ev)); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkToolCall is Producer.ToolCall: tool_call, the Execute of
// BenchmarkExecute, and tool_result, on a memory window.
func BenchmarkToolCall(b *testing.B) {
	ctx := context.Background()
	rec, runs := benchHost()
	w := replay.NewMemory(nil)
	var p *turn.Producer
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if i%turn.DefaultToolSlots == 0 {
			b.StopTimer()
			var err error
			p, err = turn.Start(ctx, w, replay.Key{ConversationID: "c", TurnID: "t-" + strconv.Itoa(i)},
				&turn.Options{Recovery: rec, Runs: runs, Caller: worker})
			if err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
		}
		if _, err := p.ToolCall(ctx, turn.ToolCall{ID: "call_" + strconv.Itoa(i), Name: "search"}, benchTool); err != nil {
			b.Fatal(err)
		}
	}
}
