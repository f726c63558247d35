package conversation

import (
	"context"
	"errors"

	chatprotocol "github.com/Papercusp/chat-protocol-go"
	"github.com/Papercusp/chat-protocol-go/refusal"
	"github.com/Papercusp/chat-protocol-go/replay"
)

// EndFromWindow stores key's turn as ended in store ([Store.EndTurn]) with
// its reduced state, built from the turn's frames in w (docs/contract.md
// section 20.1): each frame applied in seq order to a version-1 state,
// then that turn's JSON form. A host calls it once the producer ended the
// turn (completed, failed, cancelled) or interrupted it at a shutdown, so
// that the conversation keeps the turn when the window prunes it and has
// no running turn left. A turn whose first frames the window already
// dropped, or that has no frame, is stale-cursor and nothing is stored;
// the window's and the store's errors are returned as they are.
func EndFromWindow(ctx context.Context, store Store, w replay.Window, key replay.Key) error {
	s := chatprotocol.NewChatStateV1(key.ConversationID)
	b, err := replay.Each(ctx, w, key, 0, func(f replay.Frame) error {
		env, err := chatprotocol.ParseEnvelope(f.Data)
		if err == nil {
			err = s.Apply(env)
		}
		return err
	})
	if err != nil {
		return err
	}
	if b.Lower > 0 || b.Latest == 0 {
		return refusal.New(refusal.CodeStaleCursor, "", "conversation: the window no longer holds the turn from its start")
	}
	t, ok := s.Turn(key.TurnID)
	if !ok {
		return refusal.New(refusal.CodeStaleCursor, "", "conversation: the window holds no frame of the turn")
	}
	state, err := t.MarshalJSON()
	if err != nil {
		return err
	}
	return store.EndTurn(ctx, key.ConversationID, key.TurnID, state)
}

// Settling is a [Store] whose StartTurn and History first end a running
// turn that has already ended in Window: the turn's stream is over
// (completed, failed, cancelled) but its host has not stored its state
// yet ([EndFromWindow] is called after the end, which clients see first).
// So a client that starts the next turn, or reads the history, as soon as
// the stream ended is not refused turn-running, and reads the turn
// ended. It stores that state, as the host would; every other method is
// Store's.
type Settling struct {
	Store
	Window replay.Window
}

// StartTurn implements [Store], settling as [Settling] says: on
// turn-running, it settles the running turn and starts again once. A
// start whose request key names a turn that ended, of which Window knows
// nothing (its bounds expired or were forgotten, or it ended without a
// frame, as [NotStarted] ends it), returns that turn with a stale-cursor
// [*replay.CursorError] carrying the bounds: its stream would wait for
// frames that never come, so the caller refuses it 410 (docs/contract.md
// sections 18.3 and 20.4) and the client reads the history instead.
func (s Settling) StartTurn(ctx context.Context, id string, start TurnStart) (Turn, bool, error) {
	t, started, err := s.Store.StartTurn(ctx, id, start)
	if err == nil && !started && t.Ended() {
		return t, false, s.forgotten(ctx, id, t.ID)
	}
	if !errors.Is(err, refusal.ErrTurnRunning) {
		return t, started, err
	}
	run, ok, rerr := s.Store.Running(ctx, id)
	if rerr != nil || !ok {
		return t, false, err
	}
	if settled, err2 := s.settle(ctx, id, run.ID); err2 != nil || !settled {
		return Turn{}, false, errors.Join(err, err2)
	}
	return s.Store.StartTurn(ctx, id, start)
}

// History implements [Store], settling as [Settling] says: with a
// running turn that ended in the window, it settles it and reads again.
func (s Settling) History(ctx context.Context, id string) (History, error) {
	h, err := s.Store.History(ctx, id)
	if err != nil || h.Conversation.Running == "" {
		return h, err
	}
	if settled, err := s.settle(ctx, id, h.Conversation.Running); err != nil || !settled {
		return h, err
	}
	return s.Store.History(ctx, id)
}

// forgotten returns nil when Window holds a frame of the ended turn
// turnID, or its tombstone (Latest above 0, which a read refuses as it
// should), and otherwise the stale-cursor refusal of its first frame, or
// Window's error.
func (s Settling) forgotten(ctx context.Context, id, turnID string) error {
	b, err := s.Window.Bounds(ctx, replay.Key{ConversationID: id, TurnID: turnID})
	if err != nil || b.Latest > 0 {
		return err
	}
	return &replay.CursorError{Bounds: b, Err: refusal.New(refusal.CodeStaleCursor, "",
		"conversation: the window holds nothing of the ended turn; read the history")}
}

// settle stores turnID's state when the window holds it ended, and
// reports whether it did (or another did first).
func (s Settling) settle(ctx context.Context, id, turnID string) (bool, error) {
	key := replay.Key{ConversationID: id, TurnID: turnID}
	if b, err := s.Window.Bounds(ctx, key); err != nil || !b.Ended {
		return false, err
	}
	if err := EndFromWindow(ctx, s.Store, s.Window, key); err != nil && !errors.Is(err, refusal.ErrTurnNotRunning) {
		return false, err
	}
	return true, nil
}
