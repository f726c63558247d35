package legacy

import (
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	chatprotocol "github.com/Papercusp/chat-protocol-go"
	"github.com/Papercusp/chat-protocol-go/refusal"
)

// TestUnknownMembersByteOrder pins the bytes MarshalChatEvent writes for a
// frame read with members its types do not name: at each level the known
// members in the writer's order, then the kept ones in the order their
// names first appear, each with its last value and its text as read
// (whitespace inside a value included, 1e400 not rewritten), a name that
// differs from a known one only by case kept beside it.
func TestUnknownMembersByteOrder(t *testing.T) {
	for _, c := range []struct{ in, out string }{
		{`{"z":1,"type":"token","a":[1, 2],"content":"x","z":{"b":"\u00e9\n"}}`,
			`{"type":"token","content":"x","z":{"b":"\u00e9\n"},"a":[1, 2]}`},
		{`{"type":"token","Content":"a","content":"b","big":1e400}`,
			`{"type":"token","content":"b","Content":"a","big":1e400}`},
		{`{"x":0,"type":"card","card":{"q":1,"prompt":"p","presentation":{"kind":"radio","p2":2,"options":[{"o":true,"label":"A","id":"a"},{"id":"b","label":"B"}],"p1":1},"createdAt":1,"correlationId":"c","report":{"r":[],"plans":[{"title":"t","pl":{},"items":[{"text":"i","it":null}]}]}}}`,
			`{"type":"card","card":{"correlationId":"c","createdAt":1,"prompt":"p","presentation":{"kind":"radio","options":[{"id":"a","label":"A","o":true},{"id":"b","label":"B"}],"p2":2,"p1":1},"report":{"plans":[{"title":"t","items":[{"text":"i","it":null}],"pl":{}}],"r":[]},"q":1},"x":0}`},
		{`{"type":"done","n":"\ud800","usage":{"u":[{"a":{}}],"costUsd":0.5}}`,
			`{"type":"done","usage":{"costUsd":0.5,"u":[{"a":{}}]},"n":"\ud800"}`},
		{`{"type":"state","snapshot":null,"version":1,"~/x":1}`,
			`{"type":"state","version":1,"snapshot":null,"~/x":1}`},
	} {
		f := ParseChatEvent([]byte(c.in))
		require.NotNil(t, f, c.in)
		require.NotEqual(t, "app", kindOf(f), c.in)
		out, err := MarshalChatEvent(f)
		require.NoError(t, err, c.in)
		assert.Equal(t, c.out, string(out), c.in)
		g, err := DecodeLegacyChatFrame([]byte(c.in), Scout)
		require.NoError(t, err, c.in)
		assert.Equal(t, f, g, c.in)
	}
}

// TestUnknownMembersManyDuplicates: past manyMembers names, duplicates
// are still resolved as JSON.parse resolves them.
func TestUnknownMembersManyDuplicates(t *testing.T) {
	var in, want strings.Builder
	in.WriteString(`{"type":"navigate","href":"/"`)
	want.WriteString(`{"type":"navigate","href":"/"`)
	for i := range 40 {
		in.WriteString(`,"m` + strconv.Itoa(i) + `":0`)
	}
	for i := range 40 {
		in.WriteString(`,"m` + strconv.Itoa(i) + `":1`)
		want.WriteString(`,"m` + strconv.Itoa(i) + `":1`)
	}
	in.WriteString("}")
	want.WriteString("}")
	out, err := MarshalChatEvent(ParseChatEvent([]byte(in.String())))
	require.NoError(t, err)
	assert.Equal(t, want.String(), string(out))
}

// TestMarshalChatEventRefusesBadKeptMembers: a kept member that would
// make the frame read back as something else is refused at its path.
func TestMarshalChatEventRefusesBadKeptMembers(t *testing.T) {
	m := func(name, value string) []chatprotocol.Member {
		return []chatprotocol.Member{{Name: "ok", Value: raw(`1`)}, {Name: name, Value: raw(value)}}
	}
	many := make([]chatprotocol.Member, 0, 40)
	for i := range 40 {
		many = append(many, chatprotocol.Member{Name: string(rune('a' + i%20)), Value: raw(`1`)})
	}
	for _, c := range []struct {
		f    Frame
		path string
	}{
		{&TokenFrame{Unknown: m("content", `"x"`)}, "/content"},
		{&TokenFrame{Unknown: m("type", `"x"`)}, "/type"},
		{&TokenFrame{Unknown: m("ok", `2`)}, "/ok"},
		{&TokenFrame{Unknown: many}, "/a"},
		{&TokenFrame{Unknown: m("a/b", `{`)}, "/a~1b"},
		{&TokenFrame{Unknown: m("n", ``)}, "/n"},
		{&DoneFrame{Usage: &Usage{Unknown: m("costUsd", `1`)}}, "/usage/costUsd"},
		{&CardFrame{Card: Card{Unknown: m("prompt", `""`)}}, "/card/prompt"},
		{&CardFrame{Card: Card{Presentation: &CardPresentation{Kind: "radio", Options: []CardOption{{}, {Unknown: m("x", `nul`)}}}}}, "/card/presentation/options/1/x"},
		{&CardFrame{Card: Card{Report: &Report{Plans: []ReportPlan{{}, {Items: []ReportItem{{Unknown: m("text", `""`)}}}}}}}, "/card/report/plans/1/items/0/text"},
		{&CardFrame{Card: Card{Report: &Report{Plans: []ReportPlan{{Unknown: m("items", `[]`)}}}}}, "/card/report/plans/0/items"},
		{&CardFrame{Card: Card{Report: &Report{Unknown: m("plans", `[]`)}}}, "/card/report/plans"},
		{&CardFrame{Unknown: m("card", `{}`)}, "/card"},
	} {
		_, err := MarshalChatEvent(c.f)
		require.Error(t, err, "%#v", c.f)
		assert.Equal(t, refusal.CodeInvalidEvent, refusal.CodeOf(err))
		var re *refusal.Error
		require.ErrorAs(t, err, &re)
		assert.Equal(t, c.path, re.Path, "%#v", c.f)
	}
}
