package chatprotocol

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/Papercusp/chat-protocol-go/cards"
	"github.com/Papercusp/chat-protocol-go/refusal"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// env builds the envelope of turn t-1 of conversation c-1 with the given
// seq and event.
func env(seq int64, ev Event) ChatEventEnvelope {
	return ChatEventEnvelope{ConversationID: "c-1", TurnID: "t-1", EventID: fmt.Sprintf("e-%d", seq), Seq: seq, Event: ev}
}

func applyAll(t *testing.T, s *ChatStateV1, envs ...ChatEventEnvelope) {
	t.Helper()
	for _, e := range envs {
		require.NoError(t, s.Apply(e), "seq %d", e.Seq)
	}
}

// stateJSON returns the state's JSON; it also proves the state unchanged
// when compared before and after a refused Apply.
func stateJSON(t *testing.T, s *ChatStateV1) string {
	t.Helper()
	b, err := s.MarshalJSON()
	require.NoError(t, err)
	return string(b)
}

func TestApplyFoldsATurn(t *testing.T) {
	tokens := int64(431)
	s := NewChatStateV1("c-1")
	applyAll(t, s,
		env(1, &LifecycleEvent{Status: LifecycleStarted}),
		env(2, &SessionEvent{SessionID: "s-1"}),
		env(3, &ProvenanceEvent{Provider: "anthropic", Model: "m"}),
		env(4, &ToolCallEvent{CallID: "call-1", Name: "search", Input: json.RawMessage(`{"q":"x"}`)}),
		env(5, &ToolResultEvent{CallID: "call-1", Status: ToolResultOK, Output: json.RawMessage(`{"hits":2}`)}),
		env(6, &DeltaEvent{Text: "Refunds are "}),
		env(7, &DeltaEvent{Text: "accepted."}),
		env(8, &ResultEvent{Blocks: []ResultBlock{{Kind: ResultBlockText, Text: "Refunds are accepted.", Sources: []Source{{Ref: "doc:1"}}}}}),
		env(9, &CardEvent{Card: cards.OpenCardSnapshot{CorrelationID: "k-1", CreatedAt: 5, CardSpec: cards.CardSpec{Prompt: "Sure?"}}}),
		env(10, &CardEvent{Card: cards.OpenCardSnapshot{CorrelationID: "k-2", CreatedAt: 6, CardSpec: cards.CardSpec{Prompt: "Size?"}}}),
		env(11, &CardEvent{Card: cards.OpenCardSnapshot{CorrelationID: "k-1", CreatedAt: 7, CardSpec: cards.CardSpec{Prompt: "Really sure?"}}}),
		env(12, &CardClosedEvent{CorrelationID: "k-2"}),
		env(13, &StateEvent{Version: 3, Snapshot: json.RawMessage(`{"inbox":2}`)}),
		env(14, &CapabilitiesEvent{Capabilities: ChatCapabilities{ConnectionReplay: true}}),
		env(15, &NavigateEvent{Href: "/x"}),
		env(16, &ErrorEvent{Code: "late", Message: "slow", Retryable: true}),
		env(17, &LifecycleEvent{Status: LifecycleCompleted, Usage: &Usage{TotalTokens: &tokens}, Reason: "end"}),
	)
	assert.JSONEq(t, `{"schemaVersion":1,"conversationId":"c-1","sessionId":"s-1",
		"capabilities":{"connectionReplay":true,"persistedHistory":false,"persistedDecisions":false,"completedToolCheckpoints":false,"interruptedTurnRecovery":false},
		"turns":[{"turnId":"t-1","status":"completed","lastSeq":17,"text":"Refunds are accepted.",
			"toolCalls":[{"callId":"call-1","name":"search","input":{"q":"x"},"status":"ok","output":{"hits":2}}],
			"results":[{"kind":"text","text":"Refunds are accepted.","sources":[{"ref":"doc:1"}]}],
			"error":{"code":"late","message":"slow","retryable":true},
			"provenance":[{"provider":"anthropic","model":"m"}],"steps":[],
			"usage":{"totalTokens":431},"reason":"end"}],
		"openCards":[{"correlationId":"k-1","createdAt":7,"prompt":"Really sure?"}],
		"state":{"version":3,"snapshot":{"inbox":2}}}`, stateJSON(t, s))
	turn, ok := s.Turn("t-1")
	require.True(t, ok)
	assert.Equal(t, "Refunds are accepted.", turn.Text())
}

func TestApplyRefusals(t *testing.T) {
	call := env(1, &ToolCallEvent{CallID: "call-1", Name: "n"})
	tests := []struct {
		name  string
		prior []ChatEventEnvelope
		next  ChatEventEnvelope
		code  refusal.Code
		path  string
	}{
		{"foreign conversation", []ChatEventEnvelope{env(1, &DeltaEvent{})},
			ChatEventEnvelope{ConversationID: "c-2", TurnID: "t-1", EventID: "e", Seq: 2, Event: &DeltaEvent{}}, refusal.CodeForeignFrame, "/conversationId"},
		{"first seq not 1", nil, env(2, &DeltaEvent{}), refusal.CodeSequenceGap, "/seq"},
		{"gap", []ChatEventEnvelope{env(1, &DeltaEvent{})}, env(3, &DeltaEvent{}), refusal.CodeSequenceGap, "/seq"},
		{"reordered", []ChatEventEnvelope{env(1, &DeltaEvent{Text: "a"}), env(2, &DeltaEvent{Text: "b"})}, env(1, &DeltaEvent{Text: "c"}), refusal.CodeSequenceReordered, "/seq"},
		{"same seq other event id", []ChatEventEnvelope{env(1, &DeltaEvent{Text: "a"})},
			ChatEventEnvelope{ConversationID: "c-1", TurnID: "t-1", EventID: "other", Seq: 1, Event: &DeltaEvent{Text: "a"}}, refusal.CodeSequenceReordered, "/seq"},
		{"unknown call", []ChatEventEnvelope{call}, env(2, &ToolResultEvent{CallID: "call-2", Status: ToolResultOK}), refusal.CodeUnknownCall, "/event/callId"},
		{"result of a call of another turn", []ChatEventEnvelope{call},
			ChatEventEnvelope{ConversationID: "c-1", TurnID: "t-2", EventID: "e", Seq: 1, Event: &ToolResultEvent{CallID: "call-1", Status: ToolResultOK}}, refusal.CodeUnknownCall, "/event/callId"},
		{"second result", []ChatEventEnvelope{call, env(2, &ToolResultEvent{CallID: "call-1", Status: ToolResultOK})},
			env(3, &ToolResultEvent{CallID: "call-1", Status: ToolResultError}), refusal.CodeInvalidEvent, "/event/callId"},
		{"call id reused", []ChatEventEnvelope{call}, env(2, &ToolCallEvent{CallID: "call-1", Name: "m"}), refusal.CodeInvalidEvent, "/event/callId"},
		{"delta after completed", []ChatEventEnvelope{env(1, &LifecycleEvent{Status: LifecycleCompleted})}, env(2, &DeltaEvent{}), refusal.CodeTurnTerminated, "/event"},
		{"lifecycle after failed", []ChatEventEnvelope{env(1, &LifecycleEvent{Status: LifecycleFailed})}, env(2, &LifecycleEvent{Status: LifecycleStarted}), refusal.CodeTurnTerminated, "/event"},
		{"card after cancelled", []ChatEventEnvelope{env(1, &LifecycleEvent{Status: LifecycleCancelled})},
			env(2, &CardClosedEvent{CorrelationID: "k"}), refusal.CodeTurnTerminated, "/event"},
		{"new call after cancelled", []ChatEventEnvelope{call, env(2, &LifecycleEvent{Status: LifecycleCancelled})},
			env(3, &ToolCallEvent{CallID: "call-2", Name: "n"}), refusal.CodeTurnTerminated, "/event"},
		{"second result after cancelled", []ChatEventEnvelope{call, env(2, &ToolResultEvent{CallID: "call-1", Status: ToolResultOK}), env(3, &LifecycleEvent{Status: LifecycleCancelled})},
			env(4, &ToolResultEvent{CallID: "call-1", Status: ToolResultOK}), refusal.CodeTurnTerminated, "/event"},
		{"invalid envelope", nil, ChatEventEnvelope{ConversationID: "c-1", TurnID: "t-1", EventID: "e", Seq: 1}, refusal.CodeInvalidEnvelope, "/event"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := NewChatStateV1("c-1")
			applyAll(t, s, tt.prior...)
			before := stateJSON(t, s)
			err := s.Apply(tt.next)
			require.Error(t, err)
			assert.Equal(t, tt.code, refusal.CodeOf(err), "%v", err)
			assert.Equal(t, tt.path, err.(*refusal.Error).Path)
			assert.Equal(t, before, stateJSON(t, s), "a refused envelope changes nothing")
		})
	}
}

func TestApplyIdenticalRedeliveryIsANoOp(t *testing.T) {
	s := NewChatStateV1("c-1")
	first := env(1, &DeltaEvent{Text: "a"})
	second := env(2, &DeltaEvent{Text: "b"})
	applyAll(t, s, first, second)
	before := stateJSON(t, s)
	require.NoError(t, s.Apply(first))
	require.NoError(t, s.Apply(second))
	again, err := ParseEnvelope([]byte(`{"schemaVersion":1,"turnId":"t-1","conversationId":"c-1","eventId":"e-1","seq":1.0,"event":{"text":"a","type":"delta"}}`))
	require.NoError(t, err)
	require.NoError(t, s.Apply(again), "the same envelope in other bytes is still the same envelope")
	assert.Equal(t, before, stateJSON(t, s))
	turn, _ := s.Turn("t-1")
	assert.Equal(t, "ab", turn.Text())

	ended := NewChatStateV1("c-1")
	done := env(2, &LifecycleEvent{Status: LifecycleCompleted})
	applyAll(t, ended, first, done)
	require.NoError(t, ended.Apply(done), "redelivery after the end is still a no-op")
}

func TestApplyLateToolResultAfterCancellation(t *testing.T) {
	s := NewChatStateV1("c-1")
	applyAll(t, s,
		env(1, &ToolCallEvent{CallID: "call-1", Name: "charge"}),
		env(2, &ToolCallEvent{CallID: "call-2", Name: "email"}),
		env(3, &ToolResultEvent{CallID: "call-2", Status: ToolResultOK}),
		env(4, &LifecycleEvent{Status: LifecycleCancelled, Reason: "user stop"}),
		env(5, &ToolResultEvent{CallID: "call-1", Status: ToolResultOK, Output: json.RawMessage(`{"charged":true}`)}),
	)
	turn, _ := s.Turn("t-1")
	assert.Equal(t, LifecycleCancelled, turn.Status, "the late result does not reopen the turn")
	assert.Equal(t, int64(5), turn.LastSeq)
	assert.Equal(t, ToolCallStatus(ToolResultOK), turn.ToolCalls[0].Status)
	assert.JSONEq(t, `{"charged":true}`, string(turn.ToolCalls[0].Output))
	require.ErrorIs(t, s.Apply(env(6, &DeltaEvent{Text: "x"})), refusal.ErrTurnTerminated)
}

func TestApplyInterruptedAndReconciliationAreNotTerminal(t *testing.T) {
	for _, st := range []LifecycleStatus{LifecycleInterrupted, LifecycleNeedsReconciliation} {
		s := NewChatStateV1("c-1")
		applyAll(t, s, env(1, &LifecycleEvent{Status: st}), env(2, &DeltaEvent{Text: "go on"}), env(3, &LifecycleEvent{Status: LifecycleCompleted}))
		turn, _ := s.Turn("t-1")
		assert.Equal(t, LifecycleCompleted, turn.Status)
	}
}

func TestApplyTurnsAreIndependent(t *testing.T) {
	var s ChatStateV1 // the zero value binds the first conversation
	a := ChatEventEnvelope{ConversationID: "c-9", TurnID: "a", EventID: "1", Seq: 1, Event: &DeltaEvent{Text: "A"}}
	b := ChatEventEnvelope{ConversationID: "c-9", TurnID: "b", EventID: "2", Seq: 1, Event: &DeltaEvent{Text: "B"}}
	applyAll(t, &s, a, b)
	assert.Equal(t, "c-9", s.ConversationID)
	require.Len(t, s.Turns, 2)
	assert.Equal(t, "a", s.Turns[0].TurnID)
	assert.Equal(t, "b", s.Turns[1].TurnID)
	require.ErrorIs(t, s.Apply(ChatEventEnvelope{ConversationID: "c-8", TurnID: "a", EventID: "3", Seq: 2, Event: &DeltaEvent{}}), refusal.ErrForeignFrame)
}

func TestEmptyStateJSON(t *testing.T) {
	assert.Equal(t, `{"schemaVersion":1,"conversationId":"c-1","turns":[],"openCards":[]}`, stateJSON(t, NewChatStateV1("c-1")))
}

func TestApplyDoesNotRetainFrames(t *testing.T) {
	s := NewChatStateV1("c-1")
	data := []byte(`{"schemaVersion":1,"conversationId":"c-1","turnId":"t-1","eventId":"e-1","seq":1,"event":{"type":"tool_call","callId":"call-1","name":"n"}}`)
	e, err := ParseEnvelope(data)
	require.NoError(t, err)
	require.NoError(t, s.Apply(e))
	call := s.Turns[0].ToolCalls[0]
	// The state's strings are clones: not substrings of the envelope's copy.
	assert.NotSame(t, unsafeStringData(e.Event.(*ToolCallEvent).CallID), unsafeStringData(call.CallID))
}

// TestStateIsNotReadFromJSON: decoding a state's JSON fails with
// ErrChatStateWriteOnly, with encoding/json and with a decoder of the
// JSON v2 API alike, and leaves the target unchanged.
func TestStateIsNotReadFromJSON(t *testing.T) {
	s := NewChatStateV1("c-1")
	applyAll(t, s, env(1, &DeltaEvent{Text: "Hel"}))
	data := stateJSON(t, s)

	var into ChatStateV1
	require.ErrorIs(t, json.Unmarshal([]byte(data), &into), ErrChatStateWriteOnly)
	assert.Empty(t, into.ConversationID)
	assert.Empty(t, into.Turns)
	require.ErrorIs(t, jsonv2.Unmarshal([]byte(data), &into), ErrChatStateWriteOnly)

	var holder struct{ State *ChatStateV1 }
	require.ErrorIs(t, json.Unmarshal([]byte(`{"State":`+data+`}`), &holder), ErrChatStateWriteOnly)
}

// writeLog is an io.Writer that keeps what it is given and the size of
// its largest write, and fails once it holds failAfter bytes (never when 0).
type writeLog struct {
	bytes.Buffer
	writes, largest, failAfter int
}

var errWriteFailed = errors.New("write failed")

func (l *writeLog) Write(p []byte) (int, error) {
	if l.failAfter > 0 && l.Len() >= l.failAfter {
		return 0, errWriteFailed
	}
	l.writes++
	l.largest = max(l.largest, len(p))
	return l.Buffer.Write(p)
}

// longState returns a state of three turns with texts of n bytes each,
// holding runes of 1 to 4 bytes and characters JSON escapes, so that
// pieces are cut at every kind of place, and 500 open cards.
func longState(t testing.TB, n int) *ChatStateV1 {
	s := NewChatStateV1("c-1")
	pieces := []string{"plain text ", "naïve ", "€ ", "👟", "\"quoted\" ", "tab\t", "\x01", "line\n"}
	for _, turn := range []string{"t-1", "t-2", "t-3"} {
		var seq int64
		apply := func(ev Event) {
			seq++
			require.NoError(t, s.Apply(ChatEventEnvelope{ConversationID: "c-1", TurnID: turn, EventID: turn + strconv.FormatInt(seq, 10), Seq: seq, Event: ev}))
		}
		var b strings.Builder
		for i, written := 0, 0; written+b.Len() < n; i++ {
			b.WriteString(pieces[i%len(pieces)])
			if b.Len() > 4000 {
				apply(&DeltaEvent{Text: b.String()})
				written += b.Len()
				b.Reset()
			}
		}
		apply(&DeltaEvent{Text: b.String()})
		apply(&ToolCallEvent{CallID: "call-1", Name: "search", Input: json.RawMessage(`{"q":"x"}`)})
		for i := range 500 / 3 {
			apply(openCard(turn+"-card-"+strconv.Itoa(i), 1))
		}
	}
	return s
}

func TestWriteJSONWritesMarshalJSON(t *testing.T) {
	states := map[string]*ChatStateV1{"empty": NewChatStateV1("c-1"), "long": longState(t, 3*flushBytes+17)}
	small := NewChatStateV1("c-1")
	applyAll(t, small, twoTurns()[:17]...)
	states["two turns"] = small
	for name, s := range states {
		want, err := s.MarshalJSON()
		require.NoError(t, err)
		var got writeLog
		require.NoError(t, s.WriteJSON(&got), name)
		assert.Equal(t, string(want), got.String(), name)
		assert.LessOrEqual(t, got.largest, 2*flushBytes, "%s: written in pieces", name)
	}
}

// TestWriteJSONHoldsOnePiece: however long a turn's text, WriteJSON hands
// it on in pieces, never the whole text at once.
func TestWriteJSONHoldsOnePiece(t *testing.T) {
	s := longState(t, 2<<20)
	var got writeLog
	require.NoError(t, s.WriteJSON(&got))
	assert.Greater(t, got.writes, 3*(2<<20)/(2*flushBytes), "many writes")
	assert.LessOrEqual(t, got.largest, 2*flushBytes)
	assert.True(t, json.Valid(got.Bytes()))
}

func TestWriteJSONStopsAtTheFirstWriteError(t *testing.T) {
	s := longState(t, 1<<20)
	log := writeLog{failAfter: 3 * flushBytes}
	err := s.WriteJSON(&log)
	require.ErrorIs(t, err, errWriteFailed)
	assert.Equal(t, refusal.CodeOf(err), refusal.Code(""), "a write error is not a refusal")
	assert.Less(t, log.Len(), 3*flushBytes+2*flushBytes, "nothing is written after the error")
}
