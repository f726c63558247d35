package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"

	chatprotocol "github.com/Papercusp/chat-protocol-go"
	"github.com/Papercusp/chat-protocol-go/legacy"
	"github.com/Papercusp/chat-protocol-go/refusal"
	"github.com/Papercusp/chat-protocol-go/sse"
)

const encodeUsage = `usage: chatwire encode --to legacy0 [--dialect scout|papercusp] [--strict]
                      [--product TYPE]... [--max-frame BYTES] [FILE|-]

Reads a version-1 SSE stream (FILE, or stdin when FILE is - or absent) and
writes the legacy0 stream a client of the unversioned union reads: for each
envelope with a legacy form, the frame "id: SEQ\ndata: FRAME\n\n", where SEQ is
the envelope's seq and FRAME its legacy frame (legacy.EncodeLegacyChatFrame),
in the vocabulary of --dialect (default scout). Comments and heartbeats are
not copied.

An envelope without a legacy form (lifecycle other than completed,
tool_result, result, provenance, capabilities) is skipped, and the skipped
frames are counted on stderr; with --strict the first one stops the command.
--product TYPE registers a product event type, so that its envelopes parse
and pass through as their product frame (repeatable). --max-frame bounds
each SSE frame read, in bytes of the stream (default 1048576); a larger one
is frame-too-large.

Each envelope is checked on its own (chatprotocol.EnvelopeParser): unlike
chatwire decode, encode does not check that seqs follow each other.

Exit status: 0 when every frame parsed (frames without a legacy form
skipped); 1 on the first frame that breaks the contract, or without a legacy
form under --strict, with one stderr line "chatwire: frame N: CODE: message"
(N counts the stream's frames from 1; CODE invalid-frame for a stream cut
inside a frame), or when the input cannot be read; 2 on a usage error.
`

// encodeFlags are the options of one `chatwire encode` run.
type encodeFlags struct {
	to       string
	dialect  legacy.Dialect
	strict   bool
	products []string
	maxFrame int
	input    string
}

// parseEncodeFlags reads the arguments of `chatwire encode`.
func parseEncodeFlags(args []string) (encodeFlags, error) {
	var f encodeFlags
	fs := flag.NewFlagSet("chatwire encode", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVar(&f.to, "to", "", "the target version: legacy0")
	dialect := fs.String("dialect", legacy.Scout.String(), "the legacy vocabulary: scout or papercusp")
	fs.BoolVar(&f.strict, "strict", false, "stop at the first frame without a legacy form")
	fs.Func("product", "a product event type to pass through (repeatable)", func(s string) error {
		f.products = append(f.products, s)
		return nil
	})
	fs.IntVar(&f.maxFrame, "max-frame", sse.DefaultMaxFrameBytes, "the largest frame read, in bytes")
	input, err := parseStreamArgs(fs, args)
	if err != nil {
		return f, err
	}
	switch {
	case f.to == "":
		return f, errors.New("--to is required: chatwire encode --to legacy0")
	case f.to != "legacy0":
		return f, fmt.Errorf("--to %q: the only target is legacy0", f.to)
	case f.maxFrame <= 0:
		return f, errors.New("--max-frame must be positive")
	}
	var ok bool
	if f.dialect, ok = legacy.ParseDialect(*dialect); !ok {
		return f, fmt.Errorf("--dialect %q: scout or papercusp", *dialect)
	}
	f.input = input
	return f, nil
}

// runEncode implements `chatwire encode`.
func runEncode(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if slices.ContainsFunc(args, func(a string) bool { return a == "-h" || a == "-help" || a == "--help" }) {
		fmt.Fprint(stdout, encodeUsage)
		return exitOK
	}
	f, err := parseEncodeFlags(args)
	if err != nil {
		fmt.Fprintf(stderr, "chatwire encode: %v\n", err)
		fmt.Fprint(stderr, encodeUsage)
		return exitUsage
	}
	types := map[string]chatprotocol.Channel{}
	for _, t := range f.products {
		types[t] = chatprotocol.ChannelEvent
	}
	reg, err := chatprotocol.NewRegistry(types)
	if err != nil {
		fmt.Fprintf(stderr, "chatwire encode: --product: %v\n", err)
		return exitUsage
	}
	in, err := openInput(f.input, stdin)
	if err != nil {
		fmt.Fprintf(stderr, "chatwire encode: %v\n", err)
		return exitFail
	}
	defer in.Close()
	e := encoder{
		flags:  f,
		parser: chatprotocol.NewEnvelopeParser(&chatprotocol.ParserOptions{MaxFrameBytes: f.maxFrame, Registry: reg}),
		out:    sse.NewEncoder(stdout),
		stderr: stderr,
		skips:  map[string]int{},
	}
	return e.run(sse.NewDecoder(in, &sse.DecoderOptions{MaxFrameBytes: f.maxFrame}))
}

// encoder turns one version-1 stream into a legacy0 stream.
type encoder struct {
	flags  encodeFlags
	parser *chatprotocol.EnvelopeParser
	out    *sse.Encoder
	stderr io.Writer
	skips  map[string]int // skipped frames by event type
}

// run reads every frame of d and returns the exit status.
func (e *encoder) run(d *sse.Decoder) int {
	for {
		ev, err := d.Next()
		if errors.Is(err, io.EOF) {
			if d.Truncated() {
				n, _ := d.Position()
				return e.fail(n, errTruncated())
			}
			e.reportSkips()
			return exitOK
		}
		if err != nil {
			n, _ := d.Position() // the frame the decoder refused
			return e.fail(n, err)
		}
		if ev.Comment || ev.Type == sse.EventHeartbeat {
			continue
		}
		if err := e.frame(ev.Data); err != nil {
			return e.fail(ev.Frame, err)
		}
	}
}

// frame encodes the data of one event frame. It returns the refusal that
// stops the command, or nil when the frame was written or skipped.
func (e *encoder) frame(data []byte) error {
	env, err := e.parser.Parse(data)
	if err != nil {
		return err
	}
	f, err := legacy.EncodeLegacyChatFrame(env, e.flags.dialect)
	if errors.Is(err, refusal.ErrUnsupportedEvent) && !e.flags.strict {
		e.skips[env.Event.EventType()]++
		return nil
	}
	if err != nil {
		return err
	}
	out, err := legacy.MarshalChatEvent(f)
	if err != nil {
		return err
	}
	if bytes.ContainsAny(out, "\r\n") {
		// A product frame or snapshot kept as the producer wrote it; legacy
		// producers write one line (JSON.stringify).
		var b bytes.Buffer
		if err := json.Compact(&b, out); err != nil {
			return err
		}
		out = b.Bytes()
	}
	return e.out.Encode(sse.Frame{ID: strconv.FormatInt(env.Seq, 10), Data: out})
}

// fail reports the refusal of frame n, or an input or output error that is
// no frame's fault, and returns exit status 1.
func (e *encoder) fail(n int64, err error) int {
	ce, ok := errors.AsType[*refusal.Error](err)
	if !ok {
		fmt.Fprintf(e.stderr, "chatwire encode: %s\n", oneLine(err.Error()))
		return exitFail
	}
	io.WriteString(e.stderr, violationLine(n, ce))
	return exitFail
}

// reportSkips writes one stderr line counting the skipped frames by type.
func (e *encoder) reportSkips() {
	if len(e.skips) == 0 {
		return
	}
	total := 0
	var parts []string
	for _, t := range slices.Sorted(maps.Keys(e.skips)) {
		total += e.skips[t]
		parts = append(parts, fmt.Sprintf("%s %d", t, e.skips[t]))
	}
	fmt.Fprintf(e.stderr, "chatwire: skipped %d frame%s without a legacy form (unsupported-event): %s\n", total, plural(total), strings.Join(parts, ", "))
}
