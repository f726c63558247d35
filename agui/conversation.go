package agui

import (
	"context"
	"encoding/json"
	"net/http"

	"github.com/Papercusp/chat-protocol-go/conversation"
	"github.com/Papercusp/chat-protocol-go/refusal"
	"github.com/Papercusp/chat-protocol-go/replay"
)

// StartRunOf returns a [HandlerOptions.StartRun] that starts the run's turn
// in g's conversation store (docs/contract.md sections 18.2 and 20.2): the
// caller from g's Access, the thread as the conversation (created for the
// caller on its first run), the content of the input's last user message (a
// string, or the text of its text parts) as the user's text and the run id
// as the start's request key ([conversation.TurnStart]), then run, which
// launches the turn's producer and returns. A run that fails ends the turn
// failed in the store. A run id the thread has seen, on any instance
// sharing the store, is that run's turn again, running or ended, for a
// caller the Gate lets start and read it: run is not called, and the
// handler streams the turn from its first frame, replayed whole. Another
// run id while a turn runs is turn-running.
func StartRunOf(g *conversation.Gate, run func(ctx context.Context, r *http.Request, c conversation.Conversation, t conversation.Turn, in *RunInput) error) func(ctx context.Context, r *http.Request, in *RunInput) (replay.Key, error) {
	return func(ctx context.Context, r *http.Request, in *RunInput) (replay.Key, error) {
		caller, err := g.Access.Caller(r)
		if err != nil {
			return replay.Key{}, refusal.Wrap(refusal.CodeTurnNotFound, "", "no session", err)
		}
		start := conversation.TurnStart{UserText: lastUserContent(in.Messages), Key: in.RunID}
		c, t, started, err := g.StartTurn(ctx, caller, in.ThreadID, start, true)
		if err != nil {
			return replay.Key{}, err
		}
		if !started {
			return replay.Key{ConversationID: c.ID, TurnID: t.ID}, nil
		}
		if err := run(ctx, r, c, t, in); err != nil {
			return replay.Key{}, conversation.NotStarted(ctx, g.Store, c.ID, t.ID, err)
		}
		return replay.Key{ConversationID: c.ID, TurnID: t.ID}, nil
	}
}

// lastUserContent is the content of the last user message of an AG-UI
// messages array: a string as it is, a list of parts the text of its text
// parts joined; "" when there is none.
func lastUserContent(messages json.RawMessage) string {
	var msgs []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	}
	if json.Unmarshal(messages, &msgs) != nil {
		return ""
	}
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role != "user" {
			continue
		}
		var s string
		if json.Unmarshal(msgs[i].Content, &s) == nil {
			return s
		}
		var parts []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		}
		_ = json.Unmarshal(msgs[i].Content, &parts)
		for _, p := range parts {
			if p.Type == "text" {
				s += p.Text
			}
		}
		return s
	}
	return ""
}

// HistoryOf returns a [HandlerOptions.History] that reads the thread's
// history through g, for a caller the rule lets read it
// ([conversation.Gate.ReadHistory]), and gives it as the run's turn
// started ([conversation.History.Upto]): the earlier turns and the run's
// user message, the same for the run replayed later ([MessagesSnapshot]).
func HistoryOf(g *conversation.Gate) func(ctx context.Context, r *http.Request, key replay.Key) (json.RawMessage, error) {
	return func(ctx context.Context, r *http.Request, key replay.Key) (json.RawMessage, error) {
		h, err := g.ReadHistory(ctx, r, key.ConversationID)
		if err != nil {
			return nil, err
		}
		return MessagesSnapshot(h.Upto(key.TurnID))
	}
}
