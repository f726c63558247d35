package jsonschema_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Papercusp/chat-protocol-go/interactions/jsonschema"
	"github.com/Papercusp/chat-protocol-go/refusal"
)

// A schema refusal names the failing member (Path) and, through its
// SchemaError cause, the keyword of the rule that refused it.
func TestValidateNamesTheKeyword(t *testing.T) {
	r := newRegistry(t)
	for _, c := range []struct {
		value, path, keyword string
	}{
		{`{"optionId":"z"}`, "/value/optionId", "enum"},
		{`{}`, "/value", "required"},
		{`{"optionId":"a","extra":1}`, "/value", "additionalProperties"},
	} {
		err := r.Validate(context.Background(), radio, json.RawMessage(c.value))
		require.ErrorIs(t, err, refusal.ErrInvalidAnswer, c.value)
		rerr, ok := errors.AsType[*refusal.Error](err)
		require.True(t, ok)
		assert.Equal(t, c.path, rerr.Path, c.value)
		se, ok := errors.AsType[*jsonschema.SchemaError](err)
		require.True(t, ok, c.value)
		assert.Equal(t, c.keyword, se.Keyword(), c.value)
	}
}
