package turn

import (
	"unicode/utf8"

	chatprotocol "github.com/Papercusp/chat-protocol-go"
)

// MaxEndTextBytes bounds the free texts of a turn's end, in bytes of
// UTF-8: the terminal lifecycle's reason ([Producer.SetReason]) and the
// error event's message ([Failure].Message) are each cut to at most this
// many bytes, on a character boundary, and shorter still, down to nothing,
// when their frame would not fit the frame limit ([Options].MaxFrameBytes),
// so that a turn can always end (docs/contract.md section 16.5). A provider's
// stop reason or error message may be of any length.
const MaxEndTextBytes = 4096

// fit cuts *text, a free text of env's event, to MaxEndTextBytes, then to
// the longest prefix with which env's canonical JSON fits the frame limit.
// p.mu is held.
func (p *Producer) fit(env *chatprotocol.ChatEventEnvelope, text *string) error {
	full := cut(*text, MaxEndTextBytes)
	*text = full
	if p.maxFrame < 0 {
		return nil
	}
	fits := func(n int) (bool, error) {
		*text = cut(full, n)
		b, err := env.AppendJSON(nil)
		return len(b) <= p.maxFrame, err
	}
	if ok, err := fits(len(full)); ok || err != nil {
		return err
	}
	lo, hi := 0, len(full) // the prefix of lo bytes fits (or none does); hi's does not
	for hi-lo > 1 {
		mid := lo + (hi-lo)/2
		ok, err := fits(mid)
		if err != nil {
			return err
		}
		if ok {
			lo = mid
		} else {
			hi = mid
		}
	}
	*text = cut(full, lo)
	return nil
}

// cut returns the longest prefix of s of at most n bytes that does not end
// inside a character.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
