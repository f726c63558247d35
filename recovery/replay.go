package recovery

import (
	"context"
	"strconv"

	"github.com/Papercusp/chat-protocol-go/refusal"

	"github.com/Papercusp/chat-protocol-go/internal/wire"
)

// Window is what a host's replay source retains for a turn (docs/contract.md
// section 11), reported also when it holds no frame.
//
// Lower is the retained lower bound, as a cursor: the smallest cursor the
// window can resume from, so that frames Lower+1 through Latest are all
// retained. Latest is the seq of the turn's latest frame, 0 before the
// first. A window is empty when Lower == Latest: a new turn (0, 0) or one
// whose frames were all pruned (say 40, 40). A host whose oldest retained
// frame has seq o reports Lower = o-1.
type Window struct {
	Lower  uint64
	Latest uint64
}

// Frame is the identity of one retained event frame plus the bytes the host
// stores for it. A host maps a version-1 ChatEventEnvelope to a Frame as
// conversationId -> Conversation, turnId -> Turn, seq -> Seq, and the
// encoded envelope (or the SSE frame it sent) -> Payload, which recovery
// never reads.
type Frame struct {
	Conversation string
	Turn         string
	Seq          uint64
	Payload      []byte
}

// ReplaySource is the host's SSE/event replay window (docs/contract.md
// section 11): its existing transport buffer or persistence. Replay returns
// the turn's window and the complete retained suffix after cursor, in seq
// order; it need not check the cursor itself. It must be safe for concurrent
// use.
type ReplaySource interface {
	Replay(ctx context.Context, turn TurnRef, cursor uint64) (Window, []Frame, error)
}

// ReplayFunc adapts a function to ReplaySource.
type ReplayFunc func(ctx context.Context, turn TurnRef, cursor uint64) (Window, []Frame, error)

// Replay calls f.
func (f ReplayFunc) Replay(ctx context.Context, turn TurnRef, cursor uint64) (Window, []Frame, error) {
	return f(ctx, turn, cursor)
}

// WindowError is a replay refusal (docs/contract.md section 11): it carries
// the window's bounds and the refused cursor with the refusal. Err is the
// *Error with the code (stale-cursor, cursor-ahead, sequence-gap,
// sequence-reordered or foreign-frame) and a Path of the form /frames/N for a
// frame; errors.Is, errors.AsType[*Error] and CodeOf see through to it.
type WindowError struct {
	Window Window
	Cursor uint64
	Err    *refusal.Error
}

// Error formats the refusal with the bounds; the text is informative only.
func (e *WindowError) Error() string {
	return e.Err.Error() + " (window " + strconv.FormatUint(e.Window.Lower, 10) + ".." +
		strconv.FormatUint(e.Window.Latest, 10) + ", cursor " + strconv.FormatUint(e.Cursor, 10) + ")"
}

// Unwrap returns the coded refusal.
func (e *WindowError) Unwrap() error { return e.Err }

// ValidateReplay checks a replay answer for turn against docs/contract.md
// section 11 and returns nil, or a *WindowError:
//
//   - a window whose Lower is above its Latest: sequence-gap;
//   - cursor below w.Lower: stale-cursor; above w.Latest: cursor-ahead;
//   - a frame of another conversation or turn: foreign-frame;
//   - a frame whose seq repeats or goes back, or lies beyond w.Latest:
//     sequence-reordered;
//   - a frame whose seq skips, or a suffix that stops before w.Latest:
//     sequence-gap.
//
// A valid answer holds exactly the frames cursor+1 through w.Latest; at
// cursor == w.Latest that is none. ValidateReplay only reads its arguments
// and is safe for concurrent use.
func ValidateReplay(turn TurnRef, cursor uint64, w Window, frames []Frame) error {
	refuse := func(code refusal.Code, path, msg string) error {
		return &WindowError{Window: w, Cursor: cursor, Err: wire.New(code, path, msg)}
	}
	switch {
	case w.Lower > w.Latest:
		return refuse(refusal.CodeSequenceGap, "", "window lower bound above its latest seq")
	case cursor < w.Lower:
		return refuse(refusal.CodeStaleCursor, "", "cursor below the retained lower bound")
	case cursor > w.Latest:
		return refuse(refusal.CodeCursorAhead, "", "cursor beyond the latest seq")
	}
	next := cursor + 1
	for i, f := range frames {
		path := "/frames/" + strconv.Itoa(i)
		switch {
		case f.Conversation != turn.Conversation || f.Turn != turn.Turn:
			return refuse(refusal.CodeForeignFrame, path, "frame of another conversation or turn")
		case f.Seq < next:
			return refuse(refusal.CodeSequenceReordered, path, "seq repeated or out of order")
		case f.Seq > w.Latest:
			return refuse(refusal.CodeSequenceReordered, path, "seq beyond the window's latest")
		case f.Seq > next:
			return refuse(refusal.CodeSequenceGap, path, "seq skips "+strconv.FormatUint(next, 10))
		}
		next++
	}
	if next-1 != w.Latest {
		return refuse(refusal.CodeSequenceGap, "/frames/"+strconv.Itoa(len(frames)), "suffix stops before the latest seq")
	}
	return nil
}

// Resume returns the frames of turn after cursor, for a client that
// reconnects (docs/contract.md section 11). It authorizes caller for
// ActionRead, asks the host's ReplaySource and checks its answer with
// ValidateReplay. It returns the window also with a refusal.
//
// Errors: ErrInvalidTurn, ErrUnauthorized; ErrStoreUnavailable when the
// host has no ReplaySource or it failed (an error from it that already
// carries a code is returned as it is); and the *WindowError refusals of
// ValidateReplay.
func (r *TurnRecovery) Resume(ctx context.Context, caller string, turn TurnRef, cursor uint64) (w Window, frames []Frame, err error) {
	defer func() { r.reportReplay(ctx, turn, cursor, w, len(frames), err) }()
	if err := turn.Validate(); err != nil {
		return Window{}, nil, err
	}
	if err := r.authorize(ctx, caller, turn, ActionRead); err != nil {
		return Window{}, nil, err
	}
	if r.host.Replay == nil {
		return Window{}, nil, wire.New(refusal.CodeStoreUnavailable, "", "this host offers no replay window")
	}
	w, frames, err = r.host.Replay.Replay(ctx, turn, cursor)
	if err != nil {
		if refusal.CodeOf(err) == "" {
			err = wire.Wrap(refusal.CodeStoreUnavailable, "", "replay source failed", err)
		}
		return w, nil, err
	}
	if err := ValidateReplay(turn, cursor, w, frames); err != nil {
		return w, nil, err
	}
	return w, frames, nil
}
