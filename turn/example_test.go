package turn_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"

	"github.com/Papercusp/chat-protocol-go/recovery"
	"github.com/Papercusp/chat-protocol-go/refusal"
	"github.com/Papercusp/chat-protocol-go/replay"
	"github.com/Papercusp/chat-protocol-go/stream"
	"github.com/Papercusp/chat-protocol-go/turn"
)

// sessionStore stands in for a host's sessions: who is asking (a bearer
// token), and which turns exist and whose they are.
type sessionStore struct {
	users map[string]string     // Authorization header → principal
	turns map[replay.Key]string // turn → the principal it belongs to
}

// Caller is the principal of the request's session.
func (s sessionStore) Caller(r *http.Request) (string, error) {
	if user, ok := s.users[r.Header.Get("Authorization")]; ok {
		return user, nil
	}
	return "", errors.New("no session")
}

// MayRead lets the owner of an existing turn read it: an unknown turn is
// denied like a foreign one (the window would wait for it).
func (s sessionStore) MayRead(r *http.Request, key replay.Key) error {
	if user, err := s.Caller(r); err != nil || s.turns[key] != user {
		return refusal.ErrTurnNotFound
	}
	return nil
}

// Authorize is recovery's Authorizer: the worker does everything, a turn's
// owner may cancel it.
func (s sessionStore) Authorize(_ context.Context, caller string, t recovery.TurnRef, action recovery.Action) error {
	key := replay.Key{ConversationID: t.Conversation, TurnID: t.Turn}
	if caller == "worker" || (action == recovery.ActionCancel && s.turns[key] == caller) {
		return nil
	}
	return refusal.ErrUnauthorized
}

// searchDocs is the turn's tool, which recovery launches at most once.
func searchDocs(context.Context) (json.RawMessage, error) {
	return json.RawMessage(`{"hits":2}`), nil
}

// A lightweight host in one process, the README's "Serve a turn": a memory
// window served as a stream, the cancel endpoint, and a turn produced with
// a tool call; then a second turn, cancelled while it runs.
func Example() {
	ctx := context.Background()
	sessions := sessionStore{users: map[string]string{"Bearer alice": "alice"}, turns: map[replay.Key]string{
		{ConversationID: "c-1", TurnID: "t-1"}: "alice", {ConversationID: "c-1", TurnID: "t-2"}: "alice"}}
	mux := http.NewServeMux()
	srv := &http.Server{Handler: mux}
	// README:begin
	window := replay.NewMemory(nil) // the turns' frames, kept for reconnects
	runs := turn.NewRuns()          // the running turns, which a cancel reaches
	rec := recovery.New(recovery.Host{Store: recovery.NewMemoryStore(nil), Authorizer: sessions, Aborter: runs}, nil)
	events, err := stream.NewHandler(window, &stream.HandlerOptions{Authorize: sessions.MayRead})
	if err != nil {
		panic(err)
	}
	cancel, err := turn.NewCancelHandler(rec, &turn.CancelHandlerOptions{Caller: sessions.Caller})
	if err != nil {
		panic(err)
	}
	mux.Handle("/conversations/{conversation}/turns/{turn}/events", events) // a wrong method: the JSON 405
	mux.Handle("/conversations/{conversation}/turns/{turn}/cancel", cancel)
	srv.RegisterOnShutdown(events.Close) // Shutdown ends no stream by itself

	// A turn: its seqs, ids and end, and the tool's one launch, are the producer's.
	p, err := turn.Start(ctx, window, replay.Key{ConversationID: "c-1", TurnID: "t-1"},
		&turn.Options{Recovery: rec, Runs: runs, Caller: "worker"})
	if err != nil {
		panic(err)
	}
	go func() { // the model loop, under the turn's context, which only a cancel ends
		ctx := p.Context()
		err := p.Delta(ctx, "Refunds are accepted ")
		if err == nil {
			_, err = p.RunToolCall(ctx, turn.ToolCall{ID: "call_1", Name: "search_docs"}, searchDocs)
		}
		if err == nil {
			err = p.Delta(ctx, "within 30 days.")
		}
		_ = p.End(ctx, err) // completed, failed, or cancelled
	}()
	// README:end
	ts := httptest.NewUnstartedServer(nil)
	ts.Config = srv
	ts.Start()
	defer ts.Close()
	alice := &stream.FollowOptions{Header: http.Header{"Authorization": {"Bearer alice"}}}

	state, err := stream.Follow(ctx, ts.URL+"/conversations/c-1/turns/t-1/events", alice)
	if err != nil {
		fmt.Println(err)
		return
	}
	t, _ := state.Turn("t-1")
	fmt.Println(t.Status, t.Text())
	fmt.Println(t.ToolCalls[0].CallID, t.ToolCalls[0].Status, string(t.ToolCalls[0].Output))

	// A turn whose model waits for ever, until its owner cancels it.
	p, err = turn.Start(ctx, window, replay.Key{ConversationID: "c-1", TurnID: "t-2"},
		&turn.Options{Recovery: rec, Runs: runs, Caller: "worker"})
	if err != nil {
		fmt.Println(refusal.CodeOf(err))
		return
	}
	go func() {
		<-p.Context().Done()
		_ = p.End(p.Context(), p.Context().Err())
	}()
	for _, user := range []string{"Bearer mallory", "Bearer alice"} {
		req, _ := http.NewRequest(http.MethodPost, ts.URL+"/conversations/c-1/turns/t-2/cancel", nil)
		req.Header.Set("Authorization", user)
		req.Header.Set("X-Requested-With", "fetch") // what no cross-site form sends
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			fmt.Println(err)
			return
		}
		resp.Body.Close()
		fmt.Println(user, resp.StatusCode)
	}
	state, err = stream.Follow(ctx, ts.URL+"/conversations/c-1/turns/t-2/events", alice)
	fmt.Println(state.Turns[0].Status, err)
	// Output:
	// completed Refunds are accepted within 30 days.
	// call_1 ok {"hits":2}
	// Bearer mallory 404
	// Bearer alice 202
	// cancelled <nil>
}
