package strictjson

import (
	"strconv"

	"github.com/go-json-experiment/json/jsontext"
)

// AppendName appends s as a member name followed by a colon, after a comma
// unless dst ends an opening brace.
func AppendName(dst []byte, s string) ([]byte, error) {
	if n := len(dst); n > 0 && dst[n-1] != '{' {
		dst = append(dst, ',')
	}
	dst, err := AppendString(dst, s)
	return append(dst, ':'), err
}

// AppendRaw appends the JSON value raw without insignificant whitespace,
// keeping its strings and numbers as written. raw must be one strict JSON
// value: no duplicated names, valid UTF-8.
func AppendRaw(dst []byte, raw []byte) ([]byte, error) {
	return jsontext.AppendFormat(dst, raw, jsontext.PreserveRawStrings(true))
}

// CheckRaw returns the error [AppendRaw] would return for raw, nil for one
// strict JSON value, without writing anything: it reads raw with the
// tokenizer [AppendRaw] formats it with, under the same default options.
func CheckRaw(raw []byte) error {
	if jsontext.Value(raw).IsValid() {
		return nil
	}
	_, err := AppendRaw(nil, raw)
	return err
}

// AppendInt appends n as a JSON number.
func AppendInt(dst []byte, n int64) []byte { return strconv.AppendInt(dst, n, 10) }

// AppendFloat appends f as a JSON number in the ECMAScript form (RFC 8785
// docs/contract.md section 3.2.2.3). NaN and infinities are an error for the caller to
// prevent; they are written as strings by jsontext.
func AppendFloat(dst []byte, f float64) []byte { return jsontext.AppendFloat(dst, f, 64) }

// AppendBool appends true or false.
func AppendBool(dst []byte, b bool) []byte { return strconv.AppendBool(dst, b) }
