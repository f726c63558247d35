package jsjson

import (
	"maps"
	"math"
	"slices"
	"strconv"
	"unicode/utf8"
)

const hexDigits = "0123456789abcdef"

// AppendString appends s as a JSON string literal, as JSON.stringify writes
// it: '"' and '\' escaped, control characters below U+0020 as \b \t \n \f
// \r or \u00XX (lowercase hex), everything else written as is, including
// U+2028, U+2029 and DEL. A lone surrogate held in its WTF-8 form is written
// as \udXXX; two such forms in a row that make a pair are written as the
// one character they encode; any other invalid UTF-8 is written as U+FFFD,
// one per maximal subpart.
//
// With escapeHTML, '<', '>' and '&' are written as \u003c, \u003e and
// \u0026, so that the literal can sit inside a <tag>...</tag> without ever
// containing a closing tag.
func AppendString(dst []byte, s string, escapeHTML bool) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && (!escapeHTML || (c != '<' && c != '>' && c != '&')) {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch c {
			case '"', '\\':
				dst = append(dst, '\\', c)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r != utf8.RuneError || size != 1 {
			i += size
			continue
		}
		dst = append(dst, s[start:i]...)
		if hi, ok := surrogateAt(s[i:]); ok {
			if lo, ok := surrogateAt(s[i+3:]); ok && hi <= 0xDBFF && lo >= 0xDC00 {
				dst = utf8.AppendRune(dst, 0x10000+(hi-0xD800)<<10+(lo-0xDC00))
				i += 6
			} else {
				dst = append(dst, '\\', 'u', hexDigits[hi>>12], hexDigits[hi>>8&0xF], hexDigits[hi>>4&0xF], hexDigits[hi&0xF])
				i += 3
			}
		} else {
			dst = utf8.AppendRune(dst, utf8.RuneError)
			i += maximalSubpart(s[i:])
		}
		start = i
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// AppendNumber appends f as JSON.stringify writes a number: the shortest
// decimal that reads back as f, in exponent form ("1e+21", "1.5e-7") only
// below 1e-6 or from 1e21 on; NaN and ±Inf, which JSON cannot hold, as null;
// -0 as 0.
func AppendNumber(dst []byte, f float64) []byte {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return append(dst, "null"...)
	}
	if f == 0 {
		return append(dst, '0')
	}
	abs := math.Abs(f)
	if abs >= 1e-6 && abs < 1e21 {
		return strconv.AppendFloat(dst, f, 'f', -1, 64)
	}
	n := len(dst)
	dst = strconv.AppendFloat(dst, f, 'e', -1, 64)
	// Go writes e-07 and e+07; ECMAScript writes e-7 and e+7.
	if m := len(dst); m-n >= 4 && dst[m-4] == 'e' && dst[m-2] == '0' {
		dst[m-2] = dst[m-1]
		dst = dst[:m-1]
	}
	return dst
}

// AppendArray appends the JSON array of xs, each element as elem writes
// it, with a comma between two.
func AppendArray[T any](dst []byte, xs []T, elem func(dst []byte, x T) []byte) []byte {
	dst = append(dst, '[')
	for i, x := range xs {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = elem(dst, x)
	}
	return append(dst, ']')
}

// AppendValue appends v, a value as Parse returns it, as JSON.stringify
// would write it, except that object members are written in sorted order
// (a map keeps no order). Values of other Go types are written as null.
func AppendValue(dst []byte, v any) []byte {
	switch v := v.(type) {
	case nil:
		return append(dst, "null"...)
	case bool:
		return strconv.AppendBool(dst, v)
	case float64:
		return AppendNumber(dst, v)
	case string:
		return AppendString(dst, v, false)
	case []any:
		return AppendArray(dst, v, AppendValue)
	case map[string]any:
		dst = append(dst, '{')
		for i, k := range slices.Sorted(maps.Keys(v)) {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = AppendString(dst, k, false)
			dst = append(dst, ':')
			dst = AppendValue(dst, v[k])
		}
		return append(dst, '}')
	}
	return append(dst, "null"...)
}
