package stream_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/Papercusp/chat-protocol-go/internal/testkit/benchcpu"
	"github.com/Papercusp/chat-protocol-go/observe"
	"github.com/Papercusp/chat-protocol-go/serve"
	"github.com/Papercusp/chat-protocol-go/stream"
)

// BenchmarkDelivery measures what an observer costs the handler's
// delivery: each iteration serves an ended turn of 100 frames (98 deltas
// of 64 bytes) from a Memory window to a recorder, without an observer and
// with a no-op one. Compare both with a run of the nil case at a commit
// before observers existed; cpu-ns/op, the process's CPU time per
// iteration, is the figure to compare on a loaded machine.
func BenchmarkDelivery(b *testing.B) {
	for _, c := range []struct {
		name string
		obs  observe.Observer
	}{{"observer=nil", nil}, {"observer=nop", nopObserver{}}} {
		b.Run(c.name, func(b *testing.B) {
			w := newWindow()
			appendAll(b, w, keyT1, script(keyT1, 98, 64))
			h := mux(newHandler(b, w, &stream.HandlerOptions{Options: serve.Options{Observer: c.obs}}))
			b.ReportAllocs()
			cpu := benchcpu.Start()
			for b.Loop() {
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, httptest.NewRequest("GET", path(keyT1), nil))
				if rec.Code != http.StatusOK {
					b.Fatal(rec.Code)
				}
			}
			cpu.Report(b, 0)
		})
	}
}
