package stream_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// rcRequiredEnv, when set to a non-empty value, makes a real-client test
// fail when its client is missing instead of skipping (CI sets it, after
// .ci/clients installed the clients).
const rcRequiredEnv = "CHATPROTOCOL_REAL_CLIENTS"

// rcChromiumEnv names another Chromium binary than /usr/bin/chromium.
const rcChromiumEnv = "CHATPROTOCOL_CHROMIUM"

// rcMissing skips t, loudly, when a real client is not installed, or fails
// it when rcRequiredEnv is set.
func rcMissing(t *testing.T, what string, err error) {
	t.Helper()
	if os.Getenv(rcRequiredEnv) != "" {
		t.Fatalf("%s is missing (%v), and %s is set: install the real clients with `bash .ci/clients`", what, err, rcRequiredEnv)
	}
	t.Skipf("SKIPPED, real client missing: %s (%v). To run this test: `bash .ci/clients`, then `%s=1 go test ./stream -run RealClient`", what, err, rcRequiredEnv)
}

// rcNode returns the node binary, after checking that the harness's npm
// packages are installed.
func rcNode(t *testing.T) string {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		rcMissing(t, "node", err)
	}
	if _, err := os.Stat(filepath.Join(rcHarnessDir, "node_modules", "eventsource", "package.json")); err != nil {
		rcMissing(t, "the npm eventsource package (npm ci in "+rcHarnessDir+")", err)
	}
	return node
}

// rcChromium returns the Chromium binary.
func rcChromium(t *testing.T) string {
	t.Helper()
	bin := os.Getenv(rcChromiumEnv)
	if bin == "" {
		bin = "/usr/bin/chromium"
	}
	if _, err := exec.LookPath(bin); err != nil {
		rcMissing(t, "chromium", err)
	}
	return bin
}

// rcNodeRun is how one run of follow.mjs ended.
type rcNodeRun struct {
	Messages []rcMessage
	Errors   []string // follow.mjs's stderr lines: one per error event
	Exit     int
	Took     time.Duration
}

// rcFollowWithNode runs follow.mjs on url until it exits (or ctx ends,
// which kills it) and returns what it printed.
func rcFollowWithNode(ctx context.Context, t *testing.T, node, url string, timeout time.Duration) rcNodeRun {
	t.Helper()
	cmd := exec.CommandContext(ctx, node, "follow.mjs", "--url", url,
		"--timeout-ms", strconv.FormatInt(timeout.Milliseconds(), 10))
	cmd.Dir = rcHarnessDir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err := cmd.Run()
	run := rcNodeRun{Took: time.Since(start)}
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		run.Exit = exit.ExitCode()
	case err != nil:
		t.Fatalf("running node follow.mjs: %v", err)
	}
	sc := bufio.NewScanner(&stdout)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var m rcMessage
		require.NoError(t, json.Unmarshal(sc.Bytes(), &m), "follow.mjs printed %q", sc.Text())
		run.Messages = append(run.Messages, m)
	}
	run.Errors = strings.Split(strings.TrimSpace(stderr.String()), "\n")
	return run
}

// rcBrowser is a running headless Chromium, in a process group of its own.
type rcBrowser struct {
	cmd    *exec.Cmd
	output *bytes.Buffer
	done   chan struct{}
}

// rcStartChromium starts headless Chromium on url with a fresh profile and
// registers the kill of its whole process group with t.Cleanup. Its
// profile, configuration and temporary directories are one directory the
// cleanup removes, so that nothing it writes (shared memory files, crash
// reports) outlives the test; its cache directory (fonts) is the user's. The directory's path is short: Chromium puts
// a Unix socket in it, and a socket's path has at most 107 bytes (a
// t.TempDir path, named after the test, can be longer).
func rcStartChromium(t *testing.T, bin, url string) *rcBrowser {
	t.Helper()
	home, err := os.MkdirTemp("", "rc-chromium-")
	require.NoError(t, err)
	cmd := exec.Command(bin,
		"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--disable-dev-shm-usage", "--user-data-dir="+filepath.Join(home, "profile"), url)
	cmd.Env = append(os.Environ(), "TMPDIR="+home, "XDG_CONFIG_HOME="+filepath.Join(home, "config"))
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	b := &rcBrowser{cmd: cmd, output: &bytes.Buffer{}, done: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = b.output, b.output
	require.NoError(t, cmd.Start())
	go func() {
		_ = cmd.Wait()
		close(b.done)
	}()
	t.Cleanup(func() {
		gone := b.kill()
		if t.Failed() {
			t.Logf("chromium output:\n%s", b.output.String())
		}
		require.True(t, gone, "chromium's processes are gone within 10s of SIGKILL")
		require.NoError(t, os.RemoveAll(home))
	})
	return b
}

// kill sends SIGKILL to every process of the browser's group, waits for
// the browser to be reaped and then for the group to be empty (its other
// processes are not this process's children: there is nothing to wait on
// but the group itself). It reports whether the group emptied within 10s.
func (b *rcBrowser) kill() bool {
	pgid := b.cmd.Process.Pid
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
	<-b.done
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if err := syscall.Kill(-pgid, 0); errors.Is(err, syscall.ESRCH) {
			return true
		}
	}
	return false
}
