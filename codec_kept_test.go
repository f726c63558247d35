package chatprotocol

import (
	"math"
	"strconv"
	"testing"

	"github.com/Papercusp/chat-protocol-go/cards"
	"github.com/Papercusp/chat-protocol-go/refusal"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Papercusp/chat-protocol-go/blocks"
)

func TestFoldCollision(t *testing.T) {
	tests := map[string]string{
		`{"a":1,"b":{"x":[{"ID":1,"id":2}]}}`: "/b/x/0/ID",
		`{"prompt":"p","Prompt":"q"}`:         "/Prompt",
		`{"k":1,"\u212a":2}`:                  "/k",
		`{"a":[1,2,{"b":{}}]}`:                "",
		// The least name that has a variant, not the first variant met.
		`{"a":1,"b":2,"B":3,"K":4,"k":5}`:       "/B",
		`{"s":1,"ſ":2,"S":3}`:                   "/S",
		`{"x":{"K":1,"K":2},"y":{"a":1,"A":2}}`: "/x/K",
	}
	for in, want := range tests {
		err := decodeKept([]byte(in), new(blocks.AskBlock), refusal.CodeInvalidEvent, "")
		if want == "" {
			assert.NoError(t, err, in)
			continue
		}
		require.ErrorIs(t, err, refusal.ErrInvalidEnvelope, in)
		assert.Equal(t, want, err.(*refusal.Error).Path, in)
	}
}

// TestDecodeKeptRefusesVariantsOfKnownMembers: a name that differs only by
// case from a member of the card or block type is refused even alone, at
// every level, as "TYPE" is in an event; names inside kept unknown members
// are compared only with each other.
func TestDecodeKeptRefusesVariantsOfKnownMembers(t *testing.T) {
	card := func(members string) string {
		return `{"correlationId":"k","createdAt":1,"prompt":"p"` + members + `}`
	}
	tests := []struct {
		name, in string
		dst      any
		want     string // the refused member's pointer, "" when accepted
	}{
		{"card presentation alone", card(`,"Presentation":{"kind":"radio","options":[{"id":"a","label":"A"}]}`), new(cards.OpenCardSnapshot), "/Presentation"},
		{"card member of the embedded spec", card(`,"TimeoutMs":5`), new(cards.OpenCardSnapshot), "/TimeoutMs"},
		{"card member of the snapshot", card(`,"dataSchemaJSON":"{}"`), new(cards.OpenCardSnapshot), "/dataSchemaJSON"},
		{"long s in an option", card(`,"presentation":{"kind":"radio","options":[{"id":"a","label":"A","ſtyle":"danger"}]}`), new(cards.OpenCardSnapshot), "/presentation/options/0/ſtyle"},
		{"kelvin sign in a presentation", card(`,"presentation":{"\u212aind":"text"}`), new(cards.OpenCardSnapshot), "/presentation/\u212aind"},
		{"report of a card", card(`,"report":{"plans":[{"title":"t","Items":[{"text":"x"}]}]}`), new(cards.OpenCardSnapshot), "/report/plans/0/Items"},
		{"ask refs alone", `{"question":"q","Refs":["r"]}`, new(blocks.AskBlock), "/Refs"},
		{"ask option label", `{"question":"q","options":[{"id":"a","label":"A","LABEL":"B"}]}`, new(blocks.AskBlock), "/options/0/LABEL"},
		{"report item", `{"plans":[{"title":"t","items":[{"text":"x","Ref":"r"}]}]}`, new(blocks.ReportBlock), "/plans/0/items/0/Ref"},
		{"least variant first", `{"question":"q","Refs":[],"Options":[]}`, new(blocks.AskBlock), "/Options"},
		{"inside an unknown member, only its own names", card(`,"icon":{"Prompt":1,"Kind":2}`), new(cards.OpenCardSnapshot), ""},
		{"near misses are other names", card(`,"prompts":1,"prompt\u0000":2`), new(cards.OpenCardSnapshot), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := decodeKept([]byte(tt.in), tt.dst, refusal.CodeInvalidCard, "")
			if tt.want == "" {
				assert.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, refusal.ErrInvalidEnvelope)
			want, uerr := strconv.Unquote(`"` + tt.want + `"`)
			require.NoError(t, uerr)
			assert.Equal(t, want, err.(*refusal.Error).Path)
		})
	}
}

func TestDecodeKeptRefusesWrongTypesAtTheirPath(t *testing.T) {
	var r blocks.ReportBlock
	err := decodeKept([]byte(`{"plans":[{"title":5}]}`), &r, refusal.CodeInvalidEvent, "/event/blocks/0/report")
	require.ErrorIs(t, err, refusal.ErrInvalidEvent)
	assert.Equal(t, "/event/blocks/0/report/plans/0/title", err.(*refusal.Error).Path)
	err = decodeKept([]byte(`{"plans":[],"plans":[]}`), &r, refusal.CodeInvalidEvent, "/r")
	require.ErrorIs(t, err, refusal.ErrInvalidEnvelope)
}

// keptJSON writes v with writeKept after prefix, or only checks it.
func keptJSON[T any](prefix string, v *T, kept []byte, check bool) ([]byte, error) {
	w := writer{dst: []byte(prefix), check: check}
	writeKept(&w, v, kept, refusal.CodeInvalidCard, "/card")
	return w.dst, w.err
}

func TestWriteKept(t *testing.T) {
	kept := []byte(`{ "question":"Go?", "later":{"x":1} }`)
	var a blocks.AskBlock
	require.NoError(t, decodeKept(kept, &a, refusal.CodeInvalidEvent, ""))
	out, err := keptJSON("[", &a, kept, false)
	require.NoError(t, err)
	assert.Equal(t, `[{"question":"Go?","later":{"x":1}}`, string(out), "unchanged: the kept JSON, compacted")
	a.Question = "Stop?"
	out, err = keptJSON("", &a, kept, false)
	require.NoError(t, err)
	assert.Equal(t, `{"question":"Stop?"}`, string(out), "changed: from the fields")
	out, err = keptJSON("", &a, nil, false)
	require.NoError(t, err)
	assert.Equal(t, `{"question":"Stop?"}`, string(out))

	out, err = keptJSON("[", &a, kept, true)
	require.NoError(t, err)
	assert.Equal(t, "[", string(out), "check mode writes nothing")
	card := cards.OpenCardSnapshot{CorrelationID: "k", CreatedAt: 1, CardSpec: cards.CardSpec{Prompt: "p", Presentation: &cards.CardPresentation{Kind: cards.CardKindSlider, Step: math.NaN()}}}
	_, werr := keptJSON("", &card, nil, false)
	_, cerr := keptJSON("", &card, nil, true)
	require.Error(t, werr, "the encoder refuses NaN")
	require.Error(t, cerr)
	assert.Equal(t, refusal.CodeInvalidCard, refusal.CodeOf(werr))
	assert.Equal(t, refusal.CodeOf(werr), refusal.CodeOf(cerr))
	assert.Equal(t, "/card/presentation/step", werr.(*refusal.Error).Path)
	assert.Equal(t, werr.(*refusal.Error).Path, cerr.(*refusal.Error).Path)
}

func TestCheckKeptStrings(t *testing.T) {
	card := cards.OpenCardSnapshot{CorrelationID: "k", CreatedAt: 1, CardSpec: cards.CardSpec{Prompt: "p", Presentation: &cards.CardPresentation{
		Kind: cards.CardKindDate, Options: []cards.CardOption{{ID: "a", Label: "A"}, {ID: "b", Label: "B", Hint: "\xff"}}, Min: &cards.CardBound{Date: "2025-\xff"}}}}
	err := checkKeptStrings(&card, refusal.CodeInvalidCard)
	require.ErrorIs(t, err, refusal.ErrInvalidCard)
	assert.Equal(t, "/presentation/options/1/hint", err.(*refusal.Error).Path, "fields by their JSON names, the embedded spec inlined")
	card.Presentation.Options[1].Hint = ""
	err = checkKeptStrings(&card, refusal.CodeInvalidCard)
	require.Error(t, err)
	assert.Equal(t, "/presentation/min", err.(*refusal.Error).Path, "a bound is one value")
	card.Presentation.Min = nil
	card.DataSchemaJSON = "\xed\xa0\x80" // a lone surrogate as jsjson keeps it
	err = checkKeptStrings(&card, refusal.CodeInvalidCard)
	require.Error(t, err)
	assert.Equal(t, "/dataSchemaJson", err.(*refusal.Error).Path)
	card.DataSchemaJSON = ""
	assert.NoError(t, checkKeptStrings(&card, refusal.CodeInvalidCard))
	assert.NoError(t, checkKeptStrings(&blocks.AskBlock{Question: "q", Refs: []string{"é"}}, refusal.CodeInvalidEvent))
	err = checkKeptStrings(&blocks.AskBlock{Question: "q", Refs: []string{"é", "\xc3"}}, refusal.CodeInvalidEvent)
	require.ErrorIs(t, err, refusal.ErrInvalidEvent)
	assert.Equal(t, "/refs/1", err.(*refusal.Error).Path)
}
