package recoverytest

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/Papercusp/chat-protocol-go/recovery"
	"github.com/Papercusp/chat-protocol-go/refusal"
)

// History records the calls and returns of store operations, with a
// logical clock, so that CheckLinearizable can check them against a
// sequential model of a turn store. It is safe for concurrent use.
type History struct {
	clock atomic.Int64
	mu    sync.Mutex
	ops   []histOp
}

// histOp is one recorded call: turn-level inputs and outputs, projected per
// effect when checked.
type histOp struct {
	client      int
	call, ret   int64
	kind        Op
	turn        recovery.TurnRef
	effect      string // OpCAS, OpAdmit
	created     recovery.TurnRecord
	expected    uint64 // OpCAS
	next        recovery.EffectRecord
	revision    uint64 // OpAdmit
	holder      string
	status      recovery.TurnStatus // OpEnd input
	outcome     outcome
	launched    bool
	returned    recovery.TurnRecord // OpLoad and OpEnd output
	hasReturned bool
}

// outcome is what a returned error says about an operation.
type outcome int

const (
	outOK         outcome = iota
	outConflict           // ErrClaimConflict
	outNotRunning         // ErrTurnNotRunning
	outNotApplied         // ErrCheckpointWriteFailed
	outRefused            // another definite refusal (unauthorized …)
	outUnknown            // anything else: may or may not have been applied
)

func outcomeOf(err error) outcome {
	if err == nil {
		return outOK
	}
	switch refusal.CodeOf(err) {
	case refusal.CodeClaimConflict:
		return outConflict
	case refusal.CodeTurnNotRunning:
		return outNotRunning
	case refusal.CodeCheckpointWriteFailed:
		return outNotApplied
	case refusal.CodeUnauthorized, refusal.CodeInvalidTurn, refusal.CodeUnknownEffect:
		return outRefused
	}
	return outUnknown
}

// NewHistory returns an empty history.
func NewHistory() *History { return &History{} }

// Len returns the number of recorded operations.
func (h *History) Len() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.ops)
}

func (h *History) record(op histOp) {
	op.ret = h.clock.Add(1)
	h.mu.Lock()
	h.ops = append(h.ops, op)
	h.mu.Unlock()
}

func (h *History) snapshot() []histOp {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]histOp(nil), h.ops...)
}

// Wrap returns st recording every call into h as client (a small
// non-negative number naming the worker). The result implements
// [recovery.Admitter] when st does.
func (h *History) Wrap(st recovery.Store, client int) recovery.Store {
	r := &recordedStore{h: h, st: st, client: client}
	if adm, ok := st.(recovery.Admitter); ok {
		return &recordedAdmitter{recordedStore: r, adm: adm}
	}
	return r
}

type recordedStore struct {
	h      *History
	st     recovery.Store
	client int
}

func (r *recordedStore) begin(kind Op, turn recovery.TurnRef) histOp {
	return histOp{client: r.client, call: r.h.clock.Add(1), kind: kind, turn: turn}
}

func (r *recordedStore) CreateTurn(ctx context.Context, rec recovery.TurnRecord) error {
	op := r.begin(OpCreate, rec.Turn)
	op.created = rec.Clone()
	err := r.st.CreateTurn(ctx, rec)
	op.outcome = outcomeOf(err)
	r.h.record(op)
	return err
}

func (r *recordedStore) LoadTurn(ctx context.Context, turn recovery.TurnRef) (recovery.TurnRecord, error) {
	op := r.begin(OpLoad, turn)
	rec, err := r.st.LoadTurn(ctx, turn)
	op.outcome = outcomeOf(err)
	op.returned, op.hasReturned = rec.Clone(), err == nil
	r.h.record(op)
	return rec, err
}

func (r *recordedStore) CompareAndSwapEffect(ctx context.Context, turn recovery.TurnRef, expected uint64, next recovery.EffectRecord) error {
	op := r.begin(OpCAS, turn)
	op.effect, op.expected, op.next = next.ID, expected, next.Clone()
	err := r.st.CompareAndSwapEffect(ctx, turn, expected, next)
	op.outcome = outcomeOf(err)
	r.h.record(op)
	return err
}

func (r *recordedStore) EndTurn(ctx context.Context, turn recovery.TurnRef, status recovery.TurnStatus) (recovery.TurnRecord, error) {
	op := r.begin(OpEnd, turn)
	op.status = status
	rec, err := r.st.EndTurn(ctx, turn, status)
	op.outcome = outcomeOf(err)
	op.returned, op.hasReturned = rec.Clone(), err == nil
	r.h.record(op)
	return rec, err
}

type recordedAdmitter struct {
	*recordedStore
	adm recovery.Admitter
}

func (r *recordedAdmitter) AdmitDispatch(ctx context.Context, adm recovery.Admission, launch recovery.DispatchFunc) error {
	op := r.begin(OpAdmit, adm.Effect.Turn)
	op.effect, op.revision, op.holder = adm.Effect.Effect, adm.Revision, adm.Holder
	var launched atomic.Bool
	err := r.adm.AdmitDispatch(ctx, adm, func(ctx context.Context) error {
		launched.Store(true)
		return launch(ctx)
	})
	op.launched = launched.Load()
	op.outcome = outcomeOf(err)
	r.h.record(op)
	return err
}
