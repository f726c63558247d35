package stream_test

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestReadmeIsTheExample: the README's "Serve a resumable stream" code is
// the part of Example between its README markers, verbatim, and stays
// under 30 lines.
func TestReadmeIsTheExample(t *testing.T) {
	readme, err := os.ReadFile("../README.md")
	require.NoError(t, err)
	_, section, ok := strings.Cut(string(readme), "\n## Serve a resumable stream (stream)\n")
	require.True(t, ok, "the README has the section")
	_, block, ok := strings.Cut(section, "```go\n")
	require.True(t, ok, "the section has a Go block")
	block, _, ok = strings.Cut(block, "```\n")
	require.True(t, ok, "the block ends")

	example, err := os.ReadFile("example_test.go")
	require.NoError(t, err)
	_, code, ok := strings.Cut(string(example), "\t// README:begin\n")
	require.True(t, ok)
	code, _, ok = strings.Cut(code, "\t// README:end\n")
	require.True(t, ok)
	var dedented strings.Builder
	for line := range strings.Lines(code) {
		dedented.WriteString(strings.TrimPrefix(line, "\t"))
	}
	assert.Equal(t, dedented.String(), block)
	assert.Less(t, strings.Count(block, "\n"), 30)
}
