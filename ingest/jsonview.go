package ingest

import (
	"bytes"
	"errors"
	"io"
	"math"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/Papercusp/chat-protocol-go/internal/decimal"
)

// maxLevels is how deep the readers descend into one provider frame: the
// deepest path read is Chat's choices[].delta.tool_calls[].function.name.
const maxLevels = 8

// tolerant are the tokenizer options for provider JSON, which is not contract
// JSON (docs/contract.md section 17): a duplicated name is read (the last one
// counts) and invalid UTF-8 is replaced when a string is read, never refused.
var tolerant = []jsontext.Options{jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true)}

// errNotObject is the syntax error of a frame that is not one JSON object.
var errNotObject = errors.New("not a JSON object")

// level is one tokenizer, reading one value of a frame. Each nesting level
// a reader descends into has its own, so that a member's value is read
// while the enclosing object is still being walked.
type level struct {
	dec jsontext.Decoder
	in  bytes.Buffer
}

// views walks provider JSON without copying it: values are returned as
// views (sub-slices) of the frame, valid as long as the frame's bytes, and
// only the strings a reader keeps are copied. Syntax errors are sticky: the
// first one is kept in err and every later read returns nothing.
type views struct {
	lv      [maxLevels]level
	scratch []byte
	err     error
}

// open starts reading v at level l, which must be an object ('{') or an
// array ('['), as kind says; it reports whether it is one. A null or any
// other value opens nothing and is not an error.
func (p *views) open(l int, v []byte, kind byte) bool {
	if p.err != nil || len(v) == 0 || v[0] != kind {
		return false
	}
	x := &p.lv[l]
	x.in = *bytes.NewBuffer(v)
	x.dec.Reset(&x.in, tolerant...)
	if _, err := x.dec.ReadToken(); err != nil {
		p.fail(err)
		return false
	}
	return true
}

// openFrame starts reading a whole frame at level 0: one JSON object.
func (p *views) openFrame(data []byte) bool {
	p.err = nil
	i := 0
	for i < len(data) && (data[i] == ' ' || data[i] == '\t' || data[i] == '\n' || data[i] == '\r') {
		i++
	}
	if i == len(data) || data[i] != '{' {
		p.err = errNotObject
		return false
	}
	return p.open(0, data[i:], '{')
}

// more reports whether the object or array open at level l has another
// member or element.
func (p *views) more(l int) bool {
	if p.err != nil {
		return false
	}
	k := p.lv[l].dec.PeekKind()
	if k == 0 {
		_, err := p.lv[l].dec.ReadToken()
		p.fail(err)
		return false
	}
	return k != '}' && k != ']'
}

// name reads the next member name at level l, unescaped. The bytes are valid
// until the next call on p.
func (p *views) name(l int) []byte {
	v := p.value(l)
	if len(v) < 2 {
		return nil
	}
	if bytes.IndexByte(v, '\\') < 0 {
		return v[1 : len(v)-1]
	}
	p.scratch, _ = jsontext.AppendUnquote(p.scratch[:0], v)
	return p.scratch
}

// value reads the next value at level l and returns its bytes, a view of
// the frame.
func (p *views) value(l int) []byte {
	if p.err != nil {
		return nil
	}
	v, err := p.lv[l].dec.ReadValue()
	if err != nil {
		p.fail(err)
		return nil
	}
	return v
}

// skip reads and discards the next value at level l.
func (p *views) skip(l int) {
	if p.err == nil {
		p.fail(p.lv[l].dec.SkipValue())
	}
}

// frame reads data, one frame, as members reads an object at level 0, and
// checks that nothing follows it. It reports false when data is not one
// JSON object (p.err says why), which fails the turn.
func (p *views) frame(data []byte, vals [][]byte, names ...string) bool {
	if p.openFrame(data) {
		p.members(0, vals, names...)
		p.closeFrame()
	}
	return p.err == nil
}

// members reads the object open at level l: the value of the member named
// names[i] goes to vals[i] (the last one when a name repeats), every other
// member is skipped, and a name the object lacks leaves its val as it was.
func (p *views) members(l int, vals [][]byte, names ...string) {
	for p.more(l) {
		if i := lookup(names, p.name(l)); i >= 0 {
			vals[i] = p.value(l)
		} else {
			p.skip(l)
		}
	}
}

// lookup returns the position of name in names, -1 when it is none of
// them; an empty entry matches nothing.
func lookup(names []string, name []byte) int {
	if len(name) == 0 {
		return -1
	}
	for i, n := range names {
		// The first byte first: most names a frame holds are none of names.
		if len(n) == len(name) && n[0] == name[0] && n == string(name) {
			return i
		}
	}
	return -1
}

// closeFrame checks that the frame's object ended and nothing follows it.
func (p *views) closeFrame() {
	if p.err != nil {
		return
	}
	if _, err := p.lv[0].dec.ReadToken(); err != nil {
		p.fail(err)
		return
	}
	if _, err := p.lv[0].dec.ReadToken(); err != io.EOF {
		if err == nil {
			err = errors.New("data after the JSON object")
		}
		p.fail(err)
	}
}

func (p *views) fail(err error) {
	if err != nil && p.err == nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		p.err = err
	}
}

// str returns the JSON string v as a new Go string: "" for a null or any
// other value. Invalid UTF-8 and unpaired surrogate escapes become U+FFFD;
// nothing else is changed (no Unicode normalization).
func (p *views) str(v []byte) string {
	b := p.text(v)
	if len(b) == 0 {
		return ""
	}
	return string(b)
}

// text returns the JSON string v unescaped, valid until the next call on p;
// nil for a null or any other value.
func (p *views) text(v []byte) []byte {
	if len(v) < 2 || v[0] != '"' {
		return nil
	}
	inner := v[1 : len(v)-1]
	if bytes.IndexByte(inner, '\\') < 0 && utf8.Valid(inner) {
		return inner
	}
	// AppendUnquote replaces invalid UTF-8 and reports it; the text it
	// gives is then the repaired one.
	p.scratch, _ = jsontext.AppendUnquote(p.scratch[:0], v)
	return p.scratch
}

// is reports whether the JSON string v is s, unescaped.
func (p *views) is(v []byte, s string) bool {
	return string(p.text(v)) == s
}

// integer returns the JSON number v as an int64, and whether it is one: a
// non-negative integer of at most 18 digits written without fraction or
// exponent, as providers write token counts.
func integer(v []byte) (int64, bool) {
	if len(v) > 18 {
		return 0, false
	}
	return decimal.Parse(v, math.MaxInt64)
}
