package main

import (
	chatprotocol "github.com/Papercusp/chat-protocol-go"
	"github.com/Papercusp/chat-protocol-go/legacy"
)

// legacyDialect returns the dialect --dialect names. A legacy0 stream is
// decoded in that dialect and upgraded through a legacy.StreamHost, the
// host the command acts as (docs/contract.md section 9): the conversation id
// from --conversation or the session frame, the turn id from --turn or
// "turn-1", event ids and seqs counted, tool call ids stable per turn and
// ordinal, no product type registered (see pipeline.go).
func legacyDialect(name string) (legacy.Dialect, bool) { return legacy.ParseDialect(name) }

// productFrame reports whether a legacy frame the dialect does not define
// is a product frame, which is not a violation: it goes to the sink as an
// app event. A frame whose type is a contract type the dialect does not
// define (token under --dialect papercusp, delta under scout) is none: the
// upgrade refuses it with unsupported-event, so that a stream read with
// the wrong dialect fails instead of decoding to a turn without text.
func productFrame(app *legacy.AppFrame) bool { return !contractType(app.Type) }

// contractType reports whether t names a type of version 0 or version 1
// (docs/contract.md sections 2 and 6), which no host may register as a
// product type (chatprotocol.NewRegistry refuses it).
func contractType(t string) bool {
	_, v0 := legacy.FrameChannel(t)
	_, v1 := chatprotocol.EventChannel(t)
	return v0 || v1
}
