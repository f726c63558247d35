package readme

import (
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	_ "github.com/Papercusp/chat-protocol-go/internal/testkit/golden" // accepts go test ./... -update
)

// root is the repository's root, the README's directory.
const root = "../../.."

// TestEveryGoBlockIsCompiled: every ```go block of the README is, verbatim,
// the marked part of a test file's code (an example, or a function beside
// one), so that go vet and go test compile it, with its variables typed as
// a host has them.
func TestEveryGoBlockIsCompiled(t *testing.T) {
	data, err := os.ReadFile(root + "/README.md")
	require.NoError(t, err)
	blocks := GoBlocks(string(data))
	require.GreaterOrEqual(t, len(blocks), 10)
	regions, err := Regions(root)
	require.NoError(t, err)
	marked := map[string]bool{}
	for _, rs := range regions {
		for _, r := range rs {
			marked[r] = true
		}
	}
	for _, b := range blocks {
		assert.True(t, marked[b.Text], "README.md:%d: the Go block is no test file's README:begin … README:end code:\n%s", b.Line, b.Text)
	}
}

func TestGoBlocksAndRegions(t *testing.T) {
	assert.Equal(t, []Block{{Line: 2, Text: "a := 1\n"}, {Line: 6, Text: "b()\n\tc()\n"}},
		GoBlocks("text\n```go\na := 1\n```\n```sh\n```go\nb()\n\tc()\n```\n"))
	assert.Equal(t, []string{"x := 1\n\ty()\n", "top()\n"},
		regionsOf("func f() {\n\t// README:begin\n\tx := 1\n\t\ty()\n\t// README:end\n}\n// README:begin\ntop()\n// README:end\n"))
}
