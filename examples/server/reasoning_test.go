package main

import (
	"context"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	chatprotocol "github.com/Papercusp/chat-protocol-go"
	"github.com/Papercusp/chat-protocol-go/stream"
)

// The thinking and the answer of the recorded body
// testdata/providers/anthropic-messages/thinking-text.sse.
const (
	thinking = "I need to find the GCD of 1071 and 462.\n1071 = 2*462 + 147"
	answer   = "The GCD is 21."
)

// TestServerShowsThinkingAsReasoning: with -replay of a recorded Anthropic
// stream with thinking, every protocol shows the thinking as reasoning and
// never in the text (docs/contract.md sections 6.5, 17.1 and 18): the
// version-1 stream as reasoning events (to a reader that registers them),
// useChat as a reasoning part, AG-UI as a reasoning message.
func TestServerShowsThinkingAsReasoning(t *testing.T) {
	body := filepath.Join("..", "..", "testdata", "providers", "anthropic-messages", "thinking-text.sse")
	s := start(t, "-replay", body, "-from", "anthropic-messages", "-pace", "0")

	t.Run("version 1", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		reg, err := chatprotocol.NewRegistry(nil, chatprotocol.WithReasoning(), chatprotocol.WithSources())
		require.NoError(t, err)
		var reasoning strings.Builder
		state, err := stream.Follow(ctx, s.turns[0], &stream.FollowOptions{Parser: &chatprotocol.ParserOptions{Registry: reg},
			OnEnvelope: func(env *chatprotocol.ChatEventEnvelope) error {
				if r, ok := chatprotocol.ReasoningOf(env.Event); ok {
					reasoning.WriteString(r.Text)
				}
				return nil
			}})
		require.NoError(t, err)
		assert.Equal(t, thinking, reasoning.String())
		require.Len(t, state.Turns, 1)
		assert.Equal(t, answer, state.Turns[0].Text())
		assert.Equal(t, chatprotocol.LifecycleCompleted, state.Turns[0].Status)

		// A reader that does not register the events refuses the stream.
		_, err = stream.Follow(ctx, s.turns[0], nil)
		require.Error(t, err)
	})

	t.Run("useChat", func(t *testing.T) {
		status, lines := dataLines(t, http.MethodPost, s.endpoints["ui-message-stream"], "Bearer demo", strings.ReplaceAll(submit, "CHAT", "chat-r"))
		require.Equal(t, http.StatusOK, status)
		chunks := parse(t, lines)
		assert.Equal(t, thinking, text(chunks, "reasoning-delta"))
		assert.Equal(t, answer, text(chunks, "text-delta"))
		var types []string
		for _, c := range chunks {
			types = append(types, c.Type)
		}
		assert.Equal(t, []string{"start", "start-step", "reasoning-start", "reasoning-delta", "reasoning-delta", "reasoning-end",
			"text-start", "text-delta", "text-delta", "text-end", "finish-step", "finish", "[DONE]"}, types)
	})

	t.Run("AG-UI", func(t *testing.T) {
		input := `{"threadId":"thread-r","runId":"run-1","messages":[{"id":"u1","role":"user","content":"What is the GCD?"}],"tools":[],"context":[],"state":{},"forwardedProps":{}}`
		status, lines := dataLines(t, http.MethodPost, s.endpoints["ag-ui"], "Bearer demo", input)
		require.Equal(t, http.StatusOK, status)
		evs := parse(t, lines)
		assert.Equal(t, thinking, text(evs, "REASONING_MESSAGE_CONTENT"))
		assert.Equal(t, answer, text(evs, "TEXT_MESSAGE_CONTENT"))
		assert.Equal(t, "RUN_FINISHED", evs[len(evs)-1].Type)
		for _, typ := range []string{"REASONING_START", "REASONING_MESSAGE_START", "REASONING_MESSAGE_END", "REASONING_END"} {
			assert.Equal(t, typ, only(t, evs, typ).Type)
		}
	})
}
