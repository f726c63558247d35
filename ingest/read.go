package ingest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/Papercusp/chat-protocol-go/refusal"
	"github.com/Papercusp/chat-protocol-go/sse"
)

// ErrCut is wrapped by Read's error when the body ended inside an SSE frame
// or its reading failed: the stream was cut, and the turn failed with
// [CodeStreamCut].
var ErrCut = errors.New("ingest: the provider's stream was cut")

// Read reads body, the raw SSE stream a provider sent for one turn (kind
// says which), and drives sink to the turn's end (docs/contract.md section
// 17). It reads frame by frame with an [sse.Decoder] and never holds more
// than one frame, and across frames at most [Options.MaxBufferedBytes] of
// one tool call's arguments or of the refusal text; it stops at the provider's end (Chat's DONE sentinel,
// response.completed, response.incomplete or response.failed, message_stop,
// or a provider error event). opts may be nil.
//
// Read returns nil when it read body to that end, or to the end of its last
// whole frame, whatever the turn's outcome. It returns an error wrapping
// [ErrCut] when body ended inside a frame or its reading failed, after ending
// the turn: failed with [CodeStreamCut], or completed for a Chat stream that
// gave its finish reason; a refusal of code frame-too-large, after
// failing the turn with [CodeInvalidStream], for a frame over
// [Options.MaxFrameBytes], or for a tool call's arguments or a refusal
// text over [Options.MaxBufferedBytes] (path /event/input or
// /event/message); ctx's error, without ending the turn, when ctx is
// done (the host cancels the turn); and the Sink's error, unchanged, the
// moment the Sink returns one.
func Read(ctx context.Context, kind Kind, body io.Reader, sink Sink, opts *Options) error {
	return read(ctx, kind, body, sink, opts, false)
}

// ErrTrailing is wrapped by [ReadToEnd]'s error when body goes on after the
// turn ended: a frame with data, or bytes cut inside a frame.
var ErrTrailing = errors.New("ingest: the provider's stream goes on after the turn ended")

// ReadToEnd is Read for a body read whole, such as a recorded one
// (chatwire ingest): it makes the turn Read makes, then reads body on to
// its end. It returns an error wrapping [ErrTrailing], naming the frame,
// at the first frame with data after the turn ended (the provider's end, a
// provider error, a frame that is not its JSON) or at a body cut inside a
// frame there; comments and frames without data are nothing. Its other
// errors are Read's, or the reading's after the end.
func ReadToEnd(ctx context.Context, kind Kind, body io.Reader, sink Sink, opts *Options) error {
	return read(ctx, kind, body, sink, opts, true)
}

// read is Read, reading on after the turn ended when toEnd.
func read(ctx context.Context, kind Kind, body io.Reader, sink Sink, opts *Options, toEnd bool) error {
	m, err := NewMapper(kind, sink, opts)
	if err != nil {
		return err
	}
	limit := DefaultMaxFrameBytes
	if opts != nil && opts.MaxFrameBytes > 0 {
		limit = opts.MaxFrameBytes
	}
	dec := sse.NewDecoder(body, &sse.DecoderOptions{MaxFrameBytes: limit})
	for !m.Done() {
		if err := ctx.Err(); err != nil {
			return err
		}
		ev, err := dec.Next()
		switch {
		case err == io.EOF && dec.Truncated():
			n, _ := dec.Position()
			return m.cut(ctx, fmt.Errorf("%w: the body ended inside frame %d", ErrCut, n))
		case err == io.EOF:
			return m.End(ctx, nil)
		case errors.Is(err, refusal.ErrFrameTooLarge):
			if ferr := m.fail(ctx, CodeInvalidStream, fmt.Sprintf("a frame of the provider's stream is larger than %d bytes", limit)); ferr != nil {
				return ferr
			}
			return err
		case err != nil:
			if cerr := ctx.Err(); cerr != nil {
				return cerr
			}
			return m.cut(ctx, fmt.Errorf("%w: %w", ErrCut, err))
		case ev.Comment:
			continue
		}
		if err := m.Event(ctx, ev.Data); err != nil {
			return err
		}
	}
	if toEnd {
		return rest(dec)
	}
	return nil
}

// rest reads dec to its end once the turn has ended: nil when nothing but
// comments and frames without data follow.
func rest(dec *sse.Decoder) error {
	for {
		ev, err := dec.Next()
		n, _ := dec.Position()
		switch {
		case err == io.EOF && dec.Truncated():
			return fmt.Errorf("%w: the body ends inside frame %d", ErrTrailing, n)
		case err == io.EOF:
			return nil
		case errors.Is(err, refusal.ErrFrameTooLarge):
			return fmt.Errorf("%w: frame %d: %w", ErrTrailing, n, err)
		case err != nil:
			return err
		case !ev.Comment && len(bytes.TrimSpace(ev.Data)) > 0:
			return fmt.Errorf("%w: frame %d", ErrTrailing, n)
		}
	}
}
