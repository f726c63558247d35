package interactions_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"

	chatprotocol "github.com/Papercusp/chat-protocol-go"
	"github.com/Papercusp/chat-protocol-go/interactions"
	"github.com/Papercusp/chat-protocol-go/interactions/interactionstest"
	"github.com/Papercusp/chat-protocol-go/interactions/jsonschema"
	"github.com/Papercusp/chat-protocol-go/refusal"
)

// answer is the README's handler, verbatim.
func answer(res *interactions.Resolver, session func(*http.Request) (interactions.Caller, bool)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		caller, ok := session(r) // who is asking comes from the session, never from the body
		if !ok {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		data, err := io.ReadAll(http.MaxBytesReader(w, r.Body, 64<<10))
		if err != nil {
			http.Error(w, "frame-too-large", http.StatusRequestEntityTooLarge) // over 64 KiB, or unreadable
			return
		}
		resp, err := chatprotocol.ParseCardResponse(data) // strict: "ACTION", duplicates, bad UTF-8 refused
		if err != nil {
			http.Error(w, string(refusal.CodeOf(err)), http.StatusBadRequest) // invalid-card
			return
		}
		key := interactions.Key{Conversation: r.PathValue("conversation"), CorrelationID: r.PathValue("card")}
		sub := interactions.Submission{ID: r.Header.Get("Idempotency-Key"), Response: resp}
		out, err := res.Answer(r.Context(), caller, key, sub)
		status := map[refusal.Code]int{"": 200, refusal.CodeDuplicateAnswer: 200,
			refusal.CodeCardNotFound: 404, refusal.CodeUnauthorized: 403,
			refusal.CodeInvalidAnswer: 422, refusal.CodeFrameTooLarge: 413,
			refusal.CodeUnknownSchema: 500, refusal.CodeUnsupportedVersion: 500,
			// the client may repeat the request with the same Idempotency-Key:
			refusal.CodeNeedsReconciliation: 503, refusal.CodeStoreUnavailable: 503,
			refusal.CodeCheckpointWriteFailed: 503}[refusal.CodeOf(err)]
		if status == 0 {
			status = http.StatusConflict // already answered, expired, cancelled, superseded, stale revision or schema
		}
		body := map[string]any{"code": refusal.CodeOf(err)}
		if out.Record.Version != 0 { // set on success and on a duplicate
			body["status"], body["revision"] = out.Record.Status, out.Record.Revision
		}
		w.WriteHeader(status)
		json.NewEncoder(w).Encode(body)
	}
}

// The answer flow from an HTTP handler (the README's example).
func Example_httpHandler() {
	ctx := context.Background()
	db := interactionstest.NewDB()
	schemas := jsonschema.NewRegistry()
	ref := interactions.SchemaRef{ID: "ship-it", Revision: 1}
	if err := schemas.Register(ref, []byte(`{"type":"object","properties":{"optionId":{"enum":["yes","no"]}},"required":["optionId"]}`)); err != nil {
		panic(err)
	}
	store := db.Open(nil)
	res, err := interactions.New(store, schemas, nil)
	if err != nil {
		panic(err)
	}
	alice := interactions.Caller{Principal: "alice", Tenant: "acme"}
	db.Grant(alice, "conv-1")
	card := interactions.NewCard{Key: interactions.Key{Conversation: "conv-1", CorrelationID: "card-1"},
		Answerer: alice, Spec: interactions.CardSpec{Prompt: "Ship it?"}, Schema: ref}
	if _, err := res.Open(ctx, card); err != nil {
		panic(err)
	}

	mux := http.NewServeMux()
	mux.Handle("POST /conversations/{conversation}/cards/{card}/answer", answer(res, func(r *http.Request) (interactions.Caller, bool) {
		return alice, r.Header.Get("Authorization") == "Bearer alice" // stands in for the host's session lookup
	}))
	post := func(key, body string) {
		req := httptest.NewRequest("POST", "/conversations/conv-1/cards/card-1/answer", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer alice")
		req.Header.Set("Idempotency-Key", key)
		rec := httptest.NewRecorder()
		mux.ServeHTTP(rec, req)
		fmt.Print(rec.Code, " ", rec.Body.String())
	}
	post("k-0", `{"ACTION":"submit","correlationId":"card-1","value":{"optionId":"yes"}}`) // encoding/json would take it
	post("k-1", `{"action":"submit","correlationId":"card-1","value":{"optionId":"maybe"}}`)
	post("k-1", `{"action":"submit","correlationId":"card-1","value":{"optionId":"yes"}}`)
	post("k-1", `{"action":"submit","correlationId":"card-1","value":{"optionId":"yes"}}`)
	post("k-2", `{"action":"submit","correlationId":"card-1","value":{"optionId":"no"}}`)
	store.Inject(interactionstest.Failpoint{Op: interactionstest.OpRead, Fault: interactionstest.FaultUnavailable})
	post("k-3", `{"action":"submit","correlationId":"card-1","value":{"optionId":"no"}}`)
	// Output:
	// 400 invalid-card
	// 422 {"code":"invalid-answer"}
	// 200 {"code":"","revision":2,"status":"answered"}
	// 200 {"code":"duplicate-answer","revision":2,"status":"answered"}
	// 409 {"code":"already-answered"}
	// 503 {"code":"store-unavailable"}
}
