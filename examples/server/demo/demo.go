// Package demo is the example server (examples/server): a conversation
// service with every part of the module a host wires, on stores the caller
// of Run chooses. The command in examples/server runs it on the in-memory
// stores; pgstore/examples/server, in the pgstore module, runs it on
// PostgreSQL too (-store postgres DSN), and redisstore/examples/server, in
// the redisstore module, with its replay window on Redis (-store redis
// ADDR), so that this module links no database driver and no Redis client.
// Instances sharing a window serve each other's turns: a stream, or a
// useChat resume, of a turn another instance runs.
//
// Its conversations, their turns and each one's running turn are a
// [conversation.Store]'s (docs/contract.md section 20): a turn's id is the
// store's, which never repeats one of an earlier process, and an ended
// turn's reduced state is stored in it, so that the history outlives the
// replay window. One access rule, [conversation.OwnerOnly] (a conversation's
// owner may do everything, nobody else anything), gives through a
// [conversation.Gate] the hooks of every endpoint.
//
// The service runs conversation c-1 (-conversation; created for the caller
// demo on the first run, taken up again by a later run on durable stores)
// as a chain of -turns turns (2 by default), each written by a
// [turn.Producer] on the replay window (docs/contract.md section 16) and
// played by the scripted model: the first is lifecycle started, half the
// -deltas, a tool call search_docs run through recovery (a local function,
// launched at most once), the other deltas, a card asking whether it
// helped, lifecycle completed, one frame every -pace. The card's answer,
// through the answer endpoint, wakes the host
// ([interactions.Resolver.Wait]), which starts the next turn (its user's
// text the option chosen): started, card_closed, a reply to the answer,
// completed; a turn before the last of the chain then plays the script
// again and asks its own card. A turn asks a card only when a next turn
// will close it: with -turns 1, the first asks none. With -replay FILE
// -from KIND the model is instead a recorded provider stream
// (docs/contract.md section 17), played through [ingest.ProducerSink], one
// text or tool call every -pace; its end ends the turn (-turns is 1). Its
// reasoning or thinking and the pages it cites go on the stream as the
// registered reasoning and source events (docs/contract.md section 6.5),
// which the host registers for every stream: useChat's reasoning and
// source-url parts, AG-UI's reasoning messages, never the text; a
// version-1 reader registers them too. With -model KIND a turn runs
// through the agent loop (package agent) on a loopback provider of KIND's
// API that answers with recorded steps (no network), the conversation up
// to the turn its input: the question "What is the refund policy?", the
// model's call of search_docs, its result, then the model's answer; the
// loop ends the turn completed (-turns is 1).
//
// Callers are signed in by a bearer token (Authorization: Bearer TOKEN, or
// the query parameter access_token=TOKEN where a client cannot set
// headers, as a browser's EventSource): demo, and guest, who owns nothing
// until it starts a chat of its own. A request for another's conversation
// gets what an unknown one gets. Endpoints, with the action each asks the
// rule for:
//
//	GET  /conversations/{c}/turns/{t}/events   read: the turn's version-1 stream (stream.Handler)
//	POST /conversations/{c}/turns              start: a scripted turn (conversation.NewStartHandler)
//	POST /conversations/{c}/turns/{t}/cancel   cancel, and read: cancels the running turn (turn.NewCancelHandler)
//	POST /conversations/{c}/cards/{card}/answer the card's answer, its answerer the owner (answerhttp)
//	     /api/chat                              useChat's UI message stream (uistream): start; read to resume; cancel to stop
//	GET  /api/chat/{chatId}/messages            read: the chat's UIMessage[] (uistream.NewHistoryHandler)
//	POST /api/ag-ui                             an AG-UI run (agui): start, then MESSAGES_SNAPSHOT (read)
//
// A POST to /api/chat or /api/ag-ui starts a turn of the chat or thread,
// created for its caller on the first POST, with the same script, asking a
// card; a POST carrying the card's answer (the body's answer member, AG-UI's
// resume entries) starts instead a turn that closes the card and replies.
// An AG-UI run whose client goes away goes on (KeepRunOnDisconnect): the
// same run posted again, with its runId, to this instance or another on
// the same stores, is its turn streamed whole (the store keeps the runId
// as the start's request key); so is the same user message posted again
// to /api/chat. Every turn is also a version-1 stream under its
// conversation and id.
//
// The first line on stdout is the URL of the first turn's stream,
// http://ADDR/conversations/c-1/turns/TURN/events?access_token=demo (with
// the real port when -addr asks for port 0); then one line per endpoint,
// NAME URL: cancel (the first turn's), answer (its card's, when it asks
// one), start, ui-message-stream (the api a useChat is given), ui-history
// (a URL holding the placeholder {chatId}), capabilities (the JSON the
// stores let the host declare, [conversation.Capabilities]) and ag-ui,
// last. Each later turn of the chain prints "turn URL", its stream's URL,
// when it starts.
//
// A client that goes away stops no turn: only a cancel request does,
// through recovery, and the turn ends cancelled. SIGINT or SIGTERM shuts the
// server down gracefully: the running turns are interrupted (lifecycle
// interrupted) and stored so, the streams aborted so that their clients
// would resume elsewhere, and Run returns. On durable stores a turn a
// killed process left running is ended failed when a later run takes up
// its conversation.
package demo

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	chatprotocol "github.com/Papercusp/chat-protocol-go"
	"github.com/Papercusp/chat-protocol-go/agui"
	"github.com/Papercusp/chat-protocol-go/conversation"
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
// the conversation store, the recovery store (an Admitter too: the
// admission fence) and the card store.
type Stores struct {
	Window        replay.Window
	Conversations conversation.Store
	Recovery      recovery.Store
	Cards         interactions.Store
	// Close releases the stores once the server has stopped; nil when
	// there is nothing to release.
	Close func()
}

// Capabilities returns what a host on s may declare: what each store keeps
// across a restart ([conversation.Capabilities]). The demo resumes no
// interrupted turn, so interruptedTurnRecovery is false.
func (s Stores) Capabilities() chatprotocol.ChatCapabilities {
	return conversation.Capabilities(conversation.Stores{Window: s.Window, Conversations: s.Conversations, Recovery: s.Recovery, Cards: s.Cards})
}

// Opener opens the stores the flag -store names, with the command's
// operand dsn ("" when there is none). The card store reads the callers'
// authority with authority. An unknown store is an error.
type Opener func(ctx context.Context, store, dsn string, authority interactions.AuthorityFunc) (Stores, error)

// Memory is the Opener of -store memory: [replay.Memory],
// [conversation.MemoryStore], [recovery.MemoryStore] and
// [interactions.MemoryStore], which keep everything in the process. It
// refuses any other store, and postgres with how to run it.
func Memory(_ context.Context, store, dsn string, authority interactions.AuthorityFunc) (Stores, error) {
	switch {
	case store == "postgres":
		return Stores{}, errors.New("-store postgres: this command links no database driver; run (cd pgstore && go run ./examples/server -store postgres DSN)")
	case store == "redis":
		return Stores{}, errors.New("-store redis: this command links no Redis client; run (cd redisstore && go run ./examples/server -store redis ADDR)")
	case store != "memory" || dsn != "":
		return Stores{}, fmt.Errorf("-store %q: want -store memory, without operand", store)
	}
	return Stores{Window: replay.NewMemory(nil), Conversations: conversation.NewMemoryStore(),
		Recovery: recovery.NewMemoryStore(nil), Cards: interactions.NewMemoryStore(authority, nil)}, nil
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
	if err := conversation.CheckConversation(c.conversation); err != nil {
		return c, fmt.Errorf("-conversation: %w", err)
	}
	return c, nil
}

// Run serves the demo until ctx ends, on the stores open opens, then shuts
// down gracefully; args are the command's arguments, stdout gets the URLs
// (see the package documentation) and stderr the logs. It returns an error
// for bad flags, stores that do not open, a chain conversation another
// caller owns, and a listener or shutdown failure.
func Run(ctx context.Context, args []string, stdout, stderr io.Writer, open Opener) error {
	c, err := parseFlags(args, stderr)
	if err != nil {
		return err
	}
	log := slog.New(slog.NewTextHandler(stderr, nil))
	var gate *conversation.Gate // set once open returned, before any card is asked or answered
	stores, err := open(ctx, c.store, c.dsn, func(who interactions.Caller, conv string) interactions.Authority {
		return gate.CardAuthorityFunc()(who, conv) // the access rule again
	})
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
	store := conversation.Settling{Store: stores.Conversations, Window: stores.Window} // a next turn right after the stream's end starts
	gate = &conversation.Gate{Store: store, Access: conversation.OwnerOnly(callerOf)}
	gate.Recovery = recovery.New(recovery.Host{Store: stores.Recovery, Authorizer: gate, Aborter: runs}, nil)
	var out sync.Mutex
	base := ""
	h := &host{window: stores.Window, store: store, gate: gate, rec: gate.Recovery, runs: runs, cards: res,
		schemas: schemas, log: log, life: life, registry: reg, model: script{deltas: c.deltas, pace: c.pace, log: log}.play,
		asked: map[string][]string{},
		printed: func(name, path string) {
			out.Lock()
			defer out.Unlock()
			fmt.Fprintln(stdout, name, base+path)
		}}
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
	chain, err := h.chainConversation(ctx, c.conversation)
	if err != nil {
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
	base = "http://" + ln.Addr().String()
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
	out.Lock() // the chain's later lines wait for the first ones
	first, err := h.startChained(ctx, chain, question, 1, c.turns)
	if err != nil {
		out.Unlock()
		return errors.Join(err, srv.Close())
	}
	printURLs(stdout, base, c, first.ID, stores.Capabilities())
	out.Unlock()

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

// chainConversation returns the chain's conversation id, created for the
// demo caller, or taken up when the stores hold it already (a durable
// store, an earlier run): a turn an earlier process left running is
// ended first ([host.settle]). One another caller owns is an error.
func (h *host) chainConversation(ctx context.Context, id string) (conversation.Conversation, error) {
	c, err := h.store.Create(ctx, id, demoCaller)
	if errors.Is(err, refusal.ErrConversationExists) {
		if c, err = h.store.Get(ctx, id); err == nil && c.Owner != demoCaller {
			err = fmt.Errorf("conversation %s belongs to another caller: choose another with -conversation", id)
		}
		if err == nil {
			err = h.settle(ctx, c)
		}
	}
	return c, err
}

// streams are the handlers that serve streams, which a shutdown ends.
type streams interface {
	Close()
	Shutdown(ctx context.Context) error
}

// routes builds the endpoints of the package documentation, each hook from
// the Gate.
func (h *host) routes(log *slog.Logger) (*http.ServeMux, []streams, error) {
	g := h.gate
	events, err := stream.NewHandler(h.window, &stream.HandlerOptions{Authorize: g.AuthorizeStream, Options: serve.Options{Logger: log}})
	if err != nil {
		return nil, nil, err
	}
	start, err := conversation.NewStartHandler(g, &conversation.StartHandlerOptions{Run: h.startV1, Logger: log})
	if err != nil {
		return nil, nil, err
	}
	cancel, err := turn.NewCancelHandler(h.rec, &turn.CancelHandlerOptions{Logger: log, Caller: g.CallerString})
	if err != nil {
		return nil, nil, err
	}
	answers, err := answerhttp.NewHandler(h.cards, &answerhttp.HandlerOptions{Caller: g.CardCaller, Logger: log})
	if err != nil {
		return nil, nil, err
	}
	ui, err := uistream.NewHandler(h.window, &uistream.HandlerOptions{StartTurn: h.startTurn(), ActiveTurn: g.ActiveTurn, Cancel: g.Cancel,
		Resolver: h.cards, Caller: g.CardCaller, Registry: h.registry, Options: serve.Options{Logger: log}})
	if err != nil {
		return nil, nil, err
	}
	history, err := uistream.NewHistoryHandler(g, &uistream.HistoryHandlerOptions{Logger: log})
	if err != nil {
		return nil, nil, err
	}
	// A run outlives its connection: HttpAgent has no resume, and posting
	// the run again gets it whole (docs/contract.md section 18.2).
	ag, err := agui.NewHandler(h.window, &agui.HandlerOptions{StartRun: h.startRun(), History: agui.HistoryOf(g), KeepRunOnDisconnect: true,
		Resolver: h.cards, Caller: g.CardCaller, Registry: h.registry, Options: serve.Options{Logger: log}})
	if err != nil {
		return nil, nil, err
	}
	mux := http.NewServeMux()
	// No pattern names a method: each handler answers a method it does
	// not serve with the JSON 405, where http.ServeMux would in plain text.
	mux.Handle("/conversations/{conversation}/turns/{turn}/events", events)  // GET, HEAD
	mux.Handle("/conversations/{conversation}/turns", start)                 // POST
	mux.Handle("/conversations/{conversation}/turns/{turn}/cancel", cancel)  // POST
	mux.Handle("/conversations/{conversation}/cards/{card}/answer", answers) // POST
	ui.Register(mux, "/api/chat")                                            // POST; GET and DELETE {chatId}/stream; POST {chatId}/stop
	mux.Handle("/api/chat/{chatId}/messages", history)                       // GET, HEAD
	mux.Handle("/api/ag-ui", ag)                                             // POST
	return mux, []streams{events, ui, ag}, nil
}

// streamPath is the path and query of a turn's version-1 stream, for the
// demo caller.
func streamPath(conversation, turnID string) string {
	return "/conversations/" + url.PathEscape(conversation) + "/turns/" + url.PathEscape(turnID) + "/events?access_token=" + demoToken
}

// printURLs writes the first turn's stream URL, then one NAME URL line
// per endpoint, ag-ui last.
func printURLs(w io.Writer, base string, c config, first string, caps chatprotocol.ChatCapabilities) {
	conv := base + "/conversations/" + url.PathEscape(c.conversation)
	fmt.Fprintln(w, base+streamPath(c.conversation, first))
	fmt.Fprintf(w, "cancel %s/turns/%s/cancel\n", conv, url.PathEscape(first))
	if c.turns > 1 {
		fmt.Fprintf(w, "answer %s/cards/%s/answer\n", conv, url.PathEscape(cardID(first)))
	}
	fmt.Fprintf(w, "start %s/turns\n", conv)
	fmt.Fprintf(w, "ui-message-stream %s/api/chat\n", base)
	fmt.Fprintf(w, "ui-history %s/api/chat/{chatId}/messages\n", base)
	declared, _ := json.Marshal(caps) // five booleans always encode
	fmt.Fprintf(w, "capabilities %s\n", declared)
	fmt.Fprintf(w, "ag-ui %s/api/ag-ui\n", base)
}

// demoToken is the demo caller's credential, guestToken the guest's.
const demoToken, guestToken = "demo", "guest"

// demoCaller and guestCaller are the principals the tokens stand for.
var (
	demoCaller  = conversation.Principal{ID: "demo"}
	guestCaller = conversation.Principal{ID: "guest"}
)

// callerOf is the session lookup of every endpoint: the demo caller for
// Authorization: Bearer demo or access_token=demo, the guest for guest,
// else no one. A real host asks its own sessions here.
func callerOf(r *http.Request) (conversation.Principal, error) {
	token, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok {
		token = r.URL.Query().Get("access_token")
	}
	switch token {
	case demoToken:
		return demoCaller, nil
	case guestToken:
		return guestCaller, nil
	}
	return conversation.Principal{}, errors.New("no session")
}

// kindNames lists the provider stream kinds -from takes.
func kindNames() []string {
	var out []string
	for _, k := range ingest.Kinds() {
		out = append(out, string(k))
	}
	return out
}
