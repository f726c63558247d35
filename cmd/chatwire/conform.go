package main

import (
	"fmt"
	"io"

	"github.com/Papercusp/chat-protocol-go/internal/conformance"
)

const conformUsage = `usage: chatwire conform [DIR]

Runs the conformance files of DIR (default ./testdata) through this implementation:
the manifest against the files, every fixture against its expectation, every golden
stream against its golden state (internal/conformance, the runner go test uses).
Prints one line per failing case, "FAIL CASE: reason", then "N passed, N failed".
Exit status: 0 when every case passes, 1 when one fails or DIR cannot be read,
2 on a usage error.
`

// runConform implements `chatwire conform`.
func runConform(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 1 && (args[0] == "-h" || args[0] == "-help" || args[0] == "--help") {
		fmt.Fprint(stdout, conformUsage)
		return exitOK
	}
	if len(args) > 1 || (len(args) == 1 && len(args[0]) > 1 && args[0][0] == '-') {
		what := fmt.Sprintf("one DIR at most, got %q", args)
		if len(args) == 1 {
			what = fmt.Sprintf("unknown flag %s", args[0])
		}
		fmt.Fprintf(stderr, "chatwire conform: %s\n", what)
		fmt.Fprint(stderr, conformUsage)
		return exitUsage
	}
	dir := "testdata"
	if len(args) == 1 {
		dir = args[0]
	}
	rep, err := conformance.Run(dir)
	if err != nil {
		fmt.Fprintf(stderr, "chatwire conform: %v\n", err)
		return exitFail
	}
	if _, err := rep.WriteTo(stdout); err != nil {
		fmt.Fprintf(stderr, "chatwire conform: %v\n", err)
		return exitFail
	}
	if rep.Failed() > 0 {
		return exitFail
	}
	return exitOK
}
