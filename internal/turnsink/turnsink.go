// Package turnsink is the smallest ingest.Sink that makes version-1
// envelopes: it numbers one turn's events from seq 1, opens the turn with
// lifecycle started, names each event "<turnId>:<seq>", and ends it with one
// terminal lifecycle carrying the usage (docs/contract.md sections 5, 6 and
// 17). It stamps no "at", so that its output is the same on every run.
// chatwire ingest, the conformance runner and the SDK bindings' tests use
// it; a host uses its own turn producer instead.
package turnsink

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"

	chatprotocol "github.com/Papercusp/chat-protocol-go"
	"github.com/Papercusp/chat-protocol-go/replay"
)

// ErrEnded is returned by every call after the turn's terminal lifecycle.
var ErrEnded = errors.New("turnsink: the turn has ended")

// Sink makes the envelopes of one turn and hands each to its emit function.
// It is not safe for concurrent use.
type Sink struct {
	conversation, turn string
	emit               func(*chatprotocol.ChatEventEnvelope) error
	seq                int64
	started, ended     bool
	usage              *chatprotocol.Usage
}

// New returns the Sink of turn turnID of conversation conversationID; emit
// receives each envelope in seq order and must not keep the pointer.
func New(conversationID, turnID string, emit func(*chatprotocol.ChatEventEnvelope) error) *Sink {
	return &Sink{conversation: conversationID, turn: turnID, emit: emit}
}

// send emits ev as the next envelope, after lifecycle started for the first.
func (s *Sink) send(ev chatprotocol.Event) error {
	if s.ended {
		return ErrEnded
	}
	if !s.started {
		s.started = true
		if err := s.send(&chatprotocol.LifecycleEvent{Status: chatprotocol.LifecycleStarted}); err != nil {
			return err
		}
	}
	s.seq++
	env := chatprotocol.ChatEventEnvelope{
		ConversationID: s.conversation, TurnID: s.turn,
		EventID: s.turn + ":" + strconv.FormatInt(s.seq, 10), Seq: s.seq, Event: ev,
	}
	return s.emit(&env)
}

// Provenance emits a provenance event; the response id is its requestId.
func (s *Sink) Provenance(_ context.Context, provider, model, responseID string) error {
	return s.send(&chatprotocol.ProvenanceEvent{Provider: provider, Model: model, RequestID: responseID})
}

// Delta emits text as one delta, or as several when one frame could not
// hold it (replay.SplitDelta).
func (s *Sink) Delta(_ context.Context, text string) error {
	if len(text) < chatprotocol.DefaultMaxFrameBytes/2 {
		return s.send(&chatprotocol.DeltaEvent{Text: text})
	}
	template := chatprotocol.ChatEventEnvelope{ConversationID: s.conversation, TurnID: s.turn,
		EventID: s.turn + ":" + strconv.FormatInt(chatprotocol.MaxSeq, 10), Seq: chatprotocol.MaxSeq,
		Event: &chatprotocol.DeltaEvent{}}
	pieces, err := replay.SplitDelta(&template, text, chatprotocol.DefaultMaxFrameBytes)
	if err != nil {
		return err
	}
	for _, p := range pieces {
		if err := s.send(&chatprotocol.DeltaEvent{Text: p}); err != nil {
			return err
		}
	}
	return nil
}

// ToolCall emits a tool_call event.
func (s *Sink) ToolCall(_ context.Context, callID, name string, input json.RawMessage) error {
	return s.send(&chatprotocol.ToolCallEvent{CallID: callID, Name: name, Input: input})
}

// Usage keeps u for the terminal lifecycle.
func (s *Sink) Usage(_ context.Context, u chatprotocol.Usage) error {
	if s.ended {
		return ErrEnded
	}
	s.usage = &u
	return nil
}

// Complete emits lifecycle completed with reason and the usage.
func (s *Sink) Complete(_ context.Context, reason string) error {
	err := s.send(&chatprotocol.LifecycleEvent{Status: chatprotocol.LifecycleCompleted, Reason: reason, Usage: s.usage})
	s.ended = true
	return err
}

// Fail emits an error event and lifecycle failed with the usage.
func (s *Sink) Fail(_ context.Context, code, message string, retryable bool) error {
	if err := s.send(&chatprotocol.ErrorEvent{Code: code, Message: message, Retryable: retryable}); err != nil {
		return err
	}
	err := s.send(&chatprotocol.LifecycleEvent{Status: chatprotocol.LifecycleFailed, Usage: s.usage})
	s.ended = true
	return err
}
