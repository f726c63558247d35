// Command chatwire reads and checks the chat wire contract from the command
// line. Each subcommand lives in its own file and is listed in subcommands.
//
// Usage:
//
//	chatwire SUBCOMMAND [ARGS]
//	chatwire help
//
// Exit status: 0 on success, 1 when the input breaks the contract or cannot
// be read, 2 on a usage error.
package main

import (
	"fmt"
	"io"
	"os"
)

// The exit statuses of every subcommand.
const (
	exitOK    = 0
	exitFail  = 1
	exitUsage = 2
)

// subcommand is one entry of the dispatch table: its name, a one-line
// summary for the usage text, and the function that runs it with the
// arguments after its name. run returns the exit status.
type subcommand struct {
	name    string
	summary string
	run     func(args []string, stdin io.Reader, stdout, stderr io.Writer) int
}

// subcommands is the dispatch table, in the order the usage text lists it.
func subcommands() []subcommand {
	return []subcommand{
		{name: "parse", summary: "read one block (or an event type name) from stdin and print its canonical JSON", run: runParse},
		{name: "decode", summary: "read an SSE stream or JSON lines (version 1 or legacy0) and print its envelopes or its final state", run: runDecode},
		{name: "blocks", summary: "decode an SSE stream and print every <report> and <ask> block of its turns' text", run: runBlocks},
		{name: "conform", summary: "run the conformance fixtures and goldens of DIR (default ./testdata)", run: runConform},
		{name: "encode", summary: "turn a version-1 SSE stream into the legacy0 stream (--to legacy0)", run: runEncode},
		{name: "ingest", summary: "read a provider's recorded stream (--from openai-chat|openai-responses|anthropic-messages) and print its turn's envelopes or state", run: runIngest},
		{name: "follow", summary: "follow a turn's stream at URL across reconnects and print its envelopes or its final state", run: runFollow},
	}
}

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// run dispatches args to a subcommand and returns the exit status.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprintln(stderr, "chatwire: no subcommand")
		usage(stderr)
		return exitUsage
	}
	switch args[0] {
	case "help", "-h", "-help", "--help":
		usage(stdout)
		return exitOK
	}
	for _, c := range subcommands() {
		if c.name == args[0] {
			return c.run(args[1:], stdin, stdout, stderr)
		}
	}
	fmt.Fprintf(stderr, "chatwire: unknown subcommand %q\n", args[0])
	usage(stderr)
	return exitUsage
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: chatwire SUBCOMMAND [ARGS]")
	fmt.Fprintln(w, "subcommands:")
	for _, c := range subcommands() {
		fmt.Fprintf(w, "  %-10s %s\n", c.name, c.summary)
	}
	fmt.Fprintln(w, "chatwire SUBCOMMAND --help describes its flags and input.")
	fmt.Fprintln(w, "Exit status: 0 on success, 1 when the input breaks the contract or cannot be read, 2 on a usage error.")
}
