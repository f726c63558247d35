// Package stream serves a turn's version-1 stream over HTTP from a replay
// window, and follows one as a client (docs/contract.md section 14).
//
// [Handler] is the server side: one [http.Handler] that authorizes each
// connection, resumes from Last-Event-ID, replays the retained suffix of
// the turn, goes live, and ends with the turn; its answers (200, 204, 400,
// 404, 409, 410, 503) are documented on the type. [Follow] is the client
// side: it reconnects with Last-Event-ID until the turn ends, folding the
// envelopes into a [chatprotocol.ChatStateV1].
//
// A minimal service:
//
//	h, err := stream.NewHandler(window, &stream.HandlerOptions{Authorize: mayRead})
//	mux.Handle("/conversations/{conversation}/turns/{turn}/events", h) // no method: another one gets the JSON 405
//	srv.RegisterOnShutdown(h.Close)
package stream
