package replay

import (
	"context"

	"github.com/Papercusp/chat-protocol-go/observe"
	"github.com/Papercusp/chat-protocol-go/refusal"
)

// reportRead reports a window read of key's turn after cursor to obs:
// replay.serve with the bounds b and the count of frames served, or
// replay.refuse with err's code.
func reportRead(ctx context.Context, obs observe.Observer, key Key, after int64, b Bounds, n int, err error) {
	e := observe.Event{Kind: observe.ReplayServe, Conversation: key.ConversationID, Turn: key.TurnID,
		Cursor: after, Lower: b.Lower, Latest: b.Latest, Count: n}
	if err != nil {
		e.Kind, e.Code, e.Err = observe.ReplayRefuse, refusal.CodeOf(err), err
	}
	obs.Observe(ctx, e)
}
