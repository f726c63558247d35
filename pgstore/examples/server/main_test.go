package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	chatprotocol "github.com/Papercusp/chat-protocol-go"
	"github.com/Papercusp/chat-protocol-go/examples/server/demo"
	"github.com/Papercusp/chat-protocol-go/pgstore"
	"github.com/Papercusp/chat-protocol-go/pgstore/internal/pgtestdb"
	"github.com/Papercusp/chat-protocol-go/recovery"
	"github.com/Papercusp/chat-protocol-go/stream"
)

// printed is what a server printed: its lines up to ag-ui by name (the
// first line, the first turn's stream URL, under "first"), and the later
// "turn URL" lines.
type printed struct {
	lines map[string]string
	later chan string
}

// read reads a server's stdout.
func read(t *testing.T, out io.Reader) printed {
	t.Helper()
	p := printed{lines: map[string]string{}, later: make(chan string, 16)}
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		name, u, ok := strings.Cut(sc.Text(), " ")
		if !ok {
			name, u = "first", name
		}
		p.lines[name] = u
		if name == "ag-ui" {
			break
		}
	}
	require.NotEmpty(t, p.lines["ag-ui"], "the server printed its endpoints")
	go func() {
		for sc.Scan() {
			if u, ok := strings.CutPrefix(sc.Text(), "turn "); ok {
				p.later <- u
			}
		}
	}()
	return p
}

// next waits for the next "turn URL" line.
func (p printed) next(t *testing.T) string {
	t.Helper()
	select {
	case u := <-p.later:
		return u
	case <-time.After(30 * time.Second):
		require.FailNow(t, "no next turn was printed")
		return ""
	}
}

// serve runs the server in this process with args until the test ends.
func serve(t *testing.T, args ...string) (printed, func() error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	out, stdout := io.Pipe()
	done := make(chan error, 1)
	go func() {
		err := demo.Run(ctx, append([]string{"-addr", "127.0.0.1:0"}, args...), stdout, io.Discard, open)
		stdout.CloseWithError(err)
		done <- err
	}()
	p := read(t, out)
	stop := sync.OnceValue(func() error { cancel(); return <-done })
	t.Cleanup(func() { stop() })
	return p, stop
}

// follow follows a turn's stream to its end onto state (nil: a new one).
func follow(t *testing.T, url string, state *chatprotocol.ChatStateV1) *chatprotocol.ChatStateV1 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	state, err := stream.Follow(ctx, url, &stream.FollowOptions{State: state})
	require.NoError(t, err, url)
	return state
}

// turnOf is the turn id of a stream URL.
func turnOf(t *testing.T, streamURL string) string {
	t.Helper()
	m := regexp.MustCompile(`/turns/([^/?]+)/events`).FindStringSubmatch(streamURL)
	require.Len(t, m, 2, streamURL)
	return m[1]
}

// post sends a card answer as the demo caller and returns the status and
// the body's code ("" when none).
func post(t *testing.T, url, key, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer demo")
	req.Header.Set("Idempotency-Key", key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	var b struct{ Code string }
	_ = json.NewDecoder(resp.Body).Decode(&b)
	return resp.StatusCode, b.Code
}

// history reads the chat's UIMessage[] as the demo caller.
func history(t *testing.T, p printed, chat string) []struct {
	ID, Role string
	Parts    []map[string]any
} {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, strings.Replace(p.lines["ui-history"], "{chatId}", chat, 1), nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer demo")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	var msgs []struct {
		ID, Role string
		Parts    []map[string]any
	}
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&msgs))
	return msgs
}

// TestServerOnPostgreSQL: the example's chain on the PostgreSQL stores:
// the first turn's tool call and card, the answer starting the second
// turn, which closes the card; a second run takes up the chain
// conversation with a new turn id.
func TestServerOnPostgreSQL(t *testing.T) {
	dsn := pgtestdb.Fresh(t)
	p, stop := serve(t, "-deltas", "8", "-pace", "1ms", "-store", "postgres", dsn)
	state := follow(t, p.lines["first"], nil)
	t1 := state.Turns[0]
	assert.Equal(t, chatprotocol.LifecycleCompleted, t1.Status)
	assert.Equal(t, int64(8+5), t1.LastSeq)
	require.Len(t, t1.ToolCalls, 1)
	assert.JSONEq(t, `{"hits":2}`, string(t1.ToolCalls[0].Output))
	require.Len(t, state.OpenCards(), 1)

	status, _ := post(t, p.lines["answer"], "k-1", `{"action":"submit","correlationId":"card-`+t1.TurnID+`","value":{"optionId":"yes"}}`)
	require.Equal(t, http.StatusOK, status)
	second := p.next(t)
	state = follow(t, second, state)
	t2, _ := state.Turn(turnOf(t, second))
	assert.Equal(t, "Glad it helped. ", t2.Text())
	assert.Empty(t, state.OpenCards())
	require.NoError(t, stop())

	p, _ = serve(t, "-turns", "1", "-pace", "1ms", "-store", "postgres", dsn)
	third := turnOf(t, p.lines["first"])
	assert.NotContains(t, []string{t1.TurnID, t2.TurnID}, third, "turn ids never repeat")
	follow(t, p.lines["first"], nil)
	assert.Len(t, history(t, p, "c-1"), 6, "three turns of c-1")
}

// process is the example server as a process of its own.
type process struct {
	cmd *exec.Cmd
	printed
}

// launch starts the built server bin with args.
func launch(t *testing.T, bin string, args ...string) *process {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"-addr", "127.0.0.1:0"}, args...)...)
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	return &process{cmd: cmd, printed: read(t, out)}
}

// kill kills the process at once, as a crash does: no graceful shutdown.
func (p *process) kill(t *testing.T) {
	t.Helper()
	require.NoError(t, p.cmd.Process.Kill())
	_ = p.cmd.Wait()
}

// TestCapabilitiesSurviveARestart: the server on PostgreSQL declares
// connectionReplay, persistedHistory, persistedDecisions and
// completedToolCheckpoints, not interruptedTurnRecovery, and each
// declaration holds across a killed process: after a restart the first
// turns' frames replay, the history holds them, the card's answer is the
// one stored, the tool's completed result is in recovery; a turn the
// killed process left running is not resumed but ended failed.
func TestCapabilitiesSurviveARestart(t *testing.T) {
	dsn := pgtestdb.Fresh(t)
	bin := filepath.Join(t.TempDir(), "server")
	out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	require.NoError(t, err, "%s", out)
	args := []string{"-deltas", "4", "-pace", "1ms", "-store", "postgres", dsn}

	first := launch(t, bin, args...)
	assert.JSONEq(t, `{"connectionReplay":true,"persistedHistory":true,"persistedDecisions":true,"completedToolCheckpoints":true,"interruptedTurnRecovery":false}`,
		first.lines["capabilities"])
	state := follow(t, first.lines["first"], nil)
	turn1 := state.Turns[0]
	answer := `{"action":"submit","correlationId":"card-` + turn1.TurnID + `","value":{"optionId":"yes"}}`
	status, _ := post(t, first.lines["answer"], "k-1", answer)
	require.Equal(t, http.StatusOK, status)
	secondURL := first.next(t)
	state = follow(t, secondURL, state)
	second, _ := state.Turn(turnOf(t, secondURL))
	assert.Equal(t, chatprotocol.LifecycleCompleted, second.Status)
	first.kill(t)

	// A restart whose turn waits: it is running when the process is killed.
	waiting := launch(t, bin, append([]string{"-turns", "1", "-pace", "1h"}, args...)...)
	left := turnOf(t, waiting.lines["first"])
	waiting.kill(t)

	again := launch(t, bin, append([]string{"-turns", "1"}, args...)...)
	// connectionReplay, across the restart too: the frames are in the database.
	replayed := follow(t, strings.Replace(first.lines["first"], baseOf(first.lines["first"]), baseOf(again.lines["first"]), 1), nil)
	assert.Equal(t, turn1.Text(), replayed.Turns[0].Text())
	assert.Equal(t, turn1.LastSeq, replayed.Turns[0].LastSeq)

	// persistedHistory: the conversation's turns, in order.
	follow(t, again.lines["first"], nil)
	msgs := history(t, again.printed, "c-1")
	require.Len(t, msgs, 7, "the first two turns whole, the one left running (its user message), the new one")
	assert.Equal(t, turn1.TurnID, msgs[1].ID)
	assert.Equal(t, turn1.Text(), msgs[1].Parts[1]["text"])
	assert.Equal(t, map[string]any{"hits": float64(2)}, msgs[1].Parts[2]["output"], "the tool's result in the history")
	assert.Equal(t, "yes", msgs[2].Parts[0]["text"], "the answer started the second turn")
	assert.Equal(t, "Glad it helped. ", msgs[3].Parts[1]["text"])
	assert.Equal(t, left+"-user", msgs[4].ID)

	// interruptedTurnRecovery is not declared: the turn left running was
	// ended failed, not resumed.
	pool, err := pgxpool.New(t.Context(), dsn)
	require.NoError(t, err)
	defer pool.Close()
	convs, err := pgstore.NewConversationStore(pool, nil)
	require.NoError(t, err)
	_, leftTurn, err := convs.Turn(t.Context(), "c-1", left)
	require.NoError(t, err)
	red, err := leftTurn.Reduce()
	require.NoError(t, err)
	assert.Equal(t, "failed", red.Status)

	// persistedDecisions: the stored answer is the card's, the same again a
	// duplicate, another refused.
	answerURL := strings.Replace(first.lines["answer"], baseOf(first.lines["first"]), baseOf(again.lines["first"]), 1)
	status, code := post(t, answerURL, "k-1", answer)
	assert.Equal(t, http.StatusOK, status)
	assert.Equal(t, "duplicate-answer", code)
	status, code = post(t, answerURL, "k-2", strings.Replace(answer, "yes", "no", 1))
	assert.Equal(t, http.StatusConflict, status)
	assert.Equal(t, "already-answered", code)

	// completedToolCheckpoints: the first turn's call is completed in
	// recovery, with its result.
	rec, err := pgstore.NewRecoveryStore(pool, nil)
	require.NoError(t, err)
	tr, err := rec.LoadTurn(t.Context(), recovery.TurnRef{Conversation: "c-1", Turn: turn1.TurnID})
	require.NoError(t, err)
	var completed []string
	for _, e := range tr.Effects {
		if e.State == recovery.EffectCompleted {
			completed = append(completed, string(e.Result.Data))
		}
	}
	require.Len(t, completed, 1)
	assert.Contains(t, completed[0], `{"hits":2}`)
}

// baseOf is the scheme and authority of a URL.
func baseOf(u string) string {
	i := strings.Index(u, "/conversations/")
	return u[:i]
}
