package ingestkit

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	chatprotocol "github.com/Papercusp/chat-protocol-go"
	"github.com/Papercusp/chat-protocol-go/agent"
)

// Requests are the request bodies a [ServeSteps] server received, in order.
type Requests struct {
	mu     sync.Mutex
	bodies [][]byte
}

// Bodies returns the bodies received so far.
func (r *Requests) Bodies() [][]byte {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([][]byte(nil), r.bodies...)
}

// ServeSteps serves the n-th of steps, as an event stream, as the answer
// to the n-th request (404 past the last), on a loopback server closed when
// t ends, recording every request body; it returns the server's URL.
func ServeSteps(t testing.TB, steps ...[]byte) (string, *Requests) {
	t.Helper()
	reqs := &Requests{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		reqs.mu.Lock()
		n := len(reqs.bodies)
		reqs.bodies = append(reqs.bodies, body)
		reqs.mu.Unlock()
		if n >= len(steps) {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		w.Write(steps[n])
	}))
	t.Cleanup(srv.Close)
	return srv.URL, reqs
}

// Step is an [ingest.Sink] that records one step: its text, its calls and
// how it ended.
type Step struct {
	Text  string
	Calls []agent.Call
	// End is "complete REASON" or "fail CODE".
	End string
}

func (s *Step) Provenance(context.Context, string, string, string) error { return nil }
func (s *Step) Delta(_ context.Context, text string) error               { s.Text += text; return nil }
func (s *Step) AnnounceToolCall(_ context.Context, id, name string, input json.RawMessage) error {
	s.Calls = append(s.Calls, agent.Call{ID: id, Name: name, Input: input})
	return nil
}
func (s *Step) Usage(context.Context, chatprotocol.Usage) error { return nil }
func (s *Step) Complete(_ context.Context, reason string) error {
	s.End = "complete " + reason
	return nil
}
func (s *Step) Fail(_ context.Context, code chatprotocol.ErrorCode, _ string, _ bool) error {
	s.End = "fail " + string(code)
	return nil
}

// Message is the assistant message of the step, with reply's reasoning.
func (s *Step) Message(reply agent.Reply) agent.Message {
	return agent.Message{Role: agent.RoleAssistant, Text: s.Text, Calls: s.Calls, Reasoning: reply.Reasoning}
}
