package replaytest

import (
	"math"
	"strings"

	chatprotocol "github.com/Papercusp/chat-protocol-go"
	"github.com/Papercusp/chat-protocol-go/refusal"
	"github.com/Papercusp/chat-protocol-go/replay"
)

// checkAppendRefusals: a gap, a reordered seq, a redelivered one, a frame
// of another conversation or turn and an envelope that does not validate
// are each refused with their code and the bounds, and nothing of them is
// stored; the right next frame is then accepted.
func checkAppendRefusals(r *run) error {
	key := r.key("refusals")
	fresh := r.key("refusals-fresh")
	_, err := r.w.Append(r.ctx, fresh, envelope(fresh, 2, &chatprotocol.DeltaEvent{Text: "x"}))
	if err := refused(err, refusal.ErrSequenceGap, replay.Bounds{}, false, 0); err != nil {
		return failf("a first frame of seq 2: %w", err)
	}
	want, err := r.appendTurn(key, 1, turnEvents(3)...)
	if err != nil {
		return err
	}
	b := replay.Bounds{Latest: 3}
	dup := envelope(key, 3, turnEvents(3)[2])
	foreignConv := envelope(replay.Key{ConversationID: r.conv + "-other", TurnID: key.TurnID}, 4, &chatprotocol.DeltaEvent{Text: "x"})
	foreignTurn := envelope(replay.Key{ConversationID: r.conv, TurnID: key.TurnID + "-other"}, 4, &chatprotocol.DeltaEvent{Text: "x"})
	noEventID := envelope(key, 4, &chatprotocol.DeltaEvent{Text: "x"})
	noEventID.EventID = ""
	badStatus := envelope(key, 4, &chatprotocol.ToolResultEvent{CallID: "call-3", Status: "maybe"})
	for _, c := range []struct {
		name     string
		env      *chatprotocol.ChatEventEnvelope
		sentinel error
	}{
		{"a gap", envelope(key, 5, &chatprotocol.DeltaEvent{Text: "x"}), refusal.ErrSequenceGap},
		{"a reordered seq", envelope(key, 2, &chatprotocol.DeltaEvent{Text: "other"}), refusal.ErrSequenceReordered},
		{"the latest again", dup, refusal.ErrSequenceReordered},
		{"the first again", envelope(key, 1, turnEvents(1)[0]), refusal.ErrSequenceReordered},
		{"another conversation's frame", foreignConv, refusal.ErrForeignFrame},
		{"another turn's frame", foreignTurn, refusal.ErrForeignFrame},
		{"an envelope without event id", noEventID, sentinelOf(noEventID.Validate())},
		{"an unknown result status", badStatus, sentinelOf(badStatus.Validate())},
	} {
		_, err := r.w.Append(r.ctx, key, c.env)
		if err := refused(err, c.sentinel, b, false, 0); err != nil {
			return failf("Append of %s: %w", c.name, err)
		}
	}
	if err := r.readExpect(key, 0, b, 1, want); err != nil {
		return failf("after the refusals: %w", err)
	}
	next, err := r.appendOne(key, envelope(key, 4, &chatprotocol.DeltaEvent{Text: "next"}))
	if err != nil {
		return err
	}
	return r.readExpect(key, 0, replay.Bounds{Latest: 4}, 1, append(want, next))
}

// checkFrameTooLarge: an envelope whose canonical JSON is exactly the
// limit is accepted, one byte more is frame-too-large with the bounds.
func checkFrameTooLarge(r *run) error {
	limit := r.cfg.MaxFrameBytes
	switch {
	case limit < 0:
		return errSkip
	case limit == 0:
		limit = chatprotocol.DefaultMaxFrameBytes
	}
	key := r.key("too-large")
	sized := func(seq int64, size int) (*chatprotocol.ChatEventEnvelope, error) {
		env := envelope(key, seq, &chatprotocol.DeltaEvent{})
		empty, err := canonical(env)
		if err != nil {
			return nil, err
		}
		if size < len(empty) {
			return nil, failf("the frame limit %d is below an empty delta's %d bytes", limit, len(empty))
		}
		env.Event = &chatprotocol.DeltaEvent{Text: strings.Repeat("a", size-len(empty))}
		return env, nil
	}
	fits, err := sized(1, limit)
	if err != nil {
		return err
	}
	if _, err := r.appendOne(key, fits); err != nil {
		return failf("a frame of exactly the limit: %w", err)
	}
	over, err := sized(2, limit+1)
	if err != nil {
		return err
	}
	_, err = r.w.Append(r.ctx, key, over)
	if err := refused(err, refusal.ErrFrameTooLarge, replay.Bounds{Latest: 1}, false, 0); err != nil {
		return failf("a frame of the limit plus one byte: %w", err)
	}
	b, _, err := r.w.Read(r.ctx, key, 1, math.MaxInt)
	if err != nil || b != (replay.Bounds{Latest: 1}) {
		return failf("after the refusal: bounds %v, %v; want (0, 1]", b, err)
	}
	return nil
}

// checkEnded: completed, failed and cancelled end a turn, interrupted does
// not; after the end Wait returns at once, anything but a tool_result is
// turn-terminated with the bounds, and a late tool_result is accepted.
func checkEnded(r *run) error {
	for _, status := range []chatprotocol.LifecycleStatus{chatprotocol.LifecycleCompleted, chatprotocol.LifecycleFailed, chatprotocol.LifecycleCancelled} {
		key := r.key("ended-" + string(status))
		want, err := r.appendTurn(key, 1,
			&chatprotocol.LifecycleEvent{Status: chatprotocol.LifecycleStarted},
			&chatprotocol.ToolCallEvent{CallID: "late", Name: "slow"},
			&chatprotocol.LifecycleEvent{Status: chatprotocol.LifecycleInterrupted},
			&chatprotocol.LifecycleEvent{Status: status})
		if err != nil {
			return err
		}
		b := replay.Bounds{Latest: 4, Ended: true}
		if err := r.readExpect(key, 0, b, 1, want); err != nil {
			return failf("%s: %w", status, err)
		}
		if got, err := r.waitReturns(key, 4); err != nil || got != b {
			return failf("%s: Wait after the end: %v, %v; want %v at once", status, got, err, b)
		}
		for _, ev := range []chatprotocol.Event{&chatprotocol.DeltaEvent{Text: "more"}, &chatprotocol.LifecycleEvent{Status: chatprotocol.LifecycleStarted}, &chatprotocol.LifecycleEvent{Status: status}} {
			_, err := r.w.Append(r.ctx, key, envelope(key, 5, ev))
			if err := refused(err, refusal.ErrTurnTerminated, b, false, 0); err != nil {
				return failf("%s: Append of a %s after the end: %w", status, ev.EventType(), err)
			}
		}
		late, err := r.appendOne(key, envelope(key, 5, &chatprotocol.ToolResultEvent{CallID: "late", Status: chatprotocol.ToolResultCancelled}))
		if err != nil {
			return failf("%s: a late tool_result: %w", status, err)
		}
		if err := r.readExpect(key, 3, replay.Bounds{Latest: 5, Ended: true}, 1, append(want, late)); err != nil {
			return failf("%s: after the late tool_result: %w", status, err)
		}
	}
	key := r.key("interrupted")
	if _, err := r.appendTurn(key, 1, &chatprotocol.LifecycleEvent{Status: chatprotocol.LifecycleStarted},
		&chatprotocol.LifecycleEvent{Status: chatprotocol.LifecycleInterrupted},
		&chatprotocol.DeltaEvent{Text: "goes on"}); err != nil {
		return failf("a delta after interrupted: %w", err)
	}
	if b, _, err := r.w.Read(r.ctx, key, 3, math.MaxInt); err != nil || b != (replay.Bounds{Latest: 3}) {
		return failf("an interrupted turn: bounds %v, %v; want (0, 3] not ended", b, err)
	}
	return nil
}

// sentinelOf is the errors.Is target of err's code.
func sentinelOf(err error) error { return refusal.Sentinel(refusal.CodeOf(err)) }
