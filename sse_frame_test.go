package chatprotocol_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	chatprotocol "github.com/Papercusp/chat-protocol-go"
	"github.com/Papercusp/chat-protocol-go/refusal"
	"github.com/Papercusp/chat-protocol-go/sse"
)

// envelopes returns a short turn of version-1 envelopes.
func envelopes(t *testing.T) []chatprotocol.ChatEventEnvelope {
	t.Helper()
	frames := []string{
		`{"schemaVersion":1,"conversationId":"c-1","turnId":"t-1","eventId":"e-1","seq":1,"event":{"type":"lifecycle","status":"started"}}`,
		`{"schemaVersion":1,"conversationId":"c-1","turnId":"t-1","eventId":"e-2","seq":2,"event":{"type":"delta","text":"two\nlines"}}`,
		`{"schemaVersion":1,"conversationId":"c-1","turnId":"t-1","eventId":"e-3","seq":3,"event":{"type":"tool_call","callId":"call-1","name":"search","input":{"q":"x"}},"extra":[1]}`,
	}
	var out []chatprotocol.ChatEventEnvelope
	for _, f := range frames {
		env, err := chatprotocol.ParseEnvelope([]byte(f))
		require.NoError(t, err)
		out = append(out, env)
	}
	return out
}

func TestEnvelopeFrameFields(t *testing.T) {
	envs := envelopes(t)
	f, err := chatprotocol.EnvelopeFrame(&envs[2])
	require.NoError(t, err)
	assert.Equal(t, "3", f.ID)
	assert.Empty(t, f.Event, "an envelope dispatches as a message: its type is in the data")
	assert.JSONEq(t, `{"schemaVersion":1,"conversationId":"c-1","turnId":"t-1","eventId":"e-3","seq":3,"event":{"type":"tool_call","callId":"call-1","name":"search","input":{"q":"x"}},"extra":[1]}`, string(f.Data))

	var buf bytes.Buffer
	require.NoError(t, sse.NewEncoder(&buf).Encode(f))
	assert.Equal(t, "data: "+string(f.Data)+"\nid: 3\n\n", buf.String())

	// The root package's sentinel matches the encoder's refusal.
	f.Event = "delta\ndata: forged"
	assert.ErrorIs(t, sse.NewEncoder(io.Discard).Encode(f), refusal.ErrInvalidFrame)
}

func TestEnvelopeFrameRefusesWhatAppendJSONRefuses(t *testing.T) {
	env := envelopes(t)[0]
	env.Seq = 0
	_, err := chatprotocol.EnvelopeFrame(&env)
	require.ErrorIs(t, err, refusal.ErrInvalidEnvelope)
	env = envelopes(t)[0]
	env.Event = nil
	f, err := chatprotocol.EnvelopeFrame(&env)
	require.ErrorIs(t, err, refusal.ErrInvalidEnvelope)
	assert.Equal(t, sse.Frame{}, f)
}

// TestEnvelopeReaderRoundTrip writes envelopes with comments and heartbeats
// between them and reads them back, through reads of every size.
func TestEnvelopeReaderRoundTrip(t *testing.T) {
	envs := envelopes(t)
	var buf bytes.Buffer
	enc := sse.NewEncoder(&buf)
	require.NoError(t, enc.Comment("connected"))
	for _, env := range envs {
		f, err := chatprotocol.EnvelopeFrame(&env)
		require.NoError(t, err)
		require.NoError(t, enc.Encode(f))
		require.NoError(t, enc.Heartbeat(1764500000000))
	}
	readers := map[string]func(io.Reader) io.Reader{
		"whole":    func(r io.Reader) io.Reader { return r },
		"one-byte": iotest.OneByteReader,
		"half":     iotest.HalfReader,
	}
	for name, wrap := range readers {
		t.Run(name, func(t *testing.T) {
			r := chatprotocol.NewEnvelopeReader(wrap(bytes.NewReader(buf.Bytes())), nil)
			for i, want := range envs {
				got, err := r.Next()
				require.NoError(t, err)
				assert.Equal(t, int64(2+2*i), r.FrameNumber(), "frames count comments and heartbeats")
				wantJSON, _ := want.MarshalJSON()
				gotJSON, _ := got.MarshalJSON()
				assert.Equal(t, string(wantJSON), string(gotJSON))
			}
			_, err := r.Next()
			require.ErrorIs(t, err, io.EOF)
			assert.False(t, r.Truncated())
		})
	}
}

func TestEnvelopeReaderRefusalsAndGoingOn(t *testing.T) {
	good := `{"schemaVersion":1,"conversationId":"c","turnId":"t","eventId":"e","seq":1,"event":{"type":"delta","text":"ok"}}`
	stream := strings.Join([]string{
		"data: " + good,                            // 1
		`data: {"type":"token","content":"x"}`,     // 2: legacy frame
		"event: lifecycle\ndata: " + good,          // 3: name is not the type
		"data: " + strings.Repeat("x", 300),        // 4: data over the limit
		"data: " + strings.Repeat("y", 1000),       // 5: SSE frame over the bound
		"event: delta\ndata: " + good,              // 6
		"data: {\"schemaVersion\":1,\"seq\":\xff}", // 7: not UTF-8
	}, "\n\n") + "\n\ndata: cut"
	r := chatprotocol.NewEnvelopeReader(strings.NewReader(stream), &chatprotocol.ParserOptions{MaxFrameBytes: 200})
	want := []struct {
		code  refusal.Code
		frame int64
	}{
		{"", 1},
		{refusal.CodeUnsupportedVersion, 2},
		{refusal.CodeInvalidFrame, 3},
		{refusal.CodeFrameTooLarge, 4},
		{refusal.CodeFrameTooLarge, 5},
		{"", 6},
		{refusal.CodeInvalidEnvelope, 7},
	}
	for _, w := range want {
		env, err := r.Next()
		assert.Equal(t, w.code, refusal.CodeOf(err), "frame %d: %v", w.frame, err)
		assert.Equal(t, w.frame, r.FrameNumber())
		if w.code == "" {
			assert.Equal(t, "ok", env.Event.(*chatprotocol.DeltaEvent).Text)
		}
	}
	_, err := r.Next()
	require.ErrorIs(t, err, io.EOF)
	assert.True(t, r.Truncated())
	assert.Equal(t, int64(8), r.FrameNumber(), "the frame the end cut")
}

func TestEnvelopeReaderNextFrameSkipsCommentsAndHeartbeats(t *testing.T) {
	stream := ": hi\n\nevent: heartbeat\ndata: {\"tsMs\":1}\n\nid: 7\ndata: {\"type\":\"done\"}\n\n"
	r := chatprotocol.NewEnvelopeReader(strings.NewReader(stream), nil)
	ev, err := r.NextFrame()
	require.NoError(t, err)
	assert.Equal(t, `{"type":"done"}`, string(ev.Data))
	assert.Equal(t, "7", ev.LastEventID)
	assert.Equal(t, int64(3), r.FrameNumber())
	_, err = r.NextFrame()
	assert.ErrorIs(t, err, io.EOF)
}

func TestEnvelopeReaderKeepsReturningTheReadersError(t *testing.T) {
	boom := errors.New("connection reset")
	r := chatprotocol.NewEnvelopeReader(io.MultiReader(strings.NewReader(": x\n\n"), iotest.ErrReader(boom)), nil)
	for range 2 {
		_, err := r.Next()
		require.ErrorIs(t, err, boom)
		assert.Equal(t, refusal.Code(""), refusal.CodeOf(err))
	}
}

func TestEnvelopeReaderUnlimited(t *testing.T) {
	text := strings.Repeat("z", 3<<20)
	stream := `data: {"schemaVersion":1,"conversationId":"c","turnId":"t","eventId":"e","seq":1,"event":{"type":"delta","text":"` + text + "\"}}\n\n"
	_, err := chatprotocol.NewEnvelopeReader(strings.NewReader(stream), nil).Next()
	require.ErrorIs(t, err, refusal.ErrFrameTooLarge)
	env, err := chatprotocol.NewEnvelopeReader(strings.NewReader(stream), &chatprotocol.ParserOptions{MaxFrameBytes: -1}).Next()
	require.NoError(t, err)
	assert.Len(t, env.Event.(*chatprotocol.DeltaEvent).Text, 3<<20)
}

func ExampleEnvelopeFrame() {
	env, _ := chatprotocol.ParseEnvelope([]byte(`{"schemaVersion":1,"conversationId":"c-1","turnId":"t-1","eventId":"e-1","seq":1,"event":{"type":"delta","text":"Hel"}}`))
	f, err := chatprotocol.EnvelopeFrame(&env)
	if err != nil {
		panic(err)
	}
	_ = sse.NewEncoder(os.Stdout).Encode(f) // or (*sse.Writer).Send(f) in an HTTP handler
	// Output:
	// data: {"schemaVersion":1,"conversationId":"c-1","turnId":"t-1","eventId":"e-1","seq":1,"event":{"type":"delta","text":"Hel"}}
	// id: 1
}

func ExampleEnvelopeReader() {
	stream := ": connected\n\n" +
		"id: 1\nevent: delta\ndata: {\"schemaVersion\":1,\"conversationId\":\"c-1\",\"turnId\":\"t-1\",\"eventId\":\"e-1\",\"seq\":1,\"event\":{\"type\":\"delta\",\"text\":\"Hel\"}}\n\n" +
		"event: heartbeat\ndata: {\"tsMs\":1764500000000}\n\n" +
		"id: 2\nevent: delta\ndata: {\"schemaVersion\":1,\"conversationId\":\"c-1\",\"turnId\":\"t-1\",\"eventId\":\"e-2\",\"seq\":3,\"event\":{\"type\":\"delta\",\"text\":\"lo\"}}\n\n"
	r := chatprotocol.NewEnvelopeReader(strings.NewReader(stream), nil)
	var state chatprotocol.ChatStateV1
	for {
		env, err := r.Next()
		if err == nil {
			err = state.Apply(env)
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			fmt.Printf("frame %d: %s\n", r.FrameNumber(), refusal.CodeOf(err))
			continue
		}
	}
	turn, _ := state.Turn("t-1")
	fmt.Printf("%q\n", turn.Text())
	// Output:
	// frame 4: sequence-gap
	// "Hel"
}

// TestEnvelopeReaderReconnectState: LastEventID and Retry are what a
// reconnecting client needs: the id of the last frame read whole (a
// refused one included) and the last retry the stream asked for.
func TestEnvelopeReaderReconnectState(t *testing.T) {
	delta := func(seq int) string {
		return fmt.Sprintf(`{"schemaVersion":1,"conversationId":"c","turnId":"t","eventId":"e-%d","seq":%d,"event":{"type":"delta","text":"x"}}`, seq, seq)
	}
	stream := ": connected\nretry: 2500\n\n" +
		"id: 1\ndata: " + delta(1) + "\n\n" +
		"id: 2\ndata: {\"not\":\"an envelope\"}\n\n" +
		"retry: 9999999999999999999999\nid: 3\ndata: " + delta(3) + "\n\n" +
		"id: 4\ndata: " + delta(4) // cut: no blank line, dropped
	r := chatprotocol.NewEnvelopeReader(strings.NewReader(stream), nil)
	assert.Empty(t, r.LastEventID())
	_, ok := r.Retry()
	assert.False(t, ok, "no retry before the stream asks")

	want := []struct {
		code refusal.Code
		id   string
	}{{"", "1"}, {refusal.CodeUnsupportedVersion, "2"}, {"", "3"}}
	for _, w := range want {
		_, err := r.Next()
		assert.Equal(t, w.code, refusal.CodeOf(err))
		assert.Equal(t, w.id, r.LastEventID())
		d, ok := r.Retry()
		assert.True(t, ok)
		assert.Equal(t, 2500*time.Millisecond, d, "an unrepresentable retry is ignored")
	}
	_, err := r.Next()
	require.ErrorIs(t, err, io.EOF)
	assert.True(t, r.Truncated())
	assert.Equal(t, "3", r.LastEventID(), "the cut frame's id does not count")
}
