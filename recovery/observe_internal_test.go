package recovery

import (
	"context"
	"testing"

	"github.com/Papercusp/chat-protocol-go/internal/testkit/benchcpu"
	"github.com/Papercusp/chat-protocol-go/observe"
)

type nopObserver struct{}

func (nopObserver) Observe(ctx context.Context, _ observe.Event) context.Context { return ctx }

// BenchmarkReports measures the reports one Start and one Execute of a
// fresh effect make (turn.start, effect.claim, admit, launch, complete)
// on their own, without an observer and with a no-op one: the absolute
// cost an observer adds to BenchmarkExecute's iteration.
func BenchmarkReports(b *testing.B) {
	for _, c := range []struct {
		name string
		obs  observe.Observer
	}{{"observer=nil", nil}, {"observer=nop", nopObserver{}}} {
		b.Run(c.name, func(b *testing.B) {
			r := &TurnRecovery{obs: c.obs}
			effect := EffectRef{Turn: TurnRef{Conversation: "c", Turn: "t"}, Effect: "call-1"}
			ctx := b.Context()
			b.ReportAllocs()
			cpu := benchcpu.Start()
			for b.Loop() {
				r.report(ctx, observe.TurnStart, effect.Turn, nil)
				rep := effectReport{obs: r.obs, effect: effect}
				rctx := rep.claim(ctx)
				rep.point(observe.EffectAdmit)
				rep.point(observe.EffectLaunch)
				rep.end(rctx, nil)
			}
			cpu.Report(b, 0)
		})
	}
}

// The reports allocate nothing, with or without an observer.
func TestReportsAllocateNothing(t *testing.T) {
	for _, obs := range []observe.Observer{nil, nopObserver{}} {
		r := &TurnRecovery{obs: obs}
		effect := EffectRef{Turn: TurnRef{Conversation: "c", Turn: "t"}, Effect: "call-1"}
		ctx := context.Background()
		allocs := testing.AllocsPerRun(100, func() {
			r.report(ctx, observe.TurnStart, effect.Turn, nil)
			rep := effectReport{obs: r.obs, effect: effect}
			rctx := rep.claim(ctx)
			rep.point(observe.EffectAdmit)
			rep.end(rctx, nil)
			r.reportEnd(ctx, effect.Turn, TurnCancelled, nil)
			r.reportAbort(ctx, effect.Turn, 1, nil)
		})
		if allocs != 0 {
			t.Errorf("observer %T: %.1f allocations, want 0", obs, allocs)
		}
	}
}
