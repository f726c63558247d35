// Command server is the example conversation service of examples/server
// (package demo; see its documentation for the turns, endpoints and
// output) with its stores on PostgreSQL: -store postgres DSN keeps the
// turns' frames ([pgstore.Window]), the conversations
// ([pgstore.ConversationStore]), the recovery store and the card store in
// the database, which it migrates first. It lives in the pgstore module,
// so that the core module links no database driver; -store memory is
// examples/server.
//
//	cd pgstore && go run ./examples/server -store postgres 'postgres://app@localhost/app'
//
// The conversations stay in the database: a second run takes up the chain
// conversation again (-conversation), its history, card answers and
// completed tool results kept, and starts its next turn under a new id (a
// turn the killed process left running ends failed first). It declares
// connectionReplay, persistedHistory, persistedDecisions and
// completedToolCheckpoints (the line capabilities), not
// interruptedTurnRecovery: it resumes no interrupted turn. Every instance
// on the same database serves every turn's stream, but a turn runs, and
// is cancelled, in the instance that started it.
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
	// The demo's authority is its access rule's (conversation.Gate's
	// CardAuthority), which reads the conversation's owner through the
	// conversation store. A host whose grants live in rows reads them in
	// tx, FOR SHARE.
	cardStore, err := pgstore.NewInteractionStore(pool, func(_ context.Context, _ pgx.Tx, c interactions.Caller, conversation string) (interactions.Authority, error) {
		return authority(c, conversation), nil
	}, nil)
	if err != nil {
		return fail(err)
	}
	conversations, err := pgstore.NewConversationStore(pool, nil)
	if err != nil {
		return fail(err)
	}
	window, err := pgstore.NewWindow(pool, nil)
	if err != nil {
		return fail(err)
	}
	return demo.Stores{Window: window, Conversations: conversations, Recovery: recoveryStore, Cards: cardStore,
		Close: func() { window.Close(); pool.Close() }}, nil
}
