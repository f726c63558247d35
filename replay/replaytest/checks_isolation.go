package replaytest

import (
	"time"

	chatprotocol "github.com/Papercusp/chat-protocol-go"
	"github.com/Papercusp/chat-protocol-go/internal/kit/checklist"
	"github.com/Papercusp/chat-protocol-go/replay"
)

// checkIsolation: two conversations with the same turn id, and two turns of
// one conversation, are separate windows: each reads back its own frames
// only, and an append to one wakes no Wait on the other.
func checkIsolation(r *run) error {
	a := r.key("shared-turn")
	b := replay.Key{ConversationID: checklist.UniqueID(r.conv + "-b-"), TurnID: a.TurnID}
	sibling := r.key("sibling")
	wantA, err := r.appendTurn(a, 1, &chatprotocol.LifecycleEvent{Status: chatprotocol.LifecycleStarted},
		&chatprotocol.DeltaEvent{Text: "A2"}, &chatprotocol.DeltaEvent{Text: "A3"})
	if err != nil {
		return failf("conversation A: %w", err)
	}
	wantB, err := r.appendTurn(b, 1, &chatprotocol.LifecycleEvent{Status: chatprotocol.LifecycleStarted},
		&chatprotocol.DeltaEvent{Text: "B2"})
	if err != nil {
		return failf("conversation B, same turn id: %w", err)
	}
	if err := r.readExpect(a, 0, replay.Bounds{Latest: 3}, 1, wantA); err != nil {
		return failf("conversation A: %w", err)
	}
	if err := r.readExpect(b, 0, replay.Bounds{Latest: 2}, 1, wantB); err != nil {
		return failf("conversation B: %w", err)
	}
	if err := r.readExpect(sibling, 0, replay.Bounds{}, 1, nil); err != nil {
		return failf("another turn of conversation A: %w", err)
	}
	done, cancel, err := r.waitLater(b, 2)
	if err != nil {
		return failf("conversation B: %w", err)
	}
	more, err := r.appendTurn(a, 4, &chatprotocol.DeltaEvent{Text: "A4"}, &chatprotocol.DeltaEvent{Text: "A5"})
	if err != nil {
		cancel()
		return failf("conversation A: %w", err)
	}
	if _, err := r.appendTurn(sibling, 1, turnEvents(1)...); err != nil {
		cancel()
		return failf("another turn of conversation A: %w", err)
	}
	select {
	case res := <-done:
		cancel()
		return failf("a Wait on conversation B returned %v, %v on appends to conversation A", res.b, res.err)
	case <-time.After(r.cfg.Block):
	}
	wantB3, err := r.appendTurn(b, 3, &chatprotocol.DeltaEvent{Text: "B3"})
	if err != nil {
		cancel()
		return failf("conversation B: %w", err)
	}
	if err := r.woken(done, cancel, replay.Bounds{Latest: 3}); err != nil {
		return failf("conversation B: %w", err)
	}
	if err := r.readExpect(a, 0, replay.Bounds{Latest: 5}, 1, append(wantA, more...)); err != nil {
		return failf("conversation A: %w", err)
	}
	return r.readExpect(b, 0, replay.Bounds{Latest: 3}, 1, append(wantB, wantB3...))
}
