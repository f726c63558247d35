package redisstore

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// redisServer is a Redis server of a test's own, in a directory of its
// own with the append-only file on, which the test stops and starts again
// on the same port and directory.
type redisServer struct {
	t    testing.TB
	bin  string
	conf string
	addr string
	cmd  *exec.Cmd
	exit chan error
}

// startPrivateRedis starts a server for t, stopped when t ends. Without
// redis-server it skips t, or fails it when CHATPROTOCOL_REDIS_REQUIRED=1.
func startPrivateRedis(t testing.TB) *redisServer {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		if os.Getenv(requiredEnv) == "1" {
			t.Fatalf("redis-server is not installed and %s=1: run .ci/redis start", requiredEnv)
		}
		t.Skipf("SKIPPED: redis-server is not installed (%v)", err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	_ = l.Close()
	dir := t.TempDir()
	s := &redisServer{t: t, bin: bin, conf: filepath.Join(dir, "redis.conf"), addr: "127.0.0.1:" + strconv.Itoa(port)}
	conf := fmt.Sprintf("port %d\nbind 127.0.0.1\nprotected-mode no\ndir %s\nsave \"\"\nappendonly yes\nappendfsync everysec\nlogfile %s\n",
		port, dir, filepath.Join(dir, "server.log"))
	if err := os.WriteFile(s.conf, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	s.start()
	t.Cleanup(s.stop)
	return s
}

// start starts the server and waits until it answers PING.
func (s *redisServer) start() {
	s.t.Helper()
	s.cmd = exec.Command(s.bin, s.conf)
	if err := s.cmd.Start(); err != nil {
		s.t.Fatal(err)
	}
	s.exit = make(chan error, 1)
	go func(cmd *exec.Cmd, exit chan<- error) { exit <- cmd.Wait() }(s.cmd, s.exit)
	c := redis.NewClient(&redis.Options{Addr: s.addr, MaxRetries: -1})
	defer c.Close()
	deadline := time.Now().Add(20 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		err := c.Ping(ctx).Err()
		cancel()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("the private Redis did not start: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// stop stops the server as an operator does (SIGTERM: it writes and syncs
// its append-only file) and waits for it to exit.
func (s *redisServer) stop() {
	if s.cmd == nil {
		return
	}
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.exit:
	case <-time.After(20 * time.Second):
		_ = s.cmd.Process.Kill()
		<-s.exit
	}
	s.cmd = nil
}
