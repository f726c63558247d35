package pgstore

import (
	"context"
	"encoding/json"
	"sync"

	"github.com/Papercusp/chat-protocol-go/interactions"
	"github.com/Papercusp/chat-protocol-go/recovery"
)

// allowAll is a test host's recovery.Authorizer that authorizes everyone.
type allowAll struct{}

func (allowAll) Authorize(context.Context, string, recovery.TurnRef, recovery.Action) error {
	return nil
}

// acceptAll is a test host's interactions.Validator that accepts any value.
var acceptAll = interactions.ValidatorFunc(func(context.Context, interactions.SchemaRef, json.RawMessage) error { return nil })

// launchLog is a test host's recovery.Launcher: it counts launches per
// effect (its idempotency records) and ends each execution at once with
// the effect id as result.
type launchLog struct {
	mu sync.Mutex
	n  map[recovery.EffectRef]int
}

func newLaunchLog() *launchLog { return &launchLog{n: map[recovery.EffectRef]int{}} }

func (l *launchLog) Launch(_ context.Context, e recovery.EffectRef) (recovery.Execution, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.n[e]++
	return doneExec{recovery.Result{Data: []byte("ran:" + e.Effect)}}, nil
}

func (l *launchLog) count(e recovery.EffectRef) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.n[e]
}

// doubles returns the effects launched more than once.
func (l *launchLog) doubles() []recovery.EffectRef {
	l.mu.Lock()
	defer l.mu.Unlock()
	return moreThanOnce(l.n)
}

// moreThanOnce returns the keys of counts above 1.
func moreThanOnce(counts map[recovery.EffectRef]int) []recovery.EffectRef {
	var out []recovery.EffectRef
	for e, n := range counts {
		if n > 1 {
			out = append(out, e)
		}
	}
	return out
}

// doneExec is an execution that has already ended with its result.
type doneExec struct{ res recovery.Result }

func (d doneExec) Wait(context.Context) (recovery.Result, error) { return d.res, nil }

// observedStore wraps a RecoveryStore and records what tests check: each
// effect's completed writes and each turn's committed end record.
type observedStore struct {
	*RecoveryStore
	mu          sync.Mutex
	completions map[recovery.EffectRef]int
	ends        map[recovery.TurnRef]recovery.TurnRecord
}

func observe(st *RecoveryStore) *observedStore {
	return &observedStore{RecoveryStore: st, completions: map[recovery.EffectRef]int{}, ends: map[recovery.TurnRef]recovery.TurnRecord{}}
}

func (o *observedStore) CompareAndSwapEffect(ctx context.Context, turn recovery.TurnRef, expected uint64, next recovery.EffectRecord) error {
	err := o.RecoveryStore.CompareAndSwapEffect(ctx, turn, expected, next)
	if err == nil && next.State == recovery.EffectCompleted {
		o.mu.Lock()
		o.completions[recovery.EffectRef{Turn: turn, Effect: next.ID}]++
		o.mu.Unlock()
	}
	return err
}

func (o *observedStore) EndTurn(ctx context.Context, turn recovery.TurnRef, status recovery.TurnStatus) (recovery.TurnRecord, error) {
	rec, err := o.RecoveryStore.EndTurn(ctx, turn, status)
	if err == nil {
		o.mu.Lock()
		if _, dup := o.ends[turn]; dup {
			rec.Status = "ended-twice"
		}
		o.ends[turn] = rec.Clone()
		o.mu.Unlock()
	}
	return rec, err
}

func (o *observedStore) endOf(turn recovery.TurnRef) (recovery.TurnRecord, bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	rec, ok := o.ends[turn]
	return rec, ok
}

// doubleCompletions returns the effects completed more than once.
func (o *observedStore) doubleCompletions() []recovery.EffectRef {
	o.mu.Lock()
	defer o.mu.Unlock()
	return moreThanOnce(o.completions)
}

// ClaimEffect observes the completions written through the fence it hands
// out, as CompareAndSwapEffect does for the others.
func (o *observedStore) ClaimEffect(ctx context.Context, c recovery.Claim) (recovery.ClaimResult, error) {
	out, err := o.RecoveryStore.ClaimEffect(ctx, c)
	if out.Fence != nil {
		out.Fence = &observedFence{DispatchFence: out.Fence, o: o, effect: c.Effect}
	}
	return out, err
}

type observedFence struct {
	recovery.DispatchFence
	o      *observedStore
	effect recovery.EffectRef
}

func (f *observedFence) Complete(ctx context.Context, expected uint64, next recovery.EffectRecord) error {
	err := f.DispatchFence.Complete(ctx, expected, next)
	if err == nil && next.State == recovery.EffectCompleted {
		f.o.mu.Lock()
		f.o.completions[f.effect]++
		f.o.mu.Unlock()
	}
	return err
}
