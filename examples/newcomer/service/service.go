// Package service is the newcomer's conversation service, whole: people
// signed in by a bearer token chat through useChat's protocol (package
// uistream); each message starts a scripted turn that calls a tool and asks
// a card; the card's answer, sent as useChat's next request, starts the
// turn that closes it and replies; a turn is stopped by useChat's stop or
// the cancel endpoint; a chat's history is read back as UIMessage[]; and a
// shutdown interrupts the running turns. The stores are the caller's
// (examples/newcomer on memory, pgstore/examples/newcomer on PostgreSQL).
package service

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"time"

	chatprotocol "github.com/Papercusp/chat-protocol-go"
	"github.com/Papercusp/chat-protocol-go/cards"
	"github.com/Papercusp/chat-protocol-go/conversation"
	"github.com/Papercusp/chat-protocol-go/interactions"
	"github.com/Papercusp/chat-protocol-go/interactions/jsonschema"
	"github.com/Papercusp/chat-protocol-go/recovery"
	"github.com/Papercusp/chat-protocol-go/replay"
	"github.com/Papercusp/chat-protocol-go/turn"
	"github.com/Papercusp/chat-protocol-go/uistream"
)

// Access is the service's one access rule: a person signed in by the
// bearer token alice-token or bob-token may do everything with the
// conversations they own, nothing with the others'.
var Access = conversation.OwnerOnly(func(r *http.Request) (conversation.Principal, error) {
	if who := r.Header.Get("Authorization"); who == "Bearer alice-token" || who == "Bearer bob-token" {
		return conversation.Principal{ID: strings.TrimSuffix(strings.TrimPrefix(who, "Bearer "), "-token")}, nil
	}
	return conversation.Principal{}, errors.New("no session")
})

// helpful is the card's answer schema.
var helpful = interactions.SchemaRef{ID: "helpful", Revision: 1}

// Serve serves the service on ln, on the stores s, until ctx ends; then
// the running turns are interrupted and the server shut down gracefully.
// log gets what fails after a request was answered.
func Serve(ctx context.Context, ln net.Listener, s conversation.Stores, log *slog.Logger) error {
	schemas := jsonschema.NewRegistry()
	err := schemas.Register(helpful, []byte(`{"type":"object","properties":{"optionId":{"enum":["yes","no"]}},"required":["optionId"]}`))
	cardRes, err2 := interactions.New(s.Cards, schemas, &interactions.Options{CardRules: chatprotocol.ValidateCardSpec})
	runs, g := turn.NewRuns(), &conversation.Gate{Store: conversation.Settling{Store: s.Conversations, Window: s.Window}, Access: Access}
	g.Recovery = recovery.New(recovery.Host{Store: s.Recovery, Authorizer: g, Aborter: runs}, nil)
	turns := conversation.NewRunner(ctx, g.Store, s.Window, log) // a turn runs on, whatever its client does
	run := func(_ context.Context, _ *http.Request, c conversation.Conversation, t conversation.Turn, req *uistream.Request) error {
		return turns.Start(replay.Key{ConversationID: c.ID, TurnID: t.ID}, &turn.Options{Recovery: g.Recovery, Runs: runs, Caller: c.Owner.String(), Cards: cardRes},
			func(ctx context.Context, p *turn.Producer) error { return play(ctx, p, c, t, req) })
	}
	ui, err3 := uistream.NewHandler(s.Window, &uistream.HandlerOptions{StartTurn: uistream.StartTurnOf(g, run), ActiveTurn: g.ActiveTurn,
		Cancel: g.Cancel, Resolver: cardRes, Caller: g.CardCaller})
	history, err4 := uistream.NewHistoryHandler(g, nil)
	cancel, err5 := turn.NewCancelHandler(g.Recovery, &turn.CancelHandlerOptions{Caller: g.CallerString})
	if err := errors.Join(err, err2, err3, err4, err5); err != nil {
		return err
	}
	mux := http.NewServeMux()
	ui.Register(mux, "/api/chat")
	mux.Handle("/api/chat/{chatId}/messages", history)
	mux.Handle("/conversations/{conversation}/turns/{turn}/cancel", cancel)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	srv.RegisterOnShutdown(ui.Close)
	go func() { <-ctx.Done(); turns.Wait(); _ = srv.Shutdown(context.Background()) }()
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return ui.Shutdown(context.Background())
}

// play is the scripted model of turn t of c: the reply to the card the
// request answered; or the tool search, the answer and the card; or, for
// the text "wait", nothing until the turn is stopped or the server shuts
// down.
func play(ctx context.Context, p *turn.Producer, c conversation.Conversation, t conversation.Turn, req *uistream.Request) error {
	switch {
	case req.Answer != nil:
		_, err := p.CloseCard(ctx, req.Answer.Response.CorrelationID)
		return errors.Join(err, p.Delta(ctx, "Thanks for your answer."))
	case t.UserText == "wait":
		<-ctx.Done()
		return context.Cause(ctx)
	}
	search := turn.ToolCall{ID: t.ID + "-search", Name: "search", Input: json.RawMessage(`{"q":"refunds"}`)}
	_, err := p.RunToolCall(ctx, search, func(context.Context) (json.RawMessage, error) { return json.RawMessage(`{"hits":2}`), nil })
	if err == nil {
		err = p.Delta(ctx, "Refunds are accepted within 30 days.")
	}
	if err == nil {
		_, err = p.Ask(ctx, interactions.NewCard{Key: interactions.Key{Conversation: c.ID, CorrelationID: "card-" + t.ID},
			Answerer: conversation.CardAnswerer(c.Owner), Schema: helpful, Spec: cards.CardSpec{Prompt: "Was this helpful?", AllowDecline: true}})
	}
	return err
}
