package chatprotocol

import (
	"encoding/json"
	"slices"
	"strconv"
	"testing"

	"github.com/Papercusp/chat-protocol-go/cards"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"
)

func openCard(id string, createdAt int64) *CardEvent {
	return &CardEvent{Card: cards.OpenCardSnapshot{CorrelationID: id, CreatedAt: createdAt, CardSpec: cards.CardSpec{Prompt: "q " + id}}}
}

// openCardIDs returns the correlation ids of the state's open cards, in
// the order OpenCards gives them.
func openCardIDs(s *ChatStateV1) []string {
	var ids []string
	for _, c := range s.OpenCards() {
		ids = append(ids, c.CorrelationID)
	}
	return ids
}

// jsonCardIDs returns the correlation ids of the state's JSON openCards.
func jsonCardIDs(t *testing.T, s *ChatStateV1) []string {
	t.Helper()
	var doc struct {
		OpenCards []struct {
			CorrelationID string `json:"correlationId"`
		} `json:"openCards"`
	}
	require.NoError(t, json.Unmarshal([]byte(stateJSON(t, s)), &doc))
	var ids []string
	for _, c := range doc.OpenCards {
		ids = append(ids, c.CorrelationID)
	}
	return ids
}

func TestOpenCardsOrder(t *testing.T) {
	s := NewChatStateV1("c-1")
	applyAll(t, s,
		env(1, openCard("k-1", 1)),
		env(2, openCard("k-2", 2)),
		env(3, openCard("k-3", 3)),
		env(4, openCard("k-1", 4)), // replaced in place
		env(5, &CardClosedEvent{CorrelationID: "k-2"}),
		env(6, &CardClosedEvent{CorrelationID: "k-9"}), // not open: nothing to close
		env(7, openCard("k-2", 7)),                     // opened again: at the end
	)
	assert.Equal(t, []string{"k-1", "k-3", "k-2"}, openCardIDs(s))
	assert.Equal(t, []string{"k-1", "k-3", "k-2"}, jsonCardIDs(t, s))
	c, ok := s.OpenCard("k-1")
	require.True(t, ok)
	assert.Equal(t, int64(4), c.CreatedAt)
	_, ok = s.OpenCard("k-9")
	assert.False(t, ok)

	got := s.OpenCards()
	got[0].Prompt = "changed by the caller"
	again, _ := s.OpenCard("k-1")
	assert.Equal(t, "q k-1", again.Prompt, "OpenCards returns a copy")

	applyAll(t, s, env(8, &CardClosedEvent{CorrelationID: "k-1"}), env(9, &CardClosedEvent{CorrelationID: "k-3"}), env(10, &CardClosedEvent{CorrelationID: "k-2"}))
	assert.Empty(t, s.OpenCards())
	assert.Equal(t, []any{}, decodeMember(t, s, "openCards"), "an empty list is still written")
}

// decodeMember returns the member name of the state's JSON, decoded.
func decodeMember(t *testing.T, s *ChatStateV1, name string) any {
	t.Helper()
	var doc map[string]any
	require.NoError(t, json.Unmarshal([]byte(stateJSON(t, s)), &doc))
	return doc[name]
}

// TestOpenCardsMatchAList: whatever cards are opened, replaced and closed,
// the open cards are those of a plain ordered list doing the same, in its
// order, through OpenCards, OpenCard and the JSON form.
func TestOpenCardsMatchAList(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := NewChatStateV1("c-1")
		type card struct {
			id      string
			created int64
		}
		var model []card
		steps := rapid.IntRange(1, 300).Draw(t, "steps")
		for seq := int64(1); seq <= int64(steps); seq++ {
			id := "k-" + strconv.Itoa(rapid.IntRange(0, 20).Draw(t, "card"))
			i := slices.IndexFunc(model, func(c card) bool { return c.id == id })
			var ev Event
			if rapid.Bool().Draw(t, "open") {
				ev = openCard(id, seq)
				if i >= 0 {
					model[i].created = seq
				} else {
					model = append(model, card{id, seq})
				}
			} else {
				ev = &CardClosedEvent{CorrelationID: id}
				if i >= 0 {
					model = slices.Delete(model, i, i+1)
				}
			}
			if err := s.Apply(env(seq, ev)); err != nil {
				t.Fatal(err)
			}
		}
		var want []string
		for _, c := range model {
			want = append(want, c.id)
			got, ok := s.OpenCard(c.id)
			if !ok || got.CreatedAt != c.created {
				t.Fatalf("OpenCard(%q) = %+v, %v; want createdAt %d", c.id, got, ok, c.created)
			}
		}
		if got := openCardIDs(s); !slices.Equal(got, want) {
			t.Fatalf("OpenCards %v, want %v", got, want)
		}
		b, err := s.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		var doc struct {
			OpenCards []struct {
				CorrelationID string `json:"correlationId"`
				CreatedAt     int64  `json:"createdAt"`
			} `json:"openCards"`
		}
		if err := json.Unmarshal(b, &doc); err != nil {
			t.Fatal(err)
		}
		if len(doc.OpenCards) != len(model) {
			t.Fatalf("JSON has %d open cards, want %d", len(doc.OpenCards), len(model))
		}
		for i, c := range doc.OpenCards {
			if c.CorrelationID != model[i].id || c.CreatedAt != model[i].created {
				t.Fatalf("JSON open card %d is %+v, want %+v", i, c, model[i])
			}
		}
	})
}
