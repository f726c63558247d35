package demo

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"time"

	chatprotocol "github.com/Papercusp/chat-protocol-go"
	"github.com/Papercusp/chat-protocol-go/agui"
	"github.com/Papercusp/chat-protocol-go/interactions"
	"github.com/Papercusp/chat-protocol-go/interactions/jsonschema"
	"github.com/Papercusp/chat-protocol-go/recovery"
	"github.com/Papercusp/chat-protocol-go/refusal"
	"github.com/Papercusp/chat-protocol-go/replay"
	"github.com/Papercusp/chat-protocol-go/turn"
	"github.com/Papercusp/chat-protocol-go/uistream"
)

// host runs the demo's turns: it starts each one with a Producer, plays its
// model on a goroutine of its own (never a request's: a client that goes
// away stops nothing), ends it, and keeps per conversation what the hooks
// of the endpoints ask: the turns that exist, the running ones, the cards
// waiting for a turn to close them. It keeps them for the process's life:
// a demo's few conversations.
type host struct {
	window  replay.Window
	rec     *recovery.TurnRecovery
	runs    *turn.Runs
	cards   *interactions.Resolver
	schemas *jsonschema.Registry
	// registry holds the registered events the turns carry
	// (docs/contract.md section 6.5), which the bridges map.
	registry *chatprotocol.Registry
	model    source
	log      *slog.Logger

	life  context.Context // ends at shutdown: the running turns are interrupted
	turns sync.WaitGroup  // the goroutines of the turns and of the chain

	mu     sync.Mutex
	convs  map[string]*conversation
	agRuns sync.Mutex               // serializes AG-UI starts, so that a run id starts one turn
	agTurn map[[2]string]replay.Key // (threadId, runId) → its turn
}

// conversation is what the host knows of one conversation.
type conversation struct {
	turns   map[string]bool // the turns started, or reserved for the chain
	next    int             // the number of the latest turn id taken
	running []string        // the running turns, oldest first
	asked   []string        // cards of ended turns not yet closed on a stream
}

// worker is the principal the host's producers act as towards recovery.
const worker = "demo-worker"

// conv returns the conversation of id, made on first use; h.mu is held.
func (h *host) conv(id string) *conversation {
	c, ok := h.convs[id]
	if !ok {
		c = &conversation{turns: map[string]bool{}}
		h.convs[id] = c
	}
	return c
}

// turnID is the id of a conversation's n-th turn.
func turnID(n int) string { return "t-" + strconv.Itoa(n) }

// reserve marks the turns t-1 … t-n of conversation as existing before they
// start, so that their streams may be opened (and wait) at once.
func (h *host) reserve(conversation string, n int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	c := h.conv(conversation)
	for i := 1; i <= n; i++ {
		c.turns[turnID(i)] = true
	}
	c.next = max(c.next, n)
}

// exists reports whether key names a turn of the host, started or
// reserved, or a turn the window holds frames of: one that another
// instance sharing the window started. It is false when the window cannot
// be read.
func (h *host) exists(ctx context.Context, key replay.Key) bool {
	h.mu.Lock()
	c, ok := h.convs[key.ConversationID]
	known := ok && c.turns[key.TurnID]
	h.mu.Unlock()
	if known {
		return true
	}
	b, err := h.window.Bounds(ctx, key)
	return err == nil && b.Latest > 0
}

// active returns the latest running turn of conversation: of this
// instance, or else the conversation's latest turn in the window when it
// has not ended, which another instance sharing the window runs.
func (h *host) active(ctx context.Context, conversation string) (replay.Key, bool, error) {
	h.mu.Lock()
	c, ok := h.convs[conversation]
	if ok && len(c.running) > 0 {
		defer h.mu.Unlock()
		return replay.Key{ConversationID: conversation, TurnID: c.running[len(c.running)-1]}, true, nil
	}
	h.mu.Unlock()
	var last replay.Key
	var ended bool
	for n := 1; n <= 1000; n++ {
		key := replay.Key{ConversationID: conversation, TurnID: turnID(n)}
		b, err := h.window.Bounds(ctx, key)
		if err != nil {
			return replay.Key{}, false, err
		}
		if b.Latest == 0 && !b.Ended {
			break
		}
		last, ended = key, b.Ended
	}
	return last, last.TurnID != "" && !ended, nil
}

// errShutdown refuses a turn asked for while the server shuts down.
var errShutdown = refusal.New(refusal.CodeStoreUnavailable, "", "the server is shutting down")

// start starts a turn of conversation, id or (for "") the next id the window
// holds nothing of, closes the conversation's cards that have closed since
// (card_closed right after started), and plays the model on the turn in
// the background with script and card. next, when set, is called once the
// turn completed. A request's ctx ending (its client going away) does not
// stop the start.
func (h *host) start(ctx context.Context, conversation, id string, script bool, card bool, next func()) (replay.Key, error) {
	if h.life.Err() != nil {
		return replay.Key{}, errShutdown
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if id == "" {
		var err error
		if id, err = h.nextID(ctx, conversation); err != nil {
			return replay.Key{}, err
		}
	}
	key := replay.Key{ConversationID: conversation, TurnID: id}
	h.mu.Lock()
	c := h.conv(conversation)
	reserved := c.turns[id]
	c.turns[id] = true
	c.running = append(c.running, id)
	closing := c.asked
	c.asked = nil
	h.mu.Unlock()

	p, err := turn.Start(ctx, h.window, key, &turn.Options{Recovery: h.rec, Runs: h.runs, Caller: worker,
		Cards: h.cards, SchemaText: h.schemas.SchemaJSON})
	if err != nil {
		h.asked(conversation, closing...)
		h.ended(key, nil, !reserved)
		return key, err
	}
	todo := plan{Script: script}
	var open []string // the cards a later turn closes
	for _, card := range closing {
		rec, err := p.CloseCard(ctx, card)
		switch {
		case err == nil:
			todo.Closed = append(todo.Closed, rec)
		case errors.Is(err, turn.ErrCardOpen):
			open = append(open, card) // still waiting for its answer
		default:
			h.log.Warn("a card could not be closed: a later turn tries again", "conversation", conversation, "card", card, "err", err)
			open = append(open, card)
		}
	}
	h.asked(conversation, open...)
	if card {
		todo.Card = helpfulCard(conversation, id)
	}
	h.turns.Add(1)
	go h.play(p, todo, next)
	return key, nil
}

// nextID takes the next turn id of conversation that the window holds no
// frame of (a durable window may hold turns of an earlier run).
func (h *host) nextID(ctx context.Context, conversation string) (string, error) {
	for range 1000 {
		h.mu.Lock()
		c := h.conv(conversation)
		c.next++
		id := turnID(c.next)
		h.mu.Unlock()
		b, err := h.window.Bounds(ctx, replay.Key{ConversationID: conversation, TurnID: id})
		if err != nil {
			return "", err
		}
		if b.Latest == 0 && !b.Ended {
			return id, nil
		}
	}
	return "", refusal.New(refusal.CodeStoreUnavailable, "", "no free turn id")
}

// play runs the model of p's turn and ends the turn: completed, failed or
// cancelled as End decides, or interrupted when the server shuts down.
func (h *host) play(p *turn.Producer, todo plan, next func()) {
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
			h.asked(key.ConversationID, todo.Card.Key.CorrelationID) // before the end, which clients act on
		}
	}
	if err != nil && h.life.Err() != nil && p.Context().Err() == nil {
		if err := p.Interrupt(end, "the server is shutting down"); err != nil {
			h.log.Warn("a turn could not be interrupted", "conversation", key.ConversationID, "turn", key.TurnID, "err", err)
		}
		h.ended(key, nil, false)
		return
	}
	if err := p.End(end, err); err != nil {
		h.log.Warn("a turn could not be ended", "conversation", key.ConversationID, "turn", key.TurnID, "err", err)
	}
	rec, err := h.rec.Load(end, worker, recovery.TurnRef{Conversation: key.ConversationID, Turn: key.TurnID})
	if err != nil {
		h.log.Warn("a turn's end could not be read", "conversation", key.ConversationID, "turn", key.TurnID, "err", err)
	}
	var closed []string
	if todo.Card != nil && err == nil && rec.Status == recovery.TurnCancelled {
		closed = append(closed, todo.Card.Key.CorrelationID) // End cancelled it and closed it on this turn
	}
	h.ended(key, closed, false)
	if err == nil && rec.Status == recovery.TurnCompleted && next != nil {
		next()
	}
}

// asked adds cards to those of conversation that a turn still has to
// close on a stream.
func (h *host) asked(conversation string, cards ...string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	c := h.conv(conversation)
	c.asked = append(c.asked, cards...)
}

// ended removes key's turn from the running ones and closed from the cards
// to close; forget also removes the turn itself, which did not start.
func (h *host) ended(key replay.Key, closed []string, forget bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	c := h.conv(key.ConversationID)
	c.running = slices.DeleteFunc(c.running, func(id string) bool { return id == key.TurnID })
	c.asked = slices.DeleteFunc(c.asked, func(card string) bool { return slices.Contains(closed, card) })
	if forget {
		delete(c.turns, key.TurnID)
	}
}

// chain returns the next of the conversation's k-th turn of n: once its
// card closes (an answer through the answer endpoint), it starts turn
// k+1, which closes the card, replies, and unless it is the last plays the
// script and asks a card in turn.
func (h *host) chain(conversation string, k, n int) func() {
	if k >= n {
		return nil
	}
	return func() {
		key := interactions.Key{Conversation: conversation, CorrelationID: "card-" + turnID(k)}
		if _, err := h.cards.Wait(h.life, key); err != nil {
			return // the server is shutting down
		}
		ctx, cancel := context.WithTimeout(h.life, 10*time.Second)
		defer cancel()
		if _, err := h.start(ctx, conversation, turnID(k+1), k+1 < n, k+1 < n, h.chain(conversation, k+1, n)); err != nil && h.life.Err() == nil {
			h.log.Error("the next turn could not start", "conversation", conversation, "turn", turnID(k+1), "err", err)
		}
	}
}

// startTurn is the UI message stream's StartTurn: a POST without a card
// answer starts a scripted turn asking a card; one with an answer (already
// landed) starts a turn that closes the card and replies.
func (h *host) startTurn(ctx context.Context, r *http.Request, req *uistream.Request) (replay.Key, error) {
	if _, err := callerOf(r); err != nil {
		return replay.Key{}, refusal.ErrUnauthorized
	}
	fresh := req.Answer == nil
	return h.start(ctx, req.ChatID, "", fresh, fresh, nil)
}

// activeTurn is the UI message stream's ActiveTurn: the chat's latest
// running turn.
func (h *host) activeTurn(ctx context.Context, r *http.Request, chatID string) (replay.Key, bool, error) {
	if _, err := callerOf(r); err != nil {
		return replay.Key{}, false, refusal.ErrUnauthorized
	}
	return h.active(ctx, chatID)
}

// cancelTurn is the UI message stream's Cancel: the demo caller's cancel
// request, through recovery, as the cancel endpoint makes it.
func (h *host) cancelTurn(ctx context.Context, r *http.Request, key replay.Key) error {
	who, err := callerOf(r)
	if err != nil {
		return refusal.ErrUnauthorized
	}
	return h.rec.Cancel(ctx, who.Principal, recovery.TurnRef{Conversation: key.ConversationID, Turn: key.TurnID})
}

// startRun is AG-UI's StartRun: a run id seen before is its turn again
// (replayed whole); a run without resume entries starts a scripted turn
// asking a card, one with them (already landed) a turn that closes the
// cards and replies.
func (h *host) startRun(ctx context.Context, r *http.Request, in *agui.RunInput) (replay.Key, error) {
	if _, err := callerOf(r); err != nil {
		return replay.Key{}, refusal.ErrUnauthorized
	}
	h.agRuns.Lock()
	defer h.agRuns.Unlock()
	run := [2]string{in.ThreadID, in.RunID}
	if key, ok := h.agTurn[run]; ok {
		return key, nil
	}
	fresh := len(in.Resume) == 0
	key, err := h.start(ctx, in.ThreadID, "", fresh, fresh, nil)
	if err == nil {
		h.agTurn[run] = key
	}
	return key, err
}
