package main

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"time"

	chatprotocol "github.com/Papercusp/chat-protocol-go"
	"github.com/Papercusp/chat-protocol-go/internal/testkit/servekit"
	"github.com/Papercusp/chat-protocol-go/replay"
)

// windowServer is a measured mode: one protocol's handler (servekit:
// stream.NewHandler, uistream's resume or agui's run) over a replay.Memory
// window holding every turn.
type windowServer struct {
	proto  string
	window *replay.Memory
}

// newWindowServer returns the mode serving proto, each turn holding its
// lifecycle started.
func newWindowServer(proto string) func(config) (server, error) {
	return func(c config) (server, error) {
		w := replay.NewMemory(&replay.MemoryOptions{MaxTurns: 2 * c.turns, MaxFrames: -1, MaxAge: -1})
		for n := range c.turns {
			if _, err := w.Append(context.Background(), key(n), started(n)); err != nil {
				return nil, err
			}
		}
		return &windowServer{proto: proto, window: w}, nil
	}
}

func key(turn int) replay.Key { return replay.Key{ConversationID: conversation, TurnID: turnID(turn)} }

func (s *windowServer) mount(mux *http.ServeMux) error {
	_, err := servekit.Mount(mux, s.proto, s.window, servekit.Options{
		Conversation:      conversation,
		HeartbeatInterval: time.Hour, // the floor sends none either
	})
	return err
}

func (s *windowServer) emit(turn int, env *chatprotocol.ChatEventEnvelope) {
	if _, err := s.window.Append(context.Background(), key(turn), env); err != nil {
		fmt.Fprintln(os.Stderr, "fanout: append:", err)
	}
}
