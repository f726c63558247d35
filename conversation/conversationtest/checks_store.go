package conversationtest

import (
	"bytes"
	"errors"
	"fmt"

	"github.com/Papercusp/chat-protocol-go/conversation"
	"github.com/Papercusp/chat-protocol-go/refusal"
)

// owner is the owner of the checks' conversations.
var owner = conversation.Principal{ID: "user-1", Tenant: "tenant-1"}

// ended is a reduced state as a turn's JSON form, with bytes a store must
// keep as they are (an escape, a big number, a member order).
func ended(turnID string) []byte {
	return []byte(`{"turnId":"` + turnID + `","status":"completed","lastSeq":3,"text":"a \u003cb\u003e","toolCalls":[],"results":[],"provenance":[],"usage":{"totalTokens":1e400}}`)
}

// wantCode fails unless err carries code.
func wantCode(what string, err error, code refusal.Code) error {
	if got := refusal.CodeOf(err); got != code {
		return fmt.Errorf("%s: got code %q (%v), want %q", what, got, err, code)
	}
	return nil
}

func checkCreateGet(r *run) error {
	c, err := r.s.Create(r.ctx, r.id("a"), owner)
	if err != nil {
		return fmt.Errorf("create: %w", err)
	}
	if c.ID != r.id("a") || c.Owner != owner || c.Turns != 0 || c.Running != "" {
		return fmt.Errorf("create returned %+v", c)
	}
	got, err := r.s.Get(r.ctx, c.ID)
	if err != nil || got != c {
		return fmt.Errorf("get: %+v, %v; want %+v", got, err, c)
	}
	if _, err := r.s.Create(r.ctx, c.ID, conversation.Principal{ID: "someone-else"}); wantCode("create of a taken id", err, refusal.CodeConversationExists) != nil {
		return wantCode("create of a taken id", err, refusal.CodeConversationExists)
	}
	if got, _ := r.s.Get(r.ctx, c.ID); got.Owner != owner {
		return fmt.Errorf("a refused create changed the owner to %+v", got.Owner)
	}
	fresh, err := r.s.Create(r.ctx, "", conversation.Principal{ID: "user-2"})
	if err != nil || fresh.ID == "" || fresh.ID == c.ID {
		return fmt.Errorf("create without an id: %+v, %v", fresh, err)
	}
	if _, err := r.s.Get(r.ctx, r.id("missing")); wantCode("get of an unknown id", err, refusal.CodeConversationNotFound) != nil {
		return wantCode("get of an unknown id", err, refusal.CodeConversationNotFound)
	}
	if _, _, err := r.s.Running(r.ctx, r.id("missing")); wantCode("running of an unknown id", err, refusal.CodeConversationNotFound) != nil {
		return wantCode("running of an unknown id", err, refusal.CodeConversationNotFound)
	}
	if _, _, err := r.s.StartTurn(r.ctx, r.id("missing"), conversation.TurnStart{UserText: "hi"}); wantCode("start in an unknown conversation", err, refusal.CodeConversationNotFound) != nil {
		return wantCode("start in an unknown conversation", err, refusal.CodeConversationNotFound)
	}
	_, err = r.s.History(r.ctx, r.id("missing"))
	return wantCode("history of an unknown id", err, refusal.CodeConversationNotFound)
}

func checkInvalidInput(r *run) error {
	bad := []struct {
		what string
		err  func() error
	}{
		{"create with a NUL id", func() error { _, err := r.s.Create(r.ctx, r.id("\x00"), owner); return err }},
		{"create with invalid UTF-8", func() error { _, err := r.s.Create(r.ctx, r.id("\xff"), owner); return err }},
		{"create with an over-long id", func() error {
			_, err := r.s.Create(r.ctx, string(bytes.Repeat([]byte("x"), conversation.MaxIDBytes+1)), owner)
			return err
		}},
		{"create without an owner", func() error { _, err := r.s.Create(r.ctx, r.id("o"), conversation.Principal{}); return err }},
		{"start with a NUL text", func() error {
			_, _, err := r.s.StartTurn(r.ctx, r.id("x"), conversation.TurnStart{UserText: "a\x00b"})
			return err
		}},
		{"start with a NUL key", func() error {
			_, _, err := r.s.StartTurn(r.ctx, r.id("x"), conversation.TurnStart{UserText: "q", Key: "k\x00"})
			return err
		}},
		{"start with an over-long key", func() error {
			_, _, err := r.s.StartTurn(r.ctx, r.id("x"), conversation.TurnStart{UserText: "q", Key: string(bytes.Repeat([]byte("k"), conversation.MaxIDBytes+1))})
			return err
		}},
		{"start with an invalid UTF-8 key", func() error {
			_, _, err := r.s.StartTurn(r.ctx, r.id("x"), conversation.TurnStart{UserText: "q", Key: "\xff"})
			return err
		}},
		{"get of an empty id", func() error { _, err := r.s.Get(r.ctx, ""); return err }},
		{"end of an empty turn id", func() error { return r.s.EndTurn(r.ctx, r.id("x"), "", []byte(`{}`)) }},
	}
	for _, b := range bad {
		if err := wantCode(b.what, b.err(), refusal.CodeInvalidInput); err != nil {
			return err
		}
	}
	if _, err := r.s.Get(r.ctx, r.id("o")); !errors.Is(err, refusal.ErrConversationNotFound) {
		return fmt.Errorf("a refused create stored a conversation: %v", err)
	}
	return nil
}

func checkStartEnd(r *run) error {
	c, err := r.s.Create(r.ctx, r.id("c"), owner)
	if err != nil {
		return err
	}
	if _, ok, err := r.s.Running(r.ctx, c.ID); ok || err != nil {
		return fmt.Errorf("a new conversation has a running turn: %v, %v", ok, err)
	}
	t1, started, err := r.s.StartTurn(r.ctx, c.ID, conversation.TurnStart{UserText: "first question"})
	if err != nil || !started {
		return fmt.Errorf("start: started %v, %w", started, err)
	}
	if t1.ID == "" || t1.Position != 1 || t1.UserText != "first question" || t1.Key != "" || t1.Ended() {
		return fmt.Errorf("start returned %+v", t1)
	}
	if err := conversation.CheckTurn(c.ID, t1.ID); err != nil {
		return fmt.Errorf("the allocated turn id %q is no id: %w", t1.ID, err)
	}
	run, ok, err := r.s.Running(r.ctx, c.ID)
	if err != nil || !ok || run.ID != t1.ID || run.UserText != "first question" || run.Position != 1 {
		return fmt.Errorf("running: %+v, %v, %v; want %+v", run, ok, err, t1)
	}
	if got, _ := r.s.Get(r.ctx, c.ID); got.Running != t1.ID || got.Turns != 1 {
		return fmt.Errorf("get after start: %+v", got)
	}
	if _, _, err := r.s.StartTurn(r.ctx, c.ID, conversation.TurnStart{UserText: "second"}); wantCode("a second running turn", err, refusal.CodeTurnRunning) != nil {
		return wantCode("a second running turn", err, refusal.CodeTurnRunning)
	}
	if err := r.s.EndTurn(r.ctx, c.ID, t1.ID, ended(t1.ID)); err != nil {
		return fmt.Errorf("end: %w", err)
	}
	if _, ok, err := r.s.Running(r.ctx, c.ID); ok || err != nil {
		return fmt.Errorf("an ended turn still runs: %v, %v", ok, err)
	}
	t2, _, err := r.s.StartTurn(r.ctx, c.ID, conversation.TurnStart{UserText: "second"})
	if err != nil {
		return fmt.Errorf("start after the end: %w", err)
	}
	if t2.Position != 2 || t2.ID == t1.ID {
		return fmt.Errorf("the second turn is %+v after %+v", t2, t1)
	}
	if got, _ := r.s.Get(r.ctx, c.ID); got.Running != t2.ID || got.Turns != 2 {
		return fmt.Errorf("get after the second start: %+v", got)
	}
	return wantCode("end of an unknown turn", r.s.EndTurn(r.ctx, c.ID, "no-such-turn", ended("x")), refusal.CodeTurnNotRunning)
}

func checkEndRetry(r *run) error {
	c, err := r.s.Create(r.ctx, r.id("c"), owner)
	if err != nil {
		return err
	}
	t, _, err := r.s.StartTurn(r.ctx, c.ID, conversation.TurnStart{UserText: "q"})
	if err != nil {
		return err
	}
	state := ended(t.ID)
	if err := r.s.EndTurn(r.ctx, c.ID, t.ID, state); err != nil {
		return err
	}
	if err := r.s.EndTurn(r.ctx, c.ID, t.ID, state); err != nil {
		return fmt.Errorf("the same end again (a retry) is nil: %w", err)
	}
	other := append(bytes.Clone(state[:len(state)-1]), `,"reason":"x"}`...)
	if err := wantCode("an end with other bytes", r.s.EndTurn(r.ctx, c.ID, t.ID, other), refusal.CodeTurnNotRunning); err != nil {
		return err
	}
	_, got, err := r.s.Turn(r.ctx, c.ID, t.ID)
	if err != nil || !bytes.Equal(got.State, state) {
		return fmt.Errorf("the stored state is %s, %v; want %s", got.State, err, state)
	}
	return nil
}

func checkHistory(r *run) error {
	c, err := r.s.Create(r.ctx, r.id("c"), owner)
	if err != nil {
		return err
	}
	var want []conversation.Turn
	for i := range 5 {
		text := fmt.Sprintf("question %d: ü \"quoted\" <tag>", i)
		t, _, err := r.s.StartTurn(r.ctx, c.ID, conversation.TurnStart{UserText: text})
		if err != nil {
			return err
		}
		if i < 4 {
			t.State = ended(t.ID)
			if err := r.s.EndTurn(r.ctx, c.ID, t.ID, t.State); err != nil {
				return err
			}
		}
		want = append(want, t)
	}
	h, err := r.s.History(r.ctx, c.ID)
	if err != nil {
		return fmt.Errorf("history: %w", err)
	}
	if h.Conversation.ID != c.ID || h.Conversation.Owner != owner || h.Conversation.Turns != 5 || h.Conversation.Running != want[4].ID {
		return fmt.Errorf("history's conversation is %+v", h.Conversation)
	}
	if len(h.Turns) != len(want) {
		return fmt.Errorf("history has %d turns, want %d", len(h.Turns), len(want))
	}
	for i, t := range h.Turns {
		w := want[i]
		if t.ID != w.ID || t.Position != i+1 || t.UserText != w.UserText || !bytes.Equal(t.State, w.State) || t.Ended() != (i < 4) {
			return fmt.Errorf("turn %d is %+v, want %+v", i+1, t, w)
		}
	}
	empty, err := r.s.Create(r.ctx, r.id("empty"), owner)
	if err != nil {
		return err
	}
	h, err = r.s.History(r.ctx, empty.ID)
	if err != nil || len(h.Turns) != 0 || h.Conversation != empty {
		return fmt.Errorf("the history of a conversation without turns: %+v, %v", h, err)
	}
	return nil
}

func checkTurnLookup(r *run) error {
	c, err := r.s.Create(r.ctx, r.id("c"), owner)
	if err != nil {
		return err
	}
	t, _, err := r.s.StartTurn(r.ctx, c.ID, conversation.TurnStart{UserText: "q"})
	if err != nil {
		return err
	}
	gc, gt, err := r.s.Turn(r.ctx, c.ID, t.ID)
	if err != nil || gc.Owner != owner || gc.Running != t.ID || gt.ID != t.ID || gt.UserText != "q" || gt.Ended() {
		return fmt.Errorf("turn: %+v %+v %v", gc, gt, err)
	}
	if _, _, err := r.s.Turn(r.ctx, c.ID, "no-such-turn"); wantCode("an unknown turn", err, refusal.CodeTurnNotFound) != nil {
		return wantCode("an unknown turn", err, refusal.CodeTurnNotFound)
	}
	_, _, err = r.s.Turn(r.ctx, r.id("missing"), t.ID)
	return wantCode("a turn of an unknown conversation", err, refusal.CodeConversationNotFound)
}
