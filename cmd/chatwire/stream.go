package main

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"unicode/utf8"

	chatprotocol "github.com/Papercusp/chat-protocol-go"
	"github.com/Papercusp/chat-protocol-go/refusal"
)

// The values of --from.
const (
	fromAuto   = "auto"
	fromLegacy = "legacy0"
	fromV1     = "v1"
)

// streamOptions are the flags decode and blocks share.
type streamOptions struct {
	from         string // fromAuto, fromLegacy or fromV1
	dialect      string // the legacy dialect: "scout" or "papercusp"
	conversation string // the conversation id, "" for the session frame's (legacy) or any (v1)
	turn         string // the legacy turn id, "" for "turn-1"
	maxFrame     int    // the largest frame data, in bytes
	keepGoing    bool
}

// streamFlags declares the shared flags on fs, with their usage lines.
func streamFlags(fs *flag.FlagSet, o *streamOptions) {
	fs.StringVar(&o.from, "from", fromAuto, "the stream's version: auto, legacy0 or v1")
	fs.StringVar(&o.dialect, "dialect", "scout", "the vocabulary of a legacy0 stream: scout or papercusp")
	fs.StringVar(&o.conversation, "conversation", "", "the conversation id (legacy0: else the session frame's sessionId; v1: refuse frames of any other)")
	fs.StringVar(&o.turn, "turn", "", "the turn id of a legacy0 stream (default \"turn-1\")")
	fs.IntVar(&o.maxFrame, "max-frame", chatprotocol.DefaultMaxFrameBytes, "the largest frame accepted, in bytes of its data")
	fs.BoolVar(&o.keepGoing, "keep-going", false, "report every violation and skip the bad frames, instead of stopping at the first")
}

// check refuses option values no stream could satisfy.
func (o *streamOptions) check() error {
	switch o.from {
	case fromAuto, fromLegacy, fromV1:
	default:
		return fmt.Errorf("--from %q: want auto, legacy0 or v1", o.from)
	}
	if _, ok := legacyDialect(o.dialect); !ok {
		return fmt.Errorf("--dialect %q: want scout or papercusp", o.dialect)
	}
	if o.maxFrame <= 0 {
		return fmt.Errorf("--max-frame %d: want a positive number of bytes", o.maxFrame)
	}
	for name, id := range map[string]string{"--conversation": o.conversation, "--turn": o.turn} {
		if len(id) > 256 || !utf8.ValidString(id) {
			return fmt.Errorf("%s: an id is valid UTF-8 of at most 256 bytes", name)
		}
	}
	return nil
}

// parseStreamCommand parses the arguments of the stream subcommand name
// (decode, blocks): the shared flags, those more declares, and at most one
// FILE or "-" (stdin, the default), flags and input in any order. When done
// is true the command is over with exit status status: the usage text was
// asked for (printed to stdout) or the arguments are wrong (printed to
// stderr with the usage text).
func parseStreamCommand(name, usage string, args []string, stdout, stderr io.Writer, more func(*flag.FlagSet)) (input string, o streamOptions, status int, done bool) {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	streamFlags(fs, &o)
	if more != nil {
		more(fs)
	}
	input, err := parseStreamArgs(fs, args)
	if err == flag.ErrHelp {
		fmt.Fprint(stdout, usage)
		return "", o, exitOK, true
	}
	if err == nil {
		err = o.check()
	}
	if err != nil {
		fmt.Fprintf(stderr, "chatwire %s: %v\n%s", name, err, usage)
		return "", o, exitUsage, true
	}
	return input, o, exitOK, false
}

// parseStreamArgs parses the arguments of a stream subcommand: flags
// anywhere, then at most one FILE or "-". The error is a usage error.
func parseStreamArgs(fs *flag.FlagSet, args []string) (input string, err error) {
	var operands []string
	for {
		if err := fs.Parse(args); err != nil {
			return "", err
		}
		if fs.NArg() == 0 {
			break
		}
		operands = append(operands, fs.Arg(0))
		args = fs.Args()[1:]
	}
	if len(operands) > 1 {
		return "", fmt.Errorf("one input at most, got %q", operands)
	}
	if len(operands) == 0 {
		return "-", nil
	}
	return operands[0], nil
}

// openInput opens FILE, or returns stdin for "-".
func openInput(name string, stdin io.Reader) (io.ReadCloser, error) {
	if name == "-" {
		return io.NopCloser(stdin), nil
	}
	return os.Open(name)
}

// streamSink receives what a stream decodes to, in stream order. A nil
// function means the command does not print that kind of item.
type streamSink struct {
	envelope func(env *chatprotocol.ChatEventEnvelope) error // an envelope the state accepted, valid only during the call
	appEvent func(raw []byte) error                          // a legacy product frame, compact JSON
}

// streamResult is what decodeStream found.
type streamResult struct {
	state      *chatprotocol.ChatStateV1
	violations int
	// appEvents counts the legacy product frames by type.
	appEvents map[string]int
}

// summaryTypes is the most product types appEventSummary names; the
// others are counted, so that the line stays short whatever the stream.
const summaryTypes = 20

// appEventSummary is the stderr line that counts the product frames, or
// "" when there were none. printed tells whether they were printed. It
// names the summaryTypes most frequent types, most frequent first (ties
// by name), with their counts, then "and N more types".
func (r *streamResult) appEventSummary(printed bool) string {
	if len(r.appEvents) == 0 {
		return ""
	}
	type count struct {
		typ string
		n   int
	}
	n, counts := 0, make([]count, 0, len(r.appEvents))
	for t, c := range r.appEvents {
		n += c
		counts = append(counts, count{t, c})
	}
	slices.SortFunc(counts, func(a, b count) int { return cmp.Or(cmp.Compare(b.n, a.n), strings.Compare(a.typ, b.typ)) })
	types := make([]string, 0, min(len(counts), summaryTypes)+1)
	for _, c := range counts[:min(len(counts), summaryTypes)] {
		types = append(types, fmt.Sprintf("%s: %d", oneLine(c.typ), c.n))
	}
	if more := len(counts) - summaryTypes; more > 0 {
		types = append(types, fmt.Sprintf("and %d more type%s", more, plural(more)))
	}
	what := "skipped: they are not part of the version-1 state"
	if printed {
		what = `printed as {"appEvent": FRAME} lines`
	}
	return fmt.Sprintf("chatwire: %d product event%s (%s) %s", n, plural(n), strings.Join(types, ", "), what)
}

// plural is the "s" of a count other than 1.
func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// errTruncated is the violation of a stream that ends inside a frame.
func errTruncated() *refusal.Error {
	return &refusal.Error{Code: refusal.CodeInvalidFrame, Message: "the stream ends inside this frame, before the blank line that ends it, so an event-stream reader drops it (docs/contract.md section 10)"}
}

// errStop ends decodeStream at the first violation without --keep-going.
var errStop = errors.New("stopped at the first violation")

// stream is one run of decodeStream: its last stage (see pipeline.go),
// which applies the envelopes, hands them to the sink and reports the
// violations.
type stream struct {
	opts    streamOptions
	sink    streamSink
	report  func(frame int64, err *refusal.Error)
	res     streamResult
	compact bytes.Buffer
	frame   int64 // the number of the frame at hand, for reports
}

// decodeStream reads the SSE stream in as options say: frames are read as
// version 1 or upgraded from legacy0, applied to a ChatStateV1 and handed
// to sink. Every contract violation goes to report with its frame number;
// without --keep-going the first one ends the stream. The error is
// non-nil only when in cannot be read or the sink fails, and is then not a
// violation. sink and report are called from the calling goroutine only,
// in stream order. When the stream ends early, in may still be read once
// more by the reader stage, which then stops.
func decodeStream(in io.Reader, o streamOptions, sink streamSink, report func(frame int64, err *refusal.Error)) (streamResult, error) {
	s := &stream{
		opts:   o,
		sink:   sink,
		report: report,
		res:    streamResult{state: chatprotocol.NewChatStateV1(o.conversation)},
	}
	p := startPipeline(in, o)
	err := s.consume(p)
	p.stop()
	if err == errStop {
		err = nil
	}
	return s.res, err
}

// consume takes the frames from the upgrader, in stream order.
func (s *stream) consume(p *pipeline) error {
	for b := range p.upgraded {
		for i := range b.items {
			if err := s.item(&b.items[i]); err != nil {
				return err
			}
		}
		p.recycle(b)
	}
	return nil
}

// item applies, counts or reports one frame.
func (s *stream) item(it *item) error {
	s.frame = it.frame
	switch {
	case it.err != nil:
		return it.err
	case it.refusal != nil:
		return s.violation(it.refusal)
	case it.app != nil:
		return s.appEvent(it.app.Type, it.app.Raw)
	}
	for i := range it.envs {
		if err := s.apply(&it.envs[i]); err != nil {
			return err
		}
	}
	return nil
}

// versionOf tells the version of a stream from one frame's data: v1 for a
// JSON object with a schemaVersion member at its top level, whatever its
// value (the parser then checks it), legacy0 for an object without one;
// ok is false for data that is not one JSON object.
func versionOf(data []byte) (string, bool) {
	var top map[string]json.RawMessage
	if json.Unmarshal(data, &top) != nil || top == nil {
		return "", false
	}
	if _, ok := top["schemaVersion"]; ok {
		return fromV1, true
	}
	return fromLegacy, true
}

// apply folds an envelope into the state and hands it to the sink.
func (s *stream) apply(env *chatprotocol.ChatEventEnvelope) error {
	if err := s.res.state.Apply(*env); err != nil {
		return s.refused(err)
	}
	if s.sink.envelope != nil {
		return s.sink.envelope(env)
	}
	return nil
}

// appEvent counts a legacy product frame and hands it to the sink as
// compact JSON.
func (s *stream) appEvent(typ string, raw []byte) error {
	if s.res.appEvents == nil {
		s.res.appEvents = map[string]int{}
	}
	s.res.appEvents[typ]++
	if s.sink.appEvent == nil {
		return nil
	}
	s.compact.Reset()
	if err := json.Compact(&s.compact, raw); err != nil {
		return s.violation(&refusal.Error{Code: refusal.CodeInvalidEvent, Message: "a product frame that is not JSON", Err: err})
	}
	return s.sink.appEvent(s.compact.Bytes())
}

// refused reports err, a refusal of the current frame; any other error is
// returned as it is.
func (s *stream) refused(err error) error {
	if e, ok := errors.AsType[*refusal.Error](err); ok {
		return s.violation(e)
	}
	return err
}

// violation reports a refusal of the current frame, and returns errStop
// unless the stream goes on.
func (s *stream) violation(e *refusal.Error) error {
	s.res.violations++
	s.report(s.frame, e)
	if !s.opts.keepGoing {
		return errStop
	}
	return nil
}

// violationLine formats a violation as the one stderr line
// "chatwire: frame N: CODE: message", the message including the JSON
// pointer and the cause, with control characters replaced so that it stays
// one line.
func violationLine(frame int64, e *refusal.Error) string {
	msg := e.Message
	if e.Err != nil {
		if msg != "" {
			msg += ": "
		}
		msg += e.Err.Error()
	}
	if e.Path != "" {
		msg += " (at " + e.Path + ")"
	}
	return fmt.Sprintf("chatwire: frame %d: %s: %s\n", frame, e.Code, oneLine(msg))
}

// oneLine returns s with every control character and every invalid or
// replacement character turned into '?', so that text taken from a stream
// (a message, a product type) stays on its one stderr line.
func oneLine(s string) string {
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || r == utf8.RuneError {
			return '?'
		}
		return r
	}, strings.ToValidUTF8(s, "?"))
}
