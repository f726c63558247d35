package legacy

import (
	"bytes"
	"unicode/utf16"
	"unicode/utf8"

	chatprotocol "github.com/Papercusp/chat-protocol-go"
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
	buf  []byte
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
			if s.i < len(s.data) && s.data[s.i] == '"' {
				v, ok := s.str(m.name != "")
				if !ok {
					return 0, false
				}
				switch m.name {
				case "":
				case "type":
					if m.value, ok = internedTypes[string(v)]; !ok {
						m.value = string(v)
					}
				default:
					m.value = string(v)
				}
				m.isString = true
			} else if !s.skip(1) {
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
// Names that are not distinct among the names no type reads do not
// matter: the frame's value does not depend on them.
func (s *flatScanner) name() ([]byte, bool) {
	if !s.eat('"') {
		return nil, false
	}
	start := s.i
	for ; s.i < len(s.data); s.i++ {
		switch c := s.data[s.i]; {
		case c == '"':
			s.i++
			return s.data[start : s.i-1], true
		case c == '\\' || c < 0x20:
			return nil, false
		}
	}
	return nil, false
}

// str reads a string at s.i and returns its value, which is valid until
// the next call; when keep is false the value of a string with escapes is
// not built.
func (s *flatScanner) str(keep bool) ([]byte, bool) {
	s.i++ // the opening quote
	start := s.i
	for ; s.i < len(s.data); s.i++ {
		switch c := s.data[s.i]; {
		case c == '"':
			s.i++
			return s.data[start : s.i-1], true
		case c == '\\':
			s.i = start
			return s.escaped(keep)
		case c < 0x20:
			return nil, false
		}
	}
	return nil, false
}

// escaped reads the rest of a string that holds escapes, from its first
// character at s.i. A \u escape of a lone surrogate leaves the subset.
func (s *flatScanner) escaped(keep bool) ([]byte, bool) {
	s.buf = s.buf[:0]
	for s.i < len(s.data) {
		c := s.data[s.i]
		switch {
		case c == '"':
			s.i++
			return s.buf, true
		case c < 0x20:
			return nil, false
		case c != '\\':
			if keep {
				s.buf = append(s.buf, c)
			}
			s.i++
			continue
		}
		if s.i+1 >= len(s.data) {
			return nil, false
		}
		e := s.data[s.i+1]
		s.i += 2
		switch e {
		case '"', '\\', '/':
			s.buf = append(s.buf, e)
		case 'b':
			s.buf = append(s.buf, '\b')
		case 'f':
			s.buf = append(s.buf, '\f')
		case 'n':
			s.buf = append(s.buf, '\n')
		case 'r':
			s.buf = append(s.buf, '\r')
		case 't':
			s.buf = append(s.buf, '\t')
		case 'u':
			r, ok := s.hex4()
			if !ok {
				return nil, false
			}
			if utf16.IsSurrogate(r) {
				if r >= 0xDC00 || s.i+1 >= len(s.data) || s.data[s.i] != '\\' || s.data[s.i+1] != 'u' {
					return nil, false
				}
				s.i += 2
				lo, ok := s.hex4()
				if !ok {
					return nil, false
				}
				if r = utf16.DecodeRune(r, lo); r == utf8.RuneError {
					return nil, false
				}
			}
			s.buf = utf8.AppendRune(s.buf, r)
		default:
			return nil, false
		}
	}
	return nil, false
}

// hex4 reads the four hex digits of a \u escape.
func (s *flatScanner) hex4() (rune, bool) {
	if s.i+4 > len(s.data) {
		return 0, false
	}
	var r rune
	for _, c := range s.data[s.i : s.i+4] {
		switch {
		case '0' <= c && c <= '9':
			r = r<<4 | rune(c-'0')
		case 'a' <= c && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case 'A' <= c && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	s.i += 4
	return r, true
}

// skip reads any value that is not a string at s.i (and the strings
// inside it), at nesting depth depth.
func (s *flatScanner) skip(depth int) bool {
	if s.i >= len(s.data) {
		return false
	}
	switch c := s.data[s.i]; {
	case c == '"':
		_, ok := s.str(false)
		return ok
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
			if s.i >= len(s.data) || s.data[s.i] != '"' {
				return false
			}
			if _, ok := s.str(false); !ok {
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
