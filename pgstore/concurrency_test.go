package pgstore

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	chatprotocol "github.com/Papercusp/chat-protocol-go"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Papercusp/chat-protocol-go/cards"
	"github.com/Papercusp/chat-protocol-go/interactions"
	"github.com/Papercusp/chat-protocol-go/recovery"
	"github.com/Papercusp/chat-protocol-go/refusal"
)

// rounds runs body(round, g) for every goroutine g of *flagGors, round
// after round, *flagIters rounds: in each round all goroutines are
// released at once, so they race on what setup(round) prepared.
func rounds(t *testing.T, setup func(round int), body func(round, g int)) {
	t.Helper()
	gors, iters := *flagGors, *flagIters
	start := time.Now()
	for r := range iters {
		setup(r)
		gate := make(chan struct{})
		var wg sync.WaitGroup
		for g := range gors {
			wg.Go(func() {
				<-gate
				body(r, g)
			})
		}
		close(gate)
		wg.Wait()
		if t.Failed() {
			return
		}
	}
	t.Logf("%d goroutines x %d iterations in %v", gors, iters, time.Since(start).Round(time.Millisecond))
}

func newWorkers(st recovery.Store, n int) []*recovery.TurnRecovery {
	out := make([]*recovery.TurnRecovery, n)
	for i := range out {
		out[i] = recovery.New(recovery.Host{Store: st, Authorizer: allowAll{}}, &recovery.Options{Worker: "w" + strconv.Itoa(i)})
	}
	return out
}

// raceSetup returns an observed store at isolation iso with a connection
// per racing goroutine, one worker per goroutine, a launch log and a turn
// prefix unique to the scenario.
func raceSetup(t *testing.T, iso pgx.TxIsoLevel, scenario string) (*observedStore, []*recovery.TurnRecovery, *launchLog, string) {
	st := observe(newRecoveryStore(t, poolOpts{iso: iso, maxConns: int32(*flagGors + 4)}))
	return st, newWorkers(st, *flagGors), newLaunchLog(), scenario + "-" + isoName(iso) + "-"
}

// TestConcurrentCancelRacingAdmission: in each round one goroutine cancels
// a turn while every other one executes its own effect of it. A launch
// must have its admission committed before the cancellation, which the
// cancellation's committed record shows; nothing launches twice or
// completes twice.
func TestConcurrentCancelRacingAdmission(t *testing.T) {
	for _, iso := range isolations {
		t.Run(isoName(iso), func(t *testing.T) {
			st, ws, log, prefix := raceSetup(t, iso, "cancel")
			ctx := t.Context()
			effects := make([]string, *flagGors-1)
			for i := range effects {
				effects[i] = "e" + strconv.Itoa(i)
			}
			turnOf := func(r int) recovery.TurnRef {
				return recovery.TurnRef{Conversation: prefix + strconv.Itoa(r), Turn: "t"}
			}
			var launched, refused, cancels atomic.Int64
			errs := make([]error, *flagGors)
			rounds(t, func(r int) {
				_, err := ws[0].Start(ctx, "host", turnOf(r), effects)
				require.NoError(t, err)
			}, func(r, g int) {
				turn := turnOf(r)
				if g == len(effects) {
					if err := ws[g].Cancel(ctx, "host", turn); err != nil {
						errs[g] = fmt.Errorf("cancel: %w", err)
					} else {
						cancels.Add(1)
					}
					return
				}
				eff := recovery.EffectRef{Turn: turn, Effect: effects[g]}
				res, err := ws[g].Execute(ctx, "host", eff, log)
				switch {
				case err == nil && string(res.Data) == "ran:"+eff.Effect:
					launched.Add(1)
				case errors.Is(err, refusal.ErrTurnNotRunning):
					refused.Add(1)
					if log.count(eff) != 0 {
						errs[g] = fmt.Errorf("%v launched although Execute reports the turn ended", eff)
					}
				default:
					errs[g] = fmt.Errorf("execute %v: %v, %v", eff, res, err)
				}
			})
			require.NoError(t, errors.Join(errs...))
			// Every launch is visible as an admission in the committed
			// cancellation: none happened after it.
			for r := range *flagIters {
				end, ok := st.endOf(turnOf(r))
				require.True(t, ok, "round %d: the cancellation committed", r)
				require.Equal(t, recovery.TurnCancelled, end.Status, "round %d", r)
				for _, e := range end.Effects {
					n := log.count(recovery.EffectRef{Turn: turnOf(r), Effect: e.ID})
					admitted := e.State == recovery.EffectAdmitted || e.State == recovery.EffectCompleted || e.State == recovery.EffectNeedsReconciliation
					if n > 0 && !admitted {
						t.Fatalf("round %d: %s launched after the cancellation committed (it shows %s)", r, e.ID, e.State)
					}
				}
			}
			assert.Empty(t, log.doubles(), "double launches")
			assert.Empty(t, st.doubleCompletions(), "double terminal writes")
			t.Logf("%d launched before the cancellation, %d refused after it, %d cancellations", launched.Load(), refused.Load(), cancels.Load())
		})
	}
}

// TestConcurrentDuplicateWorkers: in each round every goroutine, a worker
// of its own, executes the same effect. Exactly one launches it; every
// result returned is the stored one.
func TestConcurrentDuplicateWorkers(t *testing.T) {
	for _, iso := range isolations {
		t.Run(isoName(iso), func(t *testing.T) {
			st, ws, log, prefix := raceSetup(t, iso, "dup")
			ctx := t.Context()
			effOf := func(r int) recovery.EffectRef {
				return recovery.EffectRef{Turn: recovery.TurnRef{Conversation: prefix + strconv.Itoa(r), Turn: "t"}, Effect: "pay"}
			}
			var ok, conflicts atomic.Int64
			errs := make([]error, *flagGors)
			rounds(t, func(r int) {
				_, err := ws[0].Start(ctx, "host", effOf(r).Turn, []string{"pay"})
				require.NoError(t, err)
			}, func(r, g int) {
				res, err := ws[g].Execute(ctx, "host", effOf(r), log)
				switch {
				case err == nil && string(res.Data) == "ran:pay":
					ok.Add(1)
				case errors.Is(err, refusal.ErrClaimConflict):
					conflicts.Add(1)
				default:
					errs[g] = fmt.Errorf("round %d worker %d: %v, %v", r, g, res, err)
					t.Error(errs[g])
				}
			})
			for r := range *flagIters {
				require.Equal(t, 1, log.count(effOf(r)), "round %d: launches of the one effect", r)
			}
			assert.Empty(t, log.doubles(), "double launches")
			assert.Empty(t, st.doubleCompletions(), "double terminal writes")
			t.Logf("%d stored results returned, %d claim conflicts", ok.Load(), conflicts.Load())
		})
	}
}

// TestConcurrentRacingAnswers: in each round every goroutine, a worker of
// its own, answers the same card with its own submission. Exactly one
// answer lands, with exactly one transition; the others are refused.
func TestConcurrentRacingAnswers(t *testing.T) {
	for _, iso := range isolations {
		t.Run(isoName(iso), func(t *testing.T) {
			f := newCardFixture(t, iso, "")
			pool := newPool(t, poolOpts{iso: iso, searchPath: f.schema, maxConns: int32(*flagGors + 4)})
			resolvers := make([]*interactions.Resolver, *flagGors)
			for i := range resolvers {
				st, err := NewInteractionStore(pool, hostAuthority, &Options{Isolation: iso})
				require.NoError(t, err)
				resolvers[i], err = interactions.New(st, acceptAll, &interactions.Options{CardRules: chatprotocol.ValidateCardSpec})
				require.NoError(t, err)
			}
			ctx := t.Context()
			caller := interactions.Caller{Principal: "p-1", Tenant: "acme"}
			keyOf := func(r int) interactions.Key {
				return interactions.Key{Conversation: "conv", CorrelationID: "card-" + strconv.Itoa(r)}
			}
			require.NoError(t, hostGrant(ctx, f.admin, caller, "conv"))
			landed := make([]atomic.Int32, *flagIters)
			var refusedLate atomic.Int64
			rounds(t, func(r int) {
				_, err := resolvers[0].Open(ctx, interactions.NewCard{Key: keyOf(r), Answerer: caller,
					Spec: cards.CardSpec{Prompt: "pick"}, Schema: interactions.SchemaRef{ID: "s", Revision: 1}})
				require.NoError(t, err)
			}, func(r, g int) {
				key := keyOf(r)
				sub := interactions.Submission{ID: fmt.Sprintf("s-%d-%d", r, g), Response: cards.CardResponse{
					Action: cards.CardActionSubmit, CorrelationID: key.CorrelationID, Value: json.RawMessage(`{"optionId":"` + strconv.Itoa(g) + `"}`)}}
				_, err := resolvers[g].Answer(ctx, caller, key, sub)
				switch {
				case err == nil:
					landed[r].Add(1)
				case errors.Is(err, refusal.ErrAlreadyAnswered):
					refusedLate.Add(1)
				default:
					t.Errorf("round %d worker %d: %v", r, g, err)
				}
			})
			var rows []struct {
				Card string
				N    int
			}
			res, err := f.admin.Query(ctx, `SELECT correlation_id, count(*) FROM pgstore_card_transitions GROUP BY correlation_id`)
			require.NoError(t, err)
			rows, err = pgx.CollectRows(res, pgx.RowToStructByPos[struct {
				Card string
				N    int
			}])
			require.NoError(t, err)
			require.Len(t, rows, *flagIters, "one card per round has a transition")
			for _, row := range rows {
				assert.Equal(t, 1, row.N, "%s: exactly one transition", row.Card)
			}
			for r := range *flagIters {
				assert.Equal(t, int32(1), landed[r].Load(), "round %d: exactly one answer lands", r)
			}
			t.Logf("%d answers landed, %d refused as already answered", *flagIters, refusedLate.Load())
		})
	}
}
