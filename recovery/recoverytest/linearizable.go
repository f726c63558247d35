package recoverytest

import (
	"fmt"
	"strings"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/Papercusp/chat-protocol-go/recovery"
)

// CheckLinearizable checks the recorded history with porcupine against a
// sequential model of one effect of a turn store, partitioned per effect:
// the turn's creation, reads and end appear in the partition of
// each of its effects. Beyond the store's contract, the model holds the
// rules TurnRecovery follows, so that histories it drives prove them: an
// effect launches at most once, only from a claim at the admitted revision
// of a running turn, and a completed record is never written again.
//
// Outcomes are modelled as the store reported them: a definite refusal or
// [refusal.ErrCheckpointWriteFailed] changed nothing; any other error (a lost
// acknowledgement, a crash) may or may not have applied the write, and the
// model allows both. It returns nil, or an error naming the first partition
// that is not linearizable; timeout bounds the whole check (0 means no
// bound) and running out of time is an error too.
func (h *History) CheckLinearizable(timeout time.Duration) error {
	ops := h.snapshot()
	parts := partition(ops)
	model := effectModel()
	for key, hist := range parts {
		res := porcupine.CheckOperationsTimeout(model, hist, timeout)
		if res != porcupine.Ok {
			return fmt.Errorf("recoverytest: history of effect %s is not linearizable (%s):\n%s", key, res, describeOps(hist))
		}
	}
	return nil
}

// effState is the part of an effect record the model compares.
type effState struct {
	State      recovery.EffectState
	Revision   uint64
	Holder     string
	Lease      int64
	Result     string
	Reconciled bool
}

func project(e recovery.EffectRecord) effState {
	return effState{
		State: e.State, Revision: e.Revision, Holder: e.Holder,
		Lease: e.LeaseUntil.UnixNano(), Result: string(e.Result.Data), Reconciled: e.Reconciled,
	}
}

// mState is the model of one effect.
type mState struct {
	exists   bool
	status   recovery.TurnStatus
	eff      effState
	launched bool
}

// pIn is one operation projected on one effect.
type pIn struct {
	kind     Op
	created  effState // OpCreate
	expected uint64   // OpCAS
	next     effState
	revision uint64 // OpAdmit
	holder   string
	status   recovery.TurnStatus // OpEnd
}

type pOut struct {
	outcome  outcome
	launched bool
	found    bool
	status   recovery.TurnStatus // OpLoad, OpEnd
	eff      effState
}

type partKey struct {
	turn   recovery.TurnRef
	effect string
}

func (k partKey) String() string { return k.turn.Conversation + "/" + k.turn.Turn + "/" + k.effect }

// partition splits a history per effect, copying turn-level operations into
// every effect of their turn.
func partition(ops []histOp) map[partKey][]porcupine.Operation {
	effects := map[recovery.TurnRef][]string{}
	for _, op := range ops {
		if op.kind == OpCreate {
			for _, e := range op.created.Effects {
				effects[op.turn] = appendNew(effects[op.turn], e.ID)
			}
		}
	}
	parts := map[partKey][]porcupine.Operation{}
	add := func(op histOp, effect string, in pIn, out pOut) {
		k := partKey{op.turn, effect}
		parts[k] = append(parts[k], porcupine.Operation{ClientId: op.client, Input: in, Call: op.call, Output: out, Return: op.ret})
	}
	for _, op := range ops {
		out := pOut{outcome: op.outcome, launched: op.launched, found: op.hasReturned, status: op.returned.Status}
		switch op.kind {
		case OpCAS:
			add(op, op.effect, pIn{kind: OpCAS, expected: op.expected, next: project(op.next)}, out)
		case OpAdmit:
			add(op, op.effect, pIn{kind: OpAdmit, revision: op.revision, holder: op.holder}, out)
		default:
			for _, id := range effects[op.turn] {
				in := pIn{kind: op.kind, status: op.status}
				if e, ok := op.created.Effect(id); ok {
					in.created = project(e)
				}
				o := out
				if e, ok := op.returned.Effect(id); ok {
					o.eff = project(e)
				}
				add(op, id, in, o)
			}
		}
	}
	return parts
}

func appendNew(ids []string, id string) []string {
	for _, x := range ids {
		if x == id {
			return ids
		}
	}
	return append(ids, id)
}

func effectModel() porcupine.Model {
	nm := porcupine.NondeterministicModel{
		Init: func() []any { return []any{mState{}} },
		Step: func(state, input, output any) []any {
			return step(state.(mState), input.(pIn), output.(pOut))
		},
		DescribeOperation: func(input, output any) string {
			return fmt.Sprintf("%+v -> %+v", input, output)
		},
	}
	return nm.ToModel()
}

// step returns the states the model may be in after the operation, or none
// if the operation could not have returned what it did.
func step(s mState, in pIn, out pOut) []any {
	same := []any{s}
	switch in.kind {
	case OpCreate:
		created := mState{exists: true, status: recovery.TurnRunning, eff: in.created}
		switch out.outcome {
		case outOK:
			return when(!s.exists, created)
		case outConflict:
			return when(s.exists, s)
		case outUnknown:
			if !s.exists {
				return []any{s, created}
			}
		}
		return same
	case OpLoad:
		switch {
		case out.found:
			return when(s.exists && s.status == out.status && s.eff == out.eff, s)
		case out.outcome == outNotRunning:
			return when(!s.exists, s)
		}
		return same
	case OpCAS:
		can := s.exists && s.eff.Revision == in.expected
		if out.outcome == outOK && s.eff.State == recovery.EffectCompleted {
			return nil // a terminal record changed
		}
		applied := s
		applied.eff = in.next
		switch out.outcome {
		case outOK:
			return when(can, applied)
		case outConflict:
			return when(s.exists && !can, s)
		case outNotRunning:
			return when(!s.exists, s)
		case outUnknown:
			if can {
				return []any{s, applied}
			}
		}
		return same
	case OpAdmit:
		can := s.exists && s.status == recovery.TurnRunning && s.eff.State == recovery.EffectClaimed &&
			s.eff.Revision == in.revision && s.eff.Holder == in.holder
		admitted := s
		admitted.eff.State = recovery.EffectAdmitted
		admitted.eff.Revision = in.revision + 1
		if out.launched {
			admitted.launched = true
			return when(can && !s.launched, admitted)
		}
		switch out.outcome {
		case outOK:
			return nil // nil without a launch breaks the admission contract
		case outConflict:
			return when(!can, s)
		case outNotRunning:
			return when(!s.exists || s.status != recovery.TurnRunning, s)
		case outUnknown:
			if can {
				return []any{s, admitted}
			}
		}
		return same
	case OpEnd:
		ended := s
		ended.status = in.status
		switch out.outcome {
		case outOK:
			return when(s.exists && s.status == recovery.TurnRunning && out.status == in.status && out.eff == s.eff, ended)
		case outNotRunning:
			return when(!s.exists || s.status != recovery.TurnRunning, s)
		case outUnknown:
			if s.exists && s.status == recovery.TurnRunning {
				return []any{s, ended}
			}
		}
		return same
	}
	return nil
}

func when(ok bool, s mState) []any {
	if ok {
		return []any{s}
	}
	return nil
}

func describeOps(ops []porcupine.Operation) string {
	var b strings.Builder
	for _, op := range ops {
		fmt.Fprintf(&b, "  [%d,%d] client %d: %+v -> %+v\n", op.Call, op.Return, op.ClientId, op.Input, op.Output)
	}
	return b.String()
}
