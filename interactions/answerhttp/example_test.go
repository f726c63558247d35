package answerhttp_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"

	chatprotocol "github.com/Papercusp/chat-protocol-go"

	"github.com/Papercusp/chat-protocol-go/cards"
	"github.com/Papercusp/chat-protocol-go/interactions"
	"github.com/Papercusp/chat-protocol-go/interactions/answerhttp"
	"github.com/Papercusp/chat-protocol-go/interactions/interactionstest"
	"github.com/Papercusp/chat-protocol-go/interactions/jsonschema"
)

// sessionStore stands in for the host's session lookup: bearer tokens to
// callers.
type sessionStore map[string]interactions.Caller

func (s sessionStore) Caller(r *http.Request) (interactions.Caller, error) {
	if c, ok := s[r.Header.Get("Authorization")]; ok {
		return c, nil
	}
	return interactions.Caller{}, errors.New("no session")
}

// The answer endpoint of a host, wired as the README shows it.
func Example() {
	ctx := context.Background()
	db := interactionstest.NewDB()
	schemas := jsonschema.NewRegistry()
	ref := interactions.SchemaRef{ID: "ship-it", Revision: 1}
	if err := schemas.Register(ref, []byte(`{"type":"object","properties":{"optionId":{"enum":["yes","no"]}},"required":["optionId"]}`)); err != nil {
		panic(err)
	}
	store := db.Open(nil)
	res, err := interactions.New(store, schemas, &interactions.Options{CardRules: chatprotocol.ValidateCardSpec})
	if err != nil {
		panic(err)
	}
	alice := interactions.Caller{Principal: "alice", Tenant: "acme"}
	db.Grant(alice, "conv-1")
	card := interactions.NewCard{Key: interactions.Key{Conversation: "conv-1", CorrelationID: "card-1"},
		Answerer: alice, Spec: cards.CardSpec{Prompt: "Ship it?"}, Schema: ref}
	if _, err := res.Open(ctx, card); err != nil {
		panic(err)
	}
	sessions := sessionStore{"Bearer alice": alice}
	mux := http.NewServeMux()

	// README:begin
	h, err := answerhttp.NewHandler(res, &answerhttp.HandlerOptions{
		Caller: sessions.Caller, // who is asking comes from the host's session, never from the body
	})
	if err != nil {
		panic(err)
	}
	mux.Handle("/conversations/{conversation}/cards/{card}/answer", h) // any method: a wrong one gets the JSON 405
	// README:end

	post := func(ctype, key, body string) {
		req := httptest.NewRequest("POST", "/conversations/conv-1/cards/card-1/answer", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer alice")
		req.Header.Set("Content-Type", ctype)
		if key != "" {
			req.Header.Set("Idempotency-Key", key)
		}
		rec := httptest.NewRecorder()
		mux.ServeHTTP(rec, req)
		fmt.Print(rec.Code, " ", rec.Body.String())
	}
	const asJSON = "application/json"
	post(asJSON, "k-0", `{"ACTION":"submit","correlationId":"card-1","value":{"optionId":"yes"}}`) // encoding/json would take it
	post("application/x-www-form-urlencoded", "k-0", `{"action":"submit","correlationId":"card-1","value":{"optionId":"yes"}}`)
	post(asJSON, "", `{"action":"submit","correlationId":"card-1","value":{"optionId":"yes"}}`)
	post(asJSON, "k-1", `{"action":"submit","correlationId":"card-1","value":{"optionId":"maybe"}}`)
	post(asJSON, "k-1", `{"action":"submit","correlationId":"card-1","value":{"optionId":"yes"}}`)
	post(asJSON, "k-1", `{"action":"submit","correlationId":"card-1","value":{"optionId":"yes"}}`)
	post(asJSON, "k-1", `{"action":"submit","correlationId":"card-1","value":{"optionId":"no"}}`)
	post(asJSON, "k-2", `{"action":"submit","correlationId":"card-1","value":{"optionId":"no"}}`)
	store.Inject(interactionstest.Failpoint{Op: interactionstest.OpRead, Fault: interactionstest.FaultUnavailable})
	post(asJSON, "k-3", `{"action":"submit","correlationId":"card-1","value":{"optionId":"no"}}`)
	// Output:
	// 400 {"code":"invalid-card","path":"/ACTION","message":"the body is not one card response"}
	// 415 {"code":"unsupported-media-type","message":"the body is sent as application/json"}
	// 400 {"code":"invalid-idempotency-key","message":"the Idempotency-Key header is required, 1 to 256 bytes"}
	// 422 {"code":"invalid-answer","path":"/value/optionId","keyword":"enum","message":"the answer is not acceptable for this card"}
	// 200 {"code":"","message":"the answer was stored","status":"answered","revision":2}
	// 200 {"code":"duplicate-answer","message":"this submission was already stored","status":"answered","revision":2}
	// 422 {"code":"idempotency-key-reused","message":"this Idempotency-Key already answered the card with another body"}
	// 409 {"code":"already-answered","message":"the card was already answered"}
	// 503 {"code":"store-unavailable","message":"the card store is unavailable; repeat the request with the same Idempotency-Key"}
}
