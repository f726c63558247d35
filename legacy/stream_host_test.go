package legacy

import (
	"strconv"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	chatprotocol "github.com/Papercusp/chat-protocol-go"
	"github.com/Papercusp/chat-protocol-go/refusal"
)

// upgradeAll decodes and upgrades frames in order with h.
func upgradeAll(t *testing.T, h Host, d Dialect, frames ...string) []chatprotocol.ChatEventEnvelope {
	t.Helper()
	var out []chatprotocol.ChatEventEnvelope
	for _, frame := range frames {
		envs, err := upgrade(t, frame, d, h)
		require.NoError(t, err, frame)
		out = append(out, envs...)
	}
	return out
}

func TestStreamHostDefaults(t *testing.T) {
	h := NewStreamHost(nil)
	assert.Equal(t, "", h.ConversationID())
	assert.Equal(t, DefaultTurnID, h.TurnID())
	assert.Zero(t, h.Seq())
	assert.Nil(t, h.Registry())

	envs := upgradeAll(t, h, Scout,
		`{"type":"session","sessionId":"s-7f3a"}`,
		`{"type":"tool_start","tool":"search_products"}`,
		`{"type":"tool_start","tool":"search_products"}`,
		`{"type":"error","message":"m"}`)
	require.Len(t, envs, 5)
	for i, env := range envs {
		n := int64(i + 1)
		assert.Equal(t, "s-7f3a", env.ConversationID, "the session frame's id")
		assert.Equal(t, "turn-1", env.TurnID)
		assert.Equal(t, n, env.Seq)
		assert.Equal(t, "e-"+strconv.FormatInt(n, 10), env.EventID)
	}
	assert.Equal(t, "turn-1-call-1", envs[1].Event.(*chatprotocol.ToolCallEvent).CallID)
	assert.Equal(t, "turn-1-call-2", envs[2].Event.(*chatprotocol.ToolCallEvent).CallID, "the same tool again is another call")
	assert.Equal(t, "s-7f3a", h.ConversationID())
	assert.Equal(t, int64(5), h.Seq())
}

func TestStreamHostNeedsAConversation(t *testing.T) {
	h := NewStreamHost(nil)
	_, err := upgrade(t, `{"type":"token","content":"x"}`, Scout, h)
	require.ErrorIs(t, err, refusal.ErrInvalidEnvelope)
	assert.Equal(t, "/conversationId", refusalOf(t, err).Path)
	assert.Zero(t, h.Seq(), "a refused envelope uses up no seq")

	envs := upgradeAll(t, h, Scout, `{"type":"session","sessionId":"s-1"}`, `{"type":"session","sessionId":"s-2"}`)
	assert.Equal(t, "s-1", envs[1].ConversationID, "the first session names the conversation")
	assert.Equal(t, int64(1), envs[0].Seq)
}

func TestStreamHostGivenIDs(t *testing.T) {
	h := NewStreamHost(&StreamHostOptions{ConversationID: "c-5", TurnID: "t-2"})
	envs := upgradeAll(t, h, Papercusp, `{"type":"session","sessionId":"s-9"}`, `{"type":"tool_call","name":"n"}`)
	assert.Equal(t, "c-5", envs[0].ConversationID, "a given conversation id wins over the session frame's")
	assert.Equal(t, "t-2", envs[1].TurnID)
	assert.Equal(t, "t-2-call-1", envs[1].Event.(*chatprotocol.ToolCallEvent).CallID)
}

func TestStreamHostInvalidIDs(t *testing.T) {
	long := string(make([]byte, 257))
	for name, opts := range map[string]*StreamHostOptions{
		"long conversation": {ConversationID: long},
		"long turn":         {ConversationID: "c", TurnID: long},
	} {
		h := NewStreamHost(opts)
		for range 2 {
			_, err := upgrade(t, `{"type":"token","content":"x"}`, Scout, h)
			assert.ErrorIs(t, err, refusal.ErrInvalidEnvelope, name)
		}
	}
	h := NewStreamHost(&StreamHostOptions{ConversationID: "c\xff"})
	_, err := upgrade(t, `{"type":"token","content":"x"}`, Scout, h)
	require.ErrorIs(t, err, refusal.ErrInvalidEnvelope)
	assert.Equal(t, "/conversationId", refusalOf(t, err).Path, "not UTF-8")
}

// TestStreamHostChecksItsIdentity: a StreamHost checks the identity it
// gives once, and again past MaxSeq, refusing as Validate refuses; the
// identity of any other host is checked by UpgradeLegacyChatFrame.
func TestStreamHostChecksItsIdentity(t *testing.T) {
	h := NewStreamHost(&StreamHostOptions{ConversationID: "c"})
	upgradeAll(t, h, Scout, `{"type":"token","content":"x"}`)
	h.seq = chatprotocol.MaxSeq - 1
	upgradeAll(t, h, Scout, `{"type":"token","content":"x"}`)
	_, err := upgrade(t, `{"type":"token","content":"x"}`, Scout, h)
	require.ErrorIs(t, err, refusal.ErrInvalidEnvelope)
	assert.Equal(t, "/seq", refusalOf(t, err).Path)

	other := &recordingHost{identify: func(env *chatprotocol.ChatEventEnvelope) error {
		env.ConversationID, env.TurnID, env.EventID, env.Seq = string(make([]byte, 257)), "t", "e", 1
		return nil
	}}
	_, err = upgrade(t, `{"type":"token","content":"x"}`, Scout, other)
	require.ErrorIs(t, err, refusal.ErrInvalidEnvelope)
	assert.Equal(t, "/conversationId", refusalOf(t, err).Path)
}

func TestStreamHostCallIDMapping(t *testing.T) {
	ids := []string{"call-a", "call-b"}
	h := NewStreamHost(&StreamHostOptions{ConversationID: "c", CallID: func(turn string, n int) (string, bool) {
		if n > len(ids) {
			return "", false
		}
		return turn + "/" + ids[n-1], true
	}})
	envs := upgradeAll(t, h, Scout, `{"type":"tool_start","tool":"a"}`, `{"type":"tool_start","tool":"b","callId":"own"}`, `{"type":"tool_start","tool":"c"}`)
	assert.Equal(t, "turn-1/call-a", envs[0].Event.(*chatprotocol.ToolCallEvent).CallID)
	assert.Equal(t, "own", envs[1].Event.(*chatprotocol.ToolCallEvent).CallID, "a frame's own id is not counted")
	assert.Equal(t, "turn-1/call-b", envs[2].Event.(*chatprotocol.ToolCallEvent).CallID)
	_, err := upgrade(t, `{"type":"tool_start","tool":"d"}`, Scout, h)
	assert.ErrorIs(t, err, refusal.ErrMissingCallID, "the mapping has no third id")
}

func TestStreamHostDoesNotPairResults(t *testing.T) {
	h := NewStreamHost(&StreamHostOptions{ConversationID: "c"})
	upgradeAll(t, h, Papercusp, `{"type":"tool_call","name":"a"}`)
	_, err := upgrade(t, `{"type":"tool_result","status":"ok"}`, Papercusp, h)
	require.ErrorIs(t, err, refusal.ErrMissingCallID)
	id, ok, err := h.ToolCallID(t.Context(), &TokenFrame{})
	require.NoError(t, err)
	assert.False(t, ok)
	assert.Empty(t, id)
}

// TestStreamHostReconnect: after a reconnect replays the turn from its
// start, a new StreamHost of the same options gives every envelope the
// identity it had, so the reducer sees identical redeliveries and the
// same tool start keeps its call id.
func TestStreamHostReconnect(t *testing.T) {
	frames := []string{
		`{"type":"session","sessionId":"s-1"}`,
		`{"type":"tool_start","tool":"lookup_order"}`,
		`{"type":"token","content":"Checking"}`,
		`{"type":"tool_start","tool":"lookup_order"}`,
	}
	first := upgradeAll(t, NewStreamHost(nil), Scout, frames[:3]...)
	again := upgradeAll(t, NewStreamHost(nil), Scout, frames...)
	var s chatprotocol.ChatStateV1
	for _, env := range append(first, again...) {
		require.NoError(t, s.Apply(env))
	}
	assert.Equal(t, marshalAll(t, first), marshalAll(t, again[:3]))
	turn, ok := s.Turn("turn-1")
	require.True(t, ok)
	require.Len(t, turn.ToolCalls, 2)
	assert.Equal(t, "turn-1-call-1", turn.ToolCalls[0].CallID)
	assert.Equal(t, "turn-1-call-2", turn.ToolCalls[1].CallID)
	assert.Equal(t, "Checking", turn.Text())
}

func TestStreamHostConcurrentCallIDs(t *testing.T) {
	h := NewStreamHost(&StreamHostOptions{ConversationID: "c"})
	const n = 64
	ids := make([]string, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			id, ok, err := h.ToolCallID(t.Context(), &ToolCallFrame{Name: "x"})
			assert.NoError(t, err)
			assert.True(t, ok)
			ids[i] = id
		})
	}
	wg.Wait()
	seen := map[string]bool{}
	for _, id := range ids {
		seen[id] = true
	}
	assert.Len(t, seen, n, "every tool start got its own ordinal")
	assert.True(t, seen["turn-1-call-64"])
}
