// Package cutproxy is a loopback TCP proxy for tests that forwards each
// connection to the next of its targets in turn and cuts connections at
// chosen or random points of the response: after a number of
// server-to-client bytes, or right after the end of an SSE "id:" line, inside
// a frame whose data has not been sent yet (docs/contract.md section 14, a
// reconnecting client's failures). It can also cut every open connection at
// once (CutAll) and refuse new ones while held (Hold), as pgstore's tests do
// between stream followers and several servers, and between a Window's
// listener and PostgreSQL.
//
// The proxy knows nothing of HTTP: it scans the raw server-to-client bytes, so
// its cut points count status line, headers and chunk framing too. A cut
// closes both sides of the connection at once; the client sees its response
// end in the middle.
package cutproxy

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"sync"
	"time"
)

// Cut is where one connection is cut, as a count of server-to-client bytes,
// counted from the end of [Options.Arm] when Arm is set (from the first byte
// otherwise). The zero Cut never cuts. When both fields are set, the first
// point reached wins.
type Cut struct {
	// Bytes cuts the connection once this many bytes were forwarded; 0 does
	// not cut by bytes.
	Bytes int64
	// IDLine cuts the connection right after the line end ("\n") of the
	// IDLine-th SSE id line ("\nid:" at a line start), 1-based: the client
	// has the id field of that frame and nothing after it. 0 does not cut by
	// id line.
	IDLine int
	// SpareIDLineEnd moves a Bytes cut that would fall right after the line
	// end of an id line one byte later, past the blank line that ends the
	// frame when the frame is written whole (the proxy knows nothing of
	// chunk framing): the one point where a client that applies an id as
	// soon as it reads it has the id of a frame it never dispatches.
	SpareIDLineEnd bool
}

// Plan chooses the cut of the conn-th accepted connection (0-based). It is
// called once per connection, in accept order, under the proxy's lock, with
// the proxy's seeded random source.
type Plan func(conn int, rng *rand.Rand) Cut

// Fixed is a Plan that cuts the first len(cuts) connections at the given
// points, in order, and leaves every later connection uncut.
func Fixed(cuts ...Cut) Plan {
	return func(conn int, _ *rand.Rand) Cut {
		if conn < len(cuts) {
			return cuts[conn]
		}
		return Cut{}
	}
}

// Random is a Plan that cuts each connection at a random point: with
// probability IDLineShare right after an id line drawn uniformly from
// [MinIDLine, MaxIDLine], otherwise after a byte count drawn uniformly from
// [MinBytes, MaxBytes]. A minimum below 1 counts as 1 and a maximum below
// its minimum as the minimum.
type Random struct {
	IDLineShare          float64
	MinIDLine, MaxIDLine int
	MinBytes, MaxBytes   int64
	// SpareIDLineEnd sets [Cut.SpareIDLineEnd] on every byte-count cut.
	SpareIDLineEnd bool
}

// Plan returns r as a Plan.
func (r Random) Plan() Plan {
	minID := max(r.MinIDLine, 1)
	maxID := max(r.MaxIDLine, minID)
	minBytes := max(r.MinBytes, 1)
	maxBytes := max(r.MaxBytes, minBytes)
	return func(_ int, rng *rand.Rand) Cut {
		if rng.Float64() < r.IDLineShare {
			return Cut{IDLine: minID + rng.IntN(maxID-minID+1)}
		}
		return Cut{Bytes: minBytes + rng.Int64N(maxBytes-minBytes+1), SpareIDLineEnd: r.SpareIDLineEnd}
	}
}

// Options configures a Proxy; nil means every default.
type Options struct {
	// Seed seeds the random source handed to Plan (a PCG seeded with Seed,
	// Seed): the same seed and the same connection order give the same cuts.
	Seed uint64
	// Plan chooses each connection's cut; nil never cuts.
	Plan Plan
	// MaxCuts is the most cuts the proxy makes: once it made that many,
	// every connection passes uncut, also one whose cut point comes later.
	// 0 means no limit.
	MaxCuts int
	// Arm, when set, makes cut points count from the end of its first
	// occurrence in a connection's server-to-client bytes; a connection
	// where it never appears is never cut (for example "text/event-stream",
	// to spare the page and result requests of a browser test).
	Arm []byte
	// DialTimeout bounds the dial to the target; 0 means 5 seconds.
	DialTimeout time.Duration
}

// Stats counts what a Proxy did so far.
type Stats struct {
	// Connections is the number of client connections accepted and not
	// refused.
	Connections int
	// Cuts is the number of connections cut; CutsAtIDLine, CutsAtBytes and
	// CutsByCutAll split it by what cut them.
	Cuts, CutsAtIDLine, CutsAtBytes, CutsByCutAll int
	// SparedIDLineEnds counts the byte-count cuts that
	// [Cut.SpareIDLineEnd] moved one byte later.
	SparedIDLineEnds int
	// DialErrors is the number of connections closed because the target
	// refused the dial.
	DialErrors int
	// Refused is the number of connections closed at once because the
	// proxy was held or had no target.
	Refused int
}

// Proxy is a running cutting proxy. Its methods are safe for concurrent use.
type Proxy struct {
	ln   net.Listener
	opts Options

	mu      sync.Mutex
	targets []string
	next    int // the target of the next connection, modulo len(targets)
	rng     *rand.Rand
	stats   Stats
	links   map[*link]struct{}
	held    bool
	closed  bool
	wg      sync.WaitGroup
}

// link is one proxied connection: its client side and, once dialled, its
// server side. The proxy's lock guards server and cut.
type link struct {
	client, server net.Conn
	cut            bool // counted as cut: a second cut is not counted
}

// New starts a proxy listening on 127.0.0.1 (a free port) that forwards to
// target ("host:port"; SetTargets changes it). It returns the listen error,
// if any.
func New(target string, opts *Options) (*Proxy, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.DialTimeout <= 0 {
		o.DialTimeout = 5 * time.Second
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("cutproxy: listen: %w", err)
	}
	p := &Proxy{
		ln:      ln,
		opts:    o,
		targets: []string{target},
		rng:     rand.New(rand.NewPCG(o.Seed, o.Seed)),
		links:   make(map[*link]struct{}),
	}
	p.wg.Add(1)
	go p.accept()
	return p, nil
}

// Addr is the proxy's listen address, "127.0.0.1:port".
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

// Stats returns the counts so far.
func (p *Proxy) Stats() Stats {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.stats
}

// SetTargets replaces the targets ("host:port"): each new connection goes to
// the next one in turn, so a client's reconnect lands on another server.
// With no target, new connections are refused.
func (p *Proxy) SetTargets(targets ...string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.targets = targets
}

// Hold makes the proxy refuse (accept and close at once) new connections
// while held is true.
func (p *Proxy) Hold(held bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.held = held
}

// CutAll cuts every open connection, both sides, and returns how many. The
// cuts count towards [Options.MaxCuts].
func (p *Proxy) CutAll() int {
	var cut []*link
	p.mu.Lock()
	for l := range p.links {
		if l.server != nil && !l.cut {
			l.cut = true
			cut = append(cut, l)
		}
	}
	p.stats.Cuts += len(cut)
	p.stats.CutsByCutAll += len(cut)
	p.mu.Unlock()
	for _, l := range cut {
		_ = l.client.Close()
		_ = l.server.Close()
	}
	return len(cut)
}

// Open is the number of connections open now (dialled and not yet closed).
func (p *Proxy) Open() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for l := range p.links {
		if l.server != nil {
			n++
		}
	}
	return n
}

// Close stops accepting, closes every open connection and waits for all of
// the proxy's goroutines to return. It is idempotent and returns nil.
func (p *Proxy) Close() error {
	p.mu.Lock()
	if !p.closed {
		p.closed = true
		_ = p.ln.Close()
		for l := range p.links {
			_ = l.client.Close()
			if l.server != nil {
				_ = l.server.Close()
			}
		}
	}
	p.mu.Unlock()
	p.wg.Wait()
	return nil
}

func (p *Proxy) accept() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return // the listener is closed (Close) or broken: either way, stop.
		}
		p.mu.Lock()
		if p.closed {
			p.mu.Unlock()
			_ = c.Close()
			return
		}
		if p.held || len(p.targets) == 0 {
			p.stats.Refused++
			p.mu.Unlock()
			_ = c.Close()
			continue
		}
		target := p.targets[p.next%len(p.targets)]
		p.next++
		n := p.stats.Connections
		p.stats.Connections++
		var cut Cut
		if p.opts.Plan != nil && (p.opts.MaxCuts == 0 || p.stats.Cuts < p.opts.MaxCuts) {
			cut = p.opts.Plan(n, p.rng)
		}
		l := &link{client: c}
		p.links[l] = struct{}{}
		p.wg.Add(1)
		p.mu.Unlock()
		go p.serve(l, target, cut)
	}
}

// connect records server as l's server side, or reports false when the
// proxy is closing or cut l while it dialled.
func (p *Proxy) connect(l *link, server net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed || l.cut {
		return false
	}
	l.server = server
	return true
}

func (p *Proxy) forget(l *link) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.links, l)
}

func (p *Proxy) serve(l *link, target string, cut Cut) {
	defer p.wg.Done()
	defer p.forget(l)
	client := l.client
	defer client.Close()

	server, err := net.DialTimeout("tcp", target, p.opts.DialTimeout)
	if err != nil {
		p.mu.Lock()
		p.stats.DialErrors++
		p.mu.Unlock()
		return
	}
	if !p.connect(l, server) {
		_ = server.Close()
		return
	}
	defer server.Close()

	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _ = io.Copy(server, client)
		// The client finished sending (or is gone): pass the half-close on.
		if tc, ok := server.(*net.TCPConn); ok {
			_ = tc.CloseWrite()
		}
	}()

	c := newCutter(cut, p.opts.Arm)
	buf := make([]byte, 32<<10)
	for {
		n, rerr := server.Read(buf)
		if n > 0 && !p.forward(l, c, buf[:n]) {
			break
		}
		if rerr != nil {
			break
		}
	}
	// Either side's end, or a cut: close both so the copy above returns.
	_ = client.Close()
	_ = server.Close()
	<-done
}

// forward writes b to client up to the connection's cut point, if b holds
// it, and counts the cut. It reports whether the connection goes on: false
// after a cut or a failed write.
func (p *Proxy) forward(l *link, c *cutter, b []byte) bool {
	k, hit := c.scan(b)
	if hit != cutNone && !p.countCut(l, hit) {
		c.cut = Cut{} // past MaxCuts: the connection passes uncut
		k, hit = len(b), cutNone
	}
	if _, err := l.client.Write(b[:k]); err != nil {
		return false
	}
	return hit == cutNone
}

// countCut counts a cut of l of kind hit, or reports false when MaxCuts
// cuts were already made or CutAll cut l.
func (p *Proxy) countCut(l *link, hit cutKind) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if l.cut || (p.opts.MaxCuts > 0 && p.stats.Cuts >= p.opts.MaxCuts) {
		return false
	}
	l.cut = true
	p.stats.Cuts++
	switch hit {
	case cutIDLine:
		p.stats.CutsAtIDLine++
	case cutBytesSpared:
		p.stats.CutsAtBytes++
		p.stats.SparedIDLineEnds++
	default:
		p.stats.CutsAtBytes++
	}
	return true
}

type cutKind int

const (
	cutNone cutKind = iota
	cutBytes
	cutBytesSpared // a byte-count cut moved past an id line's end
	cutIDLine
)

var idLineStart = []byte("\nid:")

// cutter finds a connection's cut point in its server-to-client bytes, chunk
// by chunk, carrying across chunk boundaries what a match needs.
type cutter struct {
	cut   Cut
	arm   []byte
	armed bool
	tail  []byte // the last bytes seen, for matches across chunks
	sent  int64  // bytes forwarded since armed
	ids   int    // id lines started since armed
	inID  bool   // inside an id line, waiting for its "\n"
	spare bool   // the cut by bytes was moved past an id line's end
}

func newCutter(cut Cut, arm []byte) *cutter {
	return &cutter{cut: cut, arm: arm, armed: len(arm) == 0, tail: []byte{'\n'}}
}

// scan returns how many bytes of b to forward and whether the connection is
// to be cut after them.
func (c *cutter) scan(b []byte) (int, cutKind) {
	if c.cut == (Cut{}) {
		return len(b), cutNone
	}
	start := 0
	if !c.armed {
		i := indexAcross(c.tail, b, c.arm)
		if i < 0 {
			c.keepTail(b, len(c.arm))
			return len(b), cutNone
		}
		c.armed = true
		start = i
		c.tail = []byte{0} // an id line right after the marker does not start a line
	}
	track := c.cut.IDLine > 0 || (c.cut.Bytes > 0 && c.cut.SpareIDLineEnd)
	for i := start; i < len(b); i++ {
		idEnd := false // b[i] ends an id line
		if c.inID {
			if b[i] == '\n' {
				c.inID, idEnd = false, true
				if c.ids == c.cut.IDLine {
					return i + 1, cutIDLine
				}
			}
		} else if track && b[i] == ':' && c.endsWith(b[:i+1], idLineStart) {
			c.ids++
			c.inID = true
		}
		c.sent++
		if c.cut.Bytes > 0 && c.sent >= c.cut.Bytes {
			if idEnd && c.cut.SpareIDLineEnd {
				c.spare = true
				continue
			}
			if c.spare {
				return i + 1, cutBytesSpared
			}
			return i + 1, cutBytes
		}
	}
	c.keepTail(b, len(idLineStart))
	return len(b), cutNone
}

// endsWith reports whether the stream so far (tail, then b) ends with s.
func (c *cutter) endsWith(b, s []byte) bool {
	if len(b) >= len(s) {
		return bytes.HasSuffix(b, s)
	}
	need := len(s) - len(b)
	return len(c.tail) >= need && bytes.HasSuffix(c.tail, s[:need]) && bytes.Equal(b, s[need:])
}

// keepTail keeps the last n-1 bytes of the stream so far for the next chunk.
func (c *cutter) keepTail(b []byte, n int) {
	joined := append(append([]byte(nil), c.tail...), b...)
	if keep := n - 1; len(joined) > keep {
		joined = joined[len(joined)-keep:]
	}
	c.tail = joined
}

// indexAcross returns the offset in b just past the first occurrence of s in
// tail+b that ends inside b, or -1.
func indexAcross(tail, b, s []byte) int {
	joined := append(append([]byte(nil), tail...), b...)
	i := bytes.Index(joined, s)
	if i < 0 {
		return -1
	}
	end := i + len(s) - len(tail)
	if end < 0 {
		return -1
	}
	return end
}
