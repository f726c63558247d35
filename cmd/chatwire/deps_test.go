package main

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The binary ships the conformance runner (chatwire conform, chatwire
// parse), never a test kit: it links neither package testing nor testify
// nor anything under internal/testkit.
func TestLinksNoTestKit(t *testing.T) {
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command on PATH")
	}
	out, err := exec.Command(gobin, "list", "-deps", ".").CombinedOutput()
	require.NoError(t, err, "%s", out)
	deps := strings.Fields(string(out))
	require.Contains(t, deps, "github.com/Papercusp/chat-protocol-go/internal/conformance")
	for _, dep := range deps {
		assert.NotEqual(t, "testing", dep)
		assert.NotContains(t, dep, "testify")
		assert.NotContains(t, dep, "/internal/testkit/")
	}
}
