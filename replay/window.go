package replay

import (
	"context"

	chatprotocol "github.com/Papercusp/chat-protocol-go"
)

// Key names one turn's stream: the conversation and the turn, as the
// envelopes carry them (docs/contract.md section 11).
type Key struct {
	ConversationID string
	TurnID         string
}

// Frame is one retained envelope of a turn: its seq, its event type (the SSE
// event name) and its canonical JSON (ChatEventEnvelope.AppendJSON), stored
// as it was appended and resent without being parsed again. Data must not be
// modified by anyone: a window hands the same bytes to every reader.
type Frame struct {
	Seq  int64
	Type string
	Data []byte
}

// Bounds is what a window retains for a turn, reported also when it holds no
// frame (docs/contract.md section 11).
//
// Lower is the retained lower bound as a cursor: the smallest cursor a reader
// can resume from, so that frames Lower+1 through Latest are all retained.
// Latest is the seq of the turn's latest frame, 0 before the first. Ended is
// true once the turn's lifecycle reached completed, failed or cancelled: no
// frame but a late tool_result follows.
type Bounds struct {
	Lower  int64
	Latest int64
	Ended  bool
}

// Window is a turn-keyed replay window: it holds each turn's envelopes in seq
// order, serves the retained suffix after a cursor and lets a reader wait for
// what comes next (docs/contract.md section 11). Implementations may live
// outside the process (PostgreSQL); every method must be safe for concurrent
// use, and package replaytest's TestWindow is the conformance kit every
// one passes.
type Window interface {
	// Append stores env as the next frame of key's turn and returns it. It
	// refuses, with a refusal code and nothing stored: a frame of another
	// conversation or turn (foreign-frame), a seq other than Latest+1
	// (sequence-gap above, sequence-reordered at or below), a frame after
	// the end other than a late tool_result (turn-terminated), an envelope
	// that does not validate, and a frame larger than the reader's limit
	// (frame-too-large).
	Append(ctx context.Context, key Key, env *chatprotocol.ChatEventEnvelope) (Frame, error)

	// Read returns the bounds of key's turn and one page of the retained
	// suffix after cursor after: the frames after+1, after+2, … in seq
	// order, as many as fit in limit bytes of Data, and at least one when
	// after is below Latest (a frame larger than limit comes alone; a
	// limit below 1 counts as 1). A reader reads again from the last seq it
	// got until it reaches Latest, so a suffix of any length costs one page
	// of memory (docs/contract.md section 11.2). A cursor below Lower is
	// stale-cursor, one above Latest cursor-ahead, both refused with the
	// bounds: a [*CursorError] carrying them, and the same bounds returned
	// beside it ([CheckCursor] builds the refusal). A cursor equal to Latest
	// returns no frame. An unknown turn is an empty window (0, 0).
	Read(ctx context.Context, key Key, after int64, limit int) (Bounds, []Frame, error)

	// Bounds returns the bounds of key's turn, whatever retention has
	// dropped: what a writer that restarts, or lost an acknowledgement,
	// reads to learn the seq it continues at. An unknown turn is (0, 0).
	Bounds(ctx context.Context, key Key) (Bounds, error)

	// Wait blocks until key's turn holds a frame after cursor after, or has
	// ended, or ctx is done, and returns the bounds then. It returns at once
	// when such a frame was appended before the call: a reader that reads,
	// then waits, never misses a frame appended in between.
	//
	// Every method returns promptly once ctx is done, with ctx's error, even
	// while the store behind the window stalls: a stream's heartbeats and
	// status lines depend on it (docs/contract.md section 14.2).
	Wait(ctx context.Context, key Key, after int64) (Bounds, error)
}

// DefaultPageBytes is a page size for [Window.Read] that keeps a reader's
// memory small and its round trips few: 256 KiB of frame data.
const DefaultPageBytes = 256 << 10

// page returns the longest prefix of frames whose Data take at most limit
// bytes, and at least the first frame (Window.Read's page rule).
func page(frames []Frame, limit int) []Frame {
	n := 0
	for i, f := range frames {
		n += len(f.Data)
		if i > 0 && n > limit {
			return frames[:i]
		}
	}
	return frames
}
