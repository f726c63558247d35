package main

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	chatprotocol "github.com/Papercusp/chat-protocol-go"
	"github.com/Papercusp/chat-protocol-go/examples/server/demo"
	"github.com/Papercusp/chat-protocol-go/pgstore"
	"github.com/Papercusp/chat-protocol-go/replay"
	"github.com/Papercusp/chat-protocol-go/stream"
)

// dsnEnv points the test at a PostgreSQL server, as for the pgstore tests.
const dsnEnv = "CHATPROTOCOL_PG_DSN"

// freshDatabase creates a database of the test's own on the server of
// CHATPROTOCOL_PG_DSN, dropped when the test ends, and returns its DSN.
// Without the variable the test skips.
func freshDatabase(t *testing.T) string {
	t.Helper()
	admin := os.Getenv(dsnEnv)
	if admin == "" {
		t.Skipf("SKIPPED: %s is not set (run .ci/postgres start and export its DSN)", dsnEnv)
	}
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, admin)
	require.NoError(t, err, "%s is set but unusable", dsnEnv)
	var b [6]byte
	_, _ = rand.Read(b[:])
	name := "example_server_" + hex.EncodeToString(b[:])
	_, err = conn.Exec(ctx, "CREATE DATABASE "+name)
	require.NoError(t, err)
	t.Cleanup(func() {
		_, err := conn.Exec(context.Background(), "DROP DATABASE "+name+" WITH (FORCE)")
		assert.NoError(t, err)
		conn.Close(context.Background())
	})
	u, err := url.Parse(admin)
	require.NoError(t, err)
	u.Path = "/" + name
	return u.String()
}

// serve runs the server with args and returns the lines it printed up to
// the ag-ui endpoint, and a function that stops it and returns its error.
func serve(t *testing.T, args ...string) ([]string, func() error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	out, stdout := io.Pipe()
	done := make(chan error, 1)
	go func() {
		err := demo.Run(ctx, append([]string{"-addr", "127.0.0.1:0"}, args...), stdout, io.Discard, open)
		stdout.CloseWithError(err)
		done <- err
	}()
	var lines []string
	for sc := bufio.NewScanner(out); sc.Scan(); {
		lines = append(lines, sc.Text())
		if strings.HasPrefix(sc.Text(), "ag-ui ") {
			break
		}
	}
	go io.Copy(io.Discard, out)
	stop := sync.OnceValue(func() error { cancel(); return <-done })
	t.Cleanup(func() { stop() })
	return lines, stop
}

// TestServerOnPostgreSQL: the example's chain on the PostgreSQL stores:
// t-1's tool call and card, the answer starting t-2, which closes the card;
// the frames are in the database, and a second run refuses the same chain
// conversation.
func TestServerOnPostgreSQL(t *testing.T) {
	dsn := freshDatabase(t)
	lines, stop := serve(t, "-deltas", "8", "-pace", "1ms", "-store", "postgres", dsn)
	require.Len(t, lines, 6, "%q", lines)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	state, err := stream.Follow(ctx, lines[0], nil)
	require.NoError(t, err)
	t1 := state.Turns[0]
	assert.Equal(t, chatprotocol.LifecycleCompleted, t1.Status)
	assert.Equal(t, int64(8+5), t1.LastSeq)
	require.Len(t, t1.ToolCalls, 1)
	assert.JSONEq(t, `{"hits":2}`, string(t1.ToolCalls[0].Output))
	require.Len(t, state.OpenCards(), 1)

	answer, ok := strings.CutPrefix(lines[3], "answer ")
	require.True(t, ok, lines[3])
	req, err := http.NewRequest(http.MethodPost, answer, strings.NewReader(`{"action":"submit","correlationId":"card-t-1","value":{"optionId":"yes"}}`))
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer demo")
	req.Header.Set("Idempotency-Key", "k-1")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)

	state, err = stream.Follow(ctx, lines[1], &stream.FollowOptions{State: state})
	require.NoError(t, err)
	t2, _ := state.Turn("t-2")
	assert.Equal(t, "Glad it helped. ", t2.Text())
	assert.Empty(t, state.OpenCards())
	require.NoError(t, stop())

	pool, err := pgxpool.New(ctx, dsn)
	require.NoError(t, err)
	defer pool.Close()
	window, err := pgstore.NewWindow(pool, nil)
	require.NoError(t, err)
	defer window.Close()
	for turn, latest := range map[string]int64{"t-1": 13, "t-2": 4} {
		b, err := window.Bounds(ctx, replay.Key{ConversationID: "c-1", TurnID: turn})
		require.NoError(t, err)
		assert.Equal(t, replay.Bounds{Latest: latest, Ended: true}, b, "%s is in the database", turn)
	}
	err = demo.Run(ctx, []string{"-addr", "127.0.0.1:0", "-store", "postgres", dsn}, io.Discard, io.Discard, open)
	assert.Error(t, err, "c-1 has turns in the database")
	lines, _ = serve(t, "-store", "postgres", "-conversation", fmt.Sprintf("c-%d", 2), dsn)
	assert.Contains(t, lines[0], "/conversations/c-2/turns/t-1/events")
}
