package strictjson

import (
	"bytes"
	"errors"
	"io"
	"strconv"
	"sync"

	"github.com/go-json-experiment/json/jsontext"
)

// The errors a Decoder returns besides [*SyntaxError]. They say what was
// wrong with a well-formed value; the caller decides the refusal code.
var (
	// ErrWrongType: the value is well-formed JSON of another type than the
	// one asked for.
	ErrWrongType = errors.New("wrong JSON type")
	// ErrNotInteger: a number whose value has a fractional part.
	ErrNotInteger = errors.New("number is not an integer")
	// ErrRange: an integer beyond the range of int64.
	ErrRange = errors.New("integer out of range")
	// ErrTooDeep: objects and arrays nested beyond the decoder's limit.
	ErrTooDeep = errors.New("nesting too deep")
)

// SyntaxError reports input that is not one strict JSON text: malformed
// JSON, invalid UTF-8, a duplicated member name, or data after the value.
// Pointer is the RFC 6901 pointer of the value being read, relative to the
// decoder's root; Offset is a byte offset relative to the same root.
type SyntaxError struct {
	Pointer string
	Offset  int64
	Err     error
}

// Error describes the syntax error; the text is informative only.
func (e *SyntaxError) Error() string {
	return "json syntax error at byte " + strconv.FormatInt(e.Offset, 10) + ": " + e.Err.Error()
}

// Unwrap returns the tokenizer's error.
func (e *SyntaxError) Unwrap() error { return e.Err }

// IsDuplicateName reports whether the syntax error is a duplicated member
// name.
func (e *SyntaxError) IsDuplicateName() bool { return errors.Is(e.Err, jsontext.ErrDuplicateName) }

// Kind is the kind of the next value: '{', '[', '"', '0' (a number), 't',
// 'f', 'n', or 0 when there is no next value or the input is broken.
type Kind byte

// Decoder reads one JSON text. The zero value is not usable: take one from
// Get and return it with Put.
type Decoder struct {
	dec      jsontext.Decoder
	in       bytes.Buffer
	src      string // the caller's copy of the whole frame
	base     int    // offset in src of the decoder's first input byte
	depth0   int    // depth of the decoder's root minus one
	maxDepth int
	scratch  []byte
}

var pool = sync.Pool{New: func() any { return new(Decoder) }}

// Get returns a Decoder reading data, whose text is also src[base:base+len(data)].
// Strings returned by the decoder are substrings of src (or new strings when
// they contain escapes). depth0 is the nesting depth of the value that
// contains data's root (0 when data is the whole frame); maxDepth bounds the
// total depth, counting the root object or array as depth0+1.
func Get(data []byte, src string, base, depth0, maxDepth int) *Decoder {
	d := pool.Get().(*Decoder)
	d.in = *bytes.NewBuffer(data)
	d.dec.Reset(&d.in)
	d.src, d.base, d.depth0, d.maxDepth = src, base, depth0, maxDepth
	return d
}

// Put returns d to the pool; d must not be used afterwards.
func Put(d *Decoder) {
	d.src = ""
	d.in = bytes.Buffer{}
	d.dec.Reset(&d.in) // drop the reference to the caller's data
	if cap(d.scratch) > 4<<10 {
		d.scratch = nil
	}
	pool.Put(d)
}

func (d *Decoder) wrap(err error) error {
	if se, ok := errors.AsType[*jsontext.SyntacticError](err); ok {
		return &SyntaxError{Pointer: string(se.JSONPointer), Offset: se.ByteOffset, Err: se.Err}
	}
	if err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	return &SyntaxError{Pointer: string(d.dec.StackPointer()), Offset: d.dec.InputOffset(), Err: err}
}

// Peek returns the kind of the next value without reading it.
func (d *Decoder) Peek() Kind { return Kind(d.dec.PeekKind()) }

// Pointer returns the RFC 6901 pointer, relative to the decoder's root, of
// the value read last. It allocates; use it on error paths only.
func (d *Decoder) Pointer() string { return string(d.dec.StackPointer()) }

// Depth returns the current nesting depth, counting the decoder's root as
// depth0+1.
func (d *Decoder) Depth() int { return d.depth0 + d.dec.StackDepth() }

// Src returns the source string the decoder slices its strings from.
func (d *Decoder) Src() string { return d.src }

// Begin reads the start of an object ('{') or an array ('['), whichever
// kind is; any other value is [ErrWrongType]. It enforces the depth limit.
func (d *Decoder) Begin(kind Kind) error {
	tok, err := d.dec.ReadToken()
	if err != nil {
		return d.wrap(err)
	}
	if Kind(tok.Kind()) != kind {
		return ErrWrongType
	}
	if d.Depth() > d.maxDepth {
		return ErrTooDeep
	}
	return nil
}

// More reports whether the current object or array has another member or
// element. On broken input it reports false and the next read returns the
// error.
func (d *Decoder) More() bool {
	k := d.dec.PeekKind()
	return k != '}' && k != ']' && k != 0
}

// End reads the end of the current object or array.
func (d *Decoder) End() error {
	if _, err := d.dec.ReadToken(); err != nil {
		return d.wrap(err)
	}
	return nil
}

// Finish checks that nothing but whitespace follows the root value.
func (d *Decoder) Finish() error {
	_, err := d.dec.ReadToken()
	if err == io.EOF {
		return nil
	}
	if err != nil {
		return d.wrap(err)
	}
	return &SyntaxError{Pointer: "", Offset: d.dec.InputOffset(), Err: errors.New("data after the JSON value")}
}

// Name reads an object member name and returns it unescaped. The bytes are
// valid until the next call on d.
func (d *Decoder) Name() ([]byte, error) {
	v, err := d.dec.ReadValue()
	if err != nil {
		return nil, d.wrap(err)
	}
	inner := v[1 : len(v)-1]
	if bytes.IndexByte(inner, '\\') < 0 {
		return inner, nil
	}
	d.scratch, err = jsontext.AppendUnquote(d.scratch[:0], v)
	return d.scratch, err
}

// value reads the next value and returns it with its start offset in src.
func (d *Decoder) value() (jsontext.Value, int, error) {
	v, err := d.dec.ReadValue()
	if err != nil {
		return nil, 0, d.wrap(err)
	}
	end := d.base + int(d.dec.InputOffset())
	return v, end - len(v), nil
}

// String reads a JSON string. Without escapes the result is a substring of
// src and costs no allocation.
func (d *Decoder) String() (string, error) {
	v, start, err := d.value()
	if err != nil {
		return "", err
	}
	if v[0] != '"' {
		return "", ErrWrongType
	}
	if bytes.IndexByte(v, '\\') < 0 {
		return d.src[start+1 : start+len(v)-1], nil
	}
	d.scratch, err = jsontext.AppendUnquote(d.scratch[:0], v)
	if err != nil {
		return "", d.wrap(err)
	}
	return string(d.scratch), nil
}

// Bool reads true or false.
func (d *Decoder) Bool() (bool, error) {
	v, _, err := d.value()
	if err != nil {
		return false, err
	}
	switch v[0] {
	case 't':
		return true, nil
	case 'f':
		return false, nil
	}
	return false, ErrWrongType
}

// Integer reads a number whose value is an integer and returns it exactly.
// 7, 7.0 and 0.7e1 are all 7; 7.5 is [ErrNotInteger]; a value beyond int64 is
// [ErrRange]; anything but a number is [ErrWrongType].
func (d *Decoder) Integer() (int64, error) {
	v, _, err := d.value()
	if err != nil {
		return 0, err
	}
	if v[0] != '-' && (v[0] < '0' || v[0] > '9') {
		return 0, ErrWrongType
	}
	return ParseInteger(v)
}

// Float reads a number as the nearest float64.
func (d *Decoder) Float() (float64, error) {
	v, _, err := d.value()
	if err != nil {
		return 0, err
	}
	if v[0] != '-' && (v[0] < '0' || v[0] > '9') {
		return 0, ErrWrongType
	}
	f, err := strconv.ParseFloat(string(v), 64)
	if err != nil {
		return 0, ErrRange
	}
	return f, nil
}

// Raw reads any value and returns a copy of its bytes as they appear in the
// input, after checking the depth limit.
func (d *Decoder) Raw() ([]byte, error) {
	v, _, err := d.value()
	if err != nil {
		return nil, err
	}
	if (v[0] == '{' || v[0] == '[') && exceedsDepth(v, d.maxDepth-d.Depth()) {
		return nil, ErrTooDeep
	}
	return bytes.Clone(v), nil
}

// RawObject is Raw for a value that must be an object.
func (d *Decoder) RawObject() ([]byte, error) {
	if d.Peek() != '{' {
		if _, _, err := d.value(); err != nil {
			return nil, err
		}
		return nil, ErrWrongType
	}
	return d.Raw()
}

// Skip reads and discards the next value.
func (d *Decoder) Skip() error {
	if err := d.dec.SkipValue(); err != nil {
		return d.wrap(err)
	}
	return nil
}

// exceedsDepth reports whether the valid JSON value v nests objects and
// arrays more than budget levels deep.
func exceedsDepth(v []byte, budget int) bool {
	if len(v) <= budget {
		return false // each level costs at least one byte
	}
	depth := 0
	for i := 0; i < len(v); i++ {
		switch v[i] {
		case '"':
			for {
				j := bytes.IndexByte(v[i+1:], '"')
				if j < 0 {
					return false // unreachable for valid JSON
				}
				i += j + 1
				n := 0
				for k := i - 1; v[k] == '\\'; k-- {
					n++
				}
				if n%2 == 0 {
					break
				}
			}
		case '{', '[':
			depth++
			if depth > budget {
				return true
			}
		case '}', ']':
			depth--
		}
	}
	return false
}

// ParseInteger returns the exact integer value of the JSON number v: 7,
// 7.0, 70e-1 and 0.7E1 are all 7. A fractional value is [ErrNotInteger], one
// beyond int64 is [ErrRange], and text that is not a JSON number is
// [ErrWrongType].
func ParseInteger(v []byte) (int64, error) {
	neg := false
	i := 0
	if i < len(v) && v[i] == '-' {
		neg = true
		i++
	}
	// Fast path: digits only.
	if n := len(v) - i; n > 0 && n <= 18 {
		var u int64
		j := i
		for ; j < len(v) && v[j] >= '0' && v[j] <= '9'; j++ {
			u = u*10 + int64(v[j]-'0')
		}
		if j == len(v) && (v[i] != '0' || n == 1) {
			if neg {
				return -u, nil
			}
			return u, nil
		}
	}
	// General path: value = digits × 10^exp, exactly.
	var digits []byte
	var buf [24]byte
	digits = buf[:0]
	start := i
	for ; i < len(v) && v[i] >= '0' && v[i] <= '9'; i++ {
		digits = appendDigit(digits, v[i])
	}
	if i == start || (v[start] == '0' && i-start > 1) {
		return 0, ErrWrongType
	}
	var exp int64
	if i < len(v) && v[i] == '.' {
		i++
		fs := i
		for ; i < len(v) && v[i] >= '0' && v[i] <= '9'; i++ {
			digits = appendDigit(digits, v[i])
			exp--
		}
		if i == fs {
			return 0, ErrWrongType
		}
	}
	if i < len(v) && (v[i] == 'e' || v[i] == 'E') {
		i++
		eneg := false
		if i < len(v) && (v[i] == '+' || v[i] == '-') {
			eneg = v[i] == '-'
			i++
		}
		es := i
		var e int64
		for ; i < len(v) && v[i] >= '0' && v[i] <= '9'; i++ {
			// Saturate far beyond any count of mantissa digits, so that a
			// huge exponent is never cut down to one those digits cancel.
			if e < maxExponent {
				e = e*10 + int64(v[i]-'0')
			}
		}
		if i == es {
			return 0, ErrWrongType
		}
		if eneg {
			e = -e
		}
		exp += e
	}
	if i != len(v) {
		return 0, ErrWrongType
	}
	// digits has no leading zeros (appendDigit drops them); strip trailing ones.
	for len(digits) > 0 && digits[len(digits)-1] == '0' {
		digits = digits[:len(digits)-1]
		exp++
	}
	if len(digits) == 0 {
		return 0, nil
	}
	if exp < 0 {
		return 0, ErrNotInteger
	}
	if int64(len(digits))+exp > 19 {
		return 0, ErrRange
	}
	var u uint64
	for _, c := range digits {
		u = u*10 + uint64(c-'0')
	}
	for ; exp > 0; exp-- {
		u *= 10
	}
	// 19 digits fit in uint64 without overflow.
	if neg {
		if u > 1<<63 {
			return 0, ErrRange
		}
		return -int64(u), nil
	}
	if u > 1<<63-1 {
		return 0, ErrRange
	}
	return int64(u), nil
}

// maxExponent is where ParseInteger stops reading an exponent's digits: an
// exponent at or beyond it exceeds the number of digits of any input that
// fits in memory, so the value is 0, out of range or a fraction whatever
// the exact exponent is.
const maxExponent = 1 << 40

// appendDigit appends the decimal digit c to digits, dropping leading
// zeros.
func appendDigit(digits []byte, c byte) []byte {
	if len(digits) == 0 && c == '0' {
		return digits
	}
	return append(digits, c)
}

// View reads the next value and returns its bytes, valid until the next
// call on d and not to be modified, with the offset of its first byte in
// the source string. It does not check the depth limit: a caller that keeps
// the value reads it through a nested Decoder, or uses Raw.
func (d *Decoder) View() ([]byte, int, error) {
	v, start, err := d.value()
	return v, start, err
}
