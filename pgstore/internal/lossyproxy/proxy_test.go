package lossyproxy

import (
	"bufio"
	"encoding/binary"
	"io"
	"net"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fakeServer speaks just enough of the protocol: after the startup message
// it answers ReadyForQuery, then answers every simple query with a
// CommandComplete tagged by the query's first word and ReadyForQuery idle.
func fakeServer(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { _ = ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				r := bufio.NewReader(c)
				var hdr [4]byte
				if _, err := io.ReadFull(r, hdr[:]); err != nil {
					return
				}
				if _, err := io.CopyN(io.Discard, r, int64(binary.BigEndian.Uint32(hdr[:])-4)); err != nil {
					return
				}
				_, _ = c.Write(appendMessage(nil, 'Z', []byte{'I'}))
				for {
					typ, body, err := readMessage(r)
					if err != nil || typ != 'Q' {
						return
					}
					q, _ := cstring(body)
					word := q
					for i := range q {
						if q[i] == ' ' {
							word = q[:i]
							break
						}
					}
					out := appendMessage(nil, 'C', append([]byte(word), 0))
					_, _ = c.Write(appendMessage(out, 'Z', []byte{'I'}))
				}
			}()
		}
	}()
	return ln.Addr().String()
}

// client connects through the proxy and runs simple queries.
type client struct {
	c net.Conn
	r *bufio.Reader
}

func dial(t *testing.T, addr string) *client {
	c, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	startup := binary.BigEndian.AppendUint32(nil, 8)
	startup = binary.BigEndian.AppendUint32(startup, 196608)
	_, err = c.Write(startup)
	require.NoError(t, err)
	cl := &client{c: c, r: bufio.NewReader(c)}
	typ, _, err := readMessage(cl.r)
	require.NoError(t, err)
	require.Equal(t, byte('Z'), typ)
	return cl
}

// query runs q and returns its tag, or an error when the connection broke.
func (cl *client) query(q string) (string, error) {
	if _, err := cl.c.Write(appendMessage(nil, 'Q', append([]byte(q), 0))); err != nil {
		return "", err
	}
	var tag string
	for {
		typ, body, err := readMessage(cl.r)
		if err != nil {
			return "", err
		}
		switch typ {
		case 'C':
			tag, _ = cstring(body)
		case 'Z':
			return tag, nil
		}
	}
}

func TestProxyForwardsAndCutsCommittedWrites(t *testing.T) {
	p, err := Start(fakeServer(t))
	require.NoError(t, err)
	defer p.Close()
	cl := dial(t, p.Addr())

	tag, err := cl.query("SELECT 1")
	require.NoError(t, err)
	assert.Equal(t, "SELECT", tag, "a read passes")
	p.CutNext(1)
	tag, err = cl.query("SELECT 2")
	require.NoError(t, err, "a read is never cut, even when a cut is pending")
	assert.Equal(t, "SELECT", tag)
	_, err = cl.query("UPDATE t SET a = 1")
	assert.Error(t, err, "the pending cut loses the committed write's answer")
	assert.Equal(t, 1, p.Cuts())

	var (
		mu   sync.Mutex
		seen []Group
	)
	p.SetDecide(func(g Group) bool {
		mu.Lock()
		defer mu.Unlock()
		seen = append(seen, g)
		return g.SQL[0] == "COMMIT"
	})
	cl = dial(t, p.Addr())
	tag, err = cl.query("INSERT INTO t VALUES (1)")
	require.NoError(t, err)
	assert.Equal(t, "INSERT", tag, "decide kept this write")
	_, err = cl.query("COMMIT")
	assert.Error(t, err, "decide lost this one")
	mu.Lock()
	defer mu.Unlock()
	require.Len(t, seen, 2)
	assert.Equal(t, []string{"INSERT"}, seen[0].Tags)
	assert.Equal(t, 2, p.Cuts())
	assert.Equal(t, 3, p.Commits())
}

// Each request the client sends after an answer is one round trip.
func TestProxyCountsRoundTrips(t *testing.T) {
	p, err := Start(fakeServer(t))
	require.NoError(t, err)
	defer p.Close()
	cl := dial(t, p.Addr())
	assert.Equal(t, 0, p.RoundTrips(), "the startup is not counted")
	for i := range 3 {
		_, err := cl.query("SELECT 1")
		require.NoError(t, err)
		assert.Equal(t, i+1, p.RoundTrips())
	}
	p.ResetRoundTrips()
	assert.Equal(t, 0, p.RoundTrips())
}
