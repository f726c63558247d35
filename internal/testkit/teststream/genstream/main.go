// Command genstream writes a synthetic legacy0 (Scout dialect) SSE stream
// of about the requested size to stdout, for measuring `chatwire decode`
// on streams too large to commit:
//
//	go run ./internal/testkit/teststream/genstream -size 100000000 > /tmp/legacy-100mb.sse
//	go build -o /tmp/chatwire ./cmd/chatwire
//	/usr/bin/time -v /tmp/chatwire decode --state /tmp/legacy-100mb.sse
//
// The stream is the one of streams.Generate: one turn of the Scout dialect,
// mostly token deltas with tool starts, product frames, cards, state
// snapshots, heartbeats and comments. With -text=false it sends no tokens
// and no tool starts, so the turn's state stays small however long the
// stream is: the run then measures the decoder's own memory. Every frame is
// valid, so the stream decodes with exit status 0.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"os"

	"github.com/Papercusp/chat-protocol-go/internal/testkit/teststream"
)

func main() {
	size := flag.Int64("size", 100_000_000, "approximate size of the stream, in bytes")
	seed := flag.Uint64("seed", 1, "the seed of the frame mix")
	text := flag.Bool("text", true, "send token frames and tool starts (false: only frames that leave no trace in the turn)")
	flag.Parse()
	out := bufio.NewWriterSize(os.Stdout, 1<<20)
	err := teststream.Generate(out, *size, *seed, *text)
	if err == nil {
		err = out.Flush()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "genstream:", err)
		os.Exit(1)
	}
}
