package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"

	chatprotocol "github.com/Papercusp/chat-protocol-go"
	"github.com/Papercusp/chat-protocol-go/ingest"
	"github.com/Papercusp/chat-protocol-go/internal/turnsink"
)

const ingestUsage = `usage: chatwire ingest --from openai-chat|openai-responses|anthropic-messages [--state]
                       [--conversation ID] [--turn ID] [--provider NAME] [FILE|-]

Reads a provider's recorded stream body (FILE, or stdin for - or none): the raw SSE
the provider sent for one turn, in one of three kinds:
  openai-chat          OpenAI Chat Completions chunks (data: {...chat.completion.chunk...}, data: [DONE])
  openai-responses     OpenAI Responses stream events (response.created ... response.completed)
  anthropic-messages   Anthropic Messages stream events (message_start ... message_stop)
and prints the turn it makes in version 1 of the chat wire contract (docs/contract.md
section 17): one line of canonical JSON per envelope, from lifecycle started to one
terminal lifecycle (completed, or failed after an error event), the usage on it.
The command is the host: conversation --conversation (default c-1), turn --turn
(default t-1), seqs from 1, event ids TURN:SEQ, no "at". --provider names the
provider in provenance (default openai or anthropic, by kind).
--state prints only the ChatStateV1 the envelopes add up to, as one line of JSON,
exactly as chatwire decode --state prints it for them.

The body is read to its end, past the turn's: the turn ends at the provider's end, at a
provider error event, or at a frame that is not the provider's JSON (it fails), and only
comments and frames without data may follow.

Exit status: 0 when the body was read to its end (a provider error event or an invalid
last frame included: the turn fails); 1 when it was cut inside a frame (the turn fails
as cut), could not be read, or goes on after the turn ended with a frame with data or a
cut frame (reported on stderr, not mapped); what was read is printed in every case;
2 usage.
`

// runIngest implements `chatwire ingest`.
func runIngest(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("ingest", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var from, conversation, turn, provider string
	var state bool
	fs.StringVar(&from, "from", "", "the provider stream's kind")
	fs.BoolVar(&state, "state", false, "print only the final ChatStateV1")
	fs.StringVar(&conversation, "conversation", "c-1", "the conversation id")
	fs.StringVar(&turn, "turn", "t-1", "the turn id")
	fs.StringVar(&provider, "provider", "", "the provider named in provenance")
	input, err := parseStreamArgs(fs, args)
	if err == flag.ErrHelp {
		fmt.Fprint(stdout, ingestUsage)
		return exitOK
	}
	var kind ingest.Kind
	if err == nil {
		if from == "" {
			err = errors.New("--from is required")
		} else {
			kind, err = ingest.ParseKind(from)
		}
	}
	if err != nil {
		fmt.Fprintf(stderr, "chatwire ingest: %v\n%s", err, ingestUsage)
		return exitUsage
	}
	in, err := openInput(input, stdin)
	if err != nil {
		fmt.Fprintf(stderr, "chatwire ingest: %v\n", err)
		return exitFail
	}
	defer in.Close()
	out := bufio.NewWriterSize(stdout, 64<<10)
	s := chatprotocol.NewChatStateV1(conversation)
	p := &linePrinter{out: out}
	sink := turnsink.New(conversation, turn, func(env *chatprotocol.ChatEventEnvelope) error {
		if err := s.Apply(*env); err != nil {
			return err
		}
		if state {
			return nil
		}
		return p.envelope(env)
	})
	err = ingest.ReadToEnd(context.Background(), kind, in, sink, &ingest.Options{Provider: provider, Conversation: conversation, Turn: turn})
	if state {
		if perr := printState(out, s); err == nil {
			err = perr
		}
	}
	if ferr := out.Flush(); err == nil {
		err = ferr
	}
	if err != nil {
		fmt.Fprintf(stderr, "chatwire ingest: %s: %v\n", inputName(input), err)
		return exitFail
	}
	return exitOK
}
