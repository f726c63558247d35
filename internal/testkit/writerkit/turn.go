package writerkit

import (
	"context"
	"testing"

	chatprotocol "github.com/Papercusp/chat-protocol-go"
	"github.com/Papercusp/chat-protocol-go/internal/testkit/turnscript"
	"github.com/Papercusp/chat-protocol-go/replay"
)

// The texts of the deltas a [Turn] appends: words JSON does not escape,
// so that they show as they are in every protocol's body.
const (
	// FirstDelta is the text of the first delta [BeginTurn] appends.
	FirstDelta = "writerkit-first-delta"
	// LaterDelta is the text of a delta a scenario appends once the
	// stream is live.
	LaterDelta = "writerkit-later-delta"
)

// Turn is [Key]'s turn in a window, appended by hand, one frame at a
// time.
type Turn struct {
	Window replay.Window
	seq    int64
}

// BeginTurn appends the start of [Key]'s turn to window: started and two
// deltas, the first of text [FirstDelta]. The turn is mid-way: no
// terminal frame.
func BeginTurn(t testing.TB, window replay.Window) *Turn {
	t.Helper()
	tr := &Turn{Window: window}
	tr.add(t, &chatprotocol.LifecycleEvent{Status: chatprotocol.LifecycleStarted})
	tr.Delta(t, FirstDelta)
	tr.Delta(t, " and more")
	return tr
}

// Delta appends a delta of text.
func (tr *Turn) Delta(t testing.TB, text string) {
	t.Helper()
	tr.add(t, &chatprotocol.DeltaEvent{Text: text})
}

// Complete appends the lifecycle frame that ends the turn, completed.
func (tr *Turn) Complete(t testing.TB) {
	t.Helper()
	tr.add(t, &chatprotocol.LifecycleEvent{Status: chatprotocol.LifecycleCompleted})
}

func (tr *Turn) add(t testing.TB, ev chatprotocol.Event) {
	t.Helper()
	tr.seq++
	if _, err := tr.Window.Append(context.Background(), Key, turnscript.Envelope(Key, tr.seq, ev)); err != nil {
		t.Fatalf("writerkit: appending seq %d: %v", tr.seq, err)
	}
}
