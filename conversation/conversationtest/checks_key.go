package conversationtest

import (
	"bytes"
	"errors"
	"fmt"
	"sync"

	"github.com/Papercusp/chat-protocol-go/conversation"
	"github.com/Papercusp/chat-protocol-go/refusal"
)

// sameTurn fails unless got is want as a store reads it back: id,
// position, user's text, request key and state.
func sameTurn(what string, got, want conversation.Turn) error {
	if got.ID != want.ID || got.Position != want.Position || got.UserText != want.UserText || got.Key != want.Key ||
		!bytes.Equal(got.State, want.State) {
		return fmt.Errorf("%s: got %+v, want %+v", what, got, want)
	}
	return nil
}

// checkRequestKey runs the rules of a start's request key
// (docs/contract.md section 20.1): the key's turn comes back, running or
// ended, and nothing is written; another key, or none, while it runs is
// turn-running; every read gives the key back; a key is the
// conversation's own.
func checkRequestKey(r *run) error {
	c, err := r.s.Create(r.ctx, r.id("c"), owner)
	if err != nil {
		return err
	}
	t1, started, err := r.s.StartTurn(r.ctx, c.ID, conversation.TurnStart{UserText: "first", Key: "run-1"})
	if err != nil || !started || t1.Position != 1 || t1.Key != "run-1" || t1.UserText != "first" || t1.Ended() {
		return fmt.Errorf("a keyed start: %+v, started %v, %v", t1, started, err)
	}
	again, started, err := r.s.StartTurn(r.ctx, c.ID, conversation.TurnStart{UserText: "first, sent again", Key: "run-1"})
	if err != nil || started {
		return fmt.Errorf("the same key while its turn runs: started %v, %v", started, err)
	}
	if err := sameTurn("the same key while its turn runs", again, t1); err != nil {
		return err
	}
	for _, other := range []string{"run-2", ""} {
		_, started, err := r.s.StartTurn(r.ctx, c.ID, conversation.TurnStart{UserText: "other", Key: other})
		if err := wantCode(fmt.Sprintf("the key %q while another runs", other), err, refusal.CodeTurnRunning); err != nil {
			return err
		}
		if started {
			return fmt.Errorf("the key %q while another runs reported started", other)
		}
	}
	if got, err := r.s.Get(r.ctx, c.ID); err != nil || got.Turns != 1 || got.Running != t1.ID {
		return fmt.Errorf("after the repeated starts: %+v, %v", got, err)
	}
	if run, ok, err := r.s.Running(r.ctx, c.ID); err != nil || !ok {
		return fmt.Errorf("running: %v, %v", ok, err)
	} else if err := sameTurn("the running turn", run, t1); err != nil {
		return err
	}
	t1.State = ended(t1.ID)
	if err := r.s.EndTurn(r.ctx, c.ID, t1.ID, t1.State); err != nil {
		return err
	}
	again, started, err = r.s.StartTurn(r.ctx, c.ID, conversation.TurnStart{UserText: "first", Key: "run-1"})
	if err != nil || started {
		return fmt.Errorf("the same key once its turn ended: started %v, %v", started, err)
	}
	if err := sameTurn("the same key once its turn ended", again, t1); err != nil {
		return err
	}
	if _, ok, err := r.s.Running(r.ctx, c.ID); ok || err != nil {
		return fmt.Errorf("the ended turn's key started a turn: %v, %v", ok, err)
	}
	t2, started, err := r.s.StartTurn(r.ctx, c.ID, conversation.TurnStart{UserText: "second", Key: "run-2"})
	if err != nil || !started || t2.Position != 2 || t2.Key != "run-2" || t2.ID == t1.ID {
		return fmt.Errorf("a new key after the end: %+v, started %v, %v", t2, started, err)
	}
	if _, got, err := r.s.Turn(r.ctx, c.ID, t1.ID); err != nil {
		return err
	} else if err := sameTurn("the first turn read back", got, t1); err != nil {
		return err
	}
	h, err := r.s.History(r.ctx, c.ID)
	if err != nil || len(h.Turns) != 2 {
		return fmt.Errorf("history: %d turns, %v", len(h.Turns), err)
	}
	if err := sameTurn("the history's first turn", h.Turns[0], t1); err != nil {
		return err
	}
	if err := sameTurn("the history's second turn", h.Turns[1], t2); err != nil {
		return err
	}
	d, err := r.s.Create(r.ctx, r.id("d"), owner)
	if err != nil {
		return err
	}
	t3, started, err := r.s.StartTurn(r.ctx, d.ID, conversation.TurnStart{UserText: "elsewhere", Key: "run-1"})
	if err != nil || !started || t3.ID == t1.ID || t3.Position != 1 {
		return fmt.Errorf("another conversation's key: %+v, started %v, %v", t3, started, err)
	}
	return nil
}

// checkConcurrentKeyedStart starts Starts turns of one conversation at
// once with one request key: exactly one starts and every start gets its
// turn. Then Starts at once with a key each: exactly one starts, the
// others are turn-running.
func checkConcurrentKeyedStart(r *run) error {
	c, err := r.s.Create(r.ctx, r.id("c"), owner)
	if err != nil {
		return err
	}
	type result struct {
		t       conversation.Turn
		started bool
		err     error
	}
	starts := func(key func(i int) string) []result {
		out := make([]result, r.cfg.Starts)
		var wg sync.WaitGroup
		for i := range out {
			wg.Go(func() {
				t, started, err := r.s.StartTurn(r.ctx, c.ID, conversation.TurnStart{UserText: fmt.Sprint("start ", i), Key: key(i)})
				out[i] = result{t, started, err}
			})
		}
		wg.Wait()
		return out
	}
	var first conversation.Turn
	n := 0
	for _, res := range starts(func(int) string { return "one-key" }) {
		if res.err != nil {
			return fmt.Errorf("a start with the shared key: %w", res.err)
		}
		if res.started {
			first, n = res.t, n+1
		}
	}
	if n != 1 {
		return fmt.Errorf("%d of %d starts with one key started", n, r.cfg.Starts)
	}
	for _, res := range starts(func(int) string { return "one-key" }) {
		if res.err != nil || res.started || res.t.ID != first.ID || res.t.Key != "one-key" || res.t.Position != 1 {
			return fmt.Errorf("a start with the shared key got %+v, started %v, %v; the turn is %s", res.t, res.started, res.err, first.ID)
		}
	}
	if err := r.s.EndTurn(r.ctx, c.ID, first.ID, ended(first.ID)); err != nil {
		return err
	}
	var won []conversation.Turn
	for _, res := range starts(func(i int) string { return fmt.Sprint("key-", i) }) {
		switch {
		case res.err == nil && res.started:
			won = append(won, res.t)
		case errors.Is(res.err, refusal.ErrTurnRunning) && !res.started:
		default:
			return fmt.Errorf("a start with a key of its own: %+v, started %v, %v", res.t, res.started, res.err)
		}
	}
	if len(won) != 1 || won[0].Position != 2 {
		return fmt.Errorf("%d starts with keys of their own won: %+v", len(won), won)
	}
	h, err := r.s.History(r.ctx, c.ID)
	if err != nil || len(h.Turns) != 2 || h.Conversation.Running != won[0].ID || h.Turns[1].Key != won[0].Key {
		return fmt.Errorf("history after the starts: %+v, %v", h, err)
	}
	return nil
}
