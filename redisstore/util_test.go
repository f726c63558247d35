package redisstore

import (
	"crypto/rand"
	"encoding/hex"
	"strconv"

	chatprotocol "github.com/Papercusp/chat-protocol-go"
	"github.com/Papercusp/chat-protocol-go/replay"
)

// randomKey returns a fresh turn of a fresh conversation.
func randomKey(turn string) replay.Key {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return replay.Key{ConversationID: "c-" + hex.EncodeToString(b[:]), TurnID: turn}
}

// envelope returns key's envelope at seq: started at 1, completed when
// last, a delta of text otherwise.
func envelope(key replay.Key, seq int64, text string, last bool) *chatprotocol.ChatEventEnvelope {
	var ev chatprotocol.Event = &chatprotocol.DeltaEvent{Text: text}
	switch {
	case seq == 1:
		ev = &chatprotocol.LifecycleEvent{Status: chatprotocol.LifecycleStarted}
	case last:
		ev = &chatprotocol.LifecycleEvent{Status: chatprotocol.LifecycleCompleted}
	}
	return &chatprotocol.ChatEventEnvelope{ConversationID: key.ConversationID, TurnID: key.TurnID,
		EventID: key.TurnID + ":" + strconv.FormatInt(seq, 10), Seq: seq, Event: ev}
}

// word is the text of seq's delta.
func word(seq int64) string { return "w" + strconv.FormatInt(seq, 10) + " " }
