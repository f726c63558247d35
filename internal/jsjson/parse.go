package jsjson

import (
	"strconv"
	"unicode/utf8"

	"github.com/Papercusp/chat-protocol-go/internal/swar"
)

// Parse reads data as JSON.parse reads the string TextDecoder makes of it
// (see the package documentation): one JSON value with optional JSON
// whitespace around it. ok is false when data is not JSON text.
func Parse(data []byte) (v any, ok bool) {
	return parseAll(data)
}

// ParseString is Parse over a string.
func ParseString(s string) (v any, ok bool) {
	return parseAll(s)
}

// Valid reports whether Parse would accept data.
func Valid(data []byte) bool {
	_, ok := parseAll(data)
	return ok
}

// ParseObject is Parse for a text whose value must be an object. Beside the
// object it returns the bytes of each member's value as they appear in data,
// so a caller can keep a member verbatim; see Spans. The spans alias data.
// ok is false when data is not JSON text or its value is not an object.
func ParseObject(data []byte) (obj map[string]any, spans Spans, ok bool) {
	p := parser[[]byte]{in: data, spans: true}
	v, ok := p.document()
	obj, isObj := v.(map[string]any)
	if !ok || !isObj {
		return nil, nil, false
	}
	for i := range p.spanList {
		p.spanList[i].Value = data[p.spanList[i].start:p.spanList[i].end]
	}
	return obj, p.spanList, true
}

// Span is the text of one member value of an object, in member order.
type Span struct {
	Name       string
	Value      []byte
	start, end int
}

// Spans lists the member values of an object as [ParseObject] found them,
// duplicates included.
type Spans []Span

// Get returns the text of member name's value, the last one when the name
// is duplicated (the one JSON.parse keeps), or nil.
func (s Spans) Get(name string) []byte {
	for i := len(s) - 1; i >= 0; i-- {
		if s[i].Name == name {
			return s[i].Value
		}
	}
	return nil
}

// ParsePrefix reads one JSON value at the start of s (no leading whitespace
// is skipped) and returns it with the number of bytes it took. Whatever
// follows the value is left to the caller. ok is false when s does not start
// with a JSON value.
func ParsePrefix(s string) (v any, n int, ok bool) {
	p := parser[string]{in: s}
	v, ok = p.value()
	if !ok {
		return nil, 0, false
	}
	return v, p.pos, true
}

// UnquotePrefix reads the JSON string at the start of data (its opening
// quote first) as JSON.parse reads it, and returns its value with the
// number of bytes it took. Whatever follows is left to the caller. ok is
// false when data does not start with a JSON string. As in Parse, a lone
// surrogate escape gives the surrogate's WTF-8 form, which is not valid
// UTF-8. A string up to 256 bytes long costs one allocation, its value.
func UnquotePrefix(data []byte) (s string, n int, ok bool) {
	if len(data) == 0 || data[0] != '"' {
		return "", 0, false
	}
	var scratch [256]byte // a string with escapes is unescaped here first
	p := parser[[]byte]{in: data}
	if s, _, ok = p.strInto(scratch[:0]); !ok {
		return "", 0, false
	}
	return s, p.pos, true
}

func parseAll[T ~string | ~[]byte](in T) (any, bool) {
	p := parser[T]{in: in}
	return p.document()
}

// parser is an iterative JSON.parse: containers under construction live on
// an explicit stack, so nesting depth costs heap rather than Go stack.
type parser[T ~string | ~[]byte] struct {
	in  T
	pos int
	buf []byte // scratch for strings with escapes or invalid UTF-8

	// spans asks for the member values of the root object to be recorded
	// in spanList.
	spans    bool
	spanList Spans
}

// frame is one open container.
type frame struct {
	obj      map[string]any
	arr      []any
	isObj    bool
	key      string
	valStart int
}

func (p *parser[T]) document() (any, bool) {
	p.skipWS()
	v, ok := p.value()
	if !ok {
		return nil, false
	}
	p.skipWS()
	if p.pos != len(p.in) {
		return nil, false
	}
	return v, true
}

func isWS(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func (p *parser[T]) skipWS() {
	for p.pos < len(p.in) && isWS(p.in[p.pos]) {
		p.pos++
	}
}

// value reads one value starting exactly at p.pos.
func (p *parser[T]) value() (any, bool) {
	var stack frameStack
	for {
		// Read the start of a value.
		var v any
		if p.pos >= len(p.in) {
			return nil, false
		}
		switch c := p.in[p.pos]; {
		case c == '{':
			p.pos++
			p.skipWS()
			if p.pos < len(p.in) && p.in[p.pos] == '}' {
				p.pos++
				v = map[string]any{}
				break
			}
			if !p.memberHead(stack.push(frame{obj: map[string]any{}, isObj: true})) {
				return nil, false
			}
			continue
		case c == '[':
			p.pos++
			p.skipWS()
			if p.pos < len(p.in) && p.in[p.pos] == ']' {
				p.pos++
				v = []any{}
				break
			}
			stack.push(frame{arr: []any{}})
			continue
		case c == '"':
			s, ok := p.str()
			if !ok {
				return nil, false
			}
			v = s
		case c == '-' || (c >= '0' && c <= '9'):
			f, ok := p.number()
			if !ok {
				return nil, false
			}
			v = f
		case c == 't':
			if !p.literal("true") {
				return nil, false
			}
			v = true
		case c == 'f':
			if !p.literal("false") {
				return nil, false
			}
			v = false
		case c == 'n':
			if !p.literal("null") {
				return nil, false
			}
			v = nil
		default:
			return nil, false
		}

		// A value is complete: attach it to its container, closing
		// containers as far as their closing brackets go.
		for {
			if stack.depth == 0 {
				return v, true
			}
			top := stack.top()
			if top.isObj {
				top.obj[top.key] = v
				if p.spans && stack.depth == 1 {
					p.spanList = append(p.spanList, Span{Name: top.key, start: top.valStart, end: p.pos})
				}
			} else {
				top.arr = append(top.arr, v)
			}
			p.skipWS()
			if p.pos >= len(p.in) {
				return nil, false
			}
			c := p.in[p.pos]
			p.pos++
			if c == ',' {
				p.skipWS()
				if top.isObj && !p.memberHead(top) {
					return nil, false
				}
				break // read the next value
			}
			if top.isObj && c == '}' {
				v = top.obj
			} else if !top.isObj && c == ']' {
				v = top.arr
			} else {
				return nil, false
			}
			stack.pop()
		}
	}
}

// frameStack is the parser's stack of open containers. Its bottom
// maxChunk frames are one slice grown by append, as a plain stack would be;
// deeper frames go in chunks of maxChunk frames that never move. A deep
// value so costs about one frame per level, where a slice grown by append
// throughout would allocate about five times its final size as it is
// copied on the way (a megabyte of opening brackets, refused, cost 334 MB).
// Pointers to frames are valid until the next push.
type frameStack struct {
	first []frame
	rest  [][]frame
	depth int // frames on the stack
}

const maxChunk = 4096

// at returns the i-th frame from the bottom.
func (s *frameStack) at(i int) *frame {
	if i < maxChunk {
		return &s.first[i]
	}
	i -= maxChunk
	return &s.rest[i/maxChunk][i%maxChunk]
}

// push puts f on the stack and returns it.
func (s *frameStack) push(f frame) *frame {
	i := s.depth
	switch {
	case i < maxChunk:
		s.first = append(s.first[:i], f)
	case (i-maxChunk)/maxChunk == len(s.rest):
		s.rest = append(s.rest, make([]frame, maxChunk))
		fallthrough
	default:
		*s.at(i) = f
	}
	s.depth++
	return s.at(i)
}

// top returns the frame on top of a non-empty stack.
func (s *frameStack) top() *frame { return s.at(s.depth - 1) }

// pop removes the top frame of a non-empty stack.
func (s *frameStack) pop() {
	s.depth--
	*s.at(s.depth) = frame{} // drop the container: it is its parent's now
}

// memberHead reads `"name" :` and leaves p.pos at the member's value.
func (p *parser[T]) memberHead(f *frame) bool {
	if p.pos >= len(p.in) || p.in[p.pos] != '"' {
		return false
	}
	name, ok := p.str()
	if !ok {
		return false
	}
	p.skipWS()
	if p.pos >= len(p.in) || p.in[p.pos] != ':' {
		return false
	}
	p.pos++
	p.skipWS()
	f.key = name
	f.valStart = p.pos
	return true
}

func (p *parser[T]) literal(word string) bool {
	if len(p.in)-p.pos < len(word) || string(p.in[p.pos:p.pos+len(word)]) != word {
		return false
	}
	p.pos += len(word)
	return true
}

// number reads -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)? and returns
// its value rounded to the nearest float64, ±Inf beyond the range.
func (p *parser[T]) number() (float64, bool) {
	start := p.pos
	if p.in[p.pos] == '-' {
		p.pos++
	}
	if p.pos >= len(p.in) {
		return 0, false
	}
	switch c := p.in[p.pos]; {
	case c == '0':
		p.pos++
	case c >= '1' && c <= '9':
		p.digits()
	default:
		return 0, false
	}
	if p.pos < len(p.in) && p.in[p.pos] == '.' {
		p.pos++
		if p.digits() == 0 {
			return 0, false
		}
	}
	if p.pos < len(p.in) && (p.in[p.pos] == 'e' || p.in[p.pos] == 'E') {
		p.pos++
		if p.pos < len(p.in) && (p.in[p.pos] == '+' || p.in[p.pos] == '-') {
			p.pos++
		}
		if p.digits() == 0 {
			return 0, false
		}
	}
	// The grammar is checked above; ParseFloat's only possible error is
	// ErrRange, whose ±Inf or 0 result is what JSON.parse gives too.
	f, _ := strconv.ParseFloat(string(p.in[start:p.pos]), 64)
	return f, true
}

func (p *parser[T]) digits() int {
	n := 0
	for p.pos < len(p.in) && p.in[p.pos] >= '0' && p.in[p.pos] <= '9' {
		p.pos++
		n++
	}
	return n
}

// str reads a JSON string starting at the opening quote, unescaping in
// p.buf.
func (p *parser[T]) str() (s string, ok bool) {
	s, p.buf, ok = p.strInto(p.buf[:0])
	return s, ok
}

// strInto reads a JSON string starting at the opening quote; a string with
// escapes or invalid UTF-8 is decoded in buf, which is returned (grown) for
// reuse.
func (p *parser[T]) strInto(buf []byte) (string, []byte, bool) {
	p.pos++ // opening quote
	start := p.pos
	// Fast path: no escapes and only valid UTF-8.
	p.run()
	if p.pos < len(p.in) && p.in[p.pos] == '"' {
		s := string(p.in[start:p.pos])
		p.pos++
		return s, buf, true
	}
	buf = append(buf, p.in[start:p.pos]...)
	for p.pos < len(p.in) {
		c := p.in[p.pos]
		switch {
		case c == '"':
			p.pos++
			return string(buf), buf, true
		case c < 0x20:
			return "", buf, false
		case c == '\\':
			var ok bool
			if buf, ok = p.escape(buf); !ok {
				return "", buf, false
			}
		default: // a byte that is not UTF-8: U+FFFD, as TextDecoder gives
			r, size := decodeRune(p.in[p.pos:])
			buf = utf8.AppendRune(buf, r)
			p.pos += size
		}
		run := p.pos
		p.run()
		buf = append(buf, p.in[run:p.pos]...)
	}
	return "", buf, false
}

// run passes over the bytes of a string that stand for themselves: up to
// the closing quote, an escape, a control character or a byte that is not
// UTF-8. Plain ASCII goes 8 bytes at a time (swar.PlainPrefix).
func (p *parser[T]) run() {
	for p.pos < len(p.in) {
		p.pos += swar.PlainPrefix(p.in[p.pos:])
		if p.pos >= len(p.in) {
			return
		}
		c := p.in[p.pos]
		if c == '"' || c == '\\' || c < 0x20 {
			return
		}
		if c < utf8.RuneSelf {
			p.pos++
			continue
		}
		r, size := decodeRune(p.in[p.pos:])
		if r == utf8.RuneError && !validFFFD(p.in[p.pos:]) {
			return
		}
		p.pos += size
	}
}

// validFFFD reports whether s starts with a literal, well-formed U+FFFD.
func validFFFD[T ~string | ~[]byte](s T) bool {
	return len(s) >= 3 && s[0] == 0xEF && s[1] == 0xBF && s[2] == 0xBD
}

// escape reads one backslash escape and appends what it stands for.
func (p *parser[T]) escape(buf []byte) ([]byte, bool) {
	if p.pos+1 >= len(p.in) {
		return buf, false
	}
	c := p.in[p.pos+1]
	p.pos += 2
	switch c {
	case '"', '\\', '/':
		return append(buf, c), true
	case 'b':
		return append(buf, '\b'), true
	case 'f':
		return append(buf, '\f'), true
	case 'n':
		return append(buf, '\n'), true
	case 'r':
		return append(buf, '\r'), true
	case 't':
		return append(buf, '\t'), true
	case 'u':
	default:
		return buf, false
	}
	u, ok := p.hex4()
	if !ok {
		return buf, false
	}
	if u < 0xD800 || u > 0xDFFF {
		return utf8.AppendRune(buf, u), true
	}
	if u <= 0xDBFF && p.pos+1 < len(p.in) && p.in[p.pos] == '\\' && p.in[p.pos+1] == 'u' {
		save := p.pos
		p.pos += 2
		if lo, ok := p.hex4(); ok && lo >= 0xDC00 && lo <= 0xDFFF {
			return utf8.AppendRune(buf, 0x10000+(u-0xD800)<<10+(lo-0xDC00)), true
		}
		p.pos = save // not a pair: the next escape is read on its own
	}
	return appendSurrogate(buf, u), true
}

func (p *parser[T]) hex4() (rune, bool) {
	if len(p.in)-p.pos < 4 {
		return 0, false
	}
	var u rune
	for i := range 4 {
		c := p.in[p.pos+i]
		var d byte
		switch {
		case c >= '0' && c <= '9':
			d = c - '0'
		case c >= 'a' && c <= 'f':
			d = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			d = c - 'A' + 10
		default:
			return 0, false
		}
		u = u<<4 | rune(d)
	}
	p.pos += 4
	return u, true
}
