package interactions_test

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	chatprotocol "github.com/Papercusp/chat-protocol-go"

	"github.com/stretchr/testify/require"

	"github.com/Papercusp/chat-protocol-go/cards"
	"github.com/Papercusp/chat-protocol-go/interactions"
	"github.com/Papercusp/chat-protocol-go/interactions/interactionstest"
	"github.com/Papercusp/chat-protocol-go/refusal"
)

// The simulation's flags. go test ./interactions -run TestSimulation
// -interactions.seeds=100000 runs more seeds; -interactions.seed=N replays
// one.
var (
	simSeeds = flag.Int("interactions.seeds", 0, "simulation seeds to run (0: 10000, or 2000 under -race)")
	simSeed  = flag.Int64("interactions.seed", -1, "replay only this simulation seed")
)

// defaultSeeds is the seed count of a plain go test run.
const defaultSeeds = 10000

// raceSeeds is the seed count under -race, where each seed costs about ten
// times more; the full count still runs in the plain run.
const raceSeeds = 2000

// TestSimulation runs seeded, deterministic interleavings of racing
// answerers, foreign callers, cancellation, expiry, revision, supersession,
// revocation and store faults over one fake database, and checks after each
// seed: at most one terminal transition per card, terminal records never
// change, no answer lands on a card other than its target or from a caller
// it is not bound to or without current authority or after its deadline or
// unvalidated, every reported success is stored, and every refusal is typed
// and consistent with the final state.
func TestSimulation(t *testing.T) {
	seeds := simSeedRange()
	for _, seed := range seeds {
		if v := runSim(seed, nil); len(v) > 0 {
			t.Fatalf("simulation seed %d failed:\n  %s\nreplay: go test ./interactions -run 'TestSimulation$' -interactions.seed=%d -v",
				seed, strings.Join(v, "\n  "), seed)
		}
	}
	t.Logf("%d seeds passed", len(seeds))
}

// simSeedRange returns the seeds the flags ask for.
func simSeedRange() []uint64 {
	if *simSeed >= 0 {
		return []uint64{uint64(*simSeed)}
	}
	n := *simSeeds
	if n <= 0 {
		n = defaultSeeds
		if raceEnabled {
			n = raceSeeds
		}
	}
	seeds := make([]uint64, n)
	for i := range seeds {
		seeds[i] = uint64(i)
	}
	return seeds
}

// The simulation must catch the stores that do not fence: it is not
// vacuous.
func TestSimulationCatchesUnfencedStores(t *testing.T) {
	for _, kind := range []interactionstest.Broken{interactionstest.BrokenReadThenWrite, interactionstest.BrokenProcessLock} {
		open := func(db *interactionstest.DB, opts *interactionstest.StoreOptions) interactions.Store {
			return db.OpenBroken(kind, opts)
		}
		found := -1
		for seed := range 500 {
			if v := runSim(uint64(seed), open); len(v) > 0 {
				found = seed
				t.Logf("%v: seed %d: %s", kind, seed, v[0])
				break
			}
		}
		require.GreaterOrEqual(t, found, 0, "no seed of 500 caught %v", kind)
	}
}

// A seed replays identically: the same interleaving, the same database.
func TestSimulationIsDeterministic(t *testing.T) {
	for seed := range uint64(20) {
		a, b := newSim(seed, nil), newSim(seed, nil)
		a.run()
		b.run()
		require.Equal(t, a.trace, b.trace, "seed %d", seed)
		require.Equal(t, a.db.Commits(), b.db.Commits(), "seed %d", seed)
	}
}

// runSim runs one seed and returns its violations. open, when set, opens
// the workers' stores instead of the correct fake.
func runSim(seed uint64, open func(*interactionstest.DB, *interactionstest.StoreOptions) interactions.Store) []string {
	s := newSim(seed, open)
	if err := s.run(); err != nil {
		return []string{err.Error()}
	}
	return s.check()
}

// sim is one seed's world: a database, a clock, actors that run one at a
// time, handing a baton back to the scheduler at every database access and
// every validation, and what they did.
type sim struct {
	seed  uint64
	rng   *rand.Rand
	db    *interactionstest.DB
	clock *interactionstest.Clock
	open  func(*interactionstest.DB, *interactionstest.StoreOptions) interactions.Store
	back  chan struct{}

	actors []*actor
	keys   []interactions.Key
	faults bool

	submitted   map[string]simSubmission
	validations map[string][]interactions.SchemaRef
	outcomes    []simOutcome
	trace       []string
	revoked     bool // alice lost the conversation at some point
	suspended   bool // alice was suspended at some point
}

// simSubmission is what an answerer sent.
type simSubmission struct {
	key    interactions.Key
	caller interactions.Caller
	sub    interactions.Submission
}

// simOutcome is the result of one call.
type simOutcome struct {
	actor, op string
	key       interactions.Key
	caller    interactions.Caller
	sub       interactions.Submission
	res       interactions.Result
	err       error
}

// actor is one goroutine of the simulation.
type actor struct {
	name string
	wake chan struct{}
	done bool
	s    *sim
}

// yield hands the baton back to the scheduler and waits for it.
func (a *actor) yield() {
	a.s.back <- struct{}{}
	<-a.wake
}

// simCards is how many cards a seed opens at most.
const simCards = 2

func newSim(seed uint64, open func(*interactionstest.DB, *interactionstest.StoreOptions) interactions.Store) *sim {
	s := &sim{
		seed: seed, rng: rand.New(rand.NewPCG(seed, 0x5eed)),
		db: interactionstest.NewDB(), clock: interactionstest.NewClock(epoch), open: open,
		back: make(chan struct{}), submitted: map[string]simSubmission{}, validations: map[string][]interactions.SchemaRef{},
	}
	if s.open == nil {
		s.open = func(db *interactionstest.DB, opts *interactionstest.StoreOptions) interactions.Store {
			return db.Open(opts)
		}
	}
	s.faults = s.rng.IntN(3) == 0
	s.db.Grant(alice, conv)
	s.db.Grant(bob, conv)
	setup := s.resolver(s.db.Open(nil), "")
	for i := range 1 + s.rng.IntN(simCards) {
		k := interactions.Key{Conversation: conv, CorrelationID: fmt.Sprintf("card-%d", i)}
		spec := cards.CardSpec{Prompt: "Pick", AllowDecline: s.rng.IntN(2) == 0}
		if s.rng.IntN(2) == 0 {
			spec.TimeoutMs = int64(30+s.rng.IntN(90)) * 1000
		}
		if _, err := setup.Open(context.Background(), interactions.NewCard{Key: k, Answerer: alice, Spec: spec, Schema: radioV1}); err != nil {
			panic(err) // a fresh fake database accepts every card
		}
		s.keys = append(s.keys, k)
	}
	for i := range 2 + s.rng.IntN(3) {
		s.spawn(fmt.Sprintf("answerer-%d", i), s.answerer)
	}
	for _, role := range []struct {
		name string
		odds int
		body func(*actor)
	}{
		{"canceller", 3, s.canceller}, {"expirer", 2, s.expirer}, {"reviser", 3, s.reviser},
		{"superseder", 4, s.superseder}, {"revoker", 4, s.revoker},
	} {
		if s.rng.IntN(role.odds) == 0 {
			s.spawn(role.name, role.body)
		}
	}
	return s
}

// spawn adds an actor; its goroutine waits for the baton.
func (s *sim) spawn(name string, body func(*actor)) {
	a := &actor{name: name, wake: make(chan struct{}), s: s}
	s.actors = append(s.actors, a)
	go func() {
		<-a.wake
		body(a)
		a.done = true
		s.back <- struct{}{}
	}()
}

// run schedules the actors until all are done: each step hands the baton to
// a random live actor and sometimes moves the clock first.
func (s *sim) run() error {
	for step := 0; ; step++ {
		var live []*actor
		for _, a := range s.actors {
			if !a.done {
				live = append(live, a)
			}
		}
		if len(live) == 0 {
			return nil
		}
		if step > 100000 {
			return fmt.Errorf("no progress after %d steps", step)
		}
		if s.rng.IntN(6) == 0 {
			s.clock.Advance(time.Duration(s.rng.IntN(40)) * time.Second)
		}
		a := live[s.rng.IntN(len(live))]
		s.trace = append(s.trace, a.name)
		a.wake <- struct{}{}
		select {
		case <-s.back:
		case <-time.After(10 * time.Second):
			return fmt.Errorf("actor %s blocked outside a yield", a.name)
		}
	}
}

// resolver returns a Resolver over st whose validator yields as actor a
// (when a is not nil) and records what it validated for submission id.
func (s *sim) resolver(st interactions.Store, id string, a ...*actor) *interactions.Resolver {
	v := interactions.ValidatorFunc(func(_ context.Context, ref interactions.SchemaRef, value json.RawMessage) error {
		if len(a) > 0 {
			a[0].yield()
		}
		s.validations[id] = append(s.validations[id], ref)
		if !simValid(ref, value) {
			return &refusal.Error{Code: refusal.CodeInvalidAnswer, Path: "/value/optionId"}
		}
		return nil
	})
	r, err := interactions.New(st, v, &interactions.Options{CardRules: chatprotocol.ValidateCardSpec, Clock: s.clock.Now})
	if err != nil {
		panic(err) // st and v are set
	}
	return r
}

// worker returns a fresh worker for actor a: a new store whose database
// accesses yield, with faults when the seed has them.
func (s *sim) worker(a *actor, id string) *interactions.Resolver {
	opts := &interactionstest.StoreOptions{Pause: a.yield}
	if s.faults {
		opts.Fault = func(interactionstest.Op, interactions.Key) interactionstest.Fault {
			if s.rng.IntN(5) != 0 {
				return interactionstest.FaultNone
			}
			return []interactionstest.Fault{
				interactionstest.FaultUnavailable, interactionstest.FaultRollback,
				interactionstest.FaultLostAckCommitted, interactionstest.FaultLostAckNotCommitted,
			}[s.rng.IntN(4)]
		}
	}
	return s.resolver(s.open(s.db, opts), id, a)
}

// simValid is the simulation's schemas: revision 1 accepts options a and
// b, revision 2 also c.
func simValid(ref interactions.SchemaRef, value json.RawMessage) bool {
	var v struct{ OptionID string }
	if json.Unmarshal(value, &v) != nil {
		return false
	}
	return v.OptionID == "a" || v.OptionID == "b" || (v.OptionID == "c" && ref == radioV2)
}

// record keeps one call's outcome.
func (s *sim) record(a *actor, op string, key interactions.Key, o simOutcome) {
	o.actor, o.op, o.key = a.name, op, key
	s.outcomes = append(s.outcomes, o)
	s.trace = append(s.trace, fmt.Sprintf("%s %s %s -> %v", a.name, op, key.CorrelationID, refusal.CodeOf(o.err)))
}

// retryable reports whether an answerer tries the same submission again.
func retryable(err error) bool {
	switch refusal.CodeOf(err) {
	case refusal.CodeNeedsReconciliation, refusal.CodeCheckpointWriteFailed, refusal.CodeStoreUnavailable:
		return true
	}
	return false
}

func (s *sim) answerer(a *actor) {
	caller := alice
	if s.rng.IntN(7) == 0 {
		caller = bob
	}
	key := s.keys[s.rng.IntN(len(s.keys))]
	sub := interactions.Submission{ID: "s-" + a.name, Response: cards.CardResponse{CorrelationID: key.CorrelationID}}
	switch n := s.rng.IntN(10); {
	case n < 7:
		sub.Response.Action = cards.CardActionSubmit
		sub.Response.Value = json.RawMessage(`{"optionId":"` + []string{"a", "b", "c"}[s.rng.IntN(3)] + `"}`)
	case n < 9:
		sub.Response.Action = cards.CardActionDecline
	default:
		sub.Response.Action = cards.CardActionCancel
	}
	if s.rng.IntN(8) == 0 {
		sub.Revision = 1
	}
	s.submitted[sub.ID] = simSubmission{key: key, caller: caller, sub: sub}
	for attempt := 0; attempt < 3; attempt++ {
		res, err := s.worker(a, sub.ID).Answer(context.Background(), caller, key, sub)
		s.record(a, "answer", key, simOutcome{caller: caller, sub: sub, res: res, err: err})
		if !retryable(err) {
			return
		}
	}
}

func (s *sim) canceller(a *actor) {
	key := s.keys[s.rng.IntN(len(s.keys))]
	res, err := s.worker(a, "").Cancel(context.Background(), key, "turn cancelled")
	s.record(a, "cancel", key, simOutcome{res: res, err: err})
}

func (s *sim) expirer(a *actor) {
	for range 1 + s.rng.IntN(3) {
		for _, key := range s.keys {
			res, err := s.worker(a, "").Expire(context.Background(), key)
			s.record(a, "expire", key, simOutcome{res: res, err: err})
		}
	}
}

func (s *sim) reviser(a *actor) {
	key := s.keys[s.rng.IntN(len(s.keys))]
	schema := []interactions.SchemaRef{radioV1, radioV2}[s.rng.IntN(2)]
	spec := cards.CardSpec{Prompt: "Pick, revised", AllowDecline: true, TimeoutMs: int64(s.rng.IntN(3)) * 60000}
	rec, err := s.worker(a, "").Revise(context.Background(), key, spec, schema)
	s.record(a, "revise", key, simOutcome{res: interactions.Result{Record: rec}, err: err})
}

func (s *sim) superseder(a *actor) {
	key := s.keys[s.rng.IntN(len(s.keys))]
	next := interactions.Key{Conversation: conv, CorrelationID: key.CorrelationID + "-next"}
	w := s.worker(a, "")
	_, err := w.Open(context.Background(), interactions.NewCard{Key: next, Answerer: alice, Spec: cards.CardSpec{Prompt: "Pick again"}, Schema: radioV2})
	s.record(a, "open", next, simOutcome{err: err})
	if err != nil {
		return
	}
	res, err := w.Supersede(context.Background(), key, next.CorrelationID)
	s.record(a, "supersede", key, simOutcome{res: res, err: err})
}

func (s *sim) revoker(a *actor) {
	a.yield()
	if s.rng.IntN(2) == 0 {
		s.revoked = true
		s.db.Revoke(alice, conv)
	} else {
		s.suspended = true
		s.db.Suspend(alice)
	}
	a.yield()
	if s.rng.IntN(2) == 0 {
		s.db.Grant(alice, conv)
	}
}

// check returns every violated invariant of the finished seed.
func (s *sim) check() []string {
	var v []string
	bad := func(format string, args ...any) { v = append(v, fmt.Sprintf(format, args...)) }
	final := map[interactions.Key]interactions.Record{}
	history := map[interactions.Key][]interactions.Record{}
	for _, k := range s.db.Keys() {
		h := s.db.History(k)
		history[k] = h
		final[k] = h[len(h)-1]
		for i, rec := range h {
			if rec.Key != k || rec.Scope != h[0].Scope || rec.CreatedAt != h[0].CreatedAt {
				bad("%s: version %d changed the card's identity or binding", k.CorrelationID, i+1)
			}
			if rec.Revision != int64(i+1) {
				bad("%s: version %d has revision %d", k.CorrelationID, i+1, rec.Revision)
			}
			if i > 0 && h[i-1].Status.Terminal() {
				bad("%s: terminal record (revision %d, %s) changed to %s", k.CorrelationID, h[i-1].Revision, h[i-1].Status, rec.Status)
			}
		}
		trs, last := s.db.Transitions(k), final[k]
		switch {
		case len(trs) > 1:
			bad("%s: %d terminal transitions", k.CorrelationID, len(trs))
		case last.Status.Terminal() && len(trs) == 0:
			bad("%s: %s without its transition", k.CorrelationID, last.Status)
		case !last.Status.Terminal() && len(trs) != 0:
			bad("%s: pending with a transition", k.CorrelationID)
		case len(trs) == 1 && (trs[0].Revision != last.Revision || trs[0].Status != last.Status):
			bad("%s: transition %+v does not describe the record", k.CorrelationID, trs[0])
		}
	}
	for _, c := range s.db.Commits() {
		if c.Next.Answer == nil {
			continue
		}
		a := c.Next.Answer
		info, ok := s.submitted[a.SubmissionID]
		switch {
		case !ok:
			bad("%s: unknown submission %q landed", c.Key.CorrelationID, a.SubmissionID)
			continue
		case info.key != c.Key:
			bad("submission %s for %s landed on %s", a.SubmissionID, info.key.CorrelationID, c.Key.CorrelationID)
		case c.Caller == nil || *c.Caller != info.caller || c.Next.Scope.Caller != info.caller:
			bad("%s: submission %s landed for a caller the card is not bound to", c.Key.CorrelationID, a.SubmissionID)
		case !c.Authority.Active || c.Authority.Scope != c.Next.Scope:
			bad("%s: submission %s committed without current authority (%+v)", c.Key.CorrelationID, a.SubmissionID, c.Authority)
		}
		h := history[c.Key]
		if c.Next.Revision < 2 || int(c.Next.Revision) > len(h) {
			bad("%s: answer at revision %d", c.Key.CorrelationID, c.Next.Revision)
			continue
		}
		prev := h[c.Next.Revision-2]
		switch {
		case prev.Status != interactions.StatusPending:
			bad("%s: submission %s landed on a %s card", c.Key.CorrelationID, a.SubmissionID, prev.Status)
		case c.Transition == nil || prev.Expired(c.Transition.At):
			bad("%s: submission %s landed after the deadline", c.Key.CorrelationID, a.SubmissionID)
		case info.sub.Revision != 0 && info.sub.Revision != prev.Revision:
			bad("%s: submission %s for revision %d landed on revision %d", c.Key.CorrelationID, a.SubmissionID, info.sub.Revision, prev.Revision)
		case a.Action == cards.CardActionDecline && !prev.Spec.AllowDecline:
			bad("%s: decline landed on a card that does not allow it", c.Key.CorrelationID)
		case a.Action == cards.CardActionSubmit && !simValid(prev.Schema, a.Value):
			bad("%s: value %s landed on schema %+v that refuses it", c.Key.CorrelationID, a.Value, prev.Schema)
		case a.Action == cards.CardActionSubmit && !slices.Contains(s.validations[a.SubmissionID], prev.Schema):
			bad("%s: submission %s landed on schema %+v it was not validated against", c.Key.CorrelationID, a.SubmissionID, prev.Schema)
		}
	}
	won := map[interactions.Key]map[string]bool{}
	for _, o := range s.outcomes {
		code := refusal.CodeOf(o.err)
		if o.err != nil && code == "" {
			bad("%s %s: untyped error %v", o.actor, o.op, o.err)
			continue
		}
		fin := final[o.key]
		if !s.faults && (code == refusal.CodeNeedsReconciliation || code == refusal.CodeCheckpointWriteFailed || code == refusal.CodeStoreUnavailable) {
			bad("%s %s: %s without a store fault", o.actor, o.op, code)
		}
		switch o.op {
		case "answer":
			s.checkAnswer(o, fin, won, bad)
		case "cancel", "expire", "supersede":
			want := map[string]interactions.Status{"cancel": interactions.StatusCancelled, "expire": interactions.StatusExpired, "supersede": interactions.StatusSuperseded}[o.op]
			if o.err == nil && (fin.Status != want || o.res.Record.Revision != fin.Revision) {
				bad("%s %s %s: reported success, stored %s", o.actor, o.op, o.key.CorrelationID, fin.Status)
			}
		case "revise":
			if o.err == nil && !slices.ContainsFunc(history[o.key], func(r interactions.Record) bool {
				return r.Revision == o.res.Record.Revision && r.Schema == o.res.Record.Schema && r.Spec.Prompt == o.res.Record.Spec.Prompt
			}) {
				bad("%s revise %s: reported revision %d is not stored", o.actor, o.key.CorrelationID, o.res.Record.Revision)
			}
		}
	}
	for k, ids := range won {
		if len(ids) > 1 {
			bad("%s: %d different submissions were told they landed", k.CorrelationID, len(ids))
		}
	}
	return v
}

// checkAnswer checks one answer outcome against the card's final record,
// which a terminal record makes the record at the time of the call.
func (s *sim) checkAnswer(o simOutcome, fin interactions.Record, won map[interactions.Key]map[string]bool, bad func(string, ...any)) {
	id := o.sub.ID
	stored := fin.Answer != nil && fin.Answer.SubmissionID == id
	if o.caller == bob && (o.err == nil || refusal.CodeOf(o.err) != refusal.CodeCardNotFound) && !retryable(o.err) {
		bad("%s: bob, a foreign principal, got %v", o.actor, o.err)
		return
	}
	switch code := refusal.CodeOf(o.err); code {
	case "":
		if !stored || o.res.Record.Answer == nil || o.res.Record.Answer.SubmissionID != id || o.res.Record.Revision != fin.Revision {
			bad("%s: %s reported landed on %s, stored %+v", o.actor, id, o.key.CorrelationID, fin.Answer)
		}
		if won[o.key] == nil {
			won[o.key] = map[string]bool{}
		}
		won[o.key][id] = true
	case refusal.CodeDuplicateAnswer:
		if !stored {
			bad("%s: duplicate-answer but %s is not stored", o.actor, id)
		}
	case refusal.CodeAlreadyAnswered:
		if stored || (fin.Status != interactions.StatusAnswered && fin.Status != interactions.StatusDeclined) {
			bad("%s: already-answered but the card is %s", o.actor, fin.Status)
		}
	case refusal.CodeCardCancelled:
		if fin.Status != interactions.StatusCancelled || stored {
			bad("%s: card-cancelled but the card is %s", o.actor, fin.Status)
		}
	case refusal.CodeCardSuperseded:
		if fin.Status != interactions.StatusSuperseded {
			bad("%s: card-superseded but the card is %s", o.actor, fin.Status)
		}
	case refusal.CodeAnswerExpired:
		if fin.Status != interactions.StatusExpired && !(fin.Status == interactions.StatusPending && fin.Expired(s.clock.Now().UnixMilli())) {
			bad("%s: answer-expired but the card is %s, deadline %d", o.actor, fin.Status, fin.ExpiresAt)
		}
	case refusal.CodeCardNotFound:
		if o.caller == alice && !s.revoked {
			bad("%s: card-not-found for alice who was never revoked", o.actor)
		}
	case refusal.CodeUnauthorized:
		if !s.suspended {
			bad("%s: unauthorized for a caller never suspended", o.actor)
		}
	case refusal.CodeInvalidAnswer:
		a := o.sub.Response
		if !(a.Action == cards.CardActionDecline || (a.Action == cards.CardActionSubmit && !simValid(radioV1, a.Value))) {
			bad("%s: invalid-answer for a valid %s", o.actor, a.Action)
		}
	case refusal.CodeStaleRevision, refusal.CodeSchemaMismatch, refusal.CodeNeedsReconciliation,
		refusal.CodeCheckpointWriteFailed, refusal.CodeStoreUnavailable:
	default:
		bad("%s: unexpected refusal %v", o.actor, o.err)
	}
}
