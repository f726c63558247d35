package main

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/Papercusp/chat-protocol-go/agui"
	"github.com/Papercusp/chat-protocol-go/replay"
	servecore "github.com/Papercusp/chat-protocol-go/serve"
	"github.com/Papercusp/chat-protocol-go/uistream"
)

// newBridgeServer is a bridge's mode: the same window and turns as the
// stream mode, served by uistream (GET /conversations/c/turns/t-N/events
// resumes chat t-N, whose running turn is t-N) or by agui (POST of a
// RunAgentInput whose runId t-N names the turn, as a host that maps a runId
// to its turn answers a reconnect), on the stream mode's paths.
func newBridgeServer(kind string) func(config) (server, error) {
	return func(c config) (server, error) {
		s, err := newStreamServer(c)
		if err != nil {
			return nil, err
		}
		ss := s.(*streamServer)
		var h http.Handler
		switch kind {
		case "uistream":
			u, err := uistream.NewHandler(ss.window, &uistream.HandlerOptions{
				StartTurn: func(context.Context, *http.Request, *uistream.Request) (replay.Key, error) {
					return replay.Key{}, errNoStart
				},
				ActiveTurn: func(_ context.Context, r *http.Request, chatID string) (replay.Key, bool, error) {
					return replay.Key{ConversationID: conversation, TurnID: chatID}, true, nil
				},
				Options: servecore.Options{HeartbeatInterval: time.Hour}, // the floor sends none either
			})
			if err != nil {
				return nil, err
			}
			h = http.HandlerFunc(u.ServeResume)
		default:
			a, err := agui.NewHandler(ss.window, &agui.HandlerOptions{
				StartRun: func(_ context.Context, _ *http.Request, in *agui.RunInput) (replay.Key, error) {
					return replay.Key{ConversationID: conversation, TurnID: in.RunID}, nil
				},
				Options: servecore.Options{HeartbeatInterval: time.Hour},
			})
			if err != nil {
				return nil, err
			}
			h = a
		}
		return &bridgeServer{streamServer: ss, handler: h, method: map[string]string{"uistream": "GET", "agui": "POST"}[kind]}, nil
	}
}

// bridgeServer is a bridge's handler over the stream mode's window.
type bridgeServer struct {
	*streamServer
	handler http.Handler
	method  string
}

func (s *bridgeServer) mount(mux *http.ServeMux) {
	mux.Handle(s.method+" /conversations/c/turns/{chatId}/events", s.handler)
}

// errNoStart refuses a POST: the benchmark's turns are all started.
var errNoStart = errors.New("fanout: no turn is started here")
