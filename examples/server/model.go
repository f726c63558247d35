package main

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	chatprotocol "github.com/Papercusp/chat-protocol-go"
	"github.com/Papercusp/chat-protocol-go/cards"
	"github.com/Papercusp/chat-protocol-go/interactions"
	"github.com/Papercusp/chat-protocol-go/replay"
)

// model plays the scripted turns one after the other, appending each
// frame to the window every c.pace, and opens each turn's card with the
// resolver before its card frame goes out. It returns when the turns are
// done or ctx ends.
func model(ctx context.Context, window replay.Window, desk *cardSide, c config) error {
	for i := 1; i <= c.turns; i++ {
		key := replay.Key{ConversationID: conversation, TurnID: turnID(i)}
		for seq, ev := range script(key, c.deltas) {
			if card, ok := ev.(*chatprotocol.CardEvent); ok {
				if err := desk.open(ctx, card); err != nil {
					return err
				}
			}
			env := &chatprotocol.ChatEventEnvelope{ConversationID: key.ConversationID, TurnID: key.TurnID,
				EventID: fmt.Sprintf("%s-e-%d", key.TurnID, seq+1), Seq: int64(seq + 1), Event: ev,
				At: time.Now().UTC().Format(time.RFC3339Nano)}
			if _, err := window.Append(ctx, key, env); err != nil {
				return err
			}
			select { // time.After's timer is collected once it fires or is dropped (Go 1.23)
			case <-time.After(c.pace):
			case <-ctx.Done():
				return ctx.Err()
			}
		}
	}
	return nil
}

// script is one turn's events: started, half the deltas, a tool call and
// its result, the other deltas, a card asking whether the answer helped,
// completed.
func script(key replay.Key, deltas int) []chatprotocol.Event {
	words := []string{"Refunds ", "are ", "accepted ", "within ", "30 ", "days ", "of ", "delivery. "}
	evs := []chatprotocol.Event{&chatprotocol.LifecycleEvent{Status: chatprotocol.LifecycleStarted}}
	for i := range deltas {
		if i == deltas/2 {
			evs = append(evs,
				&chatprotocol.ToolCallEvent{CallID: key.TurnID + "-call-1", Name: "search_docs", Input: json.RawMessage(`{"q":"refund policy"}`)},
				&chatprotocol.ToolResultEvent{CallID: key.TurnID + "-call-1", Status: chatprotocol.ToolResultOK, Output: json.RawMessage(`{"hits":2}`)})
		}
		evs = append(evs, &chatprotocol.DeltaEvent{Text: words[i%len(words)]})
	}
	card := &chatprotocol.CardEvent{Card: cards.OpenCardSnapshot{CorrelationID: "card-" + key.TurnID, CreatedAt: time.Now().UnixMilli(),
		CardSpec: cards.CardSpec{Prompt: "Was this helpful?", Presentation: &cards.CardPresentation{Kind: cards.CardKindRadio,
			Options: []cards.CardOption{{ID: "yes", Label: "Yes"}, {ID: "no", Label: "No"}}}}}}
	return append(evs, card, &chatprotocol.LifecycleEvent{Status: chatprotocol.LifecycleCompleted})
}

// open opens the card of a card event with the resolver, bound to the
// demo caller, so that its answer can be taken.
func (c *cardSide) open(ctx context.Context, ev *chatprotocol.CardEvent) error {
	_, err := c.res.Open(ctx, interactions.NewCard{
		Key:      interactions.Key{Conversation: conversation, CorrelationID: ev.Card.CorrelationID},
		Answerer: c.demo, Spec: ev.Card.CardSpec, Schema: c.schema})
	return err
}
