// Package observe is how the acting packages of the module (recovery,
// interactions, the replay windows, the stream handler and the provider
// stream readers of ingest) tell an operator
// what they do: each takes an optional Observer in its options, nil meaning
// silent, and reports the moments below as Events carrying the turn, effect
// or card identity and the refusal code (docs/contract.md sections 11 to 14),
// never a card's submitted value, a tool's input or a result's bytes.
//
// It imports only the standard library and the module's leaf refusal
// package, so recovery and interactions stay free of any tracing, validator
// or database dependency. NewSlog writes the events to a log/slog logger;
// the separate module github.com/Papercusp/chat-protocol-go/otel turns them
// into OpenTelemetry spans and metrics. Join combines both:
//
//	rec := recovery.New(host, &recovery.Options{Observer: observe.NewSlog(logger)})
//
// # Moments
//
// A start opens what its end closes: the package reports the start, goes on
// with the context Observe returned (so a span started at the claim is the
// parent of the store's own spans and ends at the outcome), and reports
// exactly one end on it. Everything else is a point.
//
//	kind                          phase         reported by        fields besides the identity
//	turn.start                    point         recovery Start     code
//	turn.end                      point         Cancel, Finish     status, code
//	turn.abort                    point         Cancel             count (in-flight effects), code, err
//	effect.claim                  start         Execute            -
//	effect.admit                  point         Execute            -
//	effect.launch                 point         Execute            -
//	effect.complete               end           Execute            -
//	effect.needs-reconciliation   end or point  Execute            code, err
//	effect.refuse                 end or point  Execute            code, err
//	effect.reconcile              point         Reconcile          code, err
//	replay.serve                  point         Resume, windows    cursor, lower, latest, count (frames)
//	replay.refuse                 point         Resume, windows    cursor, lower, latest, code
//	answer.submit                 start         interactions       -
//	answer.store                  end           Answer             status
//	answer.duplicate              end           Answer             status, code
//	answer.late                   end           Answer             code
//	answer.refuse                 end           Answer             code (err for store failures only)
//	stream.connect                start         stream handler     -
//	stream.resume                 point         stream handler     cursor
//	stream.write                  start         stream handler     seq, count (the frames about to be written)
//	stream.deliver                end           stream handler     seq, count, err (a failed write)
//	stream.refuse                 end           stream handler     cursor, lower, latest, code
//	stream.end                    end           stream handler     seq, count
//	stream.drop                   end           stream handler     seq, count
//	model.response                point         ingest readers     status, provider, models, response id, tokens
//
// Execute reports nothing when it returns an effect's stored result without
// claiming it; its refusals before a claim (claim-conflict, an effect already
// needing reconciliation) are points.
//
// # Log records
//
// NewSlog writes one record per event: its message is the kind, and its
// attributes use these keys, which do not change between releases:
//
//	key            type      present
//	event          string    always: the kind
//	conversation   string    when the event has a conversation id
//	turn           string    when it has a turn id
//	effect         string    effect.* kinds
//	card           string    answer.* kinds: the card's correlation id
//	status         string    turn.end (asked), answer.store and answer.duplicate (the card's), model.response (the turn's)
//	code           string    when the event carries a refusal code
//	cursor         int64     replay.*, stream.resume, stream.refuse
//	lower, latest  int64     replay.*, stream.resume, stream.refuse: the window's bounds
//	seq            int64     stream.write, stream.deliver, stream.end, stream.drop: the last seq
//	count          int       replay.serve, stream.write, stream.deliver, stream.end, stream.drop, turn.abort
//	duration       duration  an end, since its start (stream.deliver: the delivery latency)
//	err            string    when the event has a cause: fit for logs, never for a client
//	provider       string    model.response: the provider
//	model          string    model.response: the model that answered, when known
//	response_id    string    model.response: the provider's response id, when known
//	input_tokens   int64     model.response, when the provider sent its count
//	output_tokens  int64     model.response, when the provider sent its count
//
// duration is measured by the observer itself: at a start it notes the time
// in the context it returns, when the logger is enabled for the start's ends
// (Info, or Debug for stream.write), and an end on that context reports the
// time since.
//
// The level is LevelOf's: Error for needs-reconciliation, store-unavailable,
// checkpoint-write-failed and errors without a code, Warn for the other
// refusals (duplicate-answer aside) and stream.drop, Debug for the routine
// moments (effect.claim, effect.admit, answer.submit, stream.connect,
// stream.resume, stream.write, stream.deliver, replay.serve), Info
// otherwise.
//
// # Cost
//
// A nil Observer costs one comparison per moment and no allocation, and the
// packages never read the clock for an observer, so a no-op one costs an
// interface call per moment. An Observer is called synchronously on the
// goroutine doing the work, so it must be quick and safe for concurrent use.
package observe
