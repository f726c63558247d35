package chatprotocol

import (
	"errors"
	"io"
	"math"
	"strconv"
	"time"

	"github.com/Papercusp/chat-protocol-go/refusal"

	"github.com/Papercusp/chat-protocol-go/sse"
)

// EnvelopeFrame returns the SSE frame of a version-1 envelope
// (docs/contract.md section 10.1): ID is the decimal seq and Data the
// canonical JSON of AppendJSON; Event is empty, so that every envelope
// dispatches as an EventSource "message" and the event type is read from
// the data. Write it with an [sse.Encoder] or an [sse.Writer]. EnvelopeFrame
// returns the refusals of AppendJSON, and then a zero Frame.
func EnvelopeFrame(env *ChatEventEnvelope) (sse.Frame, error) {
	data, err := env.AppendJSON(nil)
	if err != nil {
		return sse.Frame{}, err
	}
	return sse.Frame{ID: strconv.FormatInt(env.Seq, 10), Data: data}, nil
}

// EnvelopeReader reads version-1 envelopes from an SSE stream
// (docs/contract.md sections 5 and 10): it decodes frames with an
// [sse.Decoder], skips comment-only frames and heartbeats, and parses the
// data of every other frame with an [EnvelopeParser].
//
// Size: the data of one frame may hold at most [ParserOptions.MaxFrameBytes]
// bytes (1 MiB by default), the envelope's own limit; the SSE frame around
// it, with its field names and line ends, may take twice that plus 4 KiB
// before the decoder refuses it. Either refusal is frame-too-large, and
// memory stays within a small multiple of the bound.
//
// A client that reconnects sends LastEventID as Last-Event-ID and waits Retry
// before it does (docs/contract.md section 10).
//
// An EnvelopeReader is not safe for concurrent use. The zero EnvelopeReader
// is not usable: make one with [NewEnvelopeReader].
type EnvelopeReader struct {
	dec    *sse.Decoder
	parser *EnvelopeParser
	frame  int64
}

// NewEnvelopeReader returns a reader of the SSE stream r whose frames are
// parsed with opts (nil means the defaults of [ParseEnvelope]). A negative
// MaxFrameBytes lifts the limit on data and on SSE frames alike, so memory
// is then bounded only by the stream.
func NewEnvelopeReader(r io.Reader, opts *ParserOptions) *EnvelopeReader {
	p := NewEnvelopeParser(opts)
	bound := math.MaxInt
	if p.maxFrame >= 0 && p.maxFrame <= (math.MaxInt-4096)/2 {
		bound = 2*p.maxFrame + 4096
	}
	return &EnvelopeReader{dec: sse.NewDecoder(r, &sse.DecoderOptions{MaxFrameBytes: bound}), parser: p}
}

// NextFrame returns the next frame that carries chat data: an event that is
// neither a comment-only frame nor a heartbeat ([sse.EventHeartbeat]). It is
// the first half of Next, for a caller that reads frames of another version
// too (a legacy adapter); the frame is not parsed. Its Data is valid only
// until the next call to NextFrame or Next.
//
// It returns [io.EOF] at the end of the stream (see Truncated), a refusal of
// code frame-too-large for a frame whose data exceeds MaxFrameBytes or
// whose SSE frame exceeds the decoder's bound, or the reader's error. After
// a refusal the reader can go on with the next frame; a reader's error is
// returned again by every later call. Frame tells which frame an error is
// about.
func (r *EnvelopeReader) NextFrame() (sse.Event, error) {
	for {
		ev, err := r.dec.Next()
		if err != nil {
			if _, ok := errors.AsType[*refusal.Error](err); ok || r.dec.Truncated() {
				r.frame, _ = r.dec.Position()
			}
			return sse.Event{}, err
		}
		r.frame = ev.Frame
		if ev.Comment || ev.Type == sse.EventHeartbeat {
			continue
		}
		if r.parser.maxFrame >= 0 && len(ev.Data) > r.parser.maxFrame {
			return sse.Event{}, refusef(refusal.CodeFrameTooLarge, "", "frame data of %d bytes exceeds the limit of %d", len(ev.Data), r.parser.maxFrame)
		}
		return ev, nil
	}
}

// Next reads the next envelope. Besides the errors of NextFrame, it returns
// the refusals of [EnvelopeParser.Parse] for the frame's data, and
// invalid-frame (path /event) for a frame whose SSE event name is neither
// absent ("message") nor the envelope's event type, since an EventSource
// client dispatches on that name (docs/contract.md section 10). The id line
// is not checked against the seq: ids carry over from frame to frame. After a
// refusal, calling Next again goes on with the next frame.
func (r *EnvelopeReader) Next() (ChatEventEnvelope, error) {
	ev, err := r.NextFrame()
	if err != nil {
		return ChatEventEnvelope{}, err
	}
	return r.ParseFrame(ev)
}

// ParseFrame is the second half of Next: it parses the data of ev, a frame
// NextFrame returned, with the reader's parser, and checks its SSE event
// name, with the refusals Next documents.
func (r *EnvelopeReader) ParseFrame(ev sse.Event) (ChatEventEnvelope, error) {
	env, err := r.parser.Parse(ev.Data)
	if err != nil {
		return ChatEventEnvelope{}, err
	}
	if ev.Type != sse.EventMessage && ev.Type != env.Event.EventType() {
		return ChatEventEnvelope{}, refusef(refusal.CodeInvalidFrame, "/event", "SSE event name %q is not the event type %q", ev.Type, env.Event.EventType())
	}
	return env, nil
}

// FrameNumber returns the 1-based number of the frame that the last call to Next
// or NextFrame returned or refused, counting every frame of the stream
// (comments and heartbeats included), or 0 before the first; once [io.EOF]
// is returned with Truncated true, the frame the end of the stream cut.
// Use it to place an error: "frame N".
func (r *EnvelopeReader) FrameNumber() int64 { return r.frame }

// Truncated reports, once Next has returned [io.EOF], whether the stream ended
// inside a frame: bytes after the last blank line that were dropped, as the
// WHATWG rules require (docs/contract.md section 10).
func (r *EnvelopeReader) Truncated() bool { return r.dec.Truncated() }

// LastEventID returns the stream's last event id, as the [sse.Decoder] keeps it
// (docs/contract.md section 10): the value of the last id line of a frame
// read whole, or "" before the first (and after an empty one). A client that
// reconnects sends it as the Last-Event-ID header, and the host replays the
// frames after it (docs/contract.md section 11); for version 1 the id is the
// decimal seq of the frame's envelope.
//
// It counts every frame read whole, including one Next refused (its data
// did not parse or apply): a client that stops at a refusal and reconnects
// with this id does not get that frame again. Such a client resumes from
// the seq of the last envelope it applied instead. A new [EnvelopeReader]
// starts with "": a client keeps the id it sent until the new stream
// carries one.
func (r *EnvelopeReader) LastEventID() string { return r.dec.LastEventID() }

// Retry returns the reconnection delay the stream last asked for with a retry
// line (milliseconds on the wire, docs/contract.md section 10), and whether
// it asked for any: the time a client waits before it reconnects. A value too
// large for a [time.Duration] is ignored, as the [sse.Decoder] ignores it.
func (r *EnvelopeReader) Retry() (time.Duration, bool) { return r.dec.Retry() }
