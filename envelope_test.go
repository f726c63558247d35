package chatprotocol

import (
	"strings"
	"testing"

	"github.com/Papercusp/chat-protocol-go/cards"
	"github.com/Papercusp/chat-protocol-go/refusal"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Papercusp/chat-protocol-go/blocks"
)

// frame builds an envelope frame around an event object.
func frame(event string) string {
	return `{"schemaVersion":1,"conversationId":"c-1","turnId":"t-1","eventId":"e-1","seq":1,"event":` + event + `}`
}

func TestParseEnvelopeAcceptsAndReencodesCanonically(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"delta", frame(`{"type":"delta","text":"Hel"}`), frame(`{"type":"delta","text":"Hel"}`)},
		{"members in any order", `{"event":{"text":"Hel","type":"delta"},"seq":1,"eventId":"e-1","turnId":"t-1","conversationId":"c-1","schemaVersion":1}`, frame(`{"type":"delta","text":"Hel"}`)},
		{"whitespace", " {\n\"schemaVersion\" : 1 , \"conversationId\":\"c-1\",\"turnId\":\"t-1\",\"eventId\":\"e-1\",\"seq\":1,\"event\":{ \"type\" : \"delta\" , \"text\":\"Hel\"}}\r\n", frame(`{"type":"delta","text":"Hel"}`)},
		{"seq 1.0 is 1", strings.Replace(frame(`{"type":"delta","text":""}`), `"seq":1`, `"seq":1.0`, 1), frame(`{"type":"delta","text":""}`)},
		{"seq 2^53-1", strings.Replace(frame(`{"type":"delta","text":""}`), `"seq":1`, `"seq":9007199254740991`, 1), strings.Replace(frame(`{"type":"delta","text":""}`), `"seq":1`, `"seq":9007199254740991`, 1)},
		{"escaped strings", frame(`{"type":"delta","text":"a\u00e9\"\n\ud83d\ude00"}`), frame(`{"type":"delta","text":"aé\"\n😀"}`)},
		{"escaped member name", frame(`{"type":"delta","t\u0065xt":"x"}`), frame(`{"type":"delta","text":"x"}`)},
		{"at", strings.Replace(frame(`{"type":"delta","text":""}`), `"event"`, `"at":"2025-11-30T10:00:00.5+01:00","event"`, 1), `{"schemaVersion":1,"conversationId":"c-1","turnId":"t-1","eventId":"e-1","seq":1,"event":{"type":"delta","text":""},"at":"2025-11-30T10:00:00.5+01:00"}`},
		{"unknown members kept", `{"schemaVersion":1,"x":[1, {"y":null}],"conversationId":"c-1","turnId":"t-1","eventId":"e-1","seq":1,"event":{"type":"delta","text":"","z":"\u00e9"}}`,
			`{"schemaVersion":1,"conversationId":"c-1","turnId":"t-1","eventId":"e-1","seq":1,"event":{"type":"delta","text":"","z":"\u00e9"},"x":[1,{"y":null}]}`},
		{"type\\u0000 is another member", frame(`{"type":"delta","text":"","type\u0000":1}`), frame(`{"type":"delta","text":"","type\u0000":1}`)},
		{"typeſ is another member", frame(`{"type":"delta","text":"","typeſ":1}`), frame(`{"type":"delta","text":"","typeſ":1}`)},
		{"tool_call", frame(`{"type":"tool_call","callId":"call-1","name":"search","input":{"q":"refund"}}`), frame(`{"type":"tool_call","callId":"call-1","name":"search","input":{"q":"refund"}}`)},
		{"tool_result with blocks", frame(`{"type":"tool_result","callId":"call-1","status":"error","output":"boom","blocks":[{"kind":"ask","ask":{"question":"Retry?"}}]}`),
			frame(`{"type":"tool_result","callId":"call-1","status":"error","output":"boom","blocks":[{"kind":"ask","ask":{"question":"Retry?"}}]}`)},
		{"lifecycle", frame(`{"type":"lifecycle","status":"needs-reconciliation","reason":"ack lost","usage":{"costUsd":0.0041,"totalTokens":812}}`),
			frame(`{"type":"lifecycle","status":"needs-reconciliation","reason":"ack lost","usage":{"totalTokens":812,"costUsd":0.0041}}`)},
		{"error", frame(`{"type":"error","code":"rate-limited","message":"slow down","retryable":true,"retryAfterMs":1500}`), frame(`{"type":"error","code":"rate-limited","message":"slow down","retryable":true,"retryAfterMs":1500}`)},
		{"state", frame(`{"type":"state","version":3,"snapshot":{"inbox": 2}}`), frame(`{"type":"state","version":3,"snapshot":{"inbox":2}}`)},
		{"navigate", frame(`{"type":"navigate","href":"/products/A-100"}`), frame(`{"type":"navigate","href":"/products/A-100"}`)},
		{"card_closed", frame(`{"type":"card_closed","correlationId":"corr-1","outcome":"submitted"}`), frame(`{"type":"card_closed","correlationId":"corr-1","outcome":"submitted"}`)},
		{"provenance", frame(`{"type":"provenance","provider":"anthropic"}`), frame(`{"type":"provenance","provider":"anthropic"}`)},
		{"session", frame(`{"type":"session","sessionId":"s-1"}`), frame(`{"type":"session","sessionId":"s-1"}`)},
		{"result", frame(`{"type":"result","blocks":[]}`), frame(`{"type":"result","blocks":[]}`)},
		{"at lowercase, leap second", strings.Replace(frame(`{"type":"delta","text":""}`), `"event"`, `"at":"2016-12-31t23:59:60z","event"`, 1),
			`{"schemaVersion":1,"conversationId":"c-1","turnId":"t-1","eventId":"e-1","seq":1,"event":{"type":"delta","text":""},"at":"2016-12-31t23:59:60z"}`},
		{"card integers by value", frame(`{"type":"card","card":{"correlationId":"k","createdAt":1764500001000.0,"prompt":"p","timeoutMs":6e5}}`),
			frame(`{"type":"card","card":{"correlationId":"k","createdAt":1764500001000.0,"prompt":"p","timeoutMs":6e5}}`)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env, err := ParseEnvelope([]byte(tt.in))
			require.NoError(t, err)
			got, err := env.MarshalJSON()
			require.NoError(t, err)
			assert.Equal(t, tt.want, string(got))
			again, err := ParseEnvelope(got)
			require.NoError(t, err)
			assert.Equal(t, env.Seq, again.Seq)
			assert.Equal(t, env.Event.EventType(), again.Event.EventType())
		})
	}
}

func TestParseEnvelopeFields(t *testing.T) {
	env, err := ParseEnvelope([]byte(`{"schemaVersion":1,"conversationId":"c-5","turnId":"t-2","eventId":"e-4","seq":4,"event":{"type":"tool_call","callId":"call-1","name":"search_docs","input":{"q":"refund policy"}}}`))
	require.NoError(t, err)
	assert.Equal(t, "c-5", env.ConversationID)
	assert.Equal(t, "t-2", env.TurnID)
	assert.Equal(t, "e-4", env.EventID)
	assert.Equal(t, int64(4), env.Seq)
	call, ok := env.Event.(*ToolCallEvent)
	require.True(t, ok)
	assert.Equal(t, "call-1", call.CallID)
	assert.Equal(t, "search_docs", call.Name)
	assert.JSONEq(t, `{"q":"refund policy"}`, string(call.Input))
}

func TestParseEnvelopeDoesNotRetainInput(t *testing.T) {
	data := []byte(frame(`{"type":"tool_call","callId":"call-1","name":"n","input":{"q":1}}`))
	env, err := ParseEnvelope(data)
	require.NoError(t, err)
	for i := range data {
		data[i] = 'x'
	}
	assert.Equal(t, "c-1", env.ConversationID)
	assert.Equal(t, "call-1", env.Event.(*ToolCallEvent).CallID)
	assert.JSONEq(t, `{"q":1}`, string(env.Event.(*ToolCallEvent).Input))
}

// hugeFraction is 10^1000000 × 10^-10000000, a fraction whose mantissa
// has a million zeros for a reader that saturates exponents too early to
// cancel into 1.
var hugeFraction = "1" + strings.Repeat("0", 1_000_000) + "e-10000000"

func TestParseEnvelopeRefusals(t *testing.T) {
	delta := `{"type":"delta","text":"x"}`
	tests := []struct {
		name, in string
		code     refusal.Code
		path     string
	}{
		{"not an object", `[1]`, refusal.CodeInvalidEnvelope, ""},
		{"not JSON", `{"schemaVersion":1,`, refusal.CodeInvalidEnvelope, ""},
		{"empty", ``, refusal.CodeInvalidEnvelope, ""},
		{"two values", frame(delta) + frame(delta), refusal.CodeInvalidEnvelope, ""},
		{"missing schemaVersion", `{"conversationId":"c-1","event":{}}`, refusal.CodeUnsupportedVersion, "/schemaVersion"},
		{"schemaVersion 2", strings.Replace(frame(delta), `"schemaVersion":1`, `"schemaVersion":2`, 1), refusal.CodeUnsupportedVersion, "/schemaVersion"},
		{"schemaVersion string", strings.Replace(frame(delta), `"schemaVersion":1`, `"schemaVersion":"1"`, 1), refusal.CodeUnsupportedVersion, "/schemaVersion"},
		{"schemaVersion 0.5", strings.Replace(frame(delta), `"schemaVersion":1`, `"schemaVersion":0.5`, 1), refusal.CodeUnsupportedVersion, "/schemaVersion"},
		{"schemaVersion last and 2, broken event first", `{"event":{"type":"nope"},"schemaVersion":2}`, refusal.CodeUnsupportedVersion, "/schemaVersion"},
		{"SchemaVersion only", `{"SchemaVersion":1,"conversationId":"c-1"}`, refusal.CodeUnsupportedVersion, "/schemaVersion"},
		{"case variant of schemaVersion", strings.Replace(frame(delta), `"conversationId"`, `"SchemaVersion":1,"conversationId"`, 1), refusal.CodeInvalidEnvelope, "/SchemaVersion"},
		{"duplicate seq", strings.Replace(frame(delta), `"seq":1`, `"seq":1,"seq":2`, 1), refusal.CodeInvalidEnvelope, "/seq"},
		{"duplicate escaped name", frame(`{"type":"delta","text":"a","t\u0065xt":"b"}`), refusal.CodeInvalidEnvelope, "/event/text"},
		{"case variant TYPE", frame(`{"type":"delta","text":"a","TYPE":"error"}`), refusal.CodeInvalidEnvelope, "/event/TYPE"},
		{"fold variant ſeq", strings.Replace(frame(delta), `"eventId"`, `"ſeq":3,"eventId"`, 1), refusal.CodeInvalidEnvelope, "/ſeq"},
		{"invalid UTF-8", frame("{\"type\":\"delta\",\"text\":\"\xff\"}"), refusal.CodeInvalidEnvelope, "/event/text"},
		{"seq 0", strings.Replace(frame(delta), `"seq":1`, `"seq":0`, 1), refusal.CodeInvalidEnvelope, "/seq"},
		{"seq 2^53", strings.Replace(frame(delta), `"seq":1`, `"seq":9007199254740992`, 1), refusal.CodeInvalidEnvelope, "/seq"},
		{"seq 1.5", strings.Replace(frame(delta), `"seq":1`, `"seq":1.5`, 1), refusal.CodeInvalidEnvelope, "/seq"},
		{"seq string", strings.Replace(frame(delta), `"seq":1`, `"seq":"1"`, 1), refusal.CodeInvalidEnvelope, "/seq"},
		{"seq negative", strings.Replace(frame(delta), `"seq":1`, `"seq":-1`, 1), refusal.CodeInvalidEnvelope, "/seq"},
		{"seq huge", strings.Replace(frame(delta), `"seq":1`, `"seq":1e400`, 1), refusal.CodeInvalidEnvelope, "/seq"},
		{"seq fraction below float64 precision", strings.Replace(frame(delta), `"seq":1`, `"seq":1.0000000000000001`, 1), refusal.CodeInvalidEnvelope, "/seq"},
		{"seq whose long exponent outruns its zeros", strings.Replace(frame(delta), `"seq":1`, `"seq":`+hugeFraction, 1), refusal.CodeInvalidEnvelope, "/seq"},
		{"schemaVersion whose long exponent outruns its zeros", strings.Replace(frame(delta), `"schemaVersion":1`, `"schemaVersion":`+hugeFraction, 1), refusal.CodeUnsupportedVersion, "/schemaVersion"},
		{"empty turnId", strings.Replace(frame(delta), `"turnId":"t-1"`, `"turnId":""`, 1), refusal.CodeInvalidEnvelope, "/turnId"},
		{"long eventId", strings.Replace(frame(delta), `"eventId":"e-1"`, `"eventId":"`+strings.Repeat("e", 257)+`"`, 1), refusal.CodeInvalidEnvelope, "/eventId"},
		{"numeric conversationId", strings.Replace(frame(delta), `"conversationId":"c-1"`, `"conversationId":1`, 1), refusal.CodeInvalidEnvelope, "/conversationId"},
		{"missing eventId", strings.Replace(frame(delta), `"eventId":"e-1",`, ``, 1), refusal.CodeInvalidEnvelope, "/eventId"},
		{"missing event", `{"schemaVersion":1,"conversationId":"c-1","turnId":"t-1","eventId":"e-1","seq":1}`, refusal.CodeInvalidEnvelope, "/event"},
		{"event not an object", frame(`"delta"`), refusal.CodeInvalidEnvelope, "/event"},
		{"bad at", strings.Replace(frame(delta), `"seq":1`, `"seq":1,"at":"yesterday"`, 1), refusal.CodeInvalidEnvelope, "/at"},
		{"at with a comma fraction", strings.Replace(frame(delta), `"seq":1`, `"seq":1,"at":"2025-11-30T10:00:00,5Z"`, 1), refusal.CodeInvalidEnvelope, "/at"},
		{"at offset beyond 23:59", strings.Replace(frame(delta), `"seq":1`, `"seq":1,"at":"2025-11-30T10:00:00+24:00"`, 1), refusal.CodeInvalidEnvelope, "/at"},
		{"card date bound with a comma fraction", frame(`{"type":"card","card":{"correlationId":"k","createdAt":1,"prompt":"p","presentation":{"kind":"date","min":"2025-11-30T10:00:00,5Z"}}}`), refusal.CodeInvalidCard, "/event/card/presentation/min"},
		{"event without type", frame(`{"text":"x"}`), refusal.CodeInvalidEvent, "/event/type"},
		{"unknown type", frame(`{"type":"products","items":[]}`), refusal.CodeUnsupportedEvent, "/event/type"},
		{"legacy type", frame(`{"type":"token","content":"x"}`), refusal.CodeUnsupportedEvent, "/event/type"},
		{"delta without text", frame(`{"type":"delta"}`), refusal.CodeInvalidEvent, "/event/text"},
		{"delta text null", frame(`{"type":"delta","text":null}`), refusal.CodeInvalidEvent, "/event/text"},
		{"tool_call without callId", frame(`{"type":"tool_call","name":"n"}`), refusal.CodeMissingCallID, "/event/callId"},
		{"tool_call empty callId", frame(`{"type":"tool_call","callId":"","name":"n"}`), refusal.CodeMissingCallID, "/event/callId"},
		{"tool_call without name", frame(`{"type":"tool_call","callId":"c"}`), refusal.CodeInvalidEvent, "/event/name"},
		{"tool_result without callId", frame(`{"type":"tool_result","status":"ok"}`), refusal.CodeMissingCallID, "/event/callId"},
		{"tool_result unknown status", frame(`{"type":"tool_result","callId":"c","status":"done"}`), refusal.CodeUnknownResultStatus, "/event/status"},
		{"tool_result without status", frame(`{"type":"tool_result","callId":"c"}`), refusal.CodeUnknownResultStatus, "/event/status"},
		{"error without retryable", frame(`{"type":"error","code":"x","message":"m"}`), refusal.CodeInvalidEvent, "/event/retryable"},
		{"error retryable string", frame(`{"type":"error","code":"x","message":"m","retryable":"false"}`), refusal.CodeInvalidEvent, "/event/retryable"},
		{"lifecycle unknown status", frame(`{"type":"lifecycle","status":"paused"}`), refusal.CodeInvalidEvent, "/event/status"},
		{"lifecycle negative tokens", frame(`{"type":"lifecycle","status":"completed","usage":{"totalTokens":-1}}`), refusal.CodeInvalidEvent, "/event/usage/totalTokens"},
		{"result without blocks", frame(`{"type":"result"}`), refusal.CodeInvalidEvent, "/event/blocks"},
		{"result block unknown kind", frame(`{"type":"result","blocks":[{"kind":"html","html":"<b>"}]}`), refusal.CodeInvalidEvent, "/event/blocks/0/kind"},
		{"source without ref", frame(`{"type":"result","blocks":[{"kind":"text","text":"t","sources":[{"ref":"a"},{"label":"b"}]}]}`), refusal.CodeInvalidEvent, "/event/blocks/0/sources/1/ref"},
		{"report without plans", frame(`{"type":"result","blocks":[{"kind":"report","report":{"plans":[]}}]}`), refusal.CodeInvalidEvent, "/event/blocks/0/report/plans"},
		{"text block with report", frame(`{"type":"result","blocks":[{"kind":"text","text":"t","report":{"plans":[{"title":"p"}]}}]}`), refusal.CodeInvalidEvent, "/event/blocks/0"},
		{"capabilities incomplete", frame(`{"type":"capabilities","capabilities":{"connectionReplay":true}}`), refusal.CodeInvalidEvent, "/event/capabilities/persistedHistory"},
		{"card case variant inside", frame(`{"type":"card","card":{"correlationId":"k","createdAt":1,"prompt":"p","PROMPT":"q"}}`), refusal.CodeInvalidEnvelope, "/event/card/PROMPT"},
		{"card case variant alone", frame(`{"type":"card","card":{"correlationId":"k","createdAt":1,"prompt":"p","Presentation":{"kind":"radio","options":[{"id":"a","label":"A"}]}}}`), refusal.CodeInvalidEnvelope, "/event/card/Presentation"},
		{"ask block case variant alone", frame(`{"type":"result","blocks":[{"kind":"ask","ask":{"question":"q","Refs":["r"]}}]}`), refusal.CodeInvalidEnvelope, "/event/blocks/0/ask/Refs"},
		{"card createdAt fraction", frame(`{"type":"card","card":{"correlationId":"k","createdAt":1.5,"prompt":"p"}}`), refusal.CodeInvalidCard, "/event/card/createdAt"},
		{"card bound beyond float64", frame(`{"type":"card","card":{"correlationId":"k","createdAt":1,"prompt":"p","presentation":{"kind":"slider","min":1e400}}}`), refusal.CodeInvalidCard, "/event/card/presentation/min"},
		{"card without prompt", frame(`{"type":"card","card":{"correlationId":"k","createdAt":1}}`), refusal.CodeInvalidCard, "/event/card/prompt"},
		{"card prompt number", frame(`{"type":"card","card":{"correlationId":"k","createdAt":1,"prompt":5}}`), refusal.CodeInvalidCard, "/event/card/prompt"},
		{"state without snapshot", frame(`{"type":"state","version":1}`), refusal.CodeInvalidEvent, "/event/snapshot"},
		{"navigate empty", frame(`{"type":"navigate","href":""}`), refusal.CodeInvalidEvent, "/event/href"},
		{"type not first, unknown", frame(`{"text":"x","type":"nope"}`), refusal.CodeUnsupportedEvent, "/event/type"},
		{"type not first, bad member", frame(`{"text":5,"type":"delta"}`), refusal.CodeInvalidEvent, "/event/text"},
		{"type not first, case variant", frame(`{"Text":"x","type":"delta","text":"y"}`), refusal.CodeInvalidEnvelope, "/event/Text"},
		{"type escaped, duplicate inside", frame(`{"t\u0079pe":"delta","text":"x","text":"y"}`), refusal.CodeInvalidEnvelope, "/event/text"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseEnvelope([]byte(tt.in))
			require.Error(t, err)
			e, ok := errorsAsError(err)
			require.True(t, ok, "%v is not an *Error", err)
			assert.Equal(t, tt.code, e.Code, "%v", err)
			assert.Equal(t, tt.path, e.Path, "%v", err)
		})
	}
}

func TestEnvelopeParserLimits(t *testing.T) {
	deep := frame(`{"type":"tool_call","callId":"c","name":"n","input":` + strings.Repeat("[", 62) + strings.Repeat("]", 62) + `}`)
	_, err := ParseEnvelope([]byte(deep))
	require.NoError(t, err, "64 levels are allowed by default")
	deeper := frame(`{"type":"tool_call","callId":"c","name":"n","input":` + strings.Repeat("[", 63) + strings.Repeat("]", 63) + `}`)
	_, err = ParseEnvelope([]byte(deeper))
	require.ErrorIs(t, err, refusal.ErrInvalidEnvelope)
	assert.Equal(t, "/event/input", err.(*refusal.Error).Path)

	_, err = NewEnvelopeParser(&ParserOptions{MaxDepth: -1}).Parse([]byte(deeper))
	require.NoError(t, err)
	_, err = NewEnvelopeParser(&ParserOptions{MaxDepth: 2}).Parse([]byte(frame(`{"type":"lifecycle","status":"completed","usage":{}}`)))
	require.ErrorIs(t, err, refusal.ErrInvalidEnvelope)

	big := []byte(frame(`{"type":"delta","text":"` + strings.Repeat("a", DefaultMaxFrameBytes) + `"}`))
	_, err = ParseEnvelope(big)
	require.ErrorIs(t, err, refusal.ErrFrameTooLarge)
	_, err = NewEnvelopeParser(&ParserOptions{MaxFrameBytes: -1}).Parse(big)
	require.NoError(t, err)
	small := []byte(frame(`{"type":"delta","text":"hello"}`))
	_, err = NewEnvelopeParser(&ParserOptions{MaxFrameBytes: len(small) - 1}).Parse(small)
	require.ErrorIs(t, err, refusal.ErrFrameTooLarge)
	_, err = NewEnvelopeParser(&ParserOptions{MaxFrameBytes: len(small)}).Parse(small)
	require.NoError(t, err)
}

func TestEnvelopeParserRegistry(t *testing.T) {
	reg, err := NewRegistry(map[string]Channel{"products": ChannelEvent, "highlight": ChannelTransient})
	require.NoError(t, err)
	p := NewEnvelopeParser(&ParserOptions{Registry: reg})
	in := frame(`{"type":"products","products":[{"sku":"A-100"}]}`)
	env, err := p.Parse([]byte(in))
	require.NoError(t, err)
	app, ok := env.Event.(*AppEvent)
	require.True(t, ok)
	assert.Equal(t, "products", app.Type)
	assert.JSONEq(t, `{"type":"products","products":[{"sku":"A-100"}]}`, string(app.Raw))
	ch, ok := env.Channel(reg)
	require.True(t, ok)
	assert.Equal(t, ChannelEvent, ch)
	out, err := env.MarshalJSON()
	require.NoError(t, err)
	assert.Equal(t, in, string(out))

	env, err = p.Parse([]byte(frame(`{"items":[],"type":"highlight"}`)))
	require.NoError(t, err)
	assert.Equal(t, "highlight", env.Event.EventType())

	_, err = p.Parse([]byte(frame(`{"type":"products","TYPE":"delta"}`)))
	require.ErrorIs(t, err, refusal.ErrInvalidEnvelope)
	_, err = p.Parse([]byte(frame(`{"type":"cart_mutate"}`)))
	require.ErrorIs(t, err, refusal.ErrUnsupportedEvent)
	_, err = ParseEnvelope([]byte(in))
	require.ErrorIs(t, err, refusal.ErrUnsupportedEvent, "the default parser registers nothing")
}

func TestAppendJSONRefusesWhatParseRefuses(t *testing.T) {
	ok := ChatEventEnvelope{ConversationID: "c", TurnID: "t", EventID: "e", Seq: 1, Event: &DeltaEvent{Text: "x"}}
	tests := []struct {
		name   string
		mutate func(*ChatEventEnvelope)
		code   refusal.Code
		path   string
	}{
		{"empty conversation", func(e *ChatEventEnvelope) { e.ConversationID = "" }, refusal.CodeInvalidEnvelope, "/conversationId"},
		{"seq 0", func(e *ChatEventEnvelope) { e.Seq = 0 }, refusal.CodeInvalidEnvelope, "/seq"},
		{"seq beyond 2^53-1", func(e *ChatEventEnvelope) { e.Seq = MaxSeq + 1 }, refusal.CodeInvalidEnvelope, "/seq"},
		{"nil event", func(e *ChatEventEnvelope) { e.Event = nil }, refusal.CodeInvalidEnvelope, "/event"},
		{"typed nil event", func(e *ChatEventEnvelope) { e.Event = (*DeltaEvent)(nil) }, refusal.CodeInvalidEnvelope, "/event"},
		{"bad at", func(e *ChatEventEnvelope) { e.At = "noon" }, refusal.CodeInvalidEnvelope, "/at"},
		{"invalid UTF-8 text", func(e *ChatEventEnvelope) { e.Event = &DeltaEvent{Text: "\xff"} }, refusal.CodeInvalidEvent, "/event/text"},
		{"tool call without id", func(e *ChatEventEnvelope) { e.Event = &ToolCallEvent{Name: "n"} }, refusal.CodeMissingCallID, "/event/callId"},
		{"tool result status", func(e *ChatEventEnvelope) { e.Event = &ToolResultEvent{CallID: "c", Status: "done"} }, refusal.CodeUnknownResultStatus, "/event/status"},
		{"card prompt not UTF-8", func(e *ChatEventEnvelope) {
			e.Event = &CardEvent{Card: cards.OpenCardSnapshot{CorrelationID: "k", CreatedAt: 1, CardSpec: cards.CardSpec{Prompt: "\xed\xa0\x80"}}}
		}, refusal.CodeInvalidCard, "/event/card/prompt"},
		{"report title not UTF-8", func(e *ChatEventEnvelope) {
			e.Event = &ResultEvent{Blocks: []ResultBlock{{Kind: ResultBlockText, Text: "t"}, {Kind: ResultBlockReport, Report: &blocks.ReportBlock{Plans: []blocks.ReportPlan{{Title: "\xff"}}}}}}
		}, refusal.CodeInvalidEvent, "/event/blocks/1/report/plans/0/title"},
		{"ask question not UTF-8", func(e *ChatEventEnvelope) {
			e.Event = &ToolResultEvent{CallID: "c", Status: ToolResultOK, Blocks: []ResultBlock{{Kind: ResultBlockAsk, Ask: &blocks.AskBlock{Question: "\xed\xb0\x80"}}}}
		}, refusal.CodeInvalidEvent, "/event/blocks/0/ask/question"},
		{"raw input not JSON", func(e *ChatEventEnvelope) {
			e.Event = &ToolCallEvent{CallID: "c", Name: "n", Input: []byte(`{"a":`)}
		}, refusal.CodeInvalidEvent, "/event/input"},
		{"kept member shadows", func(e *ChatEventEnvelope) { e.Unknown = []Member{{Name: "Seq", Value: []byte(`2`)}} }, refusal.CodeInvalidEnvelope, "/Seq"},
		{"kept member not JSON", func(e *ChatEventEnvelope) { e.Unknown = []Member{{Name: "x", Value: []byte(`nope`)}} }, refusal.CodeInvalidEnvelope, "/x"},
		{"app event of a core type", func(e *ChatEventEnvelope) { e.Event = &AppEvent{Type: "delta", Raw: []byte(`{"type":"delta"}`)} }, refusal.CodeUnsupportedEvent, "/event/type"},
		{"app event raw of another type", func(e *ChatEventEnvelope) { e.Event = &AppEvent{Type: "a", Raw: []byte(`{"type":"b"}`)} }, refusal.CodeInvalidEvent, "/event"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := ok
			tt.mutate(&env)
			dst := []byte("prefix")
			out, err := env.AppendJSON(dst)
			require.Error(t, err)
			assert.Equal(t, "prefix", string(out))
			assert.Equal(t, tt.code, refusal.CodeOf(err), "%v", err)
			assert.Equal(t, tt.path, err.(*refusal.Error).Path)
			verr := env.Validate()
			require.Error(t, verr, "Validate refuses what AppendJSON refuses")
			assert.Equal(t, tt.code, refusal.CodeOf(verr), "%v", verr)
			assert.Equal(t, tt.path, verr.(*refusal.Error).Path)
		})
	}
	require.NoError(t, ok.Validate())
}

func TestValidateAllocatesNothingForADelta(t *testing.T) {
	env := ChatEventEnvelope{ConversationID: "c", TurnID: "t", EventID: "e", Seq: 1, Event: &DeltaEvent{Text: "naïve \"text\"\n"}, At: "2026-01-02T03:04:05Z"}
	assert.Zero(t, testing.AllocsPerRun(100, func() {
		if err := env.Validate(); err != nil {
			t.Fatal(err)
		}
	}))
}

func TestUnmarshalJSONUsesParseEnvelope(t *testing.T) {
	var env ChatEventEnvelope
	require.NoError(t, env.UnmarshalJSON([]byte(frame(`{"type":"delta","text":"x"}`))))
	assert.Equal(t, "x", env.Event.(*DeltaEvent).Text)
	err := env.UnmarshalJSON([]byte(strings.Replace(frame(`{"type":"delta","text":"x"}`), `"seq":1`, `"seq":0`, 1)))
	require.ErrorIs(t, err, refusal.ErrInvalidEnvelope)
}

// TestZeroEnvelopeParserRefusesEveryFrame pins what the EnvelopeParser
// documentation says of its zero value: only NewEnvelopeParser makes a
// usable parser.
func TestZeroEnvelopeParserRefusesEveryFrame(t *testing.T) {
	data := []byte(frame(`{"type":"delta","text":"x"}`))
	_, err := new(EnvelopeParser).Parse(data)
	require.ErrorIs(t, err, refusal.ErrFrameTooLarge)
	_, err = NewEnvelopeParser(nil).Parse(data)
	require.NoError(t, err)
}
