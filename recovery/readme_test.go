package recovery_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Papercusp/chat-protocol-go/internal/testkit/readme"
	"github.com/Papercusp/chat-protocol-go/recovery"
	"github.com/Papercusp/chat-protocol-go/refusal"
)

// The README's logging snippet is the wiring of ExampleOptions_observer,
// verbatim, so the example's output is what the README's code logs.
func TestReadmeLoggingIsTheExample(t *testing.T) {
	readme.SnippetIsExample(t, "../README.md", "Observability (observe, otelchat)", "observe_example_test.go")
}

// The README's "Turn recovery" code, verbatim between the markers, with
// the host's own types it names.

// ToolCall is a model's tool call as the host has it.
type ToolCall struct{ ID string }

// Payments is the host's payment service, keyed by the effect id.
type Payments struct{ charged map[string]int }

func (p *Payments) Charge(_ context.Context, key string) (recovery.Result, error) {
	p.charged[key]++
	return recovery.Result{Data: []byte(`{"charged":"` + key + `"}`)}, nil
}

func (p *Payments) LookupByIdempotencyKey(_ context.Context, key string) (recovery.Result, error) {
	if p.charged[key] == 0 {
		return recovery.Result{}, errors.New("no such charge")
	}
	return recovery.Result{Data: []byte(`{"charged":"` + key + `"}`)}, nil
}

// hostTurns are the host's per-turn contexts, its Aborter.
type hostTurns struct{ ctx context.Context }

func (h hostTurns) Context(recovery.TurnRef) context.Context { return h.ctx }

func (hostTurns) Abort(context.Context, recovery.TurnRef, []string) error { return nil }

// README:begin
func runTool(ctx context.Context, rec *recovery.TurnRecovery, user string, turn recovery.TurnRef,
	call ToolCall, runner recovery.Launcher, payments *Payments) (recovery.Result, error) {
	effect := recovery.EffectRef{Turn: turn, Effect: call.ID} // authorized by rec.Start at turn start
	res, err := rec.Execute(ctx, user, effect, runner)        // claim, fenced admission, one launch
	if errors.Is(err, refusal.ErrNeedsReconciliation) {       // outcome unknown: never redispatched
		return rec.Reconcile(ctx, user, effect, func(ctx context.Context, e recovery.EffectRef) (recovery.Result, error) {
			return payments.LookupByIdempotencyKey(ctx, e.Effect) // the host's own record of the effect
		})
	}
	return res, err // the stored result; refusals carry a code (refusal.CodeOf)
}

// README:end

// README:begin
func resume(ctx context.Context, rec *recovery.TurnRecovery, user string, effect recovery.EffectRef,
	runner recovery.Launcher, lookup recovery.VerifyFunc) (recovery.Result, error) {
	for {
		res, err := rec.Execute(ctx, user, effect, runner)
		if le, ok := errors.AsType[*recovery.LeaseError](err); ok { // held by the crashed incarnation
			select {
			case <-time.After(time.Until(le.Until)): // wait out its lease, then ask again
				continue
			case <-ctx.Done():
				return recovery.Result{}, ctx.Err()
			}
		}
		if errors.Is(err, refusal.ErrNeedsReconciliation) { // it was admitted: look it up, never relaunch
			return rec.Reconcile(ctx, user, effect, lookup)
		}
		return res, err // a claim that was never admitted was taken over and launched once
	}
}

// README:end

// readmeWiring is the README's wiring, verbatim between the markers.
func readmeWiring(payments *Payments, turns hostTurns, store recovery.Store, authz recovery.Authorizer, hostname, bootID string) (*recovery.TurnRecovery, recovery.Launcher) {
	// README:begin
	runner := recovery.LauncherFunc(func(_ context.Context, e recovery.EffectRef) (recovery.Execution, error) {
		return recovery.Go(turns.Context(e.Turn), func(ctx context.Context) (recovery.Result, error) {
			return payments.Charge(ctx, e.Effect) // a synchronous tool on its own goroutine
		}), nil
	})
	rec := recovery.New(recovery.Host{
		Store:      store, // pgstore.NewRecoveryStore(pool, nil): CAS per effect + advisory-lock fence
		Authorizer: authz, // the caller's current rights, rechecked inside the fence
		Aborter:    turns, // Cancel commits, then cancels the turn's context: the abort reaches Charge
	}, &recovery.Options{Worker: hostname + "/" + bootID})
	// README:end
	return rec, runner
}

// allow authorizes everyone for everything.
type allow struct{}

func (allow) Authorize(context.Context, string, recovery.TurnRef, recovery.Action) error { return nil }

func TestReadmeRecovery(t *testing.T) {
	ctx := t.Context()
	payments := &Payments{charged: map[string]int{}}
	rec, runner := readmeWiring(payments, hostTurns{ctx}, recovery.NewMemoryStore(nil), allow{}, "host-1", "boot-1")
	turn := recovery.TurnRef{Conversation: "c-1", Turn: "t-1"}
	_, err := rec.Start(ctx, "user-7", turn, []string{"call-1", "call-2"})
	require.NoError(t, err)
	res, err := runTool(ctx, rec, "user-7", turn, ToolCall{ID: "call-1"}, runner, payments)
	require.NoError(t, err)
	assert.JSONEq(t, `{"charged":"call-1"}`, string(res.Data))
	res, err = resume(ctx, rec, "user-7", recovery.EffectRef{Turn: turn, Effect: "call-2"}, runner, func(ctx context.Context, e recovery.EffectRef) (recovery.Result, error) {
		return payments.LookupByIdempotencyKey(ctx, e.Effect)
	})
	require.NoError(t, err)
	assert.JSONEq(t, `{"charged":"call-2"}`, string(res.Data))
	res, err = runTool(ctx, rec, "user-7", turn, ToolCall{ID: "call-1"}, runner, payments)
	require.NoError(t, err)
	assert.JSONEq(t, `{"charged":"call-1"}`, string(res.Data), "the stored result")
	assert.Equal(t, map[string]int{"call-1": 1, "call-2": 1}, payments.charged, "each launched once")
}
