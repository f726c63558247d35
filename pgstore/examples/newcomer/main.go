// Command newcomer is examples/newcomer's conversation service (package
// service) on PostgreSQL: the same host code, only the store
// constructors changed. DATABASE_URL names the database, which it
// migrates first:
//
//	cd pgstore && DATABASE_URL='postgres://app@localhost/app' ADDR=127.0.0.1:8080 go run ./examples/newcomer
package main

import (
	"cmp"
	"context"
	"errors"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"syscall"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/Papercusp/chat-protocol-go/conversation"
	"github.com/Papercusp/chat-protocol-go/examples/newcomer/service"
	"github.com/Papercusp/chat-protocol-go/interactions"
	"github.com/Papercusp/chat-protocol-go/pgstore"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	stores, closeStores, err := postgres(ctx, os.Getenv("DATABASE_URL"))
	if err == nil {
		defer closeStores()
		var ln net.Listener
		if ln, err = net.Listen("tcp", cmp.Or(os.Getenv("ADDR"), "127.0.0.1:8080")); err == nil {
			log.Info("serving", "addr", ln.Addr().String())
			err = service.Serve(ctx, ln, stores, log)
		}
	}
	if err != nil {
		log.Error("newcomer", "err", err)
		os.Exit(1)
	}
}

// postgres returns the PostgreSQL stores on the database at dsn, migrated,
// the card store's authority the service's access rule, and what closes
// them.
func postgres(ctx context.Context, dsn string) (conversation.Stores, func(), error) {
	pool, err := pgxpool.New(ctx, dsn)
	if err == nil {
		err = pgstore.Migrate(ctx, pool)
	}
	if err != nil {
		return conversation.Stores{}, nil, errors.Join(err, closePool(pool))
	}
	convs, err1 := pgstore.NewConversationStore(pool, nil)
	g := &conversation.Gate{Store: convs, Access: service.Access}
	cards, err2 := pgstore.NewInteractionStore(pool, func(ctx context.Context, _ pgx.Tx, c interactions.Caller, id string) (interactions.Authority, error) {
		return g.CardAuthority(ctx, c, id)
	}, nil)
	rec, err3 := pgstore.NewRecoveryStore(pool, nil)
	window, err4 := pgstore.NewWindow(pool, nil)
	if err := errors.Join(err1, err2, err3, err4); err != nil {
		pool.Close()
		return conversation.Stores{}, nil, err
	}
	return conversation.Stores{Window: window, Conversations: convs, Recovery: rec, Cards: cards}, func() { window.Close(); pool.Close() }, nil
}

// closePool closes pool when there is one.
func closePool(pool *pgxpool.Pool) error {
	if pool != nil {
		pool.Close()
	}
	return nil
}
