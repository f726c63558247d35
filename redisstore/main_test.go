package redisstore

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/Papercusp/chat-protocol-go/replay/replaytest"
)

// The tests run against a real server (.ci/redis; REDIS_ADDR): the
// conformance kit (replaytest.TestWindow), the window across three
// instances behind stream handlers, with the subscriber's connection
// killed and Redis restarted from its append-only file, and the
// benchmarks against a bare XADD.

// addrEnv names the variable that points the tests at a Redis server, as
// host:port; requiredEnv, set to 1, makes a missing or unusable one fail
// the tests instead of skipping them (.ci/run sets both).
const (
	addrEnv     = "REDIS_ADDR"
	requiredEnv = "CHATPROTOCOL_REDIS_REQUIRED"
)

// testPrefix is this run's key prefix: runs sharing a server never meet.
var testPrefix = func() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return "chatprotocol-test:" + hex.EncodeToString(b[:]) + ":"
}()

// needRedis returns the server's address; it skips t when none is
// configured, and fails it when requiredEnv is set or the server does not
// answer.
func needRedis(t testing.TB) string {
	t.Helper()
	addr := os.Getenv(addrEnv)
	if addr == "" {
		if os.Getenv(requiredEnv) == "1" {
			t.Fatalf("%s is not set and %s=1: run .ci/redis start and export its address", addrEnv, requiredEnv)
		}
		t.Skipf("SKIPPED: %s is not set; run .ci/redis start and export its address", addrEnv)
	}
	c := redis.NewClient(&redis.Options{Addr: addr})
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := c.Ping(ctx).Err(); err != nil {
		t.Fatalf("%s=%s does not answer: %v", addrEnv, addr, err)
	}
	return addr
}

// newClient returns a client of addr, as a process of its own would hold.
func newClient(addr string) *redis.Client {
	return redis.NewClient(&redis.Options{Addr: addr, PoolSize: 32})
}

// newTestWindow returns a Window on a client of its own under this run's
// prefix, both closed when t ends.
func newTestWindow(t testing.TB, addr string, opts WindowOptions) (*Window, *redis.Client) {
	t.Helper()
	c := newClient(addr)
	if opts.Prefix == "" {
		opts.Prefix = testPrefix
	}
	w, err := NewWindow(c, &opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		w.Close()
		_ = c.Close()
	})
	return w, c
}

// subject returns replaytest's constructor of windows with opts.
func subject(addr string, opts WindowOptions) func(ctx context.Context) (replaytest.Subject, error) {
	return func(ctx context.Context) (replaytest.Subject, error) {
		c := newClient(addr)
		if opts.Prefix == "" {
			opts.Prefix = testPrefix
		}
		w, err := NewWindow(c, &opts)
		if err != nil {
			_ = c.Close()
			return replaytest.Subject{}, fmt.Errorf("new window: %w", err)
		}
		return replaytest.Subject{Window: w, Close: func() {
			w.Close()
			_ = c.Close()
		}}, nil
	}
}
