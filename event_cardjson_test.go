package chatprotocol_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	chatprotocol "github.com/Papercusp/chat-protocol-go"
	"github.com/Papercusp/chat-protocol-go/cards"
	"github.com/Papercusp/chat-protocol-go/refusal"
)

// storedCard is a card as a newer producer writes it: an unknown member at
// its top and in its presentation, strings holding <, > and &, an escape
// kept as written, and whitespace the canonical form drops.
const storedCard = `{ "correlationId":"c-1", "createdAt":1700000000000,
	"prompt":"Pick <one> & \u00e9go", "presentation":{"kind":"radio","options":[{"id":"a","label":"A&B"}],"zNew":[1,{"k":"<v>"}]},
	"futureMember":{"nested":"x > y"} }`

// canonicalStoredCard is storedCard without its insignificant whitespace.
const canonicalStoredCard = `{"correlationId":"c-1","createdAt":1700000000000,"prompt":"Pick <one> & \u00e9go","presentation":{"kind":"radio","options":[{"id":"a","label":"A&B"}],"zNew":[1,{"k":"<v>"}]},"futureMember":{"nested":"x > y"}}`

func cardEnvelope(card string) string {
	return `{"schemaVersion":1,"conversationId":"c","turnId":"t","eventId":"t:1","seq":1,"event":{"type":"card","card":` + card + `}}`
}

// TestCardJSONIsTheEnvelopesCardMember: the accessor's bytes are the card
// member of the event and envelope chatprotocol writes, whether the card
// was read (its bytes kept, unknown members and all), hand-built, or read
// and then changed (docs/contract.md sections 3 and 5.4).
func TestCardJSONIsTheEnvelopesCardMember(t *testing.T) {
	read, err := chatprotocol.ParseEnvelope([]byte(cardEnvelope(storedCard)))
	require.NoError(t, err)
	changed, err := chatprotocol.ParseEnvelope([]byte(cardEnvelope(storedCard)))
	require.NoError(t, err)
	changed.Event.(*chatprotocol.CardEvent).Card.Prompt = "Pick <two>"
	built := &chatprotocol.CardEvent{Card: cards.OpenCardSnapshot{CorrelationID: "c-2", CreatedAt: 5,
		CardSpec: cards.CardSpec{Prompt: "a < b & c", Presentation: &cards.CardPresentation{Kind: cards.CardKindText}}}}

	cases := map[string]struct {
		ev   *chatprotocol.CardEvent
		want string
	}{
		"read":    {read.Event.(*chatprotocol.CardEvent), canonicalStoredCard},
		"changed": {changed.Event.(*chatprotocol.CardEvent), `{"correlationId":"c-1","createdAt":1700000000000,"prompt":"Pick <two>","presentation":{"kind":"radio","options":[{"id":"a","label":"A&B"}]}}`},
		"built":   {built, `{"correlationId":"c-2","createdAt":5,"prompt":"a < b & c","presentation":{"kind":"text"}}`},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := c.ev.CardJSON()
			require.NoError(t, err)
			assert.Equal(t, c.want, string(got))
			event, err := c.ev.MarshalJSON()
			require.NoError(t, err)
			assert.Equal(t, `{"type":"card","card":`+string(got)+`}`, string(event))
			env := chatprotocol.ChatEventEnvelope{ConversationID: "c", TurnID: "t", EventID: "t:1", Seq: 1, Event: c.ev}
			frame, err := env.AppendJSON(nil)
			require.NoError(t, err)
			assert.Equal(t, cardEnvelope(string(got)), string(frame))
		})
	}
}

// TestCardJSONRefusesWhatTheEnvelopeRefuses: a card that breaks section 3
// is invalid-card, at its pointer within the card; a nil event too.
func TestCardJSONRefusesWhatTheEnvelopeRefuses(t *testing.T) {
	bad := &chatprotocol.CardEvent{Card: cards.OpenCardSnapshot{CorrelationID: "c-1", CreatedAt: 1,
		CardSpec: cards.CardSpec{Prompt: "p", Presentation: &cards.CardPresentation{Kind: cards.CardKindRadio}}}}
	_, err := bad.CardJSON()
	assert.Equal(t, refusal.CodeInvalidCard, refusal.CodeOf(err))
	_, marshalErr := bad.MarshalJSON()
	assert.Equal(t, refusal.CodeInvalidCard, refusal.CodeOf(marshalErr))
	var re, me *refusal.Error
	require.ErrorAs(t, err, &re)
	require.ErrorAs(t, marshalErr, &me)
	assert.Equal(t, "/card"+re.Path, me.Path)

	_, err = (*chatprotocol.CardEvent)(nil).CardJSON()
	assert.Equal(t, refusal.CodeInvalidCard, refusal.CodeOf(err))

	invalidUTF8 := &chatprotocol.CardEvent{Card: cards.OpenCardSnapshot{CorrelationID: "c-1", CreatedAt: 1,
		CardSpec: cards.CardSpec{Prompt: "p\xff", Presentation: &cards.CardPresentation{Kind: cards.CardKindText}}}}
	_, err = invalidUTF8.CardJSON()
	require.ErrorAs(t, err, &re)
	assert.Equal(t, refusal.CodeInvalidCard, re.Code)
	assert.Equal(t, "/prompt", re.Path)
}
