package realclients

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	ldes "github.com/launchdarkly/eventsource"
	r3sse "github.com/r3labs/sse/v2"
	"github.com/stretchr/testify/require"
	gosse "github.com/tmaxmax/go-sse"
	"gopkg.in/cenkalti/backoff.v1"

	"github.com/Papercusp/chat-protocol-go/internal/testkit/cutproxy"
	"github.com/Papercusp/chat-protocol-go/internal/testkit/realclient"
)

// The rows of docs/contract.md section 14.4 that are about a client's own
// defaults: what it does at a 204 and with the retry field, as its README
// uses it, without the response validators and reconnect strategies the
// cut tests give it.

// noContent is a server that answers every request 204 and records when.
type noContent struct {
	srv *httptest.Server
	mu  sync.Mutex
	at  []time.Time
}

func newNoContent(t *testing.T) *noContent {
	nc := &noContent{}
	nc.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		nc.mu.Lock()
		nc.at = append(nc.at, time.Now())
		nc.mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(nc.srv.Close)
	return nc
}

func (nc *noContent) requests() int {
	nc.mu.Lock()
	defer nc.mu.Unlock()
	return len(nc.at)
}

// waitRequests waits until nc had n requests, failing t after rcTimeout.
func (nc *noContent) waitRequests(t *testing.T, n int) {
	t.Helper()
	deadline := time.Now().Add(rcTimeout)
	for nc.requests() < n {
		require.True(t, time.Now().Before(deadline), "%d requests of %d in %s", nc.requests(), n, rcTimeout)
		time.Sleep(10 * time.Millisecond)
	}
}

// go-sse's default response validator refuses a 204 with an error that is
// permanent: the connection stops, after one request.
func TestGoSSEStopsOnA204ByDefault(t *testing.T) {
	t.Parallel()
	nc := newNoContent(t)
	ctx, cancel := context.WithTimeout(t.Context(), rcTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, nc.srv.URL, nil)
	require.NoError(t, err)
	var dispatched int
	c := (&gosse.Client{}).NewConnection(req)
	c.SubscribeMessages(func(gosse.Event) { dispatched++ })
	err = c.Connect()
	require.Error(t, err, "Connect returns the validator's error")
	require.NoError(t, ctx.Err(), "it returned before the deadline")
	require.Equal(t, 1, nc.requests(), "one request, not retried")
	require.Zero(t, dispatched)
}

// r3labs with its defaults (NewClient, SubscribeRawWithContext): its
// response validator takes a 204 for a failure and its reconnect strategy
// retries it, an exponential backoff from 0.5s whose default gives up
// after 15 minutes. That default sleeps without looking at the context, so
// the test gives it the same backoff bound to its context, and stops it
// on the third request.
func TestR3labsRetriesA204ByDefault(t *testing.T) {
	t.Parallel()
	nc := newNoContent(t)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	c := r3sse.NewClient(nc.srv.URL)
	c.ReconnectStrategy = backoff.WithContext(backoff.NewExponentialBackOff(), ctx)
	go func() { done <- c.SubscribeRawWithContext(ctx, func(*r3sse.Event) {}) }()
	nc.waitRequests(t, 3)
	cancel()
	select {
	case <-done:
	case <-time.After(rcTimeout):
		t.Fatalf("SubscribeRawWithContext did not return once its context ended")
	}
	require.Equal(t, 15*time.Minute, backoff.NewExponentialBackOff().MaxElapsedTime, "the default strategy's bound")
}

// r3labs ignores the stream's retry field: with the Handler asking for a
// minute between connections, its default strategy reconnects after each
// of three cuts right after id lines within seconds, and, its turn ended
// cleanly, returns nil with every frame once.
func TestR3labsIgnoresRetry(t *testing.T) {
	t.Parallel()
	turn := realclient.Serve(t, rcKey("r3labs-retry", 0), &realclient.Options{Deltas: rcDeltas, Pace: rcPace, Retry: time.Minute,
		Proxy: cutproxy.Options{Arm: []byte("text/event-stream"),
			Plan: cutproxy.Fixed(cutproxy.Cut{IDLine: 3}, cutproxy.Cut{IDLine: 5}, cutproxy.Cut{IDLine: 7})}})
	ctx, cancel := context.WithTimeout(t.Context(), rcTimeout)
	defer cancel()
	rec := newConns(nil)
	c := r3sse.NewClient(turn.StreamURL())
	c.Connection = &http.Client{Transport: rec}
	var msgs []realclient.Message
	start := time.Now()
	err := c.SubscribeRawWithContext(ctx, func(ev *r3sse.Event) {
		if len(ev.ID) > 0 && string(ev.Event) == "" {
			msgs = append(msgs, realclient.Message{ID: string(ev.ID), Event: "message", Data: string(ev.Data)})
		}
	})
	took := time.Since(start)
	require.NoError(t, err, "a clean end is final to r3labs")
	turn.RequireEveryFrameOnce(t, msgs)
	require.Equal(t, 3, turn.Proxy.Stats().Cuts)
	reqs := turn.Requests()
	require.Len(t, reqs, 4, "three reconnections, none after the clean end")
	for i := 1; i < len(reqs); i++ {
		require.Less(t, reqs[i].At.Sub(reqs[i-1].At), time.Minute/2, "request %d came long before the stream's retry", i+1)
	}
	t.Logf("%s", turn.Figures(len(msgs), took))
}

// launchdarkly takes the stream's retry field, from the opening heartbeat
// it dispatches: with its own initial delay set to a minute and the
// Handler's retry at 300ms, it comes back after the turn's clean end, and
// retries the 204, each after about 300ms.
func TestLaunchDarklyTakesRetry(t *testing.T) {
	t.Parallel()
	const retry = 300 * time.Millisecond
	turn := realclient.Serve(t, rcKey("launchdarkly-retry", 0), &realclient.Options{Deltas: 8, Pace: rcPace, Retry: retry})
	ctx, cancel := context.WithTimeout(t.Context(), rcTimeout)
	defer cancel()
	r := followLaunchDarkly(ctx, t, turn.StreamURL(), ldes.StreamOptionInitialRetry(time.Minute))
	require.ErrorIs(t, r.Err, errTurnEnded)
	turn.RequireEveryFrameOnce(t, r.Messages)
	reqs := turn.Requests()
	require.Len(t, reqs, 1+ldNoContents, "the stream, then the 204s")
	for i := 1; i < len(reqs); i++ {
		gap := reqs[i].At.Sub(reqs[i-1].At)
		require.GreaterOrEqual(t, gap, retry, "request %d waited the stream's retry", i+1)
		require.Less(t, gap, time.Minute/2, "request %d did not wait its own initial delay", i+1)
		t.Logf("request %d after %s", i+1, gap.Round(time.Millisecond))
	}
}
