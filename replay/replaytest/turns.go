package replaytest

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"strconv"

	chatprotocol "github.com/Papercusp/chat-protocol-go"
	"github.com/Papercusp/chat-protocol-go/refusal"
	"github.com/Papercusp/chat-protocol-go/replay"
)

// envelope is the envelope of key's turn at seq carrying ev.
func envelope(key replay.Key, seq int64, ev chatprotocol.Event) *chatprotocol.ChatEventEnvelope {
	return &chatprotocol.ChatEventEnvelope{
		ConversationID: key.ConversationID, TurnID: key.TurnID,
		EventID: "e-" + strconv.FormatInt(seq, 10), Seq: seq, Event: ev,
	}
}

// turnEvents returns n events of a live turn: started, then a mix of
// deltas (with text JSON escapes and 4-byte runes in it), a tool call and
// its result, and provenance; none ends the turn.
func turnEvents(n int) []chatprotocol.Event {
	evs := make([]chatprotocol.Event, 0, n)
	for i := range n {
		var ev chatprotocol.Event
		switch {
		case i == 0:
			ev = &chatprotocol.LifecycleEvent{Status: chatprotocol.LifecycleStarted}
		case i%7 == 3:
			ev = &chatprotocol.ToolCallEvent{CallID: "call-" + strconv.Itoa(i), Name: "search", Input: json.RawMessage(`{"q":"x"}`)}
		case i%7 == 4:
			ev = &chatprotocol.ToolResultEvent{CallID: "call-" + strconv.Itoa(i-1), Status: chatprotocol.ToolResultOK, Output: json.RawMessage(`[1,2]`)}
		case i%7 == 5:
			ev = &chatprotocol.ProvenanceEvent{Provider: "p", Model: "m-" + strconv.Itoa(i)}
		default:
			ev = &chatprotocol.DeltaEvent{Text: "piece " + strconv.Itoa(i) + " \"quoted\"\n\x01 é 😀"}
		}
		evs = append(evs, ev)
	}
	return evs
}

// canonical is env's canonical JSON, which a window must store and serve.
func canonical(env *chatprotocol.ChatEventEnvelope) ([]byte, error) {
	data, err := env.AppendJSON(nil)
	if err != nil {
		return nil, failf("an envelope of the kit does not validate: %w", err)
	}
	return data, nil
}

// appendTurn appends evs to key's turn as seq from, from+1 …, checking
// each returned frame, and returns the canonical bytes of each.
func (r *run) appendTurn(key replay.Key, from int64, evs ...chatprotocol.Event) ([][]byte, error) {
	var all [][]byte
	for i, ev := range evs {
		env := envelope(key, from+int64(i), ev)
		data, err := r.appendOne(key, env)
		if err != nil {
			return all, err
		}
		all = append(all, data)
	}
	return all, nil
}

// appendOne appends env and checks the frame Append returns: env's seq,
// event type and canonical bytes.
func (r *run) appendOne(key replay.Key, env *chatprotocol.ChatEventEnvelope) ([]byte, error) {
	want, err := canonical(env)
	if err != nil {
		return nil, err
	}
	f, err := r.w.Append(r.ctx, key, env)
	if err != nil {
		return nil, failf("Append of seq %d: %w", env.Seq, err)
	}
	if f.Seq != env.Seq || f.Type != env.Event.EventType() || !bytes.Equal(f.Data, want) {
		return nil, failf("Append of seq %d returned frame {%d %q %s}, want {%d %q %s}", env.Seq, f.Seq, f.Type, f.Data, env.Seq, env.Event.EventType(), want)
	}
	return want, nil
}

// readExpect reads key's turn after cursor after and checks the bounds
// and that the frames are exactly want[after-first+1 …]: seq after+1 on,
// the canonical bytes of the envelopes of seq first on.
func (r *run) readExpect(key replay.Key, after int64, wantBounds replay.Bounds, first int64, want [][]byte) error {
	b, frames, err := r.w.Read(r.ctx, key, after, math.MaxInt)
	if err != nil {
		return failf("Read after %d: %w", after, err)
	}
	if b != wantBounds {
		return failf("Read after %d: bounds %v, want %v", after, b, wantBounds)
	}
	return framesExpect(frames, after, first, want)
}

// framesExpect checks that frames are seq after+1 through first+len(want)-1,
// with want's bytes (want[0] being seq first's).
func framesExpect(frames []replay.Frame, after, first int64, want [][]byte) error {
	wantN := int(first) + len(want) - 1 - int(after)
	if len(frames) != wantN {
		return failf("after %d: %d frames, want %d", after, len(frames), wantN)
	}
	for i, f := range frames {
		seq := after + 1 + int64(i)
		if f.Seq != seq {
			return failf("after %d: frame %d has seq %d, want %d", after, i, f.Seq, seq)
		}
		w := want[seq-first]
		if !bytes.Equal(f.Data, w) {
			return failf("after %d: seq %d is %s, want %s", after, seq, f.Data, w)
		}
		if typ := eventType(w); f.Type != typ {
			return failf("after %d: seq %d has type %q, want %q", after, seq, f.Type, typ)
		}
	}
	return nil
}

// readRefused reads key's turn after cursor after, which must be refused
// with sentinel's code and bounds b, carried by a *replay.CursorError and
// returned beside it, and no frame.
func (r *run) readRefused(key replay.Key, after int64, sentinel error, b replay.Bounds) error {
	got, frames, err := r.w.Read(r.ctx, key, after, math.MaxInt)
	if err := refused(err, sentinel, b, true, after); err != nil {
		return failf("Read after %d: %w", after, err)
	}
	if got != b || len(frames) != 0 {
		return failf("Read after %d refused, returning bounds %v and %d frames; want %v and none", after, got, len(frames), b)
	}
	return nil
}

// eventType is the event type of the canonical envelope data, "" when it
// does not parse.
func eventType(data []byte) string {
	env, err := chatprotocol.ParseEnvelope(data)
	if err != nil || env.Event == nil {
		return ""
	}
	return env.Event.EventType()
}

// refused checks that err is a refusal of sentinel's code carrying bounds
// b: an *AppendError (cursor false) or a *CursorError for cursor after
// (cursor true).
func refused(err error, sentinel error, b replay.Bounds, cursor bool, after int64) error {
	switch want := refusal.CodeOf(sentinel); {
	case err == nil:
		return failf("no refusal, want %s", want)
	case !errors.Is(err, sentinel) || refusal.CodeOf(err) != want:
		return failf("refused with %v (code %q), want %s", err, refusal.CodeOf(err), want)
	}
	if cursor {
		ce, ok := errors.AsType[*replay.CursorError](err)
		if !ok || ce.Bounds != b || ce.Cursor != after {
			return failf("refusal %v carries no *replay.CursorError{Cursor: %d, Bounds: %v}", err, after, b)
		}
		return nil
	}
	ae, ok := errors.AsType[*replay.AppendError](err)
	if !ok || ae.Bounds != b {
		return failf("refusal %v carries no *replay.AppendError with bounds %v", err, b)
	}
	return nil
}
