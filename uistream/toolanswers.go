package uistream

import (
	"errors"
	"net/http"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/Papercusp/chat-protocol-go/cards"
	"github.com/Papercusp/chat-protocol-go/interactions"
	"github.com/Papercusp/chat-protocol-go/internal/bridge"
	"github.com/Papercusp/chat-protocol-go/refusal"
	"github.com/Papercusp/chat-protocol-go/serve"
)

// cardReply is the answer a card's tool part in the client's messages
// says it holds under CardsTools (docs/contract.md section 18.1): an
// approval response (approved set), or a tool output (output, nil for an
// output-error). It names a card and grants nothing: the card's kind, its
// caller and its state are the store's.
type cardReply struct {
	id       string // the toolCallId, the card's correlation id
	approved *bool
	output   jsontext.Value
}

// uiMessage is what the bridge reads of a message the client sent.
type uiMessage struct {
	ID    string           `json:"id"`
	Role  string           `json:"role"`
	Parts []jsontext.Value `json:"parts"`
}

// toolPart is what the bridge reads of a tool-card part.
type toolPart struct {
	Type       string         `json:"type"`
	ToolCallID string         `json:"toolCallId"`
	State      string         `json:"state"`
	Output     jsontext.Value `json:"output"`
	Approval   *struct {
		ID       string `json:"id"`
		Approved *bool  `json:"approved"`
	} `json:"approval"`
}

// readMessages reads, of the messages the client sent (already checked
// strict), the id of the last when it is an assistant message, whether
// the last is a user message, and, when replies, the card replies of the
// last assistant message's tool-card parts that hold one: states
// approval-responded, output-available, output-error and output-denied.
// A reply whose approval id is not its toolCallId is refused.
func readMessages(messages jsontext.Value, replies bool) (continues string, user bool, out []cardReply, err error) {
	var msgs []uiMessage
	if jsonv2.Unmarshal(messages, &msgs) != nil {
		return "", false, nil, nil // not UI messages: nothing to continue or land
	}
	if n := len(msgs); n > 0 {
		last := msgs[n-1]
		user = last.Role == "user"
		if last.Role == "assistant" && bridge.ValidID(last.ID) {
			continues = last.ID
		}
	}
	if !replies {
		return continues, user, nil, nil
	}
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role != "assistant" {
			continue
		}
		for _, raw := range msgs[i].Parts {
			var p toolPart
			if err := jsonv2.Unmarshal(raw, &p); err != nil || p.Type != "tool-"+CardToolName {
				continue // not a card's part, whatever else it is
			}
			r, ok, err := replyOf(&p)
			if err != nil {
				return "", false, nil, err
			}
			if ok {
				out = append(out, r)
			}
		}
		break
	}
	return continues, user, out, nil
}

// replyOf reads the reply a tool-card part holds, if any.
func replyOf(p *toolPart) (cardReply, bool, error) {
	switch p.State {
	case "approval-responded", "output-available", "output-error", "output-denied":
	default:
		return cardReply{}, false, nil // not answered yet
	}
	if !bridge.ValidID(p.ToolCallID) {
		return cardReply{}, false, errors.New("a card's tool part has no valid toolCallId")
	}
	r := cardReply{id: p.ToolCallID}
	if a := p.Approval; a != nil {
		if a.ID != p.ToolCallID || a.Approved == nil {
			return cardReply{}, false, errors.New("a card's approval is not {id: its toolCallId, approved}")
		}
		r.approved = a.Approved
	}
	if p.State == "output-available" && r.approved == nil {
		r.output = p.Output
	}
	return r, true, nil
}

// landReplies lands the card replies of req's messages through a, with
// the session's caller: it reads each card (its kind, whether it allows a
// decline) and lands the submission the reply makes of it, or answers the
// request with the refusal and reports false.
func (h *Handler) landReplies(w http.ResponseWriter, r *http.Request, a *bridge.Answers, req *Request, replies []cardReply) bool {
	keys := make([]interactions.Key, len(replies))
	for i, rep := range replies {
		keys[i] = interactions.Key{Conversation: req.ChatID, CorrelationID: rep.id}
	}
	views, ok := bridge.Read(h.engine, w, r, a, keys)
	if !ok {
		return false
	}
	subs := make([]interactions.Submission, len(replies))
	for i, rep := range replies {
		resp, err := responseOf(rep, views[i].Record.Spec)
		if err != nil {
			serve.Refuse(w, refusal.CodeInvalidAnswer, err.Error())
			return false
		}
		subs[i] = interactions.Submission{ID: rep.id, Response: resp}
	}
	res, ok := bridge.Land(h.engine, w, r, a, keys, subs)
	if !ok {
		return false
	}
	req.ToolAnswers = make([]Answer, len(res))
	for i := range res {
		req.ToolAnswers[i] = Answer{SubmissionID: subs[i].ID, Response: subs[i].Response, Result: res[i], Repeated: repeated(res[i])}
	}
	return true
}

// responseOf is the card response a reply makes for a card of spec: a
// confirm card takes an approval, approved a submit of
// {"approved":true}, refused a decline when the card allows one, else a
// cancel; any other card takes a tool output, a submit of its value, or a
// cancel for an output-error.
func responseOf(rep cardReply, spec cards.CardSpec) (cards.CardResponse, error) {
	resp := cards.CardResponse{CorrelationID: rep.id}
	switch confirm := spec.Presentation == nil; {
	case confirm && rep.approved == nil:
		return resp, errors.New("a confirm card is answered by an approval response")
	case confirm && *rep.approved:
		resp.Action, resp.Value = cards.CardActionSubmit, []byte(`{"approved":true}`)
	case confirm && spec.AllowDecline:
		resp.Action = cards.CardActionDecline
	case confirm:
		resp.Action = cards.CardActionCancel
	case rep.approved != nil:
		return resp, errors.New("a card that asks is answered by a tool output")
	case rep.output == nil:
		resp.Action = cards.CardActionCancel
	default:
		resp.Action, resp.Value = cards.CardActionSubmit, []byte(rep.output)
	}
	return resp, nil
}

// repeated reports whether res is a repeat's: [bridge.Land] returns the
// record stored before, without a transition, for a submission the
// Resolver refused with [refusal.ErrDuplicateAnswer]; a stored answer
// always has one.
func repeated(res interactions.Result) bool { return res.Transition == nil }
