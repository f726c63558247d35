package pgstore_test

import (
	"context"
	"net/http"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/Papercusp/chat-protocol-go/pgstore"
	"github.com/Papercusp/chat-protocol-go/recovery"
	"github.com/Papercusp/chat-protocol-go/replay"
	"github.com/Papercusp/chat-protocol-go/stream"
)

// The README's "PostgreSQL stores" code, verbatim between the markers:
// compiled here, run by hand against a server.
var _, _, _ = readmeRecoveryStore, readmeAbortListener, readmeWindow

func readmeRecoveryStore(ctx context.Context, auth recovery.Authorizer, launcher recovery.Launcher) error {
	// README:begin
	pool, err := pgxpool.New(ctx, "postgres://app@db-primary/app?target_session_attrs=read-write")
	if err != nil {
		return err
	}
	if err := pgstore.Migrate(ctx, pool); err != nil { // embedded, versioned migrations
		return err
	}
	store, err := pgstore.NewRecoveryStore(pool, nil) // compare-and-swap + admission fence
	if err != nil {
		return err
	}
	rec := recovery.New(recovery.Host{Store: store, Authorizer: auth}, nil)
	turn := recovery.TurnRef{Conversation: "c-1", Turn: "t-1"}
	if _, err := rec.Start(ctx, "user-7", turn, []string{"call-1"}); err != nil {
		return err
	}
	res, err := rec.Execute(ctx, "user-7", recovery.EffectRef{Turn: turn, Effect: "call-1"}, launcher)
	// README:end
	_ = res
	return err
}

func readmeAbortListener(ctx context.Context, pool *pgxpool.Pool, store *pgstore.RecoveryStore, turns recovery.Aborter,
	auth recovery.Authorizer, effect recovery.EffectRef, runner recovery.Launcher) error {
	// README:begin
	listener, err := pgstore.NewAbortListener(pool.Config().ConnConfig, store, turns, nil) // turns: the host's Aborter
	if err != nil {
		return err
	}
	go listener.Run(ctx) // reconnects until ctx ends
	rec := recovery.New(recovery.Host{Store: store, Authorizer: auth, Aborter: turns}, nil)
	res, err := rec.Execute(ctx, "user-7", effect, listener.Launcher(runner)) // watched until its Wait returns
	// README:end
	_ = res
	return err
}

func readmeWindow(pool *pgxpool.Pool, mayRead func(r *http.Request, key replay.Key) error) error {
	// README:begin
	window, err := pgstore.NewWindow(pool, nil) // was: replay.NewMemory(nil)
	if err != nil {
		return err
	}
	defer window.Close()
	h, err := stream.NewHandler(window, &stream.HandlerOptions{Authorize: mayRead})
	// README:end
	_ = h
	return err
}
