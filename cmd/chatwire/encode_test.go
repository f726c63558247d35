package main

import (
	"bytes"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	chatprotocol "github.com/Papercusp/chat-protocol-go"
	"github.com/Papercusp/chat-protocol-go/internal/testkit/teststream"
	"github.com/Papercusp/chat-protocol-go/legacy"
	"github.com/Papercusp/chat-protocol-go/sse"
)

const streams = "../../testdata/streams/"

// encode runs `chatwire encode` with args on stdin and returns its exit
// status, stdout and stderr.
func encode(t *testing.T, stdin string, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := run(append([]string{"encode"}, args...), strings.NewReader(stdin), &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

// dataFrames returns the id and data of every event frame of an SSE
// stream, without comments and heartbeats.
func dataFrames(t *testing.T, stream string) (ids []string, data []string) {
	t.Helper()
	ids, frames, err := teststream.EventFrames(strings.NewReader(stream))
	require.NoError(t, err)
	for _, f := range frames {
		data = append(data, string(f))
	}
	return ids, data
}

func TestEncodeVersion1Stream(t *testing.T) {
	code, stdout, stderr := encode(t, "", "--to", "legacy0", streams+"v1-tool-turn.sse")
	assert.Equal(t, exitOK, code, stderr)
	assert.Equal(t, "data: {\"type\":\"tool_start\",\"tool\":\"search_docs\",\"callId\":\"call-1\"}\nid: 4\n\n"+
		"data: {\"type\":\"token\",\"content\":\"Refunds are accepted \"}\nid: 6\n\n"+
		"data: {\"type\":\"token\",\"content\":\"within 30 days.\"}\nid: 7\n\n"+
		"data: {\"type\":\"done\",\"usage\":{\"totalTokens\":431}}\nid: 9\n\n", stdout)
	assert.Equal(t, "chatwire: skipped 5 frames without a legacy form (unsupported-event): capabilities 1, lifecycle 1, provenance 1, result 1, tool_result 1\n", stderr)
}

// TestEncodeReadsBackAsTheSameEvents: the version-0 parser reads every
// frame the command writes as the very event the adapter encoded from the
// envelope of the same seq.
func TestEncodeReadsBackAsTheSameEvents(t *testing.T) {
	input, err := os.ReadFile(streams + "v1-tool-turn.sse")
	require.NoError(t, err)
	_, envelopes := dataFrames(t, string(input))
	bySeq := map[string]legacy.Frame{}
	for _, data := range envelopes {
		env, err := chatprotocol.ParseEnvelope([]byte(data))
		require.NoError(t, err)
		if f, err := legacy.EncodeLegacyChatFrame(env, legacy.Scout); err == nil {
			bySeq[strconv.FormatInt(env.Seq, 10)] = f
		}
	}
	code, stdout, _ := encode(t, string(input), "--to", "legacy0", "-")
	require.Equal(t, exitOK, code)
	ids, frames := dataFrames(t, stdout)
	require.Len(t, frames, len(bySeq))
	for i, data := range frames {
		want, ok := bySeq[ids[i]]
		require.True(t, ok, "frame id %s is the seq of an envelope with a legacy form", ids[i])
		assert.Equal(t, want, legacy.ParseChatEvent([]byte(data)), data)
	}
}

// TestEncodeInvertsTheUpgrade: a captured Scout stream, upgraded frame by
// frame and written as version-1 SSE, encodes back to the captured frames
// (their data and ids, each id line now last in its frame), but for its
// comment and heartbeat and the call id the host gave the tool start.
func TestEncodeInvertsTheUpgrade(t *testing.T) {
	original, err := os.ReadFile(streams + "scout-card-turn.sse")
	require.NoError(t, err)
	reg, err := chatprotocol.NewRegistry(map[string]chatprotocol.Channel{"products": chatprotocol.ChannelEvent})
	require.NoError(t, err)
	host := legacy.NewStreamHost(&legacy.StreamHostOptions{Registry: reg})
	var v1 bytes.Buffer
	out := sse.NewEncoder(&v1)
	var want strings.Builder
	ids, frames := dataFrames(t, string(original))
	for i, data := range frames {
		f, err := legacy.DecodeLegacyChatFrame([]byte(data), legacy.Scout)
		require.NoError(t, err)
		envs, err := legacy.UpgradeLegacyChatFrame(t.Context(), f, host)
		require.NoError(t, err)
		require.Len(t, envs, 1)
		b, err := envs[0].MarshalJSON()
		require.NoError(t, err)
		require.NoError(t, out.Encode(sse.Frame{ID: strconv.FormatInt(envs[0].Seq, 10), Event: envs[0].Event.EventType(), Data: b}))
		want.WriteString("data: " + strings.Replace(data, `"tool":"search_products"`, `"tool":"search_products","callId":"turn-1-call-1"`, 1) + "\nid: " + ids[i] + "\n\n")
	}
	code, stdout, stderr := encode(t, v1.String(), "--to", "legacy0", "--product", "products")
	assert.Equal(t, exitOK, code, stderr)
	assert.Empty(t, stderr, "every envelope has a legacy form")
	assert.Equal(t, want.String(), stdout)
	_, got := dataFrames(t, stdout)
	assert.Equal(t, frames[9], got[9], "the done frame's data is byte-identical")
}

func TestEncodeStrict(t *testing.T) {
	code, stdout, stderr := encode(t, "", "--to", "legacy0", "--strict", streams+"v1-tool-turn.sse")
	assert.Equal(t, exitFail, code)
	assert.Empty(t, stdout)
	assert.Equal(t, "chatwire: frame 1: unsupported-event: only a completed lifecycle has a legacy form (done), not \"started\" (at /event/status)\n", stderr)

	stream := "id: 1\nevent: delta\ndata: {\"schemaVersion\":1,\"conversationId\":\"c\",\"turnId\":\"t\",\"eventId\":\"e-1\",\"seq\":1,\"event\":{\"type\":\"delta\",\"text\":\"a\"}}\n\n" +
		": keepalive\n\n" +
		"id: 2\nevent: provenance\ndata: {\"schemaVersion\":1,\"conversationId\":\"c\",\"turnId\":\"t\",\"eventId\":\"e-2\",\"seq\":2,\"event\":{\"type\":\"provenance\",\"provider\":\"p\"}}\n\n"
	code, stdout, stderr = encode(t, stream, "--to", "legacy0", "--strict")
	assert.Equal(t, exitFail, code)
	assert.Equal(t, "data: {\"type\":\"token\",\"content\":\"a\"}\nid: 1\n\n", stdout, "frames before the refused one are written")
	assert.True(t, strings.HasPrefix(stderr, "chatwire: frame 3: unsupported-event: "), stderr)
}

func TestEncodePapercusp(t *testing.T) {
	code, stdout, stderr := encode(t, "", "--to", "legacy0", "--dialect", "papercusp", streams+"v1-tool-turn.sse")
	assert.Equal(t, exitOK, code, stderr)
	_, frames := dataFrames(t, stdout)
	assert.Equal(t, []string{
		`{"type":"tool_call","callId":"call-1","name":"search_docs","input":{"q":"refund policy"}}`,
		`{"type":"tool_result","callId":"call-1","status":"ok","output":{"hits":2}}`,
		`{"type":"delta","text":"Refunds are accepted "}`,
		`{"type":"delta","text":"within 30 days."}`,
		`{"type":"done","usage":{"totalTokens":431}}`,
	}, frames)
	for _, data := range frames {
		_, err := legacy.DecodeLegacyChatFrame([]byte(data), legacy.Papercusp)
		assert.NoError(t, err, data)
	}
}

func TestEncodeContractViolations(t *testing.T) {
	env := func(seq int, event string) string {
		return "data: {\"schemaVersion\":1,\"conversationId\":\"c\",\"turnId\":\"t\",\"eventId\":\"e\",\"seq\":" + strconv.Itoa(seq) + ",\"event\":" + event + "}\n\n"
	}
	tests := []struct {
		name, stream, stderr string
		args                 []string
	}{
		{"legacy input", streams + "scout-error-turn.sse", "chatwire: frame 1: unsupported-version: ", nil},
		{"unregistered product", env(1, `{"type":"products"}`), "chatwire: frame 1: unsupported-event: ", nil},
		{"invalid event", env(1, `{"type":"delta"}`) + env(2, `{"type":"delta","text":"x"}`), "chatwire: frame 1: invalid-event: ", nil},
		{"frame too large", env(1, `{"type":"delta","text":"`+strings.Repeat("x", 200)+`"}`), "chatwire: frame 1: frame-too-large: ", []string{"--max-frame", "100"}},
		{"missing file", "no-such-file.sse", "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := append([]string{"--to", "legacy0"}, tt.args...)
			stdin := tt.stream
			if strings.HasSuffix(tt.stream, ".sse") {
				args, stdin = append(args, tt.stream), ""
			}
			code, stdout, stderr := encode(t, stdin, args...)
			assert.Equal(t, exitFail, code)
			assert.Empty(t, stdout)
			if tt.name == "missing file" {
				assert.Contains(t, stderr, "no-such-file.sse")
				return
			}
			assert.True(t, strings.HasPrefix(stderr, tt.stderr), stderr)
			assert.Equal(t, 1, strings.Count(stderr, "\n"), "one line")
		})
	}
}

// TestEncodeTruncatedStream: a stream cut inside its last frame is a
// violation, as for chatwire decode, not a silent success without it.
func TestEncodeTruncatedStream(t *testing.T) {
	input, err := os.ReadFile(streams + "v1-tool-turn.sse")
	require.NoError(t, err)
	cut := string(input[:len(input)-1]) // the final blank line is gone
	code, stdout, stderr := encode(t, cut, "--to", "legacy0")
	assert.Equal(t, exitFail, code)
	assert.True(t, strings.HasPrefix(stderr, "chatwire: frame 9: invalid-frame: "), stderr)
	assert.Equal(t, 1, strings.Count(stderr, "\n"), "one line: %q", stderr)
	assert.NotContains(t, stdout, "done", "the cut frame is not written")
}

// TestEncodeFrameNumberCountsEveryFrame: the refused frame is numbered as
// the decoder counts it, frames of fields without data included.
func TestEncodeFrameNumberCountsEveryFrame(t *testing.T) {
	code, _, stderr := encode(t, "id: 5\n\nretry: 10\n\ndata: "+strings.Repeat("x", 200)+"\n\n", "--to", "legacy0", "--max-frame", "100")
	assert.Equal(t, exitFail, code)
	assert.True(t, strings.HasPrefix(stderr, "chatwire: frame 3: frame-too-large: "), stderr)
}

// TestEncodeReadError: an input that cannot be read is not a frame's fault.
func TestEncodeReadError(t *testing.T) {
	code, stdout, stderr := encode(t, "", "--to", "legacy0", t.TempDir())
	assert.Equal(t, exitFail, code)
	assert.Empty(t, stdout)
	assert.True(t, strings.HasPrefix(stderr, "chatwire encode: "), stderr)
	assert.NotContains(t, stderr, "frame")
	assert.Equal(t, 1, strings.Count(stderr, "\n"), "one line: %q", stderr)
}

// TestEncodeFlagsAfterFile: flags and FILE in any order, as for decode.
func TestEncodeFlagsAfterFile(t *testing.T) {
	code, stdout, stderr := encode(t, "", streams+"v1-tool-turn.sse", "--to", "legacy0")
	assert.Equal(t, exitOK, code, stderr)
	assert.Contains(t, stdout, "data: {\"type\":\"done\",\"usage\":{\"totalTokens\":431}}\nid: 9\n")
}

func TestEncodeSkipCountSingular(t *testing.T) {
	stream := "data: {\"schemaVersion\":1,\"conversationId\":\"c\",\"turnId\":\"t\",\"eventId\":\"e\",\"seq\":1,\"event\":{\"type\":\"lifecycle\",\"status\":\"started\"}}\n\n"
	code, _, stderr := encode(t, stream, "--to", "legacy0")
	assert.Equal(t, exitOK, code)
	assert.Equal(t, "chatwire: skipped 1 frame without a legacy form (unsupported-event): lifecycle 1\n", stderr)
}

func TestEncodeMultiLinePayloadIsOneDataLine(t *testing.T) {
	stream := "id: 1\ndata: {\"schemaVersion\":1,\"conversationId\":\"c\",\"turnId\":\"t\",\"eventId\":\"e\",\"seq\":1,\n" +
		"data: \"event\":{\"type\":\"products\",\n" + "data:   \"items\": [1, 2]}}\n\n"
	code, stdout, stderr := encode(t, stream, "--to", "legacy0", "--product", "products")
	assert.Equal(t, exitOK, code, stderr)
	assert.Equal(t, "data: {\"type\":\"products\",\"items\":[1,2]}\nid: 1\n\n", stdout)
}

func TestEncodeUsage(t *testing.T) {
	for _, args := range [][]string{
		{}, {"--to", "legacy1"}, {"--to", "legacy0", "--dialect", "klingon"}, {"--to", "legacy0", "a", "b"},
		{"--to", "legacy0", "--max-frame", "0"}, {"--to", "legacy0", "--product", "delta"}, {"--to", "legacy0", "--nope"},
	} {
		code, stdout, stderr := encode(t, "", args...)
		assert.Equal(t, exitUsage, code, "%q", args)
		assert.Empty(t, stdout, "%q", args)
		assert.NotEmpty(t, stderr, "%q", args)
	}
	code, stdout, _ := encode(t, "", "--help")
	assert.Equal(t, exitOK, code)
	assert.Contains(t, stdout, "--to legacy0")
	_, body, _ := strings.Cut(stdout, "\n\n") // after the synopsis
	for _, flag := range []string{"--dialect", "--strict", "--product", "--max-frame"} {
		assert.Contains(t, body, flag, "%s is described, beyond the synopsis", flag)
	}
}
