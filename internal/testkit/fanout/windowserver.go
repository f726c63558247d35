package main

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"time"

	chatprotocol "github.com/Papercusp/chat-protocol-go"
	"github.com/Papercusp/chat-protocol-go/replay"
	"github.com/Papercusp/chat-protocol-go/stream"
)

// streamServer is the measured mode: stream.NewHandler over a
// replay.Memory window holding every turn.
type streamServer struct {
	window  *replay.Memory
	handler *stream.Handler
}

func newStreamServer(c config) (server, error) {
	w := replay.NewMemory(&replay.MemoryOptions{MaxTurns: 2 * c.turns, MaxFrames: -1, MaxAge: -1})
	h, err := stream.NewHandler(w, &stream.HandlerOptions{
		Authorize:         func(*http.Request, replay.Key) error { return nil },
		HeartbeatInterval: time.Hour, // the floor sends none either
	})
	if err != nil {
		return nil, err
	}
	for n := range c.turns {
		if _, err := w.Append(context.Background(), key(n), started(n)); err != nil {
			return nil, err
		}
	}
	return &streamServer{window: w, handler: h}, nil
}

func key(turn int) replay.Key { return replay.Key{ConversationID: conversation, TurnID: turnID(turn)} }

func (s *streamServer) mount(mux *http.ServeMux) {
	mux.Handle("GET /conversations/{conversation}/turns/{turn}/events", s.handler)
}

func (s *streamServer) emit(turn int, env *chatprotocol.ChatEventEnvelope) {
	if _, err := s.window.Append(context.Background(), key(turn), env); err != nil {
		fmt.Fprintln(os.Stderr, "fanout: append:", err)
	}
}
