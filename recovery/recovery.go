package recovery

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/Papercusp/chat-protocol-go/observe"
	"github.com/Papercusp/chat-protocol-go/refusal"

	"github.com/Papercusp/chat-protocol-go/internal/wire"
)

// DefaultLease is the claim lease used when [Options.Lease] is 0.
const DefaultLease = 30 * time.Second

// Options tunes a [TurnRecovery]; nil means all defaults.
type Options struct {
	// Worker names this process incarnation in claim holders; it must
	// differ between processes and between restarts of one process
	// (include a boot id). "" means 16 random hex digits. It must be valid
	// UTF-8 without a NUL character (it is stored in every claim's holder):
	// every operation refuses otherwise, with [refusal.ErrInvalidInput].
	Worker string
	// Lease is how long a claim keeps other workers out, a duration; 0
	// means [DefaultLease]. An expired claim that was never admitted may be
	// taken over; an admitted effect never is: after its lease it reports
	// needs-reconciliation instead of claim-conflict. Leases only decide
	// which refusal a caller gets and when an abandoned claim is retried;
	// at-most-once launch never depends on clocks.
	Lease time.Duration
	// Now is the clock used for leases; nil means [time.Now].
	Now func() time.Time
	// Observer receives the moments of every call (turn start and end,
	// abort, effect claim, admission, launch and outcome, reconcile,
	// replay served or refused); nil means silent. [observe.NewSlog](logger)
	// turns on structured logs.
	Observer observe.Observer
}

// TurnRecovery launches each host-authorized effect of a turn at most once,
// whatever crashes, lost acknowledgements, reconnects and model retries
// happen (docs/contract.md section 13.1). It keeps no state of its own beyond
// its options: all state lives in the host's Store, so any number of
// TurnRecovery values in any number of processes may serve the same turns. A
// TurnRecovery is safe for concurrent use.
type TurnRecovery struct {
	host   Host
	worker string
	lease  time.Duration
	now    func() time.Time
	calls  atomic.Uint64
	obs    observe.Observer
}

// New returns a [TurnRecovery] over the host's seams; see Host for what a nil
// seam means. opts may be nil.
func New(host Host, opts *Options) *TurnRecovery {
	r := &TurnRecovery{host: host, lease: DefaultLease, now: time.Now}
	if opts != nil {
		r.worker = opts.Worker
		if opts.Lease > 0 {
			r.lease = opts.Lease
		}
		if opts.Now != nil {
			r.now = opts.Now
		}
		r.obs = opts.Observer
	}
	if r.worker == "" {
		var b [8]byte
		_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+)
		r.worker = hex.EncodeToString(b[:])
	}
	return r
}

// Load returns the committed record of turn after authorizing caller for
// [ActionRead]. Errors: [refusal.ErrInvalidTurn], [refusal.ErrUnauthorized], [refusal.ErrStoreUnavailable],
// [refusal.ErrTurnNotRunning] for a turn that was never started.
func (r *TurnRecovery) Load(ctx context.Context, caller string, turn TurnRef) (TurnRecord, error) {
	st, err := r.begin(ctx, caller, turn, ActionRead)
	if err != nil {
		return TurnRecord{}, err
	}
	return load(ctx, st, turn)
}

// begin validates turn, checks that there is a store and authorizes caller.
func (r *TurnRecovery) begin(ctx context.Context, caller string, turn TurnRef, action Action) (Store, error) {
	if err := turn.Validate(); err != nil {
		return nil, err
	}
	if r.host.Store == nil {
		return nil, refusal.New(refusal.CodeStoreUnavailable, "", "this host offers no turn store: restart recovery is refused")
	}
	if !wire.Storable(r.worker) {
		// The worker name goes into every claim's holder.
		return nil, refusal.New(refusal.CodeInvalidInput, "", "Options.Worker holds a NUL character or invalid UTF-8")
	}
	if err := r.authorize(ctx, caller, turn, action); err != nil {
		return nil, err
	}
	return r.host.Store, nil
}

// beginEffect validates effect and the callback of an Execute or Reconcile
// call (set reports it non-nil, name names it in the refusal), then begins
// action on effect's turn.
func (r *TurnRecovery) beginEffect(ctx context.Context, caller string, effect EffectRef, action Action, set bool, name string) (Store, error) {
	if err := effect.Validate(); err != nil {
		return nil, err
	}
	if !set {
		return nil, refusal.New(refusal.CodeInvalidTurn, "", "nil "+name)
	}
	return r.begin(ctx, caller, effect.Turn, action)
}

// authorize asks the host's Authorizer, failing closed.
func (r *TurnRecovery) authorize(ctx context.Context, caller string, turn TurnRef, action Action) error {
	if r.host.Authorizer == nil {
		return refusal.New(refusal.CodeUnauthorized, "", "no authorizer configured")
	}
	err := r.host.Authorizer.Authorize(ctx, caller, turn, action)
	if err == nil || refusal.CodeOf(err) == refusal.CodeUnauthorized {
		return err
	}
	return refusal.Wrap(refusal.CodeUnauthorized, "", "caller not authorized to "+string(action), err)
}

// holder returns a claim holder unique to this call.
func (r *TurnRecovery) holder() string {
	return r.worker + "/" + strconv.FormatUint(r.calls.Add(1), 10)
}
