package interactions_test

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestReadmeHandlerIsTheExample: the README shows the answer handler of
// example_http_test.go verbatim, so the example's output is what the
// README's code does.
func TestReadmeHandlerIsTheExample(t *testing.T) {
	funcAnswer := func(text string) string {
		_, rest, ok := strings.Cut(text, "\nfunc answer(")
		require.True(t, ok, "func answer is there")
		body, _, ok := strings.Cut(rest, "\n}\n")
		require.True(t, ok, "func answer ends")
		return body
	}
	readme, err := os.ReadFile("../README.md")
	require.NoError(t, err)
	example, err := os.ReadFile("example_http_test.go")
	require.NoError(t, err)
	assert.Equal(t, funcAnswer(string(example)), funcAnswer(string(readme)))
}
