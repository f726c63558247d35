package recovery_test

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"testing"
	"time"

	"github.com/Papercusp/chat-protocol-go/internal/kit/fakeclock"
	"github.com/Papercusp/chat-protocol-go/refusal"

	"pgregory.net/rapid"

	"github.com/Papercusp/chat-protocol-go/recovery"
	"github.com/Papercusp/chat-protocol-go/recovery/recoverytest"
)

// TestStateMachine drives TurnRecovery over the fake store and host with
// random sequences of operations, failpoints, crashes, clock jumps and
// revocations (pgregory.net/rapid), and compares every answer and the
// stored state with a plain sequential model written from the contract.
func TestStateMachine(t *testing.T) {
	leakCheck(t)
	// 100 sequences, rapid's default, miss rare failpoint combinations;
	// 2,000 take a fraction of a second. An explicit -rapid.checks wins.
	if f := flag.Lookup("rapid.checks"); f != nil && f.Value.String() == f.DefValue {
		_ = f.Value.Set("2000")
		defer func() { _ = f.Value.Set(f.DefValue) }()
	}
	rapid.Check(t, func(rt *rapid.T) {
		m := newMachine(rt)
		rt.Repeat(map[string]func(*rapid.T){
			"start":     m.start,
			"execute":   m.execute,
			"cancel":    m.cancel,
			"finish":    m.finish,
			"reconcile": m.reconcile,
			"advance":   m.advance,
			"authority": m.authority,
			"":          m.invariant,
		})
	})
}

// The model.
type mEffect struct {
	state    recovery.EffectState
	result   string
	lease    time.Time
	launches int
}

type machine struct {
	ctx   context.Context
	db    *recoverytest.DB
	host  *recoverytest.Host
	clock *fakeclock.Clock
	rec   *recovery.TurnRecovery
	store *recoverytest.Store
	n     int

	outcome string // how the next execution ends: ok, launch-error, wait-error

	started bool
	status  recovery.TurnStatus
	effects map[string]*mEffect
	revoked bool
}

var machineEffects = []string{"a", "b"}

const machineLease = time.Minute

func newMachine(rt *rapid.T) *machine {
	m := &machine{ctx: context.Background(), clock: newClock(), effects: map[string]*mEffect{}}
	m.db = recoverytest.NewDB(nil)
	m.host = recoverytest.NewHost(&recoverytest.HostOptions{
		LaunchErr: func(recovery.EffectRef) error {
			if m.outcome == "launch-error" {
				return errors.New("launch error")
			}
			return nil
		},
		Outcome: func(e recovery.EffectRef) (recovery.Result, error) {
			if m.outcome == "wait-error" {
				return recovery.Result{}, errors.New("outcome unknown")
			}
			return result("ran:" + e.Effect), nil
		},
	})
	m.host.Grant(caller, turn)
	for _, id := range machineEffects {
		m.effects[id] = &mEffect{state: recovery.EffectPending}
	}
	m.restart()
	return m
}

// restart replaces the worker with a fresh process over the same database.
func (m *machine) restart() {
	m.n++
	m.store = m.db.Open(fmt.Sprintf("w%d", m.n))
	m.rec = recovery.New(recovery.Host{Store: m.store, Authorizer: m.host, Aborter: m.host},
		&recovery.Options{Worker: m.store.Worker(), Lease: machineLease, Now: m.clock.Now})
}

// after clears unfired failpoints and replaces a crashed worker.
func (m *machine) after() {
	m.db.Disarm()
	if m.store.Crashed() {
		m.restart()
	}
}

func (m *machine) arm(rt *rapid.T, sites ...recoverytest.Site) recoverytest.Failpoint {
	choices := []recoverytest.Failpoint{""}
	for _, s := range sites {
		for _, mode := range []recoverytest.Mode{recoverytest.ModeBefore, recoverytest.ModeAfter, recoverytest.ModeAckLost} {
			choices = append(choices, recoverytest.Name(s, mode))
		}
	}
	fp := rapid.SampledFrom(choices).Draw(rt, "failpoint")
	if fp != "" {
		if err := m.db.Arm(fp); err != nil {
			rt.Fatal(err)
		}
	}
	return fp
}

// want compares an error with the model's expected code ("" for nil).
func want(rt *rapid.T, op string, err error, code refusal.Code) {
	rt.Helper()
	if refusal.CodeOf(err) != code || (code == "" && err != nil) {
		rt.Fatalf("%s: got %v, model expects %q", op, err, code)
	}
}

func (m *machine) gate() refusal.Code {
	switch {
	case m.revoked:
		return refusal.CodeUnauthorized
	case !m.started:
		return refusal.CodeTurnNotRunning
	}
	return ""
}

func (m *machine) start(rt *rapid.T) {
	fp := m.arm(rt, recoverytest.SiteStart)
	_, err := m.rec.Start(m.ctx, caller, turn, machineEffects)
	defer m.after()
	var code refusal.Code
	switch {
	case m.revoked:
		code = refusal.CodeUnauthorized
	case m.started:
	case fp == "start.before":
		code = refusal.CodeCheckpointWriteFailed
	case fp == "start.after":
		code, m.started, m.status = refusal.CodeNeedsReconciliation, true, recovery.TurnRunning
	default:
		m.started, m.status = true, recovery.TurnRunning
	}
	want(rt, "Start", err, code)
}

func (m *machine) execute(rt *rapid.T) {
	id := rapid.SampledFrom(machineEffects).Draw(rt, "effect")
	m.outcome = rapid.SampledFrom([]string{"ok", "ok", "launch-error", "wait-error"}).Draw(rt, "outcome")
	fp := m.arm(rt, recoverytest.SiteClaim, recoverytest.SiteAdmit, recoverytest.SiteComplete, recoverytest.SiteMark)
	res, err := m.rec.Execute(m.ctx, caller, ref(id), m.host)
	defer m.after()
	code, wantRes := m.modelExecute(id, fp)
	want(rt, "Execute("+id+") with "+string(fp), err, code)
	if code == "" && string(res.Data) != wantRes {
		rt.Fatalf("Execute(%s) = %q, model expects %q", id, res.Data, wantRes)
	}
}

// modelExecute is the contract of Execute, step by step.
func (m *machine) modelExecute(id string, fp recoverytest.Failpoint) (refusal.Code, string) {
	if c := m.gate(); c != "" {
		return c, ""
	}
	e, now := m.effects[id], m.clock.Now()
	switch e.state {
	case recovery.EffectCompleted:
		return "", e.result
	case recovery.EffectNeedsReconciliation:
		return refusal.CodeNeedsReconciliation, ""
	case recovery.EffectAdmitted:
		if now.Before(e.lease) {
			return refusal.CodeClaimConflict, ""
		}
		return refusal.CodeNeedsReconciliation, ""
	case recovery.EffectClaimed:
		if now.Before(e.lease) {
			return refusal.CodeClaimConflict, ""
		}
	}
	if m.status != recovery.TurnRunning {
		return refusal.CodeTurnNotRunning, ""
	}
	// Claim.
	switch fp {
	case "claim.before":
		return refusal.CodeCheckpointWriteFailed, ""
	case "claim.after", "claim.ack-lost":
		e.state, e.lease = recovery.EffectClaimed, now.Add(machineLease)
		return refusal.CodeNeedsReconciliation, ""
	}
	e.state, e.lease = recovery.EffectClaimed, now.Add(machineLease)
	// Admission.
	switch fp {
	case "admit.before":
		return refusal.CodeCheckpointWriteFailed, ""
	case "admit.after", "admit.ack-lost":
		e.state = recovery.EffectAdmitted
		return refusal.CodeNeedsReconciliation, ""
	}
	e.state = recovery.EffectAdmitted
	e.launches++
	if m.outcome != "ok" {
		// The needs-reconciliation mark.
		if fp != "mark.before" {
			e.state = recovery.EffectNeedsReconciliation
		}
		return refusal.CodeNeedsReconciliation, ""
	}
	// Completion.
	switch fp {
	case "complete.before":
		return refusal.CodeCheckpointWriteFailed, ""
	case "complete.after":
		e.state, e.result = recovery.EffectCompleted, "ran:"+id
		return refusal.CodeNeedsReconciliation, "" // the crashed worker cannot read it back
	}
	e.state, e.result = recovery.EffectCompleted, "ran:"+id
	return "", e.result
}

func (m *machine) end(rt *rapid.T, op string, status recovery.TurnStatus, site recoverytest.Site, call func() error) {
	fp := m.arm(rt, site)
	err := call()
	defer m.after()
	var code refusal.Code
	switch {
	case m.gate() != "":
		code = m.gate()
	case m.status == status:
	case m.status != recovery.TurnRunning:
		code = refusal.CodeTurnNotRunning
	case fp == recoverytest.Name(site, recoverytest.ModeBefore):
		code = refusal.CodeCheckpointWriteFailed
	case fp == recoverytest.Name(site, recoverytest.ModeAfter):
		code, m.status = refusal.CodeNeedsReconciliation, status
	default:
		m.status = status
	}
	want(rt, op, err, code)
}

func (m *machine) cancel(rt *rapid.T) {
	m.end(rt, "Cancel", recovery.TurnCancelled, recoverytest.SiteCancel, func() error { return m.rec.Cancel(m.ctx, caller, turn) })
}

func (m *machine) finish(rt *rapid.T) {
	m.end(rt, "Finish", recovery.TurnCompleted, recoverytest.SiteFinish, func() error {
		return m.rec.Finish(m.ctx, caller, turn, recovery.TurnCompleted)
	})
}

func (m *machine) reconcile(rt *rapid.T) {
	id := rapid.SampledFrom(machineEffects).Draw(rt, "effect")
	value := rapid.SampledFrom([]string{"verified-1", "verified-2"}).Draw(rt, "verified")
	fp := m.arm(rt, recoverytest.SiteReconcile)
	res, err := m.rec.Reconcile(m.ctx, caller, ref(id), verifiedAs(value))
	defer m.after()
	var code refusal.Code
	wantRes := ""
	e := m.effects[id]
	switch {
	case m.gate() != "":
		code = m.gate()
	case e.state == recovery.EffectCompleted:
		wantRes = e.result
	case e.state == recovery.EffectAdmitted && m.clock.Now().Before(e.lease):
		code = refusal.CodeClaimConflict
	case fp == "reconcile.before":
		code = refusal.CodeCheckpointWriteFailed
	case fp == "reconcile.after":
		code, e.state, e.result = refusal.CodeNeedsReconciliation, recovery.EffectCompleted, value
	default:
		e.state, e.result, wantRes = recovery.EffectCompleted, value, value
	}
	want(rt, "Reconcile("+id+") with "+string(fp), err, code)
	if code == "" && string(res.Data) != wantRes {
		rt.Fatalf("Reconcile(%s) = %q, model expects %q", id, res.Data, wantRes)
	}
}

func (m *machine) advance(rt *rapid.T) {
	m.clock.Advance(time.Duration(rapid.IntRange(0, 120).Draw(rt, "seconds")) * time.Second)
}

func (m *machine) authority(rt *rapid.T) {
	m.revoked = rapid.Bool().Draw(rt, "revoked")
	if m.revoked {
		m.host.Revoke(caller, turn)
	} else {
		m.host.Grant(caller, turn)
	}
}

// invariant compares the store and the host with the model.
func (m *machine) invariant(rt *rapid.T) {
	rec, ok := m.db.Snapshot(turn)
	if ok != m.started {
		rt.Fatalf("turn stored: %v, model: %v", ok, m.started)
	}
	if ok && rec.Status != m.status {
		rt.Fatalf("status %s, model %s", rec.Status, m.status)
	}
	for _, id := range machineEffects {
		e := m.effects[id]
		if got := m.host.Launches(ref(id)); got != e.launches || got > 1 {
			rt.Fatalf("effect %s launched %d times, model %d", id, got, e.launches)
		}
		if !ok {
			continue
		}
		s, _ := rec.Effect(id)
		if s.State != e.state || (e.state == recovery.EffectCompleted && string(s.Result.Data) != e.result) {
			rt.Fatalf("effect %s is %s %q, model %s %q", id, s.State, s.Result.Data, e.state, e.result)
		}
	}
}
