package stream

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strconv"
	"time"

	chatprotocol "github.com/Papercusp/chat-protocol-go"
	"github.com/Papercusp/chat-protocol-go/internal/patience"
	"github.com/Papercusp/chat-protocol-go/refusal"
	"github.com/Papercusp/chat-protocol-go/serve"
	"github.com/Papercusp/chat-protocol-go/sse"
)

// DefaultMaxBackoff caps the delay between two attempts of Follow: 30
// seconds.
const DefaultMaxBackoff = 30 * time.Second

// FollowOptions configures Follow. A nil *FollowOptions, and every zero
// field, means the default.
type FollowOptions struct {
	// Client sends the requests; nil means [http.DefaultClient]. Its Timeout,
	// if any, bounds each connection, so a long stream wants none.
	Client *http.Client

	// Header is added to every request (credentials, say). Follow sets
	// Accept: text/event-stream and Last-Event-ID itself.
	Header http.Header

	// State is the state the envelopes are applied to, and the one Follow
	// returns; nil means a new empty ChatStateV1. To resume a turn, pass the
	// state that holds it up to LastEventID.
	State *chatprotocol.ChatStateV1

	// LastEventID is the cursor of the first request, the decimal seq of
	// the last envelope State holds of the turn; "" starts from the first
	// frame the window retains.
	LastEventID string

	// OnEnvelope, when set, is called with every envelope once it is
	// applied to State, in seq order, and never twice for one seq: a
	// redelivered identical envelope is a no-op of the reducer and is not
	// passed on. An error it returns stops Follow, which returns it.
	OnEnvelope func(env *chatprotocol.ChatEventEnvelope) error

	// Parser configures the envelope reader (size limit, registry); nil
	// means the defaults of [chatprotocol.ParseEnvelope].
	Parser *chatprotocol.ParserOptions

	// Retry is the base reconnection delay until a stream sends a retry
	// line; 0 means [serve.DefaultRetry].
	Retry time.Duration

	// MaxBackoff caps the delay between two attempts; 0 means
	// [DefaultMaxBackoff].
	MaxBackoff time.Duration

	// MaxAttempts is the number of consecutive attempts without a new
	// envelope after which Follow gives up, returning the last attempt's
	// error; 0 means no limit (until ctx ends).
	MaxAttempts int

	// Rand returns a number in [0, 1) for the jitter of each delay; nil
	// means math/rand/v2.Float64. Tests inject their own.
	Rand func() float64

	// Sleep waits d or until ctx ends, returning ctx's error then; nil
	// means a timer. Tests inject their own clock.
	Sleep func(ctx context.Context, d time.Duration) error
}

// Follow reads one turn's stream from url until the turn ends, reconnecting
// as often as it takes, and returns the state its envelopes add up to
// (docs/contract.md section 14.4). Each request is a GET with Accept:
// text/event-stream and, from the second on (or from the first with
// [FollowOptions.LastEventID]), the Last-Event-ID of the last envelope
// applied. Every envelope is applied to the state
// ([chatprotocol.ChatStateV1.Apply]), then passed to
// [FollowOptions.OnEnvelope].
//
// Follow returns the state and nil when a lifecycle event ends the turn or
// the server answers 204 No Content. After a network error, a response
// that ends before the turn does, a 5xx, 408 or 429, it waits the stream's
// retry delay ([FollowOptions.Retry] until a retry line says otherwise),
// doubled for each further attempt in a row without a new envelope, capped
// at [FollowOptions.MaxBackoff], jittered by up to half, and reconnects. It
// returns the state so far with:
//
//   - a [*StatusError] for any other status, whose code [refusal.CodeOf]
//     reads;
//   - the refusal of a frame the reader or the reducer refuses;
//   - an error for a 200 that is not an event stream;
//   - OnEnvelope's error, or ctx's cause once ctx ends;
//   - the last attempt's error after [FollowOptions.MaxAttempts].
func Follow(ctx context.Context, url string, opts *FollowOptions) (*chatprotocol.ChatStateV1, error) {
	f := newFollower(opts)
	for failures := 0; ; {
		progressed, done, err := f.attempt(ctx, url)
		if done || (err != nil && !isRetryable(err)) {
			return f.state, err
		}
		if ctx.Err() != nil {
			return f.state, context.Cause(ctx)
		}
		if progressed {
			failures = 0
		} else {
			failures++
		}
		if f.o.MaxAttempts > 0 && failures >= f.o.MaxAttempts {
			return f.state, fmt.Errorf("stream: giving up after %d attempts: %w", failures, err)
		}
		if err := f.sleep(ctx, f.delay(failures)); err != nil {
			return f.state, context.Cause(ctx)
		}
	}
}

// follower is the state of one Follow call.
type follower struct {
	o      FollowOptions
	client *http.Client
	state  *chatprotocol.ChatStateV1
	cursor string
	retry  time.Duration
	sleep  func(context.Context, time.Duration) error
	rand   func() float64
}

func newFollower(opts *FollowOptions) *follower {
	f := &follower{}
	if opts != nil {
		f.o = *opts
	}
	f.client, f.state, f.cursor = f.o.Client, f.o.State, f.o.LastEventID
	if f.client == nil {
		f.client = http.DefaultClient
	}
	if f.state == nil {
		f.state = &chatprotocol.ChatStateV1{}
	}
	f.retry = cmp.Or(f.o.Retry, serve.DefaultRetry)
	f.o.MaxBackoff = cmp.Or(f.o.MaxBackoff, DefaultMaxBackoff)
	f.sleep, f.rand = f.o.Sleep, f.o.Rand
	if f.sleep == nil {
		f.sleep = patience.Pause
	}
	if f.rand == nil {
		f.rand = rand.Float64
	}
	return f
}

// delay is the wait before the next attempt after failures consecutive
// attempts without progress (0 after an attempt that brought one):
// retry·2^(failures-1), at least retry, capped at MaxBackoff, minus a
// jitter of up to half of it.
func (f *follower) delay(failures int) time.Duration {
	d := f.retry
	for i := 1; i < failures && d < f.o.MaxBackoff; i++ {
		d *= 2
	}
	d = min(d, f.o.MaxBackoff)
	return d - time.Duration(f.rand()*float64(d/2))
}

// retryable marks an attempt's error after which Follow reconnects.
type retryable struct{ err error }

func (r retryable) Error() string { return r.err.Error() }
func (r retryable) Unwrap() error { return r.err }

func isRetryable(err error) bool {
	_, ok := errors.AsType[retryable](err)
	return ok
}

// attempt makes one request and reads its stream. It reports whether it
// applied a new envelope, and whether the turn is over.
func (f *follower) attempt(ctx context.Context, url string) (progressed, done bool, err error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return false, false, err
	}
	for k, v := range f.o.Header {
		req.Header[k] = v
	}
	req.Header.Set("Accept", sse.ContentType)
	if f.cursor != "" {
		req.Header.Set("Last-Event-ID", f.cursor)
	}
	resp, err := f.client.Do(req)
	if err != nil {
		return false, false, retryable{err}
	}
	defer resp.Body.Close()
	switch s := resp.StatusCode; {
	case s == http.StatusNoContent:
		return false, true, nil
	case s >= 500 || s == http.StatusRequestTimeout || s == http.StatusTooManyRequests:
		return false, false, retryable{fmt.Errorf("stream: %s answered %s", url, resp.Status)}
	case s != http.StatusOK:
		return false, false, readRefusal(resp)
	case !sse.IsEventStream(resp.Header.Get("Content-Type")):
		return false, false, fmt.Errorf("stream: %s answered %q, not an event stream", url, resp.Header.Get("Content-Type"))
	}
	rd := chatprotocol.NewEnvelopeReader(resp.Body, f.o.Parser)
	defer func() {
		if d, ok := rd.Retry(); ok {
			f.retry = d
		}
	}()
	for {
		env, err := rd.Next()
		if err != nil {
			if refusal.CodeOf(err) != "" {
				return progressed, false, err
			}
			if err == io.EOF {
				err = io.ErrUnexpectedEOF // the turn has not ended
			}
			return progressed, false, retryable{fmt.Errorf("stream: reading %s: %w", url, err)}
		}
		applied, end, err := f.apply(&env)
		if err != nil {
			return progressed, false, err
		}
		progressed = progressed || applied
		if end {
			return progressed, true, nil
		}
	}
}

// apply applies env to the state, passes it to OnEnvelope unless it was a
// redelivery, and moves the cursor. It reports whether env was new and
// whether it ended the turn.
func (f *follower) apply(env *chatprotocol.ChatEventEnvelope) (applied, end bool, err error) {
	t, ok := f.state.Turn(env.TurnID)
	redelivered := ok && env.Seq <= t.LastSeq
	if err := f.state.Apply(*env); err != nil {
		return false, false, err
	}
	if !redelivered {
		f.cursor = strconv.FormatInt(env.Seq, 10)
		if f.o.OnEnvelope != nil {
			if err := f.o.OnEnvelope(env); err != nil {
				return true, false, err
			}
		}
	}
	lc, ok := env.Event.(*chatprotocol.LifecycleEvent)
	return !redelivered, ok && lc.Status.Terminal(), nil
}
