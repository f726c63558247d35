package serve

import (
	"context"
	"errors"
	"net/http"
	"os"

	"github.com/Papercusp/chat-protocol-go/observe"
	"github.com/Papercusp/chat-protocol-go/refusal"
	"github.com/Papercusp/chat-protocol-go/replay"
)

// report reports one stream's moments to the Engine's observer:
// stream.connect opens what stream.refuse, stream.end or stream.drop
// closes, and each write of frames the window handed over is a
// stream.write closed by its stream.deliver. A parked stream carries its
// report in its subscriber. With no observer every method does nothing.
type report struct {
	obs    observe.Observer
	key    replay.Key
	ctx    context.Context // the connect's context
	frames int             // frames delivered so far
	seq    int64           // the last seq delivered
	done   bool            // the end was reported, or the report moved to a subscriber
}

func (p *report) event(kind observe.Kind, phase observe.Phase) observe.Event {
	return observe.Event{Kind: kind, Phase: phase, Conversation: p.key.ConversationID, Turn: p.key.TurnID}
}

// connect reports the request for key's stream and returns r with the
// context the observer returned, so that the window's own reports (and the
// spans of a tracing observer) belong to the stream.
func (p *report) connect(obs observe.Observer, r *http.Request, key replay.Key) *http.Request {
	if obs == nil {
		return r
	}
	p.obs, p.key = obs, key
	p.ctx = obs.Observe(r.Context(), p.event(observe.StreamConnect, observe.Start))
	if p.ctx == r.Context() {
		return r // nothing to carry: no copy of the request
	}
	return r.WithContext(p.ctx)
}

// resume reports a request that resumes after cursor, in a window of
// bounds b.
func (p *report) resume(cursor int64, b replay.Bounds) {
	if p.obs == nil || cursor == 0 {
		return
	}
	e := p.event(observe.StreamResume, observe.Point)
	e.Cursor, e.Lower, e.Latest = cursor, b.Lower, b.Latest
	p.obs.Observe(p.ctx, e)
}

// refuse ends the stream with a refusal of code (with the bounds b and the
// cursor, when b is not nil) and its cause.
func (p *report) refuse(code refusal.Code, err error, cursor int64, b *replay.Bounds) {
	if p.obs == nil || p.done {
		return
	}
	p.done = true
	e := p.event(observe.StreamRefuse, observe.End)
	e.Code, e.Err, e.Cursor = code, err, cursor
	if b != nil {
		e.Lower, e.Latest = b.Lower, b.Latest
	}
	p.obs.Observe(p.ctx, e)
}

// write reports that frames are about to be written and returns the
// context their delivery is reported on; nil when there is nothing to
// report.
func (p *report) write(frames []replay.Frame) context.Context {
	if p.obs == nil || len(frames) == 0 {
		return nil
	}
	e := p.event(observe.StreamWrite, observe.Start)
	e.Count, e.Seq = len(frames), frames[len(frames)-1].Seq
	return p.obs.Observe(p.ctx, e)
}

// deliver reports the end of the write that write started for frames:
// delivered, or failed with err.
func (p *report) deliver(ctx context.Context, frames []replay.Frame, err error) {
	if ctx == nil {
		return
	}
	e := p.event(observe.StreamDeliver, observe.End)
	e.Count, e.Seq, e.Err = len(frames), frames[len(frames)-1].Seq, err
	if err == nil {
		p.frames += len(frames)
		p.seq = e.Seq
	}
	p.obs.Observe(ctx, e)
}

// close ends the stream: stream.drop when err is a write that outlasted
// WriteTimeout (a slow reader), stream.end otherwise (the turn ended, the
// client went away, the window failed, the Engine closed).
func (p *report) close(err error) {
	if p.obs == nil || p.done {
		return
	}
	p.done = true
	kind := observe.StreamEnd
	if errors.Is(err, os.ErrDeadlineExceeded) {
		kind = observe.StreamDrop
	}
	e := p.event(kind, observe.End)
	e.Count, e.Seq, e.Err = p.frames, p.seq, err
	p.obs.Observe(p.ctx, e)
}

// handOver returns the report for the subscriber that takes the stream
// over, on the connect's context without the request's cancellation, and
// leaves p with nothing more to report.
func (p *report) handOver() report {
	moved := *p
	if p.ctx != nil {
		moved.ctx = context.WithoutCancel(p.ctx) // it outlives the request
	}
	p.done = true
	return moved
}
