// Package observe is how the acting packages of the module (recovery,
// interactions, the replay windows, the stream handler, ingest) tell an
// operator what they do: each takes an optional [Observer] (nil: silent)
// and reports the moments below as an [Event] carrying the turn, effect or
// card identity and the refusal code, never a card's submitted value, a
// tool's input or a result's bytes.
//
// It imports only the standard library and package refusal. [NewSlog]
// writes the events to a log/slog logger; the module
// github.com/Papercusp/chat-protocol-go/otelchat turns them into
// OpenTelemetry spans and metrics; [Join] combines observers:
//
//	rec := recovery.New(host, &recovery.Options{Observer: observe.NewSlog(logger)})
//
// # Moments
//
// A start opens what its end closes: the package reports the start, goes
// on with the context [Observer.Observe] returned (so a span started at the
// claim is the parent of the store's own spans and ends at the outcome), and
// reports exactly one end on it. Everything else is a point.
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
//	replay.serve                  point         windows            cursor, lower, latest, count (frames)
//	replay.refuse                 point         windows            cursor, lower, latest, code
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
// Execute reports nothing for a stored result it returns without a claim;
// its refusals before a claim are points.
//
// # Log records
//
// [NewSlog] writes one record per event: its message is the kind, and its
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
// duration is noted by the observer itself, at a start the logger records
// the ends of, in the context it returns.
//
// The level is [LevelOf]'s: Error for needs-reconciliation, store-unavailable,
// checkpoint-write-failed and errors without a code, Warn for the other
// refusals and stream.drop, Debug for the routine moments, Info otherwise.
//
// # Cost
//
// A nil [Observer] costs one comparison per moment and no allocation; a
// no-op one an interface call. An Observer is called synchronously on the
// goroutine doing the work: it must be quick and safe for concurrent use.
package observe
