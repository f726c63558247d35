package replay_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"

	chatprotocol "github.com/Papercusp/chat-protocol-go"
	"github.com/Papercusp/chat-protocol-go/refusal"
	"github.com/Papercusp/chat-protocol-go/replay"
)

// A writer appends a turn's envelopes; a reader that reconnects with
// Last-Event-ID 1 gets the rest, then follows the turn live until it ends.
func ExampleMemory() {
	ctx := context.Background()
	w := replay.NewMemory(nil)
	key := replay.Key{ConversationID: "c-1", TurnID: "t-1"}
	events := []chatprotocol.Event{
		&chatprotocol.LifecycleEvent{Status: chatprotocol.LifecycleStarted},
		&chatprotocol.DeltaEvent{Text: "Hel"},
		&chatprotocol.DeltaEvent{Text: "lo"},
		&chatprotocol.LifecycleEvent{Status: chatprotocol.LifecycleCompleted},
	}
	env := func(seq int) *chatprotocol.ChatEventEnvelope {
		return &chatprotocol.ChatEventEnvelope{ConversationID: "c-1", TurnID: "t-1",
			EventID: fmt.Sprint("e-", seq), Seq: int64(seq), Event: events[seq-1]}
	}
	for seq := 1; seq <= 2; seq++ {
		if _, err := w.Append(ctx, key, env(seq)); err != nil {
			panic(err)
		}
	}
	go func() { // the rest of the turn arrives while the reader follows it
		for seq := 3; seq <= 4; seq++ {
			if _, err := w.Append(ctx, key, env(seq)); err != nil {
				panic(err)
			}
		}
	}()

	cursor := int64(1) // the reader's Last-Event-ID
	for {
		bounds, frames, err := w.Read(ctx, key, cursor, math.MaxInt)
		if err != nil {
			panic(err)
		}
		for _, f := range frames {
			fmt.Printf("id: %d event: %s\n", f.Seq, f.Type)
			cursor = f.Seq
		}
		if bounds.Ended && cursor == bounds.Latest {
			break
		}
		if _, err := w.Wait(ctx, key, cursor); err != nil {
			panic(err)
		}
	}

	_, _, err := w.Read(ctx, key, 9, math.MaxInt)
	if ce, ok := errors.AsType[*replay.CursorError](err); ok {
		fmt.Println(refusal.CodeOf(err), ce.Bounds)
	}
	// Output:
	// id: 2 event: delta
	// id: 3 event: delta
	// id: 4 event: lifecycle
	// cursor-ahead (0, 4] ended
}

// A text too long for one frame goes out as several deltas.
func ExampleSplitDelta() {
	template := &chatprotocol.ChatEventEnvelope{ConversationID: "c-1", TurnID: "t-1", EventID: "e-000000", Seq: 1,
		Event: &chatprotocol.DeltaEvent{}}
	text := strings.Repeat("é", 3_000_000) // 6 MB of UTF-8
	pieces, err := replay.SplitDelta(template, text, 0)
	if err != nil {
		panic(err)
	}
	fmt.Println(len(pieces), strings.Join(pieces, "") == text)
	// Output: 6 true
}
