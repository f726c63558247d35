package main

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	chatprotocol "github.com/Papercusp/chat-protocol-go"
	"github.com/Papercusp/chat-protocol-go/internal/testkit/teststream"
	"github.com/Papercusp/chat-protocol-go/legacy"
	"github.com/Papercusp/chat-protocol-go/refusal"
)

// transcript is everything a run of decodeStream shows: the sink's lines,
// the reported violations with their frame numbers, the counts, the state.
type transcript struct {
	lines      []string
	violations []string
	apps       map[string]int
	state      string
	err        string
}

// pipelined runs decodeStream on data, read through wrap.
func pipelined(t testing.TB, data []byte, o streamOptions, wrap func(io.Reader) io.Reader) transcript {
	var tr transcript
	res, err := decodeStream(wrap(bytes.NewReader(data)), o, recordingSink(&tr), func(frame int64, e *refusal.Error) {
		tr.violations = append(tr.violations, violationLine(frame, e))
	})
	return tr.finish(t, res.state, res.appEvents, err)
}

func recordingSink(tr *transcript) streamSink {
	return streamSink{
		envelope: func(env *chatprotocol.ChatEventEnvelope) error {
			js, err := env.MarshalJSON()
			tr.lines = append(tr.lines, string(js))
			return err
		},
		appEvent: func(raw []byte) error { tr.lines = append(tr.lines, "app "+string(raw)); return nil },
	}
}

func (tr transcript) finish(t testing.TB, state *chatprotocol.ChatStateV1, apps map[string]int, err error) transcript {
	js, merr := state.MarshalJSON()
	require.NoError(t, merr)
	tr.state, tr.apps = string(js), apps
	if err != nil {
		tr.err = err.Error()
	}
	return tr
}

// sequential is the reference: the same stream read, decoded, upgraded and
// applied one frame at a time in one goroutine, through the same API.
func sequential(t testing.TB, data []byte, o streamOptions) transcript {
	var tr transcript
	s := &stream{opts: o, sink: recordingSink(&tr), res: streamResult{state: chatprotocol.NewChatStateV1(o.conversation)}}
	s.report = func(frame int64, e *refusal.Error) {
		tr.violations = append(tr.violations, violationLine(frame, e))
	}
	in := bufio.NewReader(bytes.NewReader(data))
	var rd frameSource = chatprotocol.NewEnvelopeReader(in, &chatprotocol.ParserOptions{MaxFrameBytes: o.maxFrame})
	if jsonLines(in) { // the input's form, decided as the pipeline's reader stage decides it
		rd = newLineReader(in, o.maxFrame)
	}
	dialect, _ := legacyDialect(o.dialect)
	host := legacy.NewStreamHost(&legacy.StreamHostOptions{ConversationID: o.conversation, TurnID: o.turn})
	from := o.from
	refused := func(err error) error {
		if e, ok := errors.AsType[*refusal.Error](err); ok {
			return s.violation(e)
		}
		return err
	}
	frame := func() error {
		ev, err := rd.NextFrame()
		s.frame = rd.FrameNumber()
		switch {
		case err == io.EOF && rd.Truncated():
			if err := s.violation(errTruncated()); err != nil {
				return err
			}
			return io.EOF
		case err != nil:
			if err := refused(err); err != nil {
				return err
			}
			return nil
		}
		if from == fromAuto {
			if v, ok := versionOf(ev.Data); ok {
				from = v
			}
		}
		if from != fromLegacy {
			env, err := rd.ParseFrame(ev)
			if err != nil {
				return refused(err)
			}
			return s.apply(&env)
		}
		f, err := legacy.DecodeLegacyChatFrame(ev.Data, dialect)
		if err != nil {
			return refused(err)
		}
		if app, ok := f.(*legacy.AppFrame); ok && productFrame(app) {
			return s.appEvent(app.Type, app.Raw)
		}
		envs, err := legacy.UpgradeLegacyChatFrame(t.Context(), f, host)
		if err != nil {
			return refused(conversationHint(err, o.conversation != ""))
		}
		for i := range envs {
			if err := s.apply(&envs[i]); err != nil {
				return err
			}
		}
		return nil
	}
	var err error
	for err == nil {
		err = frame()
	}
	if err == io.EOF || err == errStop {
		err = nil
	}
	return tr.finish(t, s.res.state, s.res.appEvents, err)
}

// readers are the ways the fuzz feeds the stream: whole, a byte at a time
// (a batch handed on at every read), and in halves.
var readers = []func(io.Reader) io.Reader{
	func(r io.Reader) io.Reader { return r }, iotest.OneByteReader, iotest.HalfReader,
}

// capturedStreams returns the captured streams of testdata/streams, by
// file name.
func capturedStreams(tb testing.TB) map[string][]byte {
	tb.Helper()
	paths, _ := filepath.Glob(streams + "*.sse")
	if len(paths) == 0 {
		tb.Fatal("no captured streams")
	}
	out := make(map[string][]byte, len(paths))
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			tb.Fatal(err)
		}
		out[filepath.Base(p)] = data
	}
	return out
}

// TestPipelineMatchesSequential runs the captured streams and a generated
// one of many batches through both.
func TestPipelineMatchesSequential(t *testing.T) {
	var gen bytes.Buffer
	require.NoError(t, teststream.Generate(&gen, 1<<20, 3, true))
	inputs := capturedStreams(t)
	inputs["generated"], inputs["generated-cut"] = gen.Bytes(), gen.Bytes()[:gen.Len()-100]
	for name, data := range inputs {
		for _, keepGoing := range []bool{false, true} {
			o := streamOptions{from: fromAuto, dialect: "scout", maxFrame: chatprotocol.DefaultMaxFrameBytes, keepGoing: keepGoing}
			want := sequential(t, data, o)
			for i, wrap := range readers {
				if i > 0 && len(data) > 100_000 {
					continue // a byte at a time: the small streams only
				}
				assert.Equal(t, want, pipelined(t, data, o, wrap), "%s keep-going=%v reader %d", name, keepGoing, i)
			}
		}
	}
}

// FuzzPipeline compares decodeStream, whose stages run in three goroutines,
// with the sequential reference, on any bytes, every --from and dialect,
// with and without --keep-going, read whole or in pieces: the same lines,
// violations (codes, messages, frame numbers), counts and state.
func FuzzPipeline(f *testing.F) {
	for _, data := range capturedStreams(f) {
		f.Add(data, uint8(0), false)
		f.Add(data[:len(data)/2], uint8(4), true)
	}
	f.Add([]byte(strings.Repeat(v1(1, delta("a")), 3)+"data: {\"type\":\"token\",\"content\":\"x\"}\n\n"), uint8(0), true)
	f.Fuzz(func(t *testing.T, data []byte, mode uint8, keepGoing bool) {
		o := fuzzOptions(mode, keepGoing)
		want := sequential(t, data, o)
		got := pipelined(t, data, o, readers[int(mode/6)%len(readers)])
		if !assert.Equal(t, want, got) {
			t.FailNow()
		}
	})
}
