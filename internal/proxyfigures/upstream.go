package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	chatprotocol "github.com/Papercusp/chat-protocol-go"
	"github.com/Papercusp/chat-protocol-go/replay"
	"github.com/Papercusp/chat-protocol-go/serve"
	"github.com/Papercusp/chat-protocol-go/stream"
)

// streamPattern is the route of a turn's stream on the upstream; a probe's
// own Handler is under "/h/{handler}" before it.
const streamPattern = "/conversations/{conversation}/turns/{turn}/events"

// upstream is the stream server every proxy forwards to: the stream
// package's Handler over one memory window, on loopback. Each probe that
// aborts its streams gets a Handler of its own, under /h/NAME, so that
// closing it aborts only that probe's streams.
type upstream struct {
	window *replay.Memory
	srv    *http.Server
	addr   string

	mu       sync.Mutex
	handlers map[string]*stream.Handler
	appended map[replay.Key]map[int64]time.Time // when each seq was appended
}

// startUpstream listens on a loopback port and serves the window.
func startUpstream() (*upstream, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	u := &upstream{window: replay.NewMemory(nil), addr: ln.Addr().String(),
		handlers: make(map[string]*stream.Handler), appended: make(map[replay.Key]map[int64]time.Time)}
	main, err := u.handler("main", 0)
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	mux.Handle(streamPattern, main)
	mux.HandleFunc("/h/{handler}"+streamPattern, func(w http.ResponseWriter, r *http.Request) {
		u.mu.Lock()
		h := u.handlers[r.PathValue("handler")]
		u.mu.Unlock()
		if h == nil {
			http.NotFound(w, r)
			return
		}
		h.ServeHTTP(w, r)
	})
	u.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	u.srv.RegisterOnShutdown(main.Close)
	go func() { _ = u.srv.Serve(ln) }()
	return u, nil
}

// handler makes a Handler over the window, named name (served under
// /h/name unless it is "main"), with heartbeat as its interval (0: the
// default, 15s).
func (u *upstream) handler(name string, heartbeat time.Duration) (*stream.Handler, error) {
	h, err := stream.NewHandler(u.window, &stream.HandlerOptions{
		Authorize: func(*http.Request, replay.Key) error { return nil },
		Options:   serve.Options{HeartbeatInterval: heartbeat},
	})
	if err != nil {
		return nil, err
	}
	u.mu.Lock()
	u.handlers[name] = h
	u.mu.Unlock()
	return h, nil
}

// close stops the server and every Handler's streams.
func (u *upstream) close() {
	u.mu.Lock()
	hs := make([]*stream.Handler, 0, len(u.handlers))
	for _, h := range u.handlers {
		hs = append(hs, h)
	}
	u.mu.Unlock()
	for _, h := range hs {
		h.Close()
	}
	_ = u.srv.Close()
}

// path is the URL path of key's stream, under handler name unless it is
// "main".
func path(name string, key replay.Key) string {
	p := "/conversations/" + key.ConversationID + "/turns/" + key.TurnID + "/events"
	if name != "main" {
		p = "/h/" + name + p
	}
	return p
}

// appendFrame appends the frame of seq to key's turn: started at seq 1,
// completed when end, a delta of about 120 bytes of text otherwise, and
// records when.
func (u *upstream) appendFrame(ctx context.Context, key replay.Key, seq int64, end bool) error {
	ev := fmt.Sprintf(`{"type":"delta","text":"%d: the answer goes on, one delta every fifty milliseconds, as a model writes it out word by word"}`, seq)
	switch {
	case end:
		ev = `{"type":"lifecycle","status":"completed"}`
	case seq == 1:
		ev = `{"type":"lifecycle","status":"started"}`
	}
	env, err := chatprotocol.ParseEnvelope([]byte(fmt.Sprintf(
		`{"schemaVersion":1,"conversationId":%q,"turnId":%q,"eventId":"e-%d","seq":%d,"event":%s}`,
		key.ConversationID, key.TurnID, seq, seq, ev)))
	if err != nil {
		return err
	}
	if _, err := u.window.Append(ctx, key, &env); err != nil {
		return fmt.Errorf("append seq %d: %w", seq, err)
	}
	u.mu.Lock()
	if u.appended[key] == nil {
		u.appended[key] = make(map[int64]time.Time)
	}
	u.appended[key][seq] = time.Now()
	u.mu.Unlock()
	return nil
}

// appendFrames appends seqs from, from+1, … to, the last one ending the turn
// when end, one every pace (none before the first).
func (u *upstream) appendFrames(ctx context.Context, key replay.Key, from, to int64, pace time.Duration, end bool) error {
	var tick *time.Ticker
	if pace > 0 {
		tick = time.NewTicker(pace)
		defer tick.Stop()
	}
	for seq := from; seq <= to; seq++ {
		if tick != nil && seq > from {
			select {
			case <-tick.C:
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		if err := u.appendFrame(ctx, key, seq, end && seq == to); err != nil {
			return err
		}
	}
	return nil
}

// turnKey is a probe's turn.
func turnKey(probe string, n int) replay.Key {
	return replay.Key{ConversationID: "c-proxy", TurnID: probe + "-" + strconv.Itoa(n)}
}
