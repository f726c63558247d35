package recovery_test

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Papercusp/chat-protocol-go/recovery"
	"github.com/Papercusp/chat-protocol-go/recovery/recoverytest"
)

// TestConcurrentHistoriesAreLinearizable runs TurnRecovery workers as real
// goroutines (no scheduler: the Go runtime and -race interleave them), with
// failpoints armed at random, records every store call and checks the
// history of each effect with porcupine: lost acknowledgements and crashes
// are modelled as outcomes that may or may not have been applied, and the
// model allows one launch per effect and no change to a completed record.
func TestConcurrentHistoriesAreLinearizable(t *testing.T) {
	leakCheck(t)
	ctx := t.Context()
	fps := recoverytest.Failpoints()
	for round := range 20 {
		db := recoverytest.NewDB(nil)
		host := recoverytest.NewHost(&recoverytest.HostOptions{Outcome: okOutcome})
		host.Grant(caller, turn)
		h := recoverytest.NewHistory()
		clock := newClock()
		effects := []string{"a", "b", "c"}
		var wg sync.WaitGroup
		for w := 1; w <= 4; w++ {
			rng := rand.New(rand.NewPCG(uint64(round), uint64(w)))
			wg.Go(func() {
				for incarnation := range 3 {
					st := db.Open(fmt.Sprintf("w%d.%d", w, incarnation))
					rec := recovery.New(recovery.Host{Store: h.Wrap(st, w), Authorizer: host, Aborter: host},
						&recovery.Options{Worker: st.Worker(), Lease: time.Minute, Now: clock.Now})
					_, _ = rec.Start(ctx, caller, turn, effects)
					for i := 0; i < 6 && !st.Crashed(); i++ {
						if rng.IntN(4) == 0 {
							_ = db.Arm(fps[rng.IntN(len(fps))])
						}
						e := ref(effects[rng.IntN(len(effects))])
						switch rng.IntN(10) {
						case 0:
							_ = rec.Cancel(ctx, caller, turn)
						case 1:
							_, _ = rec.Reconcile(ctx, caller, e, verifiedAs("verified"))
						case 2:
							clock.Advance(time.Duration(rng.IntN(90)) * time.Second)
						default:
							_, _ = rec.Execute(ctx, caller, e, host)
						}
					}
				}
			})
		}
		wg.Wait()
		require.Greater(t, h.Len(), 0)
		require.NoError(t, h.CheckLinearizable(time.Minute), "round %d", round)
		for _, id := range effects {
			assert.LessOrEqual(t, host.Launches(ref(id)), 1, "round %d effect %s", round, id)
		}
	}
}
