package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"strings"
	"syscall"

	chatprotocol "github.com/Papercusp/chat-protocol-go"
	turnstream "github.com/Papercusp/chat-protocol-go/stream"
)

const followUsage = `usage: chatwire follow [--state] [--header 'NAME: VALUE']... [--max-frame BYTES]
                       [--max-attempts N] [--registered reasoning,source] URL

Follows one turn's version-1 stream at URL (an http or https endpoint served as in
docs/contract.md section 14) until the turn ends, reconnecting with Last-Event-ID
after every cut, 5xx or network error, with the stream's retry delay and a capped
exponential backoff. It prints what decode prints: one line of canonical JSON per
envelope as it arrives, each envelope once across reconnects, or with --state only
the final ChatStateV1 as one line of JSON.

--header adds a request header (credentials, say); repeat it for more. --max-frame
bounds a frame's data, in bytes (default 1048576). --max-attempts gives up after N
attempts in a row that brought no new envelope (default 0: until interrupted).
--registered accepts the registered events of docs/contract.md section 6.5 that the
host's turns carry (reasoning, source, comma-separated); without it they are refused.

The command ends when a lifecycle event ends the turn (completed, failed or
cancelled) or the server answers 204 No Content (exit status 0). A refusal (404,
409 cursor-ahead, 410 stale-cursor, 400 ...), a frame that breaks the contract, or
giving up ends it with exit status 1 and one stderr line
"chatwire follow: URL: CODE: message". SIGINT or SIGTERM stops it with exit status 1.
Exit status: 0 the turn ended, 1 refused or failed, 2 usage.
`

// runFollow implements `chatwire follow`.
func runFollow(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return follow(ctx, args, stdout, stderr)
}

// headerFlags collects repeated --header values.
type headerFlags http.Header

func (h headerFlags) String() string { return "" }

func (h headerFlags) Set(v string) error {
	name, value, ok := strings.Cut(v, ":")
	name = strings.TrimSpace(name)
	if !ok || name == "" {
		return fmt.Errorf("--header %q: want 'NAME: VALUE'", v)
	}
	http.Header(h).Add(name, strings.TrimSpace(value))
	return nil
}

// follow runs the command until the turn ends or ctx does.
func follow(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("follow", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var state bool
	var maxFrame, maxAttempts int
	header := headerFlags{}
	fs.BoolVar(&state, "state", false, "print only the final ChatStateV1")
	fs.Var(header, "header", "a request header NAME: VALUE")
	fs.IntVar(&maxFrame, "max-frame", chatprotocol.DefaultMaxFrameBytes, "the largest frame accepted, in bytes of its data")
	fs.IntVar(&maxAttempts, "max-attempts", 0, "attempts in a row without a new envelope before giving up; 0 never")
	var registered string
	fs.StringVar(&registered, "registered", "", "the registered events the turns carry: reasoning, source")
	target, err := parseStreamArgs(fs, args)
	if err == flag.ErrHelp {
		fmt.Fprint(stdout, followUsage)
		return exitOK
	}
	if err == nil {
		err = checkFollowArgs(target, maxFrame, maxAttempts)
	}
	var reg *chatprotocol.Registry
	if err == nil {
		reg, err = registeredFlag(registered)
	}
	if err != nil {
		fmt.Fprintf(stderr, "chatwire follow: %v\n%s", err, followUsage)
		return exitUsage
	}
	out := bufio.NewWriterSize(stdout, 64<<10)
	opts := &turnstream.FollowOptions{Header: http.Header(header), MaxAttempts: maxAttempts,
		Parser: &chatprotocol.ParserOptions{MaxFrameBytes: maxFrame, Registry: reg}}
	if !state {
		p := &linePrinter{out: out}
		opts.OnEnvelope = func(env *chatprotocol.ChatEventEnvelope) error {
			if err := p.envelope(env); err != nil {
				return err
			}
			return out.Flush() // a live stream: each line as it comes
		}
	}
	s, err := turnstream.Follow(ctx, target, opts)
	if err == nil && state {
		err = printState(out, s)
	}
	if ferr := out.Flush(); err == nil {
		err = ferr
	}
	if err != nil {
		fmt.Fprintf(stderr, "chatwire follow: %s: %s\n", target, followError(err))
		return exitFail
	}
	return exitOK
}

// checkFollowArgs checks the operand and the numeric flags.
func checkFollowArgs(target string, maxFrame, maxAttempts int) error {
	u, err := url.Parse(target)
	if target == "-" || err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("want one http or https URL, got %q", target)
	}
	if maxFrame <= 0 {
		return fmt.Errorf("--max-frame %d: want a positive number of bytes", maxFrame)
	}
	if maxAttempts < 0 {
		return fmt.Errorf("--max-attempts %d: want 0 or more", maxAttempts)
	}
	return nil
}

// registeredFlag is the registry of --registered's list of registered
// events (docs/contract.md section 6.5); nil for none.
func registeredFlag(list string) (*chatprotocol.Registry, error) {
	if list == "" {
		return nil, nil
	}
	var opts []chatprotocol.RegistryOption
	for name := range strings.SplitSeq(list, ",") {
		switch strings.TrimSpace(name) {
		case chatprotocol.EventTypeReasoning:
			opts = append(opts, chatprotocol.WithReasoning())
		case chatprotocol.EventTypeSource:
			opts = append(opts, chatprotocol.WithSources())
		default:
			return nil, fmt.Errorf("--registered %q: want reasoning, source or both", list)
		}
	}
	return chatprotocol.NewRegistry(nil, opts...)
}

// followError is the stderr text of Follow's error: "CODE: message" for a
// refusal, one line.
func followError(err error) string {
	if e, ok := errors.AsType[*turnstream.StatusError](err); ok {
		return oneLine(fmt.Sprintf("%s: %d %s", e.Code, e.StatusCode, e.Message))
	}
	return oneLine(err.Error()) // a refusal's text starts with its code

}
