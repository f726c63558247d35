package agent_test

import (
	"context"
	"encoding/json"
	"slices"
	"strconv"
	"testing"
	"time"

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
// End) on the same stores, the two alternating turn by turn so that the
// machine's load falls on both alike. It reports each one's ns/step and
// the median of the pairs' ratios; the loop's own cost is the difference.
func BenchmarkLoopStep(b *testing.B) {
	s := newStores(b)
	pr := s.process()
	ctx := context.Background()
	m := &benchModel{}
	loop := &agent.Loop{Model: m, Tools: []agent.Tool{searchTool(benchTool)}}
	req := &agent.Request{Messages: history}
	var inLoop, byHand time.Duration
	var ratios []float64 // of each pair of turns, run back to back
	turns := 0
	viaLoop := func() {
		m.step = 0
		turns++
		start := time.Now()
		p, err := pr.start(nil, "t-"+strconv.Itoa(turns))
		if err != nil {
			b.Fatal(err)
		}
		out, err := loop.Run(ctx, p, history)
		if err != nil || out.Status != chatprotocol.LifecycleCompleted {
			b.Fatal(out.Status, err)
		}
		inLoop += time.Since(start)
	}
	baseline := func() {
		m.step = 0
		turns++
		start := time.Now()
		p, err := pr.start(nil, "t-"+strconv.Itoa(turns))
		if err != nil {
			b.Fatal(err)
		}
		for range benchSteps {
			if _, err := p.StartStep(ctx); err != nil {
				b.Fatal(err)
			}
			sink := ingest.StepSink(p)
			if _, err := m.Step(ctx, req, sink); err != nil {
				b.Fatal(err)
			}
			for _, c := range sink.Calls() {
				if _, err := p.RunToolCall(ctx, c, func(ctx context.Context) (json.RawMessage, error) { return benchTool(ctx, c.Input) }); err != nil {
					b.Fatal(err)
				}
			}
		}
		if err := p.End(ctx, nil); err != nil {
			b.Fatal(err)
		}
		byHand += time.Since(start)
	}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		l0, h0 := inLoop, byHand
		if i%2 == 0 {
			viaLoop()
			baseline()
		} else {
			baseline()
			viaLoop()
		}
		ratios = append(ratios, float64(inLoop-l0)/float64(byHand-h0))
	}
	steps := float64(b.N * benchSteps)
	b.ReportMetric(float64(inLoop.Nanoseconds())/steps, "loop-ns/step")
	b.ReportMetric(float64(byHand.Nanoseconds())/steps, "baseline-ns/step")
	slices.Sort(ratios)
	b.ReportMetric(ratios[len(ratios)/2], "loop/baseline")
}
