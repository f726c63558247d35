package stream_test

import (
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	chatprotocol "github.com/Papercusp/chat-protocol-go"
	"github.com/Papercusp/chat-protocol-go/refusal"
	"github.com/Papercusp/chat-protocol-go/stream"
)

func TestParseCursor(t *testing.T) {
	for in, want := range map[string]int64{"0": 0, "1": 1, "42": 42, "9007199254740991": chatprotocol.MaxSeq} {
		got, err := stream.ParseCursor(in)
		require.NoError(t, err, in)
		assert.Equal(t, want, got, in)
	}
	for _, in := range []string{"", "-1", "1e3", " 5", "5 ", "+5", "05", "00", "0x5", "9007199254740992",
		"18446744073709551616", "99999999999999999", "5\r\n", "5\x00", "٥", "1.0", "1_000"} {
		_, err := stream.ParseCursor(in)
		assert.ErrorIs(t, err, refusal.ErrInvalidCursor, strconv.Quote(in))
	}
}

// FuzzParseCursor: ParseCursor never panics, accepts exactly the canonical
// decimal forms of 0..MaxSeq, and round-trips them.
func FuzzParseCursor(f *testing.F) {
	for _, s := range []string{"0", "7", "9007199254740991", "9007199254740992", "-1", "+5", " 5", "05", "5\r\n", "\x00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := stream.ParseCursor(s)
		if err != nil {
			assert.Equal(t, refusal.CodeInvalidCursor, refusal.CodeOf(err))
			return
		}
		assert.LessOrEqual(t, n, int64(chatprotocol.MaxSeq))
		assert.Equal(t, strconv.FormatInt(n, 10), s, "only the canonical form is a cursor")
	})
}
