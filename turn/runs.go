package turn

import (
	"context"
	"sync"

	"github.com/Papercusp/chat-protocol-go/recovery"
)

// rememberedAborts bounds the aborted turns Runs remembers for producers
// that register after the abort.
const rememberedAborts = 4096

// Runs is the registry of the turns this process runs: the
// [recovery.Aborter] that reaches them (docs/contract.md sections 13.1 and
// 16.4). Give it to [recovery.Host] as its Aborter and to each Producer
// ([Options].Runs): Abort ends the Context of every Producer of the turn in
// this process, with cause [ErrCancelled], and so its model loop and its
// tools' executions. It
// is idempotent and tolerates turns and effects it does not know; a turn
// that registers after its abort (a Producer started again, or a store
// that lost its fence) is cancelled at once. It is safe for concurrent
// use; make one with [NewRuns]. A listener carrying cancellations across
// instances (package pgstore's AbortListener) calls the same Abort.
type Runs struct {
	mu      sync.Mutex
	running map[recovery.TurnRef]map[*run]struct{}
	aborted map[recovery.TurnRef]struct{}
	order   []recovery.TurnRef // aborted, oldest first, for the bound
}

// run is one registered Producer's cancel.
type run struct{ cancel context.CancelCauseFunc }

var _ recovery.Aborter = (*Runs)(nil)

// NewRuns returns an empty registry.
func NewRuns() *Runs {
	return &Runs{running: map[recovery.TurnRef]map[*run]struct{}{}, aborted: map[recovery.TurnRef]struct{}{}}
}

// Abort implements [recovery.Aborter]: it cancels every registered run of
// turn, whatever inFlight lists, and remembers the turn for runs that
// register later. It never fails.
func (r *Runs) Abort(_ context.Context, turn recovery.TurnRef, _ []string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	for x := range r.running[turn] {
		x.cancel(ErrCancelled)
	}
	if _, ok := r.aborted[turn]; !ok {
		r.aborted[turn] = struct{}{}
		r.order = append(r.order, turn)
		if len(r.order) > rememberedAborts {
			delete(r.aborted, r.order[0])
			r.order = append(r.order[:0:0], r.order[1:]...)
		}
	}
	return nil
}

// register adds a run of turn and returns its release; a turn aborted
// already is cancelled at once.
func (r *Runs) register(turn recovery.TurnRef, cancel context.CancelCauseFunc) (release func()) {
	x := &run{cancel: cancel}
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.aborted[turn]; ok {
		cancel(ErrCancelled)
	}
	if r.running[turn] == nil {
		r.running[turn] = map[*run]struct{}{}
	}
	r.running[turn][x] = struct{}{}
	var once sync.Once
	return func() {
		once.Do(func() {
			r.mu.Lock()
			defer r.mu.Unlock()
			delete(r.running[turn], x)
			if len(r.running[turn]) == 0 {
				delete(r.running, turn)
			}
		})
	}
}

// cancelTurn cancels and forgets every run of turn still registered, with
// cause: the turn ended under another Producer of this process.
func (r *Runs) cancelTurn(turn recovery.TurnRef, cause error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for x := range r.running[turn] {
		x.cancel(cause)
	}
	delete(r.running, turn)
}

// Running returns the number of turns with a registered run.
func (r *Runs) Running() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.running)
}
