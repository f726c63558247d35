package interactions_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Papercusp/chat-protocol-go/cards"
	"github.com/Papercusp/chat-protocol-go/interactions"
	"github.com/Papercusp/chat-protocol-go/refusal"
)

// FuzzAnswer feeds arbitrary response bodies and submission ids to Answer:
// it never panics, refuses with a typed error or lands the answer, and a
// landed value is the canonical JSON object that was validated.
func FuzzAnswer(f *testing.F) {
	for _, seed := range []struct{ id, body string }{
		{"s-1", `{"action":"submit","correlationId":"card-1","value":{"optionId":"a"}}`},
		{"s-1", `{"action":"submit","correlationId":"card-1","value":{"optionId":"a","optionId":"c"}}`},
		{"s-1", `{"action":"decline","correlationId":"card-1"}`},
		{"s-1", `{"action":"cancel","correlationId":"card-1","value":null}`},
		{"s-1", `{"action":"submit","correlationId":"card-2","value":{"optionId":"a"}}`},
		{"", `{"action":"submit","correlationId":"card-1","value":{}}`},
		{"s-1", `{"action":"submit","correlationId":"card-1","value":[1,2]}`},
		{"s-1", "{\"action\":\"submit\",\"correlationId\":\"card-1\",\"value\":{\"optionId\":\"\xff\"}}"},
		{"s-1", `{"action":"SUBMIT","correlationId":"card-1","value":{"optionId":"b"}}`},
	} {
		f.Add(seed.id, seed.body)
	}
	f.Fuzz(func(t *testing.T, id, body string) {
		var resp cards.CardResponse
		if json.Unmarshal([]byte(body), &resp) != nil {
			resp.Action, resp.CorrelationID, resp.Value = cards.CardActionSubmit, cardKey.CorrelationID, json.RawMessage(body)
		}
		e := newEnv(t)
		res, err := e.res.Answer(context.Background(), alice, cardKey, interactions.Submission{ID: id, Response: resp})
		if err != nil {
			assert.NotEmpty(t, refusal.CodeOf(err), "untyped error %v", err)
			assert.Equal(t, interactions.StatusPending, e.stored().Status)
			return
		}
		require.NotNil(t, res.Record.Answer)
		assert.Equal(t, e.stored(), res.Record)
		if resp.Action == cards.CardActionSubmit {
			var v map[string]any
			require.NoError(t, json.Unmarshal(res.Record.Answer.Value, &v))
			again, err := json.Marshal(v)
			require.NoError(t, err)
			assert.JSONEq(t, string(again), string(res.Record.Answer.Value))
		}
	})
}
