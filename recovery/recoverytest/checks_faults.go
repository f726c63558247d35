package recoverytest

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/Papercusp/chat-protocol-go/recovery"
	"github.com/Papercusp/chat-protocol-go/refusal"
)

// failpointChecks returns one check per failpoint: the store must report
// each injected fault truthfully (issue 6: before the write, after it, after
// it with the acknowledgement lost).
func failpointChecks() []check {
	var cs []check
	for _, fp := range Failpoints() {
		cs = append(cs, check{Name: "failpoint/" + string(fp), Run: func(ctx context.Context, s Subject, turn recovery.TurnRef) error {
			return checkFailpoint(ctx, s, turn, fp)
		}})
	}
	return cs
}

func splitFailpoint(fp Failpoint) (Site, Mode) {
	site, mode, _ := strings.Cut(string(fp), ".")
	return Site(site), Mode(mode)
}

// faultSetup brings turn to the state in which the write of site is next.
func faultSetup(ctx context.Context, st recovery.Store, adm recovery.Admitter, turn recovery.TurnRef, site Site) error {
	if site == SiteStart {
		return nil
	}
	if err := st.CreateTurn(ctx, newTurn(turn, "a", "b")); err != nil {
		return fmt.Errorf("CreateTurn: %w", err)
	}
	switch site {
	case SiteAdmit, SiteComplete, SiteMark:
		if err := st.CompareAndSwapEffect(ctx, turn, 1, claimed("a", 2, "h")); err != nil {
			return fmt.Errorf("claim: %w", err)
		}
	}
	if site == SiteComplete || site == SiteMark {
		if err := adm.AdmitDispatch(ctx, admission(turn, "a", 2, "h"), func(context.Context) error { return nil }); err != nil {
			return fmt.Errorf("AdmitDispatch: %w", err)
		}
	}
	return nil
}

func admittedA() recovery.EffectRecord {
	e := claimed("a", 3, "h")
	e.State = recovery.EffectAdmitted
	return e
}

// faultWrite performs the write of site.
func faultWrite(ctx context.Context, st recovery.Store, adm recovery.Admitter, turn recovery.TurnRef, site Site, c *counter) error {
	switch site {
	case SiteStart:
		return st.CreateTurn(ctx, newTurn(turn, "a", "b"))
	case SiteClaim:
		return st.CompareAndSwapEffect(ctx, turn, 1, claimed("a", 2, "h"))
	case SiteAdmit:
		return adm.AdmitDispatch(ctx, admission(turn, "a", 2, "h"), c.launch)
	case SiteComplete:
		return st.CompareAndSwapEffect(ctx, turn, 3, completed(admittedA(), "r"))
	case SiteMark:
		mark := admittedA()
		mark.Revision, mark.State = 4, recovery.EffectNeedsReconciliation
		return st.CompareAndSwapEffect(ctx, turn, 3, mark)
	case SiteReconcile:
		v := completed(recovery.EffectRecord{ID: "a", Revision: 1, State: recovery.EffectPending}, "v")
		v.Reconciled = true
		return st.CompareAndSwapEffect(ctx, turn, 1, v)
	case SiteCancel:
		_, err := st.EndTurn(ctx, turn, recovery.TurnCancelled)
		return err
	case SiteFinish:
		_, err := st.EndTurn(ctx, turn, recovery.TurnCompleted)
		return err
	}
	_, err := st.LoadTurn(ctx, turn)
	return err
}

// faultApplied reports whether the write of site is visible through st.
func faultApplied(ctx context.Context, st recovery.Store, turn recovery.TurnRef, site Site) (bool, error) {
	rec, err := st.LoadTurn(ctx, turn)
	if site == SiteStart && errors.Is(err, refusal.ErrTurnNotRunning) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("LoadTurn after the fault: %w", err)
	}
	a, _ := rec.Effect("a")
	switch site {
	case SiteClaim:
		return a.State == recovery.EffectClaimed && a.Revision == 2, nil
	case SiteAdmit:
		return a.State == recovery.EffectAdmitted && a.Revision == 3, nil
	case SiteComplete:
		return a.State == recovery.EffectCompleted && a.Revision == 4 && !a.Reconciled, nil
	case SiteMark:
		return a.State == recovery.EffectNeedsReconciliation && a.Revision == 4, nil
	case SiteReconcile:
		return a.State == recovery.EffectCompleted && a.Revision == 2 && a.Reconciled, nil
	case SiteCancel:
		return rec.Status == recovery.TurnCancelled, nil
	case SiteFinish:
		return rec.Status == recovery.TurnCompleted, nil
	}
	return true, nil // SiteStart: the turn exists
}

func checkFailpoint(ctx context.Context, s Subject, turn recovery.TurnRef, fp Failpoint) error {
	site, mode := splitFailpoint(fp)
	if s.Arm == nil || (mode == ModeAfter && s.Reopen == nil) {
		return errSkip
	}
	st, adm := s.Store, admitter(s)
	if err := faultSetup(ctx, st, adm, turn, site); err != nil {
		return err
	}
	if err := s.Arm(fp); err != nil {
		return fmt.Errorf("%w: %w", errSkip, err)
	}
	var c counter
	err := faultWrite(ctx, st, adm, turn, site, &c)
	if site == SiteLoad {
		if err == nil {
			return errors.New("LoadTurn hid an injected read failure")
		}
		_, again := st.LoadTurn(ctx, turn)
		return again
	}
	reader := st
	if mode == ModeAfter {
		fresh, rerr := s.Reopen()
		if rerr != nil {
			return fmt.Errorf("reopening the store: %w", rerr)
		}
		reader = fresh
	}
	applied, aerr := faultApplied(ctx, reader, turn, site)
	switch {
	case aerr != nil:
		return aerr
	case c.n.Load() != 0:
		return fmt.Errorf("AdmitDispatch launched although its admission mark hit %s", fp)
	case mode == ModeBefore && !errors.Is(err, refusal.ErrCheckpointWriteFailed):
		return fmt.Errorf("a write that was not applied returned %v, want checkpoint-write-failed", err)
	case mode == ModeBefore && applied:
		return errors.New("a write reported as not applied was applied")
	case mode != ModeBefore && !applied:
		return errors.New("the write was not applied")
	case mode != ModeBefore && err == nil:
		return errors.New("the store reported success for a write whose acknowledgement was lost")
	case mode == ModeAckLost && outcomeOf(err) != outUnknown:
		return fmt.Errorf("a write whose acknowledgement was lost returned %v, which claims a definite outcome", err)
	}
	return nil
}
