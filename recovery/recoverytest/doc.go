// Package recoverytest is the test kit of package recovery: an in-memory
// fake database with named failpoints at every durable write, a fake host,
// a history recorder with a linearizability check, known-broken stores, and
// [TestStore], the conformance suite a host runs against its own
// [recovery.Store] adapter, in the manner of testing/fstest.TestFS.
//
// # The fake database
//
// [NewDB] returns a [DB]; each worker opens its own Store handle with [DB.Open],
// as each process opens its own connection. A handle implements
// [recovery.Store] and [recovery.Admitter] with a per-turn fence shared by
// AdmitDispatch and EndTurn. [DB.Arm] arms a failpoint, named "site.mode"
// (Failpoints lists all 25): at each of the eight write sites (start,
// claim, admit, complete, mark, reconcile, cancel, finish) the write fails
// before being applied, is applied and then the worker crashes (the handle
// is dead; open a fresh one), or is applied and its acknowledgement is
// lost; and "load.before" fails a read. [DBOptions.Hook] runs at every call,
// and once more inside AdmitDispatch just before launch ([OpLaunch]), which
// tests use to interleave work and the simulation uses as the yield points
// of its scheduler.
//
// # Conformance
//
//	func TestMyStore(t *testing.T) {
//		recoverytest.TestStore(t, recoverytest.Config{
//			NewSubject: func(ctx context.Context) (recoverytest.Subject, error) {
//				return recoverytest.Subject{Store: mystore.New(pool), Reopen: reopen}, nil
//			},
//		})
//	}
//
// The kit has the shape of the module's other kits (replay/replaytest,
// interactions/interactionstest): [TestStore](t, Config) and Check(ctx,
// Config), a fresh Subject per check (closed by the kit when the check
// ends), [CheckNames], and a [*CheckError] per failed check.
//
// The suite checks the compare-and-swap (also under concurrency), the
// per-effect independence of revisions, the admission refusals, that the
// admission mark is committed before launch, that EndTurn waits for the
// fence while AdmitDispatch authorizes and launches, that a refused
// AdmitDispatch takes the fence first (Reconcile's barrier), a race of admission
// against cancellation, a porcupine linearizability check of concurrent
// random operations, and, when [Subject.Arm] can inject them, that every fault
// is reported truthfully. Check runs the same suite outside a test; the
// known-broken stores ([DBOptions.Broken], [FakeSubject]) prove it fails what
// it should.
//
// Nothing here is for production use. The package imports testing and
// porcupine; import it from tests only.
package recoverytest
