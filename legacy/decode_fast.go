package legacy

import (
	"bytes"
	"unicode/utf8"

	chatprotocol "github.com/Papercusp/chat-protocol-go"
	"github.com/Papercusp/chat-protocol-go/internal/jsjson"
)

// The bounds of the fast path: frames with more top-level members, or
// nested deeper, go the general way.
const (
	maxFastMembers = 8
	maxFastDepth   = 64
)

// internedTypes holds the type names of both dialects, each mapped to itself,
// so that decodeStrict keeps a frame's type without allocating it.
var internedTypes = func() map[string]string {
	names := map[string]string{}
	for _, vocabulary := range []map[string][]member{scoutVocabulary, papercuspVocabulary} {
		for t := range vocabulary {
			names[t] = t
		}
	}
	return names
}()

// memberNames holds "type", "schemaVersion" and the member names of every
// type of both dialects, each mapped to itself, so that decodeStrict keeps
// a name without allocating it.
var memberNames = func() map[string]string {
	names := map[string]string{"type": "type", "schemaVersion": "schemaVersion"}
	for _, vocabulary := range []map[string][]member{scoutVocabulary, papercuspVocabulary} {
		for _, specs := range vocabulary {
			for _, m := range specs {
				names[m.name] = m.name
			}
		}
	}
	return names
}()

// fastMember is a top-level member decodeStrict read: its name ("" for a
// name no type reads) and, when its value is a string, that string.
type fastMember struct {
	name     string
	value    string
	isString bool
}

// decodeStrict is the fast path of DecodeLegacyChatFrame for the frames a
// stream carries most: token and delta frames, the other frame types whose
// members are all strings (session, tool_start, card_closed, error,
// navigate), and product frames. It takes a frame only when it is one
// strict JSON object: valid UTF-8, no lone surrogate escape, at most
// maxFastMembers top-level members with distinct names written without
// escapes, nesting at most maxFastDepth, and no schemaVersion. On such text
// JSON.parse and a strict reader agree. A frame of the dialect must then
// have every member of its type as a string when required, and absent or a
// string when optional. For the frames it takes it returns exactly what the
// general path returns (FuzzDecodeStrict checks it), without building a
// map of the frame; ok is false for any other frame, which the general path
// reads and, where it must, refuses.
func decodeStrict(data []byte, d Dialect) (f Frame, ok bool) {
	if !utf8.Valid(data) {
		return nil, false
	}
	var members [maxFastMembers]fastMember
	s := flatScanner{data: data}
	n, ok := s.object(members[:])
	if !ok {
		return nil, false
	}
	typ, hasType := "", false
	for _, m := range members[:n] {
		switch m.name {
		case "schemaVersion":
			return nil, false
		case "type":
			typ, hasType = m.value, m.isString
		}
	}
	if !hasType {
		return nil, false
	}
	specs, defined := vocabulary(d)[typ]
	if !defined {
		return &chatprotocol.ChatAppEvent{Type: typ, Raw: bytes.Clone(bytes.Trim(data, " \t\r\n"))}, true
	}
	var values [2]string
	if len(specs) > len(values) {
		return nil, false
	}
	for i, spec := range specs {
		if spec.kind != kindString {
			return nil, false
		}
		found := false
		for _, m := range members[:n] {
			if m.name == spec.name {
				if !m.isString {
					return nil, false
				}
				values[i], found = m.value, true
			}
		}
		if !found && spec.required {
			return nil, false
		}
	}
	switch typ {
	case chatprotocol.ChatEventToken:
		return &chatprotocol.ChatToken{Content: values[0]}, true
	case TypeDelta:
		return &Delta{Text: values[0]}, true
	case chatprotocol.ChatEventSession:
		return &chatprotocol.ChatSession{SessionID: values[0]}, true
	case chatprotocol.ChatEventToolStart:
		return &chatprotocol.ChatToolStart{Tool: values[0], CallID: values[1]}, true
	case chatprotocol.ChatEventCardClosed:
		return &chatprotocol.ChatCardClosed{CorrelationID: values[0]}, true
	case chatprotocol.ChatEventError:
		return &chatprotocol.ChatError{Message: values[0]}, true
	case chatprotocol.ChatEventNavigate:
		return &chatprotocol.ChatNavigate{Href: values[0]}, true
	}
	return nil, false
}

// flatScanner reads the strict JSON subset decodeStrict takes, in valid
// UTF-8. Every method returns ok false as soon as the text leaves the
// subset; nothing it reads is kept beyond the strings it returns.
type flatScanner struct {
	data []byte
	i    int
}

// object reads the whole text: one object, whitespace around it. It fills
// members with the top-level members and returns how many there are.
func (s *flatScanner) object(members []fastMember) (n int, ok bool) {
	s.ws()
	if !s.eat('{') {
		return 0, false
	}
	s.ws()
	if !s.eat('}') {
		for {
			if n == len(members) {
				return 0, false
			}
			name, ok := s.name()
			if !ok {
				return 0, false
			}
			m := &members[n]
			m.name = memberNames[string(name)]
			for _, prev := range members[:n] {
				if prev.name != "" && prev.name == m.name {
					return 0, false // a duplicate the reader would have to resolve
				}
			}
			n++
			s.ws()
			if !s.eat(':') {
				return 0, false
			}
			s.ws()
			switch {
			case m.name == "":
				if !s.skip(1) { // a member no type reads
					return 0, false
				}
			case s.i < len(s.data) && s.data[s.i] == '"':
				if m.value, ok = s.str(); !ok {
					return 0, false
				}
				m.isString = true
			case !s.skip(1):
				return 0, false
			}
			s.ws()
			if s.eat('}') {
				break
			}
			if !s.eat(',') {
				return 0, false
			}
			s.ws()
		}
	}
	s.ws()
	return n, s.i == len(s.data)
}

func (s *flatScanner) ws() {
	for s.i < len(s.data) {
		switch s.data[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

func (s *flatScanner) eat(c byte) bool {
	if s.i < len(s.data) && s.data[s.i] == c {
		s.i++
		return true
	}
	return false
}

// name reads a member name written without escapes and returns its bytes.
func (s *flatScanner) name() ([]byte, bool) {
	start := s.i
	if !s.skipString() || bytes.IndexByte(s.data[start:s.i], '\\') >= 0 {
		return nil, false
	}
	return s.data[start+1 : s.i-1], true
}

// str reads the string at s.i and returns its value: a type name of
// either dialect without allocating it, any other string as a new one. A
// string with escapes is read by JSON.parse's rules (jsjson); one that
// holds a lone surrogate leaves the subset.
func (s *flatScanner) str() (string, bool) {
	start := s.i
	if !s.skipString() {
		return "", false
	}
	raw := s.data[start+1 : s.i-1]
	if bytes.IndexByte(raw, '\\') < 0 {
		if t, ok := internedTypes[string(raw)]; ok {
			return t, true
		}
		return string(raw), true
	}
	v, _, ok := jsjson.UnquotePrefix(s.data[start:s.i])
	return v, ok && utf8.ValidString(v)
}

// skipString reads the string at s.i, checking its escapes but not
// decoding them. Its bytes are valid UTF-8: decodeStrict checks the whole
// frame first.
func (s *flatScanner) skipString() bool {
	if !s.eat('"') {
		return false
	}
	for s.i < len(s.data) {
		c := s.data[s.i]
		s.i++
		switch {
		case c == '"':
			return true
		case c < 0x20:
			return false
		case c != '\\':
			continue
		}
		if s.i >= len(s.data) {
			return false
		}
		e := s.data[s.i]
		s.i++
		switch e {
		case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		case 'u':
			if len(s.data)-s.i < 4 {
				return false
			}
			for _, h := range s.data[s.i : s.i+4] {
				if !('0' <= h && h <= '9' || 'a' <= h && h <= 'f' || 'A' <= h && h <= 'F') {
					return false
				}
			}
			s.i += 4
		default:
			return false
		}
	}
	return false
}

// skip reads any value that is not a string at s.i (and the strings
// inside it), at nesting depth depth.
func (s *flatScanner) skip(depth int) bool {
	if s.i >= len(s.data) {
		return false
	}
	switch c := s.data[s.i]; {
	case c == '"':
		return s.skipString()
	case c == '{' || c == '[':
		if depth >= maxFastDepth {
			return false
		}
		return s.container(c, depth+1)
	case c == '-' || ('0' <= c && c <= '9'):
		return s.number()
	case c == 't':
		return s.literal("true")
	case c == 'f':
		return s.literal("false")
	case c == 'n':
		return s.literal("null")
	}
	return false
}

// container reads an object or array whose opening bracket is at s.i.
// Names inside it are not compared: the frame's value does not depend on
// nested duplicates.
func (s *flatScanner) container(open byte, depth int) bool {
	closing := byte(']')
	if open == '{' {
		closing = '}'
	}
	s.i++
	s.ws()
	if s.eat(closing) {
		return true
	}
	for {
		if open == '{' {
			if !s.skipString() {
				return false
			}
			s.ws()
			if !s.eat(':') {
				return false
			}
			s.ws()
		}
		if !s.skip(depth) {
			return false
		}
		s.ws()
		if s.eat(closing) {
			return true
		}
		if !s.eat(',') {
			return false
		}
		s.ws()
	}
}

// number reads a JSON number (RFC 8259 grammar).
func (s *flatScanner) number() bool {
	s.eat('-')
	switch {
	case s.eat('0'):
	case s.digits() == 0:
		return false
	}
	if s.eat('.') && s.digits() == 0 {
		return false
	}
	if s.eat('e') || s.eat('E') {
		if !s.eat('+') {
			s.eat('-')
		}
		if s.digits() == 0 {
			return false
		}
	}
	return true
}

// digits reads ASCII digits and returns how many.
func (s *flatScanner) digits() int {
	start := s.i
	for s.i < len(s.data) && '0' <= s.data[s.i] && s.data[s.i] <= '9' {
		s.i++
	}
	return s.i - start
}

func (s *flatScanner) literal(lit string) bool {
	if len(s.data)-s.i >= len(lit) && string(s.data[s.i:s.i+len(lit)]) == lit {
		s.i += len(lit)
		return true
	}
	return false
}
