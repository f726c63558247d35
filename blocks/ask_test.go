package blocks

import (
	"encoding/json"
	"strings"
	"testing"

	_ "github.com/Papercusp/chat-protocol-go/internal/testkit/golden" // accepts go test ./... -update

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseAskBodyRules(t *testing.T) {
	cases := []struct {
		name, in string
		want     *AskBlock
	}{
		{"NBSP-only question is blank", `{"question":"\u00a0\ufeff\u3000"}`, nil},
		{"U+0085 is not trimmed", `{"question":"\u0085"}`, &AskBlock{Question: "\u0085"}},
		{"U+200B is not trimmed", `{"question":" \u200b "}`, &AskBlock{Question: "\u200b"}},
		{"BOM before the body is not JSON whitespace", "\ufeff{\"question\":\"q\"}", nil},
		{"NBSP around the body is not JSON whitespace", "\u00a0{\"question\":\"q\"}", nil},
		{"JSON whitespace around the body", " \t\r\n{\"question\":\"q\"}\n", &AskBlock{Question: "q"}},
		{"array option is skipped", `{"question":"q","options":[["a"],{"id":"b"}]}`, &AskBlock{Question: "q", Options: []AskOption{{ID: "b", Label: "b"}}}},
		{"non-string label falls back to id", `{"question":"q","options":[{"id":"b","label":3,"description":"  "}]}`, &AskBlock{Question: "q", Options: []AskOption{{ID: "b", Label: "b"}}}},
		{"refs trimmed", `{"question":"q","refs":[" a ","\u00a0b\u2029",true,{}]}`, &AskBlock{Question: "q", Refs: []string{"a", "b"}}},
		{"options null", `{"question":"q","options":null,"refs":null}`, &AskBlock{Question: "q"}},
		{"duplicate question, last wins", `{"question":"a","question":"  "}`, nil},
		{"case-variant name ignored", `{"Question":"a"}`, nil},
		{"numbers out of range are not errors", `{"question":"q","n":-1e400}`, &AskBlock{Question: "q"}},
		{"empty text", ``, nil},
		{"trailing garbage", `{"question":"q"} x`, nil},
		{"two documents", `{"question":"q"}{}`, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, ok := ParseAskBody(c.in)
			require.Equal(t, c.want != nil, ok)
			if c.want != nil {
				assert.Equal(t, *c.want, got)
			}
		})
	}
}

func TestParseAskBlockOverEncodingJSON(t *testing.T) {
	dec := json.NewDecoder(strings.NewReader(`{"question":" q ","options":[{"id":1,"label":"x"},{"id":"i"}],"refs":[2,"r"]}`))
	dec.UseNumber()
	var v any
	require.NoError(t, dec.Decode(&v))
	got, ok := ParseAskBlock(v)
	require.True(t, ok)
	assert.Equal(t, AskBlock{Question: "q", Options: []AskOption{{ID: "i", Label: "i"}}, Refs: []string{"r"}}, got)

	for _, v := range []any{nil, "q", 1.0, []any{}, map[string]string{"question": "q"}, map[string]any{"question": []byte("q")}} {
		_, ok := ParseAskBlock(v)
		assert.False(t, ok, "%#v", v)
	}
}
