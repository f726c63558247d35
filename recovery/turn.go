package recovery

import (
	"bytes"
	"slices"
	"strconv"
	"time"

	"github.com/Papercusp/chat-protocol-go/refusal"

	"github.com/Papercusp/chat-protocol-go/internal/wire"
)

// MaxIDBytes is the longest conversation, turn or effect id accepted, in
// bytes, the bound docs/contract.md section 5 puts on host-allocated ids.
const MaxIDBytes = 256

// TurnRef names a turn: the host-allocated conversation and turn ids of its
// envelopes (docs/contract.md section 5). Both are non-empty and at most
// [MaxIDBytes] long. TurnRef is comparable and may key a map.
type TurnRef struct {
	Conversation string
	Turn         string
}

// EffectRef names one side effect of a turn: the turn and the effect id the
// host authorized when the turn started (for example the stable tool call
// id, or the idempotency key the host sends to the external system).
type EffectRef struct {
	Turn   TurnRef
	Effect string
}

// TurnStatus is the lifecycle of a turn record. Only [TurnRunning] admits new
// effects; the others are terminal and never change again (docs/contract.md
// section 13.1).
type TurnStatus string

// The turn statuses.
const (
	TurnRunning   TurnStatus = "running"
	TurnCompleted TurnStatus = "completed"
	TurnFailed    TurnStatus = "failed"
	TurnCancelled TurnStatus = "cancelled"
)

// Terminal reports whether s is completed, failed or cancelled.
func (s TurnStatus) Terminal() bool {
	return s == TurnCompleted || s == TurnFailed || s == TurnCancelled
}

// EffectState is where one effect stands. The transitions, each a durable
// write that advances the effect's Revision by one, are:
//
//	pending   -> claimed               (claim; TurnRecovery.Execute)
//	claimed   -> claimed               (takeover of an expired claim)
//	claimed   -> admitted              (Admitter.AdmitDispatch, then launch)
//	admitted  -> completed             (the dispatching worker's result)
//	admitted  -> needs-reconciliation  (dispatch error: outcome unknown)
//	any but completed -> completed     (TurnRecovery.Reconcile)
//
// Completed is terminal: its record never changes again.
type EffectState string

// The effect states.
const (
	EffectPending             EffectState = "pending"
	EffectClaimed             EffectState = "claimed"
	EffectAdmitted            EffectState = "admitted"
	EffectNeedsReconciliation EffectState = "needs-reconciliation"
	EffectCompleted           EffectState = "completed"
)

// Result is the outcome of an effect as the host stores it: opaque bytes,
// typically the encoded tool_result output (docs/contract.md section 6). A
// definite failure of the tool is a Result too; only an unknown outcome is
// an error. Results are compared byte for byte.
type Result struct {
	Data []byte
}

// Equal reports whether r and o hold the same bytes (nil equals empty).
func (r Result) Equal(o Result) bool { return bytes.Equal(r.Data, o.Data) }

// EffectRecord is the durable record of one effect, stored by the host's
// Store inside the turn record.
//
// Revision starts at 1 when the turn starts and grows by exactly one on
// every write of this effect; it is the compare-and-swap token of
// [Store.CompareAndSwapEffect] and [Admitter.AdmitDispatch]. Holder names the
// worker call that claimed the effect (claimed, admitted and later states)
// and LeaseUntil is when that claim expires; an expired claim may be taken
// over, an admitted effect never is. Result is set only when State is
// [EffectCompleted], and Reconciled tells that it came from
// [TurnRecovery.Reconcile] rather than from the dispatching worker.
type EffectRecord struct {
	ID         string
	Revision   uint64
	State      EffectState
	Holder     string
	LeaseUntil time.Time
	Result     Result
	Reconciled bool
}

// Clone returns a deep copy of e.
func (e EffectRecord) Clone() EffectRecord {
	e.Result.Data = bytes.Clone(e.Result.Data)
	return e
}

// Equal reports whether e and o hold the same values, comparing LeaseUntil
// with [time.Time.Equal] and Result byte for byte.
func (e EffectRecord) Equal(o EffectRecord) bool {
	return e.ID == o.ID && e.Revision == o.Revision && e.State == o.State && e.Holder == o.Holder &&
		e.LeaseUntil.Equal(o.LeaseUntil) && e.Result.Equal(o.Result) && e.Reconciled == o.Reconciled
}

// TurnRecord is the durable record of a turn: its status and its effects,
// in the order the host authorized them at start. A Store keeps one per
// [TurnRef].
type TurnRecord struct {
	Turn    TurnRef
	Status  TurnStatus
	Effects []EffectRecord
}

// Clone returns a deep copy of t; Stores return clones so that callers never
// share memory with stored state.
func (t TurnRecord) Clone() TurnRecord {
	t.Effects = slices.Clone(t.Effects)
	for i := range t.Effects {
		t.Effects[i] = t.Effects[i].Clone()
	}
	return t
}

// Effect returns the record of effect id and whether the turn has it.
func (t TurnRecord) Effect(id string) (EffectRecord, bool) {
	for _, e := range t.Effects {
		if e.ID == id {
			return e, true
		}
	}
	return EffectRecord{}, false
}

// InFlight returns the ids of the effects that were admitted and have no
// stored result (admitted or needs-reconciliation): those the host's abort
// hook must reach when the turn is cancelled. The slice is new on each call.
func (t TurnRecord) InFlight() []string {
	var ids []string
	for _, e := range t.Effects {
		if e.State == EffectAdmitted || e.State == EffectNeedsReconciliation {
			ids = append(ids, e.ID)
		}
	}
	return ids
}

// newTurnRecord is the record of a turn that starts now: running, each
// effect pending at revision 1.
func newTurnRecord(turn TurnRef, effects []string) TurnRecord {
	rec := TurnRecord{Turn: turn, Status: TurnRunning, Effects: make([]EffectRecord, len(effects))}
	for i, id := range effects {
		rec.Effects[i] = EffectRecord{ID: id, Revision: 1, State: EffectPending}
	}
	return rec
}

// sameEffects reports whether rec holds exactly the effect ids, in order.
func sameEffects(rec TurnRecord, effects []string) bool {
	return slices.EqualFunc(rec.Effects, effects, func(e EffectRecord, id string) bool { return e.ID == id })
}

func checkID(path, id string) error {
	switch {
	case id == "":
		return refusal.New(refusal.CodeInvalidTurn, path, "empty id")
	case len(id) > MaxIDBytes:
		return refusal.New(refusal.CodeInvalidTurn, path, "id longer than "+strconv.Itoa(MaxIDBytes)+" bytes")
	case !wire.Storable(id):
		return refusal.New(refusal.CodeInvalidInput, path, "id holds a NUL character or invalid UTF-8")
	}
	return nil
}

// Validate checks that both ids are non-empty and at most [MaxIDBytes] long
// (else an error matching [refusal.ErrInvalidTurn]), and valid UTF-8 without
// a NUL character, text every store can hold as sent (else
// [refusal.ErrInvalidInput]).
func (t TurnRef) Validate() error {
	if err := checkID("/conversationId", t.Conversation); err != nil {
		return err
	}
	return checkID("/turnId", t.Turn)
}

// Validate checks the turn and the effect id as [TurnRef.Validate] does;
// it returns an error matching [refusal.ErrInvalidTurn] or
// [refusal.ErrInvalidInput] otherwise.
func (e EffectRef) Validate() error {
	if err := e.Turn.Validate(); err != nil {
		return err
	}
	return checkID("/effectId", e.Effect)
}

func validateEffects(effects []string) error {
	seen := make(map[string]bool, len(effects))
	for i, id := range effects {
		path := "/effects/" + strconv.Itoa(i)
		if err := checkID(path, id); err != nil {
			return err
		}
		if seen[id] {
			return refusal.New(refusal.CodeInvalidTurn, path, "duplicated effect id")
		}
		seen[id] = true
	}
	return nil
}
