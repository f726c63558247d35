package legacy

import (
	"cmp"
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	chatprotocol "github.com/Papercusp/chat-protocol-go"
	"github.com/Papercusp/chat-protocol-go/refusal"
)

// storeHost is a Host backed by a store that may fail: a StreamHost whose
// methods first ask the store (callIDErr, identifyErr) and record the
// context they were given.
type storeHost struct {
	*StreamHost
	callIDErr, identifyErr error
	ctxs                   []context.Context
}

func (h *storeHost) ToolCallID(ctx context.Context, f Frame) (string, bool, error) {
	h.ctxs = append(h.ctxs, ctx)
	if h.callIDErr != nil {
		return "ignored", true, h.callIDErr
	}
	return h.StreamHost.ToolCallID(ctx, f)
}

func (h *storeHost) Identify(ctx context.Context, env *chatprotocol.ChatEventEnvelope) error {
	h.ctxs = append(h.ctxs, ctx)
	if h.identifyErr != nil {
		return h.identifyErr
	}
	return h.StreamHost.Identify(ctx, env)
}

var errStoreDown = errors.New("store down")

type ctxKey struct{}

// TestHostFailureIsNoRefusal: an error of the host's store comes back as
// a *HostError wrapping it, without a contract code, while the host's own
// refusals and a missing mapping stay refusals.
func TestHostFailureIsNoRefusal(t *testing.T) {
	toolStart := &ToolStartFrame{Tool: "search"}
	refused := &refusal.Error{Code: refusal.CodeMissingCallID, Path: "/callId", Message: "the host's own words"}
	tests := []struct {
		name                   string
		callIDErr, identifyErr error
		frame                  Frame
		method                 string // of the *HostError, "" for a refusal
		code                   refusal.Code
	}{
		{"call id store down", errStoreDown, nil, toolStart, "ToolCallID", ""},
		{"call id ctx ended", context.Canceled, nil, toolStart, "ToolCallID", ""},
		{"identity store down", nil, errStoreDown, toolStart, "Identify", ""},
		{"identity store down, no tool", nil, errStoreDown, &TokenFrame{Content: "x"}, "Identify", ""},
		{"host refuses the call id", refused, nil, toolStart, "", refusal.CodeMissingCallID},
		{"host refuses the identity", nil, refused, toolStart, "", refusal.CodeMissingCallID},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := &storeHost{StreamHost: NewStreamHost(&StreamHostOptions{ConversationID: "c"}), callIDErr: tt.callIDErr, identifyErr: tt.identifyErr}
			ctx := context.WithValue(t.Context(), ctxKey{}, tt.name)
			envs, err := UpgradeLegacyChatFrame(ctx, tt.frame, h)
			require.Error(t, err)
			assert.Nil(t, envs)
			assert.Equal(t, tt.code, refusal.CodeOf(err))
			hostErr, isHostErr := errors.AsType[*HostError](err)
			if tt.method == "" {
				assert.False(t, isHostErr, "a refusal is returned as it is")
				assert.Same(t, refused, err)
			} else {
				require.True(t, isHostErr, "%v", err)
				assert.Equal(t, tt.method, hostErr.Method)
				assert.ErrorIs(t, err, cmp.Or(tt.callIDErr, tt.identifyErr))
			}
			require.NotEmpty(t, h.ctxs)
			for _, got := range h.ctxs {
				assert.Equal(t, tt.name, got.Value(ctxKey{}), "the host gets the upgrade's ctx")
			}
			assert.Zero(t, h.Seq(), "a failed upgrade uses up no seq")
		})
	}
}

// TestHostRecoversAfterFailure: once the store is back, the same frame
// upgrades with the identity it would have had.
func TestHostRecoversAfterFailure(t *testing.T) {
	h := &storeHost{StreamHost: NewStreamHost(&StreamHostOptions{ConversationID: "c"}), callIDErr: errStoreDown}
	frame := &ToolStartFrame{Tool: "search"}
	_, err := UpgradeLegacyChatFrame(t.Context(), frame, h)
	require.ErrorIs(t, err, errStoreDown)
	h.callIDErr = nil
	envs, err := UpgradeLegacyChatFrame(t.Context(), frame, h)
	require.NoError(t, err)
	require.Len(t, envs, 1)
	assert.Equal(t, int64(1), envs[0].Seq)
	assert.Equal(t, "turn-1-call-1", envs[0].Event.(*chatprotocol.ToolCallEvent).CallID)
}
