package agent_test

import (
	"context"
	"encoding/json"
	"strconv"
	"testing"

	chatprotocol "github.com/Papercusp/chat-protocol-go"

	"github.com/Papercusp/chat-protocol-go/agent"
	"github.com/Papercusp/chat-protocol-go/ingest"
)

// benchSteps is the number of model steps of a benchmark turn: each but
// the last says something and asks for one tool call.
const benchSteps = 4

// benchModel plays a benchmark turn's steps, counted per turn.
type benchModel struct{ step int }

var benchInput = json.RawMessage(`{"q":"refunds"}`)

func (m *benchModel) Step(ctx context.Context, _ *agent.Request, sink ingest.Sink) (agent.Reply, error) {
	m.step++
	if err := sink.Provenance(ctx, "test", "m-1", ""); err != nil {
		return agent.Reply{}, err
	}
	if err := sink.Delta(ctx, "Let me look that up for you. "); err != nil {
		return agent.Reply{}, err
	}
	reason := "end_turn"
	if m.step < benchSteps {
		if err := sink.AnnounceToolCall(ctx, "call_"+strconv.Itoa(m.step), "search", benchInput); err != nil {
			return agent.Reply{}, err
		}
		reason = "tool_use"
	}
	if err := sink.Usage(ctx, tokens(10)); err != nil {
		return agent.Reply{}, err
	}
	return agent.Reply{}, sink.Complete(ctx, reason)
}

func benchTool(context.Context, json.RawMessage) (json.RawMessage, error) {
	return json.RawMessage(`{"found":true}`), nil
}

// BenchmarkLoopStep measures a model step and its tool call through the
// loop, against the same steps driven by hand (a StepSink, RunToolCall,
// End) on the same stores: the loop's own cost is the difference. Both
// report ns/step.
func BenchmarkLoopStep(b *testing.B) {
	b.Run("loop", func(b *testing.B) {
		s := newStores(b)
		pr := s.process()
		ctx := context.Background()
		m := &benchModel{}
		loop := &agent.Loop{Model: m, Tools: []agent.Tool{searchTool(benchTool)}}
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			m.step = 0
			p, err := pr.start(nil, "t-"+strconv.Itoa(i))
			if err != nil {
				b.Fatal(err)
			}
			out, err := loop.Run(ctx, p, history)
			if err != nil || out.Status != chatprotocol.LifecycleCompleted {
				b.Fatal(out.Status, err)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*benchSteps), "ns/step")
	})
	b.Run("baseline", func(b *testing.B) {
		s := newStores(b)
		pr := s.process()
		ctx := context.Background()
		m := &benchModel{}
		req := &agent.Request{Messages: history}
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			m.step = 0
			p, err := pr.start(nil, "t-"+strconv.Itoa(i))
			if err != nil {
				b.Fatal(err)
			}
			var usage int64
			for range benchSteps {
				if _, err := p.StartStep(ctx); err != nil {
					b.Fatal(err)
				}
				sink := ingest.StepSink(p)
				if _, err := m.Step(ctx, req, sink); err != nil {
					b.Fatal(err)
				}
				usage += *sink.Consumed().TotalTokens
				for _, c := range sink.Calls() {
					if _, err := p.RunToolCall(ctx, c, func(ctx context.Context) (json.RawMessage, error) { return benchTool(ctx, c.Input) }); err != nil {
						b.Fatal(err)
					}
				}
			}
			p.SetUsage(tokens(usage))
			if err := p.End(ctx, nil); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*benchSteps), "ns/step")
	})
}
