package demo

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"slices"
	"sync"
	"time"

	chatprotocol "github.com/Papercusp/chat-protocol-go"
	"github.com/Papercusp/chat-protocol-go/agent"
	"github.com/Papercusp/chat-protocol-go/agui"
	"github.com/Papercusp/chat-protocol-go/conversation"
	"github.com/Papercusp/chat-protocol-go/interactions"
	"github.com/Papercusp/chat-protocol-go/interactions/jsonschema"
	"github.com/Papercusp/chat-protocol-go/recovery"
	"github.com/Papercusp/chat-protocol-go/refusal"
	"github.com/Papercusp/chat-protocol-go/replay"
	"github.com/Papercusp/chat-protocol-go/turn"
	"github.com/Papercusp/chat-protocol-go/uistream"
)

// host runs the demo's turns: the conversation store records each one
// (its id, its user's text, the running turn, its reduced state once it
// ended), a Producer writes it on the window, its model plays on a
// goroutine of its own (never a request's: a client that goes away stops
// nothing), and once it ended the host stores its state. Besides the
// store it keeps only the cards of ended turns that a later turn closes
// on its stream, for the process's life.
type host struct {
	window  replay.Window
	store   conversation.Store
	gate    *conversation.Gate
	rec     *recovery.TurnRecovery
	runs    *turn.Runs
	cards   *interactions.Resolver
	schemas *jsonschema.Registry
	// registry holds the registered events the turns carry
	// (docs/contract.md section 6.5), which the bridges map.
	registry *chatprotocol.Registry
	model    source
	log      *slog.Logger
	printed  func(name, url string) // writes a line NAME URL on stdout

	life  context.Context // ends at shutdown: the running turns are interrupted
	turns sync.WaitGroup  // the goroutines of the turns and of the chain

	mu    sync.Mutex
	asked map[string][]string // per conversation, cards of ended turns not yet closed on a stream
}

// errShutdown refuses a turn asked for while the server shuts down.
var errShutdown = refusal.New(refusal.CodeStoreUnavailable, "", "the server is shutting down")

// launch starts the producer of t, which the store just recorded as the
// running turn of c: it closes the conversation's cards that have closed
// since (card_closed right after started), and plays the model on the
// turn in the background with script and card, in the owner's name
// towards recovery. next, when set, is called once the turn completed. A
// request's ctx ending (its client going away) does not stop the start.
// An error leaves the turn to the caller, which ends it in the store
// (conversation.NotStarted).
func (h *host) launch(ctx context.Context, c conversation.Conversation, t conversation.Turn, script, card bool, next func()) error {
	if h.life.Err() != nil {
		return errShutdown
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	key := replay.Key{ConversationID: c.ID, TurnID: t.ID}
	todo := plan{Script: script}
	if hist, err := h.store.History(ctx, c.ID); err == nil {
		todo.Messages, _ = hist.Upto(t.ID).Messages() // a state no EndTurn wrote leaves the model the user's text alone
	}
	h.mu.Lock()
	closing := h.asked[c.ID]
	delete(h.asked, c.ID)
	h.mu.Unlock()

	p, err := turn.Start(ctx, h.window, key, &turn.Options{Recovery: h.rec, Runs: h.runs, Caller: c.Owner.String(),
		Cards: h.cards, SchemaText: h.schemas.SchemaJSON})
	if err != nil {
		h.ask(c.ID, closing...)
		return err
	}
	var open []string // the cards a later turn closes
	for _, card := range closing {
		rec, err := p.CloseCard(ctx, card)
		switch {
		case err == nil:
			todo.Closed = append(todo.Closed, rec)
		case errors.Is(err, turn.ErrCardOpen):
			open = append(open, card) // still waiting for its answer
		default:
			h.log.Warn("a card could not be closed: a later turn tries again", "conversation", c.ID, "card", card, "err", err)
			open = append(open, card)
		}
	}
	h.ask(c.ID, open...)
	if card {
		todo.Card = helpfulCard(c.ID, t.ID, conversation.CardAnswerer(c.Owner))
	}
	h.turns.Add(1)
	go h.play(p, c.Owner.String(), todo, next)
	return nil
}

// play runs the model of p's turn and ends the turn: completed, failed or
// cancelled as End decides, or interrupted when the server shuts down;
// then it stores the turn's state in the conversation store. caller is
// the producer's, towards recovery.
func (h *host) play(p *turn.Producer, caller string, todo plan, next func()) {
	defer h.turns.Done()
	key := p.Key()
	ctx, stop := context.WithCancel(p.Context()) // a cancel request ends it ...
	defer stop()
	defer context.AfterFunc(h.life, stop)() // ... and so does the shutdown
	err := h.model(ctx, p, todo)

	end, cancel := context.WithTimeout(context.WithoutCancel(h.life), 10*time.Second)
	defer cancel()
	if todo.Card != nil {
		if _, err := h.cards.Lookup(end, todo.Card.Key); err == nil { // asked: a later turn closes it
			h.ask(key.ConversationID, todo.Card.Key.CorrelationID) // before the end, which clients act on
		}
	}
	if err != nil && h.life.Err() != nil && p.Context().Err() == nil {
		if err := p.Interrupt(end, "the server is shutting down"); err != nil {
			h.log.Warn("a turn could not be interrupted", "conversation", key.ConversationID, "turn", key.TurnID, "err", err)
		}
		h.stored(end, key)
		return
	}
	if err := p.End(end, err); err != nil {
		h.log.Warn("a turn could not be ended", "conversation", key.ConversationID, "turn", key.TurnID, "err", err)
	}
	rec, err := h.rec.Load(end, caller, recovery.TurnRef{Conversation: key.ConversationID, Turn: key.TurnID})
	if err != nil {
		h.log.Warn("a turn's end could not be read", "conversation", key.ConversationID, "turn", key.TurnID, "err", err)
	}
	if todo.Card != nil && err == nil && rec.Status == recovery.TurnCancelled {
		h.closed(key.ConversationID, todo.Card.Key.CorrelationID) // End cancelled it and closed it on this turn
	}
	h.stored(end, key)
	if err == nil && rec.Status == recovery.TurnCompleted && next != nil {
		next()
	}
}

// stored stores key's ended or interrupted turn in the conversation store.
func (h *host) stored(ctx context.Context, key replay.Key) {
	if err := conversation.EndFromWindow(ctx, h.store, h.window, key); err != nil {
		h.log.Warn("a turn's state could not be stored", "conversation", key.ConversationID, "turn", key.TurnID, "err", err)
	}
}

// ask adds cards to those of conversation that a turn still has to close
// on a stream.
func (h *host) ask(conversation string, cards ...string) {
	if len(cards) == 0 {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.asked[conversation] = append(h.asked[conversation], cards...)
}

// closed removes card from those of conversation a turn has to close.
func (h *host) closed(conversation, card string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.asked[conversation] = slices.DeleteFunc(h.asked[conversation], func(id string) bool { return id == card })
}

// startChained starts a turn of the chain's conversation c with the
// user's text: the k-th of n, which plays the script and asks a card
// unless it is the last. It returns the turn.
func (h *host) startChained(ctx context.Context, c conversation.Conversation, text string, k, n int) (conversation.Turn, error) {
	_, t, _, err := h.gate.StartTurn(ctx, c.Owner, c.ID, conversation.TurnStart{UserText: text}, false)
	if err != nil {
		return t, err
	}
	first := k == 1
	if err := h.launch(ctx, c, t, first || k < n, k < n, h.chain(c, t, k, n)); err != nil {
		return t, conversation.NotStarted(ctx, h.store, c.ID, t.ID, err)
	}
	return t, nil
}

// chain returns the next of the chain conversation's k-th turn t of n:
// once its card closes (an answer through the answer endpoint), it starts
// turn k+1, prints its stream's URL (a line "turn URL"), and that turn
// closes the card, replies, and unless it is the last plays the script
// and asks a card in turn.
func (h *host) chain(c conversation.Conversation, t conversation.Turn, k, n int) func() {
	if k >= n {
		return nil
	}
	return func() {
		v, err := h.cards.Wait(h.life, interactions.Key{Conversation: c.ID, CorrelationID: cardID(t.ID)})
		if err != nil {
			return // the server is shutting down
		}
		ctx, cancel := context.WithTimeout(h.life, 10*time.Second)
		defer cancel()
		next, err := h.startChained(ctx, c, answerText(v.Record), k+1, n)
		if err != nil {
			if h.life.Err() == nil {
				h.log.Error("the next turn could not start", "conversation", c.ID, "err", err)
			}
			return
		}
		h.printed("turn", streamPath(c.ID, next.ID))
	}
}

// settle ends the running turn of c that a previous process on durable
// stores left (it was killed before it ended it): the turn is resumed and
// ended failed, "the server restarted", and its state stored, so that the
// conversation takes a new turn. The demo resumes no interrupted turn
// (interruptedTurnRecovery is false).
func (h *host) settle(ctx context.Context, c conversation.Conversation) error {
	if c.Running == "" {
		return nil
	}
	key := replay.Key{ConversationID: c.ID, TurnID: c.Running}
	p, err := turn.Start(ctx, h.window, key, &turn.Options{Recovery: h.rec, Runs: h.runs, Caller: c.Owner.String()})
	switch {
	case err == nil:
		err = p.End(ctx, &turn.Failure{Code: chatprotocol.ErrorCode(refusal.CodeInternal), Message: "the server restarted"})
	case refusal.CodeOf(err) == refusal.CodeTurnTerminated:
		err = nil // it ended in the window, not yet in the store
	}
	if err != nil {
		return err
	}
	return conversation.EndFromWindow(ctx, h.store, h.window, key)
}

// startTurn is the UI message stream's StartTurn: a POST without a card
// answer starts a scripted turn asking a card; one with an answer (already
// landed) starts a turn that closes the card and replies.
func (h *host) startTurn() func(ctx context.Context, r *http.Request, req *uistream.Request) (replay.Key, error) {
	return uistream.StartTurnOf(h.gate, func(ctx context.Context, _ *http.Request, c conversation.Conversation, t conversation.Turn, req *uistream.Request) error {
		fresh := req.Answer == nil
		return h.launch(ctx, c, t, fresh, fresh, nil)
	})
}

// startRun is AG-UI's StartRun: a run id the thread has seen, on any
// instance sharing the conversation store, is its turn again, replayed
// whole (the store keeps the run id as the start's request key); a new
// run without resume entries starts a scripted turn asking a card, one
// with them (already landed) a turn that closes the cards and replies.
func (h *host) startRun() func(ctx context.Context, r *http.Request, in *agui.RunInput) (replay.Key, error) {
	return agui.StartRunOf(h.gate, func(ctx context.Context, _ *http.Request, c conversation.Conversation, t conversation.Turn, in *agui.RunInput) error {
		fresh := len(in.Resume) == 0
		return h.launch(ctx, c, t, fresh, fresh, nil)
	})
}

// startV1 is the version-1 start endpoint's Run: a scripted turn asking a
// card.
func (h *host) startV1(ctx context.Context, _ *http.Request, c conversation.Conversation, t conversation.Turn) error {
	return h.launch(ctx, c, t, true, true, nil)
}

// messages is the model's input of a turn of the agent loop: the history
// up to the turn, or the question alone.
func messages(todo plan) []agent.Message {
	if len(todo.Messages) > 0 {
		return todo.Messages
	}
	return []agent.Message{{Role: agent.RoleUser, Text: question}}
}
