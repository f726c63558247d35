package legacy

import (
	"encoding/json"

	chatprotocol "github.com/Papercusp/chat-protocol-go"
	"github.com/Papercusp/chat-protocol-go/refusal"
)

// EncodeLegacyChatFrame returns the legacy frame of dialect d that env's
// event stands for, by the table of docs/contract.md section 9.5, for a
// host that serves version 1 to clients still reading version 0. Members
// the legacy form has no place for are dropped (a Scout tool_call's input,
// an error's code, retryable and retryAfterMs, a card_closed outcome, kept
// unknown members). The identity of env is not part of a legacy frame; a
// host that writes SSE keeps env.Seq as the frame id.
//
// Refusals ([*refusal.Error]): unsupported-event for an event without a
// legacy form (lifecycle other than completed, at /event/status; result,
// provenance, step, capabilities, a Scout tool_result, a Papercusp tool_result
// with blocks, at /event/type or /event/blocks) and for an integer beyond
// 2^53-1, at its path; unsupported-version for an invalid d;
// invalid-envelope for an envelope without event; and the codes of the
// version-1 event rules for an event that breaks them. It never panics and
// is safe for concurrent use.
func EncodeLegacyChatFrame(env chatprotocol.ChatEventEnvelope, d Dialect) (Frame, error) {
	if err := d.check(); err != nil {
		return nil, err
	}
	ev := env.Event
	m, ok := ev.(json.Marshaler)
	if ev == nil || !ok {
		return nil, refusal.New(refusal.CodeInvalidEnvelope, "/event", "missing")
	}
	if _, err := m.MarshalJSON(); err != nil {
		if e, ok := err.(*refusal.Error); ok {
			e.Path = "/event" + e.Path
		}
		return nil, err
	}
	f, err := legacyForm(ev, d)
	if err != nil {
		return nil, err
	}
	if _, err := MarshalChatEvent(f); err != nil {
		// Valid in version 1, but the legacy frame cannot be written (a
		// number JSON cannot hold): no legacy form.
		path := "/event"
		if e, ok := err.(*refusal.Error); ok {
			path += e.Path
		}
		return nil, noLegacyForm(path, "no exact legacy form: "+err.Error())
	}
	return f, nil
}

// legacyForm maps ev, a valid version-1 event, to its frame of dialect d by
// the table of EncodeLegacyChatFrame.
func legacyForm(ev chatprotocol.Event, d Dialect) (Frame, error) {
	switch e := ev.(type) {
	case *chatprotocol.SessionEvent:
		return &SessionFrame{SessionID: e.SessionID}, nil
	case *chatprotocol.DeltaEvent:
		if d == Papercusp {
			return &DeltaFrame{Text: e.Text}, nil
		}
		return &TokenFrame{Content: e.Text}, nil
	case *chatprotocol.ToolCallEvent:
		if d == Papercusp {
			return &ToolCallFrame{CallID: e.CallID, Name: e.Name, Input: e.Input}, nil
		}
		return &ToolStartFrame{Tool: e.Name, CallID: &e.CallID}, nil
	case *chatprotocol.ToolResultEvent:
		switch {
		case d != Papercusp:
			return nil, noLegacyForm("/event/type", "a tool_result has no form in the Scout dialect")
		case len(e.Blocks) > 0:
			return nil, noLegacyForm("/event/blocks", "a Papercusp tool_result has no blocks")
		}
		return &ToolResultFrame{CallID: e.CallID, Status: e.Status, Output: e.Output}, nil
	case *chatprotocol.LifecycleEvent:
		if e.Status != chatprotocol.LifecycleCompleted {
			return nil, noLegacyForm("/event/status", "only a completed lifecycle has a legacy form (done), not "+quote(string(e.Status)))
		}
		u, err := usageV0(e.Usage)
		if err != nil {
			return nil, err
		}
		return &DoneFrame{Usage: u}, nil
	case *chatprotocol.ErrorEvent:
		return &ErrorFrame{Message: e.Message}, nil
	case *chatprotocol.CardEvent:
		card, err := cardV0(&e.Card)
		if err != nil {
			return nil, err
		}
		return &CardFrame{Card: *card}, nil
	case *chatprotocol.CardClosedEvent:
		return &CardClosedFrame{CorrelationID: e.CorrelationID}, nil
	case *chatprotocol.StateEvent:
		version, err := exactNumber("/event/version", e.Version)
		if err != nil {
			return nil, err
		}
		return &StateFrame{Version: version, Snapshot: e.Snapshot}, nil
	case *chatprotocol.NavigateEvent:
		return &NavigateFrame{Href: e.Href}, nil
	case *chatprotocol.AppEvent:
		return &AppFrame{Type: e.Type, Raw: e.Raw}, nil
	}
	return nil, noLegacyForm("/event/type", "a "+ev.EventType()+" event has no legacy form")
}

func noLegacyForm(path, message string) error {
	return refusal.New(refusal.CodeUnsupportedEvent, path, message)
}

func usageV0(u *chatprotocol.Usage) (*Usage, error) {
	if u == nil {
		return nil, nil
	}
	total, err := convertNumber("/event/usage/totalTokens", u.TotalTokens, exactNumber)
	if err != nil {
		return nil, err
	}
	return &Usage{TotalTokens: total, CostUSD: u.CostUSD}, nil
}
