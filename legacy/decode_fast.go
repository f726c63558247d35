package legacy

import (
	"bytes"
	"strconv"
	"unicode/utf8"

	chatprotocol "github.com/Papercusp/chat-protocol-go"
	"github.com/Papercusp/chat-protocol-go/internal/jsjson"
	"github.com/Papercusp/chat-protocol-go/internal/swar"
)

// The bounds of the fast path: frames with more top-level members, or
// nested deeper, go the general way.
const (
	maxFastMembers = 8
	maxFastDepth   = 64
)

// fastMember is a top-level member decodeStrict read: its name as
// written between the quotes (without escapes), its value's JSON text, and
// whether that value is a string with escapes. Nothing is decoded until
// decodeStrict knows which members the frame's type reads.
type fastMember struct {
	name, value []byte
	escaped     bool
}

// fastValue returns the member called name, or nil.
func fastValue(members []fastMember, name string) *fastMember {
	for i := range members {
		if string(members[i].name) == name {
			return &members[i]
		}
	}
	return nil
}

// decodeStrict is the fast path of DecodeLegacyChatFrame for the frames a
// stream carries most: token and delta frames, the other frame types whose
// members are strings, whole numbers or any JSON value kept as its text
// (session, tool_start, card_closed, error, navigate, state, and
// Papercusp's tool_call and tool_result), and product frames. A type with
// an object member (card, done) is read by ParseChatEvent once the scan
// has checked the frame's top level, as the general path reads it after a
// parse of its own. It takes a frame only when it is one
// strict JSON object: valid UTF-8, no lone surrogate escape, at most
// maxFastMembers top-level members with distinct names written without
// escapes, nesting at most maxFastDepth, no schemaVersion, and a type
// written without escapes. On such text JSON.parse and a strict reader
// agree. A frame of the dialect must then have every member of its type of
// its JSON type when required, and absent or of its type when optional (a
// null string or number leaves the fast path; a null value kept as text is
// kept as "null", as the general path keeps it). For the
// frames it takes it returns exactly what the general path returns
// (FuzzDecodeStrict checks it), without building a map of the frame and
// decoding only the strings its type reads, members its type does not name
// kept as their text (fastUnknown); ok is false for any other
// frame, which the general path reads and, where it must, refuses.
func decodeStrict(data []byte, d Dialect) (f Frame, ok bool) {
	var members [maxFastMembers]fastMember
	s := flatScanner{data: data}
	n, ok := s.object(members[:]) // valid UTF-8 once it is read
	if !ok {
		return nil, false
	}
	ms := members[:n]
	t := fastValue(ms, "type")
	if fastValue(ms, "schemaVersion") != nil || t == nil || t.value[0] != '"' || t.escaped {
		return nil, false
	}
	typ := t.value[1 : len(t.value)-1]
	spec, defined := vocabulary(d)[string(typ)]
	if !defined {
		return &AppFrame{Type: string(typ), Raw: bytes.Clone(bytes.Trim(data, " \t\r\n"))}, true
	}
	// The members the type reads, by their place in specs: a string, a
	// whole number, or any JSON value as its text.
	var (
		strs [3]string
		has  [3]bool
		nums [3]float64
		raws [3][]byte
	)
	specs := spec.members
	if len(specs) > len(strs) {
		return nil, false
	}
	nested, present := false, 0
	for i, spec := range specs {
		m := fastValue(ms, spec.name)
		if m == nil {
			if spec.required {
				return nil, false
			}
			continue
		}
		has[i] = true
		present++
		switch spec.kind {
		case kindString:
			if strs[i], ok = m.str(); !ok {
				return nil, false
			}
		case kindNumber:
			if nums[i], ok = m.number(); !ok {
				return nil, false
			}
		case kindAny:
			raws[i] = bytes.Clone(m.value) // null included: it is present
		default:
			nested = true // an object, whose members ParseChatEvent reads
		}
	}
	if nested {
		// What the general path returns for such a frame, without the
		// parse of the whole frame it makes first to look for
		// schemaVersion and the type, which the scan has done: the typed
		// event ParseChatEvent reads, or else a refusal, left to it.
		ev := ParseChatEvent(data)
		if _, app := ev.(*AppFrame); app || ev == nil || ev.FrameType() != string(typ) {
			return nil, false
		}
		return ev, true
	}
	var unknown []chatprotocol.Member
	if len(ms) > 1+present { // more than "type" and the members read: the names are distinct
		unknown = fastUnknown(ms, specs)
	}
	if spec.ofString != nil {
		return spec.ofString(strs[0], unknown), true
	}
	switch string(typ) {
	case TypeToolStart:
		f := &ToolStartFrame{Tool: strs[0], Unknown: unknown}
		if has[1] {
			callID := strs[1] // a copy: taking strs' address would move it to the heap for every frame
			f.CallID = &callID
		}
		return f, true
	case TypeState:
		return &StateFrame{Version: nums[0], Snapshot: raws[1], Unknown: unknown}, true
	case TypeToolCall:
		return &ToolCallFrame{CallID: strs[0], Name: strs[1], Input: raws[2], Unknown: unknown}, true
	case TypeToolResult:
		return &ToolResultFrame{CallID: strs[0], Status: chatprotocol.ToolResultStatus(strs[1]), Output: raws[2], Unknown: unknown}, true
	}
	return nil, false
}

// fastUnknown returns the members of ms that are neither "type" nor one of
// specs, kept as the general path keeps them (keptMembers): the scan took
// no duplicate and no escaped name, so each is its name's bytes and its
// value's text, in order. It is nil when there are none.
func fastUnknown(ms []fastMember, specs []member) []chatprotocol.Member {
	var out []chatprotocol.Member
members:
	for i := range ms {
		name := ms[i].name
		if string(name) == "type" {
			continue
		}
		for j := range specs {
			if specs[j].name == string(name) {
				continue members
			}
		}
		out = append(out, chatprotocol.Member{Name: string(name), Value: bytes.Clone(ms[i].value)})
	}
	return out
}

// number returns the member's value as a number: ok is false when it is
// not a number (null included) or is read as infinite. The number is read
// as JSON.parse reads it, into a float64: the scanner checked the grammar,
// so ParseFloat's only error is ErrRange, whose infinity is what JSON.parse
// gives too, and which no type accepts.
func (m *fastMember) number() (float64, bool) {
	if c := m.value[0]; c != '-' && (c < '0' || c > '9') {
		return 0, false
	}
	f, _ := strconv.ParseFloat(string(m.value), 64)
	return f, kindNumber.holds(f)
}

// str returns the member's value as a string: ok is false when it is not a
// string, or holds a lone surrogate. A string with escapes is read by
// JSON.parse's rules (jsjson).
func (m *fastMember) str() (string, bool) {
	if m.value[0] != '"' {
		return "", false
	}
	if !m.escaped {
		return string(m.value[1 : len(m.value)-1]), true
	}
	s, _, ok := jsjson.UnquotePrefix(m.value)
	return s, ok && utf8.ValidString(s)
}

// flatScanner reads the strict JSON subset decodeStrict takes, in valid
// UTF-8. Every method returns ok false as soon as the text leaves the
// subset; nothing it reads is kept beyond the strings it returns.
type flatScanner struct {
	data []byte
	i    int
}

// object reads the whole text: one object, whitespace around it. It fills
// members with the top-level members and returns how many there are; two
// members of the same name leave the subset.
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
			for _, prev := range members[:n] {
				if string(prev.name) == string(name) {
					return 0, false // a duplicate the reader would have to resolve
				}
			}
			s.ws()
			if !s.eat(':') {
				return 0, false
			}
			s.ws()
			start, escaped := s.i, false
			if s.i < len(s.data) && s.data[s.i] == '"' {
				escaped, ok = s.skipString()
			} else {
				ok = s.skip(1)
			}
			if !ok {
				return 0, false
			}
			members[n] = fastMember{name: name, value: s.data[start:s.i], escaped: escaped}
			n++
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
	if escaped, ok := s.skipString(); !ok || escaped {
		return nil, false
	}
	return s.data[start+1 : s.i-1], true
}

// skipString reads the string at s.i, checking its escapes but not
// decoding them, and that its bytes are valid UTF-8; escaped tells whether
// it has any escape. Every byte of the subset outside strings is ASCII by
// the grammar, so a text whose strings all pass is valid UTF-8. Runs of
// plain bytes are passed 8 at a time (swar.PlainPrefix).
func (s *flatScanner) skipString() (escaped, ok bool) {
	if !s.eat('"') {
		return false, false
	}
	for s.i < len(s.data) {
		s.i += swar.PlainPrefix(s.data[s.i:])
		for end := min(s.i+8, len(s.data)); s.i < end; {
			switch c := s.data[s.i]; {
			case c == '"':
				s.i++
				return escaped, true
			case c < 0x20:
				return false, false
			case c >= utf8.RuneSelf:
				r, n := utf8.DecodeRune(s.data[s.i:])
				if r == utf8.RuneError && n == 1 {
					return false, false
				}
				s.i += n
			case c == '\\':
				if !s.escape() {
					return false, false
				}
				escaped = true
			default:
				s.i++
			}
		}
	}
	return false, false
}

// escape reads the escape at s.i, checking it but not decoding it.
func (s *flatScanner) escape() bool {
	if len(s.data)-s.i < 2 {
		return false
	}
	e := s.data[s.i+1]
	s.i += 2
	switch e {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		return true
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
		return true
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
		_, ok := s.skipString()
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
			if _, ok := s.skipString(); !ok {
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
