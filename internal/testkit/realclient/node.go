package realclient

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// RequiredEnv, when set to a non-empty value, makes a real-client test
// fail when its client is missing instead of skipping (CI sets it, after
// .ci/clients installed the clients).
const RequiredEnv = "CHATPROTOCOL_REAL_CLIENTS"

// Missing skips t, loudly, when a real client is not installed, or fails
// it when [RequiredEnv] is set.
func Missing(t testing.TB, what string, err error) {
	t.Helper()
	if os.Getenv(RequiredEnv) != "" {
		t.Fatalf("%s is missing (%v), and %s is set: install the real clients with `bash .ci/clients`", what, err, RequiredEnv)
	}
	t.Skipf("SKIPPED, real client missing: %s (%v). To run this test: `bash .ci/clients`, then `%s=1 go test -run RealClient`", what, err, RequiredEnv)
}

// HarnessDir is the directory of the Node harness and the browser page,
// internal/testkit/eventsource, found from this file's own path.
func HarnessDir(t testing.TB) string {
	t.Helper()
	_, file, _, ok := runtime.Caller(0)
	require.True(t, ok, "the kit's source path")
	dir := filepath.Join(filepath.Dir(file), "..", "eventsource")
	_, err := os.Stat(filepath.Join(dir, "package.json"))
	require.NoError(t, err, "the harness directory")
	return dir
}

// The Node harness's clients: a script of the harness, then its arguments,
// separated by spaces ([FollowWithNode] adds --url and --timeout-ms).
const (
	// EventSourceScript follows a stream with the npm eventsource package,
	// its 4.x line.
	EventSourceScript = "follow.mjs"
	// EventSource5Script follows a stream with the npm eventsource
	// package's 5.x line, installed under the alias eventsource5.
	EventSource5Script = "follow.mjs --package eventsource5"
	// FetchEventSourceScript follows a stream with the npm
	// @microsoft/fetch-event-source package over Node's fetch, as its
	// README's advanced usage advises.
	FetchEventSourceScript = "fetch-follow.mjs"
	// FetchEventSourceBasicScript follows a stream with the npm
	// @microsoft/fetch-event-source package as its README's basic usage
	// shows (onmessage alone).
	FetchEventSourceBasicScript = "fetch-follow.mjs --usage basic"
	// ParserScript follows a stream with Node's fetch, the npm
	// eventsource-parser package's EventSourceParserStream, and a minimal
	// reconnect loop that resends the last id and honours retry.
	ParserScript = "parser-follow.mjs"
)

var scriptPackages = map[string]string{
	EventSourceScript:           "eventsource",
	EventSource5Script:          "eventsource5",
	FetchEventSourceScript:      "@microsoft/fetch-event-source",
	FetchEventSourceBasicScript: "@microsoft/fetch-event-source",
	ParserScript:                "eventsource-parser",
}

// ScriptName returns a name of script fit for a test's or a turn's name:
// its file without .mjs, then its arguments without their dashes, joined
// by dashes ("follow-package-eventsource5").
func ScriptName(script string) string {
	return strings.Join(strings.Fields(strings.NewReplacer(".mjs", "", "--", "").Replace(script)), "-")
}

// Node returns the node binary, after checking that the npm package script
// (one of the scripts above) uses is installed in the harness (npm ci).
func Node(t testing.TB, script string) string {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		Missing(t, "node", err)
	}
	pkg := scriptPackages[script]
	require.NotEmpty(t, pkg, "a script of the harness")
	dir := HarnessDir(t)
	if _, err := os.Stat(filepath.Join(dir, "node_modules", pkg, "package.json")); err != nil {
		Missing(t, "the npm package "+pkg+" (npm ci in "+dir+")", err)
	}
	return node
}

// NodeRun is how one run of a harness script ended.
type NodeRun struct {
	Messages []Message
	// Lines are the script's stderr lines: one JSON object per error event
	// or reconnection, then its summary.
	Lines []string
	Exit  int
	Took  time.Duration
}

// Last returns the last stderr line decoded into v.
func (run NodeRun) Last(t testing.TB, v any) {
	t.Helper()
	require.NotEmpty(t, run.Lines)
	require.NoError(t, json.Unmarshal([]byte(run.Lines[len(run.Lines)-1]), v), "the last stderr line %q", run.Lines[len(run.Lines)-1])
}

// FollowWithNode runs script of the harness (one of the scripts above, with
// its arguments) on url until it exits (or ctx ends, which kills it) and
// returns what it printed: one JSON message per stdout line.
func FollowWithNode(ctx context.Context, t testing.TB, node, script, url string, timeout time.Duration) NodeRun {
	t.Helper()
	args := append(strings.Fields(script), "--url", url, "--timeout-ms", strconv.FormatInt(timeout.Milliseconds(), 10))
	cmd := exec.CommandContext(ctx, node, args...)
	cmd.Dir = HarnessDir(t)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err := cmd.Run()
	run := NodeRun{Took: time.Since(start)}
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		run.Exit = exit.ExitCode()
	case err != nil:
		t.Fatalf("running node %s: %v", script, err)
	}
	sc := bufio.NewScanner(&stdout)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var m Message
		require.NoError(t, json.Unmarshal(sc.Bytes(), &m), "%s printed %q", script, sc.Text())
		run.Messages = append(run.Messages, m)
	}
	run.Lines = strings.Split(strings.TrimSpace(stderr.String()), "\n")
	return run
}
