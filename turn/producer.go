package turn

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"time"

	chatprotocol "github.com/Papercusp/chat-protocol-go"
	"github.com/Papercusp/chat-protocol-go/interactions"
	"github.com/Papercusp/chat-protocol-go/recovery"
	"github.com/Papercusp/chat-protocol-go/refusal"
	"github.com/Papercusp/chat-protocol-go/replay"
)

// DefaultToolSlots is the number of tool calls a turn may make by default:
// the effect slots tool-1 … tool-32 authorized when it starts.
const DefaultToolSlots = 32

// MaxTurnIDBytes is the longest turn id a Producer takes, in bytes: its
// event ids, "<turnId>:<seq>", then stay within the 256 bytes of an id
// (docs/contract.md section 5.1).
const MaxTurnIDBytes = 256 - len(":9007199254740991")

// ErrCancelled is the cause of a Producer's Context once the turn's
// cancellation committed and reached it ([Runs.Abort]): [context.Cause]
// returns it, and [Producer.End] writes lifecycle cancelled.
var ErrCancelled = errors.New("turn: the turn was cancelled")

// ErrUnsettled is returned, wrapped with the window's error, when an
// append's outcome is unknown and reading the bounds did not settle it.
// The Producer keeps the envelope and settles it, exactly once, before
// anything else it appends (or in [Producer.Flush]): do not send it again
// (docs/contract.md section 16.2).
var ErrUnsettled = errors.New("turn: an append's outcome is unknown; the producer settles it before the next one")

// ErrAnotherWriter is returned, wrapped, once the turn's window holds a
// frame this Producer did not append, or lacks one it did: two producers
// write the turn. The Producer refuses every later call with it.
var ErrAnotherWriter = errors.New("turn: another writer appended to the turn")

// Options configures a [Producer]. A nil *Options, and every zero field,
// means the default.
type Options struct {
	// Recovery runs the turn's tool calls and decides its end
	// (docs/contract.md sections 13.1 and 16.3); Start authorizes the
	// effect slots of ToolSlots on it. nil: [Producer.RunToolCall] and
	// Reconcile are refused with store-unavailable, and nothing can cancel
	// the turn.
	Recovery *recovery.TurnRecovery
	// Caller is the principal the Producer acts as towards Recovery's
	// Authorizer (the host's worker or service id). The Authorizer allows
	// it, for the turn, [recovery.ActionStart] already at Start, and then
	// execute, reconcile, finish and read (End reads the stored end).
	Caller string
	// ToolSlots is the number of tool calls the turn may make: 0 means
	// [DefaultToolSlots]. A restarted Producer must use the same number.
	ToolSlots int
	// Runs, when set, registers the turn so that its cancellation
	// (Recovery's Aborter) ends Context.
	Runs *Runs
	// Cards opens and closes the turn's cards (docs/contract.md section
	// 13.2); nil: Ask and CloseCard are refused with store-unavailable.
	Cards *interactions.Resolver
	// SchemaText returns the JSON Schema text of a card's schema, put in
	// the card's dataSchemaJson (package jsonschema's Registry.SchemaJSON); nil: none.
	SchemaText func(ref interactions.SchemaRef) (string, bool)
	// MaxFrameBytes is the window's frame limit: 0 means
	// [chatprotocol.DefaultMaxFrameBytes]. Longer deltas are split under it.
	MaxFrameBytes int
	// Parser reads the retained frames of a resumed turn; nil means the
	// defaults (set its Registry when the host appends product events).
	Parser *chatprotocol.ParserOptions
	// Now stamps each envelope's at; nil means [time.Now]. A clock that
	// returns the zero time stamps none, for output that is the same on
	// every run (chatwire ingest's).
	Now func() time.Time
}

// Producer writes one turn to a [replay.Window] (docs/contract.md section
// 16): it allocates each envelope's seq and event id, stamps its at,
// enforces the lifecycle, splits long text, settles uncertain appends, and
// runs the turn's tool calls through [recovery.TurnRecovery] and its cards
// through [interactions.Resolver]. It is safe for concurrent use; its
// appends are serialized. Make one with [Start].
type Producer struct {
	w       replay.Window
	key     replay.Key
	ref     recovery.TurnRef
	rec     *recovery.TurnRecovery
	caller  string
	res     *interactions.Resolver
	schema  func(interactions.SchemaRef) (string, bool)
	slotIDs []string // tool-1 … tool-N
	now     func() time.Time
	parser  *chatprotocol.EnvelopeParser

	ctx      context.Context
	detached context.Context // ctx without its cancellation
	cancel   context.CancelCauseFunc
	release  func()
	runs     *Runs // nil without Options.Runs

	mu        sync.Mutex
	latest    int64
	status    chatprotocol.LifecycleStatus // terminal once the turn ended
	broken    error
	unsure    *chatprotocol.ChatEventEnvelope
	pruned    bool
	calls     []*call
	slab      []call // where calls live: never grown, so calls stay put
	byID      map[string]*call
	cards     map[string]cardState // by correlation id
	cardOrder []string             // the keys of cards, in the order first seen
	unknown   map[string]bool      // calls whose needs-reconciliation is on the stream
	usage     *chatprotocol.Usage
	reason    string // the terminal lifecycle's reason
	lastStep  int64  // the last step's number, 0 before the first
	openStep  int64  // the open step's number, 0 when none is open
	maxFrame  int
	overhead  int    // bytes of a delta envelope around its text, at most
	idBuf     []byte // "<turnId>:" then the seq
	atMilli   int64
	at        string
}

// Start starts key's turn on w, or resumes it (docs/contract.md section
// 16.1). With [Options].Recovery it first starts the recovery turn with
// the effect slots ([recovery.TurnRecovery.Start], idempotent). A turn the
// window has never seen gets lifecycle started as seq 1; a turn with
// frames that has not ended is resumed: the Producer reads its retained
// frames to learn its steps, tool calls and cards, and goes on at the
// window's latest seq plus one.
//
// Refusals: turn-terminated for a turn that ended; invalid-envelope for an
// empty or over-long id ([MaxTurnIDBytes]); those of
// [recovery.TurnRecovery.Start]; the window's errors. A resumed turn whose
// start the window pruned (Lower above 0) starts, but refuses
// [Producer.RunToolCall] and [Producer.Ask] with stale-cursor.
func Start(ctx context.Context, w replay.Window, key replay.Key, opts *Options) (*Producer, error) {
	if opts == nil {
		opts = &Options{}
	}
	p, err := newProducer(w, key, opts)
	if err != nil {
		return nil, err
	}
	status := recovery.TurnRunning
	if p.rec != nil {
		r, err := p.rec.Start(ctx, p.caller, p.ref, p.slotIDs)
		if err != nil {
			return nil, err
		}
		status = r.Status
	}
	b, err := w.Bounds(ctx, key)
	if err != nil {
		return nil, err
	}
	if b.Ended {
		return nil, refusal.New(refusal.CodeTurnTerminated, "", "the turn has ended")
	}
	p.ctx, p.cancel = context.WithCancelCause(context.WithoutCancel(ctx))
	p.detached = context.WithoutCancel(p.ctx)
	if b.Latest == 0 && b.Lower == 0 {
		err = p.append(ctx, &chatprotocol.LifecycleEvent{Status: chatprotocol.LifecycleStarted})
	} else {
		err = p.resume(ctx, b)
	}
	if err != nil {
		p.cancel(err)
		return nil, err
	}
	if opts.Runs != nil {
		p.runs = opts.Runs
		p.release = opts.Runs.register(p.ref, p.cancel)
	}
	if status == recovery.TurnCancelled {
		p.cancel(ErrCancelled)
	}
	return p, nil
}

// newProducer checks the ids and builds a Producer from opts.
func newProducer(w replay.Window, key replay.Key, opts *Options) (*Producer, error) {
	switch {
	case w == nil:
		return nil, errors.New("turn: Start needs a window")
	case key.ConversationID == "" || len(key.ConversationID) > 256:
		return nil, refusal.New(refusal.CodeInvalidEnvelope, "/conversationId", "a conversation id is 1 to 256 bytes")
	case key.TurnID == "" || len(key.TurnID) > MaxTurnIDBytes:
		return nil, refusal.New(refusal.CodeInvalidEnvelope, "/turnId", "a produced turn's id is 1 to "+strconv.Itoa(MaxTurnIDBytes)+" bytes")
	case opts.ToolSlots < 0:
		return nil, errors.New("turn: negative ToolSlots")
	}
	p := &Producer{
		w: w, key: key, ref: recovery.TurnRef{Conversation: key.ConversationID, Turn: key.TurnID},
		rec: opts.Recovery, caller: opts.Caller, res: opts.Cards, schema: opts.SchemaText,
		now: time.Now, parser: chatprotocol.NewEnvelopeParser(opts.Parser),
		maxFrame: opts.MaxFrameBytes, release: func() {},
	}
	slots := DefaultToolSlots
	if opts.ToolSlots > 0 {
		slots = opts.ToolSlots
	}
	p.slotIDs = defaultSlotIDs
	if slots != DefaultToolSlots {
		p.slotIDs = slotNames(slots)
	}
	if opts.Now != nil {
		p.now = opts.Now
	}
	if p.maxFrame == 0 {
		p.maxFrame = chatprotocol.DefaultMaxFrameBytes
	}
	p.idBuf = append(append(make([]byte, 0, len(key.TurnID)+17), key.TurnID...), ':')
	return p, nil
}

// measure computes, once, the overhead of a delta envelope around its
// text: the envelope with an empty delta, the largest seq and a full
// timestamp. p.mu is held.
func (p *Producer) measure() error {
	if p.maxFrame < 0 || p.overhead > 0 {
		return nil
	}
	env := chatprotocol.ChatEventEnvelope{
		ConversationID: p.key.ConversationID, TurnID: p.key.TurnID, Seq: chatprotocol.MaxSeq,
		EventID: p.eventID(chatprotocol.MaxSeq), Event: &chatprotocol.DeltaEvent{}, At: "2006-01-02T15:04:05.000Z",
	}
	b, err := env.AppendJSON(nil)
	if err != nil {
		return err
	}
	p.overhead = len(b)
	return nil
}

// slotID is the effect id of the turn's ordinal-th tool call.
func slotID(ordinal int) string { return "tool-" + strconv.Itoa(ordinal) }

// slotNames returns the slots tool-1 … tool-n.
func slotNames(n int) []string {
	ids := make([]string, n)
	for i := range ids {
		ids[i] = slotID(i + 1)
	}
	return ids
}

// defaultSlotIDs are the DefaultToolSlots slots, shared by every Producer
// and never written.
var defaultSlotIDs = slotNames(DefaultToolSlots)

// Context is the turn's context: the host runs its model loop and its
// tools under it. It does not end with Start's ctx (a client that goes
// away never cancels a turn); it ends, with cause [ErrCancelled], when the
// turn's cancellation committed and reached it through [Options].Runs.
func (p *Producer) Context() context.Context { return p.ctx }

// Key returns the turn's key.
func (p *Producer) Key() replay.Key { return p.key }

// Latest returns the seq of the turn's latest envelope this Producer knows
// landed.
func (p *Producer) Latest() int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.latest
}

// Delta appends text as the turn's next delta, as several deltas when one
// would exceed the frame limit ([replay.SplitDelta]; docs/contract.md
// section 16.1). An empty text appends nothing. Refusals: turn-terminated
// after the end; invalid-event for text that is not UTF-8; [ErrUnsettled],
// [ErrAnotherWriter], the window's errors.
func (p *Producer) Delta(ctx context.Context, text string) error {
	if text == "" {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.appendText(ctx, text, 0, func(s string) error { return p.appendDelta(ctx, s) })
}

// appendText appends text as one piece, or as several when one would
// exceed the frame limit ([replay.SplitDelta]), each through put; extra is
// what the pieces' event adds to a delta's frame, in bytes. p.mu is held.
func (p *Producer) appendText(ctx context.Context, text string, extra int, put func(piece string) error) error {
	if err := p.writable(ctx); err != nil {
		return err
	}
	if err := p.measure(); err != nil {
		return err
	}
	if p.maxFrame < 0 || 6*len(text)+p.overhead+extra <= p.maxFrame { // any text fits: 6 bytes a byte at most
		return put(text)
	}
	tmpl := p.envelope(p.latest+1, &chatprotocol.DeltaEvent{})
	pieces, err := replay.SplitDelta(tmpl, text, p.maxFrame-extra)
	if err != nil {
		return err
	}
	for _, s := range pieces {
		if err := put(s); err != nil {
			return err
		}
	}
	return nil
}

// deltaFrame is a delta envelope and its event in one allocation.
type deltaFrame struct {
	env   chatprotocol.ChatEventEnvelope
	delta chatprotocol.DeltaEvent
}

// appendDelta appends one delta; p.mu is held.
func (p *Producer) appendDelta(ctx context.Context, text string) error {
	f := &deltaFrame{delta: chatprotocol.DeltaEvent{Text: text}}
	seq := p.latest + 1
	f.env = chatprotocol.ChatEventEnvelope{ConversationID: p.key.ConversationID, TurnID: p.key.TurnID,
		EventID: p.eventID(seq), Seq: seq, Event: &f.delta, At: p.stamp()}
	return p.put(ctx, &f.env)
}

// Provenance appends a provenance event: the provider (required), model
// and request id ("" for none) of the turn's model call.
func (p *Producer) Provenance(ctx context.Context, provider, model, requestID string) error {
	return p.append(ctx, &chatprotocol.ProvenanceEvent{Provider: provider, Model: model, RequestID: requestID})
}

// SetUsage records what the turn consumed; the terminal lifecycle
// [Producer.End] writes carries the last usage set, to which the usage of
// each step ended after it adds ([Producer.FinishStep]; docs/contract.md
// sections 6.1, 16.5 and 16.7). It appends nothing.
func (p *Producer) SetUsage(u chatprotocol.Usage) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.usage = &u
}

// SetReason records why the turn ends, the terminal lifecycle's reason
// member (docs/contract.md section 6.1: free text, such as a provider's
// stop reason). It appends nothing.
func (p *Producer) SetReason(reason string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.reason = reason
}

// Emit appends an event the Producer keeps no account of: result, state,
// session, capabilities, navigate, error (one that does not end the turn)
// or a product event. A delta goes through Delta. Lifecycle, step, tool
// and card events are refused with invalid-event (/event/type): their
// methods keep the turn's rules.
func (p *Producer) Emit(ctx context.Context, ev chatprotocol.Event) error {
	switch e := ev.(type) {
	case *chatprotocol.DeltaEvent:
		return p.Delta(ctx, e.Text)
	case *chatprotocol.LifecycleEvent, *chatprotocol.StepEvent, *chatprotocol.ToolCallEvent, *chatprotocol.ToolResultEvent,
		*chatprotocol.CardEvent, *chatprotocol.CardClosedEvent:
		return refusal.New(refusal.CodeInvalidEvent, "/event/type", "a "+ev.EventType()+" event is written by its Producer method")
	}
	return p.append(ctx, ev)
}

// Interrupt appends lifecycle interrupted with reason: the turn stopped
// short, not ended (a host shutting down); a Producer started again
// resumes it (docs/contract.md section 7.4).
func (p *Producer) Interrupt(ctx context.Context, reason string) error {
	return p.append(ctx, &chatprotocol.LifecycleEvent{Status: chatprotocol.LifecycleInterrupted, Reason: reason})
}

// Flush settles an append whose outcome was unknown ([ErrUnsettled]), if
// any; it appends nothing else.
func (p *Producer) Flush(ctx context.Context) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.settlePending(ctx)
}
