package turn

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strconv"

	chatprotocol "github.com/Papercusp/chat-protocol-go"
	"github.com/Papercusp/chat-protocol-go/recovery"
	"github.com/Papercusp/chat-protocol-go/refusal"
)

// ToolCall is a tool call the model asked for, which [Producer.RunToolCall]
// runs and [Producer.AnnounceToolCall] appends. ID is the wire callId: the
// provider's tool-call id, or "" for the call's effect slot (tool-k). Name
// is the tool's name (non-empty), Input its JSON input (nil: none).
type ToolCall struct {
	ID    string
	Name  string
	Input json.RawMessage
}

// ToolResult is a tool call's outcome as its tool_result carries it
// (docs/contract.md section 6.1).
type ToolResult struct {
	CallID string
	Status chatprotocol.ToolResultStatus
	Output json.RawMessage
}

// Tool runs one tool call under ctx, the turn's Context (its cancellation
// reaches the tool). It returns the call's JSON output and nil (status
// ok), or a [*ToolError] for a definite outcome other than ok. Any other
// error means the outcome is unknown: the effect then needs
// reconciliation, never a silent retry (docs/contract.md section 13.1).
type Tool func(ctx context.Context) (json.RawMessage, error)

// ToolError is a tool's definite outcome other than ok: Status error (the
// tool failed; nothing was done, or what was done is in Output) or
// cancelled (it stopped before its effect, its ctx having ended), with an
// optional JSON Output.
type ToolError struct {
	Status chatprotocol.ToolResultStatus
	Output json.RawMessage
}

// Error names the status; the text is informative only.
func (e *ToolError) Error() string { return "tool call ended with status " + string(e.Status) }

// PendingCall is a tool call on the turn's stream without a result: the
// call, and the effect slot it runs under.
type PendingCall struct {
	ToolCall
	Slot string
}

// call is one tool call on the turn's stream: its ordinal among the
// turn's tool calls (its slot is tool-ordinal), its members and its result.
type call struct {
	ordinal int
	slot    string
	id      string
	name    string
	input   json.RawMessage
	result  ToolResult // set, with a status, once its tool_result is on the stream
}

// done reports whether the call's tool_result is on the stream.
func (c *call) done() bool { return c.result.Status != "" }

// storedResult is a tool call's outcome as the recovery store keeps it
// (recovery.Result.Data), so that a restarted Producer appends the same
// tool_result.
type storedResult struct {
	Status chatprotocol.ToolResultStatus `json:"status"`
	Output json.RawMessage               `json:"output,omitempty"`
}

// RunToolCall runs one tool call through recovery (docs/contract.md section
// 16.3): it appends tool_call under a stable call id, runs tool at most
// once as the effect of the call's slot ([recovery.TurnRecovery.Execute],
// launched under the turn's Context), and appends tool_result from the
// stored result.
// The k-th tool call of a turn uses the slot tool-k, whatever the model's
// call ids; a call whose ID is already on the stream is that call again:
// its result, or, when it has none (Pending), the effect's stored result,
// never a second launch.
//
// Errors: needs-reconciliation when the outcome is unknown (lifecycle
// needs-reconciliation is appended; settle it with [Producer.Reconcile]); a
// turn-not-running refusal when the turn ended before the launch (the call
// ends cancelled); Execute's others, the call staying pending;
// unknown-effect past the slots; invalid-event for an ID on the stream
// under another name; stale-cursor on a pruned resumed turn;
// turn-terminated for a new call after the end.
func (p *Producer) RunToolCall(ctx context.Context, tc ToolCall, tool Tool) (ToolResult, error) {
	if p.rec == nil {
		return ToolResult{}, refusal.New(refusal.CodeStoreUnavailable, "", "the producer has no turn recovery (Options.Recovery)")
	}
	if tool == nil {
		return ToolResult{}, errors.New("turn: RunToolCall needs a tool")
	}
	c, done, err := p.open(ctx, tc)
	if err != nil || done != nil {
		return resultOf(done), err
	}
	ctx, stop := p.outliveCancel(ctx)
	defer stop()
	launcher := recovery.LauncherFunc(func(context.Context, recovery.EffectRef) (recovery.Execution, error) {
		return recovery.Go(p.ctx, func(ctx context.Context) (recovery.Result, error) { return encode(tool(ctx)) }), nil
	})
	res, err := p.rec.Execute(ctx, p.caller, p.effect(c), launcher)
	return p.settled(ctx, c, res, err)
}

// AnnounceToolCall appends the tool_call of tc without running it: a model
// asked for the call, and the host runs it later, or never (a recorded
// provider stream). The call takes its slot as [Producer.RunToolCall]
// would, and a later [Producer.RunToolCall] with the same ID runs it and
// appends its tool_result without a second tool_call. It needs no
// Recovery. Errors are those of [Producer.RunToolCall] before the launch.
func (p *Producer) AnnounceToolCall(ctx context.Context, tc ToolCall) error {
	_, _, err := p.open(ctx, tc)
	return err
}

// Reconcile settles a tool call whose outcome was unknown: verify looks
// the effect up in the host's own records and answers as a Tool does, and
// the verified result is stored ([recovery.TurnRecovery.Reconcile]) and
// appended as the call's tool_result, also after the turn ended.
func (p *Producer) Reconcile(ctx context.Context, callID string, verify Tool) (ToolResult, error) {
	if p.rec == nil {
		return ToolResult{}, refusal.New(refusal.CodeStoreUnavailable, "", "the producer has no turn recovery (Options.Recovery)")
	}
	p.mu.Lock()
	c := p.byID[callID]
	var done ToolResult
	if c != nil {
		done = c.result
	}
	p.mu.Unlock()
	if c == nil {
		return ToolResult{}, refusal.New(refusal.CodeUnknownCall, "/event/callId", "no tool call of the turn has this id")
	}
	if done.Status != "" {
		return done, nil
	}
	ctx, stop := p.outliveCancel(ctx)
	defer stop()
	res, err := p.rec.Reconcile(ctx, p.caller, p.effect(c), func(ctx context.Context, _ recovery.EffectRef) (recovery.Result, error) {
		return encode(verify(ctx))
	})
	return p.settled(ctx, c, res, err)
}

// Pending returns the tool calls on the turn's stream without a result,
// in order: what a restarted Producer finishes with [Producer.RunToolCall]
// (the same ID) or [Producer.Reconcile].
func (p *Producer) Pending() []PendingCall {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []PendingCall
	for _, c := range p.calls {
		if !c.done() {
			out = append(out, PendingCall{ToolCall: ToolCall{ID: c.id, Name: c.name, Input: c.input}, Slot: c.slot})
		}
	}
	return out
}

// effect is the recovery effect of c.
func (p *Producer) effect(c *call) recovery.EffectRef {
	return recovery.EffectRef{Turn: p.ref, Effect: c.slot}
}

// slot is the effect id of the turn's ordinal-th tool call.
func (p *Producer) slot(ordinal int) string {
	if ordinal <= len(p.slotIDs) {
		return p.slotIDs[ordinal-1]
	}
	return slotID(ordinal)
}

// open finds tc on the stream or appends its tool_call, and returns the
// call and, when it has one, its result.
func (p *Producer) open(ctx context.Context, tc ToolCall) (*call, *ToolResult, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := p.settlePending(ctx); err != nil {
		return nil, nil, err
	}
	if c := p.byID[tc.ID]; tc.ID != "" && c != nil {
		if c.name != tc.Name {
			return nil, nil, refusal.New(refusal.CodeInvalidEvent, "/event/name", "call "+tc.ID+" of the turn is a call of another tool")
		}
		if c.done() {
			r := c.result
			return c, &r, nil
		}
		return c, nil, nil
	}
	if err := p.writable(ctx); err != nil {
		return nil, nil, err
	}
	if p.pruned {
		return nil, nil, prunedStart()
	}
	ordinal := len(p.calls) + 1
	if ordinal > len(p.slotIDs) {
		return nil, nil, refusal.New(refusal.CodeUnknownEffect, "", "the turn has made its "+strconv.Itoa(len(p.slotIDs))+" tool calls (Options.ToolSlots)")
	}
	id := tc.ID
	if id == "" {
		id = p.slotIDs[ordinal-1]
		for p.byID[id] != nil { // a model's call id that looks like a slot
			id += "'"
		}
	}
	if err := p.put(ctx, p.envelope(p.latest+1, &chatprotocol.ToolCallEvent{CallID: id, Name: tc.Name, Input: tc.Input})); err != nil {
		return nil, nil, err
	}
	return p.byID[id], nil, nil
}

// settled appends what Execute or Reconcile decided for c: its
// tool_result, lifecycle needs-reconciliation for an unknown outcome, a
// cancelled tool_result when the turn ended before the launch.
func (p *Producer) settled(ctx context.Context, c *call, res recovery.Result, err error) (ToolResult, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if c.done() { // settled meanwhile by another call
		return c.result, nil
	}
	if werr := errors.Join(p.settlePending(ctx), ctx.Err()); werr != nil {
		return ToolResult{}, errors.Join(err, werr) // the call stays pending: RunToolCall again settles it
	}
	switch {
	case err == nil:
		out, derr := decode(res.Data)
		if derr != nil || !out.Status.Valid() {
			return ToolResult{}, refusal.Wrap(refusal.CodeNeedsReconciliation, "", "the stored result of call "+c.id+" is not a tool result", derr)
		}
		ev := &chatprotocol.ToolResultEvent{CallID: c.id, Status: out.Status, Output: out.Output}
		perr := p.put(ctx, p.envelope(p.latest+1, ev))
		if refused(perr) && len(out.Output) > 0 {
			// An output no tool_result can carry (malformed, too deep, too
			// large): the call failed, and says nothing more.
			ev = &chatprotocol.ToolResultEvent{CallID: c.id, Status: chatprotocol.ToolResultError}
			perr = p.put(ctx, p.envelope(p.latest+1, ev))
		}
		if perr != nil {
			return ToolResult{}, perr
		}
		return c.result, nil
	case errors.Is(err, refusal.ErrTurnNotRunning):
		ev := &chatprotocol.ToolResultEvent{CallID: c.id, Status: chatprotocol.ToolResultCancelled}
		return ToolResult{}, errors.Join(err, p.put(ctx, p.envelope(p.latest+1, ev)))
	case errors.Is(err, refusal.ErrNeedsReconciliation) && !p.unknown[c.id] && !p.status.Terminal():
		ev := &chatprotocol.LifecycleEvent{Status: chatprotocol.LifecycleNeedsReconciliation, Reason: "tool call " + c.id + ": outcome unknown"}
		if perr := p.put(ctx, p.envelope(p.latest+1, ev)); perr == nil {
			if p.unknown == nil {
				p.unknown = map[string]bool{}
			}
			p.unknown[c.id] = true
		}
	}
	return ToolResult{}, err
}

// outliveCancel returns a ctx that ends with ctx, except when ctx ends
// with the turn's cancellation (ErrCancelled): a tool call aborted by it
// still waits for its tool and appends its result.
func (p *Producer) outliveCancel(ctx context.Context) (context.Context, context.CancelFunc) {
	switch {
	case ctx.Done() == nil:
		return ctx, func() {}
	case ctx == p.ctx: // it ends only with the cancellation
		return p.detached, func() {}
	}
	out, cancel := context.WithCancelCause(context.WithoutCancel(ctx))
	stop := context.AfterFunc(ctx, func() {
		if cause := context.Cause(ctx); !errors.Is(cause, ErrCancelled) {
			cancel(cause)
		}
	})
	return out, func() { stop(); cancel(nil) }
}

// resultOf is *r, or the zero ToolResult.
func resultOf(r *ToolResult) ToolResult {
	if r == nil {
		return ToolResult{}
	}
	return *r
}

// refused reports whether err is the window's refusal of an envelope,
// nothing stored: not the producer's own end, not another writer.
func refused(err error) bool {
	return refusal.CodeOf(err) != "" && !errors.Is(err, ErrAnotherWriter) && !errors.Is(err, refusal.ErrTurnTerminated)
}

// encode turns a tool's answer into the stored result: ok with its
// output, a *ToolError's status and output, or, for any other error, the
// unknown outcome recovery reports as needs-reconciliation. The output is
// stored as given; one that no tool_result can carry is appended as status
// error without it (settled), from the stored bytes, so the same after a
// restart.
func encode(out json.RawMessage, err error) (recovery.Result, error) {
	status := chatprotocol.ToolResultOK
	if err != nil {
		te, ok := errors.AsType[*ToolError](err)
		if !ok || (te.Status != chatprotocol.ToolResultError && te.Status != chatprotocol.ToolResultCancelled) {
			return recovery.Result{}, err
		}
		status, out = te.Status, te.Output
	}
	data := make([]byte, 0, len(storedPrefix)+len(status)+len(storedOutput)+len(out)+2)
	data = append(append(append(data, storedPrefix...), status...), '"')
	if len(out) > 0 {
		data = append(append(data, storedOutput...), out...)
	}
	return recovery.Result{Data: append(data, '}')}, nil
}

// The stored result's form, {"status":S} or {"status":S,"output":O}: the
// JSON of storedResult, written and read without reflection.
const (
	storedPrefix = `{"status":"`
	storedOutput = `,"output":`
)

// decode reads a stored result; what encode did not write is read as
// JSON.
func decode(data []byte) (storedResult, error) {
	rest, ok := bytes.CutPrefix(data, []byte(storedPrefix))
	if i := bytes.IndexByte(rest, '"'); ok && i > 0 && bytes.HasSuffix(rest, []byte("}")) {
		r := storedResult{Status: chatprotocol.ToolResultStatus(rest[:i])}
		switch tail := rest[i+1 : len(rest)-1]; {
		case len(tail) == 0:
			return r, nil
		case bytes.HasPrefix(tail, []byte(storedOutput)):
			r.Output = json.RawMessage(tail[len(storedOutput):])
			return r, nil
		}
	}
	var r storedResult
	err := json.Unmarshal(data, &r)
	return r, err
}
