package observe_test

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	_ "github.com/Papercusp/chat-protocol-go/internal/testkit/golden" // accepts go test ./... -update
)

// The package is a leaf: the standard library and the module's refusal
// package (with its internal leaf) only, so that recovery and interactions
// may import it and stay free of any other dependency.
func TestImportsOnlyLeaves(t *testing.T) {
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command on PATH")
	}
	out, err := exec.Command(gobin, "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", ".").CombinedOutput()
	require.NoError(t, err, "%s", out)
	const module = "github.com/Papercusp/chat-protocol-go"
	deps := strings.Fields(string(out))
	require.Contains(t, deps, module+"/refusal")
	for _, dep := range deps {
		leaf := dep == module+"/observe" || dep == module+"/refusal" || strings.HasPrefix(dep, module+"/internal/")
		assert.True(t, leaf, "observe imports %s", dep)
	}
}
