package pgstore_test

import (
	"context"
	"log"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/Papercusp/chat-protocol-go/pgstore"
	"github.com/Papercusp/chat-protocol-go/recovery"
)

// A host wires pgstore into TurnRecovery: migrate once, then one store per
// process; auth, aborter, replay and launcher are the host's own. The same
// code is in the README.
func ExampleNewRecoveryStore() {
	ctx := context.Background()
	var auth recovery.Authorizer // the host's current authorization
	var launcher recovery.Launcher
	pool, err := pgxpool.New(ctx, "postgres://app@db-primary/app?target_session_attrs=read-write")
	if err != nil {
		log.Fatal(err)
	}
	defer pool.Close()
	if err := pgstore.Migrate(ctx, pool); err != nil {
		log.Fatal(err)
	}
	store, err := pgstore.NewRecoveryStore(pool, nil)
	if err != nil {
		log.Fatal(err)
	}
	rec := recovery.New(recovery.Host{Store: store, Authorizer: auth}, nil)
	turn := recovery.TurnRef{Conversation: "c-1", Turn: "t-1"}
	if _, err := rec.Start(ctx, "user-7", turn, []string{"call-1"}); err != nil {
		log.Fatal(err)
	}
	res, err := rec.Execute(ctx, "user-7", recovery.EffectRef{Turn: turn, Effect: "call-1"}, launcher)
	log.Println(res, err)
}
