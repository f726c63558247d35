package main

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	chatprotocol "github.com/Papercusp/chat-protocol-go"
	"github.com/Papercusp/chat-protocol-go/internal/testkit/cutproxy"
	"github.com/Papercusp/chat-protocol-go/refusal"
	"github.com/Papercusp/chat-protocol-go/replay"
	"github.com/Papercusp/chat-protocol-go/serve"
	"github.com/Papercusp/chat-protocol-go/sse"
	turnstream "github.com/Papercusp/chat-protocol-go/stream"
)

// followTurn serves a 40-delta turn of c-1/t-1 behind a proxy that cuts
// the first connections, and returns the stream's URL through the proxy
// and the same turn as an SSE file for decode.
func followTurn(t *testing.T) (url, sseText string, proxy *cutproxy.Proxy) {
	t.Helper()
	key := replay.Key{ConversationID: "c-1", TurnID: "t-1"}
	w := replay.NewMemory(nil)
	var file []byte
	for seq := 1; seq <= 42; seq++ {
		text := v1(seq, delta("word "+strconv.Itoa(seq)+" "))
		switch seq {
		case 1:
			text = v1(seq, `{"type":"lifecycle","status":"started"}`)
		case 42:
			text = v1(seq, `{"type":"lifecycle","status":"completed"}`)
		}
		file = append(file, text...)
		_, data, _ := strings.Cut(strings.TrimSpace(text), "data: ")
		env, err := chatprotocol.ParseEnvelope([]byte(data))
		require.NoError(t, err)
		_, err = w.Append(context.Background(), key, &env)
		require.NoError(t, err)
	}
	h, err := turnstream.NewHandler(w, &turnstream.HandlerOptions{Authorize: func(r *http.Request, k replay.Key) error {
		if k != key || r.Header.Get("Authorization") != "Bearer t0k" {
			return refusal.ErrUnauthorized
		}
		return nil
	}, Options: serve.Options{Retry: time.Millisecond}})
	require.NoError(t, err)
	mux := http.NewServeMux()
	mux.Handle("GET /conversations/{conversation}/turns/{turn}/events", h)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	p, err := cutproxy.New(srv.Listener.Addr().String(), &cutproxy.Options{Arm: []byte(sse.ContentType),
		Plan: cutproxy.Fixed(cutproxy.Cut{IDLine: 5}, cutproxy.Cut{Bytes: 700}, cutproxy.Cut{IDLine: 12})})
	require.NoError(t, err)
	t.Cleanup(func() { p.Close() })
	return "http://" + p.Addr() + "/conversations/c-1/turns/t-1/events", string(file), p
}

func TestFollowCommandPrintsWhatDecodePrints(t *testing.T) {
	url, file, p := followTurn(t)
	_, want, _ := runCmd([]string{"decode"}, file)
	code, stdout, stderr := runCmd([]string{"follow", "--header", "Authorization: Bearer t0k", url}, "")
	assert.Equal(t, exitOK, code, stderr)
	assert.Empty(t, stderr)
	assert.Equal(t, want, stdout, "every envelope once, across three cuts")
	assert.Equal(t, 42, strings.Count(stdout, "\n"))
	assert.Equal(t, 3, p.Stats().Cuts)

	_, wantState, _ := runCmd([]string{"decode", "--state"}, file)
	code, stdout, stderr = runCmd([]string{"follow", url, "--state", "--header", "Authorization: Bearer t0k"}, "")
	assert.Equal(t, exitOK, code, stderr)
	assert.Equal(t, wantState, stdout)
}

func TestFollowCommandReportsRefusals(t *testing.T) {
	url, _, _ := followTurn(t)
	code, stdout, stderr := runCmd([]string{"follow", url}, "") // no credentials
	assert.Equal(t, exitFail, code)
	assert.Empty(t, stdout)
	assert.Regexp(t, `^chatwire follow: http://[^ ]+: turn-not-found: 404 [^\n]+\n$`, stderr)
}

func TestFollowCommandUsage(t *testing.T) {
	for _, args := range [][]string{{"follow"}, {"follow", "-"}, {"follow", "ftp://x/y"}, {"follow", "http://a/b", "http://c/d"},
		{"follow", "--header", "nocolon", "http://a/b"}, {"follow", "--max-frame", "0", "http://a/b"}, {"follow", "--max-attempts", "-1", "http://a/b"},
		{"follow", "--registered", "thinking", "http://a/b"}, {"follow", "--registered", "reasoning,", "http://a/b"}} {
		code, stdout, stderr := runCmd(args, "")
		assert.Equal(t, exitUsage, code, "%q", args)
		assert.Empty(t, stdout)
		assert.Contains(t, stderr, "usage: chatwire follow", "%q", args)
	}
	var out bytes.Buffer
	assert.Equal(t, exitOK, run([]string{"follow", "--help"}, nil, &out, &out))
	assert.Contains(t, out.String(), "Last-Event-ID")
}

func TestFollowCommandGivesUp(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "down", http.StatusServiceUnavailable)
	}))
	defer srv.Close()
	code, _, stderr := runCmd([]string{"follow", "--max-attempts", "1", srv.URL}, "")
	assert.Equal(t, exitFail, code)
	assert.Contains(t, stderr, "giving up after 1 attempts")
}

// TestFollowCommandRegistered: a turn carrying reasoning and a source is
// refused without --registered (unsupported-event) and printed whole with
// it (docs/contract.md section 6.5).
func TestFollowCommandRegistered(t *testing.T) {
	key := replay.Key{ConversationID: "c-1", TurnID: "t-1"}
	w := replay.NewMemory(nil)
	reg, err := chatprotocol.NewRegistry(nil, chatprotocol.WithReasoning(), chatprotocol.WithSources())
	require.NoError(t, err)
	parser := chatprotocol.NewEnvelopeParser(&chatprotocol.ParserOptions{Registry: reg})
	for seq, ev := range []string{`{"type":"lifecycle","status":"started"}`, `{"type":"reasoning","text":"hmm"}`,
		`{"type":"source","url":"https://example.com/w"}`, delta("answer"), `{"type":"lifecycle","status":"completed"}`} {
		_, data, _ := strings.Cut(strings.TrimSpace(v1(seq+1, ev)), "data: ")
		env, err := parser.Parse([]byte(data))
		require.NoError(t, err)
		_, err = w.Append(context.Background(), key, &env)
		require.NoError(t, err)
	}
	h, err := turnstream.NewHandler(w, &turnstream.HandlerOptions{Authorize: func(*http.Request, replay.Key) error { return nil }})
	require.NoError(t, err)
	mux := http.NewServeMux()
	mux.Handle("GET /conversations/{conversation}/turns/{turn}/events", h)
	srv := httptest.NewServer(mux)
	defer srv.Close()
	url := srv.URL + "/conversations/c-1/turns/t-1/events"

	code, _, stderr := runCmd([]string{"follow", "--max-attempts", "1", url}, "")
	assert.Equal(t, exitFail, code)
	assert.Contains(t, stderr, ": unsupported-event at /event/type")
	code, stdout, stderr := runCmd([]string{"follow", "--registered", "reasoning,source", url}, "")
	assert.Equal(t, exitOK, code, stderr)
	assert.Equal(t, 5, strings.Count(stdout, "\n"))
	assert.Contains(t, stdout, `"event":{"type":"reasoning","text":"hmm"}`)
	assert.Contains(t, stdout, `"event":{"type":"source","url":"https://example.com/w"}`)
}
