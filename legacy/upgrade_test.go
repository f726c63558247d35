package legacy

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	chatprotocol "github.com/Papercusp/chat-protocol-go"
	"github.com/Papercusp/chat-protocol-go/internal/testkit/benchcpu"
	"github.com/Papercusp/chat-protocol-go/refusal"
)

// products is a registry with one product type of each channel.
func products(t require.TestingT) *chatprotocol.Registry {
	reg, err := chatprotocol.NewRegistry(map[string]chatprotocol.Channel{
		"products": chatprotocol.ChannelEvent, "cart_mutate": chatprotocol.ChannelState, "open_drawer": chatprotocol.ChannelTransient,
	})
	require.NoError(t, err)
	return reg
}

// upgrade decodes frame in dialect d and upgrades it with h.
func upgrade(t *testing.T, frame string, d Dialect, h Host) ([]chatprotocol.ChatEventEnvelope, error) {
	t.Helper()
	f, err := DecodeLegacyChatFrame([]byte(frame), d)
	require.NoError(t, err, frame)
	return UpgradeLegacyChatFrame(t.Context(), f, h)
}

// marshalAll returns the JSON of envelopes, one line each.
func marshalAll(t *testing.T, envs []chatprotocol.ChatEventEnvelope) string {
	t.Helper()
	var lines []string
	for _, env := range envs {
		b, err := env.MarshalJSON()
		require.NoError(t, err)
		lines = append(lines, string(b))
	}
	return strings.Join(lines, "\n")
}

const head = `{"schemaVersion":1,"conversationId":"c-1","turnId":"t-1","eventId":"e-1","seq":1,"event":`

func TestUpgradeTable(t *testing.T) {
	tests := []struct {
		name  string
		d     Dialect
		frame string
		want  string // the envelopes, one per line
	}{
		{"session", Scout, `{"type":"session","sessionId":"s-7f3a"}`, head + `{"type":"session","sessionId":"s-7f3a"}}`},
		{"token to delta", Scout, `{"type":"token","content":"Hel"}`, head + `{"type":"delta","text":"Hel"}}`},
		{"empty token", Scout, `{"type":"token","content":""}`, head + `{"type":"delta","text":""}}`},
		{"tool_start to tool_call with host id", Scout, `{"type":"tool_start","tool":"search_products"}`, head + `{"type":"tool_call","callId":"t-1-call-1","name":"search_products"}}`},
		{"tool_start keeps its own id", Scout, `{"type":"tool_start","tool":"search_products","callId":"call-9"}`, head + `{"type":"tool_call","callId":"call-9","name":"search_products"}}`},
		{"card", Scout, `{"type":"card","card":{"correlationId":"k","createdAt":5,"prompt":"Sure?","allowDecline":true}}`, head + `{"type":"card","card":{"correlationId":"k","createdAt":5,"prompt":"Sure?","allowDecline":true}}}`},
		{"card_closed", Scout, `{"type":"card_closed","correlationId":"k"}`, head + `{"type":"card_closed","correlationId":"k"}}`},
		{"state", Scout, `{"type":"state","version":3,"snapshot":{"inbox":2}}`, head + `{"type":"state","version":3,"snapshot":{"inbox":2}}}`},
		{"done to completed", Scout, `{"type":"done"}`, head + `{"type":"lifecycle","status":"completed"}}`},
		{"done keeps usage", Scout, `{"type":"done","usage":{"totalTokens":812,"costUsd":0.0041}}`, head + `{"type":"lifecycle","status":"completed","usage":{"totalTokens":812,"costUsd":0.0041}}}`},
		{"error to error and failed", Scout, `{"type":"error","message":"upstream timed out"}`,
			head + `{"type":"error","code":"legacy-error","message":"upstream timed out","retryable":false}}` + "\n" +
				`{"schemaVersion":1,"conversationId":"c-1","turnId":"t-1","eventId":"e-2","seq":2,"event":{"type":"lifecycle","status":"failed"}}`},
		{"navigate", Scout, `{"type":"navigate","href":"/products/A-100?size=43"}`, head + `{"type":"navigate","href":"/products/A-100?size=43"}}`},
		{"registered product", Scout, `{"type":"products","products":[{"sku":"A-100"}]}`, head + `{"type":"products","products":[{"sku":"A-100"}]}}`},
		{"papercusp delta", Papercusp, `{"type":"delta","text":"Hel"}`, head + `{"type":"delta","text":"Hel"}}`},
		{"papercusp tool_call", Papercusp, `{"type":"tool_call","name":"search_docs","input":{"q":"refund policy"}}`, head + `{"type":"tool_call","callId":"t-1-call-1","name":"search_docs","input":{"q":"refund policy"}}}`},
		{"tool_start keeps an own id of any value", Scout, `{"type":"tool_start","tool":"search_products","callId":"\u0000unset"}`, head + `{"type":"tool_call","callId":"\u0000unset","name":"search_products"}}`},
		{"papercusp tool_call keeps an own id of any value", Papercusp, `{"type":"tool_call","callId":"host-call-id","name":"n"}`, head + `{"type":"tool_call","callId":"host-call-id","name":"n"}}`},
		{"papercusp tool_result", Papercusp, `{"type":"tool_result","callId":"call-1","status":"error","output":"boom"}`, head + `{"type":"tool_result","callId":"call-1","status":"error","output":"boom"}}`},
		{"unknown members stay behind", Scout, `{"type":"token","content":"Hel","Content":"\ud800","x":{"y":1e400}}`, head + `{"type":"delta","text":"Hel"}}`},
		{"unknown card members stay behind", Scout, `{"type":"card","card":{"correlationId":"k","createdAt":5,"prompt":"Sure?","theme":"dark","presentation":{"kind":"radio","options":[{"id":"a","label":"A","sku":1}],"layout":2}},"x":1}`,
			head + `{"type":"card","card":{"correlationId":"k","createdAt":5,"prompt":"Sure?","presentation":{"kind":"radio","options":[{"id":"a","label":"A"}]}}}}`},
		{"unknown usage members stay behind", Scout, `{"type":"done","usage":{"totalTokens":8,"TotalTokens":"x","model":"m"}}`, head + `{"type":"lifecycle","status":"completed","usage":{"totalTokens":8}}}`},
		{"papercusp error", Papercusp, `{"type":"error","message":"m"}`,
			head + `{"type":"error","code":"legacy-error","message":"m","retryable":false}}` + "\n" +
				`{"schemaVersion":1,"conversationId":"c-1","turnId":"t-1","eventId":"e-2","seq":2,"event":{"type":"lifecycle","status":"failed"}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := NewStreamHost(&StreamHostOptions{ConversationID: "c-1", TurnID: "t-1", Registry: products(t)})
			envs, err := upgrade(t, tt.frame, tt.d, h)
			require.NoError(t, err)
			assert.Equal(t, tt.want, marshalAll(t, envs))
			if _, result := envs[0].Event.(*chatprotocol.ToolResultEvent); result {
				return // the reducer needs its call first
			}
			var s chatprotocol.ChatStateV1
			for _, env := range envs {
				require.NoError(t, s.Apply(env), "every upgraded envelope is one the reducer accepts")
			}
		})
	}
}

func TestUpgradeAppEventIsTheFrame(t *testing.T) {
	h := NewStreamHost(&StreamHostOptions{ConversationID: "c", Registry: products(t)})
	envs, err := upgrade(t, `{"type":"cart_mutate","op":"add","sku":"A-100"}`, Scout, h)
	require.NoError(t, err)
	require.Len(t, envs, 1)
	app, ok := envs[0].Event.(*chatprotocol.AppEvent)
	require.True(t, ok, "%T", envs[0].Event)
	assert.Equal(t, "cart_mutate", app.Type)
	assert.JSONEq(t, `{"type":"cart_mutate","op":"add","sku":"A-100"}`, string(app.Raw))
	ch, ok := envs[0].Channel(h.Registry())
	require.True(t, ok)
	assert.Equal(t, chatprotocol.ChannelState, ch)
}

// recordingHost is a Host with fixed answers that records its calls.
type recordingHost struct {
	reg       *chatprotocol.Registry
	callID    string
	hasCallID bool
	callIDErr error
	identify  func(*chatprotocol.ChatEventEnvelope) error
	asked     []Frame
	seq       int64
}

func (h *recordingHost) Registry() *chatprotocol.Registry { return h.reg }

func (h *recordingHost) ToolCallID(_ context.Context, f Frame) (string, bool, error) {
	h.asked = append(h.asked, f)
	return h.callID, h.hasCallID, h.callIDErr
}

func (h *recordingHost) Identify(_ context.Context, env *chatprotocol.ChatEventEnvelope) error {
	if h.identify != nil {
		return h.identify(env)
	}
	h.seq++
	env.ConversationID, env.TurnID, env.EventID, env.Seq = "c", "t", "e", h.seq
	return nil
}

func TestUpgradeRefusals(t *testing.T) {
	tests := []struct {
		name  string
		d     Dialect
		frame string
		host  *recordingHost
		code  refusal.Code
		path  string
	}{
		{"unregistered product", Scout, `{"type":"products"}`, &recordingHost{}, refusal.CodeUnsupportedEvent, "/type"},
		{"product of another registry", Scout, `{"type":"broaden"}`, &recordingHost{reg: products(t)}, refusal.CodeUnsupportedEvent, "/type"},
		{"papercusp type in scout", Scout, `{"type":"delta","text":"x"}`, &recordingHost{reg: products(t)}, refusal.CodeUnsupportedEvent, "/type"},
		{"scout type in papercusp", Papercusp, `{"type":"token","content":"x"}`, &recordingHost{reg: products(t)}, refusal.CodeUnsupportedEvent, "/type"},
		{"version-1 type", Scout, `{"type":"lifecycle","status":"started"}`, &recordingHost{reg: products(t)}, refusal.CodeUnsupportedEvent, "/type"},
		{"tool result without status", Papercusp, `{"type":"tool_result","callId":"c"}`, &recordingHost{}, refusal.CodeUnknownResultStatus, "/status"},
		{"tool result of unknown status", Papercusp, `{"type":"tool_result","callId":"c","status":"done"}`, &recordingHost{}, refusal.CodeUnknownResultStatus, "/status"},
		{"tool result of status OK", Papercusp, `{"type":"tool_result","callId":"c","status":"OK"}`, &recordingHost{}, refusal.CodeUnknownResultStatus, "/status"},
		{"tool_start without mapping", Scout, `{"type":"tool_start","tool":"x"}`, &recordingHost{}, refusal.CodeMissingCallID, "/callId"},
		{"tool_call without mapping", Papercusp, `{"type":"tool_call","name":"x"}`, &recordingHost{}, refusal.CodeMissingCallID, "/callId"},
		{"tool result without mapping", Papercusp, `{"type":"tool_result","status":"ok"}`, &recordingHost{}, refusal.CodeMissingCallID, "/callId"},
		{"host maps to empty id", Scout, `{"type":"tool_start","tool":"x"}`, &recordingHost{hasCallID: true}, refusal.CodeMissingCallID, "/callId"},
		{"host maps to long id", Scout, `{"type":"tool_start","tool":"x"}`, &recordingHost{hasCallID: true, callID: strings.Repeat("c", 257)}, refusal.CodeMissingCallID, "/callId"},
		{"empty session id", Scout, `{"type":"session","sessionId":""}`, &recordingHost{}, refusal.CodeInvalidEvent, "/sessionId"},
		{"empty tool name", Scout, `{"type":"tool_start","tool":"","callId":"c"}`, &recordingHost{}, refusal.CodeInvalidEvent, "/tool"},
		{"empty papercusp tool name", Papercusp, `{"type":"tool_call","name":"","callId":"c"}`, &recordingHost{}, refusal.CodeInvalidEvent, "/name"},
		{"lone surrogate in token", Scout, `{"type":"token","content":"\ud83d"}`, &recordingHost{}, refusal.CodeInvalidEvent, "/content"},
		{"lone surrogate in a card", Scout, `{"type":"card","card":{"correlationId":"k","createdAt":1,"prompt":"Size?","fallbackText":"\udc00"}}`, &recordingHost{}, refusal.CodeInvalidCard, "/card/fallbackText"},
		{"lone surrogate in a card's report", Scout, `{"type":"card","card":{"correlationId":"k","createdAt":1,"prompt":"p","report":{"plans":[{"title":"a\ud800"}]}}}`, &recordingHost{}, refusal.CodeInvalidCard, "/card/report/plans/0/title"},
		{"lone surrogate in delta", Papercusp, `{"type":"delta","text":"a\udc5f"}`, &recordingHost{}, refusal.CodeInvalidEvent, "/text"},
		{"negative state version", Scout, `{"type":"state","version":-1,"snapshot":{}}`, &recordingHost{}, refusal.CodeInvalidEvent, "/version"},
		{"state without snapshot", Scout, `{"type":"state","version":1}`, &recordingHost{}, refusal.CodeInvalidEvent, "/snapshot"},
		{"state version fraction", Scout, `{"type":"state","version":1.5,"snapshot":{}}`, &recordingHost{}, refusal.CodeInvalidEvent, "/version"},
		{"state version beyond 2^53-1", Scout, `{"type":"state","version":9007199254740992,"snapshot":{}}`, &recordingHost{}, refusal.CodeInvalidEvent, "/version"},
		{"usage tokens fraction", Scout, `{"type":"done","usage":{"totalTokens":0.5}}`, &recordingHost{}, refusal.CodeInvalidEvent, "/usage/totalTokens"},
		{"card createdAt fraction", Scout, `{"type":"card","card":{"correlationId":"k","createdAt":1.5,"prompt":"p"}}`, &recordingHost{}, refusal.CodeInvalidEvent, "/card/createdAt"},
		{"card timeoutMs fraction", Scout, `{"type":"card","card":{"correlationId":"k","createdAt":1,"prompt":"p","timeoutMs":0.5}}`, &recordingHost{}, refusal.CodeInvalidEvent, "/card/timeoutMs"},
		{"card empty string bound", Scout, `{"type":"card","card":{"correlationId":"k","createdAt":1,"prompt":"p","presentation":{"kind":"date","min":""}}}`, &recordingHost{}, refusal.CodeInvalidCard, "/card/presentation/min"},
		{"card report without plans", Scout, `{"type":"card","card":{"correlationId":"k","createdAt":1,"prompt":"p","report":{"plans":[]}}}`, &recordingHost{}, refusal.CodeInvalidCard, "/card/report/plans"},
		{"card option empty label", Scout, `{"type":"card","card":{"correlationId":"k","createdAt":1,"prompt":"p","presentation":{"kind":"radio","options":[{"id":"a","label":""}]}}}`, &recordingHost{}, refusal.CodeInvalidCard, "/card/presentation/options/0/label"},
		{"snapshot with duplicate names", Scout, `{"type":"state","version":1,"snapshot":{"a":1,"a":2}}`, &recordingHost{}, refusal.CodeInvalidEvent, "/snapshot"},
		{"negative usage", Scout, `{"type":"done","usage":{"totalTokens":-1}}`, &recordingHost{}, refusal.CodeInvalidEvent, "/usage/totalTokens"},
		{"empty href", Scout, `{"type":"navigate","href":""}`, &recordingHost{}, refusal.CodeInvalidEvent, "/href"},
		{"empty correlation id", Scout, `{"type":"card_closed","correlationId":""}`, &recordingHost{}, refusal.CodeInvalidEvent, "/correlationId"},
		{"card without prompt", Scout, `{"type":"card","card":{"correlationId":"k","createdAt":1,"prompt":""}}`, &recordingHost{}, refusal.CodeInvalidCard, "/card/prompt"},
		{"product with duplicate names", Scout, `{"type":"products","n":1,"n":2}`, &recordingHost{reg: products(t)}, refusal.CodeInvalidEvent, ""},
		{"identity refused by the host", Scout, `{"type":"token","content":"x"}`, &recordingHost{identify: func(*chatprotocol.ChatEventEnvelope) error {
			return &refusal.Error{Code: refusal.CodeForeignFrame, Path: "/conversationId"}
		}}, refusal.CodeForeignFrame, "/conversationId"},
		{"host gives no identity", Scout, `{"type":"token","content":"x"}`, &recordingHost{identify: func(*chatprotocol.ChatEventEnvelope) error { return nil }}, refusal.CodeInvalidEnvelope, "/conversationId"},
		{"host gives seq 0", Scout, `{"type":"token","content":"x"}`, &recordingHost{identify: func(env *chatprotocol.ChatEventEnvelope) error {
			env.ConversationID, env.TurnID, env.EventID = "c", "t", "e"
			return nil
		}}, refusal.CodeInvalidEnvelope, "/seq"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			envs, err := upgrade(t, tt.frame, tt.d, tt.host)
			assert.Nil(t, envs)
			require.ErrorIs(t, err, refusal.Sentinel(tt.code))
			assert.Equal(t, tt.path, refusalOf(t, err).Path)
		})
	}
}

func TestUpgradeRefusesWhatIsNotAFrame(t *testing.T) {
	h := &recordingHost{}
	for name, f := range map[string]Frame{"nil": nil, "nil pointer": (*TokenFrame)(nil), "nil delta": (*DeltaFrame)(nil)} {
		envs, err := UpgradeLegacyChatFrame(t.Context(), f, h)
		assert.Nil(t, envs, name)
		assert.ErrorIs(t, err, refusal.ErrInvalidEvent, name)
	}
	envs, err := UpgradeLegacyChatFrame(t.Context(), &TokenFrame{Content: "x"}, nil)
	assert.Nil(t, envs)
	assert.ErrorIs(t, err, refusal.ErrInvalidEnvelope)
	assert.Zero(t, h.seq, "nothing was identified")
}

// TestUpgradeAsksTheHostOnlyForValidFrames: a frame refused for another
// reason never reaches the host's mapping or identity, so it uses up
// neither a tool ordinal nor a seq.
func TestUpgradeAsksTheHostOnlyForValidFrames(t *testing.T) {
	h := &recordingHost{callID: "c-1", hasCallID: true}
	for _, frame := range []string{`{"type":"tool_start","tool":""}`, `{"type":"tool_start","tool":"\udc00"}`} {
		_, err := upgrade(t, frame, Scout, h)
		require.ErrorIs(t, err, refusal.ErrInvalidEvent)
	}
	_, err := upgrade(t, `{"type":"tool_result","status":"nope"}`, Papercusp, h)
	require.ErrorIs(t, err, refusal.ErrUnknownResultStatus)
	assert.Empty(t, h.asked)
	assert.Zero(t, h.seq)

	envs, err := upgrade(t, `{"type":"tool_start","tool":"search"}`, Scout, h)
	require.NoError(t, err)
	require.Len(t, h.asked, 1)
	assert.Equal(t, &ToolStartFrame{Tool: "search"}, h.asked[0])
	assert.Equal(t, "c-1", envs[0].Event.(*chatprotocol.ToolCallEvent).CallID)
	assert.Equal(t, int64(1), envs[0].Seq)

	for _, own := range []string{"own", `\u0000unset`, "host-call-id"} {
		envs, err = upgrade(t, `{"type":"tool_result","status":"ok","callId":"`+own+`"}`, Papercusp, h)
		require.NoError(t, err, own)
		assert.Len(t, h.asked, 1, "a frame with its own call id %q is not mapped", own)
		want, _ := strconv.Unquote(`"` + own + `"`)
		assert.Equal(t, want, envs[0].Event.(*chatprotocol.ToolResultEvent).CallID)
	}
}

func TestUpgradeKeepsRawMembers(t *testing.T) {
	h := NewStreamHost(&StreamHostOptions{ConversationID: "c"})
	envs, err := upgrade(t, `{"type":"tool_call","name":"n","input":{"b":[1, 2],"a":"\u00e9"}}`, Papercusp, h)
	require.NoError(t, err)
	call := envs[0].Event.(*chatprotocol.ToolCallEvent)
	assert.Equal(t, json.RawMessage(`{"b":[1, 2],"a":"\u00e9"}`), call.Input, "the input is the frame's bytes")
}

// BenchmarkTokenFrame measures what `chatwire decode` does with each token
// frame of a Scout stream: decode it, upgrade it through a StreamHost.
func BenchmarkTokenFrame(b *testing.B) {
	frames := [][]byte{
		[]byte(`{"type":"token","content":"Size 43 is in stock"}`),
		[]byte(`{"type":"token","content":"ships within \"two\" days\nand"}`),
		[]byte(`{"type":"token","content":"naïve 👟 trail runner"}`),
	}
	h := NewStreamHost(&StreamHostOptions{ConversationID: "gen-1"})
	b.Run("decode", func(b *testing.B) {
		b.ReportAllocs()
		cpu := benchcpu.Start()
		for i := 0; b.Loop(); i++ {
			if _, err := DecodeLegacyChatFrame(frames[i%len(frames)], Scout); err != nil {
				b.Fatal(err)
			}
		}
		cpu.Report(b, 0)
	})
	b.Run("decode_upgrade", func(b *testing.B) {
		b.ReportAllocs()
		cpu := benchcpu.Start()
		for i := 0; b.Loop(); i++ {
			f, err := DecodeLegacyChatFrame(frames[i%len(frames)], Scout)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := UpgradeLegacyChatFrame(b.Context(), f, h); err != nil {
				b.Fatal(err)
			}
		}
		cpu.Report(b, 0)
	})
}

func TestAppendUpgradedLegacyChatFrame(t *testing.T) {
	h := NewStreamHost(&StreamHostOptions{ConversationID: "c"})
	first := chatprotocol.ChatEventEnvelope{ConversationID: "other", TurnID: "t", EventID: "e", Seq: 9, Event: &chatprotocol.DeltaEvent{Text: "kept"}}
	dst := make([]chatprotocol.ChatEventEnvelope, 1, 8)
	dst[0] = first
	dst, err := AppendUpgradedLegacyChatFrame(t.Context(), dst, &ErrorFrame{Message: "boom"}, h)
	require.NoError(t, err)
	require.Len(t, dst, 3)
	assert.Equal(t, first, dst[0], "earlier elements are left alone")
	assert.Equal(t, chatprotocol.EventTypeError, dst[1].Event.EventType())
	assert.Equal(t, chatprotocol.EventTypeLifecycle, dst[2].Event.EventType())
	assert.Equal(t, int64(2), dst[2].Seq)

	reused := dst[:1]
	out, err := AppendUpgradedLegacyChatFrame(t.Context(), reused, &TokenFrame{Content: "x"}, h)
	require.NoError(t, err)
	require.Len(t, out, 2)
	assert.Equal(t, &chatprotocol.DeltaEvent{Text: "x"}, out[1].Event)
	assert.Equal(t, "e-3", out[1].EventID, "the spare capacity is overwritten whole")
	assert.Empty(t, out[1].Unknown)

	out, err = AppendUpgradedLegacyChatFrame(t.Context(), dst[:1], &ToolResultFrame{Status: "maybe"}, h)
	require.ErrorIs(t, err, refusal.ErrUnknownResultStatus)
	assert.Len(t, out, 1, "a refusal returns dst as it was")
}
