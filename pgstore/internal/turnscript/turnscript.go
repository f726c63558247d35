// Package turnscript is the scripted turn of pgstore's multi-instance
// tests: the producer (internal/streamserver) appends it and the test
// computes the bytes every follower must receive from it.
package turnscript

import (
	"strconv"
	"strings"

	chatprotocol "github.com/Papercusp/chat-protocol-go"
	"github.com/Papercusp/chat-protocol-go/replay"
)

// Envelope is frame seq of key's scripted turn of n frames: lifecycle
// started at 1, lifecycle completed at n, and deltas between, each naming
// its turn and seq (so a frame of another conversation can never pass for
// one of this turn) with a JSON escape and a 4-byte rune.
func Envelope(key replay.Key, seq, n int64) *chatprotocol.ChatEventEnvelope {
	var ev chatprotocol.Event
	switch seq {
	case 1:
		ev = &chatprotocol.LifecycleEvent{Status: chatprotocol.LifecycleStarted}
	case n:
		ev = &chatprotocol.LifecycleEvent{Status: chatprotocol.LifecycleCompleted}
	default:
		ev = &chatprotocol.DeltaEvent{Text: "frame " + strconv.FormatInt(seq, 10) + " of " + key.ConversationID + "/" + key.TurnID +
			" \"q\" 😀 " + strings.Repeat("·", int(seq%17))}
	}
	return &chatprotocol.ChatEventEnvelope{ConversationID: key.ConversationID, TurnID: key.TurnID,
		EventID: "e-" + strconv.FormatInt(seq, 10), Seq: seq, Event: ev}
}

// Frames returns the canonical bytes of the n frames of key's scripted
// turn, seq 1 first.
func Frames(key replay.Key, n int64) ([][]byte, error) {
	out := make([][]byte, 0, n)
	for seq := int64(1); seq <= n; seq++ {
		b, err := Envelope(key, seq, n).AppendJSON(nil)
		if err != nil {
			return nil, err
		}
		out = append(out, b)
	}
	return out, nil
}
