package turn_test

import (
	"context"
	"encoding/json"
	"strconv"
	"testing"

	chatprotocol "github.com/Papercusp/chat-protocol-go"

	"github.com/Papercusp/chat-protocol-go/internal/testkit/benchcpu"
	"github.com/Papercusp/chat-protocol-go/recovery"
	"github.com/Papercusp/chat-protocol-go/replay"
	"github.com/Papercusp/chat-protocol-go/turn"
)

// The baselines and the Producer's figures are read in one run, by their
// CPU time per operation (cpu-ns/op), which a shared machine disturbs less
// than the wall clock:
//
//	go test ./turn -run '^$' -bench . -benchmem -count 10 | benchstat -
//
// Delta against Append: the Producer's overhead per delta over the bare
// Append it wraps (target: at most 1.2x, no allocation beyond the
// envelope's). RunToolCall against Execute, a bare TurnRecovery.Execute on
// the same store, and against ExecuteWired, that Execute with its
// tool_call and tool_result appended by hand (target: at most 1.1x).
// The delta benchmarks start their turns before the measured loop; the
// tool-call ones in it, one turn every turn.DefaultToolSlots calls.

const benchText = "Refunds are accepted within 30 days of delivery. "

// benchDeltas is the number of deltas of one turn in the delta
// benchmarks, so that the window's retention works the same in both.
const benchDeltas = 5000

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

// turnsFor returns the turn keys n operations of per each need.
func turnsFor(n, per int) []replay.Key {
	keys := make([]replay.Key, n/per+1)
	for i := range keys {
		keys[i] = replay.Key{ConversationID: "c", TurnID: "t-" + strconv.Itoa(i)}
	}
	return keys
}

// BenchmarkAppend is the baseline of BenchmarkDelta: the same envelopes,
// ids and timestamp included, appended to the same window (held, as the
// Producer holds it, as a replay.Window) directly.
func BenchmarkAppend(b *testing.B) {
	ctx := context.Background()
	var w replay.Window = replay.NewMemory(nil)
	keys := turnsFor(b.N, benchDeltas)
	hands := make([]byHand, len(keys))
	for i, k := range keys { // as turn.Start does
		hands[i].key = k
		if _, err := w.Append(ctx, k, hands[i].next(&chatprotocol.LifecycleEvent{Status: chatprotocol.LifecycleStarted})); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	meter := benchcpu.Start()
	for i := range b.N {
		h := &hands[i/benchDeltas]
		if _, err := w.Append(ctx, h.key, h.next(&chatprotocol.DeltaEvent{Text: benchText})); err != nil {
			b.Fatal(err)
		}
	}
	meter.Report(b, 0)
}

// BenchmarkDelta is Producer.Delta on a memory window: the seq, the event
// id, the at and the lifecycle checks around the same Append.
func BenchmarkDelta(b *testing.B) {
	ctx := context.Background()
	w := replay.NewMemory(nil)
	producers := make([]*turn.Producer, 0, b.N/benchDeltas+1)
	for _, k := range turnsFor(b.N, benchDeltas) {
		p, err := turn.Start(ctx, w, k, nil)
		if err != nil {
			b.Fatal(err)
		}
		producers = append(producers, p)
	}
	b.ReportAllocs()
	b.ResetTimer()
	meter := benchcpu.Start()
	for i := range b.N {
		if err := producers[i/benchDeltas].Delta(ctx, benchText); err != nil {
			b.Fatal(err)
		}
		if i%benchDeltas == benchDeltas-1 {
			producers[i/benchDeltas] = nil // a host holds its running turns only
		}
	}
	meter.Report(b, 0)
}

// benchHost is a TurnRecovery over an in-memory store that lets the
// worker do everything.
func benchHost() (*recovery.TurnRecovery, *turn.Runs) {
	runs := turn.NewRuns()
	return recovery.New(recovery.Host{Store: recovery.NewMemoryStore(nil), Authorizer: allowList{}, Aborter: runs}, nil), runs
}

// benchTool is the tool of the tool-call benchmarks.
func benchTool(context.Context) (json.RawMessage, error) { return json.RawMessage(`{"hits":2}`), nil }

// benchSlots are the effect slots a Producer authorizes by default.
func benchSlots() []string {
	slots := make([]string, turn.DefaultToolSlots)
	for i := range slots {
		slots[i] = "tool-" + strconv.Itoa(i+1)
	}
	return slots
}

// benchStored is what a Producer stores for benchTool's answer
// (docs/contract.md section 16.3): a host that wires its tool calls by hand
// stores the status too, to append the same tool_result after a restart.
const benchStored = `{"status":"ok","output":`

// benchLauncher runs benchTool through recovery.Go, storing its answer as
// a Producer does.
func benchLauncher(ctx context.Context) recovery.Launcher {
	return recovery.LauncherFunc(func(context.Context, recovery.EffectRef) (recovery.Execution, error) {
		return recovery.Go(ctx, func(ctx context.Context) (recovery.Result, error) {
			out, err := benchTool(ctx)
			data := append(append(make([]byte, 0, len(benchStored)+len(out)+1), benchStored...), out...)
			return recovery.Result{Data: append(data, '}')}, err
		}), nil
	})
}

// BenchmarkExecute is a baseline of BenchmarkRunToolCall: the same tool run
// through TurnRecovery.Execute on the same store, in turns of
// turn.DefaultToolSlots effects, each started (TurnRecovery.Start) in the
// loop.
func BenchmarkExecute(b *testing.B) {
	ctx := context.Background()
	rec, _ := benchHost()
	slots, launcher := benchSlots(), benchLauncher(ctx)
	var ref recovery.TurnRef
	b.ReportAllocs()
	meter := benchcpu.Start()
	for i := 0; b.Loop(); i++ {
		if i%len(slots) == 0 {
			ref = recovery.TurnRef{Conversation: "c", Turn: "t-" + strconv.Itoa(i)}
			if _, err := rec.Start(ctx, worker, ref, slots); err != nil {
				b.Fatal(err)
			}
		}
		if _, err := rec.Execute(ctx, worker, recovery.EffectRef{Turn: ref, Effect: slots[i%len(slots)]}, launcher); err != nil {
			b.Fatal(err)
		}
	}
	meter.Report(b, 0)
}

// BenchmarkExecuteWired is BenchmarkExecute with its tool_call and
// tool_result appended by hand around it, on a memory window, each turn
// started with its lifecycle started: what a host without a Producer
// writes for its tool calls.
func BenchmarkExecuteWired(b *testing.B) {
	ctx := context.Background()
	rec, _ := benchHost()
	var w replay.Window = replay.NewMemory(nil)
	slots, launcher := benchSlots(), benchLauncher(ctx)
	var h byHand
	var ref recovery.TurnRef
	b.ReportAllocs()
	meter := benchcpu.Start()
	for i := 0; b.Loop(); i++ {
		if i%len(slots) == 0 {
			h.key, h.seq = replay.Key{ConversationID: "c", TurnID: "t-" + strconv.Itoa(i)}, 0
			ref = recovery.TurnRef{Conversation: "c", Turn: h.key.TurnID}
			if _, err := rec.Start(ctx, worker, ref, slots); err != nil {
				b.Fatal(err)
			}
			if _, err := w.Append(ctx, h.key, h.next(&chatprotocol.LifecycleEvent{Status: chatprotocol.LifecycleStarted})); err != nil {
				b.Fatal(err)
			}
		}
		id := "call_" + strconv.Itoa(i)
		if _, err := w.Append(ctx, h.key, h.next(&chatprotocol.ToolCallEvent{CallID: id, Name: "search"})); err != nil {
			b.Fatal(err)
		}
		res, err := rec.Execute(ctx, worker, recovery.EffectRef{Turn: ref, Effect: slots[i%len(slots)]}, launcher)
		if err != nil {
			b.Fatal(err)
		}
		out := res.Data[len(benchStored) : len(res.Data)-1]
		ev := &chatprotocol.ToolResultEvent{CallID: id, Status: chatprotocol.ToolResultOK, Output: out}
		if _, err := w.Append(ctx, h.key, h.next(ev)); err != nil {
			b.Fatal(err)
		}
	}
	meter.Report(b, 0)
}

// BenchmarkRunToolCall is Producer.RunToolCall: tool_call, the Execute of
// BenchmarkExecute, and tool_result, on a memory window, each turn started
// (turn.Start) in the loop.
func BenchmarkRunToolCall(b *testing.B) {
	ctx := context.Background()
	rec, runs := benchHost()
	w := replay.NewMemory(nil)
	var p *turn.Producer
	b.ReportAllocs()
	meter := benchcpu.Start()
	for i := 0; b.Loop(); i++ {
		if i%turn.DefaultToolSlots == 0 {
			var err error
			p, err = turn.Start(ctx, w, replay.Key{ConversationID: "c", TurnID: "t-" + strconv.Itoa(i)},
				&turn.Options{Recovery: rec, Runs: runs, Caller: worker})
			if err != nil {
				b.Fatal(err)
			}
		}
		if _, err := p.RunToolCall(ctx, turn.ToolCall{ID: "call_" + strconv.Itoa(i), Name: "search"}, benchTool); err != nil {
			b.Fatal(err)
		}
	}
	meter.Report(b, 0)
}
