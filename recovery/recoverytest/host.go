package recoverytest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/Papercusp/chat-protocol-go/recovery"
	"github.com/Papercusp/chat-protocol-go/refusal"
)

// ErrAborted is what an Exec's Wait returns once the host's abort hook
// reached it: the effect's outcome is unknown.
var ErrAborted = errors.New("recoverytest: execution aborted")

// HostOptions configures a Host; nil means executions that run until a test
// ends them.
type HostOptions struct {
	// Outcome, when set, ends each execution as it launches with the
	// result or error it returns.
	Outcome func(effect recovery.EffectRef) (recovery.Result, error)
	// LaunchErr, when set, makes Launch return its non-nil error (after
	// counting the launch: the host cannot tell whether it started).
	LaunchErr func(effect recovery.EffectRef) error
	// OnLaunch, when set, runs inside Launch, so under the admission
	// fence, before Launch returns.
	OnLaunch func(ctx context.Context, effect recovery.EffectRef)
	// AbortErr, when set, is returned by Abort after it aborted.
	AbortErr error
}

// Host is a fake host: a [recovery.Authorizer] over explicit grants, a
// [recovery.Launcher] that counts launches per effect and keeps each
// execution, and a [recovery.Aborter] that cancels the executions of a turn.
// It is safe for concurrent use.
type Host struct {
	opts HostOptions

	mu       sync.Mutex
	grants   map[grant]bool
	launches map[recovery.EffectRef]int
	execs    map[recovery.EffectRef]*Exec
	aborts   []AbortCall
}

type grant struct {
	caller string
	turn   recovery.TurnRef
}

// AbortCall is one call of [Host.Abort].
type AbortCall struct {
	Turn     recovery.TurnRef
	InFlight []string
}

var (
	_ recovery.Authorizer = (*Host)(nil)
	_ recovery.Launcher   = (*Host)(nil)
	_ recovery.Aborter    = (*Host)(nil)
)

// NewHost returns a host without grants, launches or frames; opts may be
// nil.
func NewHost(opts *HostOptions) *Host {
	h := &Host{
		grants:   map[grant]bool{},
		launches: map[recovery.EffectRef]int{},
		execs:    map[recovery.EffectRef]*Exec{},
	}
	if opts != nil {
		h.opts = *opts
	}
	return h
}

// Grant gives caller authority over turn.
func (h *Host) Grant(caller string, turn recovery.TurnRef) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.grants[grant{caller, turn}] = true
}

// Revoke withdraws caller's authority over turn.
func (h *Host) Revoke(caller string, turn recovery.TurnRef) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.grants, grant{caller, turn})
}

// Authorize implements [recovery.Authorizer]: any action is allowed to a
// caller granted the turn, none to anyone else.
func (h *Host) Authorize(_ context.Context, caller string, turn recovery.TurnRef, action recovery.Action) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.grants[grant{caller, turn}] {
		return fmt.Errorf("recoverytest: %q may not %s: %w", caller, action, refusal.ErrUnauthorized)
	}
	return nil
}

// Launch implements [recovery.Launcher]: it counts the launch, starts an
// execution under a context the host owns (not ctx) and returns it.
func (h *Host) Launch(ctx context.Context, effect recovery.EffectRef) (recovery.Execution, error) {
	exec := newExec(effect)
	h.mu.Lock()
	h.launches[effect]++
	h.execs[effect] = exec
	h.mu.Unlock()
	if h.opts.OnLaunch != nil {
		h.opts.OnLaunch(ctx, effect)
	}
	if h.opts.LaunchErr != nil {
		if err := h.opts.LaunchErr(effect); err != nil {
			return nil, err
		}
	}
	if h.opts.Outcome != nil {
		res, err := h.opts.Outcome(effect)
		exec.end(res, err)
	}
	return exec, nil
}

// Launches returns how many times effect was launched.
func (h *Host) Launches(effect recovery.EffectRef) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.launches[effect]
}

// MaxLaunches returns the largest launch count of any effect.
func (h *Host) MaxLaunches() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := 0
	for _, c := range h.launches {
		n = max(n, c)
	}
	return n
}

// Exec returns the latest execution of effect, or nil.
func (h *Host) Exec(effect recovery.EffectRef) *Exec {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.execs[effect]
}

// Abort implements [recovery.Aborter]: it records the call and cancels the
// context of every execution of the turn.
func (h *Host) Abort(_ context.Context, turn recovery.TurnRef, inFlight []string) error {
	h.mu.Lock()
	h.aborts = append(h.aborts, AbortCall{Turn: turn, InFlight: slices.Clone(inFlight)})
	var execs []*Exec
	for ref, e := range h.execs {
		if ref.Turn == turn {
			execs = append(execs, e)
		}
	}
	h.mu.Unlock()
	for _, e := range execs {
		e.cancel()
	}
	return h.opts.AbortErr
}

// Aborts returns the calls of Abort so far.
func (h *Host) Aborts() []AbortCall {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.aborts)
}

// Exec is one execution the fake host launched. Its context belongs to the
// host, not to whoever launched or awaits it; [Host.Abort] cancels it.
type Exec struct {
	Effect recovery.EffectRef

	ctx    context.Context // host-owned dispatch context, as a real host keeps per execution
	cancel context.CancelFunc
	done   chan struct{}
	once   sync.Once
	res    recovery.Result
	err    error
}

func newExec(effect recovery.EffectRef) *Exec {
	ctx, cancel := context.WithCancel(context.Background())
	return &Exec{Effect: effect, ctx: ctx, cancel: cancel, done: make(chan struct{})}
}

// Context returns the execution's dispatch context: the one the host's
// abort hook cancels.
func (e *Exec) Context() context.Context { return e.ctx }

// Complete ends the execution with res; later calls do nothing.
func (e *Exec) Complete(res recovery.Result) { e.end(res, nil) }

// Fail ends the execution with an unknown outcome; later calls do nothing.
func (e *Exec) Fail(err error) { e.end(recovery.Result{}, err) }

func (e *Exec) end(res recovery.Result, err error) {
	e.once.Do(func() {
		e.res, e.err = res, err
		close(e.done)
	})
}

// Wait implements [recovery.Execution]: the outcome once the execution ended,
// [ErrAborted] once its context was cancelled, or ctx's error.
func (e *Exec) Wait(ctx context.Context) (recovery.Result, error) {
	select {
	case <-e.done: // an ended execution reports its outcome even if aborted later
		return e.res, e.err
	default:
	}
	select {
	case <-e.done:
		return e.res, e.err
	case <-e.ctx.Done():
		return recovery.Result{}, ErrAborted
	case <-ctx.Done():
		return recovery.Result{}, ctx.Err()
	}
}
