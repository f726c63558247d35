package turn

import (
	"encoding/json"
	"errors"
	"testing"

	chatprotocol "github.com/Papercusp/chat-protocol-go"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The stored result is storedResult's JSON, read back the same whichever
// reader reads it.
func TestStoredResultForm(t *testing.T) {
	for _, c := range []struct {
		out    json.RawMessage
		err    error
		status chatprotocol.ToolResultStatus
		output string
	}{
		{json.RawMessage(`{"hits":[1,2]}`), nil, "ok", `{"hits":[1,2]}`},
		{nil, nil, "ok", ""},
		{json.RawMessage(`"x"`), &ToolError{Status: chatprotocol.ToolResultError, Output: json.RawMessage(`{"why":"declined"}`)}, "error", `{"why":"declined"}`},
		{nil, &ToolError{Status: chatprotocol.ToolResultCancelled}, "cancelled", ""},
		{json.RawMessage(`{"a":1,"a":2}`), nil, "ok", `{"a":1,"a":2}`}, // stored as given; appended as error
	} {
		res, err := encode(c.out, c.err)
		require.NoError(t, err)
		var viaJSON storedResult
		require.NoError(t, json.Unmarshal(res.Data, &viaJSON), "%s", res.Data)
		got, err := decode(res.Data)
		require.NoError(t, err)
		assert.Equal(t, c.status, got.Status)
		assert.Equal(t, c.output, string(got.Output))
		assert.Equal(t, viaJSON.Status, got.Status)
		assert.Equal(t, string(viaJSON.Output), string(got.Output))
	}
	unknown := errors.New("lost")
	_, err := encode(nil, unknown)
	assert.ErrorIs(t, err, unknown)
	_, err = encode(nil, &ToolError{Status: chatprotocol.ToolResultOK})
	assert.Error(t, err, "ok is no ToolError status: the outcome is unknown")
	got, err := decode([]byte(`{ "output": [1], "status": "ok" }`))
	require.NoError(t, err)
	assert.Equal(t, storedResult{Status: "ok", Output: json.RawMessage(`[1]`)}, got)
}
