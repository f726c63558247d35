package main

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	chatprotocol "github.com/Papercusp/chat-protocol-go"
	"github.com/Papercusp/chat-protocol-go/examples/server/demo"
	"github.com/Papercusp/chat-protocol-go/internal/testkit/uiclients"
	"github.com/Papercusp/chat-protocol-go/refusal"
	"github.com/Papercusp/chat-protocol-go/stream"
)

// redisAddr returns the Redis server of REDIS_ADDR (.ci/redis start); it
// skips t without one, and fails it when CHATPROTOCOL_REDIS_REQUIRED=1.
func redisAddr(t *testing.T) string {
	t.Helper()
	addr := os.Getenv("REDIS_ADDR")
	if addr == "" {
		if os.Getenv("CHATPROTOCOL_REDIS_REQUIRED") == "1" {
			t.Fatal("REDIS_ADDR is not set and CHATPROTOCOL_REDIS_REQUIRED=1")
		}
		t.Skip("SKIPPED: REDIS_ADDR is not set (run .ci/redis start and export its address)")
	}
	return addr
}

// fresh returns a conversation id no earlier run used.
func fresh(prefix string) string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return prefix + hex.EncodeToString(b[:])
}

// instance is one running server: the first turn's stream URL, its
// printed lines by name, its base URL, and the "turn URL" lines it prints
// later (the chain's next turns).
type instance struct {
	turns     []string
	endpoints map[string]string
	base      string
	later     chan string
}

// serve runs an instance with args, stopped when t ends.
func serve(t *testing.T, args ...string) instance {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	out, stdout := io.Pipe()
	done := make(chan error, 1)
	go func() {
		err := demo.Run(ctx, append([]string{"-addr", "127.0.0.1:0"}, args...), stdout, io.Discard, open)
		stdout.CloseWithError(err)
		done <- err
	}()
	in := instance{endpoints: map[string]string{}, later: make(chan string, 16)}
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		name, u, ok := strings.Cut(sc.Text(), " ")
		if !ok {
			in.turns = append(in.turns, sc.Text())
			continue
		}
		in.endpoints[name] = u
		if name == "ag-ui" {
			break
		}
	}
	go func() {
		for sc.Scan() {
			if u, ok := strings.CutPrefix(sc.Text(), "turn "); ok {
				in.later <- u
			}
		}
		_, _ = io.Copy(io.Discard, out)
	}()
	stop := sync.OnceValue(func() error { cancel(); return <-done })
	t.Cleanup(func() {
		if err := stop(); err != nil {
			t.Errorf("instance stopped with %v", err)
		}
	})
	if len(in.turns) == 0 || in.endpoints["ag-ui"] == "" {
		t.Fatalf("the instance printed %v %v", in.turns, in.endpoints)
	}
	in.base = strings.TrimSuffix(in.endpoints["ag-ui"], "/api/ag-ui")
	return in
}

// events is the version-1 stream URL of a turn on in.
func (in instance) events(conversation, turn string) string {
	return in.base + "/conversations/" + conversation + "/turns/" + turn + "/events?access_token=demo"
}

// on is a stream URL another instance printed, on in instead.
func (in instance) on(from instance, streamURL string) string {
	return in.base + strings.TrimPrefix(streamURL, from.base)
}

// nextTurn waits for in's next "turn URL" line, a chain turn's stream URL.
func (in instance) nextTurn(ctx context.Context, t *testing.T) string {
	t.Helper()
	select {
	case u := <-in.later:
		return u
	case <-ctx.Done():
		t.Fatal("no next turn was printed")
		return ""
	}
}

// turnOf is the turn id of a stream URL.
func turnOf(t *testing.T, streamURL string) string {
	t.Helper()
	m := regexp.MustCompile(`/turns/([^/?]+)/events`).FindStringSubmatch(streamURL)
	if len(m) != 2 {
		t.Fatalf("no turn in %s", streamURL)
	}
	return m[1]
}

// post sends body to url as the demo caller and returns the status and the
// data lines of the response.
func post(t *testing.T, method, url, body string) (int, []string) {
	t.Helper()
	status, lines, err := request(method, url, body)
	if err != nil {
		t.Fatal(err)
	}
	return status, lines
}

// request is post's request, for any goroutine.
func request(method, url, body string) (int, []string, error) {
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Authorization", "Bearer demo")
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Idempotency-Key", "k-1")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	var lines []string
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			lines = append(lines, d)
		}
	}
	return resp.StatusCode, lines, sc.Err()
}

// followOn follows url until the turn ends; while the instance does not
// know the turn yet (another instance reserved it, and starts it after
// an answer), it asks again.
func followOn(ctx context.Context, t *testing.T, url string, state *chatprotocol.ChatStateV1) *chatprotocol.ChatStateV1 {
	t.Helper()
	for {
		got, err := stream.Follow(ctx, url, &stream.FollowOptions{State: state})
		if err == nil {
			return got
		}
		if refusal.CodeOf(err) != refusal.CodeTurnNotFound || ctx.Err() != nil {
			t.Fatalf("follow %s: %v", url, err)
		}
		select {
		case <-ctx.Done():
			t.Fatalf("follow %s: %v", url, ctx.Err())
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// TestTwoInstancesOnRedis runs two instances on one Redis, window and
// conversations: a chain turn of the first, followed through the second
// by the URL the first printed, has the script's frames, tool call and
// card; the card's answer, given to the first (whose card store holds it),
// starts the next turn, which the second streams too; a useChat turn
// started by a POST to the first is resumed through the second from its
// first chunk, the second finding it as the conversation's running turn
// on Redis; the second serves the chat's history.
func TestTwoInstancesOnRedis(t *testing.T) {
	addr := redisAddr(t)
	c1, c2, chat := fresh("c-a"), fresh("c-b"), fresh("chat-")
	a := serve(t, "-deltas", "8", "-pace", "5ms", "-conversation", c1, "-store", "redis", addr)
	b := serve(t, "-deltas", "8", "-pace", "5ms", "-conversation", c2, "-store", "redis", addr)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	first := turnOf(t, a.turns[0])
	state := followOn(ctx, t, b.on(a, a.turns[0]), nil)
	t1 := state.Turns[0]
	if t1.TurnID != first || t1.Status != chatprotocol.LifecycleCompleted || t1.LastSeq != 8+5 || len(t1.ToolCalls) != 1 ||
		string(t1.ToolCalls[0].Output) != `{"hits":2}` || len(state.OpenCards()) != 1 {
		t.Fatalf("the first turn through the second instance: %s %s, seq %d, %d tool calls, %d open cards",
			t1.TurnID, t1.Status, t1.LastSeq, len(t1.ToolCalls), len(state.OpenCards()))
	}
	status, _ := post(t, http.MethodPost, a.endpoints["answer"],
		`{"action":"submit","correlationId":"card-`+first+`","value":{"optionId":"yes"}}`)
	if status != http.StatusOK {
		t.Fatalf("the answer: %d", status)
	}
	next := a.nextTurn(ctx, t)
	second := turnOf(t, next)
	state = followOn(ctx, t, b.on(a, next), state)
	if t2, _ := state.Turn(second); second == first || t2.Text() != "Glad it helped. " || len(state.OpenCards()) != 0 {
		t.Fatalf("the second turn %s through the second instance: %q, %d open cards", second, t2.Text(), len(state.OpenCards()))
	}

	body := `{"id":"` + chat + `","messages":[{"id":"u1","role":"user","parts":[{"type":"text","text":"Hello?"}]}],"trigger":"submit-message"}`
	type read struct {
		status int
		lines  []string
		err    error
	}
	posted := make(chan read, 1)
	go func() {
		status, lines, err := request(http.MethodPost, a.endpoints["ui-message-stream"], body)
		posted <- read{status, lines, err}
	}()
	var resumed read
	for resumed.status != http.StatusOK { // 204 until the first instance has started the turn
		if ctx.Err() != nil {
			t.Fatal("the useChat turn never became active on the second instance")
		}
		resumed.status, resumed.lines = post(t, http.MethodGet, b.endpoints["ui-message-stream"]+"/"+chat+"/stream", "")
		if resumed.status != http.StatusOK {
			time.Sleep(5 * time.Millisecond)
		}
	}
	got := <-posted
	if got.err != nil {
		t.Fatal(got.err)
	}
	if got.status != http.StatusOK || len(got.lines) < 3 || strings.Join(got.lines, "\n") != strings.Join(resumed.lines, "\n") {
		t.Fatalf("the POST to the first instance (%d, %d chunks) and the resume through the second (%d chunks) differ",
			got.status, len(got.lines), len(resumed.lines))
	}
	var start struct{ Type, MessageID string }
	if err := json.Unmarshal([]byte(got.lines[0]), &start); err != nil || start.Type != "start" || start.MessageID == "" {
		t.Fatalf("first chunk %s (%v)", got.lines[0], err)
	}
	if got.lines[len(got.lines)-1] != "[DONE]" {
		t.Fatalf("last chunk %s", got.lines[len(got.lines)-1])
	}
	v1 := followOn(ctx, t, b.events(chat, start.MessageID), nil)
	if v1.Turns[0].Status != chatprotocol.LifecycleCompleted || v1.Turns[0].Text() != t1.Text() {
		t.Fatalf("the useChat turn's version-1 stream through the second instance: %s %q", v1.Turns[0].Status, v1.Turns[0].Text())
	}
	var messages []struct{ ID, Role string }
	for ctx.Err() == nil { // the first instance stores the turn once it ended
		status, raw := get(t, strings.Replace(b.endpoints["ui-history"], "{chatId}", chat, 1))
		if status != http.StatusOK {
			t.Fatalf("the chat's history through the second instance: %d %s", status, raw)
		}
		if err := json.Unmarshal(raw, &messages); err != nil {
			t.Fatal(err)
		}
		if len(messages) == 2 {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	if len(messages) != 2 || messages[0].Role != "user" || messages[1].Role != "assistant" || messages[1].ID != start.MessageID {
		t.Fatalf("the chat's history through the second instance: %+v", messages)
	}
}

// get reads url as the demo caller and returns the status and the body.
func get(t *testing.T, url string) (int, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer demo")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, b
}

// TestAGUIRunAcrossInstancesOnRedis: an AG-UI run posted to the first
// instance, its connection cut after a few events, is posted again with
// the same threadId and runId to the second (HttpAgent's reconnect, behind
// a load balancer): the second streams the same run whole, RUN_STARTED
// with the run id to RUN_FINISHED, its first events byte for byte those
// the first sent, and launches nothing (the conversation store on Redis
// maps the run id to its turn). Another run id on the thread while the
// turn runs is refused turn-running.
func TestAGUIRunAcrossInstancesOnRedis(t *testing.T) {
	addr := redisAddr(t)
	thread, run := fresh("thread-"), fresh("run-")
	a := serve(t, "-deltas", "40", "-pace", "20ms", "-conversation", fresh("c-a"), "-store", "redis", addr)
	b := serve(t, "-deltas", "40", "-pace", "20ms", "-conversation", fresh("c-b"), "-store", "redis", addr)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	input := func(runID string) string {
		return `{"threadId":"` + thread + `","runId":"` + runID + `","messages":[{"id":"u1","role":"user","content":"Hello?"}],"tools":[],"context":[],"state":{},"forwardedProps":{}}`
	}

	const cut = 4 // RUN_STARTED, MESSAGES_SNAPSHOT, STEP_STARTED, TEXT_MESSAGE_START
	sent := firstLines(ctx, t, a.endpoints["ag-ui"], input(run), cut)

	if status, code := refused(t, b.endpoints["ag-ui"], input(fresh("run-"))); status != http.StatusConflict || code != refusal.CodeTurnRunning {
		t.Fatalf("another run while the turn runs: %d %q", status, code)
	}

	status, replayed := post(t, http.MethodPost, b.endpoints["ag-ui"], input(run))
	if status != http.StatusOK || len(replayed) <= cut {
		t.Fatalf("the run posted again to the second instance: %d, %d events", status, len(replayed))
	}
	if strings.Join(replayed[:cut], "\n") != strings.Join(sent, "\n") {
		t.Fatalf("the replayed run's first events differ from those the first instance sent:\n%s\n---\n%s",
			strings.Join(replayed[:cut], "\n"), strings.Join(sent, "\n"))
	}
	type event struct{ Type, ThreadID, RunID string }
	var first, last event
	if err := json.Unmarshal([]byte(replayed[0]), &first); err != nil || first != (event{"RUN_STARTED", thread, run}) {
		t.Fatalf("the replayed run's first event %s (%v)", replayed[0], err)
	}
	if err := json.Unmarshal([]byte(replayed[len(replayed)-1]), &last); err != nil || last != (event{"RUN_FINISHED", thread, run}) {
		t.Fatalf("the replayed run's last event %s (%v)", replayed[len(replayed)-1], err)
	}
	deltas := 0
	for _, l := range replayed {
		var ev event
		if err := json.Unmarshal([]byte(l), &ev); err != nil {
			t.Fatalf("event %s: %v", l, err)
		}
		if ev.Type == "TEXT_MESSAGE_CONTENT" {
			deltas++
		}
	}
	if deltas != 40 {
		t.Fatalf("the replayed run has %d text deltas, want the turn's 40", deltas)
	}
	if status, again := post(t, http.MethodPost, a.endpoints["ag-ui"], input(run)); status != http.StatusOK ||
		strings.Join(again, "\n") != strings.Join(replayed, "\n") {
		t.Fatalf("the ended run posted again to the first instance: %d, %d events, want the %d the second sent", status, len(again), len(replayed))
	}
	var history []struct{ Role string }
	if status, raw := get(t, strings.Replace(b.endpoints["ui-history"], "{chatId}", thread, 1)); status != http.StatusOK ||
		json.Unmarshal(raw, &history) != nil || len(history) != 2 {
		t.Fatalf("the thread holds one turn: %d %s", status, raw)
	}
}

// firstLines posts body to url as the demo caller, reads the response's
// first n data lines and cuts the connection.
func firstLines(ctx context.Context, t *testing.T, url, body string, n int) []string {
	t.Helper()
	ctx, cut := context.WithCancel(ctx)
	defer cut()
	resp := postAsDemo(ctx, t, url, body)
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("the run: %d", resp.StatusCode)
	}
	var lines []string
	sc := bufio.NewScanner(resp.Body)
	for len(lines) < n && sc.Scan() {
		if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			lines = append(lines, d)
		}
	}
	if len(lines) != n {
		t.Fatalf("the run sent %d events before its end (%v), want at least %d", len(lines), sc.Err(), n)
	}
	return lines
}

// refused posts body to url as the demo caller and returns the status and
// the refusal body's code.
func refused(t *testing.T, url, body string) (int, refusal.Code) {
	t.Helper()
	resp := postAsDemo(context.Background(), t, url, body)
	defer resp.Body.Close()
	var b refusal.Body
	if err := json.NewDecoder(resp.Body).Decode(&b); err != nil {
		t.Fatalf("%d, not a refusal's body: %v", resp.StatusCode, err)
	}
	return resp.StatusCode, b.Code
}

// TestAGUIRunAcrossInstancesRealClient: @ag-ui/client's HttpAgent loses
// its run's connection to the first instance at the first text delta
// (abortRun; the client ends that run with a RUN_ERROR of its own), then
// runs the same run id against the second instance: the second run reads
// the whole run, RUN_STARTED to RUN_FINISHED, which the client's own
// checks of the 1.x schema and sequence accept, and the agent's messages
// hold the run once, its whole text (the run's MESSAGES_SNAPSHOT replaced
// the partial message of the cut run).
func TestAGUIRunAcrossInstancesRealClient(t *testing.T) {
	addr := redisAddr(t)
	thread, run := fresh("thread-"), fresh("run-")
	a := serve(t, "-deltas", "40", "-pace", "20ms", "-conversation", fresh("c-a"), "-store", "redis", addr)
	b := serve(t, "-deltas", "40", "-pace", "20ms", "-conversation", fresh("c-b"), "-store", "redis", addr)
	out := uiclients.Run(t, 30*time.Second, "agrepost.mjs", a.endpoints["ag-ui"], b.endpoints["ag-ui"], thread, run,
		`{"Authorization":"Bearer demo"}`)
	type event struct{ Type, RunID, Delta string }
	var got struct {
		First, Second struct {
			Events []event
			Error  *string
		}
		Messages []struct{ Role, Content string }
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	first, second := got.First.Events, got.Second.Events
	cut := slices.IndexFunc(first, func(ev event) bool { return ev.Type == "TEXT_MESSAGE_CONTENT" })
	if cut < 0 || slices.ContainsFunc(first, func(ev event) bool { return ev.Type == "RUN_FINISHED" }) {
		t.Fatalf("the first run was not cut at its first text delta: %+v, error %v", first, got.First.Error)
	}
	if got.Second.Error != nil || len(second) < 2 || second[0] != (event{Type: "RUN_STARTED", RunID: run}) ||
		second[len(second)-1].Type != "RUN_FINISHED" || second[len(second)-1].RunID != run {
		t.Fatalf("the run posted again to the second instance: error %v, events %+v", got.Second.Error, second)
	}
	want, deltas := "", 0
	for _, ev := range second {
		if ev.Type == "TEXT_MESSAGE_CONTENT" {
			want, deltas = want+ev.Delta, deltas+1
		}
	}
	if deltas != 40 {
		t.Fatalf("the second run read %d text deltas, want the turn's 40", deltas)
	}
	var roles []string
	assistant := ""
	for _, m := range got.Messages {
		roles = append(roles, m.Role)
		if m.Role == "assistant" {
			assistant += m.Content
		}
	}
	if strings.Join(roles, " ") != "user assistant assistant tool assistant" || assistant != want {
		t.Fatalf("the agent's messages %v, their text %q; want the run's once, %q", roles, assistant, want)
	}
}

// postAsDemo posts body to url as JSON from the demo caller.
func postAsDemo(ctx context.Context, t *testing.T, url, body string) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer demo")
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}
