package sse_test

import (
	"errors"
	"io"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Papercusp/chat-protocol-go/refusal"
	"github.com/Papercusp/chat-protocol-go/sse"
)

// recordingWriter keeps each Write as one element, and can fail.
type recordingWriter struct {
	writes []string
	err    error
	short  bool
}

func (w *recordingWriter) Write(p []byte) (int, error) {
	if w.err != nil {
		return 0, w.err
	}
	w.writes = append(w.writes, string(p))
	if w.short {
		return len(p) - 1, nil
	}
	return len(p), nil
}

func TestEncoderWritesOneFramePerWrite(t *testing.T) {
	w := &recordingWriter{}
	enc := sse.NewEncoder(w)
	require.NoError(t, enc.Encode(sse.Frame{ID: "1", Event: "delta", Data: []byte("a\nb")}))
	require.NoError(t, enc.Comment("keep-alive"))
	require.NoError(t, enc.Heartbeat(42))
	require.NoError(t, enc.Encode(sse.Frame{ID: "2", Data: []byte("c")}))
	assert.Equal(t, []string{
		"event: delta\ndata: a\ndata: b\nid: 1\n\n",
		": keep-alive\n\n",
		"event: heartbeat\ndata: {\"tsMs\":42}\n\n",
		"data: c\nid: 2\n\n",
	}, w.writes)
}

func TestEncoderErrors(t *testing.T) {
	t.Run("a refused frame writes nothing", func(t *testing.T) {
		w := &recordingWriter{}
		err := sse.NewEncoder(w).Encode(sse.Frame{ID: "1\n2"})
		require.ErrorIs(t, err, refusal.ErrInvalidFrame)
		assert.Empty(t, w.writes)
	})
	t.Run("write errors are returned", func(t *testing.T) {
		broken := errors.New("broken pipe")
		enc := sse.NewEncoder(&recordingWriter{err: broken})
		require.ErrorIs(t, enc.Encode(sse.Frame{Data: []byte("x")}), broken)
		require.ErrorIs(t, enc.Comment("x"), broken)
		require.ErrorIs(t, enc.Heartbeat(1), broken)
	})
	t.Run("a short write is an error", func(t *testing.T) {
		enc := sse.NewEncoder(&recordingWriter{short: true})
		require.ErrorIs(t, enc.Encode(sse.Frame{Data: []byte("x")}), io.ErrShortWrite)
	})
}
