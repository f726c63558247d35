package chatprotocol

import (
	"encoding/json"
	"testing"

	"github.com/Papercusp/chat-protocol-go/cards"
	"github.com/Papercusp/chat-protocol-go/refusal"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Papercusp/chat-protocol-go/blocks"
)

// sampleEvents has one event of every type of section 6, each with every
// member set, keyed by type.
func sampleEvents() map[string]Event {
	tokens, cost, after := int64(812), 0.0041, int64(1500)
	return map[string]Event{
		EventTypeSession:   &SessionEvent{SessionID: "s-7f3a"},
		EventTypeLifecycle: &LifecycleEvent{Status: LifecycleCompleted, Reason: "done", Usage: &Usage{TotalTokens: &tokens, CostUSD: &cost}},
		EventTypeDelta:     &DeltaEvent{Text: "Hel"},
		EventTypeToolCall:  &ToolCallEvent{CallID: "call-1", Name: "search_docs", Input: json.RawMessage(`{"q":"refund policy"}`)},
		EventTypeToolResult: &ToolResultEvent{CallID: "call-1", Status: ToolResultOK, Output: json.RawMessage(`{"hits":2}`),
			Blocks: []ResultBlock{{Kind: ResultBlockAsk, Ask: &blocks.AskBlock{Question: "More?", Options: []blocks.AskOption{{ID: "y", Label: "Yes"}}}}}},
		EventTypeResult: &ResultEvent{Blocks: []ResultBlock{
			{Kind: ResultBlockText, Text: "Refunds within 30 days.", Sources: []Source{{Ref: "doc:policy-7#s2", Label: "Refund policy"}}},
			{Kind: ResultBlockReport, Report: &blocks.ReportBlock{Title: "Fleet", Plans: []blocks.ReportPlan{{Slug: "rl", Title: "Rate limit", Items: []blocks.ReportItem{{ID: "P-1", Text: "Classifier", Status: "done"}}}}}},
		}},
		EventTypeProvenance: &ProvenanceEvent{Provider: "anthropic", Model: "claude-sonnet-4-5", RequestID: "req_01"},
		EventTypeError:      &ErrorEvent{Code: "rate-limited", Message: "slow down", Retryable: true, RetryAfterMs: &after},
		EventTypeStep:       &StepEvent{Step: 2, Status: StepFinished, Reason: "tool_use", Usage: &Usage{TotalTokens: &tokens, CostUSD: &cost}},
		EventTypeCard: &CardEvent{Card: cards.OpenCardSnapshot{CorrelationID: "corr-91", CreatedAt: 1764500001000, CardSpec: cards.CardSpec{
			Prompt: "Which size?", AllowDecline: true, Presentation: &cards.CardPresentation{Kind: cards.CardKindRadio, Options: []cards.CardOption{{ID: "s42", Label: "EU 42"}}},
		}}},
		EventTypeCardClosed:   &CardClosedEvent{CorrelationID: "corr-91", Outcome: "submitted"},
		EventTypeState:        &StateEvent{Version: 3, Snapshot: json.RawMessage(`{"inbox":2}`)},
		EventTypeCapabilities: &CapabilitiesEvent{Capabilities: ChatCapabilities{ConnectionReplay: true, PersistedHistory: true}},
		EventTypeNavigate:     &NavigateEvent{Href: "/products/A-100?size=43"},
	}
}

func TestEveryEventTypeHasANameAChannelAndARoundTrip(t *testing.T) {
	samples := sampleEvents()
	require.Len(t, samples, len(EventTypes()))
	counts := map[Channel]int{}
	for _, typ := range EventTypes() {
		t.Run(typ, func(t *testing.T) {
			ev, ok := samples[typ]
			require.True(t, ok, "no sample for %s", typ)
			assert.Equal(t, typ, ev.EventType())
			ch, ok := EventChannel(typ)
			require.True(t, ok)
			counts[ch]++

			env := ChatEventEnvelope{ConversationID: "c-1", TurnID: "t-1", EventID: "e-1", Seq: 1, Event: ev}
			first, err := env.MarshalJSON()
			require.NoError(t, err)
			parsed, err := ParseEnvelope(first)
			require.NoError(t, err)
			assert.Equal(t, typ, parsed.Event.EventType())
			second, err := parsed.MarshalJSON()
			require.NoError(t, err)
			assert.Equal(t, string(first), string(second))

			alone, err := json.Marshal(ev)
			require.NoError(t, err)
			assert.JSONEq(t, string(first[len(`{"schemaVersion":1,"conversationId":"c-1","turnId":"t-1","eventId":"e-1","seq":1,"event":`):len(first)-1]), string(alone))
		})
	}
	assert.Equal(t, map[Channel]int{ChannelEvent: 9, ChannelState: 4, ChannelTransient: 1}, counts)
	_, ok := EventChannel("products")
	assert.False(t, ok)
	_, ok = EventChannel("token")
	assert.False(t, ok, "version-0 names are not version-1 types")
}

func TestLifecycleStatuses(t *testing.T) {
	terminal := map[LifecycleStatus]bool{
		LifecycleStarted: false, LifecycleCompleted: true, LifecycleFailed: true, LifecycleCancelled: true,
		LifecycleInterrupted: false, LifecycleNeedsReconciliation: false,
	}
	for s, want := range terminal {
		assert.True(t, s.Valid(), s)
		assert.Equal(t, want, s.Terminal(), s)
	}
	assert.False(t, LifecycleStatus("paused").Valid())
	for _, s := range []ToolResultStatus{ToolResultOK, ToolResultError, ToolResultCancelled} {
		assert.True(t, s.Valid(), s)
	}
	assert.False(t, ToolResultStatus("done").Valid())
}

func TestKeptPayloadsSurviveWhileUnchanged(t *testing.T) {
	in := frame(`{"type":"result","blocks":[{"kind":"report","report":{"title":"T","plans":[{"title":"P","eta":"soon"}],"owner":"ops"}}]}`)
	env, err := ParseEnvelope([]byte(in))
	require.NoError(t, err)
	out, err := env.MarshalJSON()
	require.NoError(t, err)
	assert.Equal(t, in, string(out), "members unknown to ReportBlock are re-emitted")

	env.Event.(*ResultEvent).Blocks[0].Report.Title = "Changed"
	out, err = env.MarshalJSON()
	require.NoError(t, err)
	assert.Equal(t, frame(`{"type":"result","blocks":[{"kind":"report","report":{"plans":[{"title":"P"}],"title":"Changed"}}]}`), string(out),
		"a changed report is written from its fields")

	card := frame(`{"type":"card","card":{"correlationId":"k","createdAt":1,"prompt":"p","icon":"star"}}`)
	env, err = ParseEnvelope([]byte(card))
	require.NoError(t, err)
	out, err = env.MarshalJSON()
	require.NoError(t, err)
	assert.Equal(t, card, string(out))
}

func TestResultBlockRulesForHandBuiltBlocks(t *testing.T) {
	tests := []struct {
		name  string
		block ResultBlock
		path  string
	}{
		{"unknown kind", ResultBlock{Kind: "html"}, "/event/blocks/0/kind"},
		{"text with ask", ResultBlock{Kind: ResultBlockText, Ask: &blocks.AskBlock{Question: "q"}}, "/event/blocks/0"},
		{"report missing", ResultBlock{Kind: ResultBlockReport}, "/event/blocks/0/report"},
		{"report with text", ResultBlock{Kind: ResultBlockReport, Text: "t", Report: &blocks.ReportBlock{Plans: []blocks.ReportPlan{{Title: "p"}}}}, "/event/blocks/0"},
		{"report plan untitled", ResultBlock{Kind: ResultBlockReport, Report: &blocks.ReportBlock{Plans: []blocks.ReportPlan{{Slug: "s"}}}}, "/event/blocks/0/report/plans/0/title"},
		{"report item without text", ResultBlock{Kind: ResultBlockReport, Report: &blocks.ReportBlock{Plans: []blocks.ReportPlan{{Title: "p", Items: []blocks.ReportItem{{ID: "i"}}}}}}, "/event/blocks/0/report/plans/0/items/0/text"},
		{"ask missing", ResultBlock{Kind: ResultBlockAsk}, "/event/blocks/0/ask"},
		{"ask without question", ResultBlock{Kind: ResultBlockAsk, Ask: &blocks.AskBlock{}}, "/event/blocks/0/ask/question"},
		{"ask option without label", ResultBlock{Kind: ResultBlockAsk, Ask: &blocks.AskBlock{Question: "q", Options: []blocks.AskOption{{ID: "a"}}}}, "/event/blocks/0/ask/options/0"},
		{"ask with sources", ResultBlock{Kind: ResultBlockAsk, Sources: []Source{}, Ask: &blocks.AskBlock{Question: "q"}}, "/event/blocks/0"},
		{"source without ref", ResultBlock{Kind: ResultBlockText, Text: "t", Sources: []Source{{Label: "l"}}}, "/event/blocks/0/sources/0/ref"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := json.Marshal(&ResultEvent{Blocks: []ResultBlock{tt.block}})
			require.Error(t, err)
			e, ok := errorsAsError(err)
			require.True(t, ok, "%v", err)
			assert.Equal(t, refusal.CodeInvalidEvent, e.Code)
			assert.Equal(t, tt.path, "/event"+e.Path)
		})
	}
}

func TestEventValueRules(t *testing.T) {
	neg := int64(-1)
	nan := 0.0
	nan = nan / nan
	tests := []struct {
		name string
		ev   Event
		code refusal.Code
		path string
	}{
		{"session id empty", &SessionEvent{}, refusal.CodeInvalidEvent, "/sessionId"},
		{"lifecycle status", &LifecycleEvent{Status: "paused"}, refusal.CodeInvalidEvent, "/status"},
		{"usage negative", &LifecycleEvent{Status: LifecycleCompleted, Usage: &Usage{TotalTokens: &neg}}, refusal.CodeInvalidEvent, "/usage/totalTokens"},
		{"usage NaN", &LifecycleEvent{Status: LifecycleCompleted, Usage: &Usage{CostUSD: &nan}}, refusal.CodeInvalidEvent, "/usage/costUsd"},
		{"tool call name", &ToolCallEvent{CallID: "c"}, refusal.CodeInvalidEvent, "/name"},
		{"provenance provider", &ProvenanceEvent{}, refusal.CodeInvalidEvent, "/provider"},
		{"error code", &ErrorEvent{Message: "m"}, refusal.CodeInvalidEvent, "/code"},
		{"error retry negative", &ErrorEvent{Code: "c", RetryAfterMs: &neg}, refusal.CodeInvalidEvent, "/retryAfterMs"},
		{"card correlation", &CardEvent{Card: cards.OpenCardSnapshot{CardSpec: cards.CardSpec{Prompt: "p"}}}, refusal.CodeInvalidCard, "/card/correlationId"},
		{"card created negative", &CardEvent{Card: cards.OpenCardSnapshot{CorrelationID: "k", CreatedAt: -1, CardSpec: cards.CardSpec{Prompt: "p"}}}, refusal.CodeInvalidCard, "/card/createdAt"},
		{"card closed id", &CardClosedEvent{}, refusal.CodeInvalidEvent, "/correlationId"},
		{"state version", &StateEvent{Version: -1, Snapshot: json.RawMessage(`{}`)}, refusal.CodeInvalidEvent, "/version"},
		{"state snapshot", &StateEvent{Version: 1}, refusal.CodeInvalidEvent, "/snapshot"},
		{"navigate href", &NavigateEvent{}, refusal.CodeInvalidEvent, "/href"},
		{"kept unknown shadows type", &DeltaEvent{Unknown: []Member{{Name: "Type", Value: json.RawMessage(`"x"`)}}}, refusal.CodeInvalidEvent, "/Type"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := appendEvent(nil, tt.ev, "")
			require.Error(t, err)
			assert.Equal(t, tt.code, refusal.CodeOf(err), "%v", err)
			assert.Equal(t, tt.path, err.(*refusal.Error).Path)
			check := writer{check: true}
			check.event(tt.ev, "")
			require.Error(t, check.err, "the check refuses what the encoding refuses")
			assert.Equal(t, tt.code, refusal.CodeOf(check.err))
			assert.Equal(t, tt.path, check.err.(*refusal.Error).Path)
		})
	}
}
