package turn_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"

	"github.com/Papercusp/chat-protocol-go/recovery"
	"github.com/Papercusp/chat-protocol-go/refusal"
	"github.com/Papercusp/chat-protocol-go/replay"
	"github.com/Papercusp/chat-protocol-go/stream"
	"github.com/Papercusp/chat-protocol-go/turn"
)

// everyone lets every caller do everything: a real host asks its sessions.
type everyone struct{}

func (everyone) Authorize(context.Context, string, recovery.TurnRef, recovery.Action) error {
	return nil
}

// A lightweight host in one process: a memory window served as a stream, a
// cancel endpoint, and a turn produced with a tool call.
func Example() {
	window := replay.NewMemory(nil)
	runs := turn.NewRuns()
	rec := recovery.New(recovery.Host{Store: recovery.NewMemoryStore(nil), Authorizer: everyone{}, Aborter: runs}, nil)

	events, _ := stream.NewHandler(window, &stream.HandlerOptions{Authorize: func(*http.Request, replay.Key) error { return nil }})
	cancel, _ := turn.NewCancelHandler(rec, &turn.CancelOptions{Caller: func(*http.Request) (string, error) { return "demo", nil }})
	mux := http.NewServeMux()
	mux.Handle("GET /conversations/{conversation}/turns/{turn}/events", events)
	mux.Handle("POST /conversations/{conversation}/turns/{turn}/cancel", cancel)
	srv := httptest.NewServer(mux)
	defer srv.Close()
	defer events.Close()

	ctx := context.Background()
	p, err := turn.Start(ctx, window, replay.Key{ConversationID: "c-1", TurnID: "t-1"},
		&turn.Options{Recovery: rec, Runs: runs, Caller: "worker"})
	if err != nil {
		fmt.Println(refusal.CodeOf(err))
		return
	}
	go func() { // the model loop, under the turn's context
		mctx := p.Context()
		err := p.Delta(mctx, "Refunds are accepted ")
		if err == nil {
			_, err = p.ToolCall(mctx, turn.ToolCall{ID: "call_1", Name: "search_docs"}, func(context.Context) (json.RawMessage, error) {
				return json.RawMessage(`{"hits":2}`), nil
			})
		}
		if err == nil {
			err = p.Delta(mctx, "within 30 days.")
		}
		_ = p.End(mctx, err)
	}()

	state, err := stream.Follow(ctx, srv.URL+"/conversations/c-1/turns/t-1/events", nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	t, _ := state.Turn("t-1")
	fmt.Println(t.Status, t.Text())
	fmt.Println(t.ToolCalls[0].CallID, t.ToolCalls[0].Status, string(t.ToolCalls[0].Output))
	// Output:
	// completed Refunds are accepted within 30 days.
	// call_1 ok {"hits":2}
}
