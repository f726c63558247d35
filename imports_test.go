package chatprotocol_test

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Product code never imports a test kit of internal/testkit: of the
// module's packages, only those under internal/testkit import one outside
// their _test.go files (the public kits replaytest, recoverytest and
// interactionstest share internal/kit instead).
func TestProductImportsNoTestKit(t *testing.T) {
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command on PATH")
	}
	out, err := exec.Command(gobin, "list", "-f", "{{.ImportPath}}{{range .Imports}} {{.}}{{end}}", "./...").CombinedOutput()
	require.NoError(t, err, "%s", out)
	const testkit = "github.com/Papercusp/chat-protocol-go/internal/testkit/"
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	require.Greater(t, len(lines), 20)
	for _, line := range lines {
		pkg, imports, _ := strings.Cut(line, " ")
		if strings.HasPrefix(pkg, testkit) {
			continue
		}
		for _, imp := range strings.Fields(imports) {
			assert.False(t, strings.HasPrefix(imp, testkit), "%s imports %s", pkg, imp)
		}
	}
}
