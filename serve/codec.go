package serve

import (
	"context"
	"errors"
	"strconv"

	chatprotocol "github.com/Papercusp/chat-protocol-go"
	"github.com/Papercusp/chat-protocol-go/replay"
	"github.com/Papercusp/chat-protocol-go/sse"
)

// Codec turns one turn's frames into a protocol's bytes (docs/contract.md
// section 18). It is given the turn's frames in seq order from seq 1, each
// once, but for those it does not map, and an empty delta, which is no
// output in any protocol. The Engine calls it under a lock: it need not be
// safe for concurrent use.
type Codec interface {
	// Maps reports whether a frame of type typ may add output; the frames
	// of the other types are passed over unread.
	Maps(typ string) bool
	// Append appends the output of f, the frame after the last one given,
	// whose envelope is env, to dst: zero or more complete SSE frames. An
	// error ends the streams that read it.
	Append(dst []byte, f replay.Frame, env chatprotocol.ChatEventEnvelope) ([]byte, error)
	// Done reports whether the output so far ends the stream: the
	// protocol's run or message is over, and no later frame is written.
	Done() bool
}

// ParsingCodec is a [Codec] that reads its frames with a parser of its own:
// one whose registry knows the registered events it maps
// (docs/contract.md section 6.5). The frames of any other Codec are read
// by [chatprotocol.ParseEnvelope].
type ParsingCodec interface {
	Codec
	// Parser returns the parser of the Codec's frames; nil means
	// [chatprotocol.ParseEnvelope]'s.
	Parser() *chatprotocol.EnvelopeParser
}

// transcode appends c's output of f: nothing for a frame of a type c does
// not map or an empty delta. f's stored bytes are read once here, for
// every stream of the turn that shares c.
func transcode(c Codec, dst []byte, f replay.Frame) ([]byte, error) {
	if !c.Maps(f.Type) {
		return dst, nil
	}
	parse := chatprotocol.ParseEnvelope
	if pc, ok := c.(ParsingCodec); ok && pc.Parser() != nil {
		parse = pc.Parser().Parse
	}
	env, err := parse(f.Data)
	if err != nil {
		return dst, err
	}
	if d, ok := env.Event.(*chatprotocol.DeltaEvent); ok && d.Text == "" {
		return dst, nil
	}
	return c.Append(dst, f, env)
}

// output gives one stream the bytes of its frames: the stored frames as
// they are when newCodec is nil (the version-1 stream, section 10.1), else
// a Codec's output, from the turn's shared entry while it holds the
// stream's next frame and from a private Codec rebuilt from the window
// after.
type output struct {
	newCodec func() Codec
	variant  string
	shared   *entry
	private  Codec
	done     bool // the Codec's output ended the stream
}

// errGap is the error of a window suffix that is not contiguous.
var errGap = errors.New("serve: gap in the window's suffix")

// appendFrame appends the output of f, the frame after the last one the
// stream got, to dst.
func (o *output) appendFrame(ctx context.Context, e *Engine, key replay.Key, dst []byte, f replay.Frame) ([]byte, error) {
	if o.newCodec == nil {
		return sse.AppendFrame(dst, sse.Frame{ID: strconv.FormatInt(f.Seq, 10), Data: f.Data})
	}
	if o.done {
		return dst, nil
	}
	if o.private == nil {
		out, done, err := o.shared.output(e, o, f)
		if errors.Is(err, errForeign) {
			// The entry was made for an earlier turn of the same key: this
			// stream starts one of its own for the turn it reads (past
			// frame 1, that one is behind it: the stream rebuilds its own
			// Codec from the window).
			e.cache.release(o.shared, o)
			o.shared = e.cache.acquire(key, o.variant, o.newCodec, true)
			out, done, err = o.shared.output(e, o, f)
		}
		if !errors.Is(err, errBehind) {
			o.done = done
			return append(dst, out...), err
		}
		e.cache.release(o.shared, o)
		o.shared = nil
		if o.private, err = e.rebuild(ctx, key, f.Seq-1, o.newCodec); err != nil {
			return dst, err
		}
	}
	dst, err := transcode(o.private, dst, f)
	o.done = o.private.Done()
	return dst, err
}

// finished reports whether the output through cursor ends the stream: the
// turn ended at or before cursor (the version-1 stream), or the Codec's
// output did.
func (o *output) finished(b replay.Bounds, cursor int64) bool {
	if o.newCodec == nil {
		return b.Ended && cursor >= b.Latest
	}
	return o.done
}

// leave lets go of the stream's share of its turn's entry.
func (o *output) leave(e *Engine) {
	if o.shared != nil {
		e.cache.release(o.shared, o)
		o.shared = nil
	}
}

// errRetained is a rebuild's error when the window no longer holds the
// turn's first frames.
var errRetained = errors.New("serve: the window no longer holds the turn's first frames")

// rebuild returns a new Codec that has read key's frames 1 through upto.
func (e *Engine) rebuild(ctx context.Context, key replay.Key, upto int64, newCodec func() Codec) (Codec, error) {
	c := newCodec()
	var cursor int64
	for cursor < upto {
		b, frames, err := e.read(ctx, key, cursor, nil)
		if err != nil {
			return nil, err
		}
		if b.Lower > 0 {
			return nil, errRetained
		}
		if len(frames) == 0 {
			return nil, errGap
		}
		for _, f := range frames {
			if f.Seq > upto {
				return c, nil
			}
			if f.Seq != cursor+1 {
				return nil, errGap
			}
			if _, err := transcode(c, nil, f); err != nil {
				return nil, err
			}
			cursor = f.Seq
		}
	}
	return c, nil
}
