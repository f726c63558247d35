package recoverytest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/Papercusp/chat-protocol-go/recovery"
	"github.com/Papercusp/chat-protocol-go/refusal"
)

// ErrCrashed is returned by a Store handle whose worker crashed: at a
// [ModeAfter] failpoint, after [Store.Crash], and by every call after either.
// It matches no recovery sentinel, so TurnRecovery treats the write it
// interrupted as one that may have been applied.
var ErrCrashed = errors.New("recoverytest: worker crashed")

// Op names a Store method in a Call.
type Op string

// The store operations.
const (
	OpCreate Op = "create"
	OpLoad   Op = "load"
	OpCAS    Op = "cas"
	OpAdmit  Op = "admit"
	OpEnd    Op = "end"
	// OpLaunch is not a store method: AdmitDispatch calls the hook with it
	// once more, inside the fence, after the admission mark and just before
	// launch, so that tests can act at that point.
	OpLaunch Op = "launch"
)

// Call describes a store call to [DBOptions.Hook]: the worker of the handle,
// the operation, the turn and, for [OpCAS] and [OpAdmit], the effect id.
type Call struct {
	Worker string
	Op     Op
	Turn   recovery.TurnRef
	Effect string
}

// DBOptions configures a [DB]; nil means a sound store without a hook.
type DBOptions struct {
	// Hook, when set, is called at the start of every call of every
	// handle, before any lock is taken and before the handle's crash is
	// checked. Tests use it to interleave work (cancel between a claim and
	// its admission, revoke authority, pause a holder); the simulation uses
	// it as the yield point of its scheduler. It may block.
	Hook func(Call)
	// Broken makes the store deliberately broken, to prove that a checker
	// catches it; the zero value (Sound) is a sound store.
	Broken Broken
}

// DB is the fake database: an in-memory map of turn records plus, per turn,
// the fence that AdmitDispatch and EndTurn share, and the armed failpoints.
// Workers reach it through Store handles from Open; several handles over
// one DB are several processes over one database, and a crashed handle is
// a crashed process. A DB is safe for concurrent use.
type DB struct {
	opts DBOptions

	mu     sync.Mutex
	turns  map[recovery.TurnRef]*recovery.TurnRecord
	fences map[recovery.TurnRef]chan struct{}
	armed  map[Failpoint]int
	hits   map[Failpoint]int
}

// NewDB returns an empty fake database; opts may be nil.
func NewDB(opts *DBOptions) *DB {
	db := &DB{
		turns:  map[recovery.TurnRef]*recovery.TurnRecord{},
		fences: map[recovery.TurnRef]chan struct{}{},
		armed:  map[Failpoint]int{},
		hits:   map[Failpoint]int{},
	}
	if opts != nil {
		db.opts = *opts
	}
	return db
}

// Open returns a new worker handle on the database; worker names it in
// Calls.
func (db *DB) Open(worker string) *Store { return &Store{db: db, worker: worker} }

// Arm makes fp fire once, at the next matching call of any handle; arming it
// n times makes it fire at the next n. It returns an error for a name that
// is not in Failpoints.
func (db *DB) Arm(fp Failpoint) error {
	if !knownFailpoint(fp) {
		return fmt.Errorf("recoverytest: unknown failpoint %q", fp)
	}
	db.mu.Lock()
	defer db.mu.Unlock()
	db.armed[fp]++
	return nil
}

// Disarm clears every armed failpoint.
func (db *DB) Disarm() {
	db.mu.Lock()
	defer db.mu.Unlock()
	clear(db.armed)
}

// Hits returns how many times fp fired.
func (db *DB) Hits(fp Failpoint) int {
	db.mu.Lock()
	defer db.mu.Unlock()
	return db.hits[fp]
}

// Snapshot returns a copy of the committed record of turn, read directly
// (no hook, no failpoint), and whether it exists.
func (db *DB) Snapshot(turn recovery.TurnRef) (recovery.TurnRecord, bool) {
	db.mu.Lock()
	defer db.mu.Unlock()
	rec, ok := db.turns[turn]
	if !ok {
		return recovery.TurnRecord{}, false
	}
	return rec.Clone(), true
}

// FenceHeld reports whether an AdmitDispatch or EndTurn holds the fence of
// turn now.
func (db *DB) FenceHeld(turn recovery.TurnRef) bool {
	return len(db.fence(turn)) == 1
}

// fire consumes the armed failpoint of site, if any; db.mu must be held.
func (db *DB) fire(site Site) (Mode, bool) {
	for _, m := range []Mode{ModeBefore, ModeAfter, ModeAckLost} {
		fp := Name(site, m)
		if db.armed[fp] > 0 {
			db.armed[fp]--
			db.hits[fp]++
			return m, true
		}
	}
	return "", false
}

func (db *DB) fence(turn recovery.TurnRef) chan struct{} {
	db.mu.Lock()
	defer db.mu.Unlock()
	ch, ok := db.fences[turn]
	if !ok {
		ch = make(chan struct{}, 1)
		db.fences[turn] = ch
	}
	return ch
}

// lockFence takes the fence of turn, or returns a write failure when ctx
// ends first (nothing was written). An unfenced broken store takes nothing.
func (db *DB) lockFence(ctx context.Context, turn recovery.TurnRef) (unlock func(), err error) {
	if db.opts.Broken == BrokenUnfenced {
		return func() {}, nil
	}
	ch := db.fence(turn)
	select {
	case ch <- struct{}{}:
		return func() { <-ch }, nil
	case <-ctx.Done():
		return nil, fmt.Errorf("recoverytest: waiting for the fence: %w: %w", refusal.ErrCheckpointWriteFailed, ctx.Err())
	}
}

// Store is one worker's handle on a [DB]: it implements [recovery.Store] and
// [recovery.Admitter], and is safe for concurrent use.
type Store struct {
	db     *DB
	worker string
	dead   atomic.Bool
}

var (
	_ recovery.Store    = (*Store)(nil)
	_ recovery.Admitter = (*Store)(nil)
)

// Worker returns the name given to Open.
func (s *Store) Worker() string { return s.worker }

// Crash kills the handle: every later call returns [ErrCrashed] without
// effect, as a crashed process does nothing more.
func (s *Store) Crash() { s.dead.Store(true) }

// Crashed reports whether the handle crashed.
func (s *Store) Crashed() bool { return s.dead.Load() }

// enter runs the hook and refuses calls of a dead handle.
func (s *Store) enter(ctx context.Context, op Op, turn recovery.TurnRef, effect string) error {
	if h := s.db.opts.Hook; h != nil {
		h(Call{Worker: s.worker, Op: op, Turn: turn, Effect: effect})
	}
	if s.dead.Load() {
		return ErrCrashed
	}
	return ctx.Err()
}

func writeFailed(site Site) error {
	return fmt.Errorf("recoverytest: %s write failed (failpoint): %w", site, refusal.ErrCheckpointWriteFailed)
}

// ack answers a write that was applied, per the failpoint that fired.
func (s *Store) ack(site Site, mode Mode) error {
	switch mode {
	case ModeAfter:
		s.dead.Store(true)
		return ErrCrashed
	case ModeAckLost:
		if s.db.opts.Broken == BrokenSwallowsLostAck {
			return nil
		}
		return fmt.Errorf("recoverytest: %s acknowledgement lost (failpoint): %w", site, refusal.ErrNeedsReconciliation)
	}
	return nil
}

// CreateTurn implements [recovery.Store].
func (s *Store) CreateTurn(ctx context.Context, rec recovery.TurnRecord) error {
	if err := s.enter(ctx, OpCreate, rec.Turn, ""); err != nil {
		return err
	}
	db := s.db
	db.mu.Lock()
	defer db.mu.Unlock()
	if _, ok := db.turns[rec.Turn]; ok {
		return fmt.Errorf("recoverytest: turn exists: %w", refusal.ErrClaimConflict)
	}
	mode, _ := db.fire(SiteStart)
	if mode == ModeBefore {
		return writeFailed(SiteStart)
	}
	stored := rec.Clone()
	db.turns[rec.Turn] = &stored
	return s.ack(SiteStart, mode)
}

// LoadTurn implements [recovery.Store].
func (s *Store) LoadTurn(ctx context.Context, turn recovery.TurnRef) (recovery.TurnRecord, error) {
	if err := s.enter(ctx, OpLoad, turn, ""); err != nil {
		return recovery.TurnRecord{}, err
	}
	db := s.db
	db.mu.Lock()
	defer db.mu.Unlock()
	if mode, _ := db.fire(SiteLoad); mode == ModeBefore {
		return recovery.TurnRecord{}, errors.New("recoverytest: read failed (failpoint)")
	}
	rec, ok := db.turns[turn]
	if !ok {
		return recovery.TurnRecord{}, fmt.Errorf("recoverytest: no such turn: %w", refusal.ErrTurnNotRunning)
	}
	return rec.Clone(), nil
}

// casSite tells which write a compare-and-swap is from the record written.
func casSite(next recovery.EffectRecord) Site {
	switch {
	case next.State == recovery.EffectCompleted && next.Reconciled:
		return SiteReconcile
	case next.State == recovery.EffectCompleted:
		return SiteComplete
	case next.State == recovery.EffectNeedsReconciliation:
		return SiteMark
	}
	return SiteClaim
}

// CompareAndSwapEffect implements [recovery.Store].
func (s *Store) CompareAndSwapEffect(ctx context.Context, turn recovery.TurnRef, expected uint64, next recovery.EffectRecord) error {
	if err := s.enter(ctx, OpCAS, turn, next.ID); err != nil {
		return err
	}
	db := s.db
	db.mu.Lock()
	defer db.mu.Unlock()
	rec, ok := db.turns[turn]
	if !ok {
		return fmt.Errorf("recoverytest: no such turn: %w", refusal.ErrTurnNotRunning)
	}
	i := effectIndex(rec, next.ID)
	if i < 0 {
		return fmt.Errorf("recoverytest: no effect %q: %w", next.ID, refusal.ErrClaimConflict)
	}
	if rec.Effects[i].Revision != expected && db.opts.Broken != BrokenIgnoresRevision {
		return fmt.Errorf("recoverytest: revision moved: %w", refusal.ErrClaimConflict)
	}
	site := casSite(next)
	mode, _ := db.fire(site)
	if mode == ModeBefore {
		return writeFailed(site)
	}
	rec.Effects[i] = next.Clone()
	return s.ack(site, mode)
}

// AdmitDispatch implements [recovery.Admitter]: fence, authorize, check, mark,
// launch, release, in that order.
func (s *Store) AdmitDispatch(ctx context.Context, adm recovery.Admission, launch recovery.DispatchFunc) error {
	if err := s.enter(ctx, OpAdmit, adm.Effect.Turn, adm.Effect.Effect); err != nil {
		return err
	}
	db := s.db
	unlock, err := db.lockFence(ctx, adm.Effect.Turn)
	if err != nil {
		return err
	}
	defer unlock()
	if adm.Authorize == nil {
		return fmt.Errorf("recoverytest: no authority check: %w", refusal.ErrUnauthorized)
	}
	if db.opts.Broken != BrokenSkipsAuthorize {
		if err := adm.Authorize(ctx); err != nil {
			return err
		}
	}
	if s.dead.Load() {
		return ErrCrashed
	}
	mode, err := db.markAdmitted(adm)
	if err != nil {
		return err
	}
	if err := s.ack(SiteAdmit, mode); err != nil {
		return err
	}
	if h := db.opts.Hook; h != nil {
		h(Call{Worker: s.worker, Op: OpLaunch, Turn: adm.Effect.Turn, Effect: adm.Effect.Effect})
	}
	return launch(ctx)
}

// markAdmitted checks and writes the admission mark under db.mu.
func (db *DB) markAdmitted(adm recovery.Admission) (Mode, error) {
	db.mu.Lock()
	defer db.mu.Unlock()
	rec, ok := db.turns[adm.Effect.Turn]
	if !ok || rec.Status != recovery.TurnRunning {
		return "", fmt.Errorf("recoverytest: turn not running: %w", refusal.ErrTurnNotRunning)
	}
	i := effectIndex(rec, adm.Effect.Effect)
	if i < 0 {
		return "", fmt.Errorf("recoverytest: no effect %q: %w", adm.Effect.Effect, refusal.ErrClaimConflict)
	}
	eff := &rec.Effects[i]
	sound := db.opts.Broken != BrokenIgnoresRevision
	if sound && (eff.State != recovery.EffectClaimed || eff.Revision != adm.Revision || eff.Holder != adm.Holder) {
		return "", fmt.Errorf("recoverytest: claim moved: %w", refusal.ErrClaimConflict)
	}
	mode, _ := db.fire(SiteAdmit)
	if mode == ModeBefore {
		return "", writeFailed(SiteAdmit)
	}
	eff.State = recovery.EffectAdmitted
	eff.Revision = adm.Revision + 1
	return mode, nil
}

// EndTurn implements [recovery.Store], under the same fence as AdmitDispatch.
func (s *Store) EndTurn(ctx context.Context, turn recovery.TurnRef, status recovery.TurnStatus) (recovery.TurnRecord, error) {
	if err := s.enter(ctx, OpEnd, turn, ""); err != nil {
		return recovery.TurnRecord{}, err
	}
	if !status.Terminal() {
		return recovery.TurnRecord{}, fmt.Errorf("recoverytest: status %q is not terminal: %w", status, refusal.ErrInvalidTurn)
	}
	db := s.db
	unlock, err := db.lockFence(ctx, turn)
	if err != nil {
		return recovery.TurnRecord{}, err
	}
	defer unlock()
	if s.dead.Load() {
		return recovery.TurnRecord{}, ErrCrashed
	}
	site := SiteFinish
	if status == recovery.TurnCancelled {
		site = SiteCancel
	}
	out, mode, err := db.endTurn(turn, status, site)
	if err != nil {
		return recovery.TurnRecord{}, err
	}
	if err := s.ack(site, mode); err != nil {
		return recovery.TurnRecord{}, err
	}
	return out, nil
}

func (db *DB) endTurn(turn recovery.TurnRef, status recovery.TurnStatus, site Site) (recovery.TurnRecord, Mode, error) {
	db.mu.Lock()
	defer db.mu.Unlock()
	rec, ok := db.turns[turn]
	if !ok || rec.Status != recovery.TurnRunning {
		return recovery.TurnRecord{}, "", fmt.Errorf("recoverytest: turn not running: %w", refusal.ErrTurnNotRunning)
	}
	mode, _ := db.fire(site)
	if mode == ModeBefore {
		return recovery.TurnRecord{}, "", writeFailed(site)
	}
	rec.Status = status
	return rec.Clone(), mode, nil
}

func effectIndex(rec *recovery.TurnRecord, id string) int {
	for i := range rec.Effects {
		if rec.Effects[i].ID == id {
			return i
		}
	}
	return -1
}
