// Package turn produces a turn: a Producer writes one turn's version-1
// envelopes to a replay window, and runs the turn's tool calls through
// recovery and its cards through interactions (docs/contract.md section
// 16). The other packages parse, reduce, serve and recover a turn; this one
// makes it.
//
// # A turn
//
//	runs := turn.NewRuns()                                  // the Aborter
//	rec := recovery.New(recovery.Host{Store: recovery.NewMemoryStore(nil), Authorizer: authz, Aborter: runs}, nil)
//	p, err := turn.Start(ctx, window, key, &turn.Options{Recovery: rec, Runs: runs, Caller: "worker"})
//	err = p.Delta(p.Context(), "Refunds are accepted ")
//	res, err := p.RunToolCall(p.Context(), turn.ToolCall{ID: providerID, Name: "search", Input: in}, search)
//	err = p.End(ctx, err)                                   // completed, failed or cancelled
//
// Start appends lifecycle started as seq 1, or resumes a turn the window
// holds: a Producer started again, in this process or another, goes on at
// the window's latest seq plus one and learns the turn's tool calls and
// cards from its retained frames. Each envelope gets seq latest+1, the
// event id "<turnId>:<seq>" (unique within the conversation) and an at
// stamped by [Options.Now]. Appends are serialized: a Producer is safe for
// concurrent use. A delta longer than the frame limit becomes several.
//
// # Lifecycle
//
// One terminal lifecycle ends the turn: End decides it (completed for a nil
// error; failed, after an error event, for another; cancelled once the
// turn's cancellation committed), commits it through recovery, and writes
// the usage set with SetUsage. After it only a late tool_result is
// appended; every other call is refused with turn-terminated.
//
// # Steps
//
// A turn is a sequence of model steps, one provider response each:
// [Producer.StartStep] appends step started with the next number,
// [Producer.FinishStep] the open step's end (finished, failed or
// interrupted) with its stop reason and usage, which add up to the turn's.
// One step is open at a time; End ends an open one interrupted. A resumed
// Producer learns its open and last step from the retained frames
// ([Producer.OpenStep], [Producer.Steps]). A turn without step events is
// valid: a turn that is one provider response needs none.
//
// # Uncertain appends
//
// An append refused by the window stored nothing. An append that failed
// otherwise may have landed: the Producer reads the bounds, and a latest seq
// equal to the envelope's (holding it) means it landed, one below means it
// did not, and the envelope is appended again. So a lost acknowledgement
// leaves neither a gap nor a duplicate. When that read fails too, the call
// returns [ErrUnsettled] and the Producer settles the envelope first thing on
// its next call. Any other latest seq means another writer: [ErrAnotherWriter].
//
// # Tool calls
//
// Start authorizes the effect slots tool-1 … tool-N ([Options.ToolSlots]) with
// recovery; the k-th tool call of the turn is the effect tool-k, whatever
// id the model's provider gave it (those change on every retry).
// [Producer.RunToolCall] appends tool_call, executes the tool at most once
// under the turn's Context, stores its outcome, and appends tool_result
// from the stored result, so a restarted Producer appends the same one
// without launching the tool again (Pending lists the calls to finish). An
// unknown outcome is needs-reconciliation on the stream and as the error,
// never a retry; Reconcile settles it. [Producer.AnnounceToolCall] appends
// a model's tool_call without running it (a recorded stream; package
// ingest's ProducerSink).
//
// # Cards
//
// Ask opens a card with the resolver and appends its card event, built from
// the stored record. [interactions.Resolver.Wait] wakes the host when the card
// closes; CloseCard then appends card_closed on the stream of the turn that
// carries the conversation on.
//
// # Cancellation
//
// [NewCancelHandler] serves the cancel request, a POST that no cross-site
// form can send: recovery commits the cancellation, then calls
// [Runs.Abort], which ends the Context of the turn's Producer, so the model
// loop and the tools stop; End then writes lifecycle cancelled. A client
// that disconnects is never a cancellation, but an AG-UI run's
// (docs/contract.md section 18.2). [CancelHandler.Cancel] is the same
// cancel for the caller of a request that another endpoint checked: the
// bridges' Cancel hook.
package turn
