package turn_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	chatprotocol "github.com/Papercusp/chat-protocol-go"
	"github.com/Papercusp/chat-protocol-go/refusal"
	"github.com/Papercusp/chat-protocol-go/replay"
	"github.com/Papercusp/chat-protocol-go/turn"
)

// TestReasoningAndSources: the Producer appends reasoning and source
// events (docs/contract.md section 6.5), long reasoning split under the
// frame limit, each frame one a registered reader accepts.
func TestReasoningAndSources(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	const limit = 1024
	w := replay.NewMemory(&replay.MemoryOptions{MaxFrameBytes: limit})
	key := replay.Key{ConversationID: "c-1", TurnID: "t-1"}
	p, err := turn.Start(ctx, w, key, &turn.Options{MaxFrameBytes: limit})
	require.NoError(t, err)
	long := strings.Repeat("ü\"", 700)
	require.NoError(t, p.Reasoning(ctx, "short"))
	require.NoError(t, p.Reasoning(ctx, ""))
	require.NoError(t, p.Reasoning(ctx, long))
	require.NoError(t, p.Source(ctx, chatprotocol.WebSource{URL: "https://example.com/w", Title: "Weather"}))
	assert.Equal(t, refusal.CodeInvalidEvent, refusal.CodeOf(p.Source(ctx, chatprotocol.WebSource{})))
	assert.Equal(t, refusal.CodeInvalidEvent, refusal.CodeOf(p.Reasoning(ctx, "bad\xff")))
	require.NoError(t, p.Complete(ctx))
	assert.Equal(t, refusal.CodeTurnTerminated, refusal.CodeOf(p.Reasoning(ctx, "late")))

	reg, err := chatprotocol.NewRegistry(nil, chatprotocol.WithReasoning(), chatprotocol.WithSources())
	require.NoError(t, err)
	parser := chatprotocol.NewEnvelopeParser(&chatprotocol.ParserOptions{Registry: reg, MaxFrameBytes: limit})
	_, frames, err := w.Read(ctx, key, 0, 1<<20)
	require.NoError(t, err)
	var texts []string
	var sources []chatprotocol.WebSource
	for _, f := range frames {
		assert.LessOrEqual(t, len(f.Data), limit)
		env, err := parser.Parse(f.Data)
		require.NoError(t, err, string(f.Data))
		if r, ok := chatprotocol.ReasoningOf(env.Event); ok {
			texts = append(texts, r.Text)
		}
		if s, ok := chatprotocol.WebSourceOf(env.Event); ok {
			sources = append(sources, s)
		}
	}
	require.Greater(t, len(texts), 2, "the long reasoning is split")
	assert.Equal(t, "short", texts[0])
	assert.Equal(t, long, strings.Join(texts[1:], ""))
	assert.Equal(t, []chatprotocol.WebSource{{URL: "https://example.com/w", Title: "Weather"}}, sources)
}
