package turn

import (
	chatprotocol "github.com/Papercusp/chat-protocol-go"
	"github.com/Papercusp/chat-protocol-go/replay"
)

// Window returns the window the Producer writes the turn to: a model loop
// reads the turn's retained frames from it to go on with a resumed turn
// (docs/contract.md section 19.4).
func (p *Producer) Window() replay.Window { return p.w }

// Usage returns a copy of what the turn consumed so far, the usage its
// terminal lifecycle carries: the last [Producer.SetUsage] plus the usage
// of each step ended since (docs/contract.md section 16.7); nil when none.
func (p *Producer) Usage() *chatprotocol.Usage {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.usage == nil {
		return nil
	}
	u := *p.usage
	return &u
}
