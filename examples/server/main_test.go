package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	chatprotocol "github.com/Papercusp/chat-protocol-go"
	"github.com/Papercusp/chat-protocol-go/examples/server/demo"
	_ "github.com/Papercusp/chat-protocol-go/internal/testkit/golden" // accepts go test ./... -update
	"github.com/Papercusp/chat-protocol-go/stream"
)

// server is a running example server: the stream URLs and the endpoints
// it printed, and its log.
type server struct {
	turns     []string          // the first line, the first turn's stream URL, then the "turn URL" lines read so far
	first     string            // the first turn's id
	endpoints map[string]string // the NAME URL lines up to ag-ui
	later     chan string       // the "turn URL" lines printed after ag-ui
	log       *syncBuffer
	stop      func() error // stops it and returns Run's error
}

// nextTurn waits for the next "turn URL" line, the stream URL of the
// chain's next turn, adds it to s.turns and returns it.
func (s *server) nextTurn(t *testing.T) string {
	t.Helper()
	select {
	case u := <-s.later:
		s.turns = append(s.turns, u)
		return u
	case <-time.After(30 * time.Second):
		require.FailNow(t, "no next turn was printed", "log:\n%s", s.log.String())
		return ""
	}
}

// turnOf is the turn id of a stream URL.
func turnOf(t *testing.T, streamURL string) string {
	t.Helper()
	m := regexp.MustCompile(`/turns/([^/?]+)/events`).FindStringSubmatch(streamURL)
	require.Len(t, m, 2, streamURL)
	return m[1]
}

// syncBuffer is a bytes.Buffer safe for the server's logger and a test.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// start runs the server with args until the test ends and reads what it
// printed up to its last line, the ag-ui endpoint.
func start(t *testing.T, args ...string) *server {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	out, stdout := io.Pipe()
	s := &server{endpoints: map[string]string{}, later: make(chan string, 16), log: &syncBuffer{}}
	done := make(chan error, 1)
	go func() {
		err := demo.Run(ctx, append([]string{"-addr", "127.0.0.1:0"}, args...), stdout, s.log, demo.Memory)
		stdout.CloseWithError(err)
		done <- err
	}()
	lines := bufio.NewScanner(out)
	for lines.Scan() {
		name, u, ok := strings.Cut(lines.Text(), " ")
		if !ok {
			require.Empty(t, s.endpoints, "the stream URLs come first")
			s.turns = append(s.turns, name)
			continue
		}
		s.endpoints[name] = u
		if name == "ag-ui" {
			break
		}
	}
	go func() {
		for lines.Scan() {
			if u, ok := strings.CutPrefix(lines.Text(), "turn "); ok {
				s.later <- u
			}
		}
	}()
	s.stop = sync.OnceValue(func() error { cancel(); return <-done })
	t.Cleanup(func() { s.stop() })
	require.NotEmpty(t, s.endpoints["ag-ui"], "the server printed its endpoints; log:\n%s", s.log.String())
	s.first = turnOf(t, s.turns[0])
	return s
}

// launches counts the tool's launches for turn in the server's log.
func (s *server) launches(conversation, turn string) int {
	return strings.Count(s.log.String(), `msg="tool launched" conversation=`+conversation+" turn="+turn+" ")
}

// follow follows url with stream.Follow onto state (nil: a new one), and
// returns the state and the event types the turn got.
func follow(t *testing.T, url string, state *chatprotocol.ChatStateV1) (*chatprotocol.ChatStateV1, []string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var types []string
	state, err := stream.Follow(ctx, url, &stream.FollowOptions{State: state, OnEnvelope: func(env *chatprotocol.ChatEventEnvelope) error {
		types = append(types, env.Event.EventType())
		return nil
	}})
	require.NoError(t, err, url)
	return state, types
}

// do sends a request with the header Authorization: auth (none for "") and
// returns the status and the body.
func do(t *testing.T, method, url, auth string, body string, header ...string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	require.NoError(t, err)
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json") // a header below may say otherwise
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(b)
}

// statusOf sends a request and returns its status once the headers came,
// leaving the body (a stream that may go on) unread.
func statusOf(t *testing.T, method, url, auth string) int {
	t.Helper()
	req, err := http.NewRequest(method, url, nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", auth)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	require.NoError(t, resp.Body.Close())
	return resp.StatusCode
}

// refused is a response's status, headers (Date aside) and body.
type refused struct {
	status int
	header http.Header
	body   string
}

// refusalOf sends a request and returns its whole response but the Date.
func refusalOf(t *testing.T, method, url, auth string) refused {
	t.Helper()
	req, err := http.NewRequest(method, url, nil)
	require.NoError(t, err)
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	resp.Header.Del("Date")
	return refused{resp.StatusCode, resp.Header, string(b)}
}

// code is the code member of a refusal's body.
func code(t *testing.T, body string) string {
	t.Helper()
	var b struct{ Code string }
	require.NoError(t, json.Unmarshal([]byte(body), &b), body)
	return b.Code
}

const scriptText = "Refunds are accepted within 30 days of delivery. "

// TestServerAnswersEveryWrongMethodWithTheJSON405: every route of the
// server is mounted without a method, so a method it does not serve gets
// method-not-allowed with Allow (docs/contract.md section 12.5), never
// http.ServeMux's plain text.
func TestServerAnswersEveryWrongMethodWithTheJSON405(t *testing.T) {
	s := start(t)
	for _, c := range []struct{ method, url, allow string }{
		{http.MethodPost, s.turns[0], "GET, HEAD"},
		{http.MethodDelete, s.turns[0], "GET, HEAD"},
		{http.MethodGet, s.endpoints["cancel"], "POST"},
		{http.MethodGet, s.endpoints["start"], "POST"},
		{http.MethodPost, strings.Replace(s.endpoints["ui-history"], "{chatId}", "chat-1", 1), "GET, HEAD"},
		{http.MethodGet, s.endpoints["answer"], "POST"},
		{http.MethodGet, s.endpoints["ui-message-stream"], "POST"},
		{http.MethodPut, s.endpoints["ui-message-stream"] + "/chat-1/stream", "GET, HEAD, DELETE"},
		{http.MethodGet, s.endpoints["ag-ui"], "POST"},
		{http.MethodDelete, s.endpoints["ag-ui"], "POST"},
	} {
		req, err := http.NewRequest(c.method, c.url, nil)
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer demo")
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		require.NoError(t, err)
		assert.Equal(t, http.StatusMethodNotAllowed, resp.StatusCode, "%s %s", c.method, c.url)
		assert.Equal(t, c.allow, resp.Header.Get("Allow"), "%s %s", c.method, c.url)
		assert.Equal(t, "method-not-allowed", code(t, string(body)), "%s %s: %s", c.method, c.url, body)
	}
}

func TestServerChainsTurnsThroughTheirCards(t *testing.T) {
	s := start(t, "-deltas", "16", "-pace", "1ms", "-turns", "3")
	require.Len(t, s.turns, 1)
	assert.Regexp(t, `^http://127\.0\.0\.1:[1-9][0-9]*/conversations/c-1/turns/[0-9a-z]+-[0-9a-f]{16}/events\?access_token=demo$`, s.turns[0],
		"the real port and the store's turn id, first line")
	id1 := s.first
	base := strings.TrimSuffix(s.turns[0], "/conversations/c-1/turns/"+id1+"/events?access_token=demo")
	assert.Equal(t, map[string]string{
		"cancel":            base + "/conversations/c-1/turns/" + id1 + "/cancel",
		"answer":            base + "/conversations/c-1/cards/card-" + id1 + "/answer",
		"start":             base + "/conversations/c-1/turns",
		"ui-message-stream": base + "/api/chat",
		"ui-history":        base + "/api/chat/{chatId}/messages",
		"capabilities":      `{"connectionReplay":true,"persistedHistory":false,"persistedDecisions":false,"completedToolCheckpoints":false,"interruptedTurnRecovery":false}`,
		"ag-ui":             base + "/api/ag-ui",
	}, s.endpoints)

	state, types := follow(t, s.turns[0], nil)
	t1, ok := state.Turn(id1)
	require.True(t, ok)
	assert.Equal(t, chatprotocol.LifecycleCompleted, t1.Status)
	assert.Equal(t, int64(16+5), t1.LastSeq, "started, 16 deltas, tool call and result, card, completed")
	assert.Equal(t, []string{"lifecycle", "delta"}, types[:2])
	assert.Equal(t, []string{"tool_call", "tool_result"}, types[9:11], "after half the deltas")
	assert.Equal(t, []string{"card", "lifecycle"}, types[19:])
	assert.Equal(t, strings.Repeat(scriptText, 2), t1.Text())
	require.Len(t, t1.ToolCalls, 1)
	assert.Equal(t, id1+"-call-1", t1.ToolCalls[0].CallID)
	assert.Equal(t, "search_docs", t1.ToolCalls[0].Name)
	assert.Equal(t, chatprotocol.ToolCallStatus(chatprotocol.ToolResultOK), t1.ToolCalls[0].Status)
	assert.JSONEq(t, `{"hits":2}`, string(t1.ToolCalls[0].Output), "the articles holding refund and policy")
	assert.Equal(t, 1, s.launches("c-1", id1), "the tool ran once")
	require.Len(t, state.OpenCards(), 1)
	assert.Equal(t, "card-"+id1, state.OpenCards()[0].CorrelationID)
	assert.Equal(t, "Was this helpful?", state.OpenCards()[0].Prompt)

	answer := func(url, auth, key, body string) (int, string) {
		return do(t, http.MethodPost, url, auth, body, "Idempotency-Key", key, "Content-Type", "application/json")
	}
	yes := `{"action":"submit","correlationId":"card-` + id1 + `","value":{"optionId":"yes"}}`
	status, body := answer(s.endpoints["answer"], "", "k-1", yes)
	assert.Equal(t, http.StatusUnauthorized, status, body)
	status, body = answer(s.endpoints["answer"], "Bearer demo", "k-1", yes)
	require.Equal(t, http.StatusOK, status, body)
	assert.Contains(t, body, `"status":"answered"`)
	status, body = answer(s.endpoints["answer"], "Bearer demo", "k-1", yes)
	assert.Equal(t, http.StatusOK, status)
	assert.Equal(t, "duplicate-answer", code(t, body))
	status, body = answer(s.endpoints["answer"], "Bearer guest", "k-2", yes)
	assert.Equal(t, http.StatusForbidden, status, "another caller's answer: %s", body)
	assert.Equal(t, "unauthorized", code(t, body))
	status, body = answer(s.endpoints["answer"], "Bearer demo", "k-2", `{"action":"submit","correlationId":"card-`+id1+`","value":{"optionId":"no"}}`)
	assert.Equal(t, http.StatusConflict, status)
	assert.Equal(t, "already-answered", code(t, body))

	// The answer started the second turn: it closes the card, replies, plays the script and asks its own card.
	id2 := turnOf(t, s.nextTurn(t))
	assert.NotEqual(t, id1, id2)
	state, types = follow(t, s.turns[1], state)
	t2, _ := state.Turn(id2)
	assert.Equal(t, chatprotocol.LifecycleCompleted, t2.Status)
	assert.Equal(t, []string{"lifecycle", "card_closed", "delta"}, types[:3])
	assert.Equal(t, "Glad it helped. "+strings.Repeat(scriptText, 2), t2.Text())
	assert.Equal(t, 1, s.launches("c-1", id2))
	require.Len(t, state.OpenCards(), 1)
	assert.Equal(t, "card-"+id2, state.OpenCards()[0].CorrelationID, "the first card closed, the second open")

	status, body = answer(strings.Replace(s.endpoints["answer"], "card-"+id1, "card-"+id2, 1), "Bearer demo", "k-3",
		`{"action":"decline","correlationId":"card-`+id2+`"}`)
	require.Equal(t, http.StatusOK, status, body)
	id3 := turnOf(t, s.nextTurn(t))
	state, types = follow(t, s.turns[2], state)
	t3, _ := state.Turn(id3)
	assert.Equal(t, []string{"lifecycle", "card_closed", "delta", "lifecycle"}, types, "the last turn replies only")
	assert.Equal(t, "Understood. ", t3.Text())
	assert.Equal(t, chatprotocol.LifecycleCompleted, t3.Status)
	assert.Empty(t, state.OpenCards())

	bare := strings.TrimSuffix(s.turns[0], "?access_token=demo")
	for _, c := range []struct{ name, url, auth string }{
		{"an unknown turn", strings.Replace(s.turns[0], id1, "t-9", 1), ""},
		{"another caller", strings.Replace(s.turns[0], "access_token=demo", "access_token=guest", 1), ""},
		{"an unknown conversation", strings.Replace(s.turns[0], "c-1", "c-9", 1), ""},
		{"no credential", bare, ""},
		{"a wrong token", strings.Replace(s.turns[0], "access_token=demo", "access_token=mallory", 1), ""},
		{"a wrong bearer token", bare, "Bearer mallory"},
	} {
		status, body := do(t, http.MethodGet, c.url, c.auth, "")
		assert.Equal(t, http.StatusNotFound, status, c.name)
		assert.Equal(t, "turn-not-found", code(t, body), c.name)
	}
	status, _ = do(t, http.MethodGet, bare, "Bearer demo", "")
	assert.Equal(t, http.StatusOK, status, "the demo caller by header")

	begun := time.Now()
	require.NoError(t, s.stop(), "graceful shutdown")
	assert.Less(t, time.Since(begun), 5*time.Second)
}

func TestServerCancelsTheRunningTurn(t *testing.T) {
	s := start(t, "-pace", "1h") // t-1 waits after its start
	cancelURL := s.endpoints["cancel"]
	for _, c := range []struct{ name, url, auth string }{
		{"no credential", cancelURL, ""},
		{"a stranger", cancelURL, "Bearer mallory"},
		{"another caller", cancelURL, "Bearer guest"},
		{"an unknown turn", strings.Replace(cancelURL, s.first, "t-9", 1), "Bearer demo"},
	} {
		status, body := do(t, http.MethodPost, c.url, c.auth, "", "X-Requested-With", "curl")
		assert.Equal(t, http.StatusNotFound, status, c.name)
		assert.Equal(t, "turn-not-found", code(t, body), c.name)
	}
	status, body := do(t, http.MethodGet, cancelURL, "Bearer demo", "")
	assert.Equal(t, http.StatusMethodNotAllowed, status)
	assert.Equal(t, "method-not-allowed", code(t, body))

	resp, err := http.Get(s.turns[0])
	require.NoError(t, err)
	defer resp.Body.Close()
	rd := chatprotocol.NewEnvelopeReader(resp.Body, nil)
	env, err := rd.Next()
	require.NoError(t, err)
	assert.Equal(t, &chatprotocol.LifecycleEvent{Status: chatprotocol.LifecycleStarted}, env.Event)

	status, body = do(t, http.MethodPost, cancelURL, "Bearer demo", "")
	assert.Equal(t, http.StatusUnsupportedMediaType, status, "what a cross-site form could send: %s", body)
	assert.Equal(t, "unsupported-media-type", code(t, body))
	status, body = do(t, http.MethodPost, cancelURL, "Bearer demo", "", "X-Requested-With", "curl")
	assert.Equal(t, http.StatusAccepted, status, body)
	env, err = rd.Next()
	require.NoError(t, err)
	assert.Equal(t, &chatprotocol.LifecycleEvent{Status: chatprotocol.LifecycleCancelled}, env.Event, "the stream ends cancelled")
	status, _ = do(t, http.MethodPost, cancelURL+"?access_token=demo", "", "{}")
	assert.Equal(t, http.StatusAccepted, status, "again, idempotent, by the query parameter, as application/json")
	assert.Zero(t, s.launches("c-1", s.first))

	// useChat's stop: DELETE {api}/{chatId}/stream cancels the chat's running turn.
	api := s.endpoints["ui-message-stream"]
	req, err := http.NewRequest(http.MethodPost, api, strings.NewReader(strings.ReplaceAll(submit, "CHAT", "chat-1")))
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer demo")
	req.Header.Set("Content-Type", "application/json")
	resp, err = http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode) // the turn has started
	status, _ = do(t, http.MethodDelete, api+"/chat-1/stream", "Bearer mallory", "")
	assert.Equal(t, http.StatusNoContent, status, "a stranger's stop says nothing ...")
	assert.Equal(t, http.StatusOK, statusOf(t, http.MethodGet, api+"/chat-1/stream", "Bearer demo"), "... and stops nothing")
	status, _ = do(t, http.MethodDelete, api+"/chat-1/stream", "Bearer demo", "")
	assert.Equal(t, http.StatusNoContent, status)
	var lines []string
	for sc := bufio.NewScanner(resp.Body); sc.Scan(); {
		if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			lines = append(lines, d)
		}
	}
	assert.Equal(t, []string{`{"type":"abort"}`, "[DONE]"}, lines[len(lines)-2:])
	require.NoError(t, s.stop())
}

func TestServerGoesOnWhenItsClientGoesAway(t *testing.T) {
	s := start(t, "-deltas", "20", "-pace", "5ms")
	resp, err := http.Get(s.turns[0])
	require.NoError(t, err)
	_, err = chatprotocol.NewEnvelopeReader(resp.Body, nil).Next()
	require.NoError(t, err)
	require.NoError(t, resp.Body.Close()) // the client goes away

	state, _ := follow(t, s.turns[0], nil)
	assert.Equal(t, chatprotocol.LifecycleCompleted, state.Turns[0].Status)
	assert.Equal(t, int64(25), state.Turns[0].LastSeq)
}

func TestServerShutsDownWhileStreaming(t *testing.T) {
	s := start(t, "-pace", "1h") // the turn waits after its first frame
	resp, err := http.Get(s.turns[0])
	require.NoError(t, err)
	defer resp.Body.Close()
	rd := chatprotocol.NewEnvelopeReader(resp.Body, nil)
	env, err := rd.Next()
	require.NoError(t, err)
	assert.Equal(t, int64(1), env.Seq)
	require.NoError(t, s.stop())
	for {
		env, err = rd.Next()
		if err != nil {
			break
		}
		assert.Equal(t, &chatprotocol.LifecycleEvent{Status: chatprotocol.LifecycleInterrupted, Reason: "the server is shutting down"}, env.Event,
			"the turn is interrupted, never ended")
	}
	assert.ErrorIs(t, err, io.ErrUnexpectedEOF, "the stream is aborted, so that the client resumes elsewhere")
}

func TestServerRefusesBadFlags(t *testing.T) {
	for _, args := range [][]string{{"-deltas", "1"}, {"-turns", "0"}, {"-pace", "-1s"}, {"extra"}, {"-nope"},
		{"-store", "postgres"}, {"-store", "postgres", "postgres://db/app"}, {"-store", "sqlite", "x"}, {"-conversation", ""}} {
		assert.Error(t, demo.Run(context.Background(), args, io.Discard, io.Discard, demo.Memory), "%q", args)
	}
}

// TestServerFollowedByChatwire: the command line client follows the first
// turn to its end and prints its state.
func TestServerFollowedByChatwire(t *testing.T) {
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command on PATH")
	}
	bin := filepath.Join(t.TempDir(), "chatwire")
	out, err := exec.Command(gobin, "build", "-o", bin, "../../cmd/chatwire").CombinedOutput()
	require.NoError(t, err, "%s", out)
	s := start(t, "-deltas", "10", "-pace", "1ms")
	out, err = exec.Command(bin, "follow", "--state", s.turns[0]).Output()
	require.NoError(t, err)
	var state struct {
		Turns []struct {
			TurnID, Status, Text string
			ToolCalls            []struct{ Name, Status string }
		}
		OpenCards []struct{ CorrelationID string }
	}
	require.NoError(t, json.Unmarshal(out, &state), "%s", out)
	require.Len(t, state.Turns, 1)
	assert.Equal(t, "completed", state.Turns[0].Status)
	assert.Equal(t, scriptText+"Refunds are ", state.Turns[0].Text)
	assert.Equal(t, []struct{ Name, Status string }{{"search_docs", "ok"}}, state.Turns[0].ToolCalls)
	assert.Equal(t, []struct{ CorrelationID string }{{"card-" + s.first}}, state.OpenCards)
}

// TestLinksNoTestKit: the example is product code: it links neither the
// testing package, testify nor a test kit, and its stores are the
// product's in-memory ones.
func TestLinksNoTestKit(t *testing.T) {
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command on PATH")
	}
	out, err := exec.Command(gobin, "list", "-deps", ".").CombinedOutput()
	require.NoError(t, err, "%s", out)
	deps := strings.Fields(string(out))
	require.Contains(t, deps, "github.com/Papercusp/chat-protocol-go/examples/server/demo")
	require.Contains(t, deps, "github.com/Papercusp/chat-protocol-go/turn")
	for _, dep := range deps {
		assert.NotEqual(t, "testing", dep)
		assert.NotContains(t, dep, "testify")
		assert.NotContains(t, dep, "/internal/testkit/")
		assert.NotRegexp(t, `(replaytest|recoverytest|interactionstest)$`, dep)
	}
}

// dataLines sends a request and reads its event stream whole: the data of
// every frame, comments left out.
func dataLines(t *testing.T, method, url, auth, body string) (int, []string) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	require.NoError(t, err)
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	var out []string
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			out = append(out, d)
		}
	}
	require.NoError(t, sc.Err())
	return resp.StatusCode, out
}

// chunk is a UI message stream chunk, or an AG-UI event, with the members
// the tests read.
type chunk struct {
	Type, MessageID, Delta, ToolName, ToolCallName, ThreadID, RunID, Name, Content string
	Input, Output, Data, Outcome, Messages                                         json.RawMessage
}

func parse(t *testing.T, lines []string) []chunk {
	t.Helper()
	var out []chunk
	for _, l := range lines {
		if l == "[DONE]" {
			out = append(out, chunk{Type: "[DONE]"})
			continue
		}
		var c chunk
		require.NoError(t, json.Unmarshal([]byte(l), &c), l)
		out = append(out, c)
	}
	return out
}

// text joins the deltas of the chunks of type typ.
func text(chunks []chunk, typ string) string {
	var b strings.Builder
	for _, c := range chunks {
		if c.Type == typ {
			b.WriteString(c.Delta)
		}
	}
	return b.String()
}

// only returns the one chunk of type typ.
func only(t *testing.T, chunks []chunk, typ string) chunk {
	t.Helper()
	var found []chunk
	for _, c := range chunks {
		if c.Type == typ {
			found = append(found, c)
		}
	}
	require.Len(t, found, 1, typ)
	return found[0]
}

// cardStatus is the status member of a data-card chunk's data.
func cardStatus(t *testing.T, c chunk) string {
	t.Helper()
	var data struct{ Status string }
	require.NoError(t, json.Unmarshal(c.Data, &data), "%s", c.Data)
	return data.Status
}

const submit = `{"id":"CHAT","messages":[{"id":"u1","role":"user","parts":[{"type":"text","text":"What is the refund policy?"}]}],"trigger":"submit-message"}`

// TestServerServesUseChat: a POST to the UI message stream endpoint starts
// a turn with the version-1 turn's script; a resume replays it from its
// first chunk while it runs, and answers 204 otherwise; the next POST's
// answer closes the card in the next turn; a client that goes away stops
// nothing.
func TestServerServesUseChat(t *testing.T) {
	s := start(t, "-deltas", "16", "-pace", "20ms")
	api := s.endpoints["ui-message-stream"]
	v1, _ := follow(t, s.turns[0], nil)
	want := v1.Turns[0]

	type read struct {
		status int
		lines  []string
	}
	posted := make(chan read, 1)
	go func() {
		status, lines := dataLines(t, http.MethodPost, api, "Bearer demo", strings.ReplaceAll(submit, "CHAT", "chat-1"))
		posted <- read{status, lines}
	}()
	var resumed read
	require.Eventually(t, func() bool { // the POST has started the turn
		status, lines := dataLines(t, http.MethodGet, api+"/chat-1/stream", "Bearer demo", "")
		resumed = read{status, lines}
		return status == http.StatusOK
	}, 5*time.Second, 5*time.Millisecond)
	post := <-posted
	require.Equal(t, http.StatusOK, post.status)
	assert.Equal(t, post.lines, resumed.lines, "the resume replays the turn from its first chunk, then live to its end")

	chunks := parse(t, post.lines)
	first := chunks[0].MessageID
	assert.Equal(t, chunk{Type: "start", MessageID: first}, chunks[0], "the assistant message is the turn's id")
	assert.NotEqual(t, s.first, first, "turn ids never repeat")
	assert.Equal(t, "[DONE]", chunks[len(chunks)-1].Type)
	assert.Equal(t, want.Text(), text(chunks, "text-delta"), "the version-1 turn's text")
	call := only(t, chunks, "tool-input-available")
	assert.Equal(t, want.ToolCalls[0].Name, call.ToolName)
	assert.JSONEq(t, string(want.ToolCalls[0].Input), string(call.Input))
	assert.JSONEq(t, string(want.ToolCalls[0].Output), string(only(t, chunks, "tool-output-available").Output))
	assert.Equal(t, "open", cardStatus(t, only(t, chunks, "data-card")))
	assert.Equal(t, 1, s.launches("chat-1", first))

	for _, c := range []struct{ name, url, auth string }{
		{"an ended turn", api + "/chat-1/stream", "Bearer demo"},
		{"a chat never seen", api + "/chat-9/stream", "Bearer demo"},
		{"a stranger", api + "/chat-1/stream", "Bearer mallory"},
	} {
		status, lines := dataLines(t, http.MethodGet, c.url, c.auth, "")
		assert.Equal(t, http.StatusNoContent, status, c.name)
		assert.Empty(t, lines, c.name)
	}
	status, body := do(t, http.MethodPost, api, "Bearer mallory", strings.ReplaceAll(submit, "CHAT", "chat-1"))
	assert.Equal(t, http.StatusUnauthorized, status, "no session: refused before the body is read")
	assert.Equal(t, "unauthenticated", code(t, body))

	answer := `{"id":"chat-1","messages":[],"trigger":"submit-message","answer":{"submissionId":"s-1","response":{"action":"submit","correlationId":"card-` + first + `","value":{"optionId":"no"}}}}`
	status, lines := dataLines(t, http.MethodPost, api, "Bearer guest", answer)
	assert.Equal(t, http.StatusForbidden, status, "another caller's answer")
	assert.Empty(t, lines)
	status, lines = dataLines(t, http.MethodPost, api, "Bearer demo", answer)
	require.Equal(t, http.StatusOK, status)
	chunks = parse(t, lines)
	second := chunks[0].MessageID
	assert.NotEqual(t, first, second)
	assert.Equal(t, "closed", cardStatus(t, only(t, chunks, "data-card")))
	assert.Equal(t, "Sorry it did not help; a person will follow up. ", text(chunks, "text-delta"))
	chatTurn := func(chat, id string) string {
		return strings.Replace(s.turns[0], "c-1/turns/"+s.first, chat+"/turns/"+id, 1)
	}
	state, _ := follow(t, chatTurn("chat-1", first), nil)
	state, _ = follow(t, chatTurn("chat-1", second), state)
	assert.Empty(t, state.OpenCards(), "the version-1 streams of the chat's turns")

	// The chat's history, its owner's only.
	history := strings.Replace(s.endpoints["ui-history"], "{chatId}", "chat-1", 1)
	status, body = do(t, http.MethodGet, history, "Bearer demo", "")
	require.Equal(t, http.StatusOK, status, body)
	var msgs []struct {
		ID, Role string
		Parts    []map[string]any
	}
	require.NoError(t, json.Unmarshal([]byte(body), &msgs), body)
	require.Len(t, msgs, 4)
	assert.Equal(t, []string{first + "-user", first, second + "-user", second}, []string{msgs[0].ID, msgs[1].ID, msgs[2].ID, msgs[3].ID})
	assert.Equal(t, "What is the refund policy?", msgs[0].Parts[0]["text"])
	var parts []string
	for _, p := range msgs[1].Parts {
		parts = append(parts, p["type"].(string))
	}
	assert.Equal(t, []string{"step-start", "text", "tool-search_docs"}, parts)
	assert.Equal(t, want.Text(), msgs[1].Parts[1]["text"])
	assert.Equal(t, map[string]any{"hits": float64(2)}, msgs[1].Parts[2]["output"])
	assert.Equal(t, "Sorry it did not help; a person will follow up. ", msgs[3].Parts[1]["text"])
	unknown := refusalOf(t, http.MethodGet, strings.Replace(history, "chat-1", "chat-9", 1), "Bearer demo")
	assert.Equal(t, http.StatusNotFound, unknown.status)
	assert.Equal(t, "turn-not-found", code(t, unknown.body))
	for _, auth := range []string{"Bearer guest", "Bearer mallory", ""} {
		assert.Equal(t, unknown, refusalOf(t, http.MethodGet, history, auth), "%q gets what an unknown chat gets", auth)
	}

	// A client that sends its last message only (prepareSendMessagesRequest).
	status, lines = dataLines(t, http.MethodPost, api, "Bearer demo",
		`{"id":"chat-1","message":{"id":"u2","role":"user","parts":[{"type":"text","text":"And for gift cards?"}]}}`)
	require.Equal(t, http.StatusOK, status)
	third := parse(t, lines)[0].MessageID
	status, body = do(t, http.MethodGet, history, "Bearer demo", "")
	require.Equal(t, http.StatusOK, status)
	require.NoError(t, json.Unmarshal([]byte(body), &msgs), body)
	require.Len(t, msgs, 6)
	assert.Equal(t, third+"-user", msgs[4].ID)
	assert.Equal(t, "And for gift cards?", msgs[4].Parts[0]["text"])

	// A client that goes away stops nothing.
	req, err := http.NewRequest(http.MethodPost, api, strings.NewReader(strings.ReplaceAll(submit, "CHAT", "chat-2")))
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer demo")
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	_, err = bufio.NewReader(resp.Body).ReadString('\n')
	require.NoError(t, err)
	require.NoError(t, resp.Body.Close())
	status, body = do(t, http.MethodGet, strings.Replace(s.endpoints["ui-history"], "{chatId}", "chat-2", 1), "Bearer demo", "")
	require.Equal(t, http.StatusOK, status, body)
	require.NoError(t, json.Unmarshal([]byte(body), &msgs), body)
	state, _ = follow(t, chatTurn("chat-2", strings.TrimSuffix(msgs[0].ID, "-user")), nil)
	assert.Equal(t, chatprotocol.LifecycleCompleted, state.Turns[0].Status)
	assert.Equal(t, want.Text(), state.Turns[0].Text())
}

// TestServerServesAGUI: a run of an AG-UI POST has the version-1 turn's
// text and tool call between RUN_STARTED and RUN_FINISHED with the input's
// ids, ends with the card's interrupt, is replayed whole for its run id,
// and the next run's resume entry closes the card in the next turn.
func TestServerServesAGUI(t *testing.T) {
	s := start(t, "-deltas", "16", "-pace", "1ms")
	url := s.endpoints["ag-ui"]
	v1, _ := follow(t, s.turns[0], nil)
	want := v1.Turns[0]

	input := `{"threadId":"thread-1","runId":"run-1","messages":[{"id":"u1","role":"user","content":"What is the refund policy?"}],"tools":[],"context":[],"state":{},"forwardedProps":{}}`
	status, lines := dataLines(t, http.MethodPost, url, "Bearer demo", input)
	require.Equal(t, http.StatusOK, status)
	evs := parse(t, lines)
	first, last := evs[0], evs[len(evs)-1]
	assert.Equal(t, []string{"RUN_STARTED", "thread-1", "run-1"}, []string{first.Type, first.ThreadID, first.RunID})
	assert.Equal(t, []string{"RUN_FINISHED", "thread-1", "run-1"}, []string{last.Type, last.ThreadID, last.RunID})
	assert.Contains(t, string(last.Outcome), `"type":"interrupt"`)
	snapshot := evs[1]
	require.Equal(t, "MESSAGES_SNAPSHOT", snapshot.Type, "right after RUN_STARTED")
	var msgs []struct{ ID, Role, Content string }
	require.NoError(t, json.Unmarshal(snapshot.Messages, &msgs))
	require.Len(t, msgs, 1, "the run's user message")
	id1 := strings.TrimSuffix(msgs[0].ID, "-user")
	assert.Equal(t, "What is the refund policy?", msgs[0].Content)
	assert.Contains(t, string(last.Outcome), `"id":"card-`+id1+`"`)
	assert.Equal(t, want.Text(), text(evs, "TEXT_MESSAGE_CONTENT"))
	assert.Equal(t, want.ToolCalls[0].Name, only(t, evs, "TOOL_CALL_START").ToolCallName)
	assert.JSONEq(t, string(want.ToolCalls[0].Input), only(t, evs, "TOOL_CALL_ARGS").Delta)
	assert.JSONEq(t, string(want.ToolCalls[0].Output), only(t, evs, "TOOL_CALL_RESULT").Content)

	status, again := dataLines(t, http.MethodPost, url, "Bearer demo", input)
	require.Equal(t, http.StatusOK, status)
	assert.Equal(t, lines, again, "a run posted again is replayed whole")
	assert.Equal(t, 1, s.launches("thread-1", id1))

	status, body := do(t, http.MethodPost, url, "", input)
	assert.Equal(t, http.StatusUnauthorized, status, "no session: refused before the body is read")
	assert.Equal(t, "unauthenticated", code(t, body))

	resume := `{"threadId":"thread-1","runId":"run-2","messages":[],"resume":[{"interruptId":"card-` + id1 + `","status":"resolved","payload":{"optionId":"yes"}}]}`
	status, lines = dataLines(t, http.MethodPost, url, "Bearer demo", resume)
	require.Equal(t, http.StatusOK, status)
	evs = parse(t, lines)
	require.Equal(t, "MESSAGES_SNAPSHOT", evs[1].Type)
	require.NoError(t, json.Unmarshal(evs[1].Messages, &msgs))
	var roles []string
	for _, m := range msgs {
		roles = append(roles, m.Role)
	}
	assert.Equal(t, []string{"user", "assistant", "tool", "user"}, roles, "the first turn whole, then the run's user message")
	assert.Equal(t, want.Text(), msgs[1].Content)
	assert.JSONEq(t, `{"hits":2}`, msgs[2].Content)
	assert.Equal(t, "chatprotocol.card_closed", only(t, evs, "CUSTOM").Name)
	assert.Equal(t, "Glad it helped. ", text(evs, "TEXT_MESSAGE_CONTENT"))
	last = evs[len(evs)-1]
	assert.Equal(t, []string{"RUN_FINISHED", "thread-1", "run-2"}, []string{last.Type, last.ThreadID, last.RunID})
	assert.JSONEq(t, `{"type":"success"}`, string(last.Outcome))
}

// With -replay FILE -from KIND the server plays a recorded provider stream
// as its turn: every recorded body of testdata/providers that reads to its
// end gives, to a follower, the state the body's fixture pins.
func TestServerReplaysRecordedProviderStreams(t *testing.T) {
	for _, kind := range []string{"openai-chat", "openai-responses", "anthropic-messages"} {
		for _, name := range []string{"text", "tool-use", "function-calls", "tool-calls-interleaved", "error-after-delta", "overloaded-after-delta"} {
			body := filepath.Join("..", "..", "testdata", "providers", kind, name+".sse")
			if _, err := os.Stat(body); err != nil {
				continue
			}
			t.Run(kind+"/"+name, func(t *testing.T) {
				want, err := os.ReadFile(strings.TrimSuffix(body, ".sse") + ".state.json")
				require.NoError(t, err)
				var golden struct{ State json.RawMessage }
				require.NoError(t, json.Unmarshal(want, &golden))
				s := start(t, "-replay", body, "-from", kind, "-pace", "0")
				state, _ := follow(t, s.turns[0], nil)
				got, err := state.MarshalJSON()
				require.NoError(t, err)
				assert.JSONEq(t, regexp.MustCompile(`"turnId":\s*"t-1"`).ReplaceAllLiteralString(string(golden.State), `"turnId":"`+s.first+`"`), string(got),
					"the fixture's state, under the store's turn id")
			})
		}
	}
}

// With -model KIND the first turn runs through the agent loop on a
// loopback provider of KIND's API: the turn, followed from the first
// line's URL, is two model steps, the first asking for search_docs, its
// result between them, then the model's answer, and it ends completed
// with the two steps' usage; the tool launched once.
func TestServerRunsTheAgentLoop(t *testing.T) {
	for _, kind := range []string{"openai-chat", "openai-responses", "anthropic-messages"} {
		t.Run(kind, func(t *testing.T) {
			s := start(t, "-model", kind)
			require.Len(t, s.turns, 1)
			state, types := follow(t, s.turns[0], nil)
			require.Len(t, state.Turns, 1)
			tt := state.Turns[0]
			assert.Equal(t, chatprotocol.LifecycleCompleted, tt.Status)
			assert.Equal(t, "Let me look that up.Refunds are accepted within 30 days of delivery.", tt.Text())
			require.Len(t, tt.ToolCalls, 1)
			assert.Equal(t, "search_docs", tt.ToolCalls[0].Name)
			assert.JSONEq(t, `{"hits":2}`, string(tt.ToolCalls[0].Output))
			require.Len(t, tt.Steps, 2)
			assert.Equal(t, int64(85), *tt.Steps[0].Usage.TotalTokens)
			assert.Equal(t, int64(206), *tt.Usage.TotalTokens)
			at := func(typ string) int { return slices.Index(types, typ) }
			assert.Less(t, at("tool_call"), at("tool_result"))
			assert.Less(t, at("tool_result"), slices.Index(types[at("tool_result"):], "delta")+at("tool_result"))
			assert.Equal(t, 1, strings.Count(s.log.String(), `msg="tool launched" tool=search_docs`))
		})
	}
}

// TestCapabilitiesOnMemory: on the memory stores the server declares
// connectionReplay alone, and nothing survives a restart: the restarted
// server's chain conversation holds its new turn only, a chat of the
// first run is unknown, the first turn's stream and card are gone.
func TestCapabilitiesOnMemory(t *testing.T) {
	first := start(t, "-deltas", "4", "-pace", "1ms")
	assert.JSONEq(t, `{"connectionReplay":true,"persistedHistory":false,"persistedDecisions":false,"completedToolCheckpoints":false,"interruptedTurnRecovery":false}`,
		first.endpoints["capabilities"])
	follow(t, first.turns[0], nil)
	status, _ := do(t, http.MethodPost, first.endpoints["answer"], "Bearer demo", `{"action":"submit","correlationId":"card-`+first.first+`","value":{"optionId":"yes"}}`,
		"Idempotency-Key", "k-1")
	require.Equal(t, http.StatusOK, status)
	status, _ = dataLines(t, http.MethodPost, first.endpoints["ui-message-stream"], "Bearer demo", strings.ReplaceAll(submit, "CHAT", "chat-1"))
	require.Equal(t, http.StatusOK, status)
	require.NoError(t, first.stop())

	again := start(t, "-deltas", "4", "-pace", "1ms")
	assert.NotEqual(t, first.first, again.first, "turn ids never repeat")
	swap := func(u string) string {
		return strings.Replace(u, strings.Split(first.turns[0], "/conversations/")[0], strings.Split(again.turns[0], "/conversations/")[0], 1)
	}
	historyOf := func(chat string) (int, string) {
		return do(t, http.MethodGet, strings.Replace(again.endpoints["ui-history"], "{chatId}", chat, 1), "Bearer demo", "")
	}
	status, body := historyOf("c-1")
	require.Equal(t, http.StatusOK, status)
	var msgs []struct{ ID string }
	require.NoError(t, json.Unmarshal([]byte(body), &msgs))
	assert.Equal(t, []struct{ ID string }{{again.first + "-user"}}, msgs[:1], "persistedHistory false: the first run's turns are gone")
	status, _ = historyOf("chat-1")
	assert.Equal(t, http.StatusNotFound, status, "the first run's chat is gone")
	status, body = do(t, http.MethodGet, swap(first.turns[0]), "", "")
	assert.Equal(t, http.StatusNotFound, status, "the first turn's frames are gone")
	assert.Equal(t, "turn-not-found", code(t, body))
	status, body = do(t, http.MethodPost, swap(first.endpoints["answer"]), "Bearer demo",
		`{"action":"submit","correlationId":"card-`+first.first+`","value":{"optionId":"yes"}}`, "Idempotency-Key", "k-1")
	assert.NotEqual(t, http.StatusOK, status, "persistedDecisions false: the answer is not stored: %s", body)
	assert.Equal(t, "card-not-found", code(t, body))
}
