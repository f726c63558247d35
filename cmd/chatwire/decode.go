package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"

	"github.com/Papercusp/chat-protocol-go/refusal"
)

const decodeUsage = `usage: chatwire decode [--from auto|legacy0|v1] [--state] [--conversation ID] [--turn ID]
                       [--max-frame BYTES] [--keep-going] [--dialect scout|papercusp] [FILE|-]

Reads an SSE stream (FILE, or stdin for - or none) and prints what it adds up to in
version 1 of the chat wire contract. Comments and heartbeat frames are skipped.

The input may be JSON lines instead, as chatwire ingest and chatwire decode print
them: when its first byte other than a space, tab, CR or LF (after a UTF-8 byte order
mark) is '{', which no SSE line begins with, each line that is not blank is one
frame's data (LF or CRLF ends a line; the last may lack it), and frames are numbered
by line, blank ones included. So chatwire ingest ... | chatwire decode --state works.

A frame with a schemaVersion member is read as a version-1 envelope; one without is
a legacy0 frame, upgraded through legacy/ with the command as the host: the
conversation id from --conversation, else the session frame's sessionId; the turn id
from --turn, else turn-1; event ids e-1, e-2 ... and seqs counted; tool call ids
turn-1-call-1, turn-1-call-2 ... by ordinal. --from auto (the default) lets the first
frame that is a JSON object decide for the whole stream, so a frame of the other
version later on is a violation; --from legacy0 and --from v1 decide up front.
--dialect names the legacy vocabulary (scout: token, tool_start; papercusp: delta,
tool_call, tool_result). For a version-1 stream, --conversation refuses frames of
any other conversation and --turn is not used.

Output: one line of canonical JSON per version-1 envelope. A legacy product frame
(Scout's products, cart_mutate ...) is not a violation: it is printed as a line
{"appEvent": FRAME} and the product frames are counted on one stderr line, by
type for the 20 most frequent types ("and N more types" for the rest). A type of
the other dialect or of version 1 (token under --dialect papercusp, delta under
scout) is no product type: it is unsupported-event.
--state prints only the final ChatStateV1, as one line of JSON (product frames are
skipped, and still counted).

Every envelope is applied to a ChatStateV1, so a sequence gap or a foreign frame is
a violation too. The first violation ends the command with exit status 1 and one
stderr line "chatwire: frame N: CODE: message" (N counts the stream's frames from 1,
comments and heartbeats included; CODE as in docs/contract.md section 12, or
invalid-frame for a stream cut inside a frame). --keep-going reports every
violation, skips the bad frames, and exits 1 at the end if there was any; with
--state it then prints the state of the frames that applied.

--max-frame bounds a frame's data, in bytes (default 1048576), a line's for JSON lines;
a larger frame is frame-too-large. Exit status: 0 valid, 1 violation or unreadable input, 2 usage.
`

// runDecode implements `chatwire decode`.
func runDecode(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	var state bool
	input, o, status, done := parseStreamCommand("decode", decodeUsage, args, stdout, stderr, func(fs *flag.FlagSet) {
		fs.BoolVar(&state, "state", false, "print only the final ChatStateV1")
	})
	if done {
		return status
	}
	return runStream("decode", input, o, stdin, stdout, stderr, func(out *bufio.Writer) (streamSink, func(streamResult) error) {
		if state {
			return streamSink{}, func(res streamResult) error { return printState(out, res.state) }
		}
		p := &linePrinter{out: out}
		return streamSink{envelope: p.envelope, appEvent: p.appEvent}, nil
	})
}

// runStream runs one stream subcommand on input: build gives the sink and
// the function that prints the result once the stream is read (nil for
// none). The result is printed when there was no violation, or with
// --keep-going. It returns the exit status.
func runStream(name, input string, o streamOptions, stdin io.Reader, stdout, stderr io.Writer, build func(*bufio.Writer) (streamSink, func(streamResult) error)) int {
	in, err := openInput(input, stdin)
	if err != nil {
		fmt.Fprintf(stderr, "chatwire %s: %v\n", name, err)
		return exitFail
	}
	defer in.Close()
	out := bufio.NewWriterSize(stdout, 64<<10)
	sink, finish := build(out)
	report := func(frame int64, e *refusal.Error) {
		out.Flush() // the lines before the violation come first
		io.WriteString(stderr, violationLine(frame, e))
	}
	res, err := decodeStream(in, o, sink, report)
	if err == nil && finish != nil && (res.violations == 0 || o.keepGoing) {
		err = finish(res)
	}
	if ferr := out.Flush(); err == nil {
		err = ferr
	}
	if summary := res.appEventSummary(sink.appEvent != nil); summary != "" {
		fmt.Fprintln(stderr, summary)
	}
	if err != nil {
		fmt.Fprintf(stderr, "chatwire %s: %s: %v\n", name, inputName(input), err)
		return exitFail
	}
	if res.violations > 0 {
		return exitFail
	}
	return exitOK
}

// inputName names the input in messages.
func inputName(input string) string {
	if input == "-" {
		return "stdin"
	}
	return input
}
