package recovery

import (
	"context"
	"slices"
	"sync"

	"github.com/Papercusp/chat-protocol-go/refusal"
)

// DefaultMaxEndedTurns is the number of ended turns a [MemoryStore] keeps by
// default: 10,000.
const DefaultMaxEndedTurns = 10_000

// MemoryStoreOptions configures a [MemoryStore]; nil means the defaults.
type MemoryStoreOptions struct {
	// MaxEndedTurns bounds the ended (completed, failed, cancelled) turns
	// kept: beyond it the turn that ended first is forgotten, and reads as
	// never started. 0 means [DefaultMaxEndedTurns], a negative value no
	// bound. Running turns are never forgotten.
	MaxEndedTurns int
}

// MemoryStore is a Store and Admitter for one process: the turn store of
// the lightweight profile (docs/contract.md sections 11.7 and 13.1), which
// imports no test package. Each turn has its own fence, shared by
// AdmitDispatch and EndTurn; a compare-and-swap takes a short lock and
// never the fence.
//
// What it does not promise: nothing survives the process. After a restart
// every turn reads as never started, so a host using it does not declare
// interruptedTurnRecovery; it keeps at-most-once launch, cancellation
// before abort and stored results within the process, and across
// producers restarted in it. Writes never lose an acknowledgement. A
// forgotten ended turn (MaxEndedTurns) may be started again. Safe for
// concurrent use.
type MemoryStore struct {
	maxEnded int

	mu    sync.Mutex
	turns map[TurnRef]*memoryTurn
	ended []TurnRef // in the order they ended, for MaxEndedTurns, from head
	head  int
}

// memoryTurn is one stored turn: its record and its fence, a channel of
// one slot that AdmitDispatch and EndTurn fill while they hold it.
type memoryTurn struct {
	rec   TurnRecord
	fence chan struct{}
}

var (
	_ Store    = (*MemoryStore)(nil)
	_ Admitter = (*MemoryStore)(nil)
)

// NewMemoryStore returns an empty [MemoryStore]; opts may be nil.
func NewMemoryStore(opts *MemoryStoreOptions) *MemoryStore {
	s := &MemoryStore{maxEnded: DefaultMaxEndedTurns, turns: map[TurnRef]*memoryTurn{}}
	if opts != nil && opts.MaxEndedTurns != 0 {
		s.maxEnded = opts.MaxEndedTurns
	}
	return s
}

func notRunning(msg string) error { return refusal.New(refusal.CodeTurnNotRunning, "", msg) }

func conflict(msg string) error { return refusal.New(refusal.CodeClaimConflict, "", msg) }

// CreateTurn implements Store.
func (s *MemoryStore) CreateTurn(ctx context.Context, rec TurnRecord) error {
	if err := ctx.Err(); err != nil {
		return refusal.Wrap(refusal.CodeCheckpointWriteFailed, "", "context ended before the write", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.turns[rec.Turn]; ok {
		return conflict("the turn exists")
	}
	s.turns[rec.Turn] = &memoryTurn{rec: rec.Clone(), fence: make(chan struct{}, 1)}
	return nil
}

// LoadTurn implements Store.
func (s *MemoryStore) LoadTurn(ctx context.Context, turn TurnRef) (TurnRecord, error) {
	if err := ctx.Err(); err != nil {
		return TurnRecord{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.turns[turn]
	if !ok {
		return TurnRecord{}, notRunning("no such turn")
	}
	return t.rec.Clone(), nil
}

// CompareAndSwapEffect implements Store.
func (s *MemoryStore) CompareAndSwapEffect(ctx context.Context, turn TurnRef, expected uint64, next EffectRecord) error {
	if err := ctx.Err(); err != nil {
		return refusal.Wrap(refusal.CodeCheckpointWriteFailed, "", "context ended before the write", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.turns[turn]
	if !ok {
		return notRunning("no such turn")
	}
	i := slices.IndexFunc(t.rec.Effects, func(e EffectRecord) bool { return e.ID == next.ID })
	if i < 0 || t.rec.Effects[i].Revision != expected {
		return conflict("the effect's revision moved, or the turn has no such effect")
	}
	t.rec.Effects[i] = next.Clone()
	return nil
}

// AdmitDispatch implements Admitter: it takes the turn's fence, calls
// adm.Authorize, checks the running turn and the claim, marks the effect
// admitted, calls launch and releases the fence, in that order. A ctx that
// ends while it waits for the fence is a write failure: nothing written.
func (s *MemoryStore) AdmitDispatch(ctx context.Context, adm Admission, launch DispatchFunc) error {
	release, err := s.hold(ctx, adm.Effect.Turn)
	if err != nil {
		return err
	}
	defer release()
	if err := adm.Authorize(ctx); err != nil {
		return err
	}
	if err := s.markAdmitted(adm); err != nil {
		return err
	}
	return launch(ctx)
}

// markAdmitted writes the admission mark of a claimed effect of a running
// turn, under the short lock.
func (s *MemoryStore) markAdmitted(adm Admission) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.turns[adm.Effect.Turn]
	if !ok || t.rec.Status != TurnRunning {
		return notRunning("the turn is not running")
	}
	i := slices.IndexFunc(t.rec.Effects, func(e EffectRecord) bool { return e.ID == adm.Effect.Effect })
	if i < 0 {
		return conflict("the turn has no such effect")
	}
	e := &t.rec.Effects[i]
	if e.State != EffectClaimed || e.Revision != adm.Revision || e.Holder != adm.Holder {
		return conflict("the claim moved")
	}
	e.State, e.Revision = EffectAdmitted, adm.Revision+1
	return nil
}

// EndTurn implements Store, under the fence AdmitDispatch takes.
func (s *MemoryStore) EndTurn(ctx context.Context, turn TurnRef, status TurnStatus) (TurnRecord, error) {
	if !status.Terminal() {
		return TurnRecord{}, refusal.New(refusal.CodeInvalidTurn, "/status", "an end status is terminal")
	}
	release, err := s.hold(ctx, turn)
	if err != nil {
		return TurnRecord{}, err
	}
	defer release()
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.turns[turn]
	if !ok || t.rec.Status != TurnRunning {
		return TurnRecord{}, notRunning("the turn is not running")
	}
	t.rec.Status = status
	out := t.rec.Clone()
	s.ended = append(s.ended, turn)
	if s.maxEnded >= 0 && len(s.ended)-s.head > s.maxEnded {
		delete(s.turns, s.ended[s.head])
		s.head++
		if s.head > len(s.ended)/2 { // drop the forgotten half, amortised O(1)
			s.ended, s.head = slices.Clone(s.ended[s.head:]), 0
		}
	}
	return out, nil
}

// hold takes the fence of turn and returns its release. A turn that does
// not exist has nothing to fence: turn-not-running. A ctx that ends first
// is a write failure.
func (s *MemoryStore) hold(ctx context.Context, turn TurnRef) (release func(), err error) {
	s.mu.Lock()
	t, ok := s.turns[turn]
	s.mu.Unlock()
	if !ok {
		return nil, notRunning("no such turn")
	}
	select {
	case t.fence <- struct{}{}:
		return func() { <-t.fence }, nil
	case <-ctx.Done():
		return nil, refusal.Wrap(refusal.CodeCheckpointWriteFailed, "", "context ended waiting for the turn's fence", ctx.Err())
	}
}
