package turn

import (
	"context"
	"errors"
	"time"

	chatprotocol "github.com/Papercusp/chat-protocol-go"
	"github.com/Papercusp/chat-protocol-go/interactions"
	"github.com/Papercusp/chat-protocol-go/recovery"
	"github.com/Papercusp/chat-protocol-go/refusal"
)

// Failure is the error a model loop ends a turn failed with, choosing what
// the turn's [chatprotocol.ErrorEvent] tells its client (docs/contract.md
// sections 6.1 and 16.5): Code (non-empty; "" means internal), Message
// (for people), whether the client may retry, and after how long (0: at
// once). Err is the cause, for the host's logs only: it never reaches the
// stream. A *Failure is an error: [Producer.End] finds it in its error's
// chain with [errors.As], so it may come wrapped.
type Failure struct {
	Code       chatprotocol.ErrorCode
	Message    string
	Retryable  bool
	RetryAfter time.Duration
	Err        error
}

// Error names the code; the text is informative only.
func (f *Failure) Error() string {
	if f.Err != nil {
		return "turn failed: " + string(f.Code) + ": " + f.Err.Error()
	}
	return "turn failed: " + string(f.Code)
}

// Unwrap returns the cause.
func (f *Failure) Unwrap() error { return f.Err }

// failureOf is the Failure End writes for err: err's own *Failure, or its
// refusal code, or [refusal.CodeInternal], not retryable, with a message of the
// Producer's own (docs/contract.md section 12.3: a cause's text is not a
// client's).
func failureOf(err error) Failure {
	if f, ok := errors.AsType[*Failure](err); ok {
		out := *f
		if out.Code == "" {
			out.Code = chatprotocol.ErrorCode(refusal.CodeInternal)
		}
		return out
	}
	code := chatprotocol.ErrorCode(refusal.CodeOf(err))
	if code == "" {
		code = chatprotocol.ErrorCode(refusal.CodeInternal)
	}
	return Failure{Code: code, Message: "the turn failed", Err: err}
}

// Complete ends the turn as completed: End(ctx, nil).
func (p *Producer) Complete(ctx context.Context) error { return p.End(ctx, nil) }

// Fail ends the turn as failed with f's error event: End(ctx, &f).
func (p *Producer) Fail(ctx context.Context, f Failure) error { return p.End(ctx, &f) }

// End ends the turn with its one terminal lifecycle, carrying the usage
// set (docs/contract.md sections 16.1, 16.4 and 16.5). A step still open
// is ended first, interrupted, its reason the turn's status (section
// 16.7). The reason set and
// the error event's message are cut to fit (see [MaxEndTextBytes]), so
// that a turn can always end. The status is
// cancelled when the turn's cancellation committed (Context ended with
// [ErrCancelled], or Recovery holds the turn cancelled); completed when err
// is nil; failed otherwise, after an error event: a [*Failure] in err
// chooses it, else its refusal code or [refusal.CodeInternal], not retryable. With
// Recovery the end commits there first ([recovery.TurnRecovery.Finish]);
// its stored status wins. A cancelled turn's cards still open on its
// stream are cancelled and closed first. End of an ended turn returns nil;
// the turn's cancellation, before or during End, never stops it, so End may
// be given [Producer.Context] itself. Other Producers of the turn in this
// process ([Options].Runs) are cancelled with [ErrAnotherWriter]. Errors: Finish's, and the window's (call End
// again: what landed is not appended twice).
func (p *Producer) End(ctx context.Context, err error) error {
	ctx, stop := p.outliveCancel(ctx) // the turn's own cancellation never stops its end
	defer stop()
	p.mu.Lock()
	serr, ended := p.settlePending(ctx), p.status.Terminal()
	p.mu.Unlock()
	if serr != nil || ended {
		return serr
	}
	// Recovery and the resolver are asked without holding the Producer.
	status, ferr := p.endStatus(ctx, err)
	if ferr != nil {
		return ferr
	}
	var closed []interactions.Record
	if status == chatprotocol.LifecycleCancelled {
		closed = p.cancelCards(ctx)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := p.settlePending(ctx); err != nil || p.status.Terminal() {
		return err // another End ended it meanwhile
	}
	if p.openStep != 0 {
		if err := p.endStep(ctx, StepEnd{Status: chatprotocol.StepInterrupted, Reason: string(status)}); err != nil {
			return err
		}
	}
	for _, rec := range closed {
		if err := p.appendClosed(ctx, rec); err != nil {
			return err
		}
	}
	if status == chatprotocol.LifecycleFailed {
		f := failureOf(err)
		ev := &chatprotocol.ErrorEvent{Code: f.Code, Message: f.Message, Retryable: f.Retryable}
		if f.RetryAfter > 0 {
			ms := f.RetryAfter.Milliseconds()
			ev.RetryAfterMs = &ms
		}
		env := p.envelope(p.latest+1, ev)
		if err := p.fit(env, &ev.Message); err != nil {
			return err
		}
		if err := p.put(ctx, env); err != nil {
			return err
		}
	}
	end := &chatprotocol.LifecycleEvent{Status: status, Reason: p.reason, Usage: p.usage}
	env := p.envelope(p.latest+1, end)
	if err := p.fit(env, &end.Reason); err != nil {
		return err
	}
	if err := p.put(ctx, env); err != nil {
		return err
	}
	p.release()
	if p.runs != nil {
		p.runs.cancelTurn(p.ref, ErrAnotherWriter)
	}
	return nil
}

// endStatus decides the terminal status and commits it through Recovery,
// whose stored status wins. p.mu is held.
func (p *Producer) endStatus(ctx context.Context, err error) (chatprotocol.LifecycleStatus, error) {
	if errors.Is(context.Cause(p.ctx), ErrCancelled) {
		return chatprotocol.LifecycleCancelled, nil
	}
	want := recovery.TurnCompleted
	if err != nil {
		want = recovery.TurnFailed
	}
	if p.rec != nil {
		ferr := p.rec.Finish(ctx, p.caller, p.ref, want)
		if ferr != nil && !errors.Is(ferr, refusal.ErrTurnNotRunning) {
			return "", ferr
		}
		if ferr != nil {
			rec, lerr := p.rec.Load(ctx, p.caller, p.ref)
			if lerr != nil {
				return "", lerr
			}
			want = rec.Status
		}
	}
	return chatprotocol.LifecycleStatus(want), nil
}

// cancelCards cancels the cards this turn opened and has not closed, in
// the order it opened them, and returns their terminal records, as far as
// the store allows (a card answered meanwhile closes with its own status).
func (p *Producer) cancelCards(ctx context.Context) []interactions.Record {
	if p.res == nil {
		return nil
	}
	p.mu.Lock()
	var open []string
	for _, id := range p.cardOrder {
		if p.cards[id] == cardOpen {
			open = append(open, id)
		}
	}
	p.mu.Unlock()
	var out []interactions.Record
	for _, id := range open {
		key := interactions.Key{Conversation: p.key.ConversationID, CorrelationID: id}
		if _, err := p.res.Cancel(ctx, key, "turn cancelled"); err != nil && !closedAlready(err) {
			continue
		}
		if rec, err := p.terminalRecord(ctx, key); err == nil {
			out = append(out, rec)
		}
	}
	return out
}
