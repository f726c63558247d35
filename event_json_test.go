package chatprotocol

import (
	"errors"
	"testing"

	"github.com/Papercusp/chat-protocol-go/refusal"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func i64(v int64) *int64        { return &v }
func f64(v float64) *float64    { return &v }
func raw(s string) []byte       { return []byte(s) }
func app(t, r string) ChatEvent { return &ChatAppEvent{Type: t, Raw: raw(r)} }

// scoutCard is the card frame of the captured Scout stream
// (../shared/streams/scout-card-turn.sse).
const scoutCard = `{"type":"card","card":{"correlationId":"corr-91","createdAt":1764500001000,"prompt":"Which size do you wear?","presentation":{"kind":"radio","options":[{"id":"s42","label":"EU 42"},{"id":"s43","label":"EU 43","style":"primary"}],"voiceAnswerable":true},"allowDecline":true,"timeoutMs":600000,"fallbackText":"Reply with your EU size."}}`

// TestChatEventRoundTrip parses canonical frames of every type and requires
// the typed event and, re-encoded, the same bytes.
func TestChatEventRoundTrip(t *testing.T) {
	cases := []struct {
		frame string
		want  ChatEvent
	}{
		{`{"type":"session","sessionId":"s-7f3a"}`, &ChatSession{SessionID: "s-7f3a"}},
		{`{"type":"token","content":"Size 43 — ümlaut 👟 <b>&"}`, &ChatToken{Content: "Size 43 — ümlaut 👟 <b>&"}},
		{`{"type":"token","content":"\ud800"}`, &ChatToken{Content: "\xed\xa0\x80"}},
		{`{"type":"tool_start","tool":"search_products"}`, &ChatToolStart{Tool: "search_products"}},
		{`{"type":"tool_start","tool":"lookup","callId":"c-1"}`, &ChatToolStart{Tool: "lookup", CallID: "c-1"}},
		{scoutCard, &ChatCard{Card: OpenCardSnapshot{
			CorrelationID: "corr-91", CreatedAt: 1764500001000,
			CardSpec: CardSpec{
				Prompt: "Which size do you wear?",
				Presentation: &CardPresentation{Kind: CardKindRadio, VoiceAnswerable: true, Options: []CardOption{
					{ID: "s42", Label: "EU 42"}, {ID: "s43", Label: "EU 43", Style: CardOptionStylePrimary},
				}},
				AllowDecline: true, TimeoutMs: 600000, FallbackText: "Reply with your EU size.",
			},
		}}},
		{`{"type":"card_closed","correlationId":"corr-91"}`, &ChatCardClosed{CorrelationID: "corr-91"}},
		{`{"type":"state","version":3,"snapshot":{"inbox":2}}`, &ChatStateSnapshot{Version: 3, Snapshot: raw(`{"inbox":2}`)}},
		{`{"type":"state","version":0}`, &ChatStateSnapshot{}},
		{`{"type":"done"}`, &ChatDone{}},
		{`{"type":"done","usage":{"totalTokens":812,"costUsd":0.0041}}`, &ChatDone{Usage: &ChatUsage{TotalTokens: i64(812), CostUsd: f64(0.0041)}}},
		{`{"type":"done","usage":{"totalTokens":0}}`, &ChatDone{Usage: &ChatUsage{TotalTokens: i64(0)}}},
		{`{"type":"done","usage":{}}`, &ChatDone{Usage: &ChatUsage{}}},
		{`{"type":"error","message":"upstream timed out"}`, &ChatError{Message: "upstream timed out"}},
		{`{"type":"navigate","href":"/products/A-100?size=43"}`, &ChatNavigate{Href: "/products/A-100?size=43"}},
		{`{"type":"products","products":[{"sku":"A-100","price":89.0}]}`, app("products", `{"type":"products","products":[{"sku":"A-100","price":89.0}]}`)},
		{`{"type":"cart_mutate","op":"add"}`, app("cart_mutate", `{"type":"cart_mutate","op":"add"}`)},
	}
	for _, c := range cases {
		t.Run(c.frame, func(t *testing.T) {
			got := ParseChatEvent([]byte(c.frame))
			require.Equal(t, c.want, got)
			out, err := MarshalChatEvent(got)
			require.NoError(t, err)
			assert.Equal(t, c.frame, string(out))
		})
	}
}

func TestParseChatEventNil(t *testing.T) {
	for _, in := range []string{
		``, `null`, `42`, `"token"`, `[]`, `[{"type":"token"}]`, `{}`, `{"type":5}`, `{"type":null}`,
		`{"TYPE":"token","content":"x"}`, `{"Type":"token"}`, `{"typeſ":"token"}`, "{\"type\\u0000\":\"token\"}",
		"\xef\xbb\xbf{\"type\":\"token\",\"content\":\"x\"}", `{"type":"token",}`, `{"type":"token"`,
		`{"type":["token"]}`,
	} {
		assert.Nil(t, ParseChatEvent([]byte(in)), "%q", in)
	}
}

// TestParseChatEventDoesNotFit: a union type whose members do not fit comes
// back whole as an app event of that type, never as an invented zero.
func TestParseChatEventDoesNotFit(t *testing.T) {
	for _, in := range []string{
		`{"type":"token"}`,
		`{"type":"token","content":5}`,
		`{"type":"token","content":null}`,
		`{"type":"session","sessionId":["s"]}`,
		`{"type":"tool_start","tool":"x","callId":7}`,
		`{"type":"card","card":"nope"}`,
		`{"type":"card","card":{"prompt":"p"}}`,
		`{"type":"card","card":{"correlationId":"c","prompt":"p","createdAt":1.5}}`,
		`{"type":"card","card":{"correlationId":"c","prompt":"p","presentation":{"kind":"radio","options":"[]"}}}`,
		`{"type":"card","card":{"correlationId":"c","prompt":"p","presentation":{"kind":"slider","min":true}}}`,
		`{"type":"card","card":{"correlationId":"c","prompt":"p","presentation":{"kind":"slider","max":1e400}}}`,
		`{"type":"card","card":{"correlationId":"c","prompt":"p","report":{"plans":[]}}}`,
		`{"type":"card_closed"}`,
		`{"type":"state","version":"3"}`,
		`{"type":"state","version":1e400}`,
		`{"type":"state","version":9007199254740992}`,
		`{"type":"done","usage":"lots"}`,
		`{"type":"done","usage":{"totalTokens":1.5}}`,
		`{"type":"done","usage":{"costUsd":"0.1"}}`,
		`{"type":"error","message":{"text":"x"}}`,
		`{"type":"navigate"}`,
	} {
		ev := ParseChatEvent([]byte(in))
		require.IsType(t, &ChatAppEvent{}, ev, in)
		assert.Equal(t, in, string(ev.(*ChatAppEvent).Raw))
		_, known := ChatEventChannel(ev.ChatEventType())
		assert.True(t, known, in)
	}
}

func TestParseChatEventBrowserReading(t *testing.T) {
	cases := []struct {
		in   string
		want ChatEvent
	}{
		{`{"type":"token","content":"a","content":"b"}`, &ChatToken{Content: "b"}},
		{`{"type":"products","type":"token","content":"b"}`, &ChatToken{Content: "b"}},
		{`{"type":"token","Content":"a","content":"b"}`, &ChatToken{Content: "b"}},
		{"{\"type\":\"token\",\"content\":\"\xe2\x82A\"}", &ChatToken{Content: "\ufffdA"}},
		{" \r\n{\"type\":\"navigate\",\"href\":\"/x\"}\n", &ChatNavigate{Href: "/x"}},
		{`{"type":"token","content":"x","extra":[1e400,{"deep":true}]}`, &ChatToken{Content: "x"}},
		{`{"type":"tool_start","tool":"t","callId":null}`, &ChatToolStart{Tool: "t"}},
		{`{"type":"state","version":2,"snapshot":null}`, &ChatStateSnapshot{Version: 2}},
		{`{"type":"state","version":2,"snapshot":{"a":1},"snapshot":[2]}`, &ChatStateSnapshot{Version: 2, Snapshot: raw(`[2]`)}},
		{`{"type":"card","card":{"correlationId":"c","prompt":"p","dataSchemaJson":{"type":"object"}}}`,
			&ChatCard{Card: OpenCardSnapshot{CorrelationID: "c", CardSpec: CardSpec{Prompt: "p"}, DataSchemaJSON: `{"type":"object"}`}}},
	}
	for _, c := range cases {
		assert.Equal(t, c.want, ParseChatEvent([]byte(c.in)), "%q", c.in)
	}
}

func TestParseChatEventDeepNesting(t *testing.T) {
	deep := `{"type":"products","x":` + repeat("[", 200000) + repeat("]", 200000) + `}`
	ev := ParseChatEvent([]byte(deep))
	require.IsType(t, &ChatAppEvent{}, ev)
	assert.Equal(t, "products", ev.ChatEventType())
}

func TestParseChatEventCopiesInput(t *testing.T) {
	buf := []byte(`{"type":"state","version":1,"snapshot":{"a":1}}`)
	ev := ParseChatEvent(buf).(*ChatStateSnapshot)
	for i := range buf {
		buf[i] = ' '
	}
	assert.Equal(t, `{"a":1}`, string(ev.Snapshot))
}

func TestMarshalChatEventRefusals(t *testing.T) {
	cases := []struct {
		ev   ChatEvent
		path string
	}{
		{nil, ""},
		{&ChatAppEvent{Type: "x", Raw: raw(`{"type":`)}, ""},
		{&ChatStateSnapshot{Snapshot: raw(`{`)}, "/snapshot"},
		// Integers a JavaScript number would round: ParseChatEvent would not
		// read them back.
		{&ChatStateSnapshot{Version: 1<<53 + 1, Snapshot: raw(`1`)}, "/version"},
		{&ChatDone{Usage: &ChatUsage{TotalTokens: new(int64(-1 << 53))}}, "/usage/totalTokens"},
		{&ChatCard{Card: OpenCardSnapshot{CorrelationID: "k", CreatedAt: 1 << 62, CardSpec: CardSpec{Prompt: "p"}}}, "/card/createdAt"},
		{&ChatCard{Card: OpenCardSnapshot{CorrelationID: "k", CreatedAt: 1, CardSpec: CardSpec{Prompt: "p", TimeoutMs: 1 << 53}}}, "/card/timeoutMs"},
	}
	for _, c := range cases {
		_, err := MarshalChatEvent(c.ev)
		require.ErrorIs(t, err, refusal.ErrInvalidEvent)
		e, ok := errors.AsType[*refusal.Error](err)
		require.True(t, ok)
		assert.Equal(t, c.path, e.Path)
	}
	out, err := MarshalChatEvent(&ChatStateSnapshot{Version: 1<<53 - 1, Snapshot: raw(`1`)})
	require.NoError(t, err)
	ev := ParseChatEvent(out)
	require.IsType(t, &ChatStateSnapshot{}, ev, "the largest exact integer reads back")
	assert.Equal(t, int64(1<<53-1), ev.(*ChatStateSnapshot).Version)
	out, err = MarshalChatEvent(&ChatAppEvent{Type: "heartbeat"})
	require.NoError(t, err)
	assert.Equal(t, `{"type":"heartbeat"}`, string(out))
}

func repeat(s string, n int) string {
	b := make([]byte, 0, len(s)*n)
	for range n {
		b = append(b, s...)
	}
	return string(b)
}

// TestMarshalChatEventNilPointer: a nil event, typed or not, is refused
// with invalid-event as documented, never dereferenced.
func TestMarshalChatEventNilPointer(t *testing.T) {
	for _, ev := range []ChatEvent{nil, (*ChatToken)(nil), (*ChatAppEvent)(nil), (*ChatCard)(nil), (*ChatDone)(nil)} {
		b, err := MarshalChatEvent(ev)
		require.ErrorIs(t, err, refusal.ErrInvalidEvent, "%T", ev)
		assert.Nil(t, b, "%T", ev)
	}
}
