package recovery

import "context"

// Action is what a caller asks to do with a turn; Authorizer decides per
// action.
type Action string

// The actions [TurnRecovery] authorizes.
const (
	ActionStart     Action = "start"
	ActionExecute   Action = "execute"
	ActionCancel    Action = "cancel"
	ActionFinish    Action = "finish"
	ActionReconcile Action = "reconcile"
	ActionRead      Action = "read"
)

// Authorizer supplies the caller's current authorization (docs/contract.md
// section 13.1). caller is the host's opaque principal id (user, API key,
// service), as the host passes it to [TurnRecovery]. Authorize returns nil to
// allow, or an error to refuse; [TurnRecovery] turns any error into one
// matching [refusal.ErrUnauthorized], so a failure of the host's authorization store
// fails closed. It must read current state, never a cached grant, and be safe
// for concurrent use.
type Authorizer interface {
	Authorize(ctx context.Context, caller string, turn TurnRef, action Action) error
}

// Aborter is the host's abort hook for host-owned execution (docs/contract.md
// section 13.1). [TurnRecovery.Cancel] calls Abort after the cancellation
// committed, with the turn's in-flight effects (admitted, without a stored
// result); the host cancels the model stream and those executions through the
// contexts it gave them. Abort never authorizes anything. It must be safe for
// concurrent use, tolerate effects it does not know, and be idempotent:
// Cancel of a cancelled turn calls it again. If a Store lost its fence while
// launch ran (its connection died), Abort may run before that Launch returns:
// the host must also stop an execution of an aborted turn that registers
// after Abort.
type Aborter interface {
	Abort(ctx context.Context, turn TurnRef, inFlight []string) error
}

// Launcher starts the host-owned execution of an admitted effect.
//
// Launch is called at most once per effect, from inside
// [Admitter.AdmitDispatch] while the fence is held: it must start the execution
// (a goroutine, a job, a request) and return quickly, without waiting for the
// outcome. ctx is valid only for the Launch call. The execution must run
// under a context the host owns and its Aborter cancels (docs/contract.md
// section 13.1: the dispatch context belongs to the host's execution), never
// under ctx or the context of the [TurnRecovery.Execute] call. An error from
// Launch means the host does not know whether the effect started: the effect
// needs reconciliation. Launchers must be safe for concurrent use. For a tool
// that runs synchronously, Go starts it and gives its Execution.
type Launcher interface {
	Launch(ctx context.Context, effect EffectRef) (Execution, error)
}

// Execution is a started effect. Wait blocks until its outcome is known or
// ctx ends. It returns the Result, which may describe a definite failure of
// the tool, or an error when the outcome is unknown (a timeout, a lost
// response, an abort): the effect then needs reconciliation. Wait may be
// called from another goroutine than Launch.
type Execution interface {
	Wait(ctx context.Context) (Result, error)
}

// LauncherFunc adapts a function to Launcher.
type LauncherFunc func(ctx context.Context, effect EffectRef) (Execution, error)

// Launch calls f.
func (f LauncherFunc) Launch(ctx context.Context, effect EffectRef) (Execution, error) {
	return f(ctx, effect)
}

// Host gathers the adapter seams a host supplies (docs/contract.md section
// 13.1): its store with the compare-and-swap and, through Admitter, the
// admission fence; the caller authorization; and the abort hook.
//
// A nil Authorizer refuses every call with [refusal.ErrUnauthorized]. A nil Store
// refuses every turn operation with [refusal.ErrStoreUnavailable]: the lightweight
// profile that offers connection replay and explicitly refuses restart
// recovery ([NewMemoryStore] keeps the guarantees within one process).
// A nil Aborter means there is nothing to abort.
type Host struct {
	Store      Store
	Authorizer Authorizer
	Aborter    Aborter
}
