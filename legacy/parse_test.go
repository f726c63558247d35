package legacy

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func raw(s string) []byte   { return []byte(s) }
func app(t, r string) Frame { return &AppFrame{Type: t, Raw: raw(r)} }

// scoutCard is the card frame of a captured Scout stream.
const scoutCard = `{"type":"card","card":{"correlationId":"corr-91","createdAt":1764500001000,"prompt":"Which size do you wear?","presentation":{"kind":"radio","options":[{"id":"s42","label":"EU 42"},{"id":"s43","label":"EU 43","style":"primary"}],"voiceAnswerable":true},"allowDecline":true,"timeoutMs":600000,"fallbackText":"Reply with your EU size."}}`

// TestParseChatEventRoundTrip parses canonical frames of every type and requires
// the typed frame and, re-encoded, the same bytes.
func TestParseChatEventRoundTrip(t *testing.T) {
	cases := []struct {
		frame string
		want  Frame
	}{
		{`{"type":"session","sessionId":"s-7f3a"}`, &SessionFrame{SessionID: "s-7f3a"}},
		{`{"type":"token","content":"Size 43 — ümlaut 👟 <b>&"}`, &TokenFrame{Content: "Size 43 — ümlaut 👟 <b>&"}},
		{`{"type":"token","content":"\ud800"}`, &TokenFrame{Content: "\xed\xa0\x80"}},
		{`{"type":"tool_start","tool":"search_products"}`, &ToolStartFrame{Tool: "search_products"}},
		{`{"type":"tool_start","tool":"lookup","callId":"c-1"}`, &ToolStartFrame{Tool: "lookup", CallID: new("c-1")}},
		{`{"type":"tool_start","tool":"lookup","callId":""}`, &ToolStartFrame{Tool: "lookup", CallID: new("")}},
		{scoutCard, &CardFrame{Card: Card{
			CorrelationID: "corr-91", CreatedAt: 1764500001000, Prompt: "Which size do you wear?",
			Presentation: &CardPresentation{Kind: "radio", VoiceAnswerable: new(true), Options: []CardOption{
				{ID: "s42", Label: "EU 42"}, {ID: "s43", Label: "EU 43", Style: new("primary")},
			}},
			AllowDecline: new(true), TimeoutMs: new(600000.0), FallbackText: new("Reply with your EU size."),
		}}},
		{`{"type":"card","card":{"correlationId":"","createdAt":0,"prompt":"","presentation":{"kind":"text","options":[],"placeholder":"","multiline":false,"min":"","max":-0.5,"step":0,"voiceAnswerable":false},"allowDecline":false,"timeoutMs":0,"fallbackText":"","report":{"plans":[]},"dataSchemaJson":{"type":"object"}}}`,
			&CardFrame{Card: Card{
				Presentation: &CardPresentation{Kind: "text", Options: []CardOption{}, Placeholder: new(""), Multiline: new(false),
					Min: &CardBound{IsString: true}, Max: &CardBound{Number: -0.5}, Step: new(0.0), VoiceAnswerable: new(false)},
				AllowDecline: new(false), TimeoutMs: new(0.0), FallbackText: new(""), Report: &Report{Plans: []ReportPlan{}},
				DataSchemaJSON: raw(`{"type":"object"}`),
			}}},
		{`{"type":"card","card":{"correlationId":"k","createdAt":1.5,"prompt":"p","report":{"plans":[{"slug":" s ","title":"","status":"","summary":"","items":[{"id":"","text":"","status":"","ref":""}]},{"title":"t","items":[]}],"title":""}}}`,
			&CardFrame{Card: Card{CorrelationID: "k", CreatedAt: 1.5, Prompt: "p", Report: &Report{Title: new(""), Plans: []ReportPlan{
				{Slug: new(" s "), Status: new(""), Summary: new(""), Items: []ReportItem{{ID: new(""), Status: new(""), Ref: new("")}}},
				{Title: "t", Items: []ReportItem{}},
			}}}}},
		{`{"type":"card_closed","correlationId":"corr-91"}`, &CardClosedFrame{CorrelationID: "corr-91"}},
		{`{"type":"state","version":3,"snapshot":{"inbox":2}}`, &StateFrame{Version: 3, Snapshot: raw(`{"inbox":2}`)}},
		{`{"type":"state","version":0}`, &StateFrame{}},
		{`{"type":"state","version":0,"snapshot":null}`, &StateFrame{Snapshot: raw(`null`)}},
		{`{"type":"state","version":9007199254740992,"snapshot":[]}`, &StateFrame{Version: 1 << 53, Snapshot: raw(`[]`)}},
		{`{"type":"state","version":-1.25}`, &StateFrame{Version: -1.25}},
		{`{"type":"done"}`, &DoneFrame{}},
		{`{"type":"done","usage":{"totalTokens":812,"costUsd":0.0041}}`, &DoneFrame{Usage: &Usage{TotalTokens: f64(812), CostUSD: f64(0.0041)}}},
		{`{"type":"done","usage":{"totalTokens":0}}`, &DoneFrame{Usage: &Usage{TotalTokens: f64(0)}}},
		{`{"type":"done","usage":{}}`, &DoneFrame{Usage: &Usage{}}},
		{`{"type":"done","usage":{"totalTokens":1.5,"costUsd":-1}}`, &DoneFrame{Usage: &Usage{TotalTokens: f64(1.5), CostUSD: f64(-1)}}},
		{`{"type":"error","message":"upstream timed out"}`, &ErrorFrame{Message: "upstream timed out"}},
		{`{"type":"navigate","href":"/products/A-100?size=43"}`, &NavigateFrame{Href: "/products/A-100?size=43"}},
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
		`{"type":"tool_start","tool":"x","callId":null}`,
		`{"type":"card","card":{"prompt":"p"}}`,
		`{"type":"card","card":{"correlationId":"c","prompt":"p"}}`,
		`{"type":"card","card":{"correlationId":"c","prompt":"p","createdAt":null}}`,
		`{"type":"card","card":{"correlationId":"c","prompt":"p","createdAt":"1"}}`,
		`{"type":"card","card":{"correlationId":"c","prompt":"p","createdAt":1,"fallbackText":null}}`,
		`{"type":"card","card":{"correlationId":"c","prompt":"p","createdAt":1,"dataSchemaJson":"{\"type\":\"object\"}"}}`,
		`{"type":"card","card":{"correlationId":"c","prompt":"p","createdAt":1,"presentation":{"kind":"carousel"}}}`,
		`{"type":"card","card":{"correlationId":"c","prompt":"p","createdAt":1,"presentation":{}}}`,
		`{"type":"card","card":{"correlationId":"c","prompt":"p","createdAt":1,"presentation":{"kind":"radio","options":"[]"}}}`,
		`{"type":"card","card":{"correlationId":"c","prompt":"p","createdAt":1,"presentation":{"kind":"radio","options":[{"id":"a"}]}}}`,
		`{"type":"card","card":{"correlationId":"c","prompt":"p","createdAt":1,"presentation":{"kind":"radio","options":[{"id":"a","label":"A","style":"bold"}]}}}`,
		`{"type":"card","card":{"correlationId":"c","prompt":"p","createdAt":1,"presentation":{"kind":"slider","min":true}}}`,
		`{"type":"card","card":{"correlationId":"c","prompt":"p","createdAt":1,"presentation":{"kind":"slider","max":1e400}}}`,
		`{"type":"card","card":{"correlationId":"c","prompt":"p","createdAt":1,"report":{}}}`,
		`{"type":"card","card":{"correlationId":"c","prompt":"p","createdAt":1,"report":{"plans":[{"slug":"s"}]}}}`,
		`{"type":"card","card":{"correlationId":"c","prompt":"p","createdAt":1,"report":{"plans":[{"title":"t","items":[{"id":"i"}]}]}}}`,
		`{"type":"card_closed"}`,
		`{"type":"state","version":"3"}`,
		`{"type":"state","version":1e400}`,
		`{"type":"state"}`,
		`{"type":"state","version":null,"snapshot":1}`,
		`{"type":"done","usage":"lots"}`,
		`{"type":"done","usage":null}`,
		`{"type":"done","usage":{"totalTokens":null}}`,
		`{"type":"done","usage":{"costUsd":"0.1"}}`,
		`{"type":"error","message":{"text":"x"}}`,
		`{"type":"navigate"}`,
	} {
		ev := ParseChatEvent([]byte(in))
		require.IsType(t, &AppFrame{}, ev, in)
		assert.Equal(t, in, string(ev.(*AppFrame).Raw))
		_, known := FrameChannel(ev.FrameType())
		assert.True(t, known, in)
	}
}

func TestParseChatEventBrowserReading(t *testing.T) {
	cases := []struct {
		in   string
		want Frame
	}{
		{`{"type":"token","content":"a","content":"b"}`, &TokenFrame{Content: "b"}},
		{`{"type":"products","type":"token","content":"b"}`, &TokenFrame{Content: "b"}},
		{`{"type":"token","Content":"a","content":"b"}`, &TokenFrame{Content: "b"}},
		{"{\"type\":\"token\",\"content\":\"\xe2\x82A\"}", &TokenFrame{Content: "\ufffdA"}},
		{" \r\n{\"type\":\"navigate\",\"href\":\"/x\"}\n", &NavigateFrame{Href: "/x"}},
		{`{"type":"token","content":"x","extra":[1e400,{"deep":true}]}`, &TokenFrame{Content: "x"}},
		{`{"type":"state","version":2,"snapshot":null}`, &StateFrame{Version: 2, Snapshot: raw(`null`)}},
		{`{"type":"state","version":2,"snapshot":{"a":1},"snapshot":[2]}`, &StateFrame{Version: 2, Snapshot: raw(`[2]`)}},
		{`{"type":"card","card":{"correlationId":"c","createdAt":1,"prompt":"p","dataSchemaJson":{"type":"object"}}}`,
			&CardFrame{Card: Card{CorrelationID: "c", CreatedAt: 1, Prompt: "p", DataSchemaJSON: raw(`{"type":"object"}`)}}},
	}
	for _, c := range cases {
		assert.Equal(t, c.want, ParseChatEvent([]byte(c.in)), "%q", c.in)
	}
}

func TestParseChatEventDeepNesting(t *testing.T) {
	deep := `{"type":"products","x":` + repeat("[", 200000) + repeat("]", 200000) + `}`
	ev := ParseChatEvent([]byte(deep))
	require.IsType(t, &AppFrame{}, ev)
	assert.Equal(t, "products", ev.FrameType())
}

func TestParseChatEventCopiesInput(t *testing.T) {
	buf := []byte(`{"type":"state","version":1,"snapshot":{"a":1}}`)
	ev := ParseChatEvent(buf).(*StateFrame)
	for i := range buf {
		buf[i] = ' '
	}
	assert.Equal(t, `{"a":1}`, string(ev.Snapshot))
}

func repeat(s string, n int) string {
	b := make([]byte, 0, len(s)*n)
	for range n {
		b = append(b, s...)
	}
	return string(b)
}
