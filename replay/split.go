package replay

import (
	"strconv"
	"unicode/utf8"

	chatprotocol "github.com/Papercusp/chat-protocol-go"
	"github.com/Papercusp/chat-protocol-go/refusal"
)

// maxEscapedRune is the most bytes one character takes in a JSON string:
// \u00XX for a control character.
const maxEscapedRune = 6

// SplitDelta cuts text into pieces, in order, each of which fits under
// maxFrameBytes as the text of a delta envelope shaped like template, so
// that a long text reaches the wire as several deltas rather than as a
// frame Append and every reader refuse with frame-too-large
// (docs/contract.md sections 5.2 and 11.3). The pieces concatenate to text.
//
// The envelope's overhead is computed from template, encoded with its
// event replaced by a delta of empty text (keeping the unknown members of
// template's event when it is a *DeltaEvent) and its seq by MaxSeq, so it
// holds whatever seq the pieces carry. The envelopes must not be larger
// otherwise: their ids, at and unknown members no longer than template's.
// maxFrameBytes is the window's limit: 0 means
// [chatprotocol.DefaultMaxFrameBytes] (1 MiB), a negative value no limit
// (text is one piece).
//
// Each piece is as long as it can be: cut only between characters, never
// inside a multi-byte rune (a UTF-16 surrogate pair is one 4-byte rune
// here), and measured as the canonical form writes it, '"' and '\' and
// control characters escaped (\n as 2 bytes, \u001f as 6), every other
// character as its UTF-8 bytes. An empty text gives no piece.
//
// It refuses: a template that does not validate (its Validate refusal),
// text that is not valid UTF-8 (invalid-event, /event/text: no delta could
// carry it), and a template that leaves less than 6 bytes of text, the most
// one character takes (frame-too-large).
func SplitDelta(template *chatprotocol.ChatEventEnvelope, text string, maxFrameBytes int) ([]string, error) {
	if template == nil {
		return nil, refuse(refusal.CodeInvalidEnvelope, "", "no template envelope")
	}
	if !utf8.ValidString(text) {
		return nil, refuse(refusal.CodeInvalidEvent, "/event/text", "not valid UTF-8")
	}
	limit := frameLimit(maxFrameBytes)
	if limit < 0 {
		if text == "" {
			return nil, nil
		}
		return []string{text}, nil
	}
	probe := *template
	probe.Seq = chatprotocol.MaxSeq
	delta := &chatprotocol.DeltaEvent{}
	if d, ok := template.Event.(*chatprotocol.DeltaEvent); ok {
		delta.Unknown = d.Unknown
	}
	probe.Event = delta
	empty, err := probe.AppendJSON(nil)
	if err != nil {
		return nil, err
	}
	budget := limit - len(empty)
	if budget < maxEscapedRune {
		return nil, refuse(refusal.CodeFrameTooLarge, "",
			"an empty delta envelope like the template takes "+strconv.Itoa(len(empty))+" of the "+strconv.Itoa(limit)+" bytes allowed")
	}
	return splitText(text, budget), nil
}

// splitText cuts text into the longest pieces whose escaped form takes at
// most budget bytes each; a character whose escaped form alone exceeds
// budget is a piece of its own.
func splitText(text string, budget int) []string {
	var pieces []string
	for text != "" {
		if len(text)*maxEscapedRune <= budget {
			return append(pieces, text)
		}
		n, used := 0, 0
		for n < len(text) {
			w, size := escapedLen(text[n:])
			if used+w > budget {
				break
			}
			used += w
			n += size
		}
		if n == 0 {
			_, n = escapedLen(text)
		}
		pieces = append(pieces, text[:n])
		text = text[n:]
	}
	return pieces
}

// escapedLen returns how many bytes the first character of s takes in the
// canonical JSON string form, and how many bytes of s it is. An invalid
// byte counts as U+FFFD, 3 bytes, and is one byte of s.
func escapedLen(s string) (escaped, size int) {
	c := s[0]
	if c >= utf8.RuneSelf {
		r, size := utf8.DecodeRuneInString(s)
		if r == utf8.RuneError && size == 1 {
			return 3, 1
		}
		return size, size
	}
	switch {
	case c == '"' || c == '\\' || c == '\b' || c == '\f' || c == '\n' || c == '\r' || c == '\t':
		return 2, 1
	case c < 0x20:
		return maxEscapedRune, 1
	}
	return 1, 1
}
