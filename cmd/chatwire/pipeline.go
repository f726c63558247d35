package main

import (
	"bufio"
	"context"
	"errors"
	"io"
	"sync"

	chatprotocol "github.com/Papercusp/chat-protocol-go"
	"github.com/Papercusp/chat-protocol-go/legacy"
	"github.com/Papercusp/chat-protocol-go/refusal"
	"github.com/Papercusp/chat-protocol-go/sse"
)

// decodeStream's work runs in three stages, each in its own goroutine, so
// that on a machine of two cores or more the stream is read and decoded
// while earlier frames are upgraded and applied:
//
//  1. the reader reads frames (SSE framing, or JSON lines: lines.go),
//     decides the stream's version, and decodes each frame: a legacy frame by legacy.DecodeLegacyChatFrame,
//     a version-1 frame by EnvelopeReader.ParseFrame;
//  2. the upgrader upgrades the legacy frames, in order, through the
//     stream's legacy.StreamHost;
//  3. decodeStream's own goroutine applies the envelopes to the state,
//     hands them to the sink, and reports the violations.
//
// Every stage handles the frames in stream order, and only the last one
// reports, counts and prints, so the output and the frame numbers are
// those of one goroutine doing it all. The frames travel in batches of at
// most batchFrames frames and batchBytes bytes of frame data, so the
// stages meet once per batch and the memory in flight is bounded whatever
// the stream's length. A batch is handed on early, whatever its size, when
// the reader is about to read its input, which may wait (flushingReader,
// under a buffer of readSize bytes so that it reads, and hands on, rarely):
// a live stream's frames are printed as they come.
const (
	batchFrames = 1024
	batchBytes  = 256 << 10
	readSize    = 256 << 10
)

// item is one frame of the stream on its way through the stages.
type item struct {
	frame   int64          // the frame's number, as EnvelopeReader.Frame counts it
	refusal *refusal.Error // the frame's violation, reported by the last stage
	err     error          // an error that is not a violation: the stream ends there
	old     legacy.Frame   // a legacy frame, until the upgrader has upgraded it
	app     *legacy.AppFrame
	envs    []chatprotocol.ChatEventEnvelope // the envelope of a version-1 frame, or those of an upgraded legacy frame, in the batch's envs
}

// batch is the frames the stages hand on at once, and the envelopes they
// decode to: the items' envs are parts of envs, so that a batch costs one
// slice of envelopes, reused with the batch, instead of one per frame.
type batch struct {
	items []item
	envs  []chatprotocol.ChatEventEnvelope
}

// pipeline links the stages. done is closed when the last stage stops
// before the end of the stream (a violation without --keep-going, a sink
// error): the other stages then stop at their next hand-over.
type pipeline struct {
	decoded  chan *batch // reader -> upgrader
	upgraded chan *batch // upgrader -> last stage
	free     chan *batch // batches the last stage is done with, for reuse
	done     chan struct{}
	stopOnce sync.Once
}

// errStopped is what the input returns to the reader once the last stage
// has stopped.
var errStopped = errors.New("chatwire: the stream's last stage stopped")

// startPipeline starts the reader and the upgrader on in.
func startPipeline(in io.Reader, o streamOptions) *pipeline {
	p := &pipeline{
		decoded:  make(chan *batch, 2),
		upgraded: make(chan *batch, 2),
		free:     make(chan *batch, 8),
		done:     make(chan struct{}),
	}
	dialect, _ := legacyDialect(o.dialect) // checked with the flags
	r := &frameReader{p: p, from: o.from, dialect: dialect, maxFrame: o.maxFrame}
	r.input = bufio.NewReaderSize(&flushingReader{r: r, in: in}, readSize)
	u := &upgrader{p: p, host: legacy.NewStreamHost(&legacy.StreamHostOptions{ConversationID: o.conversation, TurnID: o.turn}), givenConversation: o.conversation != ""}
	go r.run()
	go u.run()
	return p
}

// stop tells the reader and the upgrader that no more batches are
// wanted. The upgrader returns at once; the reader returns at its next
// hand-over, or when its input next returns from a read.
func (p *pipeline) stop() { p.stopOnce.Do(func() { close(p.done) }) }

// send hands b to out, unless the last stage has stopped.
func (p *pipeline) send(out chan<- *batch, b *batch) bool {
	select {
	case out <- b:
		return true
	case <-p.done:
		return false
	}
}

// recycle gives a batch the last stage is done with back for reuse. Its
// items and envelopes are overwritten as it fills again, not cleared: what
// they still hold until then is at most a few batches.
func (p *pipeline) recycle(b *batch) {
	b.items, b.envs = b.items[:0], b.envs[:0]
	select {
	case p.free <- b:
	default:
	}
}

// newBatch returns an empty batch.
func (p *pipeline) newBatch() *batch {
	select {
	case b := <-p.free:
		return b
	default:
		return &batch{items: make([]item, 0, batchFrames), envs: make([]chatprotocol.ChatEventEnvelope, 0, batchFrames)}
	}
}

// frameReader is the first stage.
type frameReader struct {
	p        *pipeline
	input    *bufio.Reader
	maxFrame int
	rd       frameSource // the SSE stream or JSON lines, as the input's first byte says
	from     string      // the version decided: fromLegacy or fromV1, or fromAuto until the first frame decides
	dialect  legacy.Dialect
	batch    *batch
	bytes    int // the frame data in batch
	stopped  bool
}

func (r *frameReader) run() {
	defer close(r.p.decoded)
	r.batch = r.p.newBatch()
	if jsonLines(r.input) {
		r.rd = newLineReader(r.input, r.maxFrame)
	} else {
		r.rd = chatprotocol.NewEnvelopeReader(r.input, &chatprotocol.ParserOptions{MaxFrameBytes: r.maxFrame})
	}
	for !r.stopped {
		more := r.next()
		if !more || len(r.batch.items) == batchFrames || r.bytes >= batchBytes {
			r.flush()
		}
		if !more {
			return
		}
	}
}

// flush hands the batch to the upgrader, if it holds any frame.
func (r *frameReader) flush() {
	if len(r.batch.items) == 0 || r.stopped {
		return
	}
	if !r.p.send(r.p.decoded, r.batch) {
		r.stopped = true
		return
	}
	r.batch, r.bytes = r.p.newBatch(), 0
}

// next reads the next frame into the batch; more is false at the end of
// the stream or after an error that ends it.
func (r *frameReader) next() (more bool) {
	ev, err := r.rd.NextFrame()
	it := item{frame: r.rd.FrameNumber()}
	switch {
	case err == io.EOF:
		if !r.rd.Truncated() {
			return false
		}
		it.refusal, more = errTruncated(), false
	case err != nil:
		setErr(&it, err) // a frame the framing refuses, or the input failing
		more = it.err == nil
	default:
		r.decode(&it, ev)
		r.bytes += len(ev.Data)
		more = true
	}
	r.batch.items = append(r.batch.items, it)
	return more
}

// decode reads one data frame by the stream's version.
func (r *frameReader) decode(it *item, ev sse.Event) {
	if r.from == fromAuto {
		if v, ok := versionOf(ev.Data); ok {
			r.from = v
		}
	}
	if r.from == fromLegacy {
		f, err := legacy.DecodeLegacyChatFrame(ev.Data, r.dialect)
		switch f := f.(type) {
		case nil:
			setErr(it, err)
		case *legacy.AppFrame:
			if productFrame(f) {
				it.app = f
			} else {
				it.old = f // the upgrade refuses it
			}
		default:
			it.old = f
		}
		return
	}
	// Version 1, or a frame that tells neither (not a JSON object): the
	// envelope parser says what is wrong with it.
	env, err := r.rd.ParseFrame(ev)
	if err != nil {
		setErr(it, err)
		return
	}
	start := len(r.batch.envs)
	r.batch.envs = append(r.batch.envs, env)
	it.envs = r.batch.envs[start:len(r.batch.envs):len(r.batch.envs)]
}

// conversationHint gives the refusal of a frame that came before the
// session frame, when --conversation was not given, a message that says how
// to give one; code and path stay.
func conversationHint(err error, given bool) error {
	e, ok := errors.AsType[*refusal.Error](err)
	if !ok || given || e.Code != refusal.CodeInvalidEnvelope || e.Path != "/conversationId" {
		return err
	}
	return &refusal.Error{Code: e.Code, Path: e.Path,
		Message: "no conversation id: the stream does not begin with a session frame; give one with --conversation ID"}
}

// setErr records err, a refusal of the frame or an error that ends the
// stream.
func setErr(it *item, err error) {
	if e, ok := errors.AsType[*refusal.Error](err); ok {
		it.refusal = e
		return
	}
	it.err = err
}

// flushingReader is the reader's input: before each read, which may wait
// for more input, it hands the frames read so far to the next stage.
type flushingReader struct {
	r  *frameReader
	in io.Reader
}

func (f *flushingReader) Read(p []byte) (int, error) {
	f.r.flush()
	if f.r.stopped {
		return 0, errStopped
	}
	return f.in.Read(p)
}

// upgrader is the second stage: it owns the legacy host, whose seqs and
// tool call ordinals count the frames in order.
type upgrader struct {
	p    *pipeline
	host *legacy.StreamHost
	// givenConversation is whether --conversation named the conversation;
	// without it, the session frame must come first.
	givenConversation bool
}

func (u *upgrader) run() {
	defer close(u.p.upgraded)
	for {
		var b *batch
		select {
		case next, ok := <-u.p.decoded:
			if !ok {
				return
			}
			b = next
		case <-u.p.done:
			return
		}
		for i := range b.items {
			it := &b.items[i]
			if it.old == nil {
				continue
			}
			start := len(b.envs)
			envs, err := legacy.AppendUpgradedLegacyChatFrame(context.Background(), b.envs, it.old, u.host) // a StreamHost: no I/O to cancel
			it.old = nil
			if err != nil {
				setErr(it, conversationHint(err, u.givenConversation))
				continue
			}
			b.envs, it.envs = envs, envs[start:len(envs):len(envs)]
		}
		if !u.p.send(u.p.upgraded, b) {
			return
		}
	}
}
