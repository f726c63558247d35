package uistream_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	chatprotocol "github.com/Papercusp/chat-protocol-go"
	_ "github.com/Papercusp/chat-protocol-go/internal/testkit/golden" // accepts go test ./... -update
	"github.com/Papercusp/chat-protocol-go/internal/testkit/turnscript"
	"github.com/Papercusp/chat-protocol-go/refusal"
	"github.com/Papercusp/chat-protocol-go/replay"
	"github.com/Papercusp/chat-protocol-go/serve"
	"github.com/Papercusp/chat-protocol-go/uistream"
)

// fixture is a bridge over a scripted host on a loopback server.
type fixture struct {
	host *turnscript.Host
	srv  *httptest.Server
}

// newFixture serves the bridge at /api/chat; chat "secret" belongs to
// nobody, chat "down" has a store that is down, chat "busy" runs another
// turn.
func newFixture(t *testing.T, pace time.Duration, card bool, opts *uistream.HandlerOptions) *fixture {
	t.Helper()
	return newFixtureOf(t, &turnscript.Host{Window: replay.NewMemory(nil), Pace: pace, Card: card}, opts)
}

// newFixtureOf is newFixture with a Host of the test's own.
func newFixtureOf(t *testing.T, host *turnscript.Host, opts *uistream.HandlerOptions) *fixture {
	t.Helper()
	f := &fixture{host: host}
	o := uistream.HandlerOptions{}
	if opts != nil {
		o = *opts
	}
	o.StartTurn = func(_ context.Context, _ *http.Request, req *uistream.Request) (replay.Key, error) {
		switch req.ChatID {
		case "secret":
			return replay.Key{}, refusal.ErrUnauthorized
		case "down":
			return replay.Key{}, io.ErrUnexpectedEOF
		case "busy":
			return replay.Key{}, refusal.ErrTurnRunning
		}
		return f.host.Start(req.ChatID), nil
	}
	o.ActiveTurn = func(_ context.Context, _ *http.Request, chatID string) (replay.Key, bool, error) {
		if chatID == "secret" {
			return replay.Key{}, false, refusal.ErrUnauthorized
		}
		key, ok := f.host.Active(chatID)
		return key, ok, nil
	}
	o.Cancel = func(_ context.Context, _ *http.Request, key replay.Key) error {
		f.host.Cancel(key)
		return nil
	}
	h, err := uistream.NewHandler(f.host.Window, &o)
	require.NoError(t, err)
	mux := http.NewServeMux()
	h.Register(mux, "/api/chat")
	f.srv = httptest.NewServer(mux)
	t.Cleanup(func() { f.srv.Close(); f.host.Wait() })
	return f
}

const submit = `{"id":"chat-1","messages":[{"id":"m1","role":"user","parts":[{"type":"text","text":"hi"}]}],"trigger":"submit-message"}`

func (f *fixture) post(t *testing.T, body string) *http.Response {
	t.Helper()
	resp, err := http.Post(f.srv.URL+"/api/chat", "application/json", strings.NewReader(body))
	require.NoError(t, err)
	return resp
}

func (f *fixture) get(t *testing.T, chatID string) *http.Response {
	t.Helper()
	resp, err := http.Get(f.srv.URL + "/api/chat/" + chatID + "/stream")
	require.NoError(t, err)
	return resp
}

// chunks reads a UI message stream whole: the data of every frame, "[DONE]"
// included, checking that nothing else than data lines and comments comes.
func chunks(t *testing.T, resp *http.Response) []string {
	t.Helper()
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, "v1", resp.Header.Get("x-vercel-ai-ui-message-stream"))
	assert.Equal(t, "text/event-stream", resp.Header.Get("Content-Type"))
	var out []string
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "" || strings.HasPrefix(line, ":"):
		case strings.HasPrefix(line, "data: "):
			out = append(out, strings.TrimPrefix(line, "data: "))
		default:
			t.Fatalf("a line that is neither data nor a comment: %q", line)
		}
	}
	require.NoError(t, sc.Err())
	return out
}

// wantChunks is the script's stream under message id t-N.
func wantChunks(turn string, card bool) []string {
	want := []string{
		`{"type":"start","messageId":"` + turn + `"}`,
		`{"type":"start-step"}`,
		`{"type":"text-start","id":"text-2"}`,
	}
	for _, w := range turnscript.Before {
		want = append(want, `{"type":"text-delta","id":"text-2","delta":"`+w+`"}`)
	}
	call := turn + "-call-1"
	want = append(want, `{"type":"text-end","id":"text-2"}`,
		`{"type":"tool-input-start","toolCallId":"`+call+`","toolName":"search_docs"}`,
		`{"type":"tool-input-available","toolCallId":"`+call+`","toolName":"search_docs","input":{"q":"refund policy"}}`,
		`{"type":"tool-output-available","toolCallId":"`+call+`","output":{"hits":2}}`,
		`{"type":"text-start","id":"text-8"}`)
	for _, w := range turnscript.After {
		want = append(want, `{"type":"text-delta","id":"text-8","delta":"`+w+`"}`)
	}
	if card {
		want = append(want, `{"type":"data-card","id":"card-`+turn+`","data":{"status":"open","card":{"correlationId":"card-`+turn+`","createdAt":1700000000000,"prompt":"Was this helpful?","presentation":{"kind":"radio","options":[{"id":"yes","label":"Yes"},{"id":"no","label":"No"}]},"allowDecline":true}}}`)
	}
	return append(want, `{"type":"text-end","id":"text-8"}`, `{"type":"finish-step"}`, `{"type":"finish"}`, `[DONE]`)
}

func TestStartStreamsTheWholeTurn(t *testing.T) {
	for _, card := range []bool{false, true} {
		f := newFixture(t, time.Millisecond, card, nil)
		assert.Equal(t, wantChunks("t-1", card), chunks(t, f.post(t, submit)))
	}
}

func TestResumeReplaysFromTheFirstChunkThenGoesLive(t *testing.T) {
	// The last frame waits for the resume: a slow machine cannot end the
	// turn before it.
	f := newFixtureOf(t, &turnscript.Host{Window: replay.NewMemory(nil), Pace: 30 * time.Millisecond, HoldLast: true}, nil)
	first := f.post(t, submit)
	defer first.Body.Close()
	time.Sleep(100 * time.Millisecond) // a few frames in
	assert.Equal(t, wantChunks("t-1", false), chunks(t, f.get(t, "chat-1")))
	resp := f.get(t, "chat-1") // the turn has ended now
	assert.Equal(t, http.StatusNoContent, resp.StatusCode)
}

// TestAHeadResumeGetsTheHeadersOnly: HEAD {api}/{chatId}/stream answers
// as GET would, at once, without waiting for the turn to end.
func TestAHeadResumeGetsTheHeadersOnly(t *testing.T) {
	f := newFixture(t, time.Second, false, nil) // a turn of several seconds
	first := f.post(t, submit)
	defer first.Body.Close()
	defer f.host.Cancel(replay.Key{ConversationID: "chat-1", TurnID: "t-1"})
	rec := httptest.NewRecorder()
	done := make(chan struct{})
	go func() {
		defer close(done)
		f.srv.Config.Handler.ServeHTTP(rec, httptest.NewRequest(http.MethodHead, "/api/chat/chat-1/stream", nil))
	}()
	select {
	case <-done:
	case <-time.After(3 * time.Second):
		t.Fatal("HEAD waited for the turn")
	}
	assert.Equal(t, http.StatusOK, rec.Code)
	var marker []string // the header as the bridge writes it: its name is not canonical
	for name, values := range rec.Result().Header {
		if strings.EqualFold(name, uistream.HeaderName) {
			marker = values
		}
	}
	assert.Equal(t, []string{uistream.HeaderValue}, marker)
	assert.Equal(t, "text/event-stream", rec.Result().Header.Get("Content-Type"))
	assert.Empty(t, rec.Body.String())
}

func TestResumeWithoutARunningTurnIs204(t *testing.T) {
	f := newFixture(t, time.Millisecond, false, nil)
	for _, chat := range []string{"never-seen", "secret", "%00"} {
		resp := f.get(t, chat)
		resp.Body.Close()
		assert.Equal(t, http.StatusNoContent, resp.StatusCode, chat)
	}
}

func TestStopCancelsTheRunningTurn(t *testing.T) {
	f := newFixture(t, 50*time.Millisecond, false, nil)
	resp := f.post(t, submit)
	req, err := http.NewRequest(http.MethodDelete, f.srv.URL+"/api/chat/chat-1/stream", nil)
	require.NoError(t, err)
	stop, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	stop.Body.Close()
	assert.Equal(t, http.StatusNoContent, stop.StatusCode)
	got := chunks(t, resp)
	require.GreaterOrEqual(t, len(got), 3)
	assert.Equal(t, []string{`{"type":"abort"}`, `[DONE]`}, got[len(got)-2:])
}

// crossSite are the Content-Types of the POSTs a cross-site page sends
// without a CORS preflight: a form's three, and none at all (a fetch in
// no-cors mode of a Blob or an ArrayBuffer).
var crossSite = []string{"", "text/plain", "text/plain;charset=UTF-8", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x"}

// TestABodyNotSentAsJSONStartsNothing: a POST is application/json
// (docs/contract.md section 18.3); any other Content-Type, or none, is
// 415 unsupported-media-type before the body is read.
func TestABodyNotSentAsJSONStartsNothing(t *testing.T) {
	f := newFixture(t, time.Millisecond, false, nil)
	for _, ctype := range append(crossSite, "application/json; charset=latin1", "application/jsonx") {
		req, err := http.NewRequest(http.MethodPost, f.srv.URL+"/api/chat", strings.NewReader(submit))
		require.NoError(t, err)
		if ctype != "" {
			req.Header.Set("Content-Type", ctype)
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		var body struct{ Code refusal.Code }
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&body))
		resp.Body.Close()
		assert.Equal(t, http.StatusUnsupportedMediaType, resp.StatusCode, ctype)
		assert.Equal(t, refusal.CodeUnsupportedMediaType, body.Code, ctype)
	}
	_, ok := f.host.Active("chat-1")
	assert.False(t, ok, "a body not sent as JSON started a turn")
	assert.Equal(t, wantChunks("t-1", false), chunks(t, f.post(t, submit)), "application/json starts the turn")
}

// TestEveryWrongMethodIsTheJSON405: Register mounts patterns without a
// method, so that every endpoint answers a method it does not serve with
// method-not-allowed and Allow (docs/contract.md section 12.5), never
// http.ServeMux's plain text; without Cancel, DELETE is one of them.
func TestEveryWrongMethodIsTheJSON405(t *testing.T) {
	for _, c := range []struct {
		cancel       bool
		method, path string
		allow        string
	}{
		{true, http.MethodGet, "/api/chat", "POST"},
		{true, http.MethodPut, "/api/chat", "POST"},
		{true, http.MethodDelete, "/api/chat", "POST"},
		{true, http.MethodOptions, "/api/chat", "POST"},
		{true, http.MethodPost, "/api/chat/chat-1/stream", "GET, HEAD, DELETE"},
		{true, http.MethodPatch, "/api/chat/chat-1/stream", "GET, HEAD, DELETE"},
		{false, http.MethodDelete, "/api/chat/chat-1/stream", "GET, HEAD"},
		{false, http.MethodPut, "/api/chat/chat-1/stream", "GET, HEAD"},
		{true, http.MethodGet, "/api/chat/chat-1/stop", "POST, DELETE"},
		{true, http.MethodPut, "/api/chat/chat-1/stop", "POST, DELETE"},
		{false, http.MethodPost, "/api/chat/chat-1/stop", ""},
	} {
		f := newFixture(t, time.Millisecond, false, nil)
		var h http.Handler = f.srv.Config.Handler
		if !c.cancel {
			noCancel, err := uistream.NewHandler(f.host.Window, &uistream.HandlerOptions{
				StartTurn: func(context.Context, *http.Request, *uistream.Request) (replay.Key, error) {
					return replay.Key{}, refusal.ErrTurnNotFound
				},
				ActiveTurn: func(context.Context, *http.Request, string) (replay.Key, bool, error) {
					return replay.Key{}, false, nil
				},
			})
			require.NoError(t, err)
			mux := http.NewServeMux()
			noCancel.Register(mux, "/api/chat")
			h = mux
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(c.method, c.path, strings.NewReader(submit)))
		assert.Equal(t, http.StatusMethodNotAllowed, rec.Code, "%+v", c)
		assert.Equal(t, c.allow, rec.Header().Get("Allow"), "%+v", c)
		assert.Equal(t, "application/json", rec.Header().Get("Content-Type"), "%+v", c)
		var body struct{ Code refusal.Code }
		require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &body), "%+v: %s", c, rec.Body)
		assert.Equal(t, refusal.CodeMethodNotAllowed, body.Code, "%+v", c)
		_, ok := f.host.Active("chat-1")
		assert.False(t, ok, "%+v started a turn", c)
	}
}

func TestBadRequestsStartNothing(t *testing.T) {
	f := newFixture(t, time.Millisecond, false, &uistream.HandlerOptions{BodyLimits: serve.BodyLimits{MaxBodyBytes: 4096}})
	cases := []struct {
		body   string
		status int
		code   refusal.Code
	}{
		{`{`, 400, refusal.CodeInvalidInput},
		{`{"id":"chat-1","messages":{},"trigger":"submit-message"}`, 400, refusal.CodeInvalidInput},
		{`{"messages":[],"trigger":"submit-message"}`, 400, refusal.CodeInvalidInput},
		{`{"id":"chat-1","messages":[],"trigger":"resume-stream"}`, 400, refusal.CodeInvalidInput},
		{`{"id":"chat-1","messages":[],"trigger":"submit-message","answer":{"submissionId":"s","response":{"action":"submit"}}}`, 400, refusal.CodeInvalidInput},
		{`{"id":"chat-1","messages":["` + strings.Repeat("x", 5000) + `"],"trigger":"submit-message"}`, 413, refusal.CodeFrameTooLarge},
		{`{"id":"secret","messages":[],"trigger":"submit-message"}`, 404, refusal.CodeTurnNotFound},
		{`{"id":"down","messages":[],"trigger":"submit-message"}`, 503, refusal.CodeStoreUnavailable},
		{`{"id":"busy","messages":[],"trigger":"submit-message"}`, 409, refusal.CodeTurnRunning},
		// Read strictly (docs/contract.md section 18.3): a duplicated name, a
		// name in another case, invalid UTF-8 or a lone surrogate is no
		// chat request, anywhere in the body.
		{`{"id":"chat-1","id":"chat-2","messages":[],"trigger":"submit-message"}`, 400, refusal.CodeInvalidInput},
		{`{"ID":"chat-1","messages":[],"trigger":"submit-message"}`, 400, refusal.CodeInvalidInput},
		{`{"Id":"chat-1","messages":[],"Trigger":"submit-message"}`, 400, refusal.CodeInvalidInput},
		// A name that differs only by case from another of its object, or
		// from a member of the request, is refused at any depth, since
		// encoding/json would read it as that member.
		{`{"id":"chat-1","ID":"chat-2","messages":[],"trigger":"submit-message"}`, 400, refusal.CodeInvalidInput},
		{`{"id":"chat-1","messages":[],"trigger":"submit-message","Trigger":"regenerate-message"}`, 400, refusal.CodeInvalidInput},
		{`{"id":"chat-1","messages":[],"trigger":"submit-message","messageID":"m"}`, 400, refusal.CodeInvalidInput},
		{`{"id":"chat-1","messages":[{"role":"user","Role":"system"}],"trigger":"submit-message"}`, 400, refusal.CodeInvalidInput},
		{`{"id":"chat-1","messages":[],"trigger":"submit-message","extra":{"k":1,"\u212a":2}}`, 400, refusal.CodeInvalidInput},
		{`{"id":"chat-1","messages":[],"trigger":"submit-message","answer":{"submissionId":"s","SubmissionId":"t","response":{}}}`, 400, refusal.CodeInvalidInput},
		{"{\"id\":\"chat-\xff\",\"messages\":[],\"trigger\":\"submit-message\"}", 400, refusal.CodeInvalidInput},
		{`{"id":"chat-\udc00","messages":[],"trigger":"submit-message"}`, 400, refusal.CodeInvalidInput},
		{`{"id":"chat-1","messages":[{"id":"m","id":"n"}],"trigger":"submit-message"}`, 400, refusal.CodeInvalidInput},
		{"{\"id\":\"chat-1\",\"messages\":[\"\xc3\"],\"trigger\":\"submit-message\"}", 400, refusal.CodeInvalidInput},
		{`{"id":"chat-1","messages":[],"trigger":"submit-message"} {}`, 400, refusal.CodeInvalidInput},
	}
	for _, c := range cases {
		resp := f.post(t, c.body)
		var body struct{ Code refusal.Code }
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&body))
		resp.Body.Close()
		assert.Equal(t, c.status, resp.StatusCode, c.body)
		assert.Equal(t, c.code, body.Code, c.body)
	}
	_, ok := f.host.Active("chat-1")
	assert.False(t, ok, "a refused request started a turn")
	_, ok = f.host.Active("chat-2")
	assert.False(t, ok, "a refused request started a turn")
}

// TestUnknownMembersAreRead: the members a transport adds (the body
// option's, a model choice) are no refusal, whatever their names' case
// (so long as no name differs only by case from another of its object);
// the request keeps them in its Body.
func TestUnknownMembersAreRead(t *testing.T) {
	var got *uistream.Request
	host := &turnscript.Host{Window: replay.NewMemory(nil), Pace: time.Millisecond}
	t.Cleanup(host.Wait)
	h, err := uistream.NewHandler(host.Window, &uistream.HandlerOptions{
		StartTurn: func(_ context.Context, _ *http.Request, req *uistream.Request) (replay.Key, error) {
			got = req
			return host.Start(req.ChatID), nil
		},
		ActiveTurn: func(context.Context, *http.Request, string) (replay.Key, bool, error) {
			return replay.Key{}, false, nil
		},
	})
	require.NoError(t, err)
	mux := http.NewServeMux()
	h.Register(mux, "/api/chat")
	srv := httptest.NewServer(mux)
	defer srv.Close()
	body := `{"id":"chat-1","messages":[],"trigger":"submit-message","selectedModel":"m","Model":"x","extra":{"a":[1,{"b":null}]}}`
	resp, err := http.Post(srv.URL+"/api/chat", "application/json", strings.NewReader(body))
	require.NoError(t, err)
	assert.Equal(t, wantChunks("t-1", false), chunks(t, resp))
	require.NotNil(t, got)
	assert.Equal(t, "chat-1", got.ChatID)
	assert.Equal(t, "submit-message", got.Trigger)
	assert.Equal(t, body, string(got.Body))
}

// TestATurnTheWindowNoLongerHolds: a turn whose first frames the window
// pruned is 410 stale-cursor to a POST and to a resume; a resume of an
// ended turn the window evicted is 204 (docs/contract.md section 18.3).
// Neither is 503: the window is up.
func TestATurnTheWindowNoLongerHolds(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	w := replay.NewMemory(&replay.MemoryOptions{MaxFrames: 5, EndedTTL: time.Minute, Now: func() time.Time { return now }})
	keys := map[string]replay.Key{"pruned": {ConversationID: "pruned", TurnID: "t"}, "evicted": {ConversationID: "evicted", TurnID: "t"}}
	for chat, key := range keys {
		evs := []chatprotocol.Event{&chatprotocol.LifecycleEvent{Status: chatprotocol.LifecycleStarted}}
		for range 20 {
			evs = append(evs, &chatprotocol.DeltaEvent{Text: "d"})
		}
		if chat == "evicted" {
			evs = append(evs[:2], &chatprotocol.LifecycleEvent{Status: chatprotocol.LifecycleCompleted})
		}
		for _, env := range turnscript.Envelopes(key, evs) {
			_, err := w.Append(context.Background(), key, env)
			require.NoError(t, err)
		}
	}
	now = now.Add(2 * time.Minute)
	h, err := uistream.NewHandler(w, &uistream.HandlerOptions{
		StartTurn: func(_ context.Context, _ *http.Request, req *uistream.Request) (replay.Key, error) {
			return keys[req.ChatID], nil
		},
		ActiveTurn: func(_ context.Context, _ *http.Request, chat string) (replay.Key, bool, error) {
			return keys[chat], true, nil
		},
	})
	require.NoError(t, err)
	mux := http.NewServeMux()
	h.Register(mux, "/api/chat")
	f := &fixture{srv: httptest.NewServer(mux)}
	defer f.srv.Close()
	for _, c := range []struct {
		name   string
		resp   *http.Response
		status int
	}{
		{"POST of a pruned turn", f.post(t, strings.ReplaceAll(submit, "chat-1", "pruned")), http.StatusGone},
		{"resume of a pruned turn", f.get(t, "pruned"), http.StatusGone},
		{"POST of an evicted turn", f.post(t, strings.ReplaceAll(submit, "chat-1", "evicted")), http.StatusGone},
		{"resume of an evicted ended turn", f.get(t, "evicted"), http.StatusNoContent},
	} {
		body, err := io.ReadAll(c.resp.Body)
		c.resp.Body.Close()
		require.NoError(t, err)
		assert.Equal(t, c.status, c.resp.StatusCode, "%s: %s", c.name, body)
		if c.status == http.StatusGone {
			var got refusal.Body
			require.NoError(t, json.Unmarshal(body, &got), c.name)
			assert.Equal(t, refusal.CodeStaleCursor, got.Code, c.name)
		}
	}
}
