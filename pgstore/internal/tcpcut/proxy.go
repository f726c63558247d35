// Package tcpcut is the cutting proxy of pgstore's tests: the loopback proxy
// of internal/testkit/cutproxy (round-robin targets, Hold, CutAll), started
// with the byte-count cuts those tests configure. pgstore's multi-instance
// tests put it between stream followers and three servers, and between a
// Window's listener and PostgreSQL.
//
// It is for tests on the loopback interface only.
package tcpcut

import "github.com/Papercusp/chat-protocol-go/internal/testkit/cutproxy"

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

// Proxy forwards connections from its loopback address to its targets; see
// cutproxy.Proxy. Its methods are safe for concurrent use.
type Proxy = cutproxy.Proxy

// Start listens on 127.0.0.1 (a free port) and forwards to targets
// ("host:port"), each new connection to the next one in turn; with no
// target it refuses every connection until SetTargets.
func Start(opts Options, targets ...string) (*Proxy, error) {
	o := &cutproxy.Options{Seed: opts.Seed, MaxCuts: opts.MaxCuts}
	if opts.CutAfterMax > 0 {
		o.Plan = cutproxy.Random{MinBytes: int64(opts.CutAfterMin), MaxBytes: int64(opts.CutAfterMax)}.Plan()
	}
	// The placeholder target is replaced before anyone knows the address.
	p, err := cutproxy.New("", o)
	if err != nil {
		return nil, err
	}
	p.SetTargets(targets...)
	return p, nil
}
