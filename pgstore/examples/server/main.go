// Command server is the example chat service of examples/server (package
// demo; see its documentation for the turns, endpoints and output) with
// its stores on PostgreSQL: -store postgres DSN keeps the turns' frames
// ([pgstore.Window]), the recovery store and the card store in the database,
// which it migrates first. It lives in the pgstore module, so that the core
// module links no database driver; -store memory is examples/server.
//
//	cd pgstore && go run ./examples/server -store postgres 'postgres://app@localhost/app'
//
// A conversation's turns stay in the database: a second run names another
// chain conversation with -conversation (the server refuses to start on one
// that already has turns). Every instance on the same database serves every
// turn's stream, but a turn runs, and is cancelled, in the instance that
// started it.
package main

import (
	"context"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/Papercusp/chat-protocol-go/examples/server/demo"
	"github.com/Papercusp/chat-protocol-go/interactions"
	"github.com/Papercusp/chat-protocol-go/pgstore"
)

func main() { demo.Main(open) }

// open is the demo's Opener: the PostgreSQL stores for -store postgres,
// the in-memory ones otherwise.
func open(ctx context.Context, store, dsn string, authority interactions.AuthorityFunc) (demo.Stores, error) {
	if store != "postgres" {
		return demo.Memory(ctx, store, dsn, authority)
	}
	pool, err := pgxpool.New(ctx, dsn)
	if err != nil {
		return demo.Stores{}, err
	}
	fail := func(err error) (demo.Stores, error) {
		pool.Close()
		return demo.Stores{}, err
	}
	if err := pgstore.Migrate(ctx, pool); err != nil {
		return fail(err)
	}
	recoveryStore, err := pgstore.NewRecoveryStore(pool, nil)
	if err != nil {
		return fail(err)
	}
	// The demo's authority is a constant of its one caller: no row to read
	// or lock in tx. A real host reads its grants there, FOR SHARE.
	cardStore, err := pgstore.NewInteractionStore(pool, func(_ context.Context, _ pgx.Tx, c interactions.Caller, conversation string) (interactions.Authority, error) {
		return authority(c, conversation), nil
	}, nil)
	if err != nil {
		return fail(err)
	}
	window, err := pgstore.NewWindow(pool, nil)
	if err != nil {
		return fail(err)
	}
	return demo.Stores{Window: window, Recovery: recoveryStore, Cards: cardStore,
		Close: func() { window.Close(); pool.Close() }}, nil
}
