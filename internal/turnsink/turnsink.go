// Package turnsink runs a provider stream's [ingest.ProducerSink] over a
// [turn.Producer] that writes to a window of its own and hands each
// envelope to a function as it is appended: the turn numbered from seq 1,
// lifecycle started first, event ids "<turnId>:<seq>", one terminal
// lifecycle carrying the usage (docs/contract.md sections 16 and 17), and
// no "at", so that its output is the same on every run. chatwire ingest,
// the conformance runner and the ingest tests use it; a host gives
// [ingest.ProducerSink] its own producer.
package turnsink

import (
	"context"
	"encoding/json"
	"sync"
	"time"

	chatprotocol "github.com/Papercusp/chat-protocol-go"
	"github.com/Papercusp/chat-protocol-go/ingest"
	"github.com/Papercusp/chat-protocol-go/replay"
	"github.com/Papercusp/chat-protocol-go/turn"
)

// Sink is an [ingest.Sink] that starts its turn's producer at its first
// call. It is not safe for concurrent use.
type Sink struct {
	key    replay.Key
	window *emitWindow
	sink   ingest.Sink
}

// New returns the Sink of turn turnID of conversation conversationID; emit
// receives each envelope in seq order and must not keep the pointer. An
// error of emit stops the stream: the Sink's methods return it.
func New(conversationID, turnID string, emit func(*chatprotocol.ChatEventEnvelope) error) *Sink {
	w := &emitWindow{Memory: replay.NewMemory(&replay.MemoryOptions{MaxFrames: 1}), emit: emit} // emitted as appended: nothing to keep
	return &Sink{key: replay.Key{ConversationID: conversationID, TurnID: turnID}, window: w}
}

// start starts the producer, whose first envelope is lifecycle started.
func (s *Sink) start(ctx context.Context) error {
	if s.sink != nil {
		return s.window.failed()
	}
	p, err := turn.Start(ctx, s.window, s.key, &turn.Options{Now: func() time.Time { return time.Time{} }})
	if err != nil {
		return err
	}
	s.sink = ingest.ProducerSink(p)
	return s.window.failed()
}

// do starts the producer if need be, then runs f and returns its error or
// emit's.
func (s *Sink) do(ctx context.Context, f func(ingest.Sink) error) error {
	if err := s.start(ctx); err != nil {
		return err
	}
	if err := f(s.sink); err != nil {
		return err
	}
	return s.window.failed()
}

// Provenance implements [ingest.Sink].
func (s *Sink) Provenance(ctx context.Context, provider, model, responseID string) error {
	return s.do(ctx, func(k ingest.Sink) error { return k.Provenance(ctx, provider, model, responseID) })
}

// Delta implements [ingest.Sink].
func (s *Sink) Delta(ctx context.Context, text string) error {
	return s.do(ctx, func(k ingest.Sink) error { return k.Delta(ctx, text) })
}

// Reasoning implements [ingest.ReasoningSink].
func (s *Sink) Reasoning(ctx context.Context, text string) error {
	return s.do(ctx, func(k ingest.Sink) error { return k.(ingest.ReasoningSink).Reasoning(ctx, text) })
}

// Source implements [ingest.SourceSink].
func (s *Sink) Source(ctx context.Context, src chatprotocol.WebSource) error {
	return s.do(ctx, func(k ingest.Sink) error { return k.(ingest.SourceSink).Source(ctx, src) })
}

// AnnounceToolCall implements [ingest.Sink].
func (s *Sink) AnnounceToolCall(ctx context.Context, callID, name string, input json.RawMessage) error {
	return s.do(ctx, func(k ingest.Sink) error { return k.AnnounceToolCall(ctx, callID, name, input) })
}

// Usage implements [ingest.Sink].
func (s *Sink) Usage(ctx context.Context, u chatprotocol.Usage) error {
	return s.do(ctx, func(k ingest.Sink) error { return k.Usage(ctx, u) })
}

// Complete implements [ingest.Sink].
func (s *Sink) Complete(ctx context.Context, reason string) error {
	return s.do(ctx, func(k ingest.Sink) error { return k.Complete(ctx, reason) })
}

// Fail implements [ingest.Sink].
func (s *Sink) Fail(ctx context.Context, code chatprotocol.ErrorCode, message string, retryable bool) error {
	return s.do(ctx, func(k ingest.Sink) error { return k.Fail(ctx, code, message, retryable) })
}

// emitWindow is a memory window that hands each envelope it stores to
// emit, and keeps emit's first error.
type emitWindow struct {
	*replay.Memory
	emit func(*chatprotocol.ChatEventEnvelope) error

	mu  sync.Mutex
	err error
}

// Append stores env, then hands it to emit unless emit failed before.
func (w *emitWindow) Append(ctx context.Context, key replay.Key, env *chatprotocol.ChatEventEnvelope) (replay.Frame, error) {
	f, err := w.Memory.Append(ctx, key, env)
	if err != nil {
		return f, err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err == nil {
		w.err = w.emit(env)
	}
	return f, nil
}

func (w *emitWindow) failed() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}
