package agui_test

import (
	"bufio"
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	chatprotocol "github.com/Papercusp/chat-protocol-go"
	"github.com/Papercusp/chat-protocol-go/agui"
	"github.com/Papercusp/chat-protocol-go/internal/testkit/turnhost"
	"github.com/Papercusp/chat-protocol-go/recovery"
	"github.com/Papercusp/chat-protocol-go/replay"
)

// stopFixture is the bridge over a turnhost host, whose turns are cancelled
// through recovery, with the cancel endpoint's Cancel as the hook.
type stopFixture struct {
	host *turnhost.Host
	srv  *httptest.Server
	keys chan replay.Key // each run's turn, as StartRun starts it
}

func newStopFixture(t *testing.T, pace time.Duration, keep bool) *stopFixture {
	t.Helper()
	host, err := turnhost.New(pace)
	require.NoError(t, err)
	f := &stopFixture{host: host, keys: make(chan replay.Key, 8)}
	h, err := agui.NewHandler(host.Window, &agui.HandlerOptions{
		StartRun: func(ctx context.Context, _ *http.Request, in *agui.RunInput) (replay.Key, error) {
			key, err := host.Start(ctx, in.ThreadID)
			if err == nil {
				f.keys <- key
			}
			return key, err
		},
		Cancel:              host.Cancels.Cancel,
		KeepRunOnDisconnect: keep,
	})
	require.NoError(t, err)
	f.srv = httptest.NewServer(h)
	t.Cleanup(func() { f.srv.Close(); host.Wait() })
	return f
}

// runUntilText posts a run as user and reads it up to its first
// TEXT_MESSAGE_CONTENT; leave ends the request, as a client that goes away.
func (f *stopFixture) runUntilText(t *testing.T, user string) (key replay.Key, leave func()) {
	t.Helper()
	ctx, end := context.WithCancel(t.Context())
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, f.srv.URL,
		strings.NewReader(`{"threadId":"thread-1","runId":"run-1","messages":[]}`))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-User", user)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() && !strings.Contains(sc.Text(), `"TEXT_MESSAGE_CONTENT"`) {
	}
	require.NoError(t, sc.Err())
	return <-f.keys, func() { end(); resp.Body.Close() }
}

// ended waits, within deadline, for key's turn to end, and returns
// recovery's status and the version-1 state's.
func (f *stopFixture) ended(t *testing.T, key replay.Key, deadline time.Duration) (recovery.TurnStatus, chatprotocol.LifecycleStatus) {
	t.Helper()
	var status recovery.TurnStatus
	require.Eventually(t, func() bool {
		var err error
		status, err = f.host.Status(t.Context(), key)
		return err == nil && status.Terminal()
	}, deadline, 5*time.Millisecond, "the turn did not end")
	var lifecycle chatprotocol.LifecycleStatus
	require.Eventually(t, func() bool {
		tt, err := f.host.Turn(t.Context(), key)
		if err == nil {
			lifecycle = tt.Status
		}
		return lifecycle.Terminal()
	}, deadline, 5*time.Millisecond, "the window holds no end of the turn")
	return status, lifecycle
}

// A run whose client goes away cancels its turn, through recovery with
// the cancel endpoint's caller and rights: the turn ends cancelled on the
// window, well before its script would have completed it.
func TestADisconnectCancelsTheRunsTurn(t *testing.T) {
	f := newStopFixture(t, 200*time.Millisecond, false)
	key, leave := f.runUntilText(t, turnhost.User)
	leave()
	status, lifecycle := f.ended(t, key, 10*time.Second)
	assert.Equal(t, recovery.TurnCancelled, status)
	assert.Equal(t, chatprotocol.LifecycleCancelled, lifecycle)
}

// With KeepRunOnDisconnect, and for a caller without the right to cancel
// the turn, a run's disconnect cancels nothing: the turn completes.
func TestADisconnectThatMayNotCancel(t *testing.T) {
	for _, c := range []struct {
		name string
		keep bool
		user string
	}{{"KeepRunOnDisconnect", true, turnhost.User}, {"a caller without the right", false, "mallory"}} {
		t.Run(c.name, func(t *testing.T) {
			f := newStopFixture(t, 50*time.Millisecond, c.keep)
			key, leave := f.runUntilText(t, c.user)
			leave()
			status, lifecycle := f.ended(t, key, 10*time.Second)
			assert.Equal(t, recovery.TurnCompleted, status)
			assert.Equal(t, chatprotocol.LifecycleCompleted, lifecycle)
		})
	}
}
