package stream_test

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/Papercusp/chat-protocol-go/internal/testkit/realclient"
)

// rcChromiumEnv names another Chromium binary than /usr/bin/chromium.
const rcChromiumEnv = "CHATPROTOCOL_CHROMIUM"

// rcChromium returns the Chromium binary.
func rcChromium(t *testing.T) string {
	t.Helper()
	bin := os.Getenv(rcChromiumEnv)
	if bin == "" {
		bin = "/usr/bin/chromium"
	}
	if _, err := exec.LookPath(bin); err != nil {
		realclient.Missing(t, "chromium", err)
	}
	return bin
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
