package jsonschema_test

import (
	"context"
	"encoding/json"
	"testing"

	_ "github.com/Papercusp/chat-protocol-go/internal/testkit/golden" // accepts go test ./... -update
	"github.com/Papercusp/chat-protocol-go/refusal"

	"github.com/stretchr/testify/assert"

	"github.com/Papercusp/chat-protocol-go/interactions"
	"github.com/Papercusp/chat-protocol-go/interactions/jsonschema"
)

// FuzzRegistry registers arbitrary schema text and validates arbitrary
// values: it never panics, every error is typed, and a registered schema
// stays registered unchanged.
func FuzzRegistry(f *testing.F) {
	for _, seed := range []struct{ schema, value string }{
		{radioSchema, `{"optionId":"a"}`},
		{radioSchema, `{"optionId":"z"}`},
		{`{"$ref":"file:///etc/passwd"}`, `{}`},
		{`{"$ref":"#/$defs/a","$defs":{"a":{"$ref":"#/$defs/a"}}}`, `{}`},
		{`{"type":"object","properties":{"d":{"format":"date"}}}`, `{"d":"2026-02-30"}`},
		{`{"pattern":"(a+)+$"}`, `"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa!"`},
		{`{"type":"integer"}`, `1e400`},
		{`true`, `{"a":`},
	} {
		f.Add(seed.schema, seed.value)
	}
	f.Fuzz(func(t *testing.T, schema, value string) {
		r := jsonschema.NewRegistry()
		ref := interactions.SchemaRef{ID: "fuzz", Revision: 1}
		err := r.Register(ref, []byte(schema))
		if err != nil {
			assert.Equal(t, refusal.CodeInvalidCard, refusal.CodeOf(err))
			_, ok := r.SchemaJSON(ref)
			assert.False(t, ok)
			return
		}
		err = r.Validate(context.Background(), ref, json.RawMessage(value))
		if err != nil {
			assert.Equal(t, refusal.CodeInvalidAnswer, refusal.CodeOf(err))
		}
		assert.NoError(t, r.Register(ref, []byte(schema)), "the same text registers again")
	})
}
