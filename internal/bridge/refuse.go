package bridge

import (
	"errors"
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/Papercusp/chat-protocol-go/refusal"
	"github.com/Papercusp/chat-protocol-go/replay"
	"github.com/Papercusp/chat-protocol-go/serve"
)

// RefuseBody answers a body [reqbody.Read] refused: 413 frame-too-large
// when it was too large, else 400 invalid-input (an upload that broke or
// outlasted the read deadline).
func RefuseBody(w http.ResponseWriter, err error) {
	if errors.Is(err, refusal.ErrFrameTooLarge) {
		serve.Refuse(w, refusal.CodeFrameTooLarge, "the request body is too large")
		return
	}
	serve.Refuse(w, refusal.CodeInvalidInput, "the request body could not be read")
}

// Denied reports whether err is a host hook's denial: turn-not-found or
// unauthorized, which a bridge answers exactly as an unknown chat.
func Denied(err error) bool {
	code := refusal.CodeOf(err)
	return code == refusal.CodeTurnNotFound || code == refusal.CodeUnauthorized
}

// RefuseHook answers a host hook's error (docs/contract.md section 18.3):
// a denial as an unknown turn (404 turn-not-found, the same bytes for
// both), invalid-input 400, turn-running 409 (a start while another turn
// of the chat runs: repeating it changes nothing), stale-cursor 410 with
// the bounds (a request key's ended turn that the window forgot,
// refused by the conversation store that settles), and anything else 503
// store-unavailable with Retry-After, its text only in the log.
func RefuseHook(e *serve.Engine, w http.ResponseWriter, r *http.Request, hook string, err error) {
	switch {
	case Denied(err):
		serve.Refuse(w, refusal.CodeTurnNotFound, "no such chat")
	case refusal.CodeOf(err) == refusal.CodeInvalidInput:
		serve.Refuse(w, refusal.CodeInvalidInput, "the request names nothing a chat can hold")
	case refusal.CodeOf(err) == refusal.CodeTurnRunning:
		serve.Refuse(w, refusal.CodeTurnRunning, "a turn of the chat is running")
	case refusal.CodeOf(err) == refusal.CodeStaleCursor:
		var b replay.Bounds
		if ce, ok := errors.AsType[*replay.CursorError](err); ok {
			b = ce.Bounds
		}
		serve.RefuseBounds(w, refusal.CodeStaleCursor, "the window no longer holds the turn; read the chat's history", b)
	default:
		e.Logger().WarnContext(r.Context(), "bridge: a host hook failed", "hook", hook, "err", err)
		e.Unavailable(w, msgUnavailable)
	}
}

// msgUnavailable is the bridges' words for a 503.
const msgUnavailable = "the stream is unavailable; retry later"

// ValidID reports whether id is an id an envelope could carry and a
// header or log line can hold: 1 to 256 bytes of valid UTF-8 without NUL,
// CR or LF (docs/contract.md section 5.1).
func ValidID(id string) bool {
	return id != "" && len(id) <= 256 && utf8.ValidString(id) && !strings.ContainsAny(id, "\x00\r\n")
}
