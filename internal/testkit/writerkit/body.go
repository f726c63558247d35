package writerkit

import (
	"bytes"
	"errors"
	"io"
	"sync"
	"testing"
	"time"
)

// HeartbeatLine is the line of the heartbeat comment every protocol sends
// while its stream is idle (docs/contract.md section 10.1).
const HeartbeatLine = ": heartbeat"

// BodyReader reads a response body on a goroutine of its own, keeping
// every byte and the time each heartbeat comment line arrived, so that a
// test can wait for what it expects with a deadline. Its methods are safe
// for concurrent use.
type BodyReader struct {
	mu     sync.Mutex
	moved  chan struct{} // closed and replaced whenever something arrived
	text   []byte
	lines  int // the bytes of text already split into lines
	beats  []time.Time
	ended  bool
	endErr error // nil for a clean end (io.EOF)
}

// ReadBody starts reading body, which the reader closes at its end.
func ReadBody(body io.ReadCloser) *BodyReader {
	b := &BodyReader{moved: make(chan struct{})}
	go b.run(body)
	return b
}

func (b *BodyReader) run(body io.ReadCloser) {
	defer body.Close()
	buf := make([]byte, 32<<10)
	for {
		n, err := body.Read(buf)
		now := time.Now()
		b.mu.Lock()
		b.text = append(b.text, buf[:n]...)
		for {
			i := bytes.IndexByte(b.text[b.lines:], '\n')
			if i < 0 {
				break
			}
			if string(bytes.TrimSuffix(b.text[b.lines:b.lines+i], []byte("\r"))) == HeartbeatLine {
				b.beats = append(b.beats, now)
			}
			b.lines += i + 1
		}
		if err != nil {
			b.ended = true
			if !errors.Is(err, io.EOF) {
				b.endErr = err
			}
		}
		close(b.moved)
		b.moved = make(chan struct{})
		b.mu.Unlock()
		if err != nil {
			return
		}
	}
}

// Await waits until done holds for what was read so far, or the body
// ended without it, or d passed; it reports whether done held.
func (b *BodyReader) Await(d time.Duration, done func(text []byte, beats []time.Time) bool) bool {
	timer := time.NewTimer(d)
	defer timer.Stop()
	for {
		b.mu.Lock()
		ok, ended, moved := done(b.text, b.beats), b.ended, b.moved
		b.mu.Unlock()
		if ok || ended {
			return ok
		}
		select {
		case <-moved:
		case <-timer.C:
			return false
		}
	}
}

// AwaitText waits until the body holds s, or fails t after d.
func (b *BodyReader) AwaitText(t testing.TB, s string, d time.Duration, what string) {
	t.Helper()
	if !b.Await(d, func(text []byte, _ []time.Time) bool { return bytes.Contains(text, []byte(s)) }) {
		t.Fatalf("%s: the body does not hold %q within %v (read %d bytes, ended %v)", what, s, d, b.Len(), b.endedText())
	}
}

// AwaitBeats waits until n heartbeat comments have arrived, or fails t
// after d.
func (b *BodyReader) AwaitBeats(t testing.TB, n int, d time.Duration, what string) {
	t.Helper()
	if !b.Await(d, func(_ []byte, beats []time.Time) bool { return len(beats) >= n }) {
		t.Fatalf("%s: %d heartbeats do not arrive within %v (got %d, ended %v)", what, n, d, len(b.Beats()), b.endedText())
	}
}

// End waits for the body's end, at most d: ended false when it has not
// ended by then, else err nil for a clean end and the read's error for a
// broken one.
func (b *BodyReader) End(d time.Duration) (ended bool, err error) {
	b.Await(d, func([]byte, []time.Time) bool { return false }) // returns at the end, or after d
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.ended, b.endErr
}

// Len returns the body bytes read so far.
func (b *BodyReader) Len() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return int64(len(b.text))
}

// Text returns a copy of the body read so far.
func (b *BodyReader) Text() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return string(b.text)
}

// Beats returns the arrival times of the heartbeat comments so far.
func (b *BodyReader) Beats() []time.Time {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]time.Time(nil), b.beats...)
}

// endedText describes how the body stands, for a failure message.
func (b *BodyReader) endedText() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	switch {
	case !b.ended:
		return "no"
	case b.endErr == nil:
		return "cleanly"
	}
	return "with " + b.endErr.Error()
}
