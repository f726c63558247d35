package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestBlocksCommandFindsTagsSplitAcrossDeltas(t *testing.T) {
	text := "Status:\n<report>{\"title\":\"Fleet\",\"plans\":[{\"title\":\"Rate-limit v2\",\"items\":[{\"text\":\"Pacing\",\"status\":\"wip\"}]}]}</report>\n" +
		"<ask>{\"question\":\"Ship <it> & go?\"}</ask> and <ask>{\"question\":\"Second?\"}</ask> <ask>not a block</ask>"
	// Deltas of 7 bytes cut every tag in pieces.
	var in strings.Builder
	seq := 0
	for i := 0; i < len(text); i += 7 {
		seq++
		in.WriteString(v1(seq, delta(text[i:min(i+7, len(text))])))
	}
	code, stdout, stderr := runCmd([]string{"blocks"}, in.String())
	assert.Equal(t, exitOK, code)
	assert.Empty(t, stderr)
	lines := strings.Split(strings.TrimSuffix(stdout, "\n"), "\n")
	require.Len(t, lines, 3)
	assert.JSONEq(t, `{"turnId":"t-1","kind":"report","block":{"title":"Fleet","plans":[{"title":"Rate-limit v2","items":[{"text":"Pacing","status":"wip"}]}]}}`, lines[0])
	assert.Equal(t, `{"turnId":"t-1","kind":"ask","block":{"question":"Ship <it> & go?"}}`, lines[1], "canonical block JSON, no HTML escaping")
	assert.JSONEq(t, `{"turnId":"t-1","kind":"ask","block":{"question":"Second?"}}`, lines[2])
}

func TestBlocksCommandTurnsInOrder(t *testing.T) {
	other := strings.ReplaceAll(v1(1, delta(`<ask>{"question":"from t-2"}</ask>`)), `"t-1"`, `"t-2"`)
	in := v1(1, delta(`<ask>{"question":"from t-1"}</ask>`)) + other + v1(2, delta(`<ask>{"question":"again t-1"}</ask>`))
	code, stdout, _ := runCmd([]string{"blocks"}, in)
	assert.Equal(t, exitOK, code)
	assert.Equal(t, `{"turnId":"t-1","kind":"ask","block":{"question":"from t-1"}}
{"turnId":"t-1","kind":"ask","block":{"question":"again t-1"}}
{"turnId":"t-2","kind":"ask","block":{"question":"from t-2"}}
`, stdout)
}

func TestBlocksCommandViolations(t *testing.T) {
	in := v1(1, delta(`<ask>{"question":"q"}</ask>`)) + v1(3, delta("gap"))
	code, stdout, stderr := runCmd([]string{"blocks"}, in)
	assert.Equal(t, exitFail, code)
	assert.Empty(t, stdout)
	assert.Regexp(t, `^chatwire: frame 2: sequence-gap: [^\n]+\n$`, stderr)

	code, stdout, _ = runCmd([]string{"blocks", "--keep-going"}, in)
	assert.Equal(t, exitFail, code)
	assert.Equal(t, `{"turnId":"t-1","kind":"ask","block":{"question":"q"}}`+"\n", stdout)
}
