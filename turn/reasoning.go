package turn

import (
	"context"

	chatprotocol "github.com/Papercusp/chat-protocol-go"
)

// reasoningExtra is how many bytes longer a reasoning envelope is than a
// delta envelope of the same text: the longer type name.
const reasoningExtra = len(chatprotocol.EventTypeReasoning) - len(chatprotocol.EventTypeDelta)

// Reasoning appends text as the turn's next reasoning event
// (docs/contract.md section 6.5), as several when one would exceed the
// frame limit, cut as [Producer.Delta] cuts text. An empty text appends
// nothing. The host's readers must register the event
// ([chatprotocol.WithReasoning]). Refusals: those of Delta.
func (p *Producer) Reasoning(ctx context.Context, text string) error {
	if text == "" {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.appendText(ctx, text, reasoningExtra, func(s string) error {
		ev, err := chatprotocol.Reasoning{Text: s}.Event()
		if err != nil {
			return err
		}
		return p.put(ctx, p.envelope(p.latest+1, ev))
	})
}

// Source appends a source event (docs/contract.md section 6.5): a web page
// the model's answer cites or consulted. The host's readers must register
// the event ([chatprotocol.WithSources]). Refusals: invalid-event for an
// empty URL or text that is not UTF-8; turn-terminated after the end;
// [ErrUnsettled], [ErrAnotherWriter], the window's errors.
func (p *Producer) Source(ctx context.Context, s chatprotocol.WebSource) error {
	ev, err := s.Event()
	if err != nil {
		return err
	}
	return p.append(ctx, ev)
}
