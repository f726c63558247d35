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

// v1 returns the SSE frame of a version-1 envelope of conversation c-1,
// turn t-1, with seq and the event's JSON.
func v1(seq int, event string) string {
	return fmt.Sprintf("id: %d\ndata: {\"schemaVersion\":1,\"conversationId\":\"c-1\",\"turnId\":\"t-1\",\"eventId\":\"e-%d\",\"seq\":%d,\"event\":%s}\n\n", seq, seq, seq, event)
}

// delta is the event of a delta of text.
func delta(text string) string { return fmt.Sprintf(`{"type":"delta","text":%q}`, text) }

// refusal is one reported violation.
type violation struct {
	Frame int64
	Code  refusal.Code
}

// decodeAll runs decodeStream on in with o and collects everything.
func decodeAll(t *testing.T, in string, o streamOptions) (envs []string, apps []string, refusals []violation, res streamResult) {
	t.Helper()
	if o.from == "" {
		o.from = fromAuto
	}
	if o.dialect == "" {
		o.dialect = "scout"
	}
	if o.maxFrame == 0 {
		o.maxFrame = chatprotocol.DefaultMaxFrameBytes
	}
	require.NoError(t, o.check())
	sink := streamSink{
		envelope: func(env *chatprotocol.ChatEventEnvelope) error {
			js, err := env.MarshalJSON()
			envs = append(envs, string(js))
			return err
		},
		appEvent: func(raw []byte) error { apps = append(apps, string(raw)); return nil },
	}
	res, err := decodeStream(strings.NewReader(in), o, sink, func(frame int64, e *refusal.Error) {
		refusals = append(refusals, violation{frame, e.Code})
	})
	require.NoError(t, err)
	assert.Equal(t, len(refusals), res.violations)
	return envs, apps, refusals, res
}

func TestDecodeVersion1(t *testing.T) {
	in := ": connected\n\n" + v1(1, delta("Hel")) + "event: heartbeat\ndata: {\"tsMs\":1}\n\n" + v1(2, delta("lo"))
	envs, apps, refusals, res := decodeAll(t, in, streamOptions{})
	assert.Empty(t, refusals)
	assert.Empty(t, apps)
	require.Len(t, envs, 2)
	assert.JSONEq(t, `{"schemaVersion":1,"conversationId":"c-1","turnId":"t-1","eventId":"e-2","seq":2,"event":{"type":"delta","text":"lo"}}`, envs[1])
	turn, ok := res.state.Turn("t-1")
	require.True(t, ok)
	assert.Equal(t, "Hello", turn.Text())
}

// TestDecodeViolations checks the code and the frame number of each kind
// of violation, first alone (the stream stops there) and then with
// --keep-going (every one is reported and the good frames still apply).
func TestDecodeViolations(t *testing.T) {
	cases := []struct {
		name string
		bad  string // a frame placed after frame 1 (seq 1) and before a good frame of seq 2
		code refusal.Code
	}{
		{"sequence gap", v1(3, delta("x")), refusal.CodeSequenceGap},
		{"reordered", v1(1, delta("other")), refusal.CodeSequenceReordered},
		{"unknown call", v1(2, `{"type":"tool_result","callId":"nope","status":"ok"}`), refusal.CodeUnknownCall},
		{"unknown result status", v1(2, `{"type":"tool_result","callId":"c","status":"maybe"}`), refusal.CodeUnknownResultStatus},
		{"unsupported event", v1(2, `{"type":"products"}`), refusal.CodeUnsupportedEvent},
		{"invalid event", v1(2, `{"type":"error","code":"x","message":"m"}`), refusal.CodeInvalidEvent},
		{"missing call id", v1(2, `{"type":"tool_call","name":"n"}`), refusal.CodeMissingCallID},
		{"future version", "data: {\"schemaVersion\":2}\n\n", refusal.CodeUnsupportedVersion},
		{"legacy frame in a v1 stream", "data: {\"type\":\"token\",\"content\":\"x\"}\n\n", refusal.CodeUnsupportedVersion},
		{"not JSON", "data: \x00\xff garbage\n\n", refusal.CodeInvalidEnvelope},
		{"invalid UTF-8", "data: {\"schemaVersion\":1,\"conversationId\":\"c-\xff\"}\n\n", refusal.CodeInvalidEnvelope},
		{"duplicate member", "data: {\"schemaVersion\":1,\"schemaVersion\":1}\n\n", refusal.CodeInvalidEnvelope},
		{"event name is not the type", "event: lifecycle\n" + v1(2, delta("x")), refusal.CodeInvalidFrame},
		{"data over --max-frame", "data: " + strings.Repeat("x", 600) + "\n\n", refusal.CodeFrameTooLarge},
		{"line over the SSE bound", "data: " + strings.Repeat("x", 6000) + "\n\n", refusal.CodeFrameTooLarge},
		{"foreign conversation", strings.ReplaceAll(v1(2, delta("x")), "c-1", "c-2"), refusal.CodeForeignFrame},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			in := v1(1, delta("a")) + ": note\n\n" + c.bad + v1(2, delta("b"))
			o := streamOptions{maxFrame: 500, conversation: "c-1"}
			envs, _, refusals, _ := decodeAll(t, in, o)
			assert.Equal(t, []violation{{3, c.code}}, refusals)
			assert.Len(t, envs, 1, "the stream stops at the violation")

			o.keepGoing = true
			envs, _, refusals, res := decodeAll(t, in, o)
			assert.Equal(t, []violation{{3, c.code}}, refusals)
			assert.Len(t, envs, 2, "the good frames after it apply")
			turn, _ := res.state.Turn("t-1")
			assert.Equal(t, "ab", turn.Text())
		})
	}
}

func TestDecodeTruncatedStream(t *testing.T) {
	for _, tail := range []string{"data: {\"schemaVersion\"", "id: 2\ndata: x\n", "\xff"} {
		_, _, refusals, _ := decodeAll(t, v1(1, delta("a"))+tail, streamOptions{})
		assert.Equal(t, []violation{{2, refusal.CodeInvalidFrame}}, refusals, "%q", tail)
	}
}

func TestDecodeKeepGoingReportsEveryViolation(t *testing.T) {
	in := v1(1, delta("a")) + v1(3, delta("gap")) + "data: nope\n\n" + v1(2, delta("b")) + "data: cut"
	_, _, refusals, _ := decodeAll(t, in, streamOptions{keepGoing: true})
	assert.Equal(t, []violation{
		{2, refusal.CodeSequenceGap},
		{3, refusal.CodeInvalidEnvelope},
		{5, refusal.CodeInvalidFrame},
	}, refusals)
}

func TestDecodeFromV1RefusesLegacyFrames(t *testing.T) {
	in := "data: {\"type\":\"session\",\"sessionId\":\"s\"}\n\n"
	_, _, refusals, _ := decodeAll(t, in, streamOptions{from: fromV1})
	assert.Equal(t, []violation{{1, refusal.CodeUnsupportedVersion}}, refusals)
}

func TestDecodeAutoDecidesOnTheFirstObject(t *testing.T) {
	// A first frame that is not a JSON object decides nothing: it is
	// refused as an envelope, and the next frame decides.
	in := "data: [1]\n\n" + v1(1, delta("a"))
	envs, _, refusals, _ := decodeAll(t, in, streamOptions{keepGoing: true})
	assert.Equal(t, []violation{{1, refusal.CodeInvalidEnvelope}}, refusals)
	assert.Len(t, envs, 1)
}

func TestVersionOf(t *testing.T) {
	cases := map[string]string{
		`{"schemaVersion":1}`:            fromV1,
		`{"schemaVersion":"one"}`:        fromV1,
		`{"type":"token"}`:               fromLegacy,
		`{"SchemaVersion":1}`:            fromLegacy,
		`{"x":{"schemaVersion":1}}`:      fromLegacy,
		`{}`:                             fromLegacy,
		`null`:                           "",
		`[{"schemaVersion":1}]`:          "",
		`{"schemaVersion":1`:             "",
		`{"schemaVersion":1} {"x":2}`:    "",
		"\xff":                           "",
		`"{\"schemaVersion\":1}"`:        "",
		`{"type":"token","content":"x"}`: fromLegacy,
	}
	for in, want := range cases {
		got, ok := versionOf([]byte(in))
		assert.Equal(t, want, got, "%s", in)
		assert.Equal(t, want != "", ok, "%s", in)
	}
}

func TestViolationLineIsOneLine(t *testing.T) {
	e := &refusal.Error{Code: refusal.CodeInvalidEvent, Path: "/text", Message: "bad\nvalue\r\x00\xff", Err: fmt.Errorf("cause")}
	assert.Equal(t, "chatwire: frame 7: invalid-event: bad?value???: cause (at /text)\n", violationLine(7, e))
	assert.Equal(t, "chatwire: frame 1: frame-too-large: \n", violationLine(1, &refusal.Error{Code: refusal.CodeFrameTooLarge}))
}

func TestStreamOptionsCheck(t *testing.T) {
	good := streamOptions{from: fromAuto, dialect: "scout", maxFrame: 1}
	require.NoError(t, good.check())
	for name, mutate := range map[string]func(*streamOptions){
		"from":              func(o *streamOptions) { o.from = "v2" },
		"dialect":           func(o *streamOptions) { o.dialect = "klingon" },
		"max-frame zero":    func(o *streamOptions) { o.maxFrame = 0 },
		"max-frame":         func(o *streamOptions) { o.maxFrame = -5 },
		"long conversation": func(o *streamOptions) { o.conversation = strings.Repeat("c", 257) },
		"turn not UTF-8":    func(o *streamOptions) { o.turn = "\xff" },
	} {
		o := good
		mutate(&o)
		assert.Error(t, o.check(), name)
	}
}
