// Package uistream serves a turn of a replay window as an AI SDK UI message
// stream (docs/contract.md section 18.1), the protocol of the npm ai
// package's useChat, and of Chat with DefaultChatTransport, on the 5.x, 6.x
// and 7.x lines.
//
// Handler answers the transport's requests: POST {api} starts a turn
// through the host's [HandlerOptions.StartTurn] and streams it, GET
// {api}/{chatId}/stream resumes the chat's running turn from its first chunk
// ([HandlerOptions.ActiveTurn]; 204 when there is none), and POST
// {api}/{chatId}/stop, the ai documentation's stop of a resumable stream
// (or DELETE {api}/{chatId}/stream), cancels it ([HandlerOptions.Cancel]).
// The turn's frames become chunks once for all the streams that read
// them; a stream that ends before its turn did is aborted, so that the
// client's resume applies, and a client that goes away cancels nothing. A
// minimal service:
//
//	h, err := uistream.NewHandler(window, &uistream.HandlerOptions{
//		StartTurn:  func(ctx context.Context, r *http.Request, req *uistream.Request) (replay.Key, error) { … },
//		ActiveTurn: func(ctx context.Context, r *http.Request, chatID string) (replay.Key, bool, error) { … },
//		Cancel:     func(ctx context.Context, r *http.Request, key replay.Key) error { … },
//	})
//	h.Register(mux, "/api/chat") // patterns without a method: another one gets the JSON 405
//	srv.RegisterOnShutdown(h.Close)
//
// and on the client, DefaultChatTransport({api: "/api/chat"}) with
// useChat({resume: true}). chat.stop() only closes the request; a stop
// button sends the recipe's request first, the one line
//
//	fetch(`/api/chat/${encodeURIComponent(id)}/stop`, {method: "POST", headers: {"Content-Type": "application/json"}, body: JSON.stringify({assistantMessage, activeStreamId})})
//
// then calls chat.stop(). Cards reach the client as data-card parts;
// their answers come back in a POST's answer member and land through an
// [interactions.Resolver], with the caller the host's [HandlerOptions.Caller] reads
// from its session. [HandlerOptions.Cards] chooses otherwise:
// [CardsInPlace] closes a card's part in place in the message the answer
// continues, and [CardsTools] sends cards in ai 6 and 7's own
// human-in-the-loop shapes, a tool approval request for a confirm card and
// a client-side tool call for any other, answered with
// addToolApprovalResponse and addToolOutput and landed the same way. A POST
// that only repeats stored answers starts no turn. The contract lists what
// each direction loses.
package uistream
