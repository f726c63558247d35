package main

import (
	"fmt"
	"io"
	"slices"

	"github.com/Papercusp/chat-protocol-go/internal/conformance"
)

const parseUsage = `usage: chatwire parse KIND < INPUT

Reads all of stdin and prints one line: the canonical JSON of what the
TypeScript reference's parser gives for it, or null. KIND is one of
  report-body  the JSON text of a <report> block   (blocks.ParseReportBody)
  report-tag   turn text holding a <report> tag    (blocks.ParseReportTag)
  ask-body     the JSON text of an <ask> block     (blocks.ParseAskBody)
  ask-tag      turn text holding an <ask> tag      (blocks.ParseAskTag)
  channel      a version-0 event type name; prints {"state":BOOL,"replayable":BOOL}
The input is used byte for byte (no trimming, a byte order mark is kept),
except that channel drops one trailing newline. Exit status 0 whatever the
input holds; 1 when stdin cannot be read; 2 on a usage error.
`

// runParse implements `chatwire parse KIND`.
func runParse(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 1 && (args[0] == "-h" || args[0] == "-help" || args[0] == "--help") {
		fmt.Fprint(stdout, parseUsage)
		return exitOK
	}
	if len(args) != 1 {
		what := "KIND is missing"
		if len(args) > 1 {
			what = fmt.Sprintf("one KIND, got %q", args)
		}
		fmt.Fprintf(stderr, "chatwire parse: %s\n", what)
		fmt.Fprint(stderr, parseUsage)
		return exitUsage
	}
	if !slices.Contains(conformance.ParityKinds(), args[0]) {
		fmt.Fprintf(stderr, "chatwire parse: unknown KIND %q\n", args[0])
		fmt.Fprint(stderr, parseUsage)
		return exitUsage
	}
	in, err := io.ReadAll(stdin)
	if err != nil {
		fmt.Fprintf(stderr, "chatwire parse: reading stdin: %v\n", err)
		return exitFail
	}
	out, _ := conformance.Parity(args[0], string(in))
	out = append(out, '\n')
	if _, err := stdout.Write(out); err != nil {
		fmt.Fprintf(stderr, "chatwire parse: %v\n", err)
		return exitFail
	}
	return exitOK
}
