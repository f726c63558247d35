package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/Papercusp/chat-protocol-go/internal/testkit/golden"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// streamsDir holds the captured streams and their golden outputs.
const streamsDir = "../../testdata/streams"

// TestCapturedStreams runs decode, decode --state and blocks on every
// captured stream of testdata/streams: each must exit 0, report no
// violation, and print exactly its golden output (NAME.decode.jsonl,
// NAME.state.json, NAME.blocks.jsonl), which -update rewrites.
func TestCapturedStreams(t *testing.T) {
	streams, err := filepath.Glob(filepath.Join(streamsDir, "*.sse"))
	require.NoError(t, err)
	require.Len(t, streams, 4)
	outputs := []struct {
		suffix string
		args   []string
	}{
		{".decode.jsonl", []string{"decode"}},
		{".state.json", []string{"decode", "--state"}},
		{".blocks.jsonl", []string{"blocks"}},
	}
	for _, stream := range streams {
		name := strings.TrimSuffix(filepath.Base(stream), ".sse")
		for _, out := range outputs {
			t.Run(name+out.suffix, func(t *testing.T) {
				code, stdout, stderr := runCmd(append(out.args, stream), "")
				require.Equal(t, exitOK, code, stderr)
				assert.NotContains(t, stderr, ": frame ")
				golden.Check(t, filepath.Join(streamsDir, name+out.suffix), []byte(stdout))
			})
		}
	}
}

// TestCapturedStreamsShapes pins what the goldens must show, so that an
// -update cannot bless a wrong answer unnoticed.
func TestCapturedStreamsShapes(t *testing.T) {
	read := func(name string) string {
		data, err := os.ReadFile(filepath.Join(streamsDir, name))
		require.NoError(t, err)
		return string(data)
	}
	assert.Equal(t, 2, strings.Count(read("operator-report-ask-turn.blocks.jsonl"), "\n"), "the operator turn carries a report and an ask")
	assert.Contains(t, read("operator-report-ask-turn.blocks.jsonl"), `"kind":"report"`)
	assert.Contains(t, read("operator-report-ask-turn.blocks.jsonl"), `"kind":"ask"`)
	assert.Contains(t, read("scout-card-turn.decode.jsonl"), `{"appEvent":{"type":"products",`)
	assert.Contains(t, read("scout-card-turn.state.json"), `"status":"completed"`)
	assert.Contains(t, read("scout-error-turn.state.json"), `"error":{"code":"legacy-error","message":"upstream timed out","retryable":false}`)
	assert.Contains(t, read("scout-error-turn.state.json"), `"text":"Checking your order"`, "the multi-line data frame")
	assert.Contains(t, read("v1-tool-turn.state.json"), `"callId":"call-1","name":"search_docs","input":{"q":"refund policy"},"status":"ok"`)
	assert.Empty(t, read("v1-tool-turn.blocks.jsonl"))
}
