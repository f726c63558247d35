package chatprotocol

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Papercusp/chat-protocol-go/blocks"
)

func TestFoldCollision(t *testing.T) {
	tests := map[string]string{
		`{"a":1,"b":{"x":[{"ID":1,"id":2}]}}`: "/b/x/0/ID",
		`{"prompt":"p","Prompt":"q"}`:         "/Prompt",
		`{"k":1,"\u212a":2}`:                  "/k",
		`{"a":[1,2,{"b":{}}]}`:                "",
	}
	for in, want := range tests {
		err := decodeKept([]byte(in), new(map[string]any), CodeInvalidEvent, "")
		if want == "" {
			assert.NoError(t, err, in)
			continue
		}
		require.ErrorIs(t, err, ErrInvalidEnvelope, in)
		assert.Equal(t, want, err.(*Error).Path, in)
	}
}

func TestDecodeKeptRefusesWrongTypesAtTheirPath(t *testing.T) {
	var r blocks.ReportBlock
	err := decodeKept([]byte(`{"plans":[{"title":5}]}`), &r, CodeInvalidEvent, "/event/blocks/0/report")
	require.ErrorIs(t, err, ErrInvalidEvent)
	assert.Equal(t, "/event/blocks/0/report/plans/0/title", err.(*Error).Path)
	err = decodeKept([]byte(`{"plans":[],"plans":[]}`), &r, CodeInvalidEvent, "/r")
	require.ErrorIs(t, err, ErrInvalidEnvelope)
}

func TestAppendKept(t *testing.T) {
	kept := []byte(`{ "question":"Go?", "later":{"x":1} }`)
	var a blocks.AskBlock
	require.NoError(t, decodeKept(kept, &a, CodeInvalidEvent, ""))
	out, err := appendKept([]byte("["), &a, kept)
	require.NoError(t, err)
	assert.Equal(t, `[{"question":"Go?","later":{"x":1}}`, string(out), "unchanged: the kept JSON, compacted")
	a.Question = "Stop?"
	out, err = appendKept(nil, &a, kept)
	require.NoError(t, err)
	assert.Equal(t, `{"question":"Stop?"}`, string(out), "changed: from the fields")
	out, err = appendKept(nil, &a, nil)
	require.NoError(t, err)
	assert.Equal(t, `{"question":"Stop?"}`, string(out))
}
