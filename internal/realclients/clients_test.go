package realclients

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	ldes "github.com/launchdarkly/eventsource"
	r3sse "github.com/r3labs/sse/v2"
	gosse "github.com/tmaxmax/go-sse"
	"gopkg.in/cenkalti/backoff.v1"

	"github.com/Papercusp/chat-protocol-go/internal/testkit/realclient"
	"github.com/Papercusp/chat-protocol-go/sse"
)

// errTurnEnded is what the clients' response validators return on a 204:
// the turn ended and the client resumed after its end; it stops them.
var errTurnEnded = errors.New("204: the turn ended")

// conns records the requests a client sends (their Last-Event-ID) and the
// responses it gets, through its http.Client's transport.
type conns struct {
	next http.RoundTripper

	mu           sync.Mutex
	lastIDs      []string // per request, in order
	uncompressed []bool   // per response: the transport decoded a content coding
}

func newConns(next http.RoundTripper) *conns {
	if next == nil {
		next = http.DefaultTransport.(*http.Transport).Clone()
	}
	return &conns{next: next}
}

// RoundTrip records req and its response.
func (c *conns) RoundTrip(req *http.Request) (*http.Response, error) {
	c.mu.Lock()
	c.lastIDs = append(c.lastIDs, req.Header.Get("Last-Event-ID"))
	c.mu.Unlock()
	res, err := c.next.RoundTrip(req)
	if err == nil {
		c.mu.Lock()
		c.uncompressed = append(c.uncompressed, res.Uncompressed)
		c.mu.Unlock()
	}
	return res, err
}

// count is the number of requests so far.
func (c *conns) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.lastIDs)
}

// requests returns the Last-Event-ID of every request so far.
func (c *conns) requests() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.lastIDs...)
}

// run is what one client dispatched and how it ended.
type run struct {
	Messages []realclient.Message
	Conn     []int       // per message: the request it came on (0-based)
	At       []time.Time // per message: when it was dispatched
	Requests []string    // per request: its Last-Event-ID
	Retries  int
	Err      error // how the client returned
	Took     time.Duration
}

// followGoSSE follows url with a go-sse Connection, as its docs show: the
// default backoff (which go-sse resets to the stream's retry on every
// response), every unnamed event through SubscribeMessages, and a response
// validator that names the 204 and otherwise is go-sse's default (which
// stops on a 204 too: its errors are permanent). go-sse reconnects after
// any end of a response, clean or not, applies an id when it dispatches
// the frame, and drops an incomplete frame and comments. rt, when not nil,
// is the transport under the recorder.
func followGoSSE(ctx context.Context, t *testing.T, url string, rt http.RoundTripper) run {
	t.Helper()
	rec := newConns(rt)
	client := &gosse.Client{
		HTTPClient: &http.Client{Transport: rec},
		ResponseValidator: func(res *http.Response) error {
			if res.StatusCode == http.StatusNoContent {
				return errTurnEnded
			}
			return gosse.DefaultValidator(res)
		},
	}
	var r run
	client.OnRetry = func(error, time.Duration) { r.Retries++ }
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	c := client.NewConnection(req)
	c.SubscribeMessages(func(ev gosse.Event) {
		r.Messages = append(r.Messages, realclient.Message{ID: ev.LastEventID, Event: sse.EventMessage, Data: ev.Data})
		r.Conn = append(r.Conn, rec.count()-1)
		r.At = append(r.At, time.Now())
	})
	start := time.Now()
	r.Err = c.Connect()
	r.Took = time.Since(start)
	r.Requests = rec.requests()
	return r
}

// followR3labs follows url with an r3labs/sse Client, as its README
// shows, with what its defaults lack: a constant backoff of the stream's
// retry (r3labs ignores the retry field, and its default exponential
// backoff is never reset between connections: 0.5s, 0.75s, 1.1s... after
// each cut), and a response validator that stops on a 204 (its default
// retries every non-200, a 204 too, until the backoff gives up, 15 minutes
// by default). A clean end of the response is final to r3labs: Subscribe
// returns nil. Heartbeat events (event: heartbeat) are dropped; every
// other event the client hands over is kept, raw: r3labs hands over a
// comment as an empty message carrying the last id, and what it read of a
// frame when the connection breaks (TestR3labsQuirksOnHandWrittenBytes,
// r3labsTornTails).
func followR3labs(ctx context.Context, t *testing.T, url string, retry time.Duration) run {
	t.Helper()
	rec := newConns(nil)
	c := r3sse.NewClient(url)
	c.Connection = &http.Client{Transport: rec}
	var r run
	c.ReconnectStrategy = backoff.WithContext(backoff.NewConstantBackOff(retry), ctx)
	c.ReconnectNotify = func(error, time.Duration) { r.Retries++ }
	c.ResponseValidator = func(_ *r3sse.Client, res *http.Response) error {
		if res.StatusCode == http.StatusOK {
			return nil
		}
		res.Body.Close()
		if res.StatusCode == http.StatusNoContent {
			return backoff.Permanent(errTurnEnded)
		}
		return fmt.Errorf("status %d", res.StatusCode)
	}
	start := time.Now()
	r.Err = c.SubscribeRawWithContext(ctx, func(ev *r3sse.Event) {
		if string(ev.Event) == sse.EventHeartbeat {
			return
		}
		event := string(ev.Event)
		if event == "" {
			event = sse.EventMessage
		}
		r.Messages = append(r.Messages, realclient.Message{ID: string(ev.ID), Event: event, Data: string(ev.Data)})
		r.Conn = append(r.Conn, rec.count()-1)
		r.At = append(r.At, time.Now())
	})
	r.Took = time.Since(start)
	r.Requests = rec.requests()
	return r
}

// followLaunchDarkly follows url with a launchdarkly/eventsource Stream, as
// its docs show: SubscribeWithRequestAndOptions (SubscribeWithURL with a
// request of its own, here bound to ctx), then reading stream.Events and
// stream.Errors, which must be drained (the stream blocks on an unread
// error). Options: the recording client, and StreamOptionCanRetryFirstConnection,
// so that a first connection cut before its headers end is retried as later
// ones are (by default it fails the subscription). The stream applies an
// id at dispatch, never dispatches an incomplete frame, takes the stream's
// retry, and reconnects after any end of a response, clean or not. A 204 is
// reported as a SubscriptionError of code 204 and retried like any other
// failure: the reader closes the stream on the second such error (see
// ldNoContents), so that the tests see the first retried. The opening heartbeat
// (event: heartbeat, with the retry line) is dispatched as an event and
// dropped here, as every heartbeat.
// ldNoContents is the count of 204s on which followLaunchDarkly's reader
// closes the stream.
const ldNoContents = 2

// opts are added after the recording client and the first connection's
// retry.
func followLaunchDarkly(ctx context.Context, t *testing.T, url string, opts ...ldes.StreamOption) run {
	t.Helper()
	rec := newConns(nil)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	var r run
	start := time.Now()
	stream, err := ldes.SubscribeWithRequestAndOptions(req, append([]ldes.StreamOption{
		ldes.StreamOptionHTTPClient(&http.Client{Transport: rec}),
		ldes.StreamOptionCanRetryFirstConnection(rcTimeout)}, opts...)...)
	if err != nil {
		r.Err = err
		r.Took = time.Since(start)
		r.Requests = rec.requests()
		return r
	}
	events, errs := stream.Events, stream.Errors
	noContents := 0
	for r.Err == nil {
		select {
		case ev, ok := <-events:
			if !ok {
				r.Err = errors.New("the stream closed its events")
				break
			}
			if ev.Event() == sse.EventHeartbeat {
				continue
			}
			event := ev.Event()
			if event == "" {
				event = sse.EventMessage
			}
			r.Messages = append(r.Messages, realclient.Message{ID: ev.(ldes.EventWithLastID).LastEventID(), Event: event, Data: ev.Data()})
			r.Conn = append(r.Conn, rec.count()-1)
			r.At = append(r.At, time.Now())
		case err, ok := <-errs:
			if !ok {
				r.Err = errors.New("the stream closed its errors")
				break
			}
			r.Retries++
			if se, ok := errors.AsType[ldes.SubscriptionError](err); ok && se.Code == http.StatusNoContent {
				if noContents++; noContents == ldNoContents {
					r.Err = errTurnEnded
				}
			}
		case <-ctx.Done():
			r.Err = ctx.Err()
		}
	}
	stream.Close()
	for events != nil || errs != nil { // until the stream's goroutine is done
		select {
		case _, ok := <-events:
			if !ok {
				events = nil
			}
		case _, ok := <-errs:
			if !ok {
				errs = nil
			}
		}
	}
	r.Took = time.Since(start)
	r.Requests = rec.requests()
	return r
}
