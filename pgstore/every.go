package pgstore

import (
	"context"
	"time"

	"github.com/Papercusp/chat-protocol-go/internal/ticker"
)

// every calls tick once per interval (a positive duration) until ctx
// ends; a tick that runs long delays the next one, never doubles it.
func every(ctx context.Context, interval time.Duration, tick func()) {
	ticker.Every(ctx, nil, interval, func(time.Time) bool { tick(); return true })
}
