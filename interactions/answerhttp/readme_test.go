package answerhttp_test

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestReadmeWiringIsTheExample: the README's card-answer snippet is the
// wiring of Example, verbatim, so the example's output is what the
// README's code does.
func TestReadmeWiringIsTheExample(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	require.NoError(t, err)
	_, section, ok := strings.Cut(string(readme), "\n## Card answers (interactions)\n")
	require.True(t, ok, "the README has the section")
	_, block, ok := strings.Cut(section, "```go\n")
	require.True(t, ok, "the section has a Go block")
	block, _, ok = strings.Cut(block, "```\n")
	require.True(t, ok, "the block ends")

	example, err := os.ReadFile("example_test.go")
	require.NoError(t, err)
	_, wiring, ok := strings.Cut(string(example), "\t// README:begin\n")
	require.True(t, ok)
	wiring, _, ok = strings.Cut(wiring, "\t// README:end\n")
	require.True(t, ok)
	var dedented strings.Builder
	for line := range strings.Lines(wiring) {
		dedented.WriteString(strings.TrimPrefix(line, "\t"))
	}
	assert.Equal(t, dedented.String(), block)
}
