package conversation

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/Papercusp/chat-protocol-go/replay"
	"github.com/Papercusp/chat-protocol-go/turn"
)

// Runner runs a host's turns on goroutines of their own, never a
// request's, so that a client that goes away stops nothing
// (docs/contract.md sections 16 and 20.1): it ends each turn and stores
// it in the conversation store. Make one with [NewRunner]; it is safe for
// concurrent use.
type Runner struct {
	life   context.Context
	store  Store
	window replay.Window
	log    *slog.Logger
	wg     sync.WaitGroup
}

// NewRunner returns a [Runner] whose turns are interrupted when life ends
// (the host's shutdown), ended on window and stored in store; log gets
// what fails (nil: nothing).
func NewRunner(life context.Context, store Store, window replay.Window, log *slog.Logger) *Runner {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Runner{life: life, store: store, window: window, log: log}
}

// Start starts key's turn's producer on the window ([turn.Start] with
// opts, under life, within 10 s: a request's end stops nothing), then
// plays model on it as [Runner.Go] does. Start's error is returned and
// nothing runs; the caller ends the turn in the store ([NotStarted], which
// the bridges' StartTurnOf and StartRunOf and [NewStartHandler] call).
func (r *Runner) Start(key replay.Key, opts *turn.Options, model func(ctx context.Context, p *turn.Producer) error) error {
	ctx, cancel := context.WithTimeout(r.life, 10*time.Second)
	defer cancel()
	p, err := turn.Start(ctx, r.window, key, opts)
	if err != nil {
		return err
	}
	r.Go(p, func(ctx context.Context) error { return model(ctx, p) })
	return nil
}

// Go plays model on p's turn on a goroutine of its own, under a context
// that ends when the turn is cancelled or life ends. Then it ends the
// turn with model's error ([turn.Producer.End]: completed, failed or
// cancelled), or, when life ended first, interrupts it ("the server is
// shutting down"), and stores it ([EndFromWindow]); each within 10 s. A
// failure is logged: the window and recovery keep what landed.
func (r *Runner) Go(p *turn.Producer, model func(ctx context.Context) error) {
	r.wg.Go(func() {
		ctx, stop := context.WithCancel(p.Context())
		defer stop()
		defer context.AfterFunc(r.life, stop)()
		err := model(ctx)
		end, cancel := context.WithTimeout(context.WithoutCancel(r.life), 10*time.Second)
		defer cancel()
		if r.life.Err() != nil && p.Context().Err() == nil {
			err = p.Interrupt(end, "the server is shutting down")
		} else {
			err = p.End(end, err)
		}
		key := p.Key()
		if err = errors.Join(err, EndFromWindow(end, r.store, r.window, key)); err != nil {
			r.log.WarnContext(end, "conversation: a turn could not end or be stored", "conversation", key.ConversationID, "turn", key.TurnID, "err", err)
		}
	})
}

// Wait blocks until every turn Go started has ended and been stored; a
// host calls it once life ended, before it closes its stores.
func (r *Runner) Wait() { r.wg.Wait() }
