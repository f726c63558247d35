package sse

import (
	"io"
)

// Encoder writes frames to an [io.Writer], one Write call per frame, in the
// format of [AppendFrame] (docs/contract.md section 10). It keeps one buffer,
// grown to the largest frame written, so writing does not allocate once it
// has warmed up.
//
// An Encoder is not safe for concurrent use; Writer is the goroutine-safe
// form for HTTP responses. The zero Encoder is not usable: make one with
// [NewEncoder].
type Encoder struct {
	w   io.Writer
	buf []byte
}

// NewEncoder returns an Encoder writing to w. It writes nothing itself.
func NewEncoder(w io.Writer) *Encoder {
	return &Encoder{w: w}
}

// Encode writes f. It returns the refusal of [AppendFrame]
// ([refusal.ErrInvalidFrame]) without writing anything, the error of the
// underlying Write, or [io.ErrShortWrite] when Write wrote less than the frame
// without an error.
func (e *Encoder) Encode(f Frame) error {
	buf, err := AppendFrame(e.buf[:0], f)
	if err != nil {
		return err
	}
	return e.write(buf)
}

// Comment writes a comment frame (see [AppendComment]). It returns the error
// of the underlying Write, or [io.ErrShortWrite].
func (e *Encoder) Comment(text string) error {
	return e.write(AppendComment(e.buf[:0], text))
}

// Heartbeat writes a heartbeat frame whose tsMs is tsMs, in Unix epoch
// milliseconds (see [AppendHeartbeat]). It returns the error of the
// underlying Write, or [io.ErrShortWrite].
func (e *Encoder) Heartbeat(tsMs int64) error {
	return e.write(AppendHeartbeat(e.buf[:0], tsMs))
}

func (e *Encoder) write(buf []byte) error {
	e.buf = buf
	n, err := e.w.Write(buf)
	if err != nil {
		return err
	}
	if n < len(buf) {
		return io.ErrShortWrite
	}
	return nil
}
