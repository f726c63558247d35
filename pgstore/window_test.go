package pgstore

import (
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/Papercusp/chat-protocol-go/replay"
	"github.com/Papercusp/chat-protocol-go/replay/replaytest"
)

// newTestWindow returns a Window on a pool of the test database (session
// isolation iso), both closed when t ends. The periodic catch-up read is
// off unless opts sets it, so that the notifications alone must wake
// every Wait of the kit.
func newTestWindow(t testing.TB, iso pgx.TxIsoLevel, opts WindowOptions) *Window {
	t.Helper()
	pool := newPool(t, poolOpts{iso: iso, maxConns: 8})
	if opts.CatchUpInterval == 0 {
		opts.CatchUpInterval = -1
	}
	w, err := NewWindow(pool, &opts)
	require.NoError(t, err)
	t.Cleanup(w.Close)
	return w
}

func TestWindowConformance(t *testing.T) {
	for _, iso := range isolations {
		t.Run(isoName(iso), func(t *testing.T) {
			needDB(t)
			replaytest.TestWindow(t, replaytest.Config{
				NewWindow: func(t *testing.T) replay.Window { return newTestWindow(t, iso, WindowOptions{}) },
				NewRetaining: func(t *testing.T, maxFrames int) replay.Window {
					return newTestWindow(t, iso, WindowOptions{MaxFrames: maxFrames})
				},
				Readers: 200,
				Timeout: 10 * time.Second,
			})
		})
	}
}
