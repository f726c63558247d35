package conformance

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/Papercusp/chat-protocol-go/blocks"
	"github.com/Papercusp/chat-protocol-go/legacy"
)

// ParityKinds lists the function names of the blocks parity cases
// (testdata/blocks-parity.jsonl, schemas/blocks-parity.schema.json), in the
// order `chatwire parse` documents them.
func ParityKinds() []string {
	return []string{"report-body", "report-tag", "ask-body", "ask-tag", "channel"}
}

// Parity runs the function a parity case names over input and returns the
// canonical JSON of its result, as the TypeScript reference writes it
// (docs/contract.md section 4): a block's members in the reference's order,
// "null" for no block, {"state":BOOL,"replayable":BOOL} for channel. The
// input is used byte for byte, except that channel drops one trailing
// newline (a type name typed on a terminal). ok is false for an unknown
// kind. `chatwire parse` and the conformance runner both answer through it.
func Parity(kind, input string) (out []byte, ok bool) {
	block := func(m json.Marshaler, found bool) []byte {
		if !found {
			return []byte("null")
		}
		out, _ := m.MarshalJSON() // the blocks' MarshalJSON never fails
		return out
	}
	switch kind {
	case "report-body":
		return block(blocks.ParseReportBody(input)), true
	case "report-tag":
		return block(blocks.ParseReportTag(input)), true
	case "ask-body":
		return block(blocks.ParseAskBody(input)), true
	case "ask-tag":
		return block(blocks.ParseAskTag(input)), true
	case "channel":
		name := strings.TrimSuffix(strings.TrimSuffix(input, "\n"), "\r")
		return fmt.Appendf(nil, `{"state":%t,"replayable":%t}`,
			legacy.IsStateFrame(name), legacy.IsReplayableFrame(name)), true
	}
	return nil, false
}

// runParity checks every line of a blocks parity file and reports each as
// its own case, named "PATH:LINE".
func runParity(r *Report, name string, data []byte) {
	lines := bytes.Split(bytes.TrimSuffix(data, []byte("\n")), []byte("\n"))
	for i, line := range lines {
		r.add(fmt.Sprintf("%s:%d", name, i+1), parityLine(line))
	}
}

// parityLine checks one {fn, input, want} line.
func parityLine(line []byte) error {
	var c struct {
		Fn    string          `json:"fn"`
		Input *string         `json:"input"`
		Want  json.RawMessage `json:"want"`
	}
	if err := json.Unmarshal(line, &c); err != nil {
		return fmt.Errorf("not a parity case: %v", err)
	}
	if c.Input == nil || c.Want == nil {
		return fmt.Errorf("a parity case needs fn, input and want")
	}
	got, ok := Parity(c.Fn, *c.Input)
	if !ok {
		return fmt.Errorf("unknown fn %q", c.Fn)
	}
	var want bytes.Buffer
	if err := json.Compact(&want, c.Want); err != nil {
		return fmt.Errorf("want: %v", err)
	}
	if !bytes.Equal(got, want.Bytes()) {
		return fmt.Errorf("%s(%q) = %s, want %s", c.Fn, *c.Input, got, want.Bytes())
	}
	return nil
}
