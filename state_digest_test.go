package chatprotocol

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/Papercusp/chat-protocol-go/cards"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// forms returns an envelope's canonical JSON and its digest form.
func forms(t *testing.T, env ChatEventEnvelope) (canon, digest []byte) {
	t.Helper()
	canon, err := env.AppendJSON(nil)
	require.NoError(t, err)
	digest, err = env.appendForm(nil, true)
	require.NoError(t, err)
	return canon, digest
}

// TestDigestFormIsOneToOneWithCanonicalJSON: two envelopes have the same
// digest form exactly when they have the same canonical JSON, so Apply,
// which hashes the digest form, tells an identical redelivery from another
// envelope as the canonical JSON does.
func TestDigestFormIsOneToOneWithCanonicalJSON(t *testing.T) {
	env := func(ev Event) ChatEventEnvelope {
		return ChatEventEnvelope{ConversationID: "c", TurnID: "t", EventID: "e", Seq: 1, Event: ev}
	}
	zero, n := int64(0), int64(7)
	card := cards.OpenCardSnapshot{CorrelationID: "k", CreatedAt: 1, CardSpec: cards.CardSpec{Prompt: "Go on?"}}
	written, err := json.Marshal(env(&CardEvent{Card: card}))
	require.NoError(t, err)
	parsed, err := ParseEnvelope(written) // the same card, its JSON kept
	require.NoError(t, err)
	withUnknown, err := ParseEnvelope(bytes.Replace(written, []byte(`"prompt"`), []byte(`"x-note":1,"prompt"`), 1))
	require.NoError(t, err)

	tests := []struct {
		name string
		a, b ChatEventEnvelope
		same bool
	}{
		{"one string, two members", env(&ProvenanceEvent{Provider: "p", Model: "x"}), env(&ProvenanceEvent{Provider: "p", RequestID: "x"}), false},
		{"a boundary between strings", env(&ToolCallEvent{CallID: "ab", Name: "c"}), env(&ToolCallEvent{CallID: "a", Name: "bc"}), false},
		{"a string that looks like the member after it", env(&ProvenanceEvent{Provider: "p", Model: "m"}), env(&ProvenanceEvent{Provider: `p,"model":m`}), false},
		{"a string holding a length", env(&DeltaEvent{Text: "\x01\x00\x00\x00\x00\x00\x00\x00x"}), env(&DeltaEvent{Text: "\x01"}), false},
		{"an escape", env(&DeltaEvent{Text: `a"b`}), env(&DeltaEvent{Text: `a\"b`}), false},
		{"an empty required string", env(&DeltaEvent{}), env(&DeltaEvent{Text: "\x00"}), false},
		{"an integer", ChatEventEnvelope{ConversationID: "c", TurnID: "t", EventID: "e", Seq: 1, Event: &DeltaEvent{}},
			ChatEventEnvelope{ConversationID: "c", TurnID: "t", EventID: "e", Seq: 257, Event: &DeltaEvent{}}, false},
		{"an integer absent or 0", env(&ErrorEvent{Code: "x", Message: "m"}), env(&ErrorEvent{Code: "x", Message: "m", RetryAfterMs: &zero}), false},
		{"a nested integer", env(&LifecycleEvent{Status: LifecycleCompleted, Usage: &Usage{TotalTokens: &n}}), env(&LifecycleEvent{Status: LifecycleCompleted, Usage: &Usage{}}), false},
		{"a raw member's whitespace", env(&ToolCallEvent{CallID: "a", Name: "n", Input: json.RawMessage(`{"q": [1, 2]}`)}),
			env(&ToolCallEvent{CallID: "a", Name: "n", Input: json.RawMessage(`{"q":[1,2]}`)}), true},
		{"a kept member's whitespace", env(&DeltaEvent{Text: "x", Unknown: []Member{{Name: "x-a", Value: json.RawMessage(` [ true ] `)}}}),
			env(&DeltaEvent{Text: "x", Unknown: []Member{{Name: "x-a", Value: json.RawMessage(`[true]`)}}}), true},
		{"a card built or read", env(&CardEvent{Card: card}), parsed, true},
		{"a card's own unknown member", parsed, withUnknown, false},
		{"a text block's text", env(&ResultEvent{Blocks: []ResultBlock{{Kind: ResultBlockText, Text: "ab", Sources: []Source{{Ref: "c"}}}}}),
			env(&ResultEvent{Blocks: []ResultBlock{{Kind: ResultBlockText, Text: "a", Sources: []Source{{Ref: "bc"}}}}}), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			canonA, digestA := forms(t, tt.a)
			canonB, digestB := forms(t, tt.b)
			require.Equal(t, tt.same, bytes.Equal(canonA, canonB), "the case's canonical JSON: %s and %s", canonA, canonB)
			assert.Equal(t, tt.same, bytes.Equal(digestA, digestB), "digest forms %q and %q", digestA, digestB)
		})
	}
}

// FuzzDigestForm builds two envelopes of one event type from fuzzed parts
// and checks that their digest forms are equal exactly when their
// canonical JSON is.
func FuzzDigestForm(f *testing.F) {
	f.Add("c", "ab", "a", []byte(`{"a": 1}`), []byte(`{"a":1}`), uint8(1))
	f.Add("c", "x\"", "x\\\"", []byte(`1`), []byte(`1`), uint8(0))
	f.Add("c", "p", "p", []byte(` [2] `), []byte(`[2]`), uint8(10))
	f.Add("k", "Go on?", "Go on", []byte(`null`), []byte(`null`), uint8(5))
	f.Add("c", "\x08", "\b", []byte(`"\u0041"`), []byte(`"A"`), uint8(6))
	f.Fuzz(func(t *testing.T, id, textA, textB string, rawA, rawB []byte, kind uint8) {
		a := fuzzedEnvelope(id, textA, rawA, "x-a", rawA, kind)
		b := fuzzedEnvelope(id, textB, rawB, "x-a", rawB, kind)
		canonA, errA := a.AppendJSON(nil)
		canonB, errB := b.AppendJSON(nil)
		if errA != nil || errB != nil {
			return // FuzzValidate checks the refusals
		}
		digestA, err := a.appendForm(nil, true)
		require.NoError(t, err)
		digestB, err := b.appendForm(nil, true)
		require.NoError(t, err)
		if bytes.Equal(canonA, canonB) != bytes.Equal(digestA, digestB) {
			t.Fatalf("canonical JSON %s and %s, digest forms %q and %q", canonA, canonB, digestA, digestB)
		}
	})
}

// TestDigestFormKeepsEveryComma: a value of the digest form never ends
// with '{', which the writer reads as the start of an object, so the
// comma before the next member is always written, as in the canonical
// JSON, whatever bytes a string or an integer holds.
func TestDigestFormKeepsEveryComma(t *testing.T) {
	late := int64(0x7b) << 56 // its last byte, little-endian, is '{'
	kept := []Member{{Name: "x-a", Value: json.RawMessage(`1`)}}
	for _, ev := range []Event{
		&ProvenanceEvent{Provider: "p{", Model: "m", Unknown: kept},
		&ErrorEvent{Code: "c", Message: "m", RetryAfterMs: &late, Unknown: kept},
	} {
		canon, digest := forms(t, ChatEventEnvelope{ConversationID: "c", TurnID: "t", EventID: "e", Seq: 1, Event: ev})
		for _, name := range []string{`"turnId":`, `"eventId":`, `"seq":`, `"event":`, `"x-a":`} {
			assert.Contains(t, string(canon), ","+name)
			assert.Contains(t, string(digest), ","+name, "the digest form of %s", canon)
		}
	}
	_, digest := forms(t, ChatEventEnvelope{ConversationID: "c", TurnID: "t", EventID: "e", Seq: 1, Event: &ProvenanceEvent{Provider: "p{", Model: "m"}})
	assert.Contains(t, string(digest), `,"model":`)
}
