// Package recovery is [TurnRecovery]: the component a backend wraps around its
// existing session store so that a worker crash, a lost acknowledgement, a
// reconnect or a model retry never runs a side-effecting tool twice, and a
// cancelled turn never launches anything new (docs/contract.md section 13.1).
//
// Durable-execution engines run effects at least once. [TurnRecovery] launches
// each effect at most once and says so when it cannot know an outcome: the
// host then reconciles through its own idempotency records. Use it for
// effects that must not repeat (a payment, an email, a booking); a pure
// lookup needs none of this.
//
// The package imports only the standard library and the module's leaf
// packages: no validator, no database. Hosts supply the storage.
//
// # The flow
//
//	rec := recovery.New(recovery.Host{Store: s, Authorizer: a, Aborter: ab}, nil)
//	rec.Start(ctx, caller, turn, []string{"call-1", "call-2"}) // host-authorized effect ids
//	res, err := rec.Execute(ctx, caller, recovery.EffectRef{Turn: turn, Effect: "call-1"}, launcher)
//	rec.Cancel(ctx, caller, turn)                              // commits, then calls the abort hook
//	rec.Reconcile(ctx, caller, effect, lookup)                 // after needs-reconciliation
//
// [TurnRecovery.Execute] reads the effect; a completed effect returns its
// stored result. Otherwise it claims the effect (a compare-and-swap on the
// effect's revision), then calls the store's [Admitter.AdmitDispatch], which
// under the fence it shares with cancellation revalidates the caller, the
// running turn and the claim, durably marks the effect admitted and calls
// the launch callback exactly once; the callback asks the host's [Launcher]
// to start the execution. Execute awaits the execution outside the fence and
// stores the result with a compare-and-swap. The Launcher of a synchronous
// tool returns [Go](dispatchCtx, tool), which runs the tool on its own
// goroutine under a context the host's abort hook cancels.
//
// A networked store may also implement [Dispatcher]: Execute then reads and
// claims in one call, and admits and completes through the fence that call
// hands out, so that the normal path costs three round trips. A
// claim-conflict caused by another holder's live lease is a [*LeaseError]
// carrying when that lease ends: a restarted worker waits it out, then
// executes again or reconciles. Ids no store can hold (a NUL, invalid UTF-8)
// are refused with [refusal.ErrInvalidInput] before the store is asked.
//
// # Guarantees and stores
//
// Section 13.1 of the contract lists what [TurnRecovery] guarantees over a
// store that keeps its part, section 13.3 what each [Store] method must
// guarantee, and section 13.4 how a store on PostgreSQL keeps it. The kit
// [github.com/Papercusp/chat-protocol-go/recovery/recoverytest] checks a host's
// store against those rules; [NewMemoryStore] is the store of one process.
//
// # Security considerations
//
// Authority is rechecked at every operation and again inside the admission
// fence, so a caller whose access was revoked after its claim launches
// nothing. Effect ids come from the host at Start, never from model output
// or a client: Execute of any other id is [refusal.ErrUnknownEffect]. A
// model retry, a reconnect, a delayed snapshot or the abort hook cannot
// cause a launch; only AdmitDispatch can, once per effect. The Authorizer
// fails closed: any error refuses. Results are opaque bytes stored and
// returned as given; they are never interpreted. A refusal's Code and Path
// are safe to send to a client; its Message and cause are not (section
// 12.3).
package recovery
