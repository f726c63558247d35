package main

import (
	"encoding/json"
	"io"
	"net/http"

	chatprotocol "github.com/Papercusp/chat-protocol-go"
	"github.com/Papercusp/chat-protocol-go/interactions"
	"github.com/Papercusp/chat-protocol-go/refusal"
)

// answerHandler takes a person's answer to a card (docs/contract.md
// section 13): POST a card response as JSON with an Idempotency-Key header;
// the caller is "demo" when the request carries Authorization: Bearer demo.
// The answer is 200 {"code":"","status","revision"} (also for the same
// submission again, code duplicate-answer), or the refusal's code with 400,
// 401, 404, 409, 413, 422 or 503.
func (c *cards) answerHandler() http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer demo" { // stands in for the host's session lookup
			writeJSON(w, http.StatusUnauthorized, map[string]any{"code": refusal.CodeUnauthorized})
			return
		}
		data, err := io.ReadAll(http.MaxBytesReader(w, r.Body, 64<<10))
		if err != nil {
			writeJSON(w, http.StatusRequestEntityTooLarge, map[string]any{"code": refusal.CodeFrameTooLarge})
			return
		}
		resp, err := chatprotocol.ParseCardResponse(data)
		if err != nil {
			writeJSON(w, http.StatusBadRequest, map[string]any{"code": refusal.CodeOf(err)})
			return
		}
		key := interactions.Key{Conversation: r.PathValue("conversation"), CorrelationID: r.PathValue("card")}
		out, err := c.res.Answer(r.Context(), c.demo, key, interactions.Submission{ID: r.Header.Get("Idempotency-Key"), Response: resp})
		code := refusal.CodeOf(err)
		status := map[refusal.Code]int{"": 200, refusal.CodeDuplicateAnswer: 200, refusal.CodeCardNotFound: 404,
			refusal.CodeUnauthorized: 404, refusal.CodeInvalidAnswer: 422, refusal.CodeFrameTooLarge: 413,
			refusal.CodeNeedsReconciliation: 503, refusal.CodeStoreUnavailable: 503, refusal.CodeCheckpointWriteFailed: 503}[code]
		if status == 0 {
			status = http.StatusConflict // already answered, expired, cancelled, superseded, stale
		}
		body := map[string]any{"code": code}
		if out.Record.Version != 0 {
			body["status"], body["revision"] = out.Record.Status, out.Record.Revision
		}
		writeJSON(w, status, body)
	}
}

func writeJSON(w http.ResponseWriter, status int, body any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(body)
}
