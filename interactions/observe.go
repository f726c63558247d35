package interactions

import (
	"context"

	"github.com/Papercusp/chat-protocol-go/observe"
	"github.com/Papercusp/chat-protocol-go/refusal"
)

// answerReport reports one Answer: its submission opens what its outcome
// closes, on the context the observer returned for the submission.
type answerReport struct {
	obs observe.Observer
	key Key
}

// submit reports the submission and returns the context Answer runs under.
func (p *answerReport) submit(ctx context.Context) context.Context {
	if p.obs == nil {
		return ctx
	}
	return p.obs.Observe(ctx, observe.Event{Kind: observe.AnswerSubmit, Phase: observe.Start, Conversation: p.key.Conversation, Card: p.key.CorrelationID})
}

// end reports Answer's outcome: the card's status after a stored or
// duplicate answer, else the refusal's code. The cause goes along only for
// the codes of a store failure or an error without a code: a validator's
// error may quote the submitted value, which is never reported.
func (p *answerReport) end(ctx context.Context, res Result, err error) {
	if p.obs == nil {
		return
	}
	e := observe.Event{Kind: observe.AnswerStore, Phase: observe.End, Conversation: p.key.Conversation, Card: p.key.CorrelationID}
	e.Code = refusal.CodeOf(err)
	switch e.Code {
	case "":
		if err != nil {
			e.Kind, e.Err = observe.AnswerRefuse, err
		}
	case refusal.CodeDuplicateAnswer:
		e.Kind = observe.AnswerDuplicate
	case refusal.CodeAlreadyAnswered, refusal.CodeAnswerExpired, refusal.CodeCardCancelled,
		refusal.CodeCardSuperseded, refusal.CodeStaleRevision, refusal.CodeSchemaMismatch:
		e.Kind = observe.AnswerLate
	case refusal.CodeNeedsReconciliation, refusal.CodeStoreUnavailable, refusal.CodeCheckpointWriteFailed:
		e.Kind, e.Err = observe.AnswerRefuse, err
	default:
		e.Kind = observe.AnswerRefuse
	}
	if err == nil || e.Kind == observe.AnswerDuplicate {
		e.Status = string(res.Record.Status)
	}
	p.obs.Observe(ctx, e)
}
