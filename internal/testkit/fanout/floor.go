package main

import (
	"fmt"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	chatprotocol "github.com/Papercusp/chat-protocol-go"
	"github.com/Papercusp/chat-protocol-go/replay"
	"github.com/Papercusp/chat-protocol-go/sse"
)

// floorServer is the floor the stream mode is measured against: a bare
// net/http handler that writes the same SSE bytes, encoded once per frame,
// to every connection of the turn, one goroutine and channel per
// connection, Flush after every frame. It keeps no window, resumes
// nothing and ends nothing: the least a server can do to fan frames out.
type floorServer struct {
	opening []byte // the opening heartbeat event, as the stream mode sends it
	first   [][]byte

	mu    sync.Mutex
	conns []map[chan []byte]struct{} // per turn
}

// queue is the frames a connection may be behind before it is dropped.
const queue = 256

func newFloorServer(c config) (server, error) {
	opening, err := sse.AppendFrame(nil, sse.Frame{Event: sse.EventHeartbeat, Data: []byte(`{"tsMs":` + strconv.FormatInt(time.Now().UnixMilli(), 10) + `}`), Retry: 2 * time.Second})
	if err != nil {
		return nil, err
	}
	s := &floorServer{opening: opening, conns: make([]map[chan []byte]struct{}, c.turns)}
	for n := range c.turns {
		s.conns[n] = make(map[chan []byte]struct{})
		b, err := encode(started(n))
		if err != nil {
			return nil, err
		}
		s.first = append(s.first, b)
	}
	return s, nil
}

// encode is a frame's SSE bytes as the stream mode writes them: data its
// canonical JSON, id its seq.
func encode(env *chatprotocol.ChatEventEnvelope) ([]byte, error) {
	f, err := replay.EncodeFrame(env, chatprotocol.DefaultMaxFrameBytes)
	if err != nil {
		return nil, err
	}
	return sse.AppendFrame(nil, sse.Frame{ID: strconv.FormatInt(f.Seq, 10), Data: f.Data})
}

// mount serves the version-1 stream's path (servekit.NewRequest).
func (s *floorServer) mount(mux *http.ServeMux) error {
	mux.HandleFunc("GET /conversations/"+conversation+"/turns/{turn}/events", s.serve)
	return nil
}

func (s *floorServer) serve(w http.ResponseWriter, r *http.Request) {
	n, err := strconv.Atoi(strings.TrimPrefix(r.PathValue("turn"), "t-"))
	if err != nil || n < 0 || n >= len(s.conns) {
		http.NotFound(w, r)
		return
	}
	ch := make(chan []byte, queue)
	s.mu.Lock()
	s.conns[n][ch] = struct{}{}
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.conns[n], ch)
		s.mu.Unlock()
	}()
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	flusher := w.(http.Flusher)
	for _, b := range [][]byte{s.opening, s.first[n]} {
		if _, err := w.Write(b); err != nil {
			return
		}
		flusher.Flush()
	}
	for {
		select {
		case b, ok := <-ch:
			if !ok {
				return
			}
			if _, err := w.Write(b); err != nil {
				return
			}
			flusher.Flush()
		case <-r.Context().Done():
			return
		}
	}
}

func (s *floorServer) emit(turn int, env *chatprotocol.ChatEventEnvelope) {
	b, err := encode(env)
	if err != nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for ch := range s.conns[turn] {
		select {
		case ch <- b:
		default: // too far behind: dropped, as the stream mode drops a slow client
			fmt.Fprintln(os.Stderr, "fanout: floor: dropped a connection of turn", turn)
			delete(s.conns[turn], ch)
			close(ch)
		}
	}
}
