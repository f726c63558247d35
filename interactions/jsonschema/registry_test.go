package jsonschema_test

import (
	"context"
	"encoding/json"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/Papercusp/chat-protocol-go/interactions"
	"github.com/Papercusp/chat-protocol-go/interactions/jsonschema"
	"github.com/Papercusp/chat-protocol-go/refusal"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const radioSchema = `{
  "type": "object",
  "properties": {"optionId": {"enum": ["a", "b"]}},
  "required": ["optionId"],
  "additionalProperties": false
}`

var radio = interactions.SchemaRef{ID: "radio-ab", Revision: 1}

func newRegistry(t *testing.T) *jsonschema.Registry {
	t.Helper()
	r := jsonschema.NewRegistry()
	require.NoError(t, r.Register(radio, []byte(radioSchema)))
	return r
}

func TestValidate(t *testing.T) {
	r := newRegistry(t)
	date := interactions.SchemaRef{ID: "date", Revision: 1}
	require.NoError(t, r.Register(date, []byte(`{"type":"object","properties":{"date":{"type":"string","format":"date"}},"required":["date"]}`)))
	list := interactions.SchemaRef{ID: "list", Revision: 3}
	require.NoError(t, r.Register(list, []byte(`{"type":"object","properties":{"a/b~":{"type":"array","items":{"type":"integer"}}}}`)))

	cases := []struct {
		name  string
		ref   interactions.SchemaRef
		value string
		code  refusal.Code
		path  string
	}{
		{"accepted", radio, `{"optionId":"a"}`, "", ""},
		{"not in enum", radio, `{"optionId":"c"}`, refusal.CodeInvalidAnswer, "/value/optionId"},
		{"missing member", radio, `{}`, refusal.CodeInvalidAnswer, "/value"},
		{"extra member", radio, `{"optionId":"a","x":1}`, refusal.CodeInvalidAnswer, "/value"},
		{"not json", radio, `{"optionId":`, refusal.CodeInvalidAnswer, "/value"},
		{"format asserted", date, `{"date":"2026-13-45"}`, refusal.CodeInvalidAnswer, "/value/date"},
		{"format ok", date, `{"date":"2026-02-28"}`, "", ""},
		{"pointer escaped", list, `{"a/b~":[1,"x"]}`, refusal.CodeInvalidAnswer, "/value/a~1b~0/1"},
		{"unknown id", interactions.SchemaRef{ID: "nope", Revision: 1}, `{}`, refusal.CodeUnknownSchema, ""},
		{"unknown revision", interactions.SchemaRef{ID: "radio-ab", Revision: 2}, `{"optionId":"a"}`, refusal.CodeUnknownSchema, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := r.Validate(context.Background(), tc.ref, json.RawMessage(tc.value))
			if tc.code == "" {
				assert.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.Equal(t, tc.code, refusal.CodeOf(err))
			e, ok := err.(*refusal.Error)
			require.True(t, ok)
			assert.Equal(t, tc.path, e.Path)
		})
	}
}

func TestRegisterIsImmutable(t *testing.T) {
	r := newRegistry(t)
	// The same text, however spaced, is the same schema.
	assert.NoError(t, r.Register(radio, []byte(`{"type":"object","properties":{"optionId":{"enum":["a","b"]}},"required":["optionId"],"additionalProperties":false}`)))
	err := r.Register(radio, []byte(`{"type":"object"}`))
	require.ErrorIs(t, err, refusal.ErrSchemaMismatch)
	// The registered schema is unchanged.
	assert.Error(t, r.Validate(context.Background(), radio, json.RawMessage(`{"optionId":"z"}`)))
	text, ok := r.SchemaJSON(radio)
	require.True(t, ok)
	assert.JSONEq(t, radioSchema, text)
	_, ok = r.SchemaJSON(interactions.SchemaRef{ID: "radio-ab", Revision: 9})
	assert.False(t, ok)
}

func TestRegisterRefusesBadSchemas(t *testing.T) {
	cases := map[string]struct {
		ref    interactions.SchemaRef
		schema string
	}{
		"no id":            {interactions.SchemaRef{Revision: 1}, `{}`},
		"revision 0":       {interactions.SchemaRef{ID: "x"}, `{}`},
		"not json":         {interactions.SchemaRef{ID: "x", Revision: 1}, `{"type":`},
		"not a schema":     {interactions.SchemaRef{ID: "x", Revision: 1}, `{"type":"no-such-type"}`},
		"file ref":         {interactions.SchemaRef{ID: "x", Revision: 1}, `{"$ref":"file:///etc/passwd"}`},
		"network ref":      {interactions.SchemaRef{ID: "x", Revision: 1}, `{"$ref":"https://example.com/s.json"}`},
		"bad pattern":      {interactions.SchemaRef{ID: "x", Revision: 1}, `{"pattern":"("}`},
		"relative ref out": {interactions.SchemaRef{ID: "x", Revision: 1}, `{"$ref":"other.json"}`},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			r := jsonschema.NewRegistry()
			err := r.Register(tc.ref, []byte(tc.schema))
			require.ErrorIs(t, err, refusal.ErrInvalidCard)
			_, ok := r.SchemaJSON(tc.ref)
			assert.False(t, ok)
		})
	}
}

func TestConcurrentRegisterAndValidate(t *testing.T) {
	r := newRegistry(t)
	var wg sync.WaitGroup
	errs := make([]error, 16)
	for i := range errs {
		wg.Go(func() {
			if i%2 == 0 {
				errs[i] = r.Register(interactions.SchemaRef{ID: "n", Revision: int64(i/2 + 1)}, []byte(`{"type":"object"}`))
				return
			}
			errs[i] = r.Validate(context.Background(), radio, json.RawMessage(`{"optionId":"b"}`))
		})
	}
	wg.Wait()
	for i, err := range errs {
		assert.NoError(t, err, "goroutine %d", i)
	}
}

func TestRegistryIsAValidator(t *testing.T) {
	var v interactions.Validator = newRegistry(t)
	assert.NoError(t, v.Validate(context.Background(), radio, json.RawMessage(`{"optionId":"a"}`)))
}

// Huge exponents are refused before the schema library sees them: it
// works in exact rationals, and 1e9999999 crashed it.
func TestHugeExponents(t *testing.T) {
	r := jsonschema.NewRegistry()
	ref := interactions.SchemaRef{ID: "n", Revision: 1}
	require.NoError(t, r.Register(ref, []byte(`{"type":"object","properties":{"n":{"type":"array","items":{"type":"number","maximum":10,"multipleOf":0.5}}}}`)))
	for value, path := range map[string]string{
		`{"n":[1e9999999]}`:               "/value/n/0",
		`{"n":[1,1E-401]}`:                "/value/n/1",
		`{"n":[1e+99999999999999999999]}`: "/value/n/0",
	} {
		err := r.Validate(context.Background(), ref, json.RawMessage(value))
		require.ErrorIs(t, err, refusal.ErrInvalidAnswer, value)
		e, ok := err.(*refusal.Error)
		require.True(t, ok)
		assert.Equal(t, path, e.Path, value)
	}
	assert.NoError(t, r.Validate(context.Background(), ref, json.RawMessage(`{"n":[5e-1,1E1,1e+1]}`)))
}
