package conversationtest

import (
	"errors"
	"fmt"
	"sync"

	"github.com/Papercusp/chat-protocol-go/conversation"
	"github.com/Papercusp/chat-protocol-go/refusal"
)

// checkConcurrentStart starts Starts turns of one conversation at once,
// twice: exactly one wins each round, every other start is refused
// turn-running, and the winner is the running turn.
func checkConcurrentStart(r *run) error {
	c, err := r.s.Create(r.ctx, r.id("c"), owner)
	if err != nil {
		return err
	}
	for round := range 2 {
		var (
			wg      sync.WaitGroup
			mu      sync.Mutex
			won     []conversation.Turn
			refused int
			other   []error
		)
		for i := range r.cfg.Starts {
			wg.Go(func() {
				t, _, err := r.s.StartTurn(r.ctx, c.ID, conversation.TurnStart{UserText: fmt.Sprintf("round %d, start %d", round, i)})
				mu.Lock()
				defer mu.Unlock()
				switch {
				case err == nil:
					won = append(won, t)
				case errors.Is(err, refusal.ErrTurnRunning):
					refused++
				default:
					other = append(other, err)
				}
			})
		}
		wg.Wait()
		if len(other) > 0 || len(won) != 1 || refused != r.cfg.Starts-1 {
			return fmt.Errorf("round %d: %d won, %d refused turn-running, other errors %v", round, len(won), refused, other)
		}
		run, ok, err := r.s.Running(r.ctx, c.ID)
		if err != nil || !ok || run.ID != won[0].ID || run.Position != round+1 {
			return fmt.Errorf("round %d: running %+v, %v, %v; the winner %+v", round, run, ok, err, won[0])
		}
		if err := r.s.EndTurn(r.ctx, c.ID, run.ID, ended(run.ID)); err != nil {
			return err
		}
	}
	h, err := r.s.History(r.ctx, c.ID)
	if err != nil || len(h.Turns) != 2 {
		return fmt.Errorf("history after the rounds: %d turns, %v", len(h.Turns), err)
	}
	return nil
}

// checkUniqueTurnIDs runs turns in several conversations: no turn id is
// allocated twice.
func checkUniqueTurnIDs(r *run) error {
	seen := map[string]bool{}
	for i := range 4 {
		c, err := r.s.Create(r.ctx, r.id(fmt.Sprint(i)), owner)
		if err != nil {
			return err
		}
		for range 25 {
			t, _, err := r.s.StartTurn(r.ctx, c.ID, conversation.TurnStart{UserText: "q"})
			if err != nil {
				return err
			}
			if seen[t.ID] {
				return fmt.Errorf("turn id %q allocated twice", t.ID)
			}
			seen[t.ID] = true
			if err := r.s.EndTurn(r.ctx, c.ID, t.ID, ended(t.ID)); err != nil {
				return err
			}
		}
	}
	return nil
}
