package teststream

import (
	"fmt"
	"io"
	"math/rand/v2"
	"strconv"
)

// words are the vocabulary of the token frames, with a few characters
// that JSON escapes and a few outside ASCII.
var words = []string{
	"the", "order", "ships", "within", "two", "days", "and", "you", "can", "return", "it",
	"for", "a", "full", "refund", "size", "43", "is", "in", "stock", "trail", "runner",
	"\"quoted\"", "ümlaut", "👟", "naïve", "<b>", "50%", "tab\there", "line\nbreak",
}

// Generate writes a stream of at least size bytes to w, drawn with seed: one
// turn of the Scout dialect, a session frame, then mostly token deltas with
// tool starts, product frames, cards opened and closed, state snapshots,
// heartbeats and comments, then done. With text false it sends no tokens
// and no tool starts, so the turn's state stays small however long the
// stream is. Of a thousand frames about 880 are tokens, 50 product frames,
// 25 heartbeats, 24 comments, 15 state snapshots, 5 cards (each closed at
// once) and 1 a tool start. Every frame is valid: the stream upgrades
// without a refusal.
// It returns w's first error.
func Generate(w io.Writer, size int64, seed uint64, text bool) error {
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	cw := &countingWriter{w: w}
	id := 0
	frame := func(data string) {
		id++
		fmt.Fprintf(cw, "id: %d\ndata: %s\n\n", id, data)
	}
	frame(`{"type":"session","sessionId":"gen-` + strconv.FormatUint(seed, 10) + `"}`)
	card := 0
	for cw.n < size && cw.err == nil {
		switch r := rng.IntN(1000); {
		case r < 880 && text:
			n := 1 + rng.IntN(8)
			s := ""
			for i := range n {
				if i > 0 {
					s += " "
				}
				s += words[rng.IntN(len(words))]
			}
			frame(`{"type":"token","content":` + strconv.Quote(s) + `}`)
		case r < 881 && text:
			frame(`{"type":"tool_start","tool":"search_products"}`)
		case r < 931:
			frame(fmt.Sprintf(`{"type":"products","products":[{"sku":"A-%d","name":"Trail runner","price":89.0},{"sku":"B-%d","name":"Road flyer","price":120.5}]}`, rng.IntN(1000), rng.IntN(1000)))
		case r < 936:
			card++
			frame(fmt.Sprintf(`{"type":"card","card":{"correlationId":"corr-%d","createdAt":1764500001000,"prompt":"Which size do you wear?","presentation":{"kind":"radio","options":[{"id":"s42","label":"EU 42"},{"id":"s43","label":"EU 43"}]},"allowDecline":true}}`, card))
			frame(fmt.Sprintf(`{"type":"card_closed","correlationId":"corr-%d"}`, card))
		case r < 951:
			frame(fmt.Sprintf(`{"type":"state","version":%d,"snapshot":{"cart":{"items":%d,"total":%d.5}}}`, id, rng.IntN(10), rng.IntN(500)))
		case r < 976:
			fmt.Fprintf(cw, "event: heartbeat\ndata: {\"tsMs\":%d}\n\n", 1764500000000+int64(id))
		default:
			fmt.Fprint(cw, ": keep-alive\n\n")
		}
	}
	frame(`{"type":"done","usage":{"totalTokens":` + strconv.Itoa(id) + `}}`)
	return cw.err
}

// countingWriter counts the bytes written and keeps the first error.
type countingWriter struct {
	w   io.Writer
	n   int64
	err error
}

func (c *countingWriter) Write(p []byte) (int, error) {
	if c.err != nil {
		return 0, c.err
	}
	n, err := c.w.Write(p)
	c.n += int64(n)
	c.err = err
	return n, err
}
