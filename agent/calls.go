package agent

import (
	"context"
	"encoding/json"
	"errors"
	"sync"

	chatprotocol "github.com/Papercusp/chat-protocol-go"
	"github.com/Papercusp/chat-protocol-go/interactions"
	"github.com/Papercusp/chat-protocol-go/turn"
)

// answer answers the calls of the last step (docs/contract.md section
// 19.2): each runs through [turn.Producer.RunToolCall] under its call id,
// those of the step concurrently, and their results become the tool
// message, in call order. A call waiting for its card does not run: answer
// returns the correlation ids of the cards still open, and adds no
// message. A call's error other than its definite outcome is returned
// once the step's other calls are done.
func (r *run) answer(calls []Call) ([]string, error) {
	res := make([]Result, len(calls))
	jobs := make([]job, len(calls))
	var cards []string
	work := 0
	for i, c := range calls {
		if known, ok := r.known[c.ID]; ok {
			known.Name = c.Name
			res[i] = known
			continue
		}
		tool, card, err := r.prepare(c)
		if err != nil {
			return nil, err
		}
		if card != "" {
			cards = append(cards, card)
			continue
		}
		jobs[i].tool = tool
		work++
	}
	switch {
	case work == 1:
		for i := range jobs {
			if jobs[i].tool != nil {
				r.runCall(calls[i], &jobs[i], &res[i])
			}
		}
	case work > 1:
		var wg sync.WaitGroup
		for i := range jobs {
			if jobs[i].tool != nil {
				wg.Go(func() { r.runCall(calls[i], &jobs[i], &res[i]) })
			}
		}
		wg.Wait()
	}
	var errs []error
	for _, j := range jobs {
		if j.err != nil {
			errs = append(errs, j.err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	if len(cards) > 0 {
		return cards, nil
	}
	r.msgs = append(r.msgs, Message{Role: RoleTool, Results: res})
	r.open = nil
	return nil, nil
}

// runCall runs call c with j's tool through [turn.Producer.RunToolCall]
// under the turn's Context (a tool stops with the turn's cancellation, not
// with the host's ctx, so that its outcome is stored), and sets *res and
// j's error.
func (r *run) runCall(c Call, j *job, res *Result) {
	tr, err := r.p.RunToolCall(r.p.Context(), turn.ToolCall(c), j.tool)
	*res, j.err = Result{CallID: c.ID, Name: c.Name, Output: tr.Output, IsError: tr.Status != chatprotocol.ToolResultOK}, err
}

// job is one call of a step to run: its tool, then its error.
type job struct {
	tool turn.Tool
	err  error
}

// prepare decides how call c is answered: the tool it runs, or the
// correlation id of the card it waits for. An unknown tool and a card
// that closed without a submitted answer are answered as errors.
func (r *run) prepare(c Call) (turn.Tool, string, error) {
	t := r.l.tool(c.Name)
	if t == nil {
		return refuse(chatprotocol.ToolResultError, "unknown tool: "+c.Name), "", nil
	}
	if t.Card != nil {
		if card, ok := t.Card(c); ok {
			if card.Key.CorrelationID == "" {
				card.Key.CorrelationID = CardID(r.p.Key().TurnID, c.ID)
			}
			id := card.Key.CorrelationID
			if _, err := r.p.Ask(r.work, card); err != nil {
				return nil, "", err
			}
			rec, err := r.p.CloseCard(r.work, id)
			switch {
			case errors.Is(err, turn.ErrCardOpen):
				return nil, id, nil
			case err != nil:
				return nil, "", err
			case rec.Status != interactions.StatusAnswered || rec.Answer == nil:
				return refuse(chatprotocol.ToolResultError, "not approved: the card was "+string(rec.Status)), "", nil
			case t.Run == nil: // the tool asks the user: the answer is the output
				value := rec.Answer.Value
				return func(context.Context) (json.RawMessage, error) { return value, nil }, "", nil
			}
		}
	}
	if t.Run == nil {
		return refuse(chatprotocol.ToolResultError, "the tool "+c.Name+" has nothing to run"), "", nil
	}
	fn, input := t.Run, c.Input
	return func(ctx context.Context) (json.RawMessage, error) { return fn(ctx, input) }, "", nil
}

// tool returns the loop's tool named name, nil when there is none.
func (l *Loop) tool(name string) *Tool {
	for i := range l.Tools {
		if l.Tools[i].Spec.Name == name {
			return &l.Tools[i]
		}
	}
	return nil
}

// refuse is a tool that does not run: its definite outcome is status, its
// output says why.
func refuse(status chatprotocol.ToolResultStatus, why string) turn.Tool {
	out := errorOutput(why)
	return func(context.Context) (json.RawMessage, error) {
		return nil, &turn.ToolError{Status: status, Output: out}
	}
}

// errorOutput is the output {"error": why} a model reads for a call that
// did not run.
func errorOutput(why string) json.RawMessage {
	b, _ := json.Marshal(struct {
		Error string `json:"error"`
	}{why})
	return b
}
