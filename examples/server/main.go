// Command server is a complete small chat service over the chat wire
// contract: it streams scripted model turns as resumable version-1 streams
// ([stream.Handler] on a [replay.Memory] window, docs/contract.md section
// 14) and takes the answers to their cards (package answerhttp over an
// [interactions.Resolver], docs/contract.md section 13.2).
//
//	go run ./examples/server -addr 127.0.0.1:8080 -deltas 50 -pace 20ms -turns 1
//
// The first line on stdout is the URL of the first turn's stream,
// http://ADDR/conversations/c-1/turns/t-1/events?access_token=demo (with the
// real port when -addr asks for port 0); the other turns' URLs follow, one
// a line. Each turn is: lifecycle started, half the deltas, a tool_call and
// its tool_result, the other deltas, a card, lifecycle completed, one frame
// every -pace; the turns run one after the other. Follow one with
//
//	go run ./cmd/chatwire follow 'http://ADDR/conversations/c-1/turns/t-1/events?access_token=demo'
//
// and answer its card with
//
//	curl -H 'Authorization: Bearer demo' -H 'Idempotency-Key: k-1' -H 'Content-Type: application/json' \
//	  -d '{"action":"submit","correlationId":"card-t-1","value":{"optionId":"yes"}}' \
//	  http://ADDR/conversations/c-1/cards/card-t-1/answer
//
// The service keeps everything in memory (the cards in interactionstest's
// in-memory store) and knows one caller, "demo", who may read every turn of
// conversation c-1 and answer its cards: a request shows it with the header
// Authorization: Bearer demo or, where a client cannot set headers (a
// browser's EventSource), the query parameter access_token=demo. Any other
// request gets what an unknown turn gets. A real host asks its own sessions.
// SIGINT or SIGTERM shuts it down gracefully: the streams end (their
// clients would resume elsewhere by Last-Event-ID) and the server returns.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	chatprotocol "github.com/Papercusp/chat-protocol-go"

	"github.com/Papercusp/chat-protocol-go/interactions"
	"github.com/Papercusp/chat-protocol-go/interactions/answerhttp"
	"github.com/Papercusp/chat-protocol-go/interactions/interactionstest"
	"github.com/Papercusp/chat-protocol-go/interactions/jsonschema"
	"github.com/Papercusp/chat-protocol-go/refusal"
	"github.com/Papercusp/chat-protocol-go/replay"
	"github.com/Papercusp/chat-protocol-go/stream"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "server:", err)
		os.Exit(1)
	}
}

// config is what the flags set.
type config struct {
	addr   string
	deltas int
	pace   time.Duration
	turns  int
}

func parseFlags(args []string, stderr io.Writer) (config, error) {
	var c config
	fs := flag.NewFlagSet("server", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&c.addr, "addr", "127.0.0.1:8080", "listen address HOST:PORT (port 0 picks a free one)")
	fs.IntVar(&c.deltas, "deltas", 50, "delta events per turn")
	fs.DurationVar(&c.pace, "pace", 20*time.Millisecond, "time between two frames of a turn")
	fs.IntVar(&c.turns, "turns", 1, "turns to stream, one after the other (t-1, t-2 ...)")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if c.deltas < 2 || c.turns < 1 || c.pace < 0 || fs.NArg() > 0 {
		return c, errors.New("want -deltas 2 or more, -turns 1 or more, -pace 0 or more, and no operand")
	}
	return c, nil
}

// run serves until ctx ends, then shuts down gracefully.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	c, err := parseFlags(args, stderr)
	if err != nil {
		return err
	}
	log := slog.New(slog.NewTextHandler(stderr, nil))
	window := replay.NewMemory(nil)
	desk, err := newCards()
	if err != nil {
		return err
	}
	events, err := stream.NewHandler(window, &stream.HandlerOptions{Authorize: mayRead(c.turns, desk), Logger: log})
	if err != nil {
		return err
	}
	mux := http.NewServeMux()
	mux.Handle("GET /conversations/{conversation}/turns/{turn}/events", events)
	answers, err := answerhttp.NewHandler(desk.res, &answerhttp.Options{Caller: desk.caller, Logger: log})
	if err != nil {
		return err
	}
	mux.Handle("/conversations/{conversation}/cards/{card}/answer", answers) // a wrong method gets the JSON 405

	ln, err := net.Listen("tcp", c.addr)
	if err != nil {
		return err
	}
	for i := 1; i <= c.turns; i++ {
		fmt.Fprintf(stdout, "http://%s/conversations/%s/turns/%s/events?access_token=%s\n", ln.Addr(), conversation, turnID(i), demoToken)
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn)}
	srv.RegisterOnShutdown(events.Close) // Shutdown does not end streams by itself

	modelCtx, stopModel := context.WithCancel(ctx)
	defer stopModel()
	modelDone := make(chan error, 1)
	go func() { modelDone <- model(modelCtx, window, desk, c) }()
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()

	select {
	case err = <-served:
		return err
	case <-ctx.Done():
	}
	stopModel()
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err = errors.Join(srv.Shutdown(shutdownCtx), events.Shutdown(shutdownCtx)) // the parked streams too
	if merr := <-modelDone; merr != nil && !errors.Is(merr, context.Canceled) {
		err = errors.Join(err, merr)
	}
	return err
}

// conversation is the one conversation of the demo.
const conversation = "c-1"

func turnID(i int) string { return fmt.Sprintf("t-%d", i) }

// mayRead is the stream's authorization hook: the demo caller may read
// the demo's turns of conversation c-1; any other caller or turn is
// unknown (the window would wait for an unknown turn for ever). A real host
// checks the caller's session against the conversation here, on every
// connection.
func mayRead(turns int, c *cardSide) func(*http.Request, replay.Key) error {
	known := make(map[replay.Key]bool, turns)
	for i := 1; i <= turns; i++ {
		known[replay.Key{ConversationID: conversation, TurnID: turnID(i)}] = true
	}
	return func(r *http.Request, key replay.Key) error {
		if _, err := c.caller(r); err != nil || !known[key] {
			return refusal.ErrTurnNotFound
		}
		return nil
	}
}

// cardSide is the card side: a resolver over an in-memory store, its one
// caller and the schema of its cards' answers.
type cardSide struct {
	res    *interactions.Resolver
	demo   interactions.Caller
	schema interactions.SchemaRef
}

func newCards() (*cardSide, error) {
	demo := interactions.Caller{Principal: "demo", Tenant: "demo"}
	db := interactionstest.NewDB()
	db.Grant(demo, conversation)
	schemas := jsonschema.NewRegistry()
	ref := interactions.SchemaRef{ID: "helpful", Revision: 1}
	if err := schemas.Register(ref, []byte(`{"type":"object","properties":{"optionId":{"enum":["yes","no"]}},"required":["optionId"]}`)); err != nil {
		return nil, err
	}
	res, err := interactions.New(db.Open(nil), schemas, &interactions.Options{CardRules: chatprotocol.ValidateCardSpec})
	if err != nil {
		return nil, err
	}
	return &cardSide{res: res, demo: demo, schema: ref}, nil
}

// demoToken is the demo caller's credential.
const demoToken = "demo"

// caller is the session lookup of both endpoints: the demo caller for
// Authorization: Bearer demo or access_token=demo, else no one (the answer
// endpoint says 401, the stream 404).
func (c *cardSide) caller(r *http.Request) (interactions.Caller, error) {
	if r.Header.Get("Authorization") != "Bearer "+demoToken && r.URL.Query().Get("access_token") != demoToken {
		return interactions.Caller{}, errors.New("no session")
	}
	return c.demo, nil
}
