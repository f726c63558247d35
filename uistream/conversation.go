package uistream

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"

	"github.com/Papercusp/chat-protocol-go/conversation"
	"github.com/Papercusp/chat-protocol-go/internal/bridge"
	"github.com/Papercusp/chat-protocol-go/refusal"
	"github.com/Papercusp/chat-protocol-go/replay"
)

// StartTurnOf returns a [HandlerOptions.StartTurn] that starts the turn in
// g's conversation store (docs/contract.md sections 18.1 and 20.2): the
// caller from g's Access, the chat id as the conversation (created for the
// caller on its first POST, as useChat chooses chat ids), the text of the
// body's last user message (its text parts joined) as the user's text,
// then run, which launches the turn's producer and returns. A run that
// fails ends the turn failed in the store. The key is the conversation and
// the new turn.
//
// A POST that submits a user message (trigger submit-message, the last
// message a user message, so [Request.Continues] is "") takes that
// message's id as the start's request key ([conversation.TurnStart]): the
// same message sent again, to any instance sharing the store, gets its
// turn, running or ended, streamed from its first chunk, and run is not
// called. A regenerate, or a POST that continues an assistant message
// (tool answers), starts a new turn.
func StartTurnOf(g *conversation.Gate, run func(ctx context.Context, r *http.Request, c conversation.Conversation, t conversation.Turn, req *Request) error) func(ctx context.Context, r *http.Request, req *Request) (replay.Key, error) {
	return func(ctx context.Context, r *http.Request, req *Request) (replay.Key, error) {
		caller, err := g.Access.Caller(r)
		if err != nil {
			return replay.Key{}, refusal.Wrap(refusal.CodeTurnNotFound, "", "no session", err)
		}
		text, lastID := lastUser(req.Messages)
		start := conversation.TurnStart{UserText: text}
		if req.Trigger == "submit-message" && req.Continues == "" && bridge.ValidID(lastID) {
			start.Key = lastID
		}
		c, t, started, err := g.StartTurn(ctx, caller, req.ChatID, start, true)
		if err != nil {
			return replay.Key{}, err
		}
		if !started {
			return replay.Key{ConversationID: c.ID, TurnID: t.ID}, nil
		}
		if err := run(ctx, r, c, t, req); err != nil {
			return replay.Key{}, conversation.NotStarted(ctx, g.Store, c.ID, t.ID, err)
		}
		return replay.Key{ConversationID: c.ID, TurnID: t.ID}, nil
	}
}

// lastUser reads the last user message of a UIMessage[]: its text (its
// text parts joined; "" when there is none) and, when it is the array's
// last message, its id ("" otherwise).
func lastUser(messages json.RawMessage) (text, lastID string) {
	var msgs []struct {
		ID    string `json:"id"`
		Role  string `json:"role"`
		Parts []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"parts"`
	}
	if json.Unmarshal(messages, &msgs) != nil {
		return "", ""
	}
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role != "user" {
			continue
		}
		var b strings.Builder
		for _, p := range msgs[i].Parts {
			if p.Type == "text" {
				b.WriteString(p.Text)
			}
		}
		if i == len(msgs)-1 {
			lastID = msgs[i].ID
		}
		return b.String(), lastID
	}
	return "", ""
}
