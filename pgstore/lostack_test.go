package pgstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"sync"
	"testing"
	"time"

	chatprotocol "github.com/Papercusp/chat-protocol-go"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Papercusp/chat-protocol-go/cards"
	"github.com/Papercusp/chat-protocol-go/interactions"
	"github.com/Papercusp/chat-protocol-go/pgstore/internal/lossyproxy"
	"github.com/Papercusp/chat-protocol-go/recovery"
	"github.com/Papercusp/chat-protocol-go/refusal"
)

// step is one store call a traced store saw: its kind and whether it
// reported an unknown outcome (code needs-reconciliation).
type step struct {
	kind      string // start, claim, admit, complete, mark, reconcile, end, load; transact, read
	uncertain bool
}

func isUncertain(err error) bool { return refusal.CodeOf(err) == refusal.CodeNeedsReconciliation }

// tracedStore records the calls of one goroutine's component call.
type tracedStore struct {
	*RecoveryStore
	steps []step
}

func (s *tracedStore) note(kind string, err error) {
	s.steps = append(s.steps, step{kind, isUncertain(err)})
}

func (s *tracedStore) CreateTurn(ctx context.Context, rec recovery.TurnRecord) error {
	err := s.RecoveryStore.CreateTurn(ctx, rec)
	s.note("start", err)
	return err
}

func (s *tracedStore) LoadTurn(ctx context.Context, turn recovery.TurnRef) (recovery.TurnRecord, error) {
	rec, err := s.RecoveryStore.LoadTurn(ctx, turn)
	s.note("load", err)
	return rec, err
}

func (s *tracedStore) CompareAndSwapEffect(ctx context.Context, turn recovery.TurnRef, expected uint64, next recovery.EffectRecord) error {
	err := s.RecoveryStore.CompareAndSwapEffect(ctx, turn, expected, next)
	s.note(string(siteOf(write{op: "cas", next: &next})), err)
	return err
}

func (s *tracedStore) EndTurn(ctx context.Context, turn recovery.TurnRef, status recovery.TurnStatus) (recovery.TurnRecord, error) {
	rec, err := s.RecoveryStore.EndTurn(ctx, turn, status)
	s.note("end", err)
	return rec, err
}

func (s *tracedStore) AdmitDispatch(ctx context.Context, adm recovery.Admission, launch recovery.DispatchFunc) error {
	err := s.RecoveryStore.AdmitDispatch(ctx, adm, launch)
	s.note("admit", err)
	return err
}

func (s *tracedStore) ClaimEffect(ctx context.Context, c recovery.Claim) (recovery.ClaimResult, error) {
	out, err := s.RecoveryStore.ClaimEffect(ctx, c)
	s.note("claim", err)
	if out.Fence != nil {
		out.Fence = &tracedFence{DispatchFence: out.Fence, s: s}
	}
	return out, err
}

// tracedFence records the calls of a dispatch fence in its store's steps.
type tracedFence struct {
	recovery.DispatchFence
	s *tracedStore
}

func (f *tracedFence) AdmitDispatch(ctx context.Context, adm recovery.Admission, launch recovery.DispatchFunc) error {
	err := f.DispatchFence.AdmitDispatch(ctx, adm, launch)
	f.s.note("admit", err)
	return err
}

func (f *tracedFence) Complete(ctx context.Context, expected uint64, next recovery.EffectRecord) error {
	err := f.DispatchFence.Complete(ctx, expected, next)
	f.s.note(string(siteOf(write{op: "cas", next: &next})), err)
	return err
}

// tracedCards records the calls of one goroutine's resolver call.
type tracedCards struct {
	*InteractionStore
	steps []step
}

func (s *tracedCards) Transact(ctx context.Context, key interactions.Key, caller *interactions.Caller, fn interactions.TxFunc) error {
	err := s.InteractionStore.Transact(ctx, key, caller, fn)
	s.steps = append(s.steps, step{"transact", isUncertain(err)})
	return err
}

func (s *tracedCards) Read(ctx context.Context, key interactions.Key, caller *interactions.Caller) (interactions.Current, error) {
	cur, err := s.InteractionStore.Read(ctx, key, caller)
	s.steps = append(s.steps, step{"read", false})
	return cur, err
}

// readsAfterLostAcks returns, for each write of steps whose outcome was
// unknown, its kind and the number of reads that followed it before the
// component returned; it clears steps.
func readsAfterLostAcks(steps *[]step) []step {
	var out []step
	for i, s := range *steps {
		if !s.uncertain {
			continue
		}
		reads := 0
		for _, later := range (*steps)[i+1:] {
			if later.kind == "load" || later.kind == "read" {
				reads++
			}
		}
		out = append(out, step{kind: s.kind + "/" + strconv.Itoa(reads)})
	}
	*steps = (*steps)[:0]
	return out
}

// wantReads is how many reads the components make after a lost
// acknowledgement of each write (docs/contract.md sections 13.1 and 13.2,
// "one read"): one where they can return what is stored (a completion, a
// start, a turn end, a reconciliation, a card write); none after a claim, an
// admission or a needs-reconciliation mark, which return needs-reconciliation
// at once.
var wantReads = map[string]int{
	"start": 1, "end": 1, "complete": 1, "reconcile": 1, "transact": 1,
	"claim": 0, "admit": 0, "mark": 0,
}

// lostAckTally counts, per write kind, the lost acknowledgements and the
// reads that followed them.
type lostAckTally struct {
	mu    sync.Mutex
	n     map[string]int
	wrong []string
}

func (l *lostAckTally) add(where string, lost []step) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, s := range lost {
		kind, reads, _ := cut(s.kind)
		l.n[kind]++
		if want, ok := wantReads[kind]; !ok || want != reads {
			l.wrong = append(l.wrong, fmt.Sprintf("%s: %s lost its acknowledgement and was followed by %d reads", where, kind, reads))
		}
	}
}

func cut(s string) (string, int, bool) {
	for i := len(s) - 1; i >= 0; i-- {
		if s[i] == '/' {
			n, err := strconv.Atoi(s[i+1:])
			return s[:i], n, err == nil
		}
	}
	return s, 0, false
}

// TestLostAcks drives turns and cards through a proxy that loses the
// acknowledgement of a random share of committed writes (the server
// committed; the connection is cut before the answer reaches pgx), until
// -pgstore.lostacks acknowledgements were lost. Every lost acknowledgement
// must surface as an unknown outcome (never success, never a definite
// failure), the components must read exactly as docs/contract.md section 13
// says after it, and when the host has reconciled everything, no effect
// launched twice, every effect is completed with the truth, and every card
// carries the one answer that landed.
func TestLostAcks(t *testing.T) {
	proxy := startProxy(t)
	f := newCardFixture(t, "", proxy.Addr())
	pool := newPool(t, poolOpts{addr: proxy.Addr(), searchPath: f.schema, maxConns: 16})
	direct := newPool(t, poolOpts{searchPath: f.schema})
	caller := interactions.Caller{Principal: "p-ack", Tenant: "acme"}
	require.NoError(t, hostGrant(t.Context(), f.admin, caller, "conv-ack"))

	var mu sync.Mutex
	rng := rand.New(rand.NewPCG(1, 2))
	proxy.SetDecide(func(lossyproxy.Group) bool {
		mu.Lock()
		defer mu.Unlock()
		return rng.IntN(10) < 3 // lose 30% of the committed writes
	})

	const gors = 4
	log := newLaunchLog()
	tally := &lostAckTally{n: map[string]int{}}
	var (
		wg      sync.WaitGroup
		turns   sync.Map // recovery.TurnRef -> owner goroutine done
		cards   sync.Map // interactions.Key -> submission id that must be stored
		errsMu  sync.Mutex
		errList []error
	)
	fail := func(err error) {
		errsMu.Lock()
		errList = append(errList, err)
		errsMu.Unlock()
	}
	ctx := t.Context()
	target := *flagAcks
	for g := range gors {
		wg.Go(func() {
			rs, err := NewRecoveryStore(pool, nil)
			if err != nil {
				fail(err)
				return
			}
			ts := &tracedStore{RecoveryStore: rs}
			rec := recovery.New(recovery.Host{Store: ts, Authorizer: allowAll{}}, &recovery.Options{Worker: "ack" + strconv.Itoa(g), Lease: time.Millisecond})
			is, err := NewInteractionStore(pool, hostAuthority, nil)
			if err != nil {
				fail(err)
				return
			}
			tc := &tracedCards{InteractionStore: is}
			res, err := interactions.New(tc, acceptAll, &interactions.Options{CardRules: chatprotocol.ValidateCardSpec})
			if err != nil {
				fail(err)
				return
			}
			for i := 0; proxy.Cuts() < target && i < 10*target; i++ {
				turn := recovery.TurnRef{Conversation: fmt.Sprintf("ack-%d-%d", g, i), Turn: "t"}
				d := &driver{rec: rec, launcher: log, launched: log.count, pause: time.Millisecond, attempts: 50,
					after: func(what string) { tally.add(fmt.Sprintf("%v %s", turn, what), readsAfterLostAcks(&ts.steps)) }}
				if err := d.turn(ctx, turn, []string{"a", "b", "c"}, -1); err != nil {
					fail(err)
					return
				}
				turns.Store(turn, true)
				key := interactions.Key{Conversation: "conv-ack", CorrelationID: fmt.Sprintf("card-%d-%d", g, i)}
				sub, err := driveCard(ctx, res, tc, key, caller, tally)
				if err != nil {
					fail(err)
					return
				}
				cards.Store(key, sub)
			}
		})
	}
	wg.Wait()
	require.NoError(t, errors.Join(errList...))
	require.GreaterOrEqual(t, proxy.Cuts(), target, "acknowledgements lost on the wire")

	// The truth, read directly: every effect completed, launched at most
	// once, and its result says whether it ran.
	check, err := NewRecoveryStore(direct, nil)
	require.NoError(t, err)
	nTurns, nCards := 0, 0
	turns.Range(func(k, _ any) bool {
		nTurns++
		rec, err := check.LoadTurn(ctx, k.(recovery.TurnRef))
		require.NoError(t, err)
		for _, e := range rec.Effects {
			ref := recovery.EffectRef{Turn: rec.Turn, Effect: e.ID}
			n := log.count(ref)
			require.LessOrEqual(t, n, 1, "%v launched twice", ref)
			require.Equal(t, recovery.EffectCompleted, e.State, "%v left %s", ref, e.State)
			want := "not-run"
			if n == 1 {
				want = "ran:" + e.ID
			}
			require.Equal(t, want, string(e.Result.Data), "%v", ref)
		}
		return true
	})
	checkCards, err := NewInteractionStore(direct, hostAuthority, nil)
	require.NoError(t, err)
	cards.Range(func(k, v any) bool {
		nCards++
		key := k.(interactions.Key)
		cur, err := checkCards.Read(ctx, key, nil)
		require.NoError(t, err)
		require.NotNil(t, cur.Record)
		require.NotNil(t, cur.Record.Answer, "%v", key)
		assert.Equal(t, v.(string), cur.Record.Answer.SubmissionID, "%v", key)
		assert.Len(t, f.transitions(key), 1, "%v: one transition", key)
		return true
	})
	assert.Empty(t, log.doubles(), "double launches")
	assert.Empty(t, tally.wrong, "reads after lost acknowledgements")
	total := 0
	for _, n := range tally.n {
		total += n
	}
	assert.Equal(t, proxy.Cuts(), total, "every acknowledgement the proxy lost surfaced as an unknown outcome")
	t.Logf("%d acknowledgements lost of %d committed writes; per write: %v; %d turns, %d cards, no double launch",
		proxy.Cuts(), proxy.Commits(), tally.n, nTurns, nCards)
}

// driveCard opens a card and answers it, repeating a request whose outcome
// is unknown with the same submission id, as a client does; it returns the
// submission id that must be stored.
func driveCard(ctx context.Context, res *interactions.Resolver, tc *tracedCards, key interactions.Key, caller interactions.Caller, tally *lostAckTally) (string, error) {
	for attempt := 0; ; attempt++ {
		_, err := res.Open(ctx, interactions.NewCard{Key: key, Answerer: caller, Spec: cards.CardSpec{Prompt: "ok?"},
			Schema: interactions.SchemaRef{ID: "s", Revision: 1}})
		tally.add(fmt.Sprintf("%v open", key), readsAfterLostAcks(&tc.steps))
		if err == nil || errors.Is(err, refusal.ErrCardExists) {
			break
		}
		if !errors.Is(err, refusal.ErrNeedsReconciliation) || attempt == 50 {
			return "", fmt.Errorf("%v open: %w", key, err)
		}
	}
	sub := interactions.Submission{ID: "sub-" + key.CorrelationID, Response: cards.CardResponse{
		Action: cards.CardActionSubmit, CorrelationID: key.CorrelationID, Value: json.RawMessage(`{"optionId":"yes"}`)}}
	for attempt := 0; ; attempt++ {
		_, err := res.Answer(ctx, caller, key, sub)
		tally.add(fmt.Sprintf("%v answer", key), readsAfterLostAcks(&tc.steps))
		if err == nil || errors.Is(err, refusal.ErrDuplicateAnswer) {
			return sub.ID, nil
		}
		if !errors.Is(err, refusal.ErrNeedsReconciliation) || attempt == 50 {
			return "", fmt.Errorf("%v answer: %w", key, err)
		}
	}
}
