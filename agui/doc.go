// Package agui serves a turn of a replay window as an AG-UI 1.x run
// (docs/contract.md section 18.2), the protocol of @ag-ui/client's
// HttpAgent and the front ends built on it.
//
// Handler answers a POST of a RunAgentInput: it lands the input's resume
// entries (the answers to the previous run's interrupts) through an
// [interactions.Resolver], with the caller the host's [HandlerOptions.Caller] reads
// from its session, starts a turn through [HandlerOptions.StartRun], and streams the
// turn as AG-UI events, RUN_STARTED first and RUN_FINISHED or RUN_ERROR
// last, every event valid against the 1.x schema and the client's
// sequencing rules. An open card ends the run with an interrupt outcome.
// The turn's frames become events once for all the streams of a run.
//
//	h, err := agui.NewHandler(window, &agui.HandlerOptions{
//		StartRun: func(ctx context.Context, r *http.Request, in *agui.RunInput) (replay.Key, error) { … },
//		Cancel:   cancels.Cancel, // a run's disconnect cancels its turn
//		Resolver: resolver, Caller: callerOf,
//	})
//	mux.Handle("/agent", h) // no method: another one gets the JSON 405
//	srv.RegisterOnShutdown(h.Close)
//
// AG-UI has no resume of a stream: its servers take a run's disconnect,
// such as HttpAgent's abortRun(), for the run's end. So, given
// [HandlerOptions.Cancel] (turn's CancelHandler.Cancel, say), a run whose
// client goes away before the run ended cancels its turn, with the
// caller of the run's request; [HandlerOptions.KeepRunOnDisconnect] opts
// out, for a host whose StartRun maps a run id it has seen to that run's
// turn ([StartRunOf] does, in the conversation store, for every instance
// sharing it), so that a reconnect, a POST again, replays the run whole.
package agui
