// Package replaytest is the conformance kit of package replay: [TestWindow]
// runs, against a host's [replay.Window], the checks every window passes
// (docs/contract.md sections 11.1 to 11.6), in the manner of
// [testing/fstest.TestFS]. It has the shape of the module's other kits
// (recovery/recoverytest, interactions/interactionstest): [TestWindow](t,
// [Config]) and [Check](ctx, Config), a Config whose NewSubject returns a
// fresh [Subject] per check (closed by the kit when the check ends),
// [CheckNames], and a [*CheckError] per failed check.
//
//	func TestMyWindow(t *testing.T) {
//		replaytest.TestWindow(t, replaytest.Config{
//			NewSubject: func(ctx context.Context) (replaytest.Subject, error) {
//				return replaytest.Subject{Window: mywindow.New(pool)}, nil
//			},
//			NewRetaining: func(ctx context.Context, maxFrames int) (replaytest.Subject, error) {
//				return replaytest.Subject{Window: mywindow.New(pool, mywindow.KeepFrames(maxFrames))}, nil
//			},
//		})
//	}
//
// The checks use the interface only, so they hold for a window outside
// the process (PostgreSQL) as for [replay.Memory]: each uses a fresh random
// conversation id, so windows may share one database; no check depends on
// a tight timing (a Wait that must return is given [Config.Timeout], a Wait
// that must block is watched for [Config.Block]). They check the bounds of
// an unknown turn, the exact canonical bytes and order of what Read
// returns after every cursor, the cursor refusals with their bounds, the
// Append refusals with their bounds and nothing stored, the frame limit to
// the byte, the end of a turn and the late tool_result, Wait's wakeups (the
// frame appended between a Read and a Wait above all), its context, the
// isolation of conversations sharing a turn id, many concurrent readers
// following one writer with the reader loop of package replay, each seeing
// every frame once in order, and, with [Config.NewRetaining], count
// retention: Lower moves, stale-cursor below it, no gap.
//
// [Check] runs the same checks and returns their failures instead of
// reporting them; this package's tests run it against known-broken windows
// to prove that each defect is caught. Nothing here is for production use;
// import it from tests only.
package replaytest
