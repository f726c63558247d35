package redisstore

import (
	"context"
	"testing"

	"github.com/Papercusp/chat-protocol-go/replay/replaytest"
)

// TestWindowConformance runs the replay window kit against the Window,
// with count retention for its retention check.
func TestWindowConformance(t *testing.T) {
	addr := needRedis(t)
	replaytest.TestWindow(t, replaytest.Config{
		NewSubject: subject(addr, WindowOptions{}),
		NewRetaining: func(ctx context.Context, maxFrames int) (replaytest.Subject, error) {
			return subject(addr, WindowOptions{MaxFrames: maxFrames})(ctx)
		},
	})
}
