package main

import (
	"bufio"
	"encoding/json"
	"io"

	chatprotocol "github.com/Papercusp/chat-protocol-go"
	"github.com/Papercusp/chat-protocol-go/blocks"
)

const blocksUsage = `usage: chatwire blocks [--from auto|legacy0|v1] [--conversation ID] [--turn ID]
                       [--max-frame BYTES] [--keep-going] [--dialect scout|papercusp] [FILE|-]

Decodes an SSE stream, or JSON lines, as chatwire decode does (same flags, same
violations and exit statuses), then prints every <report> and <ask> block of each
turn's text: the text its deltas add up to, so a tag split across deltas is found
whole, and every tag, not only the first of each kind (docs/contract.md section 4).
One line of JSON per block, turns in the order they started, blocks in the order of
the text:

  {"turnId":"turn-1","kind":"report","block":{...ReportBlock...}}
  {"turnId":"turn-1","kind":"ask","block":{...AskBlock...}}

block is the canonical JSON of the block (as chatwire parse prints it). A tag that
does not hold a valid block is not printed and is not a violation: turn text is
free text. Nothing is printed after a violation, unless --keep-going, which prints
the blocks of the frames that applied.
`

// runBlocks implements `chatwire blocks`.
func runBlocks(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	input, o, status, done := parseStreamCommand("blocks", blocksUsage, args, stdout, stderr, nil)
	if done {
		return status
	}
	return runStream("blocks", input, o, stdin, stdout, stderr, func(out *bufio.Writer) (streamSink, func(streamResult) error) {
		return streamSink{}, func(res streamResult) error {
			return writeBlocks(out, res.state)
		}
	})
}

// blockLine is one line of chatwire blocks.
type blockLine struct {
	TurnID string          `json:"turnId"`
	Kind   blocks.TagKind  `json:"kind"`
	Block  json.RawMessage `json:"block"`
}

// writeBlocks writes the block lines of every turn of state.
func writeBlocks(w io.Writer, state *chatprotocol.ChatStateV1) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	for _, turn := range state.Turns {
		for _, tag := range blocks.FindTags(turn.Text()) {
			var block json.Marshaler = tag.Ask
			if tag.Kind == blocks.TagReport {
				block = tag.Report
			}
			js, err := block.MarshalJSON()
			if err != nil {
				return err
			}
			if err := enc.Encode(blockLine{TurnID: turn.TurnID, Kind: tag.Kind, Block: js}); err != nil {
				return err
			}
		}
	}
	return nil
}
