// Package interactionstest provides test doubles and the conformance kit
// of [interactions.Store], in the manner of testing/fstest.
//
// [DB] is a fake database shared by any number of workers ([DB.Open] returns a
// fresh worker's Store), with failpoints ([Store.Inject]: an unavailable
// database, a rollback, a commit whose acknowledgement is lost, a commit
// that never happened) and a record of every version and commit for
// invariant checks. Clock is a fake clock. [TestStore] checks a host's own
// Store adapter against the seam's promises; [DB.OpenBroken] returns the
// known-broken stores (Broken) it is proven to catch.
//
//	func TestMyStore(t *testing.T) {
//		interactionstest.TestStore(t, interactionstest.Config{
//			NewSubject: func(ctx context.Context) (interactionstest.Subject, error) {
//				db, err := mydb.NewSchema(ctx)
//				if err != nil {
//					return interactionstest.Subject{}, err
//				}
//				return interactionstest.Subject{Open: db.OpenStore, Grant: db.Grant,
//					Revoke: db.Revoke, Transitions: db.Transitions, Close: db.Drop}, nil
//			},
//		})
//	}
//
// The kit has the shape of the module's other kits (replay/replaytest,
// recovery/recoverytest): [TestStore](t, Config) and Check(ctx, Config), a
// fresh Subject per check (closed by the kit when the check ends),
// [CheckNames], and a [*CheckError] per failed check. The package imports
// testing and testify; import it from tests only.
package interactionstest
