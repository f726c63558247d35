package turn

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strconv"

	chatprotocol "github.com/Papercusp/chat-protocol-go"
	"github.com/Papercusp/chat-protocol-go/refusal"
	"github.com/Papercusp/chat-protocol-go/replay"
)

// appendAttempts bounds the appends of one envelope whose acknowledgement
// keeps getting lost, before ErrUnsettled.
const appendAttempts = 3

// eventID is the event id of seq: "<turnId>:<seq>", unique within the
// conversation since turn ids are (docs/contract.md section 5.1). p.mu is
// held, or p is not shared yet.
func (p *Producer) eventID(seq int64) string {
	n := len(p.idBuf)
	id := string(strconv.AppendInt(p.idBuf, seq, 10))
	p.idBuf = p.idBuf[:n]
	return id
}

// stamp is the envelope's at: the clock in UTC, RFC 3339 to the
// millisecond, formatted once per millisecond; none for the zero time.
// p.mu is held.
func (p *Producer) stamp() string {
	now := p.now()
	if now.IsZero() {
		return ""
	}
	if ms := now.UnixMilli(); ms != p.atMilli || p.at == "" {
		p.atMilli, p.at = ms, now.UTC().Format("2006-01-02T15:04:05.000Z07:00")
	}
	return p.at
}

// envelope builds the envelope of ev at seq. p.mu is held.
func (p *Producer) envelope(seq int64, ev chatprotocol.Event) *chatprotocol.ChatEventEnvelope {
	return &chatprotocol.ChatEventEnvelope{ConversationID: p.key.ConversationID, TurnID: p.key.TurnID,
		EventID: p.eventID(seq), Seq: seq, Event: ev, At: p.stamp()}
}

// append appends ev as the turn's next envelope, after the lifecycle
// checks.
func (p *Producer) append(ctx context.Context, ev chatprotocol.Event) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := p.writable(ctx); err != nil {
		return err
	}
	return p.put(ctx, p.envelope(p.latest+1, ev))
}

// writable settles a pending append, then refuses a turn that ended, a
// broken Producer and an ended ctx. p.mu is held.
func (p *Producer) writable(ctx context.Context) error {
	if err := p.settlePending(ctx); err != nil {
		return err
	}
	if p.status.Terminal() {
		return refusal.New(refusal.CodeTurnTerminated, "/event", "the turn is "+string(p.status))
	}
	return ctx.Err()
}

// settlePending settles the append whose outcome is unknown, if any.
// p.mu is held.
func (p *Producer) settlePending(ctx context.Context) error {
	if p.broken != nil {
		return p.broken
	}
	env := p.unsure
	if env == nil {
		return nil
	}
	p.unsure = nil
	return p.settle(ctx, env, ErrUnsettled)
}

// put appends env and settles the outcome. p.mu is held.
func (p *Producer) put(ctx context.Context, env *chatprotocol.ChatEventEnvelope) error {
	if _, err := p.w.Append(ctx, p.key, env); err != nil {
		return p.settle(ctx, env, err)
	}
	p.landed(env)
	return nil
}

// settle decides what an append that returned err did (docs/contract.md
// section 16): a refusal stored nothing; any other error may have stored
// env, and the bounds tell: Latest at env's seq means it landed (when the
// retained frame is env), one below means it did not and env is appended
// again; anything else is another writer. p.mu is held.
func (p *Producer) settle(ctx context.Context, env *chatprotocol.ChatEventEnvelope, err error) error {
	for attempt := 1; ; attempt++ {
		if code := refusal.CodeOf(err); code != "" {
			switch code {
			case refusal.CodeSequenceReordered:
				// An earlier attempt may have landed after the bounds were read.
				if same, serr := p.retained(ctx, env); serr == nil && same {
					p.landed(env)
					return nil
				}
				return p.breakOff(fmt.Errorf("seq %d refused: %w", env.Seq, err))
			case refusal.CodeSequenceGap, refusal.CodeTurnTerminated:
				return p.breakOff(fmt.Errorf("seq %d refused: %w", env.Seq, err))
			}
			return err // env refused; nothing stored and the seq is free
		}
		b, berr := p.w.Bounds(ctx, p.key)
		switch {
		case berr != nil:
			p.unsure = env
			return fmt.Errorf("%w: seq %d: %w", ErrUnsettled, env.Seq, errors.Join(err, berr))
		case b.Latest == env.Seq:
			if same, serr := p.retained(ctx, env); serr != nil {
				p.unsure = env
				return fmt.Errorf("%w: seq %d: %w", ErrUnsettled, env.Seq, errors.Join(err, serr))
			} else if !same {
				return p.breakOff(fmt.Errorf("seq %d holds another envelope", env.Seq))
			}
			p.landed(env)
			return nil
		case b.Latest != env.Seq-1:
			return p.breakOff(fmt.Errorf("the window's latest seq is %d, this producer's %d", b.Latest, env.Seq-1))
		case attempt == appendAttempts:
			p.unsure = env
			return fmt.Errorf("%w: seq %d: %w", ErrUnsettled, env.Seq, err)
		}
		if _, err = p.w.Append(ctx, p.key, env); err == nil {
			p.landed(env)
			return nil
		}
	}
}

// retained reports whether the window's frame at env's seq is env. A frame
// already pruned cannot be compared: the appends being serialized, it is
// taken as env.
func (p *Producer) retained(ctx context.Context, env *chatprotocol.ChatEventEnvelope) (bool, error) {
	_, frames, err := p.w.Read(ctx, p.key, env.Seq-1, 1)
	if errors.Is(err, refusal.ErrStaleCursor) {
		return true, nil
	}
	if err != nil {
		return false, err
	}
	want, err := env.AppendJSON(nil)
	if err != nil || len(frames) == 0 {
		return false, err
	}
	return bytes.Equal(frames[0].Data, want), nil
}

// breakOff marks the Producer broken by another writer, releases it from
// Runs and ends its Context with [ErrAnotherWriter], so that its model
// loop and tools stop. p.mu is held.
func (p *Producer) breakOff(cause error) error {
	p.broken = fmt.Errorf("%w: %w", ErrAnotherWriter, cause)
	p.release()
	p.cancel(ErrAnotherWriter)
	return p.broken
}

// landed records env, now stored as the turn's latest frame. p.mu is held.
func (p *Producer) landed(env *chatprotocol.ChatEventEnvelope) {
	p.latest = env.Seq
	switch ev := env.Event.(type) {
	case *chatprotocol.DeltaEvent:
	case *chatprotocol.LifecycleEvent:
		if ev.Status.Terminal() {
			p.status = ev.Status
		}
	case *chatprotocol.StepEvent:
		p.landedStep(ev)
	case *chatprotocol.ToolCallEvent:
		if len(p.slab) == cap(p.slab) { // the turn's calls, a slotful at a time
			p.slab = make([]call, 0, len(p.slotIDs))
		}
		p.slab = append(p.slab, call{ordinal: len(p.calls) + 1, id: ev.CallID, name: ev.Name, input: ev.Input})
		c := &p.slab[len(p.slab)-1]
		c.slot = p.slot(c.ordinal)
		if p.calls == nil {
			p.calls = make([]*call, 0, len(p.slotIDs))
		}
		p.calls = append(p.calls, c)
		if p.byID == nil {
			p.byID = make(map[string]*call, len(p.slotIDs))
		}
		p.byID[c.id] = c
	case *chatprotocol.ToolResultEvent:
		if c := p.byID[ev.CallID]; c != nil {
			c.result = ToolResult{CallID: ev.CallID, Status: ev.Status, Output: ev.Output}
		}
	case *chatprotocol.CardEvent:
		p.noteCard(ev.Card.CorrelationID, cardOpen)
	case *chatprotocol.CardClosedEvent:
		p.noteCard(ev.CorrelationID, cardClosed)
	}
}

// noteCard records where a card stands on the stream. p.mu is held.
func (p *Producer) noteCard(id string, st cardState) {
	if p.cards == nil {
		p.cards = map[string]cardState{}
	}
	if _, seen := p.cards[id]; !seen {
		p.cardOrder = append(p.cardOrder, id)
	}
	p.cards[id] = st
}

// resume reads the retained frames of a turn that has some, page by page,
// and records its steps, tool calls, cards and end as if it had appended
// them.
// p is not shared yet.
func (p *Producer) resume(ctx context.Context, b replay.Bounds) error {
	p.pruned = b.Lower > 0
	p.latest = b.Lower
	for p.latest < b.Latest {
		nb, frames, err := p.w.Read(ctx, p.key, p.latest, replay.DefaultPageBytes)
		if err != nil {
			return err
		}
		b = nb
		for _, f := range frames {
			if err := p.replayFrame(f); err != nil {
				return err
			}
		}
		if len(frames) == 0 {
			break
		}
	}
	if b.Ended || p.status.Terminal() {
		return refusal.New(refusal.CodeTurnTerminated, "", "the turn has ended")
	}
	return nil
}

// replayFrame records one retained frame of a resumed turn: those that
// change what the Producer keeps are parsed, the others only counted.
func (p *Producer) replayFrame(f replay.Frame) error {
	switch f.Type {
	case chatprotocol.EventTypeLifecycle, chatprotocol.EventTypeStep, chatprotocol.EventTypeToolCall, chatprotocol.EventTypeToolResult,
		chatprotocol.EventTypeCard, chatprotocol.EventTypeCardClosed:
		env, err := p.parser.Parse(f.Data)
		if err != nil {
			return fmt.Errorf("turn: resuming at seq %d: %w", f.Seq, err)
		}
		p.landed(&env)
	}
	p.latest = f.Seq
	return nil
}
