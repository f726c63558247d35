package uistream_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	chatprotocol "github.com/Papercusp/chat-protocol-go"
	"github.com/Papercusp/chat-protocol-go/cards"
	"github.com/Papercusp/chat-protocol-go/interactions"
	"github.com/Papercusp/chat-protocol-go/interactions/interactionstest"
	"github.com/Papercusp/chat-protocol-go/interactions/jsonschema"
	"github.com/Papercusp/chat-protocol-go/internal/testkit/turnscript"
	"github.com/Papercusp/chat-protocol-go/replay"
	"github.com/Papercusp/chat-protocol-go/uistream"
)

// cardHost is a host whose turns ask cards bound to alice, served in one
// card mode. Under CardsTools turn t-1 asks the confirm card card-t-1,
// t-2 closes it and asks the radio card card-t-2, t-3 closes that and
// thanks; under the other modes t-1 asks the radio card card-t-1 and t-2
// closes it and thanks. Each turn is written whole before its stream.
type cardHost struct {
	res    *interactions.Resolver
	db     *interactionstest.DB
	window replay.Window
	srv    *httptest.Server

	mu   sync.Mutex
	seen []*uistream.Request // what StartTurn saw, turn by turn
}

var (
	alice      = interactions.Caller{Principal: "alice"}
	confirmRef = interactions.SchemaRef{ID: "confirm", Revision: 1}
	askRef     = interactions.SchemaRef{ID: "yes-no", Revision: 1}
)

func newCardHost(t *testing.T, mode uistream.CardMode) *cardHost {
	t.Helper()
	h := &cardHost{db: interactionstest.NewDB(), window: replay.NewMemory(nil)}
	h.db.Grant(alice, "chat-1")
	h.db.Grant(interactions.Caller{Principal: "bob"}, "chat-1") // rights on the chat, none on alice's cards
	schemas := jsonschema.NewRegistry()
	require.NoError(t, schemas.Register(confirmRef, []byte(`{"type":"object"}`)))
	require.NoError(t, schemas.Register(askRef, []byte(`{"type":"object","properties":{"optionId":{"enum":["yes","no"]}},"required":["optionId"]}`)))
	var err error
	h.res, err = interactions.New(h.db.Open(nil), schemas, &interactions.Options{CardRules: chatprotocol.ValidateCardSpec})
	require.NoError(t, err)
	handler, err := uistream.NewHandler(h.window, &uistream.HandlerOptions{
		Cards: mode,
		StartTurn: func(ctx context.Context, _ *http.Request, req *uistream.Request) (replay.Key, error) {
			h.mu.Lock()
			defer h.mu.Unlock()
			h.seen = append(h.seen, req)
			return h.turn(ctx, mode, req.ChatID, len(h.seen))
		},
		ActiveTurn: func(context.Context, *http.Request, string) (replay.Key, bool, error) {
			return replay.Key{}, false, nil
		},
		Resolver: h.res,
		Caller: func(r *http.Request) (interactions.Caller, error) {
			if u := r.Header.Get("X-User"); u != "" {
				return interactions.Caller{Principal: u}, nil
			}
			return interactions.Caller{}, errors.New("no session")
		},
	})
	require.NoError(t, err)
	mux := http.NewServeMux()
	handler.Register(mux, "/api/chat")
	h.srv = httptest.NewServer(mux)
	t.Cleanup(h.srv.Close)
	return h
}

// turn writes turn t-n of chat and opens its card.
func (h *cardHost) turn(ctx context.Context, mode uistream.CardMode, chat string, n int) (replay.Key, error) {
	key := replay.Key{ConversationID: chat, TurnID: "t-" + strconv.Itoa(n)}
	evs := []chatprotocol.Event{&chatprotocol.LifecycleEvent{Status: chatprotocol.LifecycleStarted}}
	if n > 1 {
		evs = append(evs, &chatprotocol.CardClosedEvent{CorrelationID: "card-t-" + strconv.Itoa(n-1), Outcome: "answered"})
	}
	var card *chatprotocol.CardEvent
	ref := askRef
	switch {
	case mode == uistream.CardsTools && n == 1:
		card = &chatprotocol.CardEvent{Card: cards.OpenCardSnapshot{CorrelationID: "card-t-1", CreatedAt: 1_700_000_000_000,
			CardSpec: cards.CardSpec{Prompt: "Refund $20?", AllowDecline: true}}}
		ref = confirmRef
		evs = append(evs, &chatprotocol.DeltaEvent{Text: "I can refund $20."}, card)
	case mode == uistream.CardsTools && n == 2 || mode != uistream.CardsTools && n == 1:
		card = turnscript.Card(key)
		evs = append(evs, &chatprotocol.DeltaEvent{Text: "Refunded. "}, card)
	default:
		evs = append(evs, &chatprotocol.DeltaEvent{Text: "Thanks."})
	}
	status := chatprotocol.LifecycleCompleted
	if card != nil {
		status = chatprotocol.LifecycleInterrupted
		if _, err := h.res.Open(ctx, interactions.NewCard{Key: interactions.Key{Conversation: chat, CorrelationID: card.Card.CorrelationID},
			Answerer: alice, Spec: card.Card.CardSpec, Schema: ref}); err != nil {
			return replay.Key{}, err
		}
	}
	evs = append(evs, &chatprotocol.LifecycleEvent{Status: status})
	for _, env := range turnscript.Envelopes(key, evs) {
		if _, err := h.window.Append(ctx, key, env); err != nil {
			return replay.Key{}, err
		}
	}
	return key, nil
}

// turns is the number of turns started.
func (h *cardHost) turns() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.seen)
}

// request returns what StartTurn saw of turn n (from 1).
func (h *cardHost) request(n int) *uistream.Request {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.seen[n-1]
}

// status is the status of card id of chat-1.
func (h *cardHost) status(t *testing.T, id string) interactions.Status {
	t.Helper()
	view, err := h.res.Lookup(context.Background(), interactions.Key{Conversation: "chat-1", CorrelationID: id})
	require.NoError(t, err)
	return view.Record.Status
}

// post posts body as user (no session when "").
func (h *cardHost) post(t *testing.T, user, body string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, h.srv.URL+"/api/chat", strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	if user != "" {
		req.Header.Set("X-User", user)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	return resp
}
