// Package ingestkit holds what the tests of the SDK bindings of package
// ingest share (ingest/openaisdk, ingest/anthropicsdk): a loopback server
// replaying a recorded body, one answering each request with the next
// recorded step and keeping the requests, a sink that writes a turn's
// envelopes as chatwire ingest prints them, one that records a step, one
// that only counts, a long conversation, the per-delta figures of their
// benchmarks, and an agent loop's turn on memory stores ([RunTurn]).
package ingestkit

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"runtime"
	"testing"

	chatprotocol "github.com/Papercusp/chat-protocol-go"
	"github.com/Papercusp/chat-protocol-go/ingest"
	"github.com/Papercusp/chat-protocol-go/internal/turnsink"
)

// Serve serves body with status and contentType as the answer to every
// request, on a loopback server closed when t ends, and returns its URL.
func Serve(t testing.TB, status int, contentType string, body []byte) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", contentType)
		w.WriteHeader(status)
		w.Write(body)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// Collect returns a sink writing turn t-1 of conversation c-1 to out as
// canonical lines, applying each envelope to a state as chatwire decode
// --state would.
func Collect(out *bytes.Buffer) ingest.Sink {
	state := chatprotocol.NewChatStateV1("c-1")
	return turnsink.New("c-1", "t-1", func(env *chatprotocol.ChatEventEnvelope) error {
		if err := state.Apply(*env); err != nil {
			return err
		}
		b, err := env.AppendJSON(nil)
		out.Write(append(b, '\n'))
		return err
	})
}

// Counter is an [ingest.Sink] that only counts its calls.
type Counter struct{ N int }

func (c *Counter) Provenance(context.Context, string, string, string) error { c.N++; return nil }
func (c *Counter) Delta(context.Context, string) error                      { c.N++; return nil }
func (c *Counter) AnnounceToolCall(context.Context, string, string, json.RawMessage) error {
	c.N++
	return nil
}
func (c *Counter) Usage(context.Context, chatprotocol.Usage) error { c.N++; return nil }
func (c *Counter) Complete(context.Context, string) error          { c.N++; return nil }
func (c *Counter) Fail(context.Context, chatprotocol.ErrorCode, string, bool) error {
	c.N++
	return nil
}

// Measure runs body in b's loop over a body of size bytes with deltas
// deltas (text deltas and argument fragments), and reports time and
// allocations per delta beside the usual figures.
func Measure(b *testing.B, size, deltas int, body func() error) {
	b.SetBytes(int64(size))
	b.ReportAllocs()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for b.Loop() {
		if err := body(); err != nil {
			b.Fatal(err)
		}
	}
	runtime.ReadMemStats(&after)
	n := float64(b.N) * float64(deltas)
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/n, "ns/delta")
	b.ReportMetric(float64(after.Mallocs-before.Mallocs)/n, "allocs/delta")
}
