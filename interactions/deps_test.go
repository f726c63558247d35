package interactions_test

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The resolver imports no validator and no database, transitively
// (docs/contract.md section 13).
func TestImportsNoValidatorOrDatabase(t *testing.T) {
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command on PATH")
	}
	out, err := exec.Command(gobin, "list", "-deps", ".", "./interactionstest").CombinedOutput()
	require.NoError(t, err, "%s", out)
	deps := strings.Fields(string(out))
	require.Contains(t, deps, "github.com/Papercusp/chat-protocol-go/interactions")
	for _, dep := range deps {
		for _, banned := range []string{"go-playground/validator", "jsonschema", "pgx", "database/sql", "lib/pq"} {
			assert.NotContains(t, dep, banned)
		}
		assert.NotEqual(t, "github.com/Papercusp/chat-protocol-go", dep, "the root package imports a validator")
	}
}
