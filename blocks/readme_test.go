package blocks_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/Papercusp/chat-protocol-go/blocks"
)

// readmeParse is the README's "Parse a block from Go" code, verbatim
// between the markers.
func readmeParse(turnText string) (blocks.AskBlock, blocks.ReportBlock, bool) {
	// README:begin
	ask, ok := blocks.ParseAskTag(turnText) // the first <ask>{json}</ask> in a model's turn
	if ok {
		fmt.Println(ask.Question, ask.Options, ask.Refs)
	}
	report, ok := blocks.ParseReportTag(turnText) // likewise <report>{json}</report>
	// README:end
	return ask, report, ok
}

func TestReadmeParse(t *testing.T) {
	ask, report, ok := readmeParse(`<ask>{"question":"Ship it?"}</ask> <REPORT>{"title":"Fleet","plans":[{"slug":"rl-v2","items":[{"id":"P-1","status":"done"}]}]}</REPORT>`)
	assert.True(t, ok)
	assert.Equal(t, "Ship it?", ask.Question)
	assert.Equal(t, "Fleet", report.Title)
}
