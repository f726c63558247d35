package agui_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	chatprotocol "github.com/Papercusp/chat-protocol-go"
	"github.com/Papercusp/chat-protocol-go/agui"
	"github.com/Papercusp/chat-protocol-go/interactions"
	"github.com/Papercusp/chat-protocol-go/interactions/interactionstest"
	"github.com/Papercusp/chat-protocol-go/interactions/jsonschema"
	_ "github.com/Papercusp/chat-protocol-go/internal/testkit/golden" // accepts go test ./... -update
	"github.com/Papercusp/chat-protocol-go/internal/testkit/turnscript"
	"github.com/Papercusp/chat-protocol-go/refusal"
	"github.com/Papercusp/chat-protocol-go/replay"
	"github.com/Papercusp/chat-protocol-go/serve"
)

// fixture is the bridge over a scripted host whose cards are opened on a
// Resolver bound to the caller "alice" (X-User header), on a loopback
// server.
type fixture struct {
	host *turnscript.Host
	res  *interactions.Resolver
	srv  *httptest.Server
}

var alice = interactions.Caller{Principal: "alice"}

func newFixture(t *testing.T, card bool) *fixture {
	t.Helper()
	f := &fixture{host: &turnscript.Host{Window: replay.NewMemory(nil), Pace: time.Millisecond, Card: card}}
	db := interactionstest.NewDB()
	db.Grant(alice, "thread-1")
	schemas := jsonschema.NewRegistry()
	ref := interactions.SchemaRef{ID: "helpful", Revision: 1}
	require.NoError(t, schemas.Register(ref, []byte(`{"type":"object","properties":{"optionId":{"enum":["yes","no"]}},"required":["optionId"]}`)))
	runs := map[string]replay.Key{} // a run id the host has seen names its turn
	var err error
	f.res, err = interactions.New(db.Open(nil), schemas, &interactions.Options{CardRules: chatprotocol.ValidateCardSpec})
	require.NoError(t, err)
	h, err := agui.NewHandler(f.host.Window, &agui.HandlerOptions{
		StartRun: func(ctx context.Context, r *http.Request, in *agui.RunInput) (replay.Key, error) {
			if in.ThreadID != "thread-1" || r.Header.Get("X-User") != "alice" {
				return replay.Key{}, refusal.ErrTurnNotFound
			}
			if key, ok := runs[in.RunID]; ok {
				return key, nil
			}
			key := f.host.Start(in.ThreadID)
			runs[in.RunID] = key
			if card {
				_, err := f.res.Open(ctx, interactions.NewCard{Key: interactions.Key{Conversation: in.ThreadID, CorrelationID: turnscript.CardID(key)},
					Answerer: alice, Spec: turnscript.Card(key).Card.CardSpec, Schema: ref})
				return key, err
			}
			return key, nil
		},
		Resolver: f.res,
		Caller: func(r *http.Request) (interactions.Caller, error) {
			if u := r.Header.Get("X-User"); u != "" {
				return interactions.Caller{Principal: u}, nil
			}
			return interactions.Caller{}, errors.New("no session")
		},
		BodyLimits: serve.BodyLimits{MaxBodyBytes: 8192},
	})
	require.NoError(t, err)
	f.srv = httptest.NewServer(h)
	t.Cleanup(func() { f.srv.Close(); f.host.Wait() })
	return f
}

func (f *fixture) post(t *testing.T, user, body string) *http.Response {
	t.Helper()
	return f.postAs(t, "application/json", user, body)
}

// postAs posts body with Content-Type ctype, none for "".
func (f *fixture) postAs(t *testing.T, ctype, user, body string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, f.srv.URL, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("X-User", user)
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	return resp
}

// events reads a run whole: every data line's JSON.
func events(t *testing.T, resp *http.Response) []map[string]any {
	t.Helper()
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Equal(t, "text/event-stream", resp.Header.Get("Content-Type"))
	var out []map[string]any
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if line, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			var ev map[string]any
			require.NoError(t, json.Unmarshal([]byte(line), &ev), line)
			out = append(out, ev)
		}
	}
	require.NoError(t, sc.Err())
	return out
}

func types(evs []map[string]any) []string {
	var out []string
	for _, ev := range evs {
		out = append(out, ev["type"].(string))
	}
	return out
}

// joined concatenates member m of the events of type typ.
func joined(evs []map[string]any, typ, m string) string {
	var b strings.Builder
	for _, ev := range evs {
		if ev["type"] == typ {
			b.WriteString(ev[m].(string))
		}
	}
	return b.String()
}

const input = `{"threadId":"thread-1","runId":"run-1","messages":[{"id":"u1","role":"user","content":"hi"}],"tools":[],"context":[],"state":{},"forwardedProps":{}}`

func TestARunStreamsTheTurn(t *testing.T) {
	f := newFixture(t, false)
	evs := events(t, f.post(t, "alice", input))
	want := []string{"RUN_STARTED", "TEXT_MESSAGE_START"}
	for range turnscript.Before {
		want = append(want, "TEXT_MESSAGE_CONTENT")
	}
	want = append(want, "TEXT_MESSAGE_END", "TOOL_CALL_START", "TOOL_CALL_ARGS", "TOOL_CALL_END", "TOOL_CALL_RESULT", "TEXT_MESSAGE_START")
	for range turnscript.After {
		want = append(want, "TEXT_MESSAGE_CONTENT")
	}
	assert.Equal(t, append(want, "TEXT_MESSAGE_END", "RUN_FINISHED"), types(evs))
	assert.Equal(t, turnscript.Text(), joined(evs, "TEXT_MESSAGE_CONTENT", "delta"))
	assert.Equal(t, turnscript.ToolInput, joined(evs, "TOOL_CALL_ARGS", "delta"))
	assert.Equal(t, turnscript.ToolOutput, joined(evs, "TOOL_CALL_RESULT", "content"))
	assert.Equal(t, turnscript.ToolName, evs[7]["toolCallName"])
	for _, i := range []int{0, len(evs) - 1} {
		assert.Equal(t, "thread-1", evs[i]["threadId"])
		assert.Equal(t, "run-1", evs[i]["runId"])
	}
	assert.Equal(t, map[string]any{"type": "success"}, evs[len(evs)-1]["outcome"])
}

func TestAnOpenCardEndsTheRunWithAnInterruptAnsweredThroughResume(t *testing.T) {
	f := newFixture(t, true)
	evs := events(t, f.post(t, "alice", input))
	custom := evs[len(evs)-2]
	assert.Equal(t, "CUSTOM", custom["type"])
	assert.Equal(t, "chatprotocol.card", custom["name"])
	outcome := evs[len(evs)-1]["outcome"].(map[string]any)
	assert.Equal(t, "interrupt", outcome["type"])
	interrupts := outcome["interrupts"].([]any)
	require.Len(t, interrupts, 1)
	in := interrupts[0].(map[string]any)
	assert.Equal(t, "card-t-1", in["id"])
	assert.Equal(t, turnscript.CardPrompt, in["message"])

	resume := func(user, payload string) *http.Response {
		return f.post(t, user, `{"threadId":"thread-1","runId":"run-2","messages":[],"resume":[{"interruptId":"card-t-1","status":"resolved","payload":`+payload+`}]}`)
	}
	for _, c := range []struct {
		user, payload string
		status        int
		code          refusal.Code
	}{
		{"mallory", `{"optionId":"yes"}`, 403, refusal.CodeUnauthorized},
		{"alice", `{"optionId":"maybe"}`, 422, refusal.CodeInvalidAnswer},
		{"alice", `{"optionId":"yes","OptionId":"no"}`, 400, refusal.CodeInvalidInput},
		{"", `{"optionId":"yes"}`, 401, "unauthenticated"},
	} {
		resp := resume(c.user, c.payload)
		var body struct{ Code refusal.Code }
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&body))
		resp.Body.Close()
		assert.Equal(t, c.status, resp.StatusCode, c)
		assert.Equal(t, c.code, body.Code, c)
	}
	view, err := f.res.Lookup(context.Background(), interactions.Key{Conversation: "thread-1", CorrelationID: "card-t-1"})
	require.NoError(t, err)
	assert.Equal(t, interactions.StatusPending, view.Record.Status, "a refused answer changed the card")

	evs = events(t, resume("alice", `{"optionId":"yes"}`))
	assert.Equal(t, "RUN_STARTED", evs[0]["type"])
	assert.Equal(t, "run-2", evs[0]["runId"])
	view, err = f.res.Lookup(context.Background(), interactions.Key{Conversation: "thread-1", CorrelationID: "card-t-1"})
	require.NoError(t, err)
	assert.Equal(t, interactions.StatusAnswered, view.Record.Status)
	assert.JSONEq(t, `{"optionId":"yes"}`, string(view.Record.Answer.Value))
	assert.Equal(t, "run-2", view.Record.Answer.SubmissionID)
}

func TestBadRunsStartNothing(t *testing.T) {
	f := newFixture(t, false)
	for _, c := range []struct {
		user, body string
		status     int
		code       refusal.Code
	}{
		{"alice", `[`, 400, refusal.CodeInvalidInput},
		{"alice", `{"threadId":"thread-1","messages":[]}`, 400, refusal.CodeInvalidInput},
		{"alice", `{"threadId":"thread-1","runId":"r","messages":{}}`, 400, refusal.CodeInvalidInput},
		{"alice", `{"threadId":"thread-1","runId":"r","messages":[],"resume":[{"interruptId":"x","status":"maybe"}]}`, 400, refusal.CodeInvalidInput},
		{"alice", `{"threadId":"thread-1","runId":"r","messages":["` + strings.Repeat("x", 9000) + `"]}`, 413, refusal.CodeFrameTooLarge},
		{"alice", `{"threadId":"thread-2","runId":"r","messages":[]}`, 404, refusal.CodeTurnNotFound},
		{"mallory", `{"threadId":"thread-1","runId":"r","messages":[]}`, 404, refusal.CodeTurnNotFound},
		// Read strictly (docs/contract.md section 18.3): a duplicated name, a
		// name in another case, invalid UTF-8 or a lone surrogate is no
		// RunAgentInput, anywhere in the body.
		{"alice", `{"threadId":"thread-2","threadId":"thread-1","runId":"r","messages":[]}`, 400, refusal.CodeInvalidInput},
		{"alice", `{"ThreadId":"thread-1","runId":"r","messages":[]}`, 400, refusal.CodeInvalidInput},
		{"alice", "{\"threadId\":\"thread-1\",\"runId\":\"r\xff\",\"messages\":[]}", 400, refusal.CodeInvalidInput},
		{"alice", `{"threadId":"thread-1","runId":"r\ud800","messages":[]}`, 400, refusal.CodeInvalidInput},
		{"alice", `{"threadId":"thread-1","runId":"r","messages":[],"state":{"a":1,"a":2}}`, 400, refusal.CodeInvalidInput},
		{"alice", `{"threadId":"thread-1","threadID":"thread-2","runId":"r","messages":[]}`, 400, refusal.CodeInvalidInput},
		{"alice", `{"threadId":"thread-1","runId":"r","messages":[],"state":{"a":1,"A":2}}`, 400, refusal.CodeInvalidInput},
		{"alice", `{"threadId":"thread-1","runId":"r","messages":[],"forwardedProps":{"x":[{"ſ":1,"s":2}]}}`, 400, refusal.CodeInvalidInput},
		{"alice", `{"threadId":"thread-1","runId":"r","messages":[],"resume":[{"interruptId":"x","status":"cancelled","Status":"resolved"}]}`, 400, refusal.CodeInvalidInput},
		{"alice", `{"threadId":"thread-1","runId":"r","messages":[],"resume":[{"interruptId":"x","status":"cancelled","status":"resolved"}]}`, 400, refusal.CodeInvalidInput},
	} {
		resp := f.post(t, c.user, c.body)
		var body struct{ Code refusal.Code }
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&body))
		resp.Body.Close()
		assert.Equal(t, c.status, resp.StatusCode, c.body)
		assert.Equal(t, c.code, body.Code, c.body)
	}
	_, ok := f.host.Active("thread-1")
	assert.False(t, ok, "a refused run started a turn")
}

// TestARefusedResumeLandsNothing: the whole resume list is checked before
// any entry lands (docs/contract.md section 18.2): an interrupt answered
// twice, or a later entry that is no resume entry, refuses the run with
// the card still pending.
func TestARefusedResumeLandsNothing(t *testing.T) {
	f := newFixture(t, true)
	events(t, f.post(t, "alice", input)) // opens card-t-1
	yes := `{"interruptId":"card-t-1","status":"resolved","payload":{"optionId":"yes"}}`
	for _, entries := range []string{
		yes + `,{"interruptId":"card-t-1","status":"resolved","payload":{"optionId":"no"}}`,
		yes + `,{"interruptId":"card-t-1","status":"cancelled"}`,
		yes + `,` + yes,
		yes + `,{"interruptId":"card-t-2","status":"maybe"}`,
		yes + `,{"interruptId":"","status":"cancelled"}`,
		yes + `,{"interruptId":"card-t-2","status":"resolved","payload":[1]}`,
	} {
		resp := f.post(t, "alice", `{"threadId":"thread-1","runId":"run-2","messages":[],"resume":[`+entries+`]}`)
		var body struct{ Code refusal.Code }
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&body))
		resp.Body.Close()
		assert.Equal(t, http.StatusBadRequest, resp.StatusCode, entries)
		assert.Equal(t, refusal.CodeInvalidInput, body.Code, entries)
		view, err := f.res.Lookup(context.Background(), interactions.Key{Conversation: "thread-1", CorrelationID: "card-t-1"})
		require.NoError(t, err)
		require.Equal(t, interactions.StatusPending, view.Record.Status, "a refused resume landed its first entry: %s", entries)
	}
}

// TestABodyNotSentAsJSONLandsAndStartsNothing: a run is posted as
// application/json (docs/contract.md section 18.3); what a cross-site page
// sends without a CORS preflight (a form's three Content-Types, or none: a
// fetch in no-cors mode of a Blob) is 415 unsupported-media-type, and its
// resume entries land nothing.
func TestABodyNotSentAsJSONLandsAndStartsNothing(t *testing.T) {
	f := newFixture(t, true)
	events(t, f.post(t, "alice", input)) // opens card-t-1
	resume := `{"threadId":"thread-1","runId":"run-2","messages":[],"resume":[{"interruptId":"card-t-1","status":"resolved","payload":{"optionId":"yes"}}]}`
	for _, ctype := range []string{"", "text/plain", "text/plain;charset=UTF-8", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", "application/json; charset=latin1"} {
		resp := f.postAs(t, ctype, "alice", resume)
		var body struct{ Code refusal.Code }
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&body))
		resp.Body.Close()
		assert.Equal(t, http.StatusUnsupportedMediaType, resp.StatusCode, ctype)
		assert.Equal(t, refusal.CodeUnsupportedMediaType, body.Code, ctype)
	}
	view, err := f.res.Lookup(context.Background(), interactions.Key{Conversation: "thread-1", CorrelationID: "card-t-1"})
	require.NoError(t, err)
	assert.Equal(t, interactions.StatusPending, view.Record.Status, "a simple cross-site request answered the card")
	assert.Equal(t, "run-2", events(t, f.postAs(t, "Application/JSON; charset=UTF-8", "alice", resume))[0]["runId"])
}

// TestMountedWithoutAMethodEveryOtherOneIsTheJSON405: mounted as the
// package documentation mounts it, without a method, the Handler answers
// every method but POST with method-not-allowed and Allow: POST (docs/contract.md
// section 12.5). Under a "POST /agent" pattern http.ServeMux answers them
// itself, in plain text: the reason the documentation mounts it so.
func TestMountedWithoutAMethodEveryOtherOneIsTheJSON405(t *testing.T) {
	h, err := agui.NewHandler(replay.NewMemory(nil), &agui.HandlerOptions{StartRun: func(context.Context, *http.Request, *agui.RunInput) (replay.Key, error) {
		t.Error("a request of another method started a run")
		return replay.Key{}, refusal.ErrTurnNotFound
	}})
	require.NoError(t, err)
	mux := http.NewServeMux()
	mux.Handle("/agent", h)
	for _, method := range []string{http.MethodGet, http.MethodHead, http.MethodPut, http.MethodDelete, http.MethodOptions} {
		rec := httptest.NewRecorder()
		mux.ServeHTTP(rec, httptest.NewRequest(method, "/agent", strings.NewReader(input)))
		assert.Equal(t, http.StatusMethodNotAllowed, rec.Code, method)
		assert.Equal(t, "POST", rec.Header().Get("Allow"), method)
		assert.Equal(t, "application/json", rec.Header().Get("Content-Type"), method)
		if method != http.MethodHead {
			var body struct{ Code refusal.Code }
			require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &body), method)
			assert.Equal(t, refusal.CodeMethodNotAllowed, body.Code, method)
		}
	}
	withMethod := http.NewServeMux()
	withMethod.Handle("POST /agent", h)
	rec := httptest.NewRecorder()
	withMethod.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/agent", nil))
	assert.Equal(t, http.StatusMethodNotAllowed, rec.Code)
	assert.False(t, json.Valid(rec.Body.Bytes()), "http.ServeMux's own plain text")
}

// TestARunPostedAgainIsReplayedWhole: AG-UI has no resume of a stream; a
// host that maps a run id it has seen to its turn gives a reconnecting
// client the run again, from RUN_STARTED to its end.
func TestARunPostedAgainIsReplayedWhole(t *testing.T) {
	f := newFixture(t, false)
	first := events(t, f.post(t, "alice", input))
	again := events(t, f.post(t, "alice", input))
	assert.Equal(t, first, again)
	assert.Equal(t, "RUN_FINISHED", again[len(again)-1]["type"])
}

// TestARunOfATurnTheWindowPrunedIs410: a run of a turn whose first frames
// the window no longer holds is 410 stale-cursor with the bounds
// (docs/contract.md section 18.3), not 503: the window is up.
func TestARunOfATurnTheWindowPrunedIs410(t *testing.T) {
	w := replay.NewMemory(&replay.MemoryOptions{MaxFrames: 5})
	key := replay.Key{ConversationID: "thread-1", TurnID: "t"}
	evs := []chatprotocol.Event{&chatprotocol.LifecycleEvent{Status: chatprotocol.LifecycleStarted}}
	for range 20 {
		evs = append(evs, &chatprotocol.DeltaEvent{Text: "d"})
	}
	for _, env := range turnscript.Envelopes(key, evs) {
		_, err := w.Append(context.Background(), key, env)
		require.NoError(t, err)
	}
	h, err := agui.NewHandler(w, &agui.HandlerOptions{StartRun: func(context.Context, *http.Request, *agui.RunInput) (replay.Key, error) { return key, nil }})
	require.NoError(t, err)
	srv := httptest.NewServer(h)
	defer srv.Close()
	resp, err := http.Post(srv.URL, "application/json", strings.NewReader(input))
	require.NoError(t, err)
	defer resp.Body.Close()
	var body refusal.Body
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&body))
	assert.Equal(t, http.StatusGone, resp.StatusCode)
	assert.Equal(t, refusal.CodeStaleCursor, body.Code)
	if assert.NotNil(t, body.Lower) && assert.NotNil(t, body.Latest) {
		assert.Equal(t, []int64{16, 21}, []int64{*body.Lower, *body.Latest})
	}
}
