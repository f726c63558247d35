// Package turnhost is a test kit: a host that produces turnscript's turn
// (text, a tool call and its result, more text) through a [turn.Producer],
// with recovery on its memory store and the registry of running turns, so
// that a cancel goes the way of docs/contract.md section 16.4: recovery
// commits it, the abort hook ends the model loop's context, and the
// Producer ends the turn cancelled. The bridges' stop tests give its
// Cancels.Cancel to the bridge as the Cancel hook.
package turnhost

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"sync"
	"time"

	chatprotocol "github.com/Papercusp/chat-protocol-go"
	"github.com/Papercusp/chat-protocol-go/internal/testkit/turnscript"
	"github.com/Papercusp/chat-protocol-go/recovery"
	"github.com/Papercusp/chat-protocol-go/refusal"
	"github.com/Papercusp/chat-protocol-go/replay"
	"github.com/Papercusp/chat-protocol-go/turn"
)

// Worker is the principal the Producers act as; User is the session's
// principal, allowed to cancel and read every turn. A request's session is
// its X-User header.
const (
	Worker = "worker"
	User   = "alice"
)

// Host runs scripted turns, one a chat at a time, each frame Pace after the
// previous one. Safe for concurrent use; make one with [New].
type Host struct {
	Window  *replay.Memory
	Rec     *recovery.TurnRecovery
	Runs    *turn.Runs
	Cancels *turn.CancelHandler // the cancel endpoint; its Cancel is the bridges' hook
	Pace    time.Duration

	mu     sync.Mutex
	turns  int
	active map[string]replay.Key
	done   sync.WaitGroup
}

// New returns a Host whose turns write a frame every pace.
func New(pace time.Duration) (*Host, error) {
	h := &Host{Window: replay.NewMemory(nil), Runs: turn.NewRuns(), Pace: pace, active: map[string]replay.Key{}}
	h.Rec = recovery.New(recovery.Host{Store: recovery.NewMemoryStore(nil), Authorizer: authorizer{}, Aborter: h.Runs}, nil)
	var err error
	h.Cancels, err = turn.NewCancelHandler(h.Rec, &turn.CancelHandlerOptions{Caller: Caller})
	return h, err
}

// Caller is the request's session: its X-User header.
func Caller(r *http.Request) (string, error) {
	if u := r.Header.Get("X-User"); u != "" {
		return u, nil
	}
	return "", errors.New("no session")
}

// authorizer allows the worker everything and the user cancel and read.
type authorizer struct{}

func (authorizer) Authorize(_ context.Context, caller string, _ recovery.TurnRef, action recovery.Action) error {
	switch {
	case caller == Worker, caller == User && (action == recovery.ActionCancel || action == recovery.ActionRead):
		return nil
	}
	return refusal.ErrUnauthorized
}

// Start starts a new turn of chat chatID, t-N, and returns its key; its
// model loop runs on a goroutine of its own, on the Producer's Context.
func (h *Host) Start(ctx context.Context, chatID string) (replay.Key, error) {
	h.mu.Lock()
	h.turns++
	key := replay.Key{ConversationID: chatID, TurnID: "t-" + strconv.Itoa(h.turns)}
	h.mu.Unlock()
	p, err := turn.Start(ctx, h.Window, key, &turn.Options{Recovery: h.Rec, Runs: h.Runs, Caller: Worker})
	if err != nil {
		return replay.Key{}, err
	}
	h.mu.Lock()
	h.active[chatID] = key
	h.mu.Unlock()
	h.done.Add(1)
	go func() {
		defer h.done.Done()
		_ = p.End(context.Background(), h.script(p))
		h.mu.Lock()
		if h.active[chatID] == key {
			delete(h.active, chatID)
		}
		h.mu.Unlock()
	}()
	return key, nil
}

// script is the model loop: the deltas, the tool call, the deltas, each
// after Pace, until the turn's Context ends.
func (h *Host) script(p *turn.Producer) error {
	ctx := p.Context()
	wait := func() error {
		select {
		case <-ctx.Done():
			return context.Cause(ctx)
		case <-time.After(h.Pace):
			return nil
		}
	}
	say := func(words []string) error {
		for _, w := range words {
			if err := wait(); err != nil {
				return err
			}
			if err := p.Delta(ctx, w); err != nil {
				return err
			}
		}
		return nil
	}
	if err := say(turnscript.Before); err != nil {
		return err
	}
	if err := wait(); err != nil {
		return err
	}
	tc := turn.ToolCall{ID: turnscript.CallID(p.Key()), Name: turnscript.ToolName, Input: json.RawMessage(turnscript.ToolInput)}
	if _, err := p.RunToolCall(ctx, tc, func(context.Context) (json.RawMessage, error) {
		return json.RawMessage(turnscript.ToolOutput), nil
	}); err != nil {
		return err
	}
	return say(turnscript.After)
}

// Active returns the running turn of chatID.
func (h *Host) Active(chatID string) (replay.Key, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	key, ok := h.active[chatID]
	return key, ok
}

// Status returns recovery's status of key's turn.
func (h *Host) Status(ctx context.Context, key replay.Key) (recovery.TurnStatus, error) {
	rec, err := h.Rec.Load(ctx, Worker, recovery.TurnRef{Conversation: key.ConversationID, Turn: key.TurnID})
	return rec.Status, err
}

// Turn returns key's turn as the version-1 state holds it after every
// frame the window retains.
func (h *Host) Turn(ctx context.Context, key replay.Key) (*chatprotocol.TurnState, error) {
	s := chatprotocol.NewChatStateV1(key.ConversationID)
	for cursor := int64(0); ; {
		b, frames, err := h.Window.Read(ctx, key, cursor, replay.DefaultPageBytes)
		if err != nil {
			return nil, err
		}
		for _, f := range frames {
			env, err := chatprotocol.ParseEnvelope(f.Data)
			if err != nil {
				return nil, err
			}
			if err := s.Apply(env); err != nil {
				return nil, err
			}
			cursor = f.Seq
		}
		if cursor >= b.Latest {
			break
		}
	}
	t, ok := s.Turn(key.TurnID)
	if !ok {
		return nil, errors.New("turnhost: the window holds no frame of the turn")
	}
	return t, nil
}

// Wait waits until every turn started has ended.
func (h *Host) Wait() { h.done.Wait() }
