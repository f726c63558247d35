// Package tcpcut is a loopback TCP proxy for pgstore's tests that cuts
// connections on purpose: each new connection goes to the next of its
// targets in turn (so a client's reconnect lands on another server), it
// can cut a connection after a random number of bytes from the server,
// cut every open connection at once, and refuse new ones while held.
// pgstore's multi-instance tests put it between stream followers and
// three servers, and between a Window's listener and PostgreSQL.
//
// It is for tests on the loopback interface only.
package tcpcut

import (
	"io"
	"math/rand/v2"
	"net"
	"sync"
	"sync/atomic"
)

// Options configures a Proxy; the zero value forwards without cutting.
type Options struct {
	// CutAfterMin and CutAfterMax, when CutAfterMax > 0, cut each
	// connection after a number of bytes from the server drawn uniformly
	// in [CutAfterMin, CutAfterMax].
	CutAfterMin, CutAfterMax int
	// MaxCuts stops the byte-count cuts once the proxy has cut that many
	// connections, of either kind (byte count or CutAll); 0 means no
	// bound.
	MaxCuts int
	// Seed seeds the draws.
	Seed uint64
}

// Stats are a Proxy's counts.
type Stats struct {
	Connections int // accepted and forwarded
	Refused     int // accepted while held, closed at once
	Cuts        int // connections the proxy cut (byte count or CutAll)
}

// Proxy forwards connections from its loopback address to its targets.
// Its methods are safe for concurrent use.
type Proxy struct {
	ln   net.Listener
	opts Options

	mu      sync.Mutex
	targets []string
	next    int
	rng     *rand.Rand
	conns   map[*pair]struct{}
	held    bool
	closed  bool

	connections, refused, cuts atomic.Int64
	wg                         sync.WaitGroup
}

type pair struct {
	client, server net.Conn
	once           sync.Once
}

func (p *pair) close() {
	p.once.Do(func() {
		_ = p.client.Close()
		_ = p.server.Close()
	})
}

// Start listens on 127.0.0.1 (a free port) and forwards to targets
// ("host:port"), each new connection to the next one in turn.
func Start(opts Options, targets ...string) (*Proxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &Proxy{ln: ln, opts: opts, targets: targets, conns: make(map[*pair]struct{}),
		rng: rand.New(rand.NewPCG(opts.Seed, opts.Seed^0x9e3779b97f4a7c15))}
	p.wg.Add(1)
	go p.accept()
	return p, nil
}

// Addr is the proxy's address, "127.0.0.1:port".
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

// SetTargets replaces the targets.
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

// CutAll closes every open connection, both sides, and returns how many.
func (p *Proxy) CutAll() int {
	p.mu.Lock()
	pairs := make([]*pair, 0, len(p.conns))
	for c := range p.conns {
		pairs = append(pairs, c)
	}
	p.mu.Unlock()
	for _, c := range pairs {
		c.close()
	}
	p.cuts.Add(int64(len(pairs)))
	return len(pairs)
}

// Open is the number of connections open now.
func (p *Proxy) Open() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.conns)
}

// Stats returns the counts so far.
func (p *Proxy) Stats() Stats {
	return Stats{Connections: int(p.connections.Load()), Refused: int(p.refused.Load()), Cuts: int(p.cuts.Load())}
}

// Close stops accepting, cuts every connection and waits for the
// forwarding goroutines.
func (p *Proxy) Close() error {
	p.mu.Lock()
	p.closed = true
	p.mu.Unlock()
	err := p.ln.Close()
	p.CutAll()
	p.wg.Wait()
	return err
}

func (p *Proxy) accept() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		if p.held || p.closed || len(p.targets) == 0 {
			p.mu.Unlock()
			p.refused.Add(1)
			_ = c.Close()
			continue
		}
		target := p.targets[p.next%len(p.targets)]
		p.next++
		limit := -1
		if p.opts.CutAfterMax > 0 && (p.opts.MaxCuts == 0 || int(p.cuts.Load()) < p.opts.MaxCuts) {
			limit = p.opts.CutAfterMin + p.rng.IntN(p.opts.CutAfterMax-p.opts.CutAfterMin+1)
		}
		p.mu.Unlock()
		s, err := net.Dial("tcp", target)
		if err != nil {
			_ = c.Close() // the target is down: the client sees a refused connection
			continue
		}
		pr := &pair{client: c, server: s}
		p.mu.Lock()
		p.conns[pr] = struct{}{}
		p.mu.Unlock()
		p.connections.Add(1)
		p.wg.Add(2)
		go func() {
			defer p.wg.Done()
			_, _ = io.Copy(s, c)
			pr.close()
		}()
		go func() {
			defer p.wg.Done()
			defer p.forget(pr)
			p.fromServer(pr, limit)
		}()
	}
}

func (p *Proxy) forget(pr *pair) {
	pr.close()
	p.mu.Lock()
	delete(p.conns, pr)
	p.mu.Unlock()
}

// fromServer copies the server's bytes to the client, cutting after limit
// bytes when limit >= 0.
func (p *Proxy) fromServer(pr *pair, limit int) {
	if limit < 0 {
		_, _ = io.Copy(pr.client, pr.server)
		return
	}
	if n, _ := io.CopyN(pr.client, pr.server, int64(limit)); n == int64(limit) {
		p.cuts.Add(1)
	}
}
