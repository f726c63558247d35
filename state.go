package chatprotocol

import (
	"encoding/json"
	"errors"
	"hash/maphash"
	"io"
	"strings"

	"github.com/Papercusp/chat-protocol-go/cards"
	"github.com/Papercusp/chat-protocol-go/refusal"
)

// ChatStateV1 is a conversation as the version-1 envelopes of its turns
// add up (docs/contract.md section 7). Apply folds envelopes into it; its
// JSON form (MarshalJSON) is
//
//	{"schemaVersion":1, "conversationId", "sessionId"?, "capabilities"?,
//	 "turns":[TurnState…], "openCards":[cards.OpenCardSnapshot…], "state"?:{"version","snapshot"}}
//
// with absent optional members omitted and lists always present. sessionId
// (the last session event's) is an addition to the shape of docs/contract.md section 7,
// which has no other place for it.
//
// The zero value is an empty state whose conversation is set by the first
// envelope applied; [NewChatStateV1] binds it up front. A ChatStateV1 is not
// safe for concurrent use. Apply keeps the JSON values of the events it
// applies (tool inputs and outputs, snapshots): do not modify an envelope
// after applying it. Do not copy a ChatStateV1 by assignment once used: a
// copy shares its turns with the original, so applying to one changes both;
// pass a pointer, and use Clone for a copy that goes on independently.
//
// The JSON form is written, never read: UnmarshalJSON refuses it with
// [ErrChatStateWriteOnly]. To restore a state, apply the envelopes again (a
// host's replay window keeps them); to keep one beside another, use Clone.
type ChatStateV1 struct {
	// ConversationID is the conversation every applied envelope belongs to.
	ConversationID string
	// SessionID is the sessionId of the last session event, or "".
	SessionID string
	// Capabilities is the last capability declaration, or nil.
	Capabilities *ChatCapabilities
	// Turns lists the turns in the order their first envelope was applied.
	Turns []*TurnState
	// State is the last state snapshot, or nil.
	State *HostState

	cards   openCards // OpenCards and OpenCard read them
	turns   map[string]*TurnState
	seed    maphash.Seed
	seeded  bool
	scratch []byte
}

// TurnState is one turn of a [ChatStateV1] (docs/contract.md section 7). Its
// JSON form is
//
//	{"turnId", "status", "lastSeq", "text", "toolCalls":[ToolCallState…],
//	 "results":[ResultBlock…], "error"?, "provenance":[Provenance…], "steps":[StepState…],
//	 "usage"?, "reason"?}
type TurnState struct {
	// TurnID is the turn's id.
	TurnID string
	// Status is the last lifecycle status, [LifecycleStarted] until one is
	// applied.
	Status LifecycleStatus
	// LastSeq is the seq of the last envelope applied, from 1.
	LastSeq int64
	// ToolCalls lists the turn's tool calls in the order they were opened.
	ToolCalls []*ToolCallState
	// Results lists the blocks of the turn's result events, in order.
	Results []ResultBlock
	// Error is the turn's last error event, or nil.
	Error *ErrorState
	// Provenance lists the turn's provenance events, in order.
	Provenance []Provenance
	// Steps lists the turn's model steps in order: Steps[i] is step i+1.
	Steps []StepState
	// Usage is the usage of the last lifecycle event that had one, or nil.
	Usage *Usage
	// Reason is the reason of the last lifecycle event that had one, or "".
	Reason string

	text  strings.Builder
	calls map[string]*ToolCallState
	// digests identifies the envelopes of the last RedeliveryWindow seqs
	// (all of them while LastSeq is below it): digests[(seq-1) %
	// RedeliveryWindow] is the digest of seq's envelope.
	digests []uint64
}

// RedeliveryWindow is how many of a turn's most recent seqs Apply
// recognises an identical redelivery of (docs/contract.md section 7): an
// envelope whose seq is among the turn's last RedeliveryWindow is a no-op
// when it is the identical envelope again, and an envelope at an older seq
// is refused as sequence-reordered whatever it holds. Apply thus keeps at
// most 8 KiB per turn to tell redeliveries apart, however many envelopes a
// producer sends: a hostile producer cannot choose a client's memory. A
// reconnecting client resumes from its last seq (docs/contract.md section 11), so what is
// redelivered is the few envelopes around the cursor, well inside the
// window.
const RedeliveryWindow = 1024

// Text returns the concatenation of the turn's delta texts, in seq order.
func (t *TurnState) Text() string { return t.text.String() }

// ToolCallStatus is the status of a tool call in a [TurnState]: pending until
// its result, then the result's status.
type ToolCallStatus string

// ToolCallPending is the status of a call without a result yet; the others
// are the [ToolResultStatus] values ok, error and cancelled.
const ToolCallPending ToolCallStatus = "pending"

// ToolCallState is one tool call of a turn. Its JSON form is {"callId",
// "name", "input"?, "status", "output"?, "blocks"?}.
type ToolCallState struct {
	CallID string
	Name   string
	Input  json.RawMessage
	Status ToolCallStatus
	Output json.RawMessage
	Blocks []ResultBlock
}

// ErrorState is a turn's last [ErrorEvent] as the state keeps it, without
// the event's unknown members: {"code", "message", "retryable",
// "retryAfterMs"?}.
type ErrorState struct {
	Code         ErrorCode
	Message      string
	Retryable    bool
	RetryAfterMs *int64
}

// Provenance is one provenance event of a turn: {"provider", "model"?,
// "requestId"?}.
type Provenance struct {
	Provider  string
	Model     string
	RequestID string
}

// StepState is one model step of a turn (docs/contract.md section 7.1):
// {"step", "status", "reason"?, "usage"?}. Status is started while the
// step is open, then its end's; Reason and Usage are its end's.
type StepState struct {
	Step   int64
	Status StepStatus
	Reason string
	Usage  *Usage
}

// HostState is the host's last state snapshot: {"version", "snapshot"}.
type HostState struct {
	Version  int64
	Snapshot json.RawMessage
}

// NewChatStateV1 returns an empty state bound to conversationID; envelopes
// of any other conversation are foreign frames.
func NewChatStateV1(conversationID string) *ChatStateV1 {
	return &ChatStateV1{ConversationID: conversationID}
}

// Turn returns the turn of id, if any envelope of it was applied.
func (s *ChatStateV1) Turn(id string) (*TurnState, bool) {
	t, ok := s.turns[id]
	return t, ok
}

// Apply folds one envelope into the state (docs/contract.md section 7), or
// refuses it and leaves the state unchanged. The refusals, checked in this
// order:
//
//   - any refusal of [ChatEventEnvelope.AppendJSON], for an envelope that
//     [ParseEnvelope] would not have returned;
//   - foreign-frame (/conversationId): another conversation;
//   - sequence-gap (/seq): a seq beyond the turn's last plus one (the first
//     envelope of a turn has seq 1);
//   - sequence-reordered (/seq): a seq at or below the turn's last that is
//     not the identical envelope again, or that is older than the turn's
//     last [RedeliveryWindow] seqs; the identical envelope (same canonical
//     JSON) at one of those seqs is a no-op and returns nil;
//   - turn-terminated (/event): anything but a late tool_result once the
//     turn is completed, failed or cancelled. A late tool_result of a call
//     still pending is recorded and the turn stays terminal; interrupted and
//     needs-reconciliation are not terminal;
//   - unknown-call (/event/callId): a tool_result whose call no tool_call
//     of the turn opened;
//   - invalid-event (/event/callId): a tool_call reusing a call id of the
//     turn, or a second tool_result for one call;
//   - invalid-event (/event/step): a step started whose number is not the
//     turn's last step plus one, or while a step is open; a step end that
//     is not of the open step.
func (s *ChatStateV1) Apply(env ChatEventEnvelope) error {
	form, err := env.appendForm(s.scratch[:0], true)
	if err != nil {
		return err
	}
	s.scratch = form
	if s.ConversationID != "" && env.ConversationID != s.ConversationID {
		return refusef(refusal.CodeForeignFrame, "/conversationId", "frame of conversation %q applied to conversation %q", env.ConversationID, s.ConversationID)
	}
	if !s.seeded {
		s.seed, s.seeded = maphash.MakeSeed(), true
	}
	digest := maphash.Bytes(s.seed, form)
	t := s.turns[env.TurnID]
	var last int64
	if t != nil {
		last = t.LastSeq
	}
	switch {
	case env.Seq > last+1:
		return refusef(refusal.CodeSequenceGap, "/seq", "seq %d follows %d in turn %q", env.Seq, last, env.TurnID)
	case env.Seq <= last:
		if last-env.Seq < int64(len(t.digests)) && t.digests[(env.Seq-1)%RedeliveryWindow] == digest {
			return nil
		}
		if last-env.Seq >= RedeliveryWindow {
			return refusef(refusal.CodeSequenceReordered, "/seq", "seq %d is more than %d below %d, the last of turn %q: too old to be recognised as a redelivery", env.Seq, RedeliveryWindow, last, env.TurnID)
		}
		return refusef(refusal.CodeSequenceReordered, "/seq", "seq %d is at or below %d, the last of turn %q, and is not the same envelope again", env.Seq, last, env.TurnID)
	}
	isNew := t == nil
	if isNew {
		t = &TurnState{TurnID: env.TurnID, Status: LifecycleStarted}
	}
	if err := t.admit(env.Event); err != nil {
		return err
	}
	if s.ConversationID == "" {
		s.ConversationID = strings.Clone(env.ConversationID)
	}
	if isNew {
		t.TurnID = strings.Clone(env.TurnID)
		if s.turns == nil {
			s.turns = make(map[string]*TurnState)
		}
		s.turns[t.TurnID] = t
		s.Turns = append(s.Turns, t)
	}
	if len(t.digests) < RedeliveryWindow {
		if len(t.digests) == cap(t.digests) { // double it, up to the window
			grown := make([]uint64, len(t.digests), min(max(2*cap(t.digests), 8), RedeliveryWindow))
			t.digests = grown[:copy(grown, t.digests)]
		}
		t.digests = append(t.digests, digest)
	} else {
		t.digests[(env.Seq-1)%RedeliveryWindow] = digest
	}
	t.LastSeq = env.Seq
	s.fold(t, env.Event)
	return nil
}

// admit checks, without changing anything, whether ev may be applied to
// the turn: the rules on terminal turns and on tool calls.
func (t *TurnState) admit(ev Event) error {
	result, isResult := ev.(*ToolResultEvent)
	if isResult {
		call := t.calls[result.CallID]
		switch {
		case call == nil:
			return refusef(refusal.CodeUnknownCall, "/event/callId", "no tool_call of turn %q opened call %q", t.TurnID, result.CallID)
		case call.Status != ToolCallPending && t.Status.Terminal():
			return refusef(refusal.CodeTurnTerminated, "/event", "turn %q is %s and call %q already has its result", t.TurnID, t.Status, result.CallID)
		case call.Status != ToolCallPending:
			return refusef(refusal.CodeInvalidEvent, "/event/callId", "call %q already has its result", result.CallID)
		}
		return nil
	}
	if t.Status.Terminal() {
		return refusef(refusal.CodeTurnTerminated, "/event", "turn %q is %s; only a late tool_result may follow", t.TurnID, t.Status)
	}
	if call, ok := ev.(*ToolCallEvent); ok && t.calls[call.CallID] != nil {
		return refusef(refusal.CodeInvalidEvent, "/event/callId", "call id %q is already used in turn %q", call.CallID, t.TurnID)
	}
	if step, ok := ev.(*StepEvent); ok {
		return t.admitStep(step)
	}
	return nil
}

// admitStep checks a step event against the turn's steps (docs/contract.md
// section 7.2): a start numbers the next step while none is open, an end
// ends the open one.
func (t *TurnState) admitStep(ev *StepEvent) error {
	last := int64(len(t.Steps))
	open := last > 0 && t.Steps[last-1].Status == StepStarted
	switch {
	case ev.Status == StepStarted && open:
		return refusef(refusal.CodeInvalidEvent, "/event/step", "step %d starts while step %d is open in turn %q", ev.Step, last, t.TurnID)
	case ev.Status == StepStarted && ev.Step != last+1:
		return refusef(refusal.CodeInvalidEvent, "/event/step", "step %d starts after step %d in turn %q", ev.Step, last, t.TurnID)
	case ev.Status != StepStarted && (!open || ev.Step != last):
		return refusef(refusal.CodeInvalidEvent, "/event/step", "step %d ends but is not the open step of turn %q", ev.Step, t.TurnID)
	}
	return nil
}

// fold applies an admitted event. Strings that outlive the envelope are
// cloned, so the state does not keep whole frames alive.
func (s *ChatStateV1) fold(t *TurnState, ev Event) {
	switch e := ev.(type) {
	case *SessionEvent:
		s.SessionID = strings.Clone(e.SessionID)
	case *LifecycleEvent:
		t.Status = e.Status
		if e.Reason != "" {
			t.Reason = strings.Clone(e.Reason)
		}
		if e.Usage != nil {
			t.Usage = e.Usage
		}
	case *DeltaEvent:
		if t.text.Cap()-t.text.Len() < len(e.Text) {
			// Double the text's capacity: append alone grows a large slice
			// by a quarter, which for a long turn allocates (and the
			// garbage collector frees) about five times its text.
			t.text.Grow(t.text.Len() + len(e.Text))
		}
		t.text.WriteString(e.Text)
	case *ToolCallEvent:
		c := &ToolCallState{CallID: strings.Clone(e.CallID), Name: strings.Clone(e.Name), Input: e.Input, Status: ToolCallPending}
		if t.calls == nil {
			t.calls = make(map[string]*ToolCallState)
		}
		t.calls[c.CallID] = c
		t.ToolCalls = append(t.ToolCalls, c)
	case *ToolResultEvent:
		c := t.calls[e.CallID]
		c.Status = ToolCallStatus(e.Status)
		c.Output = e.Output
		c.Blocks = e.Blocks
	case *ResultEvent:
		t.Results = append(t.Results, e.Blocks...)
	case *ProvenanceEvent:
		t.Provenance = append(t.Provenance, Provenance{
			Provider: strings.Clone(e.Provider), Model: strings.Clone(e.Model), RequestID: strings.Clone(e.RequestID),
		})
	case *StepEvent:
		if e.Status == StepStarted {
			t.Steps = append(t.Steps, StepState{Step: e.Step, Status: StepStarted})
			break
		}
		st := &t.Steps[len(t.Steps)-1]
		st.Status, st.Reason, st.Usage = e.Status, strings.Clone(e.Reason), e.Usage
	case *ErrorEvent:
		t.Error = &ErrorState{Code: ErrorCode(strings.Clone(string(e.Code))), Message: strings.Clone(e.Message), Retryable: e.Retryable, RetryAfterMs: e.RetryAfterMs}
	case *CardEvent:
		s.cards.put(e.Card)
	case *CardClosedEvent:
		s.cards.close(e.CorrelationID)
	case *StateEvent:
		s.State = &HostState{Version: e.Version, Snapshot: e.Snapshot}
	case *CapabilitiesEvent:
		caps := e.Capabilities
		s.Capabilities = &caps
	case *NavigateEvent, *AppEvent:
		// TRANSIENT events and product events leave no trace in the state.
	}
}

// ErrChatStateWriteOnly is the error of [ChatStateV1.UnmarshalJSON]: a
// state's JSON form is written, never read back. Rebuild a state by
// applying its envelopes again (docs/contract.md section 7; a host's replay
// window or history keeps them), or keep a copy with Clone.
//
// Why there is no reader: what Apply needs to go on from a state is not in
// its JSON form. To tell an identical redelivery (a no-op) from a reordered
// envelope (sequence-reordered) at a recent seq, Apply keeps a digest of
// each envelope of a turn's last [RedeliveryWindow] seqs, which the JSON form
// does not carry;
// a state read from JSON would refuse every redelivery that the state it
// was written from accepts. encoding/json, which the JSON form would
// otherwise be decoded with, would also drop each turn's text (an
// unexported field) and silently give a state whose next envelope is a
// sequence-gap.
var ErrChatStateWriteOnly = errors.New("chatprotocol: a ChatStateV1 is not read from JSON: rebuild it by applying its envelopes again")

// UnmarshalJSON refuses every input with [ErrChatStateWriteOnly] and leaves s
// unchanged, so that [json.Unmarshal] into a [ChatStateV1] fails loudly
// instead of giving a state that Apply cannot continue.
func (s *ChatStateV1) UnmarshalJSON([]byte) error { return ErrChatStateWriteOnly }

// MarshalJSON writes the state in the JSON form documented on [ChatStateV1]
// and [TurnState], members in that order, without insignificant whitespace.
// It is the form `chatwire decode --state` prints (through WriteJSON) and
// the golden files of testdata/golden hold. The whole form is built in
// memory, about the size of the turns' texts; WriteJSON writes the same
// bytes to an [io.Writer] without building them.
func (s *ChatStateV1) MarshalJSON() ([]byte, error) {
	w := writer{dst: make([]byte, 0, s.sizeHint())}
	s.write(&w)
	return w.dst, w.err
}

// WriteJSON writes to out the bytes MarshalJSON returns, without building
// them in memory: it hands them on in pieces of about 64 KiB (a long
// turn's text is cut between runes), so it holds one piece, whatever the
// size of the state. It returns MarshalJSON's error, or the first error of
// out, after which it writes nothing more; on an error, what out received
// is not a complete JSON value. It does not buffer beyond its pieces, nor
// write a final newline. Like MarshalJSON it only reads the state, which
// must not be applied to meanwhile.
func (s *ChatStateV1) WriteJSON(out io.Writer) error {
	w := writer{dst: make([]byte, 0, 2*flushBytes), out: out}
	s.write(&w)
	if w.err == nil {
		w.flushAll()
	}
	return w.err
}

// write walks the state for MarshalJSON and WriteJSON.
func (s *ChatStateV1) write(w *writer) {
	w.punct('{')
	w.int("schemaVersion", SchemaVersion)
	w.str("conversationId", s.ConversationID)
	w.optStr("sessionId", s.SessionID)
	if s.Capabilities != nil {
		w.name("capabilities")
		s.Capabilities.write(w, "/capabilities")
	}
	w.name("turns")
	w.list(len(s.Turns), func(i int) { w.turn(s.Turns[i]) })
	w.name("openCards")
	w.punct('[')
	s.cards.all(func(i int, c *cards.OpenCardSnapshot) {
		if i > 0 {
			w.punct(',')
		}
		writeKept(w, c, nil, refusal.CodeInvalidCard, "/openCards/"+itoa(i))
		w.flush()
	})
	w.punct(']')
	if s.State != nil {
		w.name("state")
		w.punct('{')
		w.int("version", s.State.Version)
		w.optRaw("snapshot", s.State.Snapshot)
		w.punct('}')
	}
	w.punct('}')
}

// sizeHint is about the length of the state's JSON form, so that
// MarshalJSON allocates its buffer once instead of doubling it up to the
// size of a long turn's text: the texts (a sixteenth more for escapes) and
// a few hundred bytes per other part.
func (s *ChatStateV1) sizeHint() int {
	n := 512 + 512*s.cards.len()
	if s.State != nil {
		n += len(s.State.Snapshot)
	}
	for _, t := range s.Turns {
		n += t.text.Len() + t.text.Len()/16 + 256*(1+len(t.ToolCalls)+len(t.Results)+len(t.Provenance)+len(t.Steps))
	}
	return n
}

func (w *writer) turn(t *TurnState) {
	w.punct('{')
	w.str("turnId", t.TurnID)
	w.str("status", string(t.Status))
	w.int("lastSeq", t.LastSeq)
	w.longStr("text", t.Text())
	w.name("toolCalls")
	w.list(len(t.ToolCalls), func(i int) {
		c := t.ToolCalls[i]
		w.punct('{')
		w.str("callId", c.CallID)
		w.str("name", c.Name)
		w.optRaw("input", c.Input)
		w.result(string(c.Status), c.Output, c.Blocks)
		w.punct('}')
	})
	w.name("results")
	w.blocks(t.Results)
	if e := t.Error; e != nil {
		w.name("error")
		w.punct('{')
		w.errorMembers(string(e.Code), e.Message, e.Retryable, e.RetryAfterMs)
		w.punct('}')
	}
	w.name("provenance")
	w.list(len(t.Provenance), func(i int) {
		p := &t.Provenance[i]
		w.punct('{')
		w.provenance(p.Provider, p.Model, p.RequestID)
		w.punct('}')
	})
	w.name("steps")
	w.list(len(t.Steps), func(i int) {
		st := &t.Steps[i]
		w.punct('{')
		w.int("step", st.Step)
		w.str("status", string(st.Status))
		w.optStr("reason", st.Reason)
		if st.Usage != nil {
			w.name("usage")
			w.usage(st.Usage)
		}
		w.punct('}')
	})
	if t.Usage != nil {
		w.name("usage")
		w.usage(t.Usage)
	}
	w.optStr("reason", t.Reason)
	w.punct('}')
}
