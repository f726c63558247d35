package agui

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"

	"github.com/go-json-experiment/json/jsontext"

	chatprotocol "github.com/Papercusp/chat-protocol-go"
	"github.com/Papercusp/chat-protocol-go/cards"
	"github.com/Papercusp/chat-protocol-go/interactions"
	"github.com/Papercusp/chat-protocol-go/internal/bridge"
	"github.com/Papercusp/chat-protocol-go/internal/reqbody"
	"github.com/Papercusp/chat-protocol-go/refusal"
	"github.com/Papercusp/chat-protocol-go/replay"
	"github.com/Papercusp/chat-protocol-go/serve"
)

// RunInput is the RunAgentInput a POST carries, as HttpAgent sends it
// (docs/contract.md section 18.2).
type RunInput struct {
	// ThreadID and RunID are the run's ids, echoed by RUN_STARTED and
	// RUN_FINISHED; the bridge takes the thread for the conversation of
	// its cards.
	ThreadID, RunID string
	// Messages is the messages array as sent: the client's history, which
	// grants nothing (section 13.2).
	Messages json.RawMessage
	// Resume holds the answers to the previous run's interrupts, already
	// landed through the Resolver, in the order sent.
	Resume []Resumed
	// Body is the whole body: tools, context, state, forwardedProps.
	Body json.RawMessage
}

// Resumed is one resume entry as the Resolver stored it.
type Resumed struct {
	// InterruptID is the interrupt answered: a card's correlation id.
	InterruptID string
	// Response is the card response the entry stands for: submit with the
	// payload for resolved, cancel for cancelled.
	Response cards.CardResponse
	// Result is the Resolver's, also for a repeated submission.
	Result interactions.Result
}

// HandlerOptions configures a Handler. StartRun is required.
type HandlerOptions struct {
	// StartRun starts the turn a run asks for, with the caller the host
	// reads from r, and returns its key; the run then streams the turn from
	// its first frame. A host that maps a runId it has seen to the same turn
	// ([StartRunOf] does) gives a reconnecting client the run replayed
	// whole (section 18.2).
	// It refuses with an error of code turn-not-found or unauthorized
	// (answered 404 turn-not-found alike), invalid-input (400),
	// turn-running (409), or any other error (503).
	StartRun func(ctx context.Context, r *http.Request, in *RunInput) (replay.Key, error)
	// Cancel cancels key's turn when its run's client goes away before
	// the run ended (section 18.2): AG-UI has no resume, and its servers
	// take a disconnect, such as HttpAgent's abortRun, for the run's end.
	// It is called with the run's request, whose session names the caller
	// whose right to cancel the host checks (turn's
	// CancelHandler.Cancel, the cancel endpoint's own, is such a hook),
	// on a context that outlives the request, bounded by WindowTimeout;
	// a denial or a turn no longer running is no failure, any other error
	// is logged. nil: a disconnect cancels nothing.
	Cancel func(ctx context.Context, r *http.Request, key replay.Key) error
	// History, when set, gives the run's client the thread's messages at
	// the start of the run (docs/contract.md section 20.3): called with
	// the run's request once StartRun returned key, it returns one
	// MESSAGES_SNAPSHOT event's JSON object ([MessagesSnapshot];
	// [HistoryOf] reads it through a [conversation.Gate]), sent right after
	// RUN_STARTED. An error sends no snapshot and is logged; the run goes
	// on. nil: no snapshot (opt-in).
	History func(ctx context.Context, r *http.Request, key replay.Key) (json.RawMessage, error)
	// KeepRunOnDisconnect keeps a run's turn going when its client goes
	// away, as without Cancel: for a host whose StartRun maps a run id it
	// has seen to that run's turn ([StartRunOf] does), so that a client
	// that reconnects, to any instance, gets the run replayed whole.
	KeepRunOnDisconnect bool
	// Resolver and Caller land the answers of a run's resume entries: the
	// caller from the host's session, never from the body. Nil refuses a
	// run that carries resume entries (400). When set, Caller is asked
	// first for every POST, before its body is read: an error is answered
	// 401 unauthenticated (section 18.3).
	Resolver *interactions.Resolver
	Caller   func(r *http.Request) (interactions.Caller, error)
	// Registry names the registered events the host's turns carry
	// (docs/contract.md section 6.5): with [chatprotocol.WithReasoning]
	// the bridge streams reasoning as AG-UI reasoning messages, with
	// [chatprotocol.WithSources] sources as CUSTOM events. nil: none. Its
	// product types are passed over, as without it.
	Registry *chatprotocol.Registry
	// BodyLimits bound a POST's body.
	serve.BodyLimits
	// Options are the serving options every stream of the module shares
	// ([serve.Options]); a heartbeat is an SSE comment and Retry is only
	// the Retry-After of a 503 (the protocol has no retry line).
	serve.Options
}

// Handler serves turns of a replay window as AG-UI 1.x runs
// (docs/contract.md section 18.2): a POST of a RunAgentInput lands its
// resume entries, starts a turn through [HandlerOptions.StartRun] and streams it as
// AG-UI events, RUN_STARTED first and RUN_FINISHED or RUN_ERROR last; a
// run whose client goes away before its end cancels its turn through
// [HandlerOptions.Cancel], unless [HandlerOptions.KeepRunOnDisconnect].
// Mount it under a pattern without a method, so that another method gets
// its JSON 405 (method-not-allowed, Allow: POST) rather than
// [http.ServeMux]'s plain text. Every run's events are transcoded once per
// frame for all its readers. Safe for concurrent use; make one with
// [NewHandler].
type Handler struct {
	engine *serve.Engine
	opts   HandlerOptions
}

// NewHandler returns a Handler serving turns from window. It fails when
// window, opts or StartRun is nil, or only one of Resolver and Caller is
// set.
func NewHandler(window replay.Window, opts *HandlerOptions) (*Handler, error) {
	switch {
	case opts == nil || opts.StartRun == nil:
		return nil, errors.New("agui: NewHandler needs HandlerOptions.StartRun")
	case (opts.Resolver == nil) != (opts.Caller == nil):
		return nil, errors.New("agui: HandlerOptions.Resolver and HandlerOptions.Caller go together")
	}
	engine, err := serve.NewEngine(window, &opts.Options)
	if err != nil {
		return nil, err
	}
	return &Handler{engine: engine, opts: *opts}, nil
}

// Close aborts every run being streamed and answers later requests 503;
// register it with [http.Server.RegisterOnShutdown].
func (h *Handler) Close() { h.engine.Close() }

// Shutdown calls Close and waits until every stream has ended or ctx ends.
func (h *Handler) Shutdown(ctx context.Context) error { return h.engine.Shutdown(ctx) }

// ServeHTTP answers one POST of a RunAgentInput; see Handler, and section
// 18.3 for the refusals.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", "POST")
		serve.Refuse(w, refusal.CodeMethodNotAllowed, "runs are started with POST")
		return
	}
	a := bridge.Answers{Resolver: h.opts.Resolver, Caller: h.opts.Caller}
	key, in, ok := bridge.Start(h.engine, w, r, h.opts.BodyLimits, a.Authenticate, parseInput,
		func(in *RunInput) bool { return len(in.Resume) == 0 || h.resume(w, r, &a, in) },
		func(ctx context.Context, in *RunInput) (replay.Key, error) { return h.opts.StartRun(ctx, r, in) })
	if !ok {
		return
	}
	started := bridge.Str(bridge.Str(bridge.Begin(nil, "RUN_STARTED"), "threadId", in.ThreadID), "runId", in.RunID)
	prologue := bridge.End(started)
	if h.opts.History != nil {
		prologue = h.snapshot(r, key, prologue)
	}
	thread, run := in.ThreadID, in.RunID // not in: a parked stream keeps its Codec's maker, not the request body
	st := &serve.Stream{
		Key:     key,
		Variant: thread + "\x00" + run,
		NewCodec: func() serve.Codec {
			c := &codec{threadID: thread, runID: run}
			c.registered(h.opts.Registry)
			return c
		},
		Prologue: prologue,
	}
	if h.opts.Cancel != nil && !h.opts.KeepRunOnDisconnect {
		st.Gone = func() { h.cancel(r, key) }
	}
	h.engine.Serve(w, r, st)
}

// snapshot appends to prologue the MESSAGES_SNAPSHOT [HandlerOptions.History]
// gives for key's run as one SSE frame, or logs its failure and returns
// prologue as it is.
func (h *Handler) snapshot(r *http.Request, key replay.Key, prologue []byte) []byte {
	ctx, cancel := h.engine.Bounded(r.Context())
	defer cancel()
	ev, err := h.opts.History(ctx, r, key)
	if err == nil && (len(ev) == 0 || ev[0] != '{' || !json.Valid(ev)) {
		err = errors.New("not a JSON object")
	}
	if err != nil {
		h.engine.Logger().WarnContext(ctx, "agui: the run's messages snapshot could not be read",
			"conversation", key.ConversationID, "turn", key.TurnID, "err", err)
		return prologue
	}
	var compact bytes.Buffer
	_ = json.Compact(&compact, ev) // valid: checked above
	prologue = append(append(prologue, "data: "...), compact.Bytes()...)
	return append(prologue, "\n\n"...)
}

// cancel cancels key's turn through [HandlerOptions.Cancel] after its
// run's client went away, with r's caller, on a context that outlives r.
func (h *Handler) cancel(r *http.Request, key replay.Key) {
	ctx, cancel := h.engine.Bounded(context.WithoutCancel(r.Context()))
	defer cancel()
	if err := h.opts.Cancel(ctx, r, key); err != nil && !bridge.Denied(err) && refusal.CodeOf(err) != refusal.CodeTurnNotRunning {
		h.engine.Logger().WarnContext(ctx, "agui: cancelling the turn of a run whose client went away failed",
			"conversation", key.ConversationID, "turn", key.TurnID, "err", err)
	}
}

// resume lands in's resume entries through a, or answers the request and
// reports false.
func (h *Handler) resume(w http.ResponseWriter, r *http.Request, a *bridge.Answers, in *RunInput) bool {
	keys := make([]interactions.Key, len(in.Resume))
	subs := make([]interactions.Submission, len(in.Resume))
	for i, e := range in.Resume {
		keys[i] = interactions.Key{Conversation: in.ThreadID, CorrelationID: e.InterruptID}
		subs[i] = interactions.Submission{ID: in.RunID, Response: e.Response}
	}
	res, ok := bridge.Land(h.engine, w, r, a, keys, subs)
	for i := range res {
		in.Resume[i].Result = res[i]
	}
	return ok
}

// parseInput reads a RunAgentInput strictly (reqbody.Unmarshal): threadId,
// runId and messages required, resume entries {interruptId, status:
// resolved|cancelled, payload?}, each interrupt once. It checks every entry
// before any lands, so that a refused run changes nothing.
func parseInput(body []byte) (*RunInput, error) {
	var raw struct {
		ThreadID *string        `json:"threadId"`
		RunID    *string        `json:"runId"`
		Messages jsontext.Value `json:"messages"`
		Resume   []struct {
			InterruptID string         `json:"interruptId"`
			Status      string         `json:"status"`
			Payload     jsontext.Value `json:"payload"`
		} `json:"resume"`
	}
	if err := reqbody.Unmarshal(body, &raw); err != nil {
		return nil, errors.New("the body is not a RunAgentInput JSON object")
	}
	switch {
	case raw.ThreadID == nil || !bridge.ValidID(*raw.ThreadID):
		return nil, errors.New("the body's threadId is missing or not an id")
	case raw.RunID == nil || !bridge.ValidID(*raw.RunID):
		return nil, errors.New("the body's runId is missing or not an id")
	case len(raw.Messages) == 0 || raw.Messages[0] != '[':
		return nil, errors.New("the body's messages is not an array")
	}
	in := &RunInput{ThreadID: *raw.ThreadID, RunID: *raw.RunID, Messages: json.RawMessage(raw.Messages), Body: body}
	seen := make(map[string]bool, len(raw.Resume))
	for _, e := range raw.Resume {
		resp := cards.CardResponse{Action: cards.CardActionCancel, CorrelationID: e.InterruptID}
		switch {
		case !bridge.ValidID(e.InterruptID):
			return nil, errors.New("a resume entry's interruptId is missing or not an id")
		case seen[e.InterruptID]:
			return nil, errors.New("two resume entries answer one interrupt")
		case e.Status == "resolved":
			var err error // the payload as strictly as an answer endpoint reads a value (section 3.3)
			if resp, err = submission(e.InterruptID, json.RawMessage(e.Payload)); err != nil {
				return nil, errors.New("a resolved resume entry's payload is not a card answer's value object")
			}
		case e.Status != "cancelled":
			return nil, errors.New("a resume entry's status is neither resolved nor cancelled")
		}
		seen[e.InterruptID] = true
		in.Resume = append(in.Resume, Resumed{InterruptID: e.InterruptID, Response: resp})
	}
	return in, nil
}

// submission returns the submit of payload to card id, read by
// chatprotocol.ParseCardResponse.
func submission(id string, payload json.RawMessage) (cards.CardResponse, error) {
	if len(payload) == 0 || payload[0] != '{' {
		return cards.CardResponse{}, errors.New("not an object")
	}
	b := bridge.Str(bridge.Str([]byte{'{'}, "action", "submit"), "correlationId", id)
	return chatprotocol.ParseCardResponse(append(bridge.Raw(b, "value", payload), '}'))
}
