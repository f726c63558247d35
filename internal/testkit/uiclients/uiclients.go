// Package uiclients is a test kit: it runs the real front-end clients of the
// bridges' real-client tests, installed from this directory's lockfile (npm
// ci): the npm ai package's Chat with DefaultChatTransport on the 7.x, 6.x
// and 5.x lines (uichat.mjs; answering cards, uicards.mjs; a reload from
// the history, uihistory.mjs), @ag-ui/client's
// HttpAgent (agrun.mjs; agabort.mjs, which aborts its run; agrepost.mjs,
// which loses its run's connection and runs it again on another
// instance), and both clients' schemas (schemas.mjs).
// Without them a test skips, unless CHATPROTOCOL_REAL_CLIENTS is set, as CI
// sets it after `bash .ci/clients`.
package uiclients

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
	"time"
)

// RequiredEnv, when set to a non-empty value, makes a missing client fail
// the test instead of skipping it.
const RequiredEnv = "CHATPROTOCOL_REAL_CLIENTS"

// Lines are the ai package's installed versions: the package name each is
// installed under (package.json's aliases), its version, and whether its
// Chat resumes a cut stream in place under Node (5.0.0 appends the replay
// to the partial message it holds; docs/contract.md section 18.1).
var Lines = []struct {
	Package, Version string
	ResumesInPlace   bool
}{{"ai", "7.0.173", true}, {"ai6", "6.0.326", true}, {"ai5", "5.0.277", true}, {"ai500", "5.0.0", false}}

// dir is this package's directory, where the harness's node_modules are.
func dir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Dir(file)
}

// Run runs script (one of this directory's .mjs files) under Node with args, within
// timeout, and returns its standard output; it fails t on a non-zero exit.
// It skips t, or fails it when [RequiredEnv] is set, when Node or the
// harness's packages are missing.
func Run(t *testing.T, timeout time.Duration, script string, args ...string) []byte {
	t.Helper()
	return RunWith(t, timeout, nil, script, args...)
}

// RunWith is Run with stdin as the script's standard input (nil: none).
func RunWith(t *testing.T, timeout time.Duration, stdin []byte, script string, args ...string) []byte {
	t.Helper()
	node, err := exec.LookPath("node")
	if err == nil {
		_, err = os.Stat(filepath.Join(dir(), "node_modules", "ai", "package.json"))
	}
	if err == nil {
		_, err = os.Stat(filepath.Join(dir(), "node_modules", "@ag-ui", "client", "package.json"))
	}
	if err != nil {
		if os.Getenv(RequiredEnv) != "" {
			t.Fatalf("a real client is missing (%v), and %s is set: install them with `bash .ci/clients`", err, RequiredEnv)
		}
		t.Skipf("SKIPPED, real client missing (%v). To run this test: `bash .ci/clients`, then `%s=1 go test -run RealClient`", err, RequiredEnv)
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, append([]string{filepath.Join(dir(), script)}, args...)...)
	cmd.Dir = dir()
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("node %s %v: %v\nstderr:\n%s\nstdout:\n%s", script, args, err, stderr.String(), stdout.String())
	}
	if stderr.Len() > 0 {
		t.Logf("node %s stderr:\n%s", script, stderr.String())
	}
	return stdout.Bytes()
}
