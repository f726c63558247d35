package redisstore

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	chatprotocol "github.com/Papercusp/chat-protocol-go"
	"github.com/Papercusp/chat-protocol-go/internal/testkit/cutproxy"
	"github.com/Papercusp/chat-protocol-go/refusal"
	"github.com/Papercusp/chat-protocol-go/replay"
	"github.com/Papercusp/chat-protocol-go/serve"
	"github.com/Papercusp/chat-protocol-go/stream"
	"github.com/Papercusp/chat-protocol-go/turn"
)

// instance is one host process's share of the test: a client, a Window
// and a stream handler behind an HTTP server.
type instance struct {
	client   *redis.Client
	window   *Window
	server   *httptest.Server
	requests atomic.Int64 // stream requests served
}

func startInstance(t *testing.T, addr string) *instance {
	t.Helper()
	c := redis.NewClient(&redis.Options{Addr: addr, PoolSize: 16})
	w, err := NewWindow(c, &WindowOptions{Prefix: testPrefix, CatchUpInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	h, err := stream.NewHandler(w, &stream.HandlerOptions{
		Authorize: func(*http.Request, replay.Key) error { return nil },
		Options:   serve.Options{Retry: 50 * time.Millisecond, HeartbeatInterval: 500 * time.Millisecond},
	})
	if err != nil {
		t.Fatal(err)
	}
	in := &instance{client: c, window: w}
	mux := http.NewServeMux()
	mux.Handle("/conversations/{conversation}/turns/{turn}/events", http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		in.requests.Add(1)
		h.ServeHTTP(rw, r)
	}))
	srv := httptest.NewServer(mux)
	in.server = srv
	srv.Config.RegisterOnShutdown(h.Close)
	t.Cleanup(func() {
		srv.CloseClientConnections()
		srv.Close()
		h.Close()
		w.Close()
		_ = c.Close()
	})
	return in
}

// cutProxy starts a TCP proxy to the servers' addresses, each new
// connection to the next in turn, closed when t ends.
func cutProxy(t *testing.T, opts *cutproxy.Options, servers ...*httptest.Server) *cutproxy.Proxy {
	t.Helper()
	p, err := cutproxy.New(servers[0].Listener.Addr().String(), opts)
	if err != nil {
		t.Fatal(err)
	}
	targets := make([]string, len(servers))
	for i, s := range servers {
		targets[i] = s.Listener.Addr().String()
	}
	p.SetTargets(targets...)
	t.Cleanup(func() { _ = p.Close() })
	return p
}

// TestTurnAcrossInstances serves one turn from three Windows, each on a
// client of its own, on one Redis of the test's own: the producer appends
// through the first, followers read through stream handlers on the
// others and through a front that sends each reconnect to the next
// instance. Mid-turn, every normal and Pub/Sub connection is killed
// (CLIENT KILL), the followers' HTTP connections to the second instance
// are cut, and Redis is stopped and started again from its append-only
// file. Every follower ends with every frame exactly once, in order, byte
// for byte, or with a typed refusal after a gapless prefix.
func TestTurnAcrossInstances(t *testing.T) {
	needRedis(t)
	if testing.Short() {
		t.Skip("SKIPPED in -short: restarts a Redis server")
	}
	srv := startPrivateRedis(t)
	ctx, cancel := context.WithTimeout(t.Context(), 90*time.Second)
	defer cancel()
	var inst [3]*instance
	for i := range inst {
		inst[i] = startInstance(t, srv.addr)
	}
	// The front cuts each connection after a few kilobytes and sends the
	// reconnect to the next instance; the proxy of the second instance cuts
	// its connections once, mid-turn.
	front := cutProxy(t, &cutproxy.Options{Plan: cutproxy.Random{MinBytes: 2000, MaxBytes: 8000}.Plan(), Seed: uint64(time.Now().UnixNano())},
		inst[0].server, inst[1].server, inst[2].server)
	second := cutProxy(t, nil, inst[1].server)
	key := randomKey("t-instances")
	path := "/conversations/" + key.ConversationID + "/turns/" + key.TurnID + "/events"

	type result struct {
		who  string
		envs []*chatprotocol.ChatEventEnvelope
		err  error
	}
	results := make(chan result, 8)
	var followers sync.WaitGroup
	follow := func(who, base string) {
		followers.Go(func() {
			var got []*chatprotocol.ChatEventEnvelope
			_, err := stream.Follow(ctx, base+path, &stream.FollowOptions{
				Retry: 50 * time.Millisecond, MaxBackoff: 300 * time.Millisecond,
				OnEnvelope: func(env *chatprotocol.ChatEventEnvelope) error {
					got = append(got, env)
					return nil
				},
			})
			results <- result{who: who, envs: got, err: err}
		})
	}
	// The followers start before the turn does: they wait for seq 1.
	follow("instance 1, first", "http://"+second.Addr())
	follow("instance 1, second", "http://"+second.Addr())
	follow("instance 2", inst[2].server.URL)
	follow("front, first", "http://"+front.Addr())
	follow("front, second", "http://"+front.Addr())

	const n = 400
	var acked atomic.Int64
	produced := make(chan error, 1)
	go func() { produced <- produce(ctx, inst[0].window, key, n, &acked) }()

	at := func(count int64) {
		t.Helper()
		for acked.Load() < count {
			select {
			case <-ctx.Done():
				t.Fatalf("the producer stalled at %d deltas", acked.Load())
			case <-time.After(2 * time.Millisecond):
			}
		}
	}
	admin := redis.NewClient(&redis.Options{Addr: srv.addr})
	defer admin.Close()

	at(n / 4)
	for _, typ := range []string{"normal", "pubsub"} {
		if err := admin.ClientKillByFilter(ctx, "TYPE", typ, "SKIPME", "yes").Err(); err != nil {
			t.Fatalf("CLIENT KILL TYPE %s: %v", typ, err)
		}
	}
	at(n / 2)
	if cut := second.CutAll(); cut < 2 {
		t.Fatalf("%d connections to the second instance cut, want 2", cut)
	}
	at(3 * n / 4)
	srv.stop()
	time.Sleep(300 * time.Millisecond)
	srv.start()

	if err := <-produced; err != nil {
		t.Fatalf("producer: %v", err)
	}
	followers.Wait()
	close(results)

	check, _ := newTestWindow(t, srv.addr, WindowOptions{})
	b, stored, err := check.Read(ctx, key, 0, 1<<30)
	if err != nil {
		t.Fatal(err)
	}
	if b.Lower != 0 || !b.Ended || int64(len(stored)) != b.Latest || b.Latest < n+2 {
		t.Fatalf("stored: bounds %v, %d frames", b, len(stored))
	}
	var requests int64
	for _, in := range inst {
		requests += in.requests.Load()
	}
	// Five followers, two of them on the instance whose connections were
	// cut, two through the front that cuts every few kilobytes.
	if requests < 9 || front.Stats().Cuts < 2 {
		t.Fatalf("%d stream requests, %d cuts by the front: the followers did not reconnect", requests, front.Stats().Cuts)
	}
	t.Logf("%d frames, %d stream requests over three instances", len(stored), requests)
	for r := range results {
		if r.err != nil && refusal.CodeOf(r.err) == "" {
			t.Errorf("%s: %v after %d frames", r.who, r.err, len(r.envs))
			continue
		}
		if r.err == nil && len(r.envs) != len(stored) {
			t.Errorf("%s: %d frames, want %d", r.who, len(r.envs), len(stored))
		}
		for i, env := range r.envs {
			data, err := env.AppendJSON(nil)
			if err != nil || env.Seq != int64(i+1) || string(data) != string(stored[i].Data) {
				t.Errorf("%s: frame %d is seq %d, %s; want %s", r.who, i, env.Seq, data, stored[i].Data)
				break
			}
		}
	}
}

// produce runs a turn of n deltas through w, counting the deltas that
// returned in acked: an append whose outcome is unknown (Redis going away
// under it) is settled by the producer before it goes on.
func produce(ctx context.Context, w replay.Window, key replay.Key, n int64, acked *atomic.Int64) error {
	p, err := turn.Start(ctx, w, key, nil)
	if err != nil {
		return err
	}
	settle := func(err error) error {
		for errors.Is(err, turn.ErrUnsettled) {
			time.Sleep(50 * time.Millisecond)
			err = p.Flush(ctx)
		}
		return err
	}
	for i := range n {
		if err := settle(p.Delta(ctx, word(i+1))); err != nil {
			return err
		}
		acked.Add(1)
		time.Sleep(2 * time.Millisecond)
	}
	return settle(p.Complete(ctx))
}
