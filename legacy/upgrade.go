package legacy

import (
	"context"
	"encoding/json"
	"slices"
	"strings"

	chatprotocol "github.com/Papercusp/chat-protocol-go"
	"github.com/Papercusp/chat-protocol-go/refusal"
)

// CodeError is the code of the version-1 error event a legacy error frame
// upgrades to (docs/contract.md section 9.3).
const CodeError chatprotocol.ErrorCode = "legacy-error"

// UpgradeLegacyChatFrame maps one legacy frame to the version-1 envelopes
// it stands for, by the table of docs/contract.md section 9.3, with
// identity, tool call ids and product types from h (section 9.4): one
// envelope per frame, two for error (an error event, then lifecycle
// failed). The members a frame's types do not name are not carried over
// (section 9.2). ctx is handed to h's methods; the mapping does no I/O.
//
// Refusals ([*refusal.Error]), with a JSON pointer into the legacy frame,
// and no envelope:
//
//   - unsupported-event (/type): a product type h's registry does not
//     list, including a type name the frame's dialect does not define;
//   - unknown-result-status (/status): a tool_result status absent or not
//     ok, error or cancelled;
//   - missing-call-id (/callId): a tool frame without a call id that h has
//     no mapping for, or h's id empty or over 256 bytes;
//   - invalid-event, invalid-card: a nil frame, or one the version-1 event
//     and card rules refuse;
//   - a refusal of h, and invalid-envelope for an identity of h that breaks
//     the envelope rules (section 5).
//
// An error of h that is not a refusal comes back wrapped in a
// [*HostError]. h is asked only about a frame that is otherwise valid, so a
// refused frame uses no seq. Only h's state changes; it never panics.
func UpgradeLegacyChatFrame(ctx context.Context, f Frame, h Host) ([]chatprotocol.ChatEventEnvelope, error) {
	envs, err := AppendUpgradedLegacyChatFrame(ctx, nil, f, h)
	if err != nil {
		return nil, err
	}
	return envs, nil
}

// AppendUpgradedLegacyChatFrame is [UpgradeLegacyChatFrame] appending the
// envelopes to dst: it returns dst extended by them, or dst unchanged with
// a refusal. A caller that upgrades a stream of frames can so reuse one
// slice of envelopes (once it is done with them) instead of allocating one
// per frame. dst's elements are not read, only its spare capacity
// overwritten.
func AppendUpgradedLegacyChatFrame(ctx context.Context, dst []chatprotocol.ChatEventEnvelope, f Frame, h Host) ([]chatprotocol.ChatEventEnvelope, error) {
	if h == nil {
		return dst, refusal.New(refusal.CodeInvalidEnvelope, "", "no host: identity comes from the host")
	}
	if isNil(f) {
		return dst, noFrame()
	}
	var buf [2]chatprotocol.Event
	events, call, err := upgradeEvents(&buf, f, h.Registry())
	if err != nil {
		return dst, err
	}
	for _, ev := range events {
		if err := checkEvent(ev, f); err != nil {
			return dst, err
		}
	}
	if call != nil {
		id, ok, err := h.ToolCallID(ctx, f)
		if err != nil {
			return dst, hostErr("ToolCallID", err)
		}
		if !ok {
			return dst, refusal.New(refusal.CodeMissingCallID, "/callId", "the frame carries no call id and the host has no mapping for it")
		}
		if id == "" || len(id) > maxIDBytes {
			return dst, refusal.New(refusal.CodeMissingCallID, "/callId", "the host's call id is empty or longer than 256 bytes")
		}
		*call = id
	}
	start := len(dst)
	out := slices.Grow(dst, len(events))[:start+len(events)]
	envs := out[start:]
	for i, ev := range events {
		envs[i] = chatprotocol.ChatEventEnvelope{Event: ev}
		if err := h.Identify(ctx, &envs[i]); err != nil {
			return dst, hostErr("Identify", err)
		}
		// The events are checked; what is left to check is what the host
		// gave: a call id when it gave one, with the whole envelope, and
		// the identity, unless the host checks it itself.
		var err error
		switch _, checked := h.(identityChecker); {
		case call != nil:
			err = envs[i].Validate()
		case !checked:
			err = checkIdentity(&envs[i])
		}
		if err != nil {
			return dst, err
		}
	}
	return out, nil
}

// identityChecker is a Host whose Identify checks the identities it gives
// (StreamHost), so that UpgradeLegacyChatFrame need not check them again.
type identityChecker interface {
	Host
	checksIdentity()
}

// checkIdentity checks the identity of env, whose event has been checked:
// Validate of env with the event that is cheapest to check in place of
// its own.
func checkIdentity(env *chatprotocol.ChatEventEnvelope) error {
	probe := *env
	probe.Event = identityProbe
	return probe.Validate()
}

// identityProbe is the event an envelope's identity is checked with once
// its own event has been.
var identityProbe chatprotocol.Event = &chatprotocol.DeltaEvent{}

// maxIDBytes is the longest id an envelope or event may carry, in bytes
// (docs/contract.md section 5).
const maxIDBytes = 256

// hostCallID is the call id a tool event holds until the host gives one,
// so that the event's other rules can be checked first. Whether the host
// is asked depends only on the frame having no call id, never on this
// value, which a frame may well carry itself.
const hostCallID = "host-call-id"

// upgradeEvents builds the events of f by the table of docs/contract.md section 9, in buf.
// call points at the call id of the tool event that the host must supply,
// nil when f carries its own or is no tool frame.
func upgradeEvents(buf *[2]chatprotocol.Event, f Frame, reg *chatprotocol.Registry) (events []chatprotocol.Event, call *string, err error) {
	one := func(ev chatprotocol.Event) ([]chatprotocol.Event, *string, error) {
		buf[0] = ev
		return buf[:1], nil, nil
	}
	tool := func(ev chatprotocol.Event, id *string) ([]chatprotocol.Event, *string, error) {
		buf[0] = ev
		if *id != "" {
			return buf[:1], nil, nil
		}
		*id = hostCallID
		return buf[:1], id, nil
	}
	switch f := f.(type) {
	case *SessionFrame:
		return one(&chatprotocol.SessionEvent{SessionID: f.SessionID})
	case *TokenFrame:
		return one(&chatprotocol.DeltaEvent{Text: f.Content})
	case *DeltaFrame:
		return one(&chatprotocol.DeltaEvent{Text: f.Text})
	case *ToolStartFrame:
		ev := &chatprotocol.ToolCallEvent{CallID: deref(f.CallID), Name: f.Tool}
		return tool(ev, &ev.CallID)
	case *ToolCallFrame:
		ev := &chatprotocol.ToolCallEvent{CallID: f.CallID, Name: f.Name, Input: f.Input}
		return tool(ev, &ev.CallID)
	case *ToolResultFrame:
		if !f.Status.Valid() {
			return nil, nil, refusal.New(refusal.CodeUnknownResultStatus, "/status", "a legacy tool result's status must be ok, error or cancelled, not "+quote(string(f.Status)))
		}
		ev := &chatprotocol.ToolResultEvent{CallID: f.CallID, Status: f.Status, Output: f.Output}
		return tool(ev, &ev.CallID)
	case *CardFrame:
		card, err := f.Card.ToOpenCardSnapshot()
		if err != nil {
			return nil, nil, err
		}
		return one(&chatprotocol.CardEvent{Card: card})
	case *CardClosedFrame:
		return one(&chatprotocol.CardClosedEvent{CorrelationID: f.CorrelationID})
	case *StateFrame:
		version, err := wholeNumber("/version", f.Version)
		if err != nil {
			return nil, nil, err
		}
		return one(&chatprotocol.StateEvent{Version: version, Snapshot: f.Snapshot})
	case *DoneFrame:
		usage, err := usageV1(f.Usage)
		if err != nil {
			return nil, nil, err
		}
		return one(&chatprotocol.LifecycleEvent{Status: chatprotocol.LifecycleCompleted, Usage: usage})
	case *ErrorFrame:
		buf[0] = &chatprotocol.ErrorEvent{Code: CodeError, Message: f.Message, Retryable: false}
		buf[1] = &chatprotocol.LifecycleEvent{Status: chatprotocol.LifecycleFailed}
		return buf[:2], nil, nil
	case *NavigateFrame:
		return one(&chatprotocol.NavigateEvent{Href: f.Href})
	case *AppFrame:
		if !isProductType(reg, f.Type) {
			return nil, nil, refusal.New(refusal.CodeUnsupportedEvent, "/type", "type "+quote(f.Type)+" is neither of the dialect nor registered by the host")
		}
		return one(&chatprotocol.AppEvent{Type: f.Type, Raw: f.Raw})
	}
	return nil, nil, noFrame() // unreachable: the union is sealed
}

// isProductType reports whether typ is a product type reg registered: not
// a type of version 1, which a registry cannot list.
func isProductType(reg *chatprotocol.Registry, typ string) bool {
	if _, core := chatprotocol.EventChannel(typ); core {
		return false
	}
	_, ok := reg.Channel(typ)
	return ok
}

func usageV1(u *Usage) (*chatprotocol.Usage, error) {
	if u == nil {
		return nil, nil
	}
	total, err := convertNumber("/usage/totalTokens", u.TotalTokens, wholeNumber)
	if err != nil {
		return nil, err
	}
	return &chatprotocol.Usage{TotalTokens: total, CostUSD: u.CostUSD}, nil
}

// renamed maps the version-1 member names of an event back to the legacy
// frame's, for the paths of refusals.
var renamed = map[string]map[string]string{
	TypeToken:     {"text": "content"},
	TypeToolStart: {"name": "tool"},
}

// probeID is the identity checkEvent gives an event to check it inside an
// envelope, before the host gives the real one.
const probeID = "probe"

// checkEvent applies the version-1 rules of ev (docs/contract.md section 6), with the path
// of a refusal pointing into the legacy frame f. It validates the event
// inside an envelope of a valid stand-in identity, without encoding it.
func checkEvent(ev chatprotocol.Event, f Frame) error {
	probe := chatprotocol.ChatEventEnvelope{ConversationID: probeID, TurnID: probeID, EventID: probeID, Seq: 1, Event: ev}
	err := probe.Validate()
	if err == nil {
		return nil
	}
	e, ok := err.(*refusal.Error)
	if !ok {
		return err
	}
	e.Path = strings.TrimPrefix(e.Path, "/event") // the event's own path, as its MarshalJSON gives it
	if e.Path != "" {
		name, rest, _ := strings.Cut(e.Path[1:], "/")
		if to, ok := renamed[f.FrameType()][name]; ok {
			e.Path = "/" + to
			if rest != "" {
				e.Path += "/" + rest
			}
		}
	}
	return err
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
