package recoverytest

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/Papercusp/chat-protocol-go/recovery"
	"github.com/Papercusp/chat-protocol-go/refusal"
)

// fenceProbe is how long the fence checks wait for an EndTurn that a sound
// store must keep blocked; an unfenced store lets it return in far less.
const fenceProbe = 100 * time.Millisecond

func allow(context.Context) error { return nil }

func admission(turn recovery.TurnRef, id string, rev uint64, holder string) recovery.Admission {
	return recovery.Admission{Effect: recovery.EffectRef{Turn: turn, Effect: id}, Revision: rev, Holder: holder, Authorize: allow}
}

// counter is a launch callback that counts its calls.
type counter struct{ n atomic.Int32 }

func (c *counter) launch(context.Context) error { c.n.Add(1); return nil }

func admitter(s Subject) recovery.Admitter { return s.Store.(recovery.Admitter) }

// onClaimed runs check on a turn that setupClaimed prepared.
func onClaimed(check func(ctx context.Context, s Subject, turn recovery.TurnRef) error) func(ctx context.Context, s Subject, turn recovery.TurnRef) error {
	return func(ctx context.Context, s Subject, turn recovery.TurnRef) error {
		if err := setupClaimed(ctx, s.Store, turn); err != nil {
			return err
		}
		return check(ctx, s, turn)
	}
}

// setupClaimed creates turn with effects a and b and claims a at revision 2
// for holder "h".
func setupClaimed(ctx context.Context, st recovery.Store, turn recovery.TurnRef) error {
	if err := st.CreateTurn(ctx, newTurn(turn, "a", "b")); err != nil {
		return fmt.Errorf("CreateTurn: %w", err)
	}
	if err := st.CompareAndSwapEffect(ctx, turn, 1, claimed("a", 2, "h")); err != nil {
		return fmt.Errorf("claim: %w", err)
	}
	return nil
}

func checkAdmitRefusals(ctx context.Context, s Subject, turn recovery.TurnRef) error {
	st, adm := s.Store, admitter(s)
	var c counter
	denied := errors.New("denied by the host")
	deny := admission(turn, "a", 2, "h")
	deny.Authorize = func(context.Context) error { return fmt.Errorf("%w: %w", denied, refusal.ErrUnauthorized) }
	errDeny := adm.AdmitDispatch(ctx, deny, c.launch)
	err := firstErr(
		wantCode("AdmitDispatch at a stale revision", adm.AdmitDispatch(ctx, admission(turn, "a", 1, "h"), c.launch), refusal.ErrClaimConflict),
		wantCode("AdmitDispatch by another holder", adm.AdmitDispatch(ctx, admission(turn, "a", 2, "other"), c.launch), refusal.ErrClaimConflict),
		wantCode("AdmitDispatch of an unclaimed effect", adm.AdmitDispatch(ctx, admission(turn, "b", 1, ""), c.launch), refusal.ErrClaimConflict),
		wantCode("AdmitDispatch after authority was revoked", errDeny, refusal.ErrUnauthorized),
	)
	if err != nil {
		return err
	}
	if !errors.Is(errDeny, denied) {
		return fmt.Errorf("AdmitDispatch must return the authorization error itself, got %v", errDeny)
	}
	if _, err := st.EndTurn(ctx, turn, recovery.TurnCancelled); err != nil {
		return fmt.Errorf("EndTurn: %w", err)
	}
	err = firstErr(
		wantCode("AdmitDispatch after cancellation", adm.AdmitDispatch(ctx, admission(turn, "a", 2, "h"), c.launch), refusal.ErrTurnNotRunning),
		wantEffect(ctx, st, turn, "a", recovery.EffectClaimed, 2),
	)
	if err != nil {
		return err
	}
	if n := c.n.Load(); n != 0 {
		return fmt.Errorf("refused admissions launched %d times", n)
	}
	return nil
}

// checkAdmitDurable checks the order inside AdmitDispatch: authorize, then a
// committed admission mark, then exactly one launch.
func checkAdmitDurable(ctx context.Context, s Subject, turn recovery.TurnRef) error {
	st, adm := s.Store, admitter(s)
	reader := st
	if s.Reopen != nil {
		other, err := s.Reopen()
		if err != nil {
			return fmt.Errorf("reopening the store: %w", err)
		}
		reader = other
	}
	var (
		order    []string
		atLaunch error
		launches int
	)
	a := admission(turn, "a", 2, "h")
	a.Authorize = func(context.Context) error { order = append(order, "authorize"); return nil }
	err := adm.AdmitDispatch(ctx, a, func(context.Context) error {
		order = append(order, "launch")
		launches++
		atLaunch = wantEffect(ctx, reader, turn, "a", recovery.EffectAdmitted, 3)
		return nil
	})
	if err != nil {
		return fmt.Errorf("AdmitDispatch: %w", err)
	}
	if launches != 1 || len(order) != 2 || order[0] != "authorize" {
		return fmt.Errorf("AdmitDispatch called %v, want authorize then one launch", order)
	}
	if atLaunch != nil {
		return fmt.Errorf("the admission mark was not committed when launch ran: %w", atLaunch)
	}
	var c counter
	return firstErr(
		wantCode("a second AdmitDispatch of the same claim", adm.AdmitDispatch(ctx, admission(turn, "a", 2, "h"), c.launch), refusal.ErrClaimConflict),
		wantEffect(ctx, st, turn, "a", recovery.EffectAdmitted, 3),
		func() error {
			if c.n.Load() != 0 {
				return errors.New("a second admission of one claim launched")
			}
			return nil
		}(),
	)
}

func checkAdmitLaunchError(ctx context.Context, s Subject, turn recovery.TurnRef) error {
	st, adm := s.Store, admitter(s)
	boom := errors.New("launch failed")
	err := adm.AdmitDispatch(ctx, admission(turn, "a", 2, "h"), func(context.Context) error { return boom })
	if !errors.Is(err, boom) {
		return fmt.Errorf("AdmitDispatch must return the launch error, got %v", err)
	}
	return wantEffect(ctx, st, turn, "a", recovery.EffectAdmitted, 3)
}

// endDuring starts EndTurn(cancelled) in a goroutine and reports whether it
// returned within fenceProbe; the result arrives on the channel.
func endDuring(ctx context.Context, st recovery.Store, turn recovery.TurnRef) (returnedEarly bool, result <-chan endResult) {
	ch := make(chan endResult, 1)
	go func() {
		rec, err := st.EndTurn(ctx, turn, recovery.TurnCancelled)
		ch <- endResult{rec, err}
	}()
	select {
	case r := <-ch:
		ch <- r
		return true, ch
	case <-time.After(fenceProbe):
		return false, ch
	}
}

type endResult struct {
	rec recovery.TurnRecord
	err error
}

// checkAdmitFencesEnd proves that EndTurn waits for the fence while
// AdmitDispatch authorizes and while it launches.
func checkAdmitFencesEnd(ctx context.Context, s Subject, turn recovery.TurnRef) error {
	st, adm := s.Store, admitter(s)
	var early []string
	var results []<-chan endResult
	// probe starts an EndTurn and notes when it returned early, during
	// names the moment.
	probe := func(during string) {
		e, ch := endDuring(ctx, st, turn)
		results = append(results, ch)
		if e {
			early = append(early, during)
		}
	}
	a := admission(turn, "a", 2, "h")
	a.Authorize = func(context.Context) error {
		probe("while AdmitDispatch authorized")
		return nil
	}
	launched := 0
	err := adm.AdmitDispatch(ctx, a, func(context.Context) error {
		launched++
		probe("while launch ran")
		return nil
	})
	ends := 0
	var endRec recovery.TurnRecord
	for _, ch := range results {
		if r := <-ch; r.err == nil {
			ends++
			endRec = r.rec
		}
	}
	switch {
	case len(early) > 0:
		return fmt.Errorf("EndTurn committed %s: the admission is not fenced against cancellation", early[0])
	case err != nil || launched != 1:
		return fmt.Errorf("AdmitDispatch = %v with %d launches, want nil and 1", err, launched)
	case ends != 1:
		return fmt.Errorf("%d of the concurrent EndTurn calls succeeded, want 1", ends)
	}
	if e, _ := endRec.Effect("a"); e.State != recovery.EffectAdmitted {
		return fmt.Errorf("the cancellation committed after the launch must show the effect admitted, got %s", e.State)
	}
	return nil
}

// checkAdmitBarrier proves that an AdmitDispatch the store refuses (the
// effect is admitted, not claimed) takes the fence before refusing, so that
// Reconcile can use it as a barrier behind a launch in progress.
func checkAdmitBarrier(ctx context.Context, s Subject, turn recovery.TurnRef) error {
	adm := admitter(s)
	var early bool
	var barrierErr error
	done := make(chan struct{})
	err := adm.AdmitDispatch(ctx, admission(turn, "a", 2, "h"), func(context.Context) error {
		go func() {
			defer close(done)
			var c counter
			barrierErr = adm.AdmitDispatch(ctx, admission(turn, "a", 3, "h"), c.launch)
			if c.n.Load() != 0 {
				barrierErr = errors.New("the barrier launched")
			}
		}()
		select {
		case <-done:
			early = true
		case <-time.After(fenceProbe):
		}
		return nil
	})
	<-done
	switch {
	case err != nil:
		return fmt.Errorf("AdmitDispatch: %w", err)
	case early:
		return errors.New("an AdmitDispatch of an admitted effect returned while a launch held the fence: refuse only after taking the fence")
	}
	return wantCode("AdmitDispatch of an admitted effect", barrierErr, refusal.ErrClaimConflict)
}

// checkRaceAdmitEnd races AdmitDispatch against EndTurn: a launch must
// always be visible as an admission in the committed cancellation.
func checkRaceAdmitEnd(ctx context.Context, s Subject, turn recovery.TurnRef) error {
	st, adm := s.Store, admitter(s)
	for round := range 25 {
		t := recovery.TurnRef{Conversation: turn.Conversation, Turn: fmt.Sprintf("%s-%d", turn.Turn, round)}
		if err := setupClaimed(ctx, st, t); err != nil {
			return err
		}
		var (
			c      counter
			wg     sync.WaitGroup
			admErr error
			endRec recovery.TurnRecord
			endErr error
		)
		wg.Go(func() { admErr = adm.AdmitDispatch(ctx, admission(t, "a", 2, "h"), c.launch) })
		wg.Go(func() { endRec, endErr = st.EndTurn(ctx, t, recovery.TurnCancelled) })
		wg.Wait()
		if endErr != nil {
			return fmt.Errorf("round %d: EndTurn: %w", round, endErr)
		}
		e, _ := endRec.Effect("a")
		switch {
		case c.n.Load() > 0 && e.State != recovery.EffectAdmitted:
			return fmt.Errorf("round %d: launched although the cancellation committed before the admission", round)
		case c.n.Load() == 0 && !errors.Is(admErr, refusal.ErrTurnNotRunning):
			return fmt.Errorf("round %d: no launch, but AdmitDispatch returned %v", round, admErr)
		}
	}
	return nil
}

// checkLinearizable runs concurrent random operations and checks the
// recorded history with porcupine.
func checkLinearizable(ctx context.Context, s Subject, turn recovery.TurnRef) error {
	h := NewHistory()
	setup := h.Wrap(s.Store, 0)
	if err := setup.CreateTurn(ctx, newTurn(turn, "a", "b")); err != nil {
		return fmt.Errorf("CreateTurn: %w", err)
	}
	const clients, steps = 4, 25
	var wg sync.WaitGroup
	for c := 1; c <= clients; c++ {
		st := h.Wrap(s.Store, c)
		rng := rand.New(rand.NewPCG(uint64(c), 7))
		wg.Go(func() { randomOps(ctx, st, turn, rng, c, steps) })
	}
	wg.Wait()
	return h.CheckLinearizable(30 * time.Second)
}

// randomOps drives one client: read, then claim, admit, complete or end,
// sometimes from a stale read.
func randomOps(ctx context.Context, st recovery.Store, turn recovery.TurnRef, rng *rand.Rand, client, steps int) {
	adm, _ := st.(recovery.Admitter)
	var last recovery.TurnRecord
	for i := range steps {
		if i == 0 || rng.IntN(3) == 0 {
			if rec, err := st.LoadTurn(ctx, turn); err == nil {
				last = rec
			}
		}
		if len(last.Effects) == 0 {
			continue
		}
		e := last.Effects[rng.IntN(len(last.Effects))]
		holder := fmt.Sprintf("c%d-%d", client, i)
		// Follow the component's rules: claim only what was never admitted,
		// never write a completed record (the model checks both).
		switch op := rng.IntN(10); {
		case e.State == recovery.EffectCompleted:
			continue
		case op < 4 && (e.State == recovery.EffectPending || e.State == recovery.EffectClaimed):
			_ = st.CompareAndSwapEffect(ctx, turn, e.Revision, claimed(e.ID, e.Revision+1, holder))
		case op < 7 && adm != nil:
			_ = adm.AdmitDispatch(ctx, admission(turn, e.ID, e.Revision, e.Holder), func(context.Context) error { return nil })
		case op < 9:
			_ = st.CompareAndSwapEffect(ctx, turn, e.Revision, completed(e, holder))
		default:
			_, _ = st.EndTurn(ctx, turn, recovery.TurnCancelled)
		}
	}
}
