// Package newcomertest drives the newcomer's conversation service
// (examples/newcomer) over HTTP, whatever its stores: a test kit shared by
// the service on memory and on PostgreSQL.
package newcomertest

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Papercusp/chat-protocol-go/conversation"
)

// client is the service at base, as one person signed in by token.
type client struct {
	t     *testing.T
	base  string
	token string
}

// answer is a response: its status, headers (Date aside) and body.
type answer struct {
	status int
	header http.Header
	body   string
}

func (c client) do(method, path, body string, header ...string) answer {
	c.t.Helper()
	req, err := http.NewRequest(method, c.base+path, strings.NewReader(body))
	require.NoError(c.t, err)
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := (&http.Client{Timeout: 30 * time.Second}).Do(req)
	require.NoError(c.t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(c.t, err)
	resp.Header.Del("Date")
	return answer{resp.StatusCode, resp.Header, string(b)}
}

// chunk is a UI message stream chunk, with the members read here.
type chunk struct {
	Type, MessageID, Delta, ToolName string
	Output, Data                     json.RawMessage
}

// chunks reads a UI message stream's chunks, [DONE] left out.
func chunks(t *testing.T, body string) []chunk {
	t.Helper()
	var out []chunk
	for sc := bufio.NewScanner(strings.NewReader(body)); sc.Scan(); {
		d, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok || d == "[DONE]" {
			continue
		}
		var c chunk
		require.NoError(t, json.Unmarshal([]byte(d), &c), d)
		out = append(out, c)
	}
	return out
}

// send posts the last message only, as useChat's prepareSendMessagesRequest
// recipe does, and returns the turn's stream.
func (c client) send(chat, text string) answer {
	c.t.Helper()
	msg, _ := json.Marshal(map[string]any{"id": "m-" + text, "role": "user", "parts": []any{map[string]string{"type": "text", "text": text}}})
	return c.do(http.MethodPost, "/api/chat", `{"id":"`+chat+`","message":`+string(msg)+`}`)
}

// wait posts the message "wait" to chat from a goroutine of its own,
// whose stream a cancel ends and a shutdown aborts, and returns once the
// turn started (the stream's headers came); the channel gets the stream's
// read error (nil when it ended).
func (c client) wait(t *testing.T, chat string) <-chan error {
	t.Helper()
	done, started := make(chan error, 1), make(chan int, 1)
	go func() {
		req, err := http.NewRequest(http.MethodPost, c.base+"/api/chat", strings.NewReader(
			`{"id":"`+chat+`","message":{"id":"w","role":"user","parts":[{"type":"text","text":"wait"}]}}`))
		if err != nil {
			done <- err
			return
		}
		req.Header.Set("Authorization", "Bearer "+c.token)
		req.Header.Set("Content-Type", "application/json")
		resp, err := (&http.Client{Timeout: 30 * time.Second}).Do(req)
		if err != nil {
			started <- 0
			done <- err
			return
		}
		started <- resp.StatusCode
		_, err = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		done <- err
	}()
	require.Equal(t, http.StatusOK, <-started, "the turn started")
	return done
}

// history reads a chat's UIMessage[] ids and texts.
func (c client) history(chat string) (answer, []struct {
	ID, Role string
	Parts    []map[string]any
}) {
	c.t.Helper()
	a := c.do(http.MethodGet, "/api/chat/"+chat+"/messages", "")
	var msgs []struct {
		ID, Role string
		Parts    []map[string]any
	}
	if a.status == http.StatusOK {
		require.NoError(c.t, json.Unmarshal([]byte(a.body), &msgs), a.body)
	}
	return a, msgs
}

// Drive runs the service serve serves on s and drives it over HTTP: a
// scripted turn with its tool and card, the answer starting the next turn,
// the history and who may read it, a cancel, then a graceful shutdown
// that interrupts the running turn. serve returns once the service shut
// down.
func Drive(t *testing.T, s conversation.Stores, serve func(ctx context.Context, ln net.Listener) error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	ctx, shutdown := context.WithCancel(context.Background())
	defer shutdown()
	served := make(chan error, 1)
	go func() {
		err := serve(ctx, ln)
		ln.Close() // a service that did not start answers no request
		served <- err
	}()
	base := "http://" + ln.Addr().String()
	alice, bob, nobody := client{t, base, "alice-token"}, client{t, base, "bob-token"}, client{t, base, ""}

	// A turn: text, the tool's call and result, the card.
	first := alice.send("chat-1", "Refunds?")
	require.Equal(t, http.StatusOK, first.status, first.body)
	cs := chunks(t, first.body)
	turn1 := cs[0].MessageID
	require.Equal(t, "start", cs[0].Type)
	var text string
	var tool, card chunk
	for _, c := range cs {
		switch c.Type {
		case "text-delta":
			text += c.Delta
		case "tool-output-available":
			tool = c
		case "data-card":
			card = c
		}
	}
	assert.Equal(t, "Refunds are accepted within 30 days.", text)
	assert.JSONEq(t, `{"hits":2}`, string(tool.Output))
	assert.Contains(t, string(card.Data), `"status":"open"`)

	// Its answer starts the next turn, which closes the card and replies.
	ans := alice.do(http.MethodPost, "/api/chat", `{"id":"chat-1","messages":[],"trigger":"submit-message","answer":{"submissionId":"s-1",`+
		`"response":{"action":"submit","correlationId":"card-`+turn1+`","value":{"optionId":"yes"}}}}`)
	require.Equal(t, http.StatusOK, ans.status, ans.body)
	cs = chunks(t, ans.body)
	turn2 := cs[0].MessageID
	assert.NotEqual(t, turn1, turn2)
	var closed string
	for _, c := range cs {
		if c.Type == "data-card" {
			closed = string(c.Data)
		}
	}
	assert.Contains(t, closed, `"status":"closed"`)

	// The history, its owner's only.
	a, msgs := alice.history("chat-1")
	require.Equal(t, http.StatusOK, a.status, a.body)
	require.Len(t, msgs, 4)
	assert.Equal(t, []string{turn1 + "-user", turn1, turn2 + "-user", turn2}, []string{msgs[0].ID, msgs[1].ID, msgs[2].ID, msgs[3].ID})
	assert.Equal(t, "Refunds?", msgs[0].Parts[0]["text"])
	assert.Equal(t, "Thanks for your answer.", msgs[3].Parts[len(msgs[3].Parts)-1]["text"])
	unknown, _ := alice.history("chat-9")
	assert.Equal(t, http.StatusNotFound, unknown.status)
	for _, c := range []client{bob, nobody} {
		got, _ := c.history("chat-1")
		assert.Equal(t, unknown, got, "%q gets what an unknown chat gets", c.token)
	}

	// A cancel: bob's is refused as for an unknown turn, alice's ends the turn.
	waiting := alice.wait(t, "chat-2")
	turn3 := running(t, alice, "chat-2")
	cancelPath := "/conversations/chat-2/turns/" + turn3 + "/cancel"
	assert.Equal(t, http.StatusNotFound, bob.do(http.MethodPost, cancelPath, "", "X-Requested-With", "test").status)
	assert.Equal(t, http.StatusAccepted, alice.do(http.MethodPost, cancelPath, "", "X-Requested-With", "test").status)
	select {
	case err := <-waiting:
		require.NoError(t, err, "the cancelled turn's stream ends")
	case <-time.After(30 * time.Second):
		require.FailNow(t, "the cancelled turn's stream did not end")
	}
	assert.Equal(t, "cancelled", stored(t, s, "chat-2", 0))

	// A graceful shutdown interrupts the running turn and returns.
	waiting = alice.wait(t, "chat-3")
	running(t, alice, "chat-3")
	shutdown()
	select {
	case err := <-served:
		require.NoError(t, err)
	case <-time.After(30 * time.Second):
		require.FailNow(t, "the service did not shut down")
	}
	assert.Equal(t, "interrupted", stored(t, s, "chat-3", 0))
	assert.Error(t, <-waiting, "the stream was aborted, for its client to resume elsewhere")
}

// running waits until chat has a running turn, through its history, and
// returns its id.
func running(t *testing.T, c client, chat string) string {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if a, msgs := c.history(chat); a.status == http.StatusOK && len(msgs) == 1 {
			return strings.TrimSuffix(msgs[0].ID, "-user")
		}
		time.Sleep(5 * time.Millisecond)
	}
	require.FailNow(t, "no running turn", chat)
	return ""
}

// stored is the status of the i-th turn of chat as the conversation store
// keeps it once the turn ended, waiting for the host to store it.
func stored(t *testing.T, s conversation.Stores, chat string, i int) string {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		h, err := s.Conversations.History(context.Background(), chat)
		require.NoError(t, err)
		if h.Turns[i].Ended() {
			r, err := h.Turns[i].Reduce()
			require.NoError(t, err)
			return r.Status
		}
		time.Sleep(5 * time.Millisecond)
	}
	require.FailNow(t, "the turn was not stored", chat)
	return ""
}
