package replay_test

import (
	"context"
	"testing"

	"go.uber.org/goleak"

	_ "github.com/Papercusp/chat-protocol-go/internal/testkit/golden" // accepts go test ./... -update
	"github.com/Papercusp/chat-protocol-go/replay"
	"github.com/Papercusp/chat-protocol-go/replay/replaytest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestMemoryConformance runs the conformance kit against Memory, with count
// retention through MemoryOptions.MaxFrames.
func TestMemoryConformance(t *testing.T) {
	replaytest.TestWindow(t, replaytest.Config{
		NewSubject: func(context.Context) (replaytest.Subject, error) {
			return replaytest.Subject{Window: replay.NewMemory(nil)}, nil
		},
		NewRetaining: func(_ context.Context, maxFrames int) (replaytest.Subject, error) {
			return replaytest.Subject{Window: replay.NewMemory(&replay.MemoryOptions{MaxFrames: maxFrames})}, nil
		},
	})
}

// TestMemoryConformanceWithASmallFrameLimit runs the frame-limit check at a
// limit other than the default.
func TestMemoryConformanceWithASmallFrameLimit(t *testing.T) {
	replaytest.TestWindow(t, replaytest.Config{
		NewSubject: func(context.Context) (replaytest.Subject, error) {
			return replaytest.Subject{Window: replay.NewMemory(&replay.MemoryOptions{MaxFrameBytes: 4096})}, nil
		},
		MaxFrameBytes: 4096,
	})
}
