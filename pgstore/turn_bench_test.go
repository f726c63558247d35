package pgstore

import (
	"context"
	"encoding/json"
	"strconv"
	"testing"
	"time"

	"github.com/Papercusp/chat-protocol-go/recovery"
	"github.com/Papercusp/chat-protocol-go/replay"
	"github.com/Papercusp/chat-protocol-go/turn"
)

// BenchmarkToolCallOnPostgres compares a tool call through turn.Producer
// (tool_call, Execute, tool_result on a memory window) with a bare
// TurnRecovery.Execute of the same tool, both on a RecoveryStore (docs/
// contract.md section 16.3), in alternating chunks of one run: the ratio
// is the producer's overhead on a store a host runs in production.
func BenchmarkToolCallOnPostgres(b *testing.B) {
	ctx := b.Context()
	st := newRecoveryStore(b, poolOpts{maxConns: 4})
	runs := turn.NewRuns()
	rec := recovery.New(recovery.Host{Store: st, Authorizer: allowAll{}, Aborter: runs}, nil)
	tool := func(context.Context) (json.RawMessage, error) { return json.RawMessage(`{"hits":2}`), nil }
	launcher := recovery.LauncherFunc(func(context.Context, recovery.EffectRef) (recovery.Execution, error) {
		return recovery.Go(ctx, func(ctx context.Context) (recovery.Result, error) {
			out, err := tool(ctx)
			return recovery.Result{Data: append(append([]byte(`{"status":"ok","output":`), out...), '}')}, err
		}), nil
	})
	slots := make([]string, turn.DefaultToolSlots)
	for i := range slots {
		slots[i] = "tool-" + strconv.Itoa(i+1)
	}
	tag := "bench-tc-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	w := replay.NewMemory(nil)
	var p *turn.Producer
	var ref recovery.TurnRef
	var bare, produced time.Duration
	const chunk = 32
	b.ResetTimer()
	for i := 0; i < b.N; i += chunk {
		start := time.Now()
		for j := i; j < min(i+chunk, b.N); j++ {
			if j%len(slots) == 0 {
				ref = recovery.TurnRef{Conversation: tag, Turn: "bare-" + strconv.Itoa(j)}
				if _, err := rec.Start(ctx, "w", ref, slots); err != nil {
					b.Fatal(err)
				}
			}
			if _, err := rec.Execute(ctx, "w", recovery.EffectRef{Turn: ref, Effect: slots[j%len(slots)]}, launcher); err != nil {
				b.Fatal(err)
			}
		}
		bare += time.Since(start)
		start = time.Now()
		for j := i; j < min(i+chunk, b.N); j++ {
			if j%turn.DefaultToolSlots == 0 {
				var err error
				if p, err = turn.Start(ctx, w, replay.Key{ConversationID: tag, TurnID: "p-" + strconv.Itoa(j)},
					&turn.Options{Recovery: rec, Runs: runs, Caller: "w"}); err != nil {
					b.Fatal(err)
				}
			}
			if _, err := p.RunToolCall(ctx, turn.ToolCall{ID: "call_" + strconv.Itoa(j), Name: "search"}, tool); err != nil {
				b.Fatal(err)
			}
		}
		produced += time.Since(start)
	}
	b.StopTimer()
	b.ReportMetric(float64(bare.Nanoseconds())/float64(b.N), "execute-ns/op")
	b.ReportMetric(float64(produced.Nanoseconds())/float64(b.N), "toolcall-ns/op")
	b.ReportMetric(produced.Seconds()/bare.Seconds(), "toolcall-vs-execute")
}
