package uistream

import (
	"net/http"

	chatprotocol "github.com/Papercusp/chat-protocol-go"
	"github.com/Papercusp/chat-protocol-go/cards"
	"github.com/Papercusp/chat-protocol-go/internal/bridge"
)

// closing appends to dst the chunks that close, in the client's message,
// the cards whose answers req landed (docs/contract.md section 18.1):
// under CardsInPlace the answer member's card as a closed data-card part
// of its id, the card rebuilt from the stored record (no dataSchemaJson),
// when req continues a message or turn starts a turn; under CardsTools,
// when req continues the message that holds their parts, the tool output
// that ends each tool-card part it answered. Under CardsData, or for a
// resume (req nil), nothing.
func (h *Handler) closing(r *http.Request, dst []byte, req *Request, turn bool) []byte {
	if req == nil {
		return dst
	}
	switch h.opts.Cards {
	case CardsInPlace:
		if req.Answer == nil || (!turn && req.Continues == "") {
			return dst
		}
		rec := req.Answer.Result.Record
		card, err := (&chatprotocol.CardEvent{Card: rec.Snapshot("")}).CardJSON()
		if err != nil {
			h.engine.Logger().WarnContext(r.Context(), "uistream: a stored card cannot be written", "card", rec.Key.CorrelationID, "err", err)
			return dst
		}
		return cardPart(dst, rec.Key.CorrelationID, "closed", card, string(rec.Status))
	case CardsTools:
		if req.Continues == "" {
			return dst
		}
		for _, a := range req.ToolAnswers {
			rec := a.Result.Record
			denied := rec.Spec.Presentation == nil && rec.Answer != nil && rec.Answer.Action != cards.CardActionSubmit
			var output []byte
			if rec.Answer != nil {
				output = rec.Answer.Value
			}
			dst = toolClose(dst, rec.Key.CorrelationID, denied, string(rec.Status), output)
		}
	}
	return dst
}

// writeRepeat answers a POST of repeated answers only (Request.repeatOnly)
// with a stream that starts no turn: start, naming the message req
// continues when there is one (else none, so that the client adds no
// message), the chunks that close the answered cards there, under
// CardsTools an empty step (so that the client's automatic send finds no
// tool call left to answer), finish and [DONE].
func (h *Handler) writeRepeat(w http.ResponseWriter, r *http.Request, req *Request) {
	b := bridge.Begin(nil, "start")
	if id := h.continues(req); id != "" {
		b = h.closing(r, bridge.End(bridge.Str(b, "messageId", id)), req, false)
		if h.opts.Cards == CardsTools {
			b = bridge.End(bridge.Begin(bridge.End(bridge.Begin(b, "start-step")), "finish-step"))
		}
	} else {
		b = bridge.End(b)
	}
	reason := ""
	if h.opts.FinishReason {
		reason = "stop"
	}
	b = append(finish(b, reason), doneChunk...)
	hd := w.Header()
	hd.Set("Content-Type", "text/event-stream")
	hd.Set("Cache-Control", "no-cache")
	hd.Set(HeaderName, HeaderValue)
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(b) // a client gone away: nothing else to do
}
