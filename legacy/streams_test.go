package legacy

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	chatprotocol "github.com/Papercusp/chat-protocol-go"
	"github.com/Papercusp/chat-protocol-go/internal/testkit/teststream"
	"github.com/Papercusp/chat-protocol-go/refusal"
)

// streamsDir holds the captured streams (a copy of shared/streams).
const streamsDir = "../testdata/streams"

// readFrames returns the id and data of every event frame of a captured
// stream, without comments and heartbeats.
func readFrames(t *testing.T, name string) (ids []string, data [][]byte) {
	t.Helper()
	f, err := os.Open(filepath.Join(streamsDir, name))
	require.NoError(t, err)
	defer f.Close()
	ids, data, err = teststream.EventFrames(f)
	require.NoError(t, err)
	return ids, data
}

// upgradeStream upgrades every frame of a legacy stream through a
// StreamHost that registers Scout's products, applies every envelope to a
// ChatStateV1, and returns the event types each frame gave.
func upgradeStream(t *testing.T, name string) (*chatprotocol.ChatStateV1, [][]string) {
	t.Helper()
	_, frames := readFrames(t, name)
	h := NewStreamHost(&StreamHostOptions{Registry: products(t)})
	var s chatprotocol.ChatStateV1
	var types [][]string
	for i, data := range frames {
		f, err := DecodeLegacyChatFrame(data, Scout)
		require.NoError(t, err, "frame %d", i+1)
		envs, err := UpgradeLegacyChatFrame(t.Context(), f, h)
		require.NoError(t, err, "frame %d: %s", i+1, data)
		var got []string
		for _, env := range envs {
			require.NoError(t, s.Apply(env), "frame %d", i+1)
			got = append(got, env.Event.EventType())
		}
		types = append(types, got)
	}
	assert.Equal(t, int64(len(flatten(types))), h.Seq(), "one seq per envelope, none skipped")
	return &s, types
}

func flatten(types [][]string) []string {
	var out []string
	for _, ts := range types {
		out = append(out, ts...)
	}
	return out
}

func TestCapturedStreamScoutCard(t *testing.T) {
	s, types := upgradeStream(t, "scout-card-turn.sse")
	assert.Equal(t, [][]string{{"session"}, {"tool_call"}, {"products"}, {"delta"}, {"delta"}, {"card"}, {"card_closed"}, {"delta"}, {"navigate"}, {"lifecycle"}}, types)
	assert.Equal(t, "s-7f3a", s.ConversationID)
	assert.Equal(t, "s-7f3a", s.SessionID)
	assert.Empty(t, s.OpenCards(), "the card was closed")
	turn, ok := s.Turn("turn-1")
	require.True(t, ok)
	assert.Equal(t, chatprotocol.LifecycleCompleted, turn.Status)
	assert.Equal(t, "I found two options. Size 43 is in stock — ümlaut and emoji 👟 survive.", turn.Text())
	require.Len(t, turn.ToolCalls, 1)
	assert.Equal(t, "turn-1-call-1", turn.ToolCalls[0].CallID)
	assert.Equal(t, "search_products", turn.ToolCalls[0].Name)
	require.NotNil(t, turn.Usage)
	assert.Equal(t, int64(812), *turn.Usage.TotalTokens)
	assert.InDelta(t, 0.0041, *turn.Usage.CostUSD, 0)
}

func TestCapturedStreamScoutError(t *testing.T) {
	s, types := upgradeStream(t, "scout-error-turn.sse")
	assert.Equal(t, [][]string{{"session"}, {"tool_call"}, {"delta"}, {"error", "lifecycle"}}, types)
	turn, ok := s.Turn("turn-1")
	require.True(t, ok)
	assert.Equal(t, chatprotocol.LifecycleFailed, turn.Status)
	assert.Equal(t, "Checking your order", turn.Text(), "the token split over two data lines")
	require.NotNil(t, turn.Error)
	assert.Equal(t, &chatprotocol.ErrorState{Code: CodeError, Message: "upstream timed out"}, turn.Error)
	assert.Equal(t, "turn-1-call-1", turn.ToolCalls[0].CallID)
}

func TestCapturedStreamOperator(t *testing.T) {
	s, types := upgradeStream(t, "operator-report-ask-turn.sse")
	assert.Equal(t, [][]string{{"session"}, {"delta"}, {"delta"}, {"state"}, {"delta"}, {"lifecycle"}}, types)
	assert.Equal(t, "op-22", s.ConversationID)
	require.NotNil(t, s.State)
	assert.Equal(t, int64(3), s.State.Version)
	assert.JSONEq(t, `{"inbox":2}`, string(s.State.Snapshot))
	turn, ok := s.Turn("turn-1")
	require.True(t, ok)
	assert.Equal(t, chatprotocol.LifecycleCompleted, turn.Status)
	assert.Contains(t, turn.Text(), `"ref":"plan:rl-v2#P-2"}]}]}</report>`+"\n<ask>")
}

// TestCapturedStreamsWithoutRegistry: a host that registers no product
// type refuses Scout's products frame, and only it, with unsupported-event.
func TestCapturedStreamsWithoutRegistry(t *testing.T) {
	_, frames := readFrames(t, "scout-card-turn.sse")
	h := NewStreamHost(nil)
	var refused []string
	for _, data := range frames {
		f, err := DecodeLegacyChatFrame(data, Scout)
		require.NoError(t, err)
		if _, err := UpgradeLegacyChatFrame(t.Context(), f, h); err != nil {
			require.ErrorIs(t, err, refusal.ErrUnsupportedEvent)
			refused = append(refused, f.FrameType())
		}
	}
	assert.Equal(t, []string{"products"}, refused)
}

// TestCapturedStreamVersion1ToLegacy encodes the version-1 stream to
// legacy frames and reads each back with the version-0 parser: it gives
// the very event that was encoded, and upgrading it again gives the
// original event, but for the members a legacy form has no place for.
func TestCapturedStreamVersion1ToLegacy(t *testing.T) {
	ids, frames := readFrames(t, "v1-tool-turn.sse")
	var kept, skipped []string
	for i, data := range frames {
		env, err := chatprotocol.ParseEnvelope(data)
		require.NoError(t, err)
		require.Equal(t, ids[i], strconv.FormatInt(env.Seq, 10), "the SSE id is the seq")
		f, err := EncodeLegacyChatFrame(env, Scout)
		if err != nil {
			require.ErrorIs(t, err, refusal.ErrUnsupportedEvent)
			skipped = append(skipped, env.Event.EventType())
			continue
		}
		out, err := MarshalChatEvent(f)
		require.NoError(t, err)
		kept = append(kept, string(out))
		assert.Equal(t, f, ParseChatEvent(out), "the version-0 parser reads back the same frame")

		back, err := UpgradeLegacyChatFrame(t.Context(), f, NewStreamHost(&StreamHostOptions{ConversationID: env.ConversationID, TurnID: env.TurnID}))
		require.NoError(t, err)
		require.Len(t, back, 1)
		if call, ok := env.Event.(*chatprotocol.ToolCallEvent); ok {
			call.Input = nil // Scout's tool_start has no input
		}
		want, err := env.Event.(interface{ MarshalJSON() ([]byte, error) }).MarshalJSON()
		require.NoError(t, err)
		got, err := back[0].Event.(interface{ MarshalJSON() ([]byte, error) }).MarshalJSON()
		require.NoError(t, err)
		assert.JSONEq(t, string(want), string(got))
	}
	assert.Equal(t, []string{
		`{"type":"tool_start","tool":"search_docs","callId":"call-1"}`,
		`{"type":"token","content":"Refunds are accepted "}`,
		`{"type":"token","content":"within 30 days."}`,
		`{"type":"done","usage":{"totalTokens":431}}`,
	}, kept)
	assert.Equal(t, []string{"lifecycle", "provenance", "capabilities", "tool_result", "result"}, skipped)
}
