package recovery_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/Papercusp/chat-protocol-go/recovery"
	"github.com/Papercusp/chat-protocol-go/recovery/recoverytest"
	"github.com/Papercusp/chat-protocol-go/refusal"
)

// A host wires its store, authorization, abort hook and replay window, then
// executes each authorized effect through TurnRecovery. Here the fakes of
// recoverytest stand in for them; a retry reuses the stored result.
func Example() {
	ctx := context.Background()
	db := recoverytest.NewDB(nil)
	host := recoverytest.NewHost(&recoverytest.HostOptions{
		Outcome: func(e recovery.EffectRef) (recovery.Result, error) {
			return recovery.Result{Data: []byte(`{"charged":true}`)}, nil
		},
	})
	turn := recovery.TurnRef{Conversation: "conv-7", Turn: "turn-3"}
	host.Grant("user-42", turn)

	rec := recovery.New(recovery.Host{Store: db.Open("worker-1"), Authorizer: host, Aborter: host}, nil)
	if _, err := rec.Start(ctx, "user-42", turn, []string{"call-charge"}); err != nil {
		fmt.Println(err)
		return
	}
	charge := recovery.EffectRef{Turn: turn, Effect: "call-charge"}
	for range 2 { // the model retries the tool call
		res, err := rec.Execute(ctx, "user-42", charge, host)
		fmt.Println(string(res.Data), err)
	}
	fmt.Println("launches:", host.Launches(charge))

	_, err := rec.Execute(ctx, "user-42", recovery.EffectRef{Turn: turn, Effect: "call-invented"}, host)
	fmt.Println(errors.Is(err, refusal.ErrUnknownEffect))
	// Output:
	// {"charged":true} <nil>
	// {"charged":true} <nil>
	// launches: 1
	// true
}

// After needs-reconciliation, the host settles the effect with its own
// idempotency lookup; Reconcile calls it once no launch can be in progress.
func ExampleTurnRecovery_Reconcile() {
	ctx := context.Background()
	db := recoverytest.NewDB(nil)
	host := recoverytest.NewHost(&recoverytest.HostOptions{
		Outcome: func(recovery.EffectRef) (recovery.Result, error) {
			return recovery.Result{}, errors.New("gateway timeout: outcome unknown")
		},
	})
	turn := recovery.TurnRef{Conversation: "conv-7", Turn: "turn-4"}
	host.Grant("user-42", turn)
	rec := recovery.New(recovery.Host{Store: db.Open("worker-1"), Authorizer: host}, nil)
	_, _ = rec.Start(ctx, "user-42", turn, []string{"call-email"})
	email := recovery.EffectRef{Turn: turn, Effect: "call-email"}

	_, err := rec.Execute(ctx, "user-42", email, host)
	fmt.Println(refusal.CodeOf(err))
	_, err = rec.Execute(ctx, "user-42", email, host) // a model retry never redispatches
	fmt.Println(refusal.CodeOf(err), host.Launches(email))

	lookup := func(ctx context.Context, e recovery.EffectRef) (recovery.Result, error) {
		return recovery.Result{Data: []byte(`{"sent":true}`)}, nil // found by idempotency key
	}
	res, err := rec.Reconcile(ctx, "user-42", email, lookup)
	fmt.Println(string(res.Data), err)
	// Output:
	// needs-reconciliation
	// needs-reconciliation 1
	// {"sent":true} <nil>
}

// A tool that runs synchronously needs no Execution type of its own: Go
// runs it on its own goroutine under the dispatch context the host owns,
// which the host's abort hook cancels.
func ExampleGo() {
	ctx := context.Background()
	db := recoverytest.NewDB(nil)
	auth := recoverytest.NewHost(nil)
	turn := recovery.TurnRef{Conversation: "conv-7", Turn: "turn-5"}
	auth.Grant("user-42", turn)

	dispatch, abort := context.WithCancel(context.Background()) // the host's, per turn: its Aborter calls abort
	defer abort()
	charge := func(ctx context.Context, key string) (recovery.Result, error) { // the host's synchronous tool
		return recovery.Result{Data: []byte(`{"charged":"` + key + `"}`)}, ctx.Err()
	}
	launcher := recovery.LauncherFunc(func(_ context.Context, e recovery.EffectRef) (recovery.Execution, error) {
		return recovery.Go(dispatch, func(ctx context.Context) (recovery.Result, error) { return charge(ctx, e.Effect) }), nil
	})

	rec := recovery.New(recovery.Host{Store: db.Open("worker-1"), Authorizer: auth}, nil)
	if _, err := rec.Start(ctx, "user-42", turn, []string{"call-charge"}); err != nil {
		fmt.Println(err)
		return
	}
	res, err := rec.Execute(ctx, "user-42", recovery.EffectRef{Turn: turn, Effect: "call-charge"}, launcher)
	fmt.Println(string(res.Data), err)
	// Output:
	// {"charged":"call-charge"} <nil>
}

// A worker restarted right after a crash waits out the lease its previous
// incarnation held, then retries; an effect that had been admitted is
// never relaunched: Reconcile looks it up through the host's own records.
func ExampleLeaseError() {
	resume := func(ctx context.Context, rec *recovery.TurnRecovery, effect recovery.EffectRef,
		runner recovery.Launcher, lookup recovery.VerifyFunc) (recovery.Result, error) {
		for {
			res, err := rec.Execute(ctx, "user-7", effect, runner)
			if le, ok := errors.AsType[*recovery.LeaseError](err); ok {
				select {
				case <-time.After(time.Until(le.Until)):
					continue
				case <-ctx.Done():
					return recovery.Result{}, ctx.Err()
				}
			}
			if errors.Is(err, refusal.ErrNeedsReconciliation) {
				return rec.Reconcile(ctx, "user-7", effect, lookup)
			}
			return res, err
		}
	}
	_ = resume
}
