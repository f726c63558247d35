package main

import (
	"bufio"
	"context"
	"log/slog"
	"net"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/Papercusp/chat-protocol-go/examples/newcomer/service"
	_ "github.com/Papercusp/chat-protocol-go/internal/testkit/golden" // accepts go test ./... -update
	"github.com/Papercusp/chat-protocol-go/internal/testkit/newcomertest"
)

// TestNewcomerServiceOverHTTP drives the service on the in-memory stores.
func TestNewcomerServiceOverHTTP(t *testing.T) {
	s := memory()
	newcomertest.Drive(t, s, func(ctx context.Context, ln net.Listener) error {
		return service.Serve(ctx, ln, s, slog.New(slog.NewTextHandler(t.Output(), nil)))
	})
}

// codeLines counts the lines of a Go file that are code: neither blank,
// nor a comment, nor in the import block.
func codeLines(t *testing.T, file string) int {
	t.Helper()
	f, err := os.Open(file)
	require.NoError(t, err)
	defer f.Close()
	n, imports := 0, false
	for sc := bufio.NewScanner(f); sc.Scan(); {
		line := strings.TrimSpace(sc.Text())
		switch {
		case line == "import (":
			imports = true
		case imports:
			imports = line != ")"
		case line != "" && !strings.HasPrefix(line, "//"):
			n++
		}
	}
	return n
}

// TestNewcomerFitsIn80Lines: the whole service, its host code (the
// service and the command on memory), is at most 80 lines of code.
func TestNewcomerFitsIn80Lines(t *testing.T) {
	n := codeLines(t, "service/service.go") + codeLines(t, "main.go")
	t.Logf("host code: %d lines (service/service.go %d, main.go %d)", n, codeLines(t, "service/service.go"), codeLines(t, "main.go"))
	require.LessOrEqual(t, n, 80)
}
