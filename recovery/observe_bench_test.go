package recovery_test

import (
	"strconv"
	"testing"

	"github.com/Papercusp/chat-protocol-go/internal/testkit/benchcpu"

	"github.com/Papercusp/chat-protocol-go/observe"
	"github.com/Papercusp/chat-protocol-go/recovery"
	"github.com/Papercusp/chat-protocol-go/recovery/recoverytest"
)

// BenchmarkExecute measures what an observer costs Execute: each iteration
// starts a turn of one effect and executes it (claim, admission, launch,
// completion) over the in-memory store, without an observer and with a
// no-op one. Compare both with a run of the nil case at a commit before
// observers existed. cpu-ns/op, the process's CPU time per iteration, is
// the figure to compare on a loaded machine.
func BenchmarkExecute(b *testing.B) {
	for _, c := range []struct {
		name string
		obs  observe.Observer
	}{{"observer=nil", nil}, {"observer=nop", nopObserver{}}} {
		b.Run(c.name, func(b *testing.B) {
			host := recoverytest.NewHost(&recoverytest.HostOptions{Outcome: okOutcome})
			rec := recovery.New(recovery.Host{Store: recoverytest.NewDB(nil).Open("w"), Authorizer: host},
				&recovery.Options{Worker: "w", Observer: c.obs})
			effects := []string{"call-1"}
			ctx := b.Context()
			b.ReportAllocs()
			n := 0
			cpu := benchcpu.Start()
			for b.Loop() {
				n++
				t := recovery.TurnRef{Conversation: "c", Turn: strconv.Itoa(n)}
				host.Grant(caller, t)
				if _, err := rec.Start(ctx, caller, t, effects); err != nil {
					b.Fatal(err)
				}
				if _, err := rec.Execute(ctx, caller, recovery.EffectRef{Turn: t, Effect: "call-1"}, host); err != nil {
					b.Fatal(err)
				}
			}
			cpu.Report(b, 0)
		})
	}
}
