package stream_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"

	"github.com/Papercusp/chat-protocol-go/refusal"
	"github.com/Papercusp/chat-protocol-go/replay"
	"github.com/Papercusp/chat-protocol-go/stream"
	"github.com/Papercusp/chat-protocol-go/turn"
)

// sessionStore stands in for a host's sessions and turns: who may read
// which conversation, and which turns exist.
type sessionStore struct {
	readers map[string]string // bearer token → conversation
	turns   map[replay.Key]bool
}

// MayRead reports whether the caller may read key's conversation and the
// turn exists: an unknown turn is denied like a foreign one.
func (s sessionStore) MayRead(r *http.Request, key replay.Key) bool {
	return s.readers[r.Header.Get("Authorization")] == key.ConversationID && s.turns[key]
}

// Serve one turn's resumable stream from a Memory window, and follow it.
func Example() {
	ctx := context.Background()
	sessions := sessionStore{readers: map[string]string{"Bearer alice": "c-1"},
		turns: map[replay.Key]bool{{ConversationID: "c-1", TurnID: "t-1"}: true}}
	mux := http.NewServeMux()
	window := replay.NewMemory(nil) // the turn's frames, kept for reconnects
	h, err := stream.NewHandler(window, &stream.HandlerOptions{
		// On every connection. The window waits for any turn, so this also
		// denies an unknown one: both get the same 404.
		Authorize: func(r *http.Request, key replay.Key) error {
			if !sessions.MayRead(r, key) { // the caller's conversation, a turn that exists
				return refusal.ErrTurnNotFound
			}
			return nil
		},
	})
	if err != nil {
		panic(err)
	}
	mux.Handle("/conversations/{conversation}/turns/{turn}/events", h)
	srv := &http.Server{Handler: mux}
	srv.RegisterOnShutdown(h.Close) // Shutdown ends no stream by itself

	// The model's side: a turn.Producer appends each envelope under its seq.
	p, err := turn.Start(ctx, window, replay.Key{ConversationID: "c-1", TurnID: "t-1"}, nil)
	if err != nil {
		panic(err)
	}
	if err := p.Delta(ctx, "Hello"); err != nil {
		panic(err)
	}
	if err := p.Complete(ctx); err != nil {
		panic(err)
	}
	ts := httptest.NewUnstartedServer(nil)
	ts.Config = srv
	ts.Start()
	defer ts.Close()

	// A client resumes by Last-Event-ID across cuts until the turn ends.
	state, err := stream.Follow(ctx, ts.URL+"/conversations/c-1/turns/t-1/events",
		&stream.FollowOptions{Header: http.Header{"Authorization": {"Bearer alice"}}})
	fmt.Println(state.Turns[0].Text(), state.Turns[0].Status, err)
	_, err = stream.Follow(ctx, ts.URL+"/conversations/c-1/turns/t-1/events", nil)
	fmt.Println(refusal.CodeOf(err))
	// Output:
	// Hello completed <nil>
	// turn-not-found
}
