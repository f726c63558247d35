package tcpcut

import (
	"bufio"
	"io"
	"net"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// server answers every connection with its name and then a line of n
// bytes, and closes it.
func server(t *testing.T, name string, n int) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { _ = ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			body := make([]byte, n)
			for i := range body {
				body[i] = 'x'
			}
			_, _ = c.Write(append([]byte(name+"\n"), body...))
			_ = c.Close()
		}
	}()
	return ln.Addr().String()
}

func get(t *testing.T, addr string) (string, int, error) {
	c, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	defer c.Close()
	r := bufio.NewReader(c)
	name, err := r.ReadString('\n')
	if err != nil {
		return name, 0, err
	}
	n, err := io.Copy(io.Discard, r)
	return name[:len(name)-1], int(n), err
}

func TestRoundRobinAndCuts(t *testing.T) {
	a, b := server(t, "a", 100), server(t, "b", 100)
	p, err := Start(Options{CutAfterMin: 10, CutAfterMax: 20, MaxCuts: 2, Seed: 1}, a, b)
	require.NoError(t, err)
	defer p.Close()

	var names []string
	var sizes []int
	for range 4 {
		name, n, _ := get(t, p.Addr())
		names = append(names, name)
		sizes = append(sizes, n)
	}
	assert.Equal(t, []string{"a", "b", "a", "b"}, names, "each connection goes to the next target")
	for i := range 2 {
		assert.Less(t, sizes[i], 100-8, "connection %d is cut after 10 to 20 bytes", i)
	}
	assert.Equal(t, []int{100, 100}, sizes[2:], "no cut after MaxCuts")
	assert.Equal(t, 2, p.Stats().Cuts)
	assert.Equal(t, 4, p.Stats().Connections)

	p.Hold(true)
	_, _, err = get(t, p.Addr())
	require.Error(t, err, "a held proxy closes new connections")
	assert.Equal(t, 1, p.Stats().Refused)
	p.Hold(false)
	name, n, err := get(t, p.Addr())
	require.NoError(t, err)
	assert.Equal(t, "a", name)
	assert.Equal(t, 100, n)
}
