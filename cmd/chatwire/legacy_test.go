package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	chatprotocol "github.com/Papercusp/chat-protocol-go"
	"github.com/Papercusp/chat-protocol-go/refusal"
)

// legacyStream joins legacy frames into an SSE stream, one data line per
// line of a frame.
func legacyStream(frames ...string) string {
	var b strings.Builder
	for _, f := range frames {
		b.WriteString("data: " + strings.ReplaceAll(f, "\n", "\ndata: ") + "\n\n")
	}
	return b.String()
}

func TestDecodeLegacyIdentity(t *testing.T) {
	in := legacyStream(`{"type":"session","sessionId":"s-1"}`, `{"type":"tool_start","tool":"a"}`,
		`{"type":"token","content":"x"}`, `{"type":"tool_start","tool":"b"}`, `{"type":"done"}`)
	envs, _, refusals, res := decodeAll(t, in, streamOptions{})
	require.Empty(t, refusals)
	require.Len(t, envs, 5)
	assert.JSONEq(t, `{"schemaVersion":1,"conversationId":"s-1","turnId":"turn-1","eventId":"e-4","seq":4,"event":{"type":"tool_call","callId":"turn-1-call-2","name":"b"}}`, envs[3])
	assert.Equal(t, "s-1", res.state.ConversationID)

	envs, _, refusals, _ = decodeAll(t, in, streamOptions{conversation: "conv-9", turn: "t-7"})
	require.Empty(t, refusals)
	assert.JSONEq(t, `{"schemaVersion":1,"conversationId":"conv-9","turnId":"t-7","eventId":"e-2","seq":2,"event":{"type":"tool_call","callId":"t-7-call-1","name":"a"}}`, envs[1])
}

func TestDecodeLegacyProductFrames(t *testing.T) {
	in := legacyStream(`{"type":"session","sessionId":"s-1"}`, "{\"type\":\"products\",\n \"items\": [1, 2]}",
		`{"type":"cart_mutate","op":"add"}`, `{"type":"products","items":[]}`, `{"type":"token","content":"x"}`)
	envs, apps, refusals, res := decodeAll(t, in, streamOptions{})
	require.Empty(t, refusals)
	assert.Len(t, envs, 2)
	assert.Equal(t, []string{`{"type":"products","items":[1,2]}`, `{"type":"cart_mutate","op":"add"}`, `{"type":"products","items":[]}`}, apps)
	assert.Equal(t, map[string]int{"products": 2, "cart_mutate": 1}, res.appEvents)
	assert.Equal(t, "chatwire: 3 product events (products: 2, cart_mutate: 1) skipped: they are not part of the version-1 state", res.appEventSummary(false))

	code, stdout, stderr := runCmd([]string{"decode"}, in)
	assert.Equal(t, exitOK, code)
	assert.Contains(t, stdout, `{"appEvent":{"type":"products","items":[1,2]}}`+"\n")
	assert.Equal(t, `chatwire: 3 product events (products: 2, cart_mutate: 1) printed as {"appEvent": FRAME} lines`+"\n", stderr)
}

// TestDecodeLegacyProductSummaryIsCapped: however many distinct product
// types a stream holds, the summary names the 20 most frequent, most
// frequent first (ties by name), and counts the rest.
func TestDecodeLegacyProductSummaryIsCapped(t *testing.T) {
	frames := []string{`{"type":"session","sessionId":"s-1"}`}
	for i := range 5000 {
		frames = append(frames, fmt.Sprintf(`{"type":"p-%04d"}`, i))
	}
	for i := range 30 { // p-0007 twice more, p-0003 once more …
		frames = append(frames, fmt.Sprintf(`{"type":"p-%04d"}`, []int{7, 7, 3}[i%3]))
	}
	in := legacyStream(frames...)
	code, _, stderr := runCmd([]string{"decode", "--state"}, in)
	assert.Equal(t, exitOK, code)
	want := "chatwire: 5030 product events (p-0007: 21, p-0003: 11"
	for i := range 18 {
		want += fmt.Sprintf(", p-%04d: 1", []int{0, 1, 2, 4, 5, 6, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19}[i])
	}
	want += ", and 4980 more types) skipped: they are not part of the version-1 state\n"
	assert.Equal(t, want, stderr)

	var res streamResult
	res.appEvents = map[string]int{"a": 1}
	assert.Equal(t, `chatwire: 1 product event (a: 1) printed as {"appEvent": FRAME} lines`, res.appEventSummary(true))
	for i := range 21 {
		res.appEvents[fmt.Sprintf("t%02d", i)] = 2
	}
	assert.Equal(t, "chatwire: 43 product events (t00: 2, t01: 2, t02: 2, t03: 2, t04: 2, t05: 2, t06: 2, t07: 2, t08: 2, t09: 2, "+
		"t10: 2, t11: 2, t12: 2, t13: 2, t14: 2, t15: 2, t16: 2, t17: 2, t18: 2, t19: 2, and 2 more types) printed as {\"appEvent\": FRAME} lines",
		res.appEventSummary(true))
	res.appEvents = map[string]int{"x": 1}
	for i := range 20 {
		res.appEvents[fmt.Sprintf("t%02d", i)] = 2
	}
	assert.Contains(t, res.appEventSummary(true), ", and 1 more type)")
}

// TestDecodeLegacyProductTypeStaysOnOneLine: a product type holding a line
// break or another control character (legal in a legacy frame) does not
// break the one stderr line that counts the product frames.
func TestDecodeLegacyProductTypeStaysOnOneLine(t *testing.T) {
	in := legacyStream(`{"type":"session","sessionId":"s-1"}`, `{"type":"toke\n\u001b[31mn"}`, `{"type":"done"}`)
	for _, args := range [][]string{{"decode"}, {"decode", "--state"}, {"blocks"}} {
		code, _, stderr := runCmd(args, in)
		assert.Equal(t, exitOK, code, "%q", args)
		assert.Equal(t, 1, strings.Count(stderr, "\n"), "%q: %q", args, stderr)
		assert.Contains(t, stderr, "(toke??[31mn: 1)", "%q", args)
	}
}

func TestDecodeLegacyViolations(t *testing.T) {
	session := `{"type":"session","sessionId":"s-1"}`
	cases := []struct {
		name   string
		frames []string
		want   []violation
	}{
		{"no conversation id", []string{`{"type":"token","content":"x"}`}, []violation{{1, refusal.CodeInvalidEnvelope}}},
		{"a v1 frame in a legacy stream", []string{session, `{"schemaVersion":1,"type":"token"}`}, []violation{{2, refusal.CodeUnsupportedVersion}}},
		{"not an object", []string{session, `[1]`}, []violation{{2, refusal.CodeInvalidEvent}}},
		{"members that do not fit", []string{session, `{"type":"token","content":7}`}, []violation{{2, refusal.CodeInvalidEvent}}},
		{"after done", []string{session, `{"type":"done"}`, `{"type":"token","content":"late"}`}, []violation{{3, refusal.CodeTurnTerminated}}},
		{"a papercusp frame read as scout", []string{session, `{"type":"delta","text":"x"}`}, []violation{{2, refusal.CodeUnsupportedEvent}}},
		{"a version-1 type in a legacy stream", []string{session, `{"type":"lifecycle","status":"started"}`}, []violation{{2, refusal.CodeUnsupportedEvent}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, _, refusals, _ := decodeAll(t, legacyStream(c.frames...), streamOptions{keepGoing: true})
			assert.Equal(t, c.want, refusals)
		})
	}
}

func TestDecodeLegacyPapercuspDialect(t *testing.T) {
	in := legacyStream(`{"type":"session","sessionId":"s-1"}`, `{"type":"tool_call","name":"search","input":{"q":1}}`,
		`{"type":"tool_result","callId":"turn-1-call-1","status":"ok","output":2}`, `{"type":"delta","text":"hi"}`)
	_, apps, refusals, res := decodeAll(t, in, streamOptions{from: fromLegacy, dialect: "papercusp"})
	require.Empty(t, refusals)
	assert.Empty(t, apps)
	turn, ok := res.state.Turn("turn-1")
	require.True(t, ok)
	assert.Equal(t, "hi", turn.Text())
	require.Len(t, turn.ToolCalls, 1)
	assert.Equal(t, chatprotocol.ToolCallStatus("ok"), turn.ToolCalls[0].Status)

	_, _, refusals, _ = decodeAll(t, in+legacyStream(`{"type":"tool_result","status":"maybe"}`), streamOptions{dialect: "papercusp"})
	assert.Equal(t, []violation{{5, refusal.CodeUnknownResultStatus}}, refusals)
}

// TestDecodeLegacyWrongDialect: a captured Scout stream read as Papercusp
// fails at its first token, instead of exiting 0 with a turn without text
// and every token counted as a product frame.
func TestDecodeLegacyWrongDialect(t *testing.T) {
	code, stdout, stderr := runCmd([]string{"decode", "--state", "--dialect", "papercusp", streams + "scout-card-turn.sse"}, "")
	assert.Equal(t, exitFail, code)
	assert.Empty(t, stdout)
	assert.True(t, strings.HasPrefix(stderr, "chatwire: frame 2: unsupported-event: "), stderr)
}

// A legacy stream without its session frame stops at frame 1, and the
// message says how to name the conversation; with --conversation it goes
// through.
func TestDecodeLegacyWithoutSessionSaysHowToNameTheConversation(t *testing.T) {
	in := legacyStream(`{"type":"token","content":"x"}`, `{"type":"done"}`)
	code, stdout, stderr := runCmd([]string{"decode"}, in)
	assert.Equal(t, exitFail, code)
	assert.Empty(t, stdout)
	assert.True(t, strings.HasPrefix(stderr, "chatwire: frame 1: invalid-envelope"), "%q", stderr)
	assert.Contains(t, stderr, "--conversation ID")

	code, stdout, stderr = runCmd([]string{"decode", "--conversation", "c-9"}, in)
	assert.Equal(t, exitOK, code, "%q", stderr)
	assert.Contains(t, stdout, `"conversationId":"c-9"`)
}
