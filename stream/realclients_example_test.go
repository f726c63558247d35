package stream_test

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net/http"
	"net/url"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/Papercusp/chat-protocol-go/internal/testkit/cutproxy"
	"github.com/Papercusp/chat-protocol-go/internal/testkit/realclient"
	"github.com/Papercusp/chat-protocol-go/sse"
)

// rcExampleDeltas is -deltas of the example server's run: its turn has
// this many deltas plus five frames (started, tool call and result, card,
// completed).
const rcExampleDeltas = 60

// rcStartExampleServer builds examples/server into a temporary directory,
// runs it on a free loopback port with -deltas and -pace, and returns the
// URL of the stream its first stdout line names. The process is stopped
// with SIGTERM (then SIGKILL) when t ends.
func rcStartExampleServer(t *testing.T, deltas int, pace time.Duration) string {
	t.Helper()
	goBin, err := exec.LookPath("go")
	require.NoError(t, err, "the go command builds the example server")
	bin := filepath.Join(t.TempDir(), "server")
	build := exec.Command(goBin, "build", "-o", bin, "./examples/server")
	build.Dir = ".."
	out, err := build.CombinedOutput()
	require.NoError(t, err, "go build ./examples/server:\n%s", out)

	cmd := exec.Command(bin, "-addr", "127.0.0.1:0", "-deltas", strconv.Itoa(deltas), "-pace", pace.String())
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	done := make(chan error, 1)
	first := make(chan string, 1)
	go func() {
		lines := bufio.NewScanner(stdout)
		if lines.Scan() {
			first <- lines.Text()
		}
		close(first)
		_, _ = io.Copy(io.Discard, stdout)
		done <- cmd.Wait()
	}()
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-done
			t.Errorf("the example server did not stop within 10s of SIGTERM")
		}
	})
	select {
	case u, ok := <-first:
		require.True(t, ok, "the example server printed no URL")
		return u
	case <-time.After(rcTimeout):
		t.Fatalf("the example server printed no URL in %s", rcTimeout)
		return ""
	}
}

// rcReadWhole reads a whole ended turn from u in one uncut connection and
// returns its frames as a client dispatches them, heartbeats left out.
func rcReadWhole(t *testing.T, u string) []realclient.Message {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), rcTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	require.NoError(t, err)
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	require.Equal(t, http.StatusOK, res.StatusCode)
	var got []realclient.Message
	d := sse.NewDecoder(res.Body, nil)
	for {
		ev, err := d.Next()
		if errors.Is(err, io.EOF) {
			return got
		}
		require.NoError(t, err)
		if ev.Comment || ev.Type == sse.EventHeartbeat {
			continue
		}
		got = append(got, realclient.Message{ID: ev.LastEventID, Event: ev.Type, Data: string(ev.Data)})
	}
}

// TestRealClientNodeFollowsTheExampleServer runs the npm eventsource client
// against the examples/server binary through the cutting proxy. The
// example streams from its start and asks for its default retry (2s), so
// here most cuts meet the turn's replay rather than its live part. The
// frames it must get are those a whole uncut read of the ended turn gives.
func TestRealClientNodeFollowsTheExampleServer(t *testing.T) {
	t.Parallel()
	node := realclient.Node(t, realclient.EventSourceScript)
	streamURL := rcStartExampleServer(t, rcExampleDeltas, 30*time.Millisecond)
	u, err := url.Parse(streamURL)
	require.NoError(t, err)
	cuts := realclient.Cuts(6, 3)
	proxy, err := cutproxy.New(u.Host, &cuts)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, proxy.Close()) })
	proxied := *u
	proxied.Host = proxy.Addr()

	ctx, cancel := context.WithTimeout(t.Context(), rcTimeout+10*time.Second)
	defer cancel()
	run := realclient.FollowWithNode(ctx, t, node, realclient.EventSourceScript, proxied.String(), rcTimeout)
	require.Equal(t, 0, run.Exit, "follow.mjs exits 0 on the 204 after the end; its error events: %q", run.Lines)

	whole := rcReadWhole(t, streamURL)
	require.Len(t, whole, rcExampleDeltas+5)
	for i, m := range whole {
		require.Equal(t, strconv.Itoa(i+1), m.ID, "the uncut read has every seq in order")
	}
	require.Equal(t, whole, run.Messages, "the client got every frame once, in seq order")
	realclient.RequireCutAndQuiet(t, proxy, true, rcQuiet, nil)
	s := proxy.Stats()
	t.Logf("frames %d, cuts %d (%d right after an id line, %d after a byte count), connections %d, took %s",
		len(run.Messages), s.Cuts, s.CutsAtIDLine, s.CutsAtBytes, s.Connections, run.Took.Round(time.Millisecond))
}
