package stream

import (
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/Papercusp/chat-protocol-go/replay"
)

// maxIDBytes is the longest conversation or turn id, as for an envelope
// (docs/contract.md section 5).
const maxIDBytes = 256

// PathKey is the default [HandlerOptions.Key]: the conversation and turn ids
// of the request's path wildcards {conversation} and {turn}, as a Go 1.22
// ServeMux pattern such as
//
//	GET /conversations/{conversation}/turns/{turn}/events
//
// sets them (r.PathValue). It never fails: a missing wildcard gives an
// empty id, which the Handler answers as an unknown turn.
func PathKey(r *http.Request) (replay.Key, error) {
	return replay.Key{ConversationID: r.PathValue("conversation"), TurnID: r.PathValue("turn")}, nil
}

// validKey reports whether both ids of key are ids an envelope could carry
// and a header or log line can hold: 1 to 256 bytes of valid UTF-8 without
// NUL, CR or LF.
func validKey(key replay.Key) bool {
	return validID(key.ConversationID) && validID(key.TurnID)
}

func validID(id string) bool {
	return id != "" && len(id) <= maxIDBytes && utf8.ValidString(id) && !strings.ContainsAny(id, "\x00\r\n")
}
