package cutproxy

import (
	"io"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// echo starts a target that echoes every connection until it is closed.
func echo(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { _ = ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() { defer c.Close(); _, _ = io.Copy(c, c) }()
		}
	}()
	return ln.Addr().String()
}

func TestRoundRobinOverTargets(t *testing.T) {
	a, b := writer(t, "a", 1), writer(t, "b", 1)
	p := start(t, a, nil)
	p.SetTargets(a, b)
	var got []string
	for range 4 {
		got = append(got, fetch(t, p))
	}
	assert.Equal(t, []string{"a", "b", "a", "b"}, got, "each connection goes to the next target")
	assert.Equal(t, Stats{Connections: 4}, p.Stats())
}

func TestHoldAndNoTargetRefuse(t *testing.T) {
	p := start(t, writer(t, stream, 7), nil)
	p.Hold(true)
	assert.Empty(t, fetch(t, p), "a held proxy closes a new connection at once")
	p.Hold(false)
	assert.Equal(t, stream, fetch(t, p))
	p.SetTargets()
	assert.Empty(t, fetch(t, p), "without a target a new connection is refused")
	assert.Equal(t, Stats{Connections: 1, Refused: 2}, p.Stats())
}

func TestCutAllCutsBothSides(t *testing.T) {
	p := start(t, echo(t), &Options{MaxCuts: 1, Plan: Fixed(Cut{}, Cut{Bytes: 2})})
	c, err := net.Dial("tcp", p.Addr())
	require.NoError(t, err)
	defer c.Close()
	require.NoError(t, c.SetDeadline(time.Now().Add(5*time.Second)))
	_, err = c.Write([]byte("ping"))
	require.NoError(t, err)
	buf := make([]byte, 4)
	_, err = io.ReadFull(c, buf)
	require.NoError(t, err)
	require.Equal(t, "ping", string(buf))
	require.Equal(t, 1, p.Open())

	require.Equal(t, 1, p.CutAll())
	_, err = c.Read(buf)
	require.ErrorIs(t, err, io.EOF, "the client sees its connection closed")
	require.Eventually(t, func() bool { return p.Open() == 0 }, 5*time.Second, time.Millisecond)
	assert.Equal(t, 0, p.CutAll(), "nothing left to cut")

	// The CutAll cut reached MaxCuts: the next planned cut does not happen.
	d, err := net.Dial("tcp", p.Addr())
	require.NoError(t, err)
	defer d.Close()
	require.NoError(t, d.SetDeadline(time.Now().Add(5*time.Second)))
	_, err = d.Write([]byte("pong"))
	require.NoError(t, err)
	_, err = io.ReadFull(d, buf)
	require.NoError(t, err)
	assert.Equal(t, "pong", string(buf))
	assert.Equal(t, Stats{Connections: 2, Cuts: 1, CutsByCutAll: 1}, p.Stats())
}
