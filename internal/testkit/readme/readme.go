// Package readme checks that a README's Go snippet is an example's code,
// verbatim, so that the example's output is what the README's code does,
// and that every Go block of the README is the marked code of some test
// file ([GoBlocks], [Regions]), so that every one is compiled.
package readme

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// SnippetIsExample asserts that the first Go block of the README section
// titled heading (the "## " line without its marks) equals the lines of
// example between "\t// README:begin" and "\t// README:end", one tab
// removed from each.
func SnippetIsExample(t *testing.T, readmePath, heading, examplePath string) {
	t.Helper()
	readme, err := os.ReadFile(readmePath)
	require.NoError(t, err)
	_, section, ok := strings.Cut(string(readme), "\n## "+heading+"\n")
	require.True(t, ok, "the README has the section %q", heading)
	_, block, ok := strings.Cut(section, "```go\n")
	require.True(t, ok, "the section has a Go block")
	block, _, ok = strings.Cut(block, "```\n")
	require.True(t, ok, "the block ends")

	example, err := os.ReadFile(examplePath)
	require.NoError(t, err)
	_, wiring, ok := strings.Cut(string(example), "\t// README:begin\n")
	require.True(t, ok, "%s marks README:begin", examplePath)
	wiring, _, ok = strings.Cut(wiring, "\t// README:end\n")
	require.True(t, ok, "%s marks README:end", examplePath)
	var dedented strings.Builder
	for line := range strings.Lines(wiring) {
		dedented.WriteString(strings.TrimPrefix(line, "\t"))
	}
	assert.Equal(t, dedented.String(), block)
}
