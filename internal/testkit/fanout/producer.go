package main

import (
	"context"
	"strconv"
	"time"

	chatprotocol "github.com/Papercusp/chat-protocol-go"
)

// conversation is the conversation of every turn; turn N is "t-N".
const conversation = "c"

// turnID is the id of turn n.
func turnID(n int) string { return "t-" + strconv.Itoa(n) }

// started is the first frame of a turn, seq 1.
func started(turn int) *chatprotocol.ChatEventEnvelope {
	return &chatprotocol.ChatEventEnvelope{ConversationID: conversation, TurnID: turnID(turn), EventID: "e-1", Seq: 1,
		Event: &chatprotocol.LifecycleEvent{Status: chatprotocol.LifecycleStarted}}
}

// delta is the delta of seq in turn, its text at, in Unix nanoseconds.
func delta(turn int, seq int64, at time.Time) *chatprotocol.ChatEventEnvelope {
	return &chatprotocol.ChatEventEnvelope{ConversationID: conversation, TurnID: turnID(turn),
		EventID: "e-" + strconv.FormatInt(seq, 10), Seq: seq,
		Event: &chatprotocol.DeltaEvent{Text: strconv.FormatInt(at.UnixNano(), 10)}}
}

// tick is the producer's period: each tick appends to the turns whose
// delta falls in it, so that the turns' deltas are spread evenly over pace.
const tick = 5 * time.Millisecond

// produce appends one delta to each of turns turns every pace until ctx
// is done, calling emit with the delta (seq 2 onwards; the time in its
// text is taken just before the call).
func produce(ctx context.Context, turns int, pace time.Duration, emit func(turn int, env *chatprotocol.ChatEventEnvelope)) {
	seqs := make([]int64, turns)
	for i := range seqs {
		seqs[i] = 1
	}
	t := time.NewTicker(tick)
	defer t.Stop()
	begin := time.Now()
	var made int64 // deltas emitted so far
	next := 0
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			due := int64(now.Sub(begin)) * int64(turns) / int64(pace) // deltas due by now
			for ; made < due; made++ {
				seqs[next]++
				emit(next, delta(next, seqs[next], time.Now()))
				next = (next + 1) % turns
			}
		}
	}
}
