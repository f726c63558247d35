package turn_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	chatprotocol "github.com/Papercusp/chat-protocol-go"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Papercusp/chat-protocol-go/recovery"
	"github.com/Papercusp/chat-protocol-go/refusal"
	"github.com/Papercusp/chat-protocol-go/replay"
	"github.com/Papercusp/chat-protocol-go/stream"
	"github.com/Papercusp/chat-protocol-go/turn"
)

// timeline records the moments of a cancellation in the order they
// happen.
type timeline struct {
	mu     sync.Mutex
	events []string
}

func (l *timeline) add(e string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.events = append(l.events, e)
}

func (l *timeline) all() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.events...)
}

// committing is the memory store, recording when a cancellation commits.
type committing struct {
	*recovery.MemoryStore
	log *timeline
}

func (s committing) EndTurn(ctx context.Context, t recovery.TurnRef, st recovery.TurnStatus) (recovery.TurnRecord, error) {
	rec, err := s.MemoryStore.EndTurn(ctx, t, st)
	if err == nil && st == recovery.TurnCancelled {
		s.log.add("cancel committed")
	}
	return rec, err
}

// aborting is the Runs, recording when the abort hook runs.
type aborting struct {
	runs *turn.Runs
	log  *timeline
}

func (a aborting) Abort(ctx context.Context, t recovery.TurnRef, inFlight []string) error {
	a.log.add("abort " + strings.Join(inFlight, ","))
	return a.runs.Abort(ctx, t, inFlight)
}

// server serves the host's streams and its cancel endpoint; the session is
// the bearer token, alice's or mallory's.
func (h *host) server(t *testing.T) *httptest.Server {
	caller := func(r *http.Request) (string, error) {
		if tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok {
			return tok, nil
		}
		return "", errors.New("no session")
	}
	events, err := stream.NewHandler(h.window, &stream.HandlerOptions{Authorize: func(r *http.Request, k replay.Key) error {
		if c, _ := caller(r); c != alice {
			return refusal.ErrTurnNotFound
		}
		return nil
	}})
	require.NoError(t, err)
	cancel, err := turn.NewCancelHandler(h.rec, &turn.CancelHandlerOptions{Caller: caller})
	require.NoError(t, err)
	mux := http.NewServeMux()
	mux.Handle("GET /conversations/{conversation}/turns/{turn}/events", events)
	mux.Handle("/conversations/{conversation}/turns/{turn}/cancel", cancel)
	srv := httptest.NewServer(mux)
	t.Cleanup(func() {
		events.Close()
		srv.Close()
	})
	return srv
}

// post sends a cancel request as who, with X-Requested-With, and returns
// the status and body.
func post(t *testing.T, srv *httptest.Server, method, id, who string) (int, string) {
	return postWith(t, srv, method, id, who, http.Header{"X-Requested-With": {"fetch"}})
}

// postWith sends a cancel request as who with header and returns the
// status and body.
func postWith(t *testing.T, srv *httptest.Server, method, id, who string, header http.Header) (int, string) {
	req, err := http.NewRequestWithContext(t.Context(), method, srv.URL+"/conversations/"+conversation+"/turns/"+id+"/cancel", nil)
	require.NoError(t, err)
	req.Header = header.Clone()
	req.Header.Set("Authorization", "Bearer "+who)
	resp, err := srv.Client().Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(body)
}

// codeOf is the code of a refusal body.
func codeOf(t *testing.T, body string) string {
	var b struct{ Code string }
	require.NoError(t, json.Unmarshal([]byte(body), &b), body)
	return b.Code
}

// Cancelling from the browser: the cancel request commits the cancellation
// through recovery, then the abort hook runs; the model loop's context
// ends, the admitted tool's execution is aborted through the host, and the
// stream, read by a reconnecting client, ends with lifecycle cancelled. A
// client that goes away cancels nothing; a stranger gets what an unknown
// turn gets; cancelling again is accepted and changes nothing.
func TestCancelEndToEnd(t *testing.T) {
	ctx := t.Context()
	log := &timeline{}
	h := newHost(t)
	runs := turn.NewRuns()
	h.runs = runs
	h.rec = recovery.New(recovery.Host{Store: committing{h.store, log}, Authorizer: h.authz, Aborter: aborting{runs, log}},
		&recovery.Options{Now: h.leases.Now})
	srv := h.server(t)
	p := h.start("t-1")

	pay := newGate()
	modelDone := make(chan error, 1)
	go func() { // the model loop
		mctx := p.Context()
		err := p.Delta(mctx, "Paying now. ")
		if err == nil {
			_, err = p.RunToolCall(mctx, turn.ToolCall{ID: "call_pay", Name: "pay"}, func(c context.Context) (json.RawMessage, error) {
				out, err := pay.tool(c)
				log.add("tool context ended")
				return out, err
			})
		}
		<-mctx.Done()
		log.add("model context ended")
		modelDone <- p.End(mctx, err)
	}()
	<-pay.started

	// A client that reads the stream and goes away cancels nothing.
	away, leave := context.WithCancel(ctx)
	_, err := stream.Follow(away, srv.URL+"/conversations/c-1/turns/t-1/events", &stream.FollowOptions{
		Header: http.Header{"Authorization": {"Bearer alice"}},
		OnEnvelope: func(env *chatprotocol.ChatEventEnvelope) error {
			if env.Seq == 3 {
				leave()
			}
			return nil
		}})
	require.ErrorIs(t, err, context.Canceled)
	require.Never(t, func() bool { return p.Context().Err() != nil }, 30*time.Millisecond, time.Millisecond)

	latest := p.Latest()
	status, body := post(t, srv, http.MethodPost, "t-1", "mallory")
	assert.Equal(t, http.StatusNotFound, status)
	assert.Equal(t, "turn-not-found", codeOf(t, body))
	status, body = post(t, srv, http.MethodPost, "t-unknown", alice)
	assert.Equal(t, http.StatusNotFound, status)
	assert.Equal(t, "turn-not-found", codeOf(t, body))
	assert.Nil(t, p.Context().Err(), "nothing cancelled")
	assert.Equal(t, latest, p.Latest())

	followed := make(chan *chatprotocol.ChatStateV1, 1)
	go func() {
		s, err := stream.Follow(ctx, srv.URL+"/conversations/c-1/turns/t-1/events", &stream.FollowOptions{
			Header: http.Header{"Authorization": {"Bearer alice"}}})
		assert.NoError(t, err)
		followed <- s
	}()
	status, _ = post(t, srv, http.MethodPost, "t-1", alice)
	assert.Equal(t, http.StatusAccepted, status)
	require.NoError(t, <-modelDone)
	s := <-followed

	events := log.all()
	require.Len(t, events, 4)
	assert.Equal(t, []string{"cancel committed", "abort tool-1"}, events[:2], "the commit comes before the abort")
	assert.ElementsMatch(t, []string{"tool context ended", "model context ended"}, events[2:])
	assert.True(t, pay.ctxEnded.Load())
	assert.ErrorIs(t, context.Cause(p.Context()), turn.ErrCancelled)

	tt, ok := s.Turn("t-1")
	require.True(t, ok)
	assert.Equal(t, chatprotocol.LifecycleCancelled, tt.Status)
	assert.Equal(t, "Paying now. ", tt.Text())
	require.Len(t, tt.ToolCalls, 1)
	assert.Equal(t, chatprotocol.ToolCallStatus("cancelled"), tt.ToolCalls[0].Status)

	// Again: accepted, and nothing changes.
	n := len(h.envelopes("t-1"))
	status, _ = post(t, srv, http.MethodPost, "t-1", alice)
	assert.Equal(t, http.StatusAccepted, status)
	assert.Len(t, h.envelopes("t-1"), n)
	assert.Equal(t, 0, runs.Running())
}

// A cancel that a page of another site could make the browser send, with
// the user's cookies and without a CORS preflight (a form's three types,
// or no Content-Type and no X-Requested-With), is 415
// unsupported-media-type and cancels nothing (docs/contract.md section
// 12.6); application/json, or X-Requested-With, cancels.
func TestACrossSiteCancelCancelsNothing(t *testing.T) {
	h := newHost(t)
	srv := h.server(t)
	p := h.start("t-1")
	for _, header := range []http.Header{
		{},
		{"Content-Type": {"application/x-www-form-urlencoded"}},
		{"Content-Type": {"text/plain"}},
		{"Content-Type": {"text/plain;charset=UTF-8"}},
		{"Content-Type": {"multipart/form-data; boundary=x"}},
		{"Content-Type": {"text/plain"}, "X-Requested-With": {"fetch"}}, // a form's body all the same
		{"X-Requested-With": {""}},
	} {
		status, body := postWith(t, srv, http.MethodPost, "t-1", alice, header)
		assert.Equal(t, http.StatusUnsupportedMediaType, status, "%v", header)
		assert.Equal(t, string(refusal.CodeUnsupportedMediaType), codeOf(t, body), "%v", header)
	}
	assert.Nil(t, p.Context().Err(), "a cross-site request cancelled the turn")
	rec, err := h.rec.Load(t.Context(), worker, refOf("t-1"))
	require.NoError(t, err)
	assert.Equal(t, recovery.TurnRunning, rec.Status)

	status, _ := postWith(t, srv, http.MethodPost, "t-1", alice, http.Header{"Content-Type": {"application/json"}})
	assert.Equal(t, http.StatusAccepted, status)
	assert.ErrorIs(t, context.Cause(p.Context()), turn.ErrCancelled)
}

// Cancelling a turn that completed is 409 turn-not-running and changes
// nothing; another method than POST is 405.
func TestCancelAfterTheEnd(t *testing.T) {
	ctx := t.Context()
	h := newHost(t)
	srv := h.server(t)
	p := h.start("t-1")
	require.NoError(t, p.Delta(ctx, "done"))
	require.NoError(t, p.Complete(ctx))
	n := len(h.envelopes("t-1"))

	status, body := post(t, srv, http.MethodPost, "t-1", alice)
	assert.Equal(t, http.StatusConflict, status)
	assert.Equal(t, "turn-not-running", codeOf(t, body))
	assert.Len(t, h.envelopes("t-1"), n)
	rec, err := h.rec.Load(ctx, worker, refOf("t-1"))
	require.NoError(t, err)
	assert.Equal(t, recovery.TurnCompleted, rec.Status)

	status, body = post(t, srv, http.MethodGet, "t-1", alice)
	assert.Equal(t, http.StatusMethodNotAllowed, status)
	assert.Equal(t, string(refusal.CodeMethodNotAllowed), codeOf(t, body))
}

// A cancellation that committed before the model loop ended wins over the
// loop's own outcome; a Producer started on a cancelled turn starts
// cancelled.
func TestCancelWinsTheRace(t *testing.T) {
	ctx := t.Context()
	h := newHost(t)
	p := h.start("t-1")
	require.NoError(t, h.rec.Cancel(ctx, worker, refOf("t-1")))
	require.ErrorIs(t, context.Cause(p.Context()), turn.ErrCancelled)
	require.NoError(t, p.Complete(ctx), "the model loop finished anyway")
	envs := h.envelopes("t-1")
	assert.Equal(t, chatprotocol.LifecycleCancelled, envs[len(envs)-1].Event.(*chatprotocol.LifecycleEvent).Status)

	// Without Runs, the store's status still decides.
	opts := h.options()
	opts.Runs = nil
	p2, err := turn.Start(ctx, h.window, replay.Key{ConversationID: conversation, TurnID: "t-2"}, opts)
	require.NoError(t, err)
	require.NoError(t, h.rec.Cancel(ctx, worker, refOf("t-2")))
	require.NoError(t, p2.End(ctx, errors.New("model failed")))
	envs = h.envelopes("t-2")
	assert.Equal(t, []string{"lifecycle", "lifecycle"}, types(envs))
	assert.Equal(t, chatprotocol.LifecycleCancelled, envs[1].Event.(*chatprotocol.LifecycleEvent).Status)
}

// cancelOnFinish cancels the turn from the authorizer's check of the
// Producer's finish, before that check answers: the cancellation commits
// while End runs, on End's own context.
type cancelOnFinish struct {
	allowList
	once sync.Once
	rec  *recovery.TurnRecovery
	p    *turn.Producer
}

func (a *cancelOnFinish) Authorize(ctx context.Context, caller string, ref recovery.TurnRef, act recovery.Action) error {
	if act == recovery.ActionFinish {
		a.once.Do(func() {
			_ = a.rec.Cancel(context.WithoutCancel(ctx), alice, ref)
			<-a.p.Context().Done()
		})
	}
	return a.allowList.Authorize(ctx, caller, ref, act)
}

// End given the turn's own Context, as a model loop ends, still ends the
// turn when the cancellation commits while End runs: one terminal
// lifecycle, cancelled, and the run released.
func TestEndOnItsContextRacingTheCancel(t *testing.T) {
	h := newHost(t)
	authz := &cancelOnFinish{}
	h.rec = recovery.New(recovery.Host{Store: h.store, Authorizer: authz, Aborter: h.runs}, nil)
	authz.rec = h.rec
	p := h.start("t-1")
	authz.p = p
	ctx := p.Context()
	require.NoError(t, p.Delta(ctx, "hello"))
	require.NoError(t, p.End(ctx, nil), "the cancellation does not stop the end")
	assert.ErrorIs(t, context.Cause(ctx), turn.ErrCancelled)
	envs := h.envelopes("t-1")
	require.Equal(t, []string{"lifecycle", "delta", "lifecycle"}, types(envs))
	assert.Equal(t, chatprotocol.LifecycleCancelled, envs[2].Event.(*chatprotocol.LifecycleEvent).Status)
	assert.Equal(t, 0, h.runs.Running())
}

// A second Producer of one turn in one process: the first that meets the
// other's frame stops (ErrAnotherWriter, its Context ended with that
// cause, released from Runs), and the end of the turn ends every other
// run of it, so that no model loop of the turn runs on.
func TestTwoProducersOfOneTurn(t *testing.T) {
	h := newHost(t)
	ctx := t.Context()
	p1 := h.start("t-1")
	p2 := h.start("t-1")
	require.NoError(t, p2.Delta(ctx, "from p2"))
	assert.ErrorIs(t, p1.Delta(ctx, "from p1"), turn.ErrAnotherWriter)
	assert.ErrorIs(t, context.Cause(p1.Context()), turn.ErrAnotherWriter)
	assert.Equal(t, 1, h.runs.Running(), "p1 is released")

	p3 := h.start("t-1")
	require.NoError(t, p3.Complete(ctx))
	assert.ErrorIs(t, context.Cause(p2.Context()), turn.ErrAnotherWriter, "the turn ended under p3")
	assert.Equal(t, 0, h.runs.Running())
	envs := h.envelopes("t-1")
	assert.Equal(t, []string{"lifecycle", "delta", "lifecycle"}, types(envs))
}

// loadFails is a store whose LoadTurn call number fail (counted from 1)
// fails.
type loadFails struct {
	*recovery.MemoryStore
	loads, fail atomic.Int64
}

func (s *loadFails) LoadTurn(ctx context.Context, t recovery.TurnRef) (recovery.TurnRecord, error) {
	if s.loads.Add(1) == s.fail.Load() {
		return recovery.TurnRecord{}, refusal.New(refusal.CodeStoreUnavailable, "", "store down")
	}
	return s.MemoryStore.LoadTurn(ctx, t)
}

// A cancel of an ended turn whose store fails at any of its reads answers
// 503 store-unavailable, never what an unknown turn gets.
func TestCancelWhenTheStoreFails(t *testing.T) {
	h := newHost(t)
	store := &loadFails{MemoryStore: h.store}
	h.rec = recovery.New(recovery.Host{Store: store, Authorizer: h.authz, Aborter: h.runs}, nil)
	srv := h.server(t)
	p := h.start("t-1")
	require.NoError(t, p.Complete(t.Context()))
	before := store.loads.Load()
	status, _ := post(t, srv, http.MethodPost, "t-1", alice)
	require.Equal(t, http.StatusConflict, status)
	reads := store.loads.Load() - before
	require.Positive(t, reads)
	for k := int64(1); k <= reads; k++ {
		store.fail.Store(store.loads.Load() + k)
		status, body := post(t, srv, http.MethodPost, "t-1", alice)
		assert.Equal(t, http.StatusServiceUnavailable, status, "read %d of %d fails", k, reads)
		assert.Equal(t, string(refusal.CodeStoreUnavailable), codeOf(t, body))
	}
}

// The bridges' Cancel hook, CancelHandler.Cancel, cancels as the endpoint
// does, with the caller the endpoint's Caller reads from the request:
// recovery commits the cancellation and the turn's Context ends. No
// session is turn-not-found, a stranger unauthorized, and a turn that
// ended turn-not-running, each changing nothing.
func TestCancelHandlerCancelIsTheEndpointsCancel(t *testing.T) {
	ctx := t.Context()
	h := newHost(t)
	cancel, err := turn.NewCancelHandler(h.rec, &turn.CancelHandlerOptions{Caller: func(r *http.Request) (string, error) {
		if u := r.Header.Get("X-User"); u != "" {
			return u, nil
		}
		return "", errors.New("no session")
	}})
	require.NoError(t, err)
	as := func(who string) *http.Request {
		r := httptest.NewRequest(http.MethodPost, "/", nil)
		if who != "" {
			r.Header.Set("X-User", who)
		}
		return r
	}
	p := h.start("t-1")
	k := replay.Key{ConversationID: conversation, TurnID: "t-1"}
	assert.Equal(t, refusal.CodeTurnNotFound, refusal.CodeOf(cancel.Cancel(ctx, as(""), k)))
	assert.ErrorIs(t, cancel.Cancel(ctx, as("mallory"), k), refusal.ErrUnauthorized)
	assert.Nil(t, p.Context().Err(), "nothing cancelled")

	require.NoError(t, cancel.Cancel(ctx, as(alice), k))
	assert.ErrorIs(t, context.Cause(p.Context()), turn.ErrCancelled)
	require.NoError(t, p.End(ctx, context.Cause(p.Context())))
	rec, err := h.rec.Load(ctx, worker, refOf("t-1"))
	require.NoError(t, err)
	assert.Equal(t, recovery.TurnCancelled, rec.Status)
	envs := h.envelopes("t-1")
	assert.Equal(t, chatprotocol.LifecycleCancelled, envs[len(envs)-1].Event.(*chatprotocol.LifecycleEvent).Status)

	p2 := h.start("t-2")
	require.NoError(t, p2.Complete(ctx))
	assert.ErrorIs(t, cancel.Cancel(ctx, as(alice), replay.Key{ConversationID: conversation, TurnID: "t-2"}), refusal.ErrTurnNotRunning)
}
