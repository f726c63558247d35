package pgstore

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	chatprotocol "github.com/Papercusp/chat-protocol-go"
	"github.com/Papercusp/chat-protocol-go/internal/testkit/cutproxy"
	"github.com/Papercusp/chat-protocol-go/pgstore/internal/turnscript"
	"github.com/Papercusp/chat-protocol-go/replay"
	"github.com/Papercusp/chat-protocol-go/stream"
)

var flagInstanceFrames = flag.Int("pgstore.window.frames", 300, "frames of the scripted turn of TestWindowAcrossInstances")

// realClientsEnv, when set, makes the npm eventsource follower of
// TestWindowAcrossInstances required (CI sets it after .ci/clients).
const realClientsEnv = "CHATPROTOCOL_REAL_CLIENTS"

// privatePG is a PostgreSQL server of one test's own, started by
// .ci/postgres with fsync on, which the test may kill and restart without
// disturbing the other tests.
type privatePG struct {
	script, state, dsn string
}

func startPrivatePG(t *testing.T) *privatePG {
	t.Helper()
	script, err := filepath.Abs(filepath.Join("..", ".ci", "postgres"))
	require.NoError(t, err)
	if _, err := os.Stat(script); err != nil {
		t.Fatalf(".ci/postgres is missing: %v", err)
	}
	// Not t.TempDir: the server runs as an unprivileged user when the test
	// runs as root, and must traverse the state directory's parents.
	pg := &privatePG{script: script, state: filepath.Join(os.TempDir(), "pgstore-window-pg-"+randomSuffix())}
	out, err := pg.run("start")
	require.NoError(t, err, "starting a private server: %s", out)
	pg.dsn = strings.TrimSpace(lastLine(out))
	t.Cleanup(func() { _, _ = pg.run("stop") })
	return pg
}

func (pg *privatePG) run(verb string) (string, error) {
	cmd := exec.Command("bash", pg.script, verb)
	cmd.Env = append(os.Environ(), "CHATPROTOCOL_PG_STATE="+pg.state, "CHATPROTOCOL_PG_FSYNC=on")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.String(), err
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}

// serverProc is one streamserver process.
type serverProc struct {
	cmd    *exec.Cmd
	base   string // http://127.0.0.1:port
	addr   string
	stderr lockedBuffer
	done   chan struct{}

	mu       sync.Mutex
	acked    map[replay.Key][]int64 // seqs whose Append returned success
	stored   map[replay.Key][]int64 // acked, or stored after a lost answer
	produced map[replay.Key]chan struct{}
}

// startServer starts bin serving on addr ("127.0.0.1:0" for any port),
// with extra flags, producing the turns of produce when asked.
func startServer(t testing.TB, bin, addr, dsn, listenAddr string, extra []string, produce ...replay.Key) *serverProc {
	t.Helper()
	s := &serverProc{acked: map[replay.Key][]int64{}, stored: map[replay.Key][]int64{}, produced: map[replay.Key]chan struct{}{}, done: make(chan struct{})}
	for _, k := range produce {
		s.produced[k] = make(chan struct{})
	}
	s.cmd = exec.Command(bin, append([]string{"-addr", addr, "-dsn", dsn, "-listen-addr", listenAddr}, extra...)...)
	s.cmd.Stderr = &s.stderr
	stdout, err := s.cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, s.cmd.Start())
	t.Cleanup(func() {
		_ = s.cmd.Process.Kill()
		<-s.done
	})
	first := make(chan string, 1)
	go func() {
		defer close(s.done)
		sc := bufio.NewScanner(stdout)
		if sc.Scan() {
			first <- sc.Text()
		}
		close(first)
		for sc.Scan() {
			s.note(sc.Text())
		}
		_ = s.cmd.Wait()
	}()
	select {
	case base, ok := <-first:
		require.True(t, ok, "streamserver printed no URL; stderr: %s", s.stderr.String())
		s.base = base
		s.addr = strings.TrimPrefix(base, "http://")
	case <-time.After(30 * time.Second):
		t.Fatalf("streamserver did not start; stderr: %s", s.stderr.String())
	}
	return s
}

func (s *serverProc) note(line string) {
	f := strings.Fields(line)
	if len(f) != 4 {
		return
	}
	key := replay.Key{ConversationID: f[1], TurnID: f[2]}
	n, _ := strconv.ParseInt(f[3], 10, 64)
	s.mu.Lock()
	defer s.mu.Unlock()
	switch f[0] {
	case "acked":
		s.acked[key] = append(s.acked[key], n)
		s.stored[key] = append(s.stored[key], n)
	case "recovered":
		s.stored[key] = append(s.stored[key], n)
	case "produced":
		if ch := s.produced[key]; ch != nil {
			close(ch)
		}
	}
}

func (s *serverProc) ackedCount(key replay.Key) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.acked[key])
}

// lockedBuffer is a bytes.Buffer a process writes while the test reads.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// kill SIGKILLs the process and waits for it to be gone.
func (s *serverProc) kill() {
	_ = s.cmd.Process.Signal(syscall.SIGKILL)
	<-s.done
}

// buildStreamServer builds internal/streamserver into a temporary
// directory.
func buildStreamServer(t testing.TB) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "streamserver")
	out, err := exec.Command("go", "build", "-o", bin, "./internal/streamserver").CombinedOutput()
	require.NoError(t, err, "go build ./internal/streamserver: %s", out)
	return bin
}

// seenFrame is one frame a follower received.
type seenFrame struct {
	ID   string `json:"id"`
	Type string `json:"event"`
	Data string `json:"data"`
}

// requireExactly checks that a follower received want, frame seq i+1
// being want[i]: every frame once, in order, byte for byte.
func requireExactly(t *testing.T, who string, got []seenFrame, want [][]byte) {
	t.Helper()
	require.Len(t, got, len(want), "%s: every frame exactly once", who)
	for i, f := range got {
		require.Equal(t, strconv.Itoa(i+1), f.ID, "%s: frame %d in order, no gap, no duplicate", who, i)
		require.Equal(t, string(want[i]), f.Data, "%s: frame %d as sent (and of its own conversation)", who, i+1)
	}
}

// rawFollow follows url with a minimal SSE client of its own that resumes
// with Last-Event-ID and records every frame it is sent, duplicates
// included, until the server answers 204. It returns the frames and the
// number of requests.
func rawFollow(ctx context.Context, url string) ([]seenFrame, int, error) {
	var frames []seenFrame
	cursor := ""
	client := &http.Client{}
	for requests := 1; ; requests++ {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return frames, requests, err
		}
		req.Header.Set("Accept", "text/event-stream")
		if cursor != "" {
			req.Header.Set("Last-Event-ID", cursor)
		}
		resp, err := client.Do(req)
		if err == nil {
			if resp.StatusCode == http.StatusNoContent {
				resp.Body.Close()
				return frames, requests, nil
			}
			if resp.StatusCode == http.StatusOK {
				var f seenFrame
				sc := bufio.NewScanner(resp.Body)
				sc.Buffer(nil, 1<<20)
				for sc.Scan() {
					line := sc.Text()
					switch {
					case line == "":
						if f.ID != "" {
							frames = append(frames, f)
							cursor = f.ID
						}
						f = seenFrame{}
					case strings.HasPrefix(line, "id: "):
						f.ID = line[4:]
					case strings.HasPrefix(line, "event: "):
						f.Type = line[7:]
					case strings.HasPrefix(line, "data: "):
						f.Data = line[6:]
					}
				}
			} else if resp.StatusCode < 500 {
				resp.Body.Close()
				return frames, requests, fmt.Errorf("status %d", resp.StatusCode)
			}
			resp.Body.Close()
		}
		if ctx.Err() != nil {
			return frames, requests, ctx.Err()
		}
		select {
		case <-ctx.Done():
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// nodeFollow follows url with the npm eventsource package
// (internal/testkit/eventsource/follow.mjs); ok is false, and t skipped or
// failed, when the client is not installed.
func nodeFollow(ctx context.Context, t *testing.T, url string) (frames []seenFrame, stderr string, err error) {
	dir, _ := filepath.Abs(filepath.Join("..", "internal", "testkit", "eventsource"))
	cmd := exec.CommandContext(ctx, "node", "follow.mjs", "--url", url, "--timeout-ms", "90000")
	cmd.Dir = dir
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err = cmd.Run()
	for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		if line == "" {
			continue
		}
		var f seenFrame
		if jerr := json.Unmarshal([]byte(line), &f); jerr != nil {
			return frames, errOut.String(), jerr
		}
		frames = append(frames, f)
	}
	return frames, errOut.String(), err
}

// nodeAvailable reports whether node and the npm eventsource package are
// installed; without them the npm follower is skipped, unless
// realClientsEnv is set, which fails the test.
func nodeAvailable(t *testing.T) bool {
	_, err := exec.LookPath("node")
	if err == nil {
		_, err = os.Stat(filepath.Join("..", "internal", "testkit", "eventsource", "node_modules", "eventsource", "package.json"))
	}
	if err != nil {
		if os.Getenv(realClientsEnv) != "" {
			t.Fatalf("the npm eventsource follower is missing (%v) and %s is set: run `bash .ci/clients`", err, realClientsEnv)
		}
		t.Logf("SKIPPING the npm eventsource follower: %v (run `bash .ci/clients`)", err)
		return false
	}
	return true
}

// TestWindowAcrossInstances runs three streamserver processes on one
// PostgreSQL window (a server of the test's own, fsync on): the producer
// on the first, followers reconnecting through a proxy that cuts their
// connections and sends each reconnect to the next server in turn. Mid
// stream, the second server is SIGKILLed (and started again), the
// listeners' connections are cut on the wire, and PostgreSQL itself is
// SIGKILLed and restarted. Every follower must end with every frame of
// its turn exactly once, in order, byte for byte, none of the other
// conversation producing the same turn id at the same time; every frame
// whose append returned success must be stored after the restart.
func TestWindowAcrossInstances(t *testing.T) {
	needDB(t)
	if testing.Short() {
		t.Skip("SKIPPED in -short: kills servers and PostgreSQL")
	}
	pg := startPrivatePG(t)
	ctx, cancel := context.WithTimeout(t.Context(), 120*time.Second)
	defer cancel()
	pool, err := pgxpool.New(ctx, pg.dsn)
	require.NoError(t, err)
	defer pool.Close()
	require.NoError(t, Migrate(ctx, pool))

	pgCfg, err := pgx.ParseConfig(pg.dsn)
	require.NoError(t, err)
	lis := startCutProxy(t, nil, net.JoinHostPort(pgCfg.Host, strconv.Itoa(int(pgCfg.Port))))

	n := int64(*flagInstanceFrames)
	keyA := replay.Key{ConversationID: "c-a-" + randomSuffix(), TurnID: "t-shared"}
	keyB := replay.Key{ConversationID: "c-b-" + randomSuffix(), TurnID: "t-shared"}
	wantA, err := turnscript.Frames(keyA, n)
	require.NoError(t, err)
	wantB, err := turnscript.Frames(keyB, n)
	require.NoError(t, err)

	bin := buildStreamServer(t)
	var servers [3]*serverProc
	for i := range servers {
		servers[i] = startServer(t, bin, "127.0.0.1:0", pg.dsn, lis.Addr(), nil, keyA, keyB)
	}
	front := startCutProxy(t, &cutproxy.Options{Plan: cutproxy.Random{MinBytes: 300, MaxBytes: 6000}.Plan(), Seed: uint64(time.Now().UnixNano())},
		servers[0].addr, servers[1].addr, servers[2].addr)
	streamURL := func(k replay.Key) string {
		return "http://" + front.Addr() + "/conversations/" + k.ConversationID + "/turns/" + k.TurnID + "/events"
	}

	// The followers start before the turn does: they wait for seq 1.
	type result struct {
		who      string
		frames   []seenFrame
		want     [][]byte
		requests int
		err      error
	}
	results := make(chan result, 8)
	var followers sync.WaitGroup
	goFollow := func(who string, key replay.Key, want [][]byte) {
		followers.Go(func() {
			var got []seenFrame
			_, err := stream.Follow(ctx, streamURL(key), &stream.FollowOptions{
				Retry: 50 * time.Millisecond, MaxBackoff: 300 * time.Millisecond,
				OnEnvelope: func(env *chatprotocol.ChatEventEnvelope) error {
					data, err := env.AppendJSON(nil)
					got = append(got, seenFrame{ID: strconv.FormatInt(env.Seq, 10), Type: env.Event.EventType(), Data: string(data)})
					return err
				},
			})
			results <- result{who: who, frames: got, want: want, err: err}
		})
	}
	goFollow("stream.Follow A1", keyA, wantA)
	goFollow("stream.Follow A2", keyA, wantA)
	goFollow("stream.Follow B", keyB, wantB)
	followers.Go(func() {
		frames, requests, err := rawFollow(ctx, streamURL(keyA))
		results <- result{who: "raw SSE A", frames: frames, want: wantA, requests: requests, err: err}
	})
	followerCount := 4
	if nodeAvailable(t) {
		followerCount++
		followers.Go(func() {
			frames, stderr, err := nodeFollow(ctx, t, streamURL(keyA))
			if err != nil {
				err = fmt.Errorf("%w; stderr: %s", err, stderr)
			}
			results <- result{who: "npm eventsource A", frames: frames, want: wantA, err: err}
		})
	}

	producer := servers[0]
	pace := 15 * time.Millisecond
	for _, k := range []replay.Key{keyA, keyB} {
		resp, err := http.Post(producer.base+"/conversations/"+k.ConversationID+"/turns/"+k.TurnID+"/produce?frames="+strconv.FormatInt(n, 10)+"&pace="+pace.String(), "", nil)
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, http.StatusAccepted, resp.StatusCode)
	}

	// The failures, at fractions of the turn.
	at := func(fraction float64) {
		for producer.ackedCount(keyA) < int(float64(n)*fraction) {
			select {
			case <-ctx.Done():
				t.Fatalf("the producer stalled at %d frames", producer.ackedCount(keyA))
			case <-time.After(5 * time.Millisecond):
			}
		}
	}
	var serverKills, pgKills, listenerCuts int
	at(0.2)
	addr := servers[1].addr
	servers[1].kill()
	serverKills++
	time.Sleep(300 * time.Millisecond) // the instance stays down a while: reconnects land on the others
	servers[1] = startServer(t, bin, addr, pg.dsn, lis.Addr(), nil)
	at(0.4)
	for range 3 {
		listenerCuts += lis.CutAll()
		time.Sleep(150 * time.Millisecond)
	}
	at(0.6)
	out, err := pg.run("kill")
	require.NoError(t, err, "kill: %s", out)
	pgKills++
	ackedAtKill := producer.ackedCount(keyA)
	time.Sleep(time.Second) // down for a second
	out, err = pg.run("restart")
	require.NoError(t, err, "restart: %s", out)

	for _, k := range []replay.Key{keyA, keyB} {
		select {
		case <-producer.produced[k]:
		case <-ctx.Done():
			t.Fatalf("the producer did not finish %v; stderr: %s", k, producer.stderr.String())
		}
	}
	followers.Wait()
	close(results)
	for r := range results {
		require.NoError(t, r.err, "%s", r.who)
		requireExactly(t, r.who, r.frames, r.want)
		if r.requests > 0 {
			t.Logf("%s: %d frames over %d requests", r.who, len(r.frames), r.requests)
		}
	}

	// Every frame whose append returned success is stored after the
	// restart, byte for byte.
	rows, err := pool.Query(ctx, "SELECT seq, data FROM pgstore_replay_frames WHERE conversation_id = $1 AND turn_id = $2 ORDER BY seq", keyA.ConversationID, keyA.TurnID)
	require.NoError(t, err)
	var stored []int64
	for rows.Next() {
		var seq int64
		var data []byte
		require.NoError(t, rows.Scan(&seq, &data))
		require.Equal(t, string(wantA[seq-1]), string(data))
		stored = append(stored, seq)
	}
	require.NoError(t, rows.Err())
	producer.mu.Lock()
	acked, recovered := producer.acked[keyA], len(producer.stored[keyA])-len(producer.acked[keyA])
	producer.mu.Unlock()
	require.Subset(t, stored, acked, "every acknowledged append is stored after the restart")
	require.Len(t, stored, int(n))

	fs := front.Stats()
	t.Logf("frames %d per turn (2 turns, same turn id); followers %d; follower connections %d (reconnects %d), cut %d; "+
		"listener connections cut %d; server SIGKILLs %d; PostgreSQL SIGKILLs %d (at %d acknowledged frames); appends recovered after a lost answer %d",
		n, followerCount, fs.Connections, fs.Connections-followerCount, fs.Cuts,
		listenerCuts, serverKills, pgKills, ackedAtKill, recovered)
	require.Positive(t, fs.Cuts)
	require.Positive(t, listenerCuts)
}
