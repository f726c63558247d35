package replay

import (
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	chatprotocol "github.com/Papercusp/chat-protocol-go"
	"github.com/Papercusp/chat-protocol-go/refusal"
)

var splitTemplate = chatprotocol.ChatEventEnvelope{ConversationID: "conv-1", TurnID: "turn-1", EventID: "evt-000001", Seq: 1,
	Event: &chatprotocol.DeltaEvent{}, At: "2026-03-01T12:00:00Z"}

// pieceEnvelope is template carrying piece as its delta text at seq.
func pieceEnvelope(template chatprotocol.ChatEventEnvelope, piece string, seq int64) *chatprotocol.ChatEventEnvelope {
	env := template
	env.Seq = seq
	env.Event = &chatprotocol.DeltaEvent{Text: piece}
	return &env
}

// checkPieces checks SplitDelta's promises for text at limit: the pieces
// concatenate to text; each, wrapped in a delta envelope at any seq and
// encoded, is at most limit bytes and reads back under that limit; each but
// the last is as long as it can be (one more character would not fit).
func checkPieces(t *testing.T, text string, limit int) []string {
	t.Helper()
	pieces, err := SplitDelta(&splitTemplate, text, limit)
	require.NoError(t, err)
	require.Equal(t, text, strings.Join(pieces, ""), "the pieces concatenate to the text")
	parser := chatprotocol.NewEnvelopeParser(&chatprotocol.ParserOptions{MaxFrameBytes: limit})
	for i, p := range pieces {
		require.NotEmpty(t, p, "piece %d", i)
		require.True(t, utf8.ValidString(p), "piece %d is cut between characters", i)
		for _, seq := range []int64{1, chatprotocol.MaxSeq} {
			data, err := pieceEnvelope(splitTemplate, p, seq).AppendJSON(nil)
			require.NoError(t, err)
			require.LessOrEqual(t, len(data), limit, "piece %d at seq %d", i, seq)
			env, err := parser.Parse(data)
			require.NoError(t, err, "the reader takes piece %d", i)
			require.Equal(t, p, env.Event.(*chatprotocol.DeltaEvent).Text)
		}
		if i+1 < len(pieces) {
			_, size := utf8.DecodeRuneInString(pieces[i+1])
			data, err := pieceEnvelope(splitTemplate, p+pieces[i+1][:size], chatprotocol.MaxSeq).AppendJSON(nil)
			require.NoError(t, err)
			require.Greater(t, len(data), limit, "piece %d could not hold one more character", i)
		}
	}
	return pieces
}

func TestSplitDeltaFitsEveryPieceUnderTheLimit(t *testing.T) {
	empty, err := pieceEnvelope(splitTemplate, "", chatprotocol.MaxSeq).AppendJSON(nil)
	require.NoError(t, err)
	texts := map[string]string{
		"ascii":     strings.Repeat("The quick brown fox. ", 50),
		"escapes":   strings.Repeat("\x00\x01\x1f\"\\\n\t\r\b\f", 40),
		"four-byte": strings.Repeat("😀𝄞🀄", 60),
		"cjk":       strings.Repeat("漢字かな", 70),
		"mixed":     strings.Repeat("a\x01😀\"é漢\n", 50),
		"one-rune":  "😀",
	}
	for name, text := range texts {
		for _, budget := range []int{6, 7, 8, 11, 64, 1000} {
			checkPieces(t, text, len(empty)+budget)
		}
		t.Run(name, func(t *testing.T) {
			pieces := checkPieces(t, text, len(empty)+6)
			if name == "escapes" {
				assert.Len(t, pieces, strings.Count(text, "\x00")*3+ // \u0000 \u0001 \u001f alone
					len(text)/10*3, "a 6-byte budget holds one \\u00XX or three 2-byte escapes")
			}
		})
	}
}

func TestSplitDeltaAtTheDefaultLimit(t *testing.T) {
	text := strings.Repeat("\x01", chatprotocol.DefaultMaxFrameBytes/3) + strings.Repeat("😀", chatprotocol.DefaultMaxFrameBytes/4)
	pieces := checkPieces(t, text, chatprotocol.DefaultMaxFrameBytes)
	empty, err := pieceEnvelope(splitTemplate, "", chatprotocol.MaxSeq).AppendJSON(nil)
	require.NoError(t, err)
	budget := chatprotocol.DefaultMaxFrameBytes - len(empty)
	escaped := 6*(chatprotocol.DefaultMaxFrameBytes/3) + 4*(chatprotocol.DefaultMaxFrameBytes/4) // 3 MiB escaped
	least := (escaped + budget - 1) / budget
	assert.GreaterOrEqual(t, len(pieces), least, "pieces of %d bytes of text", budget)
	assert.LessOrEqual(t, len(pieces), least+1, "greedy pieces waste less than a character each")
	zero, err := SplitDelta(&splitTemplate, text, 0)
	require.NoError(t, err)
	assert.True(t, slices.Equal(pieces, zero), "0 is the default limit")
}

func TestSplitDeltaEdges(t *testing.T) {
	pieces, err := SplitDelta(&splitTemplate, "", 0)
	require.NoError(t, err)
	assert.Nil(t, pieces, "an empty text gives no piece")
	pieces, err = SplitDelta(&splitTemplate, strings.Repeat("x", 3<<20), -1)
	require.NoError(t, err)
	assert.Len(t, pieces, 1, "no limit, one piece")

	_, err = SplitDelta(&splitTemplate, "a\xffb", 0)
	assert.ErrorIs(t, err, refusal.ErrInvalidEvent)
	_, err = SplitDelta(nil, "a", 0)
	assert.ErrorIs(t, err, refusal.ErrInvalidEnvelope)
	noID := splitTemplate
	noID.EventID = ""
	_, err = SplitDelta(&noID, "a", 0)
	assert.ErrorIs(t, err, refusal.ErrInvalidEnvelope)
	empty, err := pieceEnvelope(splitTemplate, "", chatprotocol.MaxSeq).AppendJSON(nil)
	require.NoError(t, err)
	_, err = SplitDelta(&splitTemplate, "a", len(empty)+5)
	assert.ErrorIs(t, err, refusal.ErrFrameTooLarge, "room for less than one character")
}

func TestSplitDeltaKeepsTheTemplatesDeltaMembers(t *testing.T) {
	template := splitTemplate
	template.Event = &chatprotocol.DeltaEvent{Unknown: []chatprotocol.Member{{Name: "lang", Value: []byte(`"en-GB-oxendict"`)}}}
	empty, err := template.AppendJSON(nil)
	require.NoError(t, err)
	limit := len(empty) + 40
	pieces, err := SplitDelta(&template, strings.Repeat("é", 100), limit)
	require.NoError(t, err)
	for _, p := range pieces {
		env := template
		env.Seq = chatprotocol.MaxSeq
		env.Event = &chatprotocol.DeltaEvent{Text: p, Unknown: template.Event.(*chatprotocol.DeltaEvent).Unknown}
		data, err := env.AppendJSON(nil)
		require.NoError(t, err)
		assert.LessOrEqual(t, len(data), limit)
	}
}
