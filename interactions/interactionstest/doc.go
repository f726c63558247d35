// Package interactionstest provides test doubles and a conformance suite
// for interactions.Store, in the manner of testing/fstest.
//
// DB is a fake database shared by any number of workers (DB.Open returns a
// fresh worker's Store), with failpoints (Store.Inject: an unavailable
// database, a rollback, a commit whose acknowledgement is lost, a commit
// that never happened) and a record of every version and commit for
// invariant checks. Clock is a fake clock. TestStore checks a host's own
// Store adapter against the seam's promises; DB.OpenBroken returns the
// known-broken stores TestStore is proven to catch.
package interactionstest
