package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	chatprotocol "github.com/Papercusp/chat-protocol-go"
	"github.com/Papercusp/chat-protocol-go/blocks"
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

// parseKinds maps each KIND to its parser: the input text in, the output
// line (without its newline) out.
func parseKinds() map[string]func(string) []byte {
	block := func(m json.Marshaler, ok bool) []byte {
		if !ok {
			return []byte("null")
		}
		out, _ := m.MarshalJSON() // the blocks' MarshalJSON never fails
		return out
	}
	return map[string]func(string) []byte{
		"report-body": func(s string) []byte { return block(blocks.ParseReportBody(s)) },
		"report-tag":  func(s string) []byte { return block(blocks.ParseReportTag(s)) },
		"ask-body":    func(s string) []byte { return block(blocks.ParseAskBody(s)) },
		"ask-tag":     func(s string) []byte { return block(blocks.ParseAskTag(s)) },
		"channel": func(s string) []byte {
			s = strings.TrimSuffix(strings.TrimSuffix(s, "\n"), "\r")
			return fmt.Appendf(nil, `{"state":%t,"replayable":%t}`,
				chatprotocol.IsStateChannelEvent(s), chatprotocol.IsReplayable(s))
		},
	}
}

// runParse implements `chatwire parse KIND`.
func runParse(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 1 && (args[0] == "-h" || args[0] == "-help" || args[0] == "--help") {
		fmt.Fprint(stdout, parseUsage)
		return exitOK
	}
	if len(args) != 1 {
		fmt.Fprint(stderr, parseUsage)
		return exitUsage
	}
	parse, ok := parseKinds()[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "chatwire parse: unknown KIND %q\n", args[0])
		fmt.Fprint(stderr, parseUsage)
		return exitUsage
	}
	in, err := io.ReadAll(stdin)
	if err != nil {
		fmt.Fprintf(stderr, "chatwire parse: reading stdin: %v\n", err)
		return exitFail
	}
	out := append(parse(string(in)), '\n')
	if _, err := stdout.Write(out); err != nil {
		fmt.Fprintf(stderr, "chatwire parse: %v\n", err)
		return exitFail
	}
	return exitOK
}
