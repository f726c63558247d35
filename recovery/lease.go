package recovery

import (
	"time"

	"github.com/Papercusp/chat-protocol-go/refusal"
)

// LeaseError is the claim-conflict refusal caused by another holder's live
// lease on an effect (docs/contract.md section 13): Until is when that lease
// ends, by the clock of the [TurnRecovery] that refused ([Options.Now]). Err is
// the [*refusal.Error] of code claim-conflict, so [errors.Is](err,
// [refusal.ErrClaimConflict]) and [refusal.CodeOf] hold through a LeaseError;
// read Until with [errors.As].
//
// A worker restarted after a crash gets one for the effects its previous
// incarnation held: it waits until Until, then calls Execute again (a
// claim that was never admitted is taken over) or, for an effect that was
// admitted, Reconcile through the host's own lookup. The README shows the
// flow.
type LeaseError struct {
	Until time.Time
	Err   error
}

// Error returns Err's message.
func (e *LeaseError) Error() string { return e.Err.Error() }

// Unwrap returns Err.
func (e *LeaseError) Unwrap() error { return e.Err }

// leaseConflict is the refusal for an effect held by another holder until
// until.
func leaseConflict(msg string, until time.Time) error {
	return &LeaseError{Until: until, Err: refusal.New(refusal.CodeClaimConflict, "", msg)}
}
