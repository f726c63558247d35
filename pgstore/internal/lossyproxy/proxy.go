// Package lossyproxy is a loopback TCP proxy between a PostgreSQL client
// and server that loses acknowledgements on purpose: it can cut a
// connection right after the server committed a write, before the client
// hears of it. pgstore's tests put it between pgx and a real server to
// prove that every lost acknowledgement is reported as an unknown outcome,
// never as success or as a definite failure.
//
// The proxy reads both directions of the PostgreSQL v3 protocol (no TLS:
// clients connect with sslmode=disable). Client side, it notes the SQL of
// every statement executed (simple Query, or Bind of a statement whose
// Parse it saw) until each Sync or Query; server side, it holds back every
// message until the ReadyForQuery that ends that group. When the
// ReadyForQuery reports an idle session ('I': no transaction open, so
// whatever ran has committed), the group raised no error, and one of its
// statements writes (INSERT, UPDATE, DELETE or COMMIT), the group is a
// committed write; if the proxy is told to lose it, it closes both sides
// instead of forwarding the group. The server has committed; the client
// sees its connection break while waiting for the answer.
//
// It is for tests on the loopback interface only.
package lossyproxy

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
)

// Group is one committed write as the proxy saw it: the SQL of the
// statements the client ran in it and the command tags the server
// returned.
type Group struct {
	SQL  []string
	Tags []string
}

// Proxy forwards connections from its loopback address to a PostgreSQL
// server. Its methods are safe for concurrent use.
type Proxy struct {
	ln     net.Listener
	target string

	mu      sync.Mutex
	decide  func(Group) bool
	pending int
	conns   map[*pair]bool
	closed  bool

	cuts, commits, roundTrips atomic.Int64
	wg                        sync.WaitGroup
}

// Start listens on 127.0.0.1 (a free port) and forwards every connection
// to target ("host:port").
func Start(target string) (*Proxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &Proxy{ln: ln, target: target, conns: map[*pair]bool{}}
	p.wg.Go(p.accept)
	return p, nil
}

// Addr returns the proxy's "host:port".
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

// CutNext makes the proxy lose the next n committed writes, on any
// connection, in the order the server answers them.
func (p *Proxy) CutNext(n int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.pending += n
}

// SetDecide installs decide, asked about every committed write that
// CutNext did not already claim: true loses it. nil loses none.
func (p *Proxy) SetDecide(decide func(Group) bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.decide = decide
}

// Cuts returns how many committed writes the proxy lost so far.
func (p *Proxy) Cuts() int { return int(p.cuts.Load()) }

// Commits returns how many committed writes passed through the proxy,
// lost or not.
func (p *Proxy) Commits() int { return int(p.commits.Load()) }

// RoundTrips returns how many round trips the clients made so far, over
// every connection: a round trip begins with the first message a client
// sends after the server's last answer was forwarded to it (or after the
// startup message), so that requests pipelined before an answer count as
// one. The startup exchange is not counted.
func (p *Proxy) RoundTrips() int { return int(p.roundTrips.Load()) }

// ResetRoundTrips sets the round-trip count back to 0.
func (p *Proxy) ResetRoundTrips() { p.roundTrips.Store(0) }

// Close stops listening, closes every connection and waits for the
// proxy's goroutines.
func (p *Proxy) Close() error {
	p.mu.Lock()
	p.closed = true
	for c := range p.conns {
		c.close()
	}
	p.mu.Unlock()
	err := p.ln.Close()
	p.wg.Wait()
	return err
}

// lose reports whether the committed write g is to be lost.
func (p *Proxy) lose(g Group) bool {
	p.commits.Add(1)
	p.mu.Lock()
	defer p.mu.Unlock()
	cut := false
	switch {
	case p.pending > 0:
		p.pending--
		cut = true
	case p.decide != nil:
		cut = p.decide(g)
	}
	if cut {
		p.cuts.Add(1)
	}
	return cut
}

func (p *Proxy) accept() {
	for {
		client, err := p.ln.Accept()
		if err != nil {
			return
		}
		server, err := net.Dial("tcp", p.target)
		if err != nil {
			_ = client.Close()
			continue
		}
		c := &pair{client: client, server: server, stmts: map[string]string{}}
		p.mu.Lock()
		if p.closed {
			p.mu.Unlock()
			c.close()
			return
		}
		p.conns[c] = true
		p.mu.Unlock()
		var both sync.WaitGroup
		both.Go(func() { c.fromClient(p) })
		both.Go(func() { c.fromServer(p) })
		p.wg.Go(func() {
			both.Wait()
			p.mu.Lock()
			delete(p.conns, c)
			p.mu.Unlock()
		})
	}
}

// pair is one proxied connection.
type pair struct {
	client, server net.Conn
	once           sync.Once
	// answered is set when the server's answer was forwarded to the client
	// and cleared by the client's next message (RoundTrips).
	answered atomic.Bool

	mu      sync.Mutex
	stmts   map[string]string // prepared statement name -> SQL
	current []string          // SQL executed since the last Sync
	groups  [][]string        // SQL of each group sent, awaiting its ReadyForQuery
}

func (c *pair) close() {
	c.once.Do(func() {
		_ = c.client.Close()
		_ = c.server.Close()
	})
}

// readMessage reads one typed protocol message: type, then an int32 length
// that counts itself, then the body.
func readMessage(r *bufio.Reader) (typ byte, body []byte, err error) {
	var hdr [5]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return 0, nil, err
	}
	n := binary.BigEndian.Uint32(hdr[1:])
	if n < 4 || n > 1<<30 {
		return 0, nil, fmt.Errorf("lossyproxy: bad message length %d", n)
	}
	body = make([]byte, n-4)
	if _, err := io.ReadFull(r, body); err != nil {
		return 0, nil, err
	}
	return hdr[0], body, nil
}

func appendMessage(buf []byte, typ byte, body []byte) []byte {
	buf = append(buf, typ)
	buf = binary.BigEndian.AppendUint32(buf, uint32(len(body)+4))
	return append(buf, body...)
}

// cstring splits a NUL-terminated string off b.
func cstring(b []byte) (string, []byte) {
	i := strings.IndexByte(string(b), 0)
	if i < 0 {
		return string(b), nil
	}
	return string(b[:i]), b[i+1:]
}

// fromClient forwards the client's bytes unchanged while noting the SQL of
// each group.
func (c *pair) fromClient(p *Proxy) {
	defer c.close()
	r := bufio.NewReader(c.client)
	// The startup message has no type byte: length, then the payload.
	var hdr [4]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return
	}
	startup := make([]byte, binary.BigEndian.Uint32(hdr[:])-4)
	if _, err := io.ReadFull(r, startup); err != nil {
		return
	}
	if _, err := c.server.Write(append(hdr[:], startup...)); err != nil {
		return
	}
	for {
		typ, body, err := readMessage(r)
		if err != nil {
			return
		}
		c.note(typ, body)
		if c.answered.Swap(false) {
			p.roundTrips.Add(1)
		}
		if _, err := c.server.Write(appendMessage(nil, typ, body)); err != nil {
			return
		}
	}
}

// note records what a client message means for the group being sent.
func (c *pair) note(typ byte, body []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch typ {
	case 'P': // Parse: statement name, query
		name, rest := cstring(body)
		query, _ := cstring(rest)
		c.stmts[name] = query
	case 'B': // Bind: portal name, statement name
		_, rest := cstring(body)
		name, _ := cstring(rest)
		c.current = append(c.current, c.stmts[name])
	case 'C': // Close of a statement ('S') or portal ('P')
		if len(body) > 0 && body[0] == 'S' {
			name, _ := cstring(body[1:])
			delete(c.stmts, name)
		}
	case 'S': // Sync ends a group
		c.groups = append(c.groups, c.current)
		c.current = nil
	case 'Q': // a simple query is a group of its own
		query, _ := cstring(body)
		c.groups = append(c.groups, []string{query})
	}
}

// popGroup returns the SQL of the oldest group awaiting its ReadyForQuery.
func (c *pair) popGroup() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.groups) == 0 {
		return nil
	}
	g := c.groups[0]
	c.groups = c.groups[1:]
	return g
}

var writes = regexp.MustCompile(`(?i)\b(insert|update|delete|commit)\b`)

// fromServer forwards the server's messages a group at a time, losing the
// committed writes the proxy is told to lose.
func (c *pair) fromServer(p *Proxy) {
	defer c.close()
	r := bufio.NewReader(c.server)
	var (
		buf    []byte
		tags   []string
		failed bool
	)
	for {
		typ, body, err := readMessage(r)
		if err != nil {
			return
		}
		buf = appendMessage(buf, typ, body)
		switch typ {
		case 'C':
			tag, _ := cstring(body)
			tags = append(tags, tag)
		case 'E':
			failed = true
		case 'Z':
			sql := c.popGroup()
			if len(body) == 1 && body[0] == 'I' && !failed && anyWrite(sql) && p.lose(Group{SQL: sql, Tags: tags}) {
				return // closes both sides: the acknowledgement is lost
			}
			c.answered.Store(true)
			if _, err := c.client.Write(buf); err != nil {
				return
			}
			buf, tags, failed = buf[:0], nil, false
		}
		if len(buf) > 1<<20 && typ != 'Z' {
			// A long result: forward what is held (it carries no
			// acknowledgement of a commit; the ReadyForQuery does).
			if _, err := c.client.Write(buf); err != nil {
				return
			}
			buf = buf[:0]
		}
	}
}

func anyWrite(sql []string) bool {
	for _, s := range sql {
		if writes.MatchString(s) {
			return true
		}
	}
	return false
}
