package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	chatprotocol "github.com/Papercusp/chat-protocol-go"
	_ "github.com/Papercusp/chat-protocol-go/internal/testkit/golden" // accepts go test ./... -update
	"github.com/Papercusp/chat-protocol-go/stream"
)

// start runs the server with args until the test ends and returns the
// first turns URLs it printed, and a function that stops it and returns
// run's error.
func start(t *testing.T, turns int, args ...string) ([]string, func() error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	out, stdout := io.Pipe()
	done := make(chan error, 1)
	go func() {
		err := run(ctx, args, stdout, io.Discard)
		stdout.CloseWithError(err)
		done <- err
	}()
	lines := bufio.NewScanner(out)
	var urls []string
	for len(urls) < turns && lines.Scan() {
		urls = append(urls, lines.Text())
	}
	go io.Copy(io.Discard, out)
	stop := sync.OnceValue(func() error { cancel(); return <-done })
	t.Cleanup(func() { stop() })
	return urls, stop
}

func TestServerStreamsItsTurns(t *testing.T) {
	urls, stop := start(t, 2, "-addr", "127.0.0.1:0", "-deltas", "50", "-pace", "1ms", "-turns", "2")
	require.Len(t, urls, 2)
	assert.Regexp(t, `^http://127\.0\.0\.1:[1-9][0-9]*/conversations/c-1/turns/t-1/events\?access_token=demo$`, urls[0], "the real port, first line")
	assert.True(t, strings.HasSuffix(urls[1], "/turns/t-2/events?access_token=demo"))

	for i, url := range urls {
		var types []string
		state, err := stream.Follow(context.Background(), url, &stream.FollowOptions{OnEnvelope: func(env *chatprotocol.ChatEventEnvelope) error {
			types = append(types, env.Event.EventType())
			return nil
		}})
		require.NoError(t, err, url)
		turn := state.Turns[0]
		assert.Equal(t, chatprotocol.LifecycleCompleted, turn.Status)
		assert.Equal(t, int64(55), turn.LastSeq, "started, 50 deltas, tool call and result, card, completed")
		assert.Equal(t, 50, strings.Count(strings.Join(types, " "), "delta"))
		require.Len(t, turn.ToolCalls, 1)
		assert.Equal(t, chatprotocol.ToolCallStatus(chatprotocol.ToolResultOK), turn.ToolCalls[0].Status)
		require.Len(t, state.OpenCards(), 1)
		assert.Equal(t, "card-t-"+string(rune('1'+i)), state.OpenCards()[0].CorrelationID)
	}

	base := strings.TrimSuffix(urls[0], "/turns/t-1/events?access_token=demo")
	answer := func(auth, key, body string) (int, map[string]any) {
		req, err := http.NewRequest(http.MethodPost, base+"/cards/card-t-1/answer", strings.NewReader(body))
		require.NoError(t, err)
		req.Header.Set("Authorization", auth)
		req.Header.Set("Idempotency-Key", key)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		var out map[string]any
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&out))
		return resp.StatusCode, out
	}
	yes := `{"action":"submit","correlationId":"card-t-1","value":{"optionId":"yes"}}`
	status, body := answer("Bearer demo", "k-1", yes)
	assert.Equal(t, http.StatusOK, status)
	assert.Equal(t, "answered", body["status"])
	status, body = answer("Bearer demo", "k-1", yes)
	assert.Equal(t, http.StatusOK, status)
	assert.Equal(t, "duplicate-answer", body["code"])
	status, body = answer("Bearer demo", "k-2", `{"action":"submit","correlationId":"card-t-1","value":{"optionId":"no"}}`)
	assert.Equal(t, http.StatusConflict, status)
	assert.Equal(t, "already-answered", body["code"])
	status, _ = answer("", "k-3", yes)
	assert.Equal(t, http.StatusUnauthorized, status)

	bare := strings.TrimSuffix(urls[0], "?access_token=demo")
	for _, c := range []struct{ name, url, auth string }{
		{"an unknown turn", strings.Replace(urls[0], "t-1", "t-9", 1), ""},
		{"no credential", bare, ""},
		{"a wrong token", strings.Replace(urls[0], "access_token=demo", "access_token=mallory", 1), ""},
		{"a wrong bearer token", bare, "Bearer mallory"},
	} {
		req, err := http.NewRequest(http.MethodGet, c.url, nil)
		require.NoError(t, err)
		if c.auth != "" {
			req.Header.Set("Authorization", c.auth)
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		assert.Equal(t, http.StatusNotFound, resp.StatusCode, c.name)
	}
	req, err := http.NewRequest(http.MethodGet, bare, nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer demo")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode, "the demo caller by header")

	begun := time.Now()
	require.NoError(t, stop(), "graceful shutdown")
	assert.Less(t, time.Since(begun), 5*time.Second)
}

func TestServerShutsDownWhileStreaming(t *testing.T) {
	urls, stop := start(t, 1, "-addr", "127.0.0.1:0", "-pace", "1h") // the turn stalls after its first frame
	resp, err := http.Get(urls[0])
	require.NoError(t, err)
	defer resp.Body.Close()
	rd := chatprotocol.NewEnvelopeReader(resp.Body, nil)
	env, err := rd.Next()
	require.NoError(t, err)
	assert.Equal(t, int64(1), env.Seq)
	require.NoError(t, stop())
	_, err = rd.Next()
	assert.ErrorIs(t, err, io.ErrUnexpectedEOF, "the stream is aborted, so that the client resumes elsewhere")
}

func TestServerRefusesBadFlags(t *testing.T) {
	for _, args := range [][]string{{"-deltas", "1"}, {"-turns", "0"}, {"-pace", "-1s"}, {"extra"}, {"-nope"}} {
		assert.Error(t, run(context.Background(), args, io.Discard, io.Discard), "%q", args)
	}
}
