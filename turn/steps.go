package turn

import (
	"context"
	"math"
	"strconv"

	chatprotocol "github.com/Papercusp/chat-protocol-go"
	"github.com/Papercusp/chat-protocol-go/refusal"
)

// StepEnd is how a model step ends ([Producer.FinishStep]; docs/contract.md
// sections 6.1 and 16.7): Status is [chatprotocol.StepFinished],
// [chatprotocol.StepFailed] or [chatprotocol.StepInterrupted]; Reason is
// free text of any length (the provider's stop reason, a failure's code),
// cut as the end's texts are ([MaxEndTextBytes]); Usage, nil for none, is
// what the step consumed.
type StepEnd struct {
	Status chatprotocol.StepStatus
	Reason string
	Usage  *chatprotocol.Usage
}

// StartStep appends step started for the turn's next model step, numbered
// one more than the last ([Producer.Steps]), and returns its number
// (docs/contract.md section 16.7). Refusals: invalid-event (/event/step)
// while a step is open; stale-cursor on a resumed turn whose window pruned
// its start and retains no step event (its last step's number cannot be
// known); turn-terminated after the end; [ErrUnsettled],
// [ErrAnotherWriter], the window's errors.
func (p *Producer) StartStep(ctx context.Context) (int64, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := p.writable(ctx); err != nil {
		return 0, err
	}
	if p.openStep != 0 {
		return 0, refusal.New(refusal.CodeInvalidEvent, "/event/step", "step "+strconv.FormatInt(p.openStep, 10)+" is still open")
	}
	if p.pruned && p.lastStep == 0 {
		return 0, refusal.New(refusal.CodeStaleCursor, "/event/step", "the window pruned the turn's start: its last step is unknown")
	}
	n := p.lastStep + 1
	if err := p.put(ctx, p.envelope(p.latest+1, &chatprotocol.StepEvent{Step: n, Status: chatprotocol.StepStarted})); err != nil {
		return 0, err
	}
	return n, nil
}

// FinishStep appends the end of the open step (docs/contract.md section
// 16.7): its number, end.Status, end.Reason cut to fit ([MaxEndTextBytes]
// and the frame limit) and end.Usage, which the Producer adds to the
// turn's usage (the terminal lifecycle carries the sum of its steps',
// unless [Producer.SetUsage] set it later). Refusals: invalid-event
// (/event/step) when no step is open; invalid-event (/event/status) for a
// status that does not end a step; turn-terminated after the end;
// [ErrUnsettled], [ErrAnotherWriter], the window's errors.
func (p *Producer) FinishStep(ctx context.Context, end StepEnd) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := p.writable(ctx); err != nil {
		return err
	}
	if p.openStep == 0 {
		return refusal.New(refusal.CodeInvalidEvent, "/event/step", "no step is open")
	}
	if !end.Status.Ends() {
		return refusal.New(refusal.CodeInvalidEvent, "/event/status", "a step ends finished, failed or interrupted")
	}
	return p.endStep(ctx, end)
}

// endStep appends the end of the open step. p.mu is held.
func (p *Producer) endStep(ctx context.Context, end StepEnd) error {
	ev := &chatprotocol.StepEvent{Step: p.openStep, Status: end.Status, Reason: end.Reason, Usage: end.Usage}
	env := p.envelope(p.latest+1, ev)
	if err := p.fit(env, &ev.Reason); err != nil {
		return err
	}
	return p.put(ctx, env)
}

// OpenStep returns the number of the step started and not ended, 0 when
// none is open. A resumed Producer learns it from the retained frames.
func (p *Producer) OpenStep() int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.openStep
}

// Steps returns the number of the turn's last step, open or ended: 0
// before the first. A resumed Producer learns it from the retained frames.
func (p *Producer) Steps() int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.lastStep
}

// landedStep records a step event now on the stream: the last and open
// step, and the step's usage added to the turn's. p.mu is held.
func (p *Producer) landedStep(ev *chatprotocol.StepEvent) {
	p.lastStep = ev.Step
	if ev.Status == chatprotocol.StepStarted {
		p.openStep = ev.Step
		return
	}
	p.openStep = 0
	if ev.Usage != nil {
		p.usage = addUsage(p.usage, ev.Usage)
	}
}

// addUsage returns a new Usage, the sum of sum (nil: none yet) and u,
// member by member: a member absent from both stays absent. Tokens stop at
// [chatprotocol.MaxSeq], the largest integer every reader keeps exactly,
// and a cost at the largest finite float64, so that the sum is always a
// usage the turn's end can carry.
func addUsage(sum, u *chatprotocol.Usage) *chatprotocol.Usage {
	out := &chatprotocol.Usage{}
	if sum != nil {
		out.TotalTokens, out.CostUSD = sum.TotalTokens, sum.CostUSD
	}
	if u.TotalTokens != nil {
		n := min(*u.TotalTokens, chatprotocol.MaxSeq)
		if out.TotalTokens != nil {
			n = min(n+min(*out.TotalTokens, chatprotocol.MaxSeq), chatprotocol.MaxSeq)
		}
		out.TotalTokens = &n
	}
	if u.CostUSD != nil {
		c := *u.CostUSD
		if out.CostUSD != nil {
			c += *out.CostUSD
		}
		c = min(c, math.MaxFloat64)
		out.CostUSD = &c
	}
	return out
}
