// Package demo is the example server (examples/server): a small chat
// service with every part of the module a host wires, on stores the caller
// of Run chooses. The command in examples/server runs it on the in-memory
// stores; pgstore/examples/server, in the pgstore module, runs it on
// PostgreSQL too (-store postgres DSN), and redisstore/examples/server, in
// the redisstore module, with its replay window on Redis (-store redis
// ADDR), so that this module links no database driver and no Redis client.
// Instances sharing a window serve each other's turns: a stream, or a
// useChat resume, of a turn another instance runs.
//
// The service runs conversation c-1 (-conversation) as a chain of -turns
// turns (2 by default), each written by a [turn.Producer] on the replay
// window (docs/contract.md section 16) and played by the scripted model:
// t-1 is lifecycle started, half the -deltas, a tool call search_docs run
// through recovery (a local function, launched at most once), the other
// deltas, a card asking whether it helped, lifecycle completed, one frame
// every -pace. The card's answer, through the answer endpoint, wakes the
// host ([interactions.Resolver.Wait]), which starts t-2: started, card_closed,
// a reply to the answer, completed; a turn before the last of the chain
// then plays the script again and asks its own card. A turn asks a card
// only when a next turn will close it: with -turns 1, t-1 asks none. With
// -replay FILE -from KIND the model is instead a recorded provider stream
// (docs/contract.md section 17), played through [ingest.ProducerSink], one
// text or tool call every -pace; its end ends the turn (-turns is 1). Its
// reasoning or thinking and the pages it cites go on the stream as the
// registered reasoning and source events (docs/contract.md section 6.5),
// which the host registers for every stream: useChat's reasoning and
// source-url parts, AG-UI's reasoning messages, never the text; a
// version-1 reader registers them too.
// With -model KIND the first turn runs through the agent loop (package
// agent) on a loopback provider of KIND's API that answers with recorded
// steps (no network): the question "What is the refund policy?", the
// model's call of search_docs, its result, then the model's answer; the
// loop ends the turn completed (-turns is 1).
//
// Endpoints, for the one caller "demo" (Authorization: Bearer demo, or the
// query parameter access_token=demo where a client cannot set headers, as
// a browser's EventSource); anyone else gets what an unknown turn gets:
//
//	GET  /conversations/{c}/turns/{t}/events   the turn's version-1 stream (stream.Handler)
//	POST /conversations/{c}/turns/{t}/cancel   cancels the running turn (turn.NewCancelHandler)
//	POST /conversations/{c}/cards/{card}/answer the card's answer (answerhttp)
//	     /api/chat                              useChat's UI message stream (uistream)
//	POST /api/ag-ui                             an AG-UI run (agui)
//
// A POST to /api/chat or /api/ag-ui starts a turn of the chat or thread
// (t-1, t-2 … per conversation) with the same script, asking a card; a POST
// carrying the card's answer (the body's answer member, AG-UI's resume
// entries) starts instead a turn that closes the card and replies. Every
// turn is also a version-1 stream under its conversation and id.
//
// The first -turns lines on stdout are the chain's stream URLs,
// http://ADDR/conversations/c-1/turns/t-N/events?access_token=demo (with the
// real port when -addr asks for port 0); then one line per endpoint, NAME
// URL: cancel (t-1's), answer (card-t-1's, when t-1 asks one),
// ui-message-stream (the api a useChat is given) and ag-ui.
//
// A client that goes away stops no turn: only a cancel request does,
// through recovery, and the turn ends cancelled. SIGINT or SIGTERM shuts the
// server down gracefully: the running turns are interrupted (lifecycle
// interrupted), the streams aborted so that their clients would resume
// elsewhere, and Run returns.
package demo

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	chatprotocol "github.com/Papercusp/chat-protocol-go"
	"github.com/Papercusp/chat-protocol-go/agui"
	"github.com/Papercusp/chat-protocol-go/ingest"
	"github.com/Papercusp/chat-protocol-go/interactions"
	"github.com/Papercusp/chat-protocol-go/interactions/answerhttp"
	"github.com/Papercusp/chat-protocol-go/interactions/jsonschema"
	"github.com/Papercusp/chat-protocol-go/recovery"
	"github.com/Papercusp/chat-protocol-go/refusal"
	"github.com/Papercusp/chat-protocol-go/replay"
	"github.com/Papercusp/chat-protocol-go/serve"
	"github.com/Papercusp/chat-protocol-go/stream"
	"github.com/Papercusp/chat-protocol-go/turn"
	"github.com/Papercusp/chat-protocol-go/uistream"
)

// Stores are the stores a server runs on: the replay window of its turns,
// the recovery store (an Admitter too: the admission fence) and the card
// store.
type Stores struct {
	Window   replay.Window
	Recovery recovery.Store
	Cards    interactions.Store
	// Close releases the stores once the server has stopped; nil when
	// there is nothing to release.
	Close func()
}

// Opener opens the stores the flag -store names, with the command's
// operand dsn ("" when there is none). The card store reads the callers'
// authority with authority. An unknown store is an error.
type Opener func(ctx context.Context, store, dsn string, authority interactions.AuthorityFunc) (Stores, error)

// Memory is the Opener of -store memory: [replay.Memory],
// [recovery.MemoryStore] and [interactions.MemoryStore], which keep everything
// in the process. It refuses any other store, and postgres with how to run
// it.
func Memory(_ context.Context, store, dsn string, authority interactions.AuthorityFunc) (Stores, error) {
	switch {
	case store == "postgres":
		return Stores{}, errors.New("-store postgres: this command links no database driver; run (cd pgstore && go run ./examples/server -store postgres DSN)")
	case store == "redis":
		return Stores{}, errors.New("-store redis: this command links no Redis client; run (cd redisstore && go run ./examples/server -store redis ADDR)")
	case store != "memory" || dsn != "":
		return Stores{}, fmt.Errorf("-store %q: want -store memory, without operand", store)
	}
	return Stores{Window: replay.NewMemory(nil), Recovery: recovery.NewMemoryStore(nil),
		Cards: interactions.NewMemoryStore(authority, nil)}, nil
}

// config is what the flags set.
type config struct {
	addr         string
	deltas       int
	pace         time.Duration
	turns        int
	conversation string
	store, dsn   string
	replay, from string
	model        string
}

func parseFlags(args []string, stderr io.Writer) (config, error) {
	var c config
	fs := flag.NewFlagSet("server", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&c.addr, "addr", "127.0.0.1:8080", "listen address HOST:PORT (port 0 picks a free one)")
	fs.IntVar(&c.deltas, "deltas", 50, "delta events of the script")
	fs.DurationVar(&c.pace, "pace", 20*time.Millisecond, "time between two frames of a turn")
	fs.IntVar(&c.turns, "turns", 2, "turns of the chain: the answer to each one's card starts the next")
	fs.StringVar(&c.conversation, "conversation", "c-1", "the chain's conversation id")
	fs.StringVar(&c.store, "store", "memory", "the stores: memory, postgres with the DSN as operand, or redis with the address as operand")
	fs.StringVar(&c.replay, "replay", "", "a recorded provider stream (raw SSE) to serve as the first turn, instead of the script")
	fs.StringVar(&c.from, "from", "", "the kind of the -replay stream: "+strings.Join(kindNames(), ", "))
	fs.StringVar(&c.model, "model", "", "run the first turn through the agent loop on a loopback provider of this API: "+strings.Join(kindNames(), ", "))
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if fs.NArg() > 0 {
		c.dsn = fs.Arg(0)
	}
	if c.deltas < 2 || c.turns < 1 || c.pace < 0 || fs.NArg() > 1 || (fs.NArg() == 1) == (c.store == "memory") {
		return c, errors.New("want -deltas 2 or more, -turns 1 or more, -pace 0 or more, and an operand (a DSN, an address) exactly with a -store other than memory")
	}
	if (c.replay == "") != (c.from == "") {
		return c, errors.New("-replay and -from go together")
	}
	if c.from != "" {
		if _, err := ingest.ParseKind(c.from); err != nil {
			return c, fmt.Errorf("-from: %w", err)
		}
		c.turns = 1 // the provider's end ends the turn: no card, no next turn
	}
	if c.model != "" {
		if c.from != "" {
			return c, errors.New("-model and -replay exclude each other")
		}
		if _, err := ingest.ParseKind(c.model); err != nil {
			return c, fmt.Errorf("-model: %w", err)
		}
		c.turns = 1 // the loop ends the turn: no card, no next turn
	}
	if err := (recovery.TurnRef{Conversation: c.conversation, Turn: "t-1"}).Validate(); err != nil {
		return c, fmt.Errorf("-conversation: %w", err)
	}
	return c, nil
}

// Run serves the demo until ctx ends, on the stores open opens, then shuts
// down gracefully; args are the command's arguments, stdout gets the URLs
// (see the package documentation) and stderr the logs. It returns an error
// for bad flags, stores that do not open or a chain conversation that
// already has turns in them, and a listener or shutdown failure.
func Run(ctx context.Context, args []string, stdout, stderr io.Writer, open Opener) error {
	c, err := parseFlags(args, stderr)
	if err != nil {
		return err
	}
	log := slog.New(slog.NewTextHandler(stderr, nil))
	stores, err := open(ctx, c.store, c.dsn, authority)
	if err != nil {
		return err
	}
	if stores.Close != nil {
		defer stores.Close()
	}
	schemas := jsonschema.NewRegistry()
	if err := schemas.Register(helpful, []byte(helpfulSchema)); err != nil {
		return err
	}
	res, err := interactions.New(stores.Cards, schemas, &interactions.Options{CardRules: chatprotocol.ValidateCardSpec})
	if err != nil {
		return err
	}
	runs := turn.NewRuns() // recovery's Aborter: a cancel reaches the turn's producer
	life, stopTurns := context.WithCancel(ctx)
	defer stopTurns()
	// The turns carry the providers' reasoning and cited pages: every
	// stream of the host reads them (docs/contract.md section 6.5).
	reg, err := chatprotocol.NewRegistry(nil, chatprotocol.WithReasoning(), chatprotocol.WithSources())
	if err != nil {
		return err
	}
	h := &host{window: stores.Window, runs: runs, cards: res, schemas: schemas, log: log, life: life, registry: reg,
		rec:   recovery.New(recovery.Host{Store: stores.Recovery, Authorizer: authorizer{}, Aborter: runs}, nil),
		model: script{deltas: c.deltas, pace: c.pace, log: log}.play,
		convs: map[string]*conversation{}, agTurn: map[[2]string]replay.Key{}}
	if c.replay != "" {
		kind, _ := ingest.ParseKind(c.from)
		h.model = recorded{file: c.replay, kind: kind, pace: c.pace}.play
	}
	if c.model != "" {
		kind, _ := ingest.ParseKind(c.model)
		prov, err := startProvider(kind)
		if err != nil {
			return err
		}
		defer prov.Close()
		a, err := newAgentic(kind, prov.url, log)
		if err != nil {
			return err
		}
		h.model = a.play
	}
	if err := h.freeChain(ctx, c.conversation, c.turns); err != nil {
		return err
	}
	mux, handlers, err := h.routes(log)
	if err != nil {
		return err
	}

	ln, err := net.Listen("tcp", c.addr)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: mux, ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn),
		// docs/contract.md section 14.6: reading a request is bounded, an idle
		// connection closes, a stream is not (each write has its own deadline,
		// so no WriteTimeout).
		ReadHeaderTimeout: 10 * time.Second, ReadTimeout: 30 * time.Second, IdleTimeout: 2 * time.Minute}
	for _, s := range handlers {
		srv.RegisterOnShutdown(s.Close) // Shutdown does not end streams by itself
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	if _, err := h.start(ctx, c.conversation, turnID(1), true, c.turns > 1, h.chain(c.conversation, 1, c.turns)); err != nil {
		return errors.Join(err, srv.Close())
	}
	printURLs(stdout, "http://"+ln.Addr().String(), c)

	select {
	case err = <-served:
	case <-ctx.Done():
	}
	stopTurns() // the running turns are interrupted
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	waited := make(chan struct{})
	go func() { h.turns.Wait(); close(waited) }()
	select {
	case <-waited:
	case <-shutdownCtx.Done():
	}
	err = errors.Join(err, srv.Shutdown(shutdownCtx))
	for _, s := range handlers {
		err = errors.Join(err, s.Shutdown(shutdownCtx)) // the parked streams too
	}
	return err
}

// freeChain checks that the window holds no frame of the chain's turns (a
// durable store may hold those of an earlier run), and reserves them.
func (h *host) freeChain(ctx context.Context, conversation string, turns int) error {
	for i := 1; i <= turns; i++ {
		b, err := h.window.Bounds(ctx, replay.Key{ConversationID: conversation, TurnID: turnID(i)})
		if err != nil {
			return err
		}
		if b.Latest > 0 {
			return fmt.Errorf("conversation %s already has turn %s in these stores: choose another with -conversation", conversation, turnID(i))
		}
	}
	h.reserve(conversation, turns)
	return nil
}

// streams are the handlers that serve streams, which a shutdown ends.
type streams interface {
	Close()
	Shutdown(ctx context.Context) error
}

// routes builds the endpoints of the package documentation.
func (h *host) routes(log *slog.Logger) (*http.ServeMux, []streams, error) {
	events, err := stream.NewHandler(h.window, &stream.HandlerOptions{Authorize: func(r *http.Request, key replay.Key) error { // the window waits for any turn: deny unknown ones
		if _, err := callerOf(r); err != nil || !h.exists(r.Context(), key) {
			return refusal.ErrTurnNotFound
		}
		return nil
	}, Options: serve.Options{Logger: log}})
	if err != nil {
		return nil, nil, err
	}
	cancel, err := turn.NewCancelHandler(h.rec, &turn.CancelHandlerOptions{Logger: log,
		Caller: func(r *http.Request) (string, error) {
			c, err := callerOf(r)
			return c.Principal, err
		}})
	if err != nil {
		return nil, nil, err
	}
	answers, err := answerhttp.NewHandler(h.cards, &answerhttp.HandlerOptions{Caller: callerOf, Logger: log})
	if err != nil {
		return nil, nil, err
	}
	ui, err := uistream.NewHandler(h.window, &uistream.HandlerOptions{StartTurn: h.startTurn, ActiveTurn: h.activeTurn, Cancel: h.cancelTurn, Resolver: h.cards, Caller: callerOf, Registry: h.registry, Options: serve.Options{Logger: log}})
	if err != nil {
		return nil, nil, err
	}
	ag, err := agui.NewHandler(h.window, &agui.HandlerOptions{StartRun: h.startRun, Resolver: h.cards, Caller: callerOf, Registry: h.registry, Options: serve.Options{Logger: log}})
	if err != nil {
		return nil, nil, err
	}
	mux := http.NewServeMux()
	// No pattern names a method: each handler answers a method it does
	// not serve with the JSON 405, where http.ServeMux would in plain text.
	mux.Handle("/conversations/{conversation}/turns/{turn}/events", events)  // GET, HEAD
	mux.Handle("/conversations/{conversation}/turns/{turn}/cancel", cancel)  // POST
	mux.Handle("/conversations/{conversation}/cards/{card}/answer", answers) // POST
	ui.Register(mux, "/api/chat")                                            // POST; GET and DELETE {chatId}/stream; POST {chatId}/stop
	mux.Handle("/api/ag-ui", ag)                                             // POST
	return mux, []streams{events, ui, ag}, nil
}

// printURLs writes the chain's stream URLs, then one NAME URL line per
// endpoint.
func printURLs(w io.Writer, base string, c config) {
	conv := base + "/conversations/" + url.PathEscape(c.conversation)
	for i := 1; i <= c.turns; i++ {
		fmt.Fprintf(w, "%s/turns/%s/events?access_token=%s\n", conv, turnID(i), demoToken)
	}
	fmt.Fprintf(w, "cancel %s/turns/%s/cancel\n", conv, turnID(1))
	if c.turns > 1 {
		fmt.Fprintf(w, "answer %s/cards/card-%s/answer\n", conv, turnID(1))
	}
	fmt.Fprintf(w, "ui-message-stream %s/api/chat\n", base)
	fmt.Fprintf(w, "ag-ui %s/api/ag-ui\n", base)
}

// demoToken is the demo caller's credential, demoCaller the caller it
// stands for.
const demoToken = "demo"

var demoCaller = interactions.Caller{Principal: "demo"}

// callerOf is the session lookup of every endpoint: the demo caller for
// Authorization: Bearer demo or access_token=demo, else no one. A real host
// asks its own sessions here.
func callerOf(r *http.Request) (interactions.Caller, error) {
	if r.Header.Get("Authorization") != "Bearer "+demoToken && r.URL.Query().Get("access_token") != demoToken {
		return interactions.Caller{}, errors.New("no session")
	}
	return demoCaller, nil
}

// authority is the card store's AuthorityFunc: the demo caller may act in
// every conversation, anyone else in none.
func authority(c interactions.Caller, conversation string) interactions.Authority {
	if c != demoCaller {
		return interactions.Authority{}
	}
	return interactions.Authority{Active: true, Scope: interactions.Scope{Conversation: conversation, Caller: c}}
}

// authorizer is recovery's Authorizer: the host's worker does everything,
// the demo caller may cancel and read any turn, anyone else nothing.
type authorizer struct{}

func (authorizer) Authorize(_ context.Context, caller string, _ recovery.TurnRef, action recovery.Action) error {
	switch {
	case caller == worker:
		return nil
	case caller == demoCaller.Principal && (action == recovery.ActionCancel || action == recovery.ActionRead):
		return nil
	}
	return refusal.ErrUnauthorized
}

// kindNames lists the provider stream kinds -from takes.
func kindNames() []string {
	var out []string
	for _, k := range ingest.Kinds() {
		out = append(out, string(k))
	}
	return out
}
