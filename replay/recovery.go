package replay

import (
	"context"
	"errors"

	"github.com/Papercusp/chat-protocol-go/recovery"
)

// RecoverySource adapts w to recovery.ReplaySource, so that
// recovery.TurnRecovery.Resume serves reconnects from a replay window, as a
// lightweight host does without any store (docs/contract.md sections 11.2
// and 11.7). The turn's conversation and turn ids are the Key; each Frame
// becomes a recovery.Frame whose Payload is its canonical bytes, shared.
// A cursor w refuses is answered with the bounds and no frame, so that
// Resume's recovery.ValidateReplay refuses it as a *recovery.WindowError
// carrying the bounds and the cursor; any other error of w is returned as
// it is.
func RecoverySource(w Window) recovery.ReplaySource {
	return recovery.ReplayFunc(func(ctx context.Context, turn recovery.TurnRef, cursor uint64) (recovery.Window, []recovery.Frame, error) {
		key := Key{ConversationID: turn.Conversation, TurnID: turn.Turn}
		b, frames, err := w.Read(ctx, key, cursor)
		win := recovery.Window{Lower: b.Lower, Latest: b.Latest}
		if _, refused := errors.AsType[*CursorError](err); refused {
			return win, nil, nil
		}
		if err != nil {
			return win, nil, err
		}
		out := make([]recovery.Frame, len(frames))
		for i, f := range frames {
			out[i] = recovery.Frame{Conversation: key.ConversationID, Turn: key.TurnID, Seq: f.Seq, Payload: f.Data}
		}
		return win, out, nil
	})
}
