package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestIngestCommandEveryProviderBody: chatwire ingest prints each recorded
// body's expected envelopes, exits 0 unless the body ends inside a frame
// or goes on after the turn ended (the frames after an invalid one), and
// its --state line is exactly what decode --state prints for those
// envelopes, and the golden state.
func TestIngestCommandEveryProviderBody(t *testing.T) {
	bodies, err := filepath.Glob("../../testdata/providers/*/*.sse")
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(bodies), 24)
	for _, body := range bodies {
		kind := filepath.Base(filepath.Dir(body))
		base := strings.TrimSuffix(body, ".sse")
		want, err := os.ReadFile(base + ".jsonl")
		require.NoError(t, err)
		wantCode := exitOK
		if strings.Contains(base, "inside-frame") || strings.HasSuffix(base, "openai-chat/invalid-frame") || strings.HasSuffix(base, "anthropic-messages/invalid-frame") {
			wantCode = exitFail
		}

		code, stdout, stderr := runCmd([]string{"ingest", "--from", kind, body}, "")
		assert.Equal(t, wantCode, code, "%s: %s", body, stderr)
		assert.Equal(t, string(want), stdout, body)

		code, state, _ := runCmd([]string{"ingest", "--state", "--from", kind, body}, "")
		assert.Equal(t, wantCode, code, body)
		assert.Equal(t, 1, strings.Count(state, "\n"), body)

		var sse strings.Builder
		for _, line := range strings.Split(strings.TrimSuffix(string(want), "\n"), "\n") {
			sse.WriteString("data: " + line + "\n\n")
		}
		code, decoded, stderr := runCmd([]string{"decode", "--state"}, sse.String())
		require.Equal(t, exitOK, code, "%s: decode --state refuses the envelopes: %s", body, stderr)
		assert.Equal(t, decoded, state, "%s: ingest --state is decode --state's line", body)

		var golden struct{ State json.RawMessage }
		data, err := os.ReadFile(base + ".state.json")
		require.NoError(t, err)
		require.NoError(t, json.Unmarshal(data, &golden))
		assert.JSONEq(t, string(golden.State), state, body)
	}
}

// TestIngestCommandReadsTheBodyToItsEnd: a frame with data, or a cut
// frame, after the provider's end exits 1 after printing the whole turn;
// comments and blank lines there exit 0.
func TestIngestCommandReadsTheBodyToItsEnd(t *testing.T) {
	body, err := os.ReadFile("../../testdata/providers/anthropic-messages/tool-use.sse")
	require.NoError(t, err)
	want, err := os.ReadFile("../../testdata/providers/anthropic-messages/tool-use.jsonl")
	require.NoError(t, err)
	for _, c := range []struct {
		after string
		code  int
	}{
		{"", exitOK},
		{": keep-alive\n\n\n", exitOK},
		{"event: ping\ndata: {\"type\": \"ping\"}\n\n", exitFail},
		{"event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n", exitFail},
		{"data: {\"type\"", exitFail},
	} {
		code, stdout, stderr := runCmd([]string{"ingest", "--from", "anthropic-messages"}, string(body)+c.after)
		assert.Equal(t, c.code, code, "%q: %s", c.after, stderr)
		assert.Equal(t, string(want), stdout, "%q: the turn is printed whole", c.after)
		if c.code == exitOK {
			assert.Empty(t, stderr, "%q", c.after)
		} else {
			assert.Equal(t, 1, strings.Count(stderr, "\n"), "%q: one line on stderr: %s", c.after, stderr)
		}
	}
}

// TestIngestPipedIntoDecode: chatwire ingest's output, piped as it is
// into chatwire decode --state, gives ingest --state's line, and into
// chatwire decode, the same envelope lines, for every recorded body.
func TestIngestPipedIntoDecode(t *testing.T) {
	bodies, err := filepath.Glob("../../testdata/providers/*/*.sse")
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(bodies), 24)
	for _, body := range bodies {
		kind := filepath.Base(filepath.Dir(body))
		_, lines, _ := runCmd([]string{"ingest", "--from", kind, body}, "")
		_, state, _ := runCmd([]string{"ingest", "--state", "--from", kind, body}, "")
		require.NotEmpty(t, lines, body)

		code, decoded, stderr := runCmd([]string{"decode", "--state"}, lines)
		require.Equal(t, exitOK, code, "%s: decode --state refuses ingest's output: %s", body, stderr)
		assert.Equal(t, state, decoded, body)
		code, again, stderr := runCmd([]string{"decode"}, lines)
		require.Equal(t, exitOK, code, "%s: %s", body, stderr)
		assert.Equal(t, lines, again, body)
	}
}

func TestIngestCommandReadsStdin(t *testing.T) {
	body, err := os.ReadFile("../../testdata/providers/anthropic-messages/tool-use.sse")
	require.NoError(t, err)
	code, stdout, stderr := runCmd([]string{"ingest", "--from", "anthropic-messages", "--turn", "turn-9", "--conversation", "conv-2", "--provider", "bedrock"}, string(body))
	assert.Equal(t, exitOK, code, stderr)
	lines := strings.Split(strings.TrimSuffix(stdout, "\n"), "\n")
	require.Len(t, lines, 5)
	assert.Equal(t, `{"schemaVersion":1,"conversationId":"conv-2","turnId":"turn-9","eventId":"turn-9:2","seq":2,"event":{"type":"provenance","provider":"bedrock","model":"claude-sonnet-4-5-20250929","requestId":"msg_01XFDUDYJgAACzvnptvVoYEL"}}`, lines[1])
	assert.Equal(t, `{"schemaVersion":1,"conversationId":"conv-2","turnId":"turn-9","eventId":"turn-9:4","seq":4,"event":{"type":"tool_call","callId":"toolu_01T1x1fJ34qAmk2tNTrN7Up6","name":"get_weather","input":{"location":"San Francisco, CA","unit":"fahrenheit"}}}`, lines[3])
}

func TestIngestCommandUsage(t *testing.T) {
	code, stdout, _ := runCmd([]string{"ingest", "--help"}, "")
	assert.Equal(t, exitOK, code)
	for _, kind := range []string{"openai-chat", "openai-responses", "anthropic-messages"} {
		assert.Contains(t, stdout, kind)
	}
	code, _, stderr := runCmd([]string{"ingest", "x.sse"}, "")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, stderr, "--from is required")
	code, _, stderr = runCmd([]string{"ingest", "--from", "gemini"}, "")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, stderr, "openai-responses")
	code, _, _ = runCmd([]string{"ingest", "--from", "openai-chat", "/nonexistent/body.sse"}, "")
	assert.Equal(t, exitFail, code)
	code, stdout, _ = runCmd([]string{"help"}, "")
	assert.Equal(t, exitOK, code)
	assert.Contains(t, stdout, "ingest")
}
