package turn_test

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Papercusp/chat-protocol-go/internal/testkit/readme"
)

// The README's serving example (producer, window, handler, cancel) is the
// part of Example between its README markers, verbatim, so that it runs
// as written; it stays within 40 lines.
func TestReadmeServiceIsTheExample(t *testing.T) {
	readme.SnippetIsExample(t, "../README.md", "Serve a turn (turn, stream)", "example_test.go")
	example, err := os.ReadFile("example_test.go")
	require.NoError(t, err)
	_, block, _ := strings.Cut(string(example), "\t// README:begin\n")
	block, _, _ = strings.Cut(block, "\t// README:end\n")
	assert.LessOrEqual(t, strings.Count(block, "\n"), 40)
	assert.Greater(t, strings.Count(block, "\n"), 20, "the markers hold the service")
}
