package pgstore_test

import (
	"context"
	"log"
	"net/http"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/Papercusp/chat-protocol-go/pgstore"
	"github.com/Papercusp/chat-protocol-go/replay"
	"github.com/Papercusp/chat-protocol-go/stream"
)

// A host serving turn streams from several instances behind a load
// balancer switches from the memory window to PostgreSQL with one choice:
// the window handed to stream.NewHandler. Everything else, the handler,
// its options and the routes, is unchanged, and a reconnect may then land
// on any instance.
func ExampleNewWindow() {
	ctx := context.Background()
	mayRead := func(r *http.Request, key replay.Key) error { return nil } // the host's authorization
	opts := &stream.HandlerOptions{Authorize: mayRead}

	// One instance: the memory window.
	memory := replay.NewMemory(nil)
	single, err := stream.NewHandler(memory, opts)
	if err != nil {
		log.Fatal(err)
	}
	_ = single

	// Several instances: the PostgreSQL window, one per process, on the
	// primary (a session, not a transaction pooler, for its listener).
	pool, err := pgxpool.New(ctx, "postgres://app@db-primary/app?target_session_attrs=read-write")
	if err != nil {
		log.Fatal(err)
	}
	defer pool.Close()
	if err := pgstore.Migrate(ctx, pool); err != nil {
		log.Fatal(err)
	}
	pgWindow, err := pgstore.NewWindow(pool, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer pgWindow.Close()
	shared, err := stream.NewHandler(pgWindow, opts)
	if err != nil {
		log.Fatal(err)
	}

	mux := http.NewServeMux()
	mux.Handle("GET /conversations/{conversation}/turns/{turn}/events", shared)
	srv := &http.Server{Addr: ":8080", Handler: mux}
	srv.RegisterOnShutdown(shared.Close)
	log.Fatal(srv.ListenAndServe())
}
