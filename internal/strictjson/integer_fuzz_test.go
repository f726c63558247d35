package strictjson

import (
	"errors"
	"math"
	"math/big"
	"regexp"
	"strings"
	"testing"

	"github.com/go-json-experiment/json/jsontext"
)

// smallExponent keeps the reference (math/big) from building numbers with
// millions of digits.
var smallExponent = regexp.MustCompile(`^-?[0-9]+(\.[0-9]+)?([eE][+-]?[0-9]{1,3})?$`)

// FuzzParseInteger compares ParseInteger with an exact reference: the
// rational value math/big reads from the same JSON number.
func FuzzParseInteger(f *testing.F) {
	for _, s := range []string{"0", "-0", "7", "7.0", "70e-1", "0.7E1", "7.5", "9007199254740991", "9223372036854775807",
		"9223372036854775808", "-9223372036854775808", "1e19", "1e18", "0.000", "100e-2", "01", "1.", "-", "1e400", "12345678901234567890e-1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := ParseInteger([]byte(s))
		valid := jsontext.Value(s).IsValid() && len(s) > 0 && (s[0] == '-' || s[0] >= '0' && s[0] <= '9') &&
			strings.TrimRight(s, " \t\r\n") == s
		if !valid {
			if !errors.Is(err, ErrWrongType) {
				t.Fatalf("ParseInteger(%q) = %d, %v; not a JSON number", s, got, err)
			}
			return
		}
		if errors.Is(err, ErrWrongType) {
			t.Fatalf("ParseInteger(%q): %v, but it is a JSON number", s, err)
		}
		if !smallExponent.MatchString(s) {
			return
		}
		r, ok := new(big.Rat).SetString(s)
		if !ok {
			t.Fatalf("reference cannot read %q", s)
		}
		switch {
		case !r.IsInt():
			if !errors.Is(err, ErrNotInteger) {
				t.Fatalf("ParseInteger(%q) = %d, %v; want ErrNotInteger", s, got, err)
			}
		case r.Num().IsInt64():
			if err != nil || got != r.Num().Int64() {
				t.Fatalf("ParseInteger(%q) = %d, %v; want %s", s, got, err, r.Num())
			}
		default:
			if !errors.Is(err, ErrRange) {
				t.Fatalf("ParseInteger(%q) = %d, %v; want ErrRange (%s beyond %d)", s, got, err, r.Num(), math.MaxInt64)
			}
		}
	})
}
