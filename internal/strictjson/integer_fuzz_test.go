package strictjson

import (
	"cmp"
	"errors"
	"math/big"
	"strings"
	"testing"

	"github.com/go-json-experiment/json/jsontext"
)

// referenceInteger is the exact value of the JSON number s, decided without
// building a number of millions of digits: s is mantissa × 10^x, and when x
// is far below or above what a mantissa of that many digits can cancel, the
// value is a fraction or beyond int64 whatever x is exactly.
func referenceInteger(t *testing.T, s string) (n int64, err error) {
	mant, exp, _ := strings.Cut(strings.ToLower(s), "e")
	intPart, frac, _ := strings.Cut(strings.TrimPrefix(mant, "-"), ".")
	digits := strings.TrimLeft(intPart+frac, "0")
	x, ok := new(big.Int).SetString(strings.TrimPrefix(cmp.Or(exp, "0"), "+"), 10)
	if !ok {
		t.Fatalf("reference cannot read the exponent of %q", s)
	}
	x.Sub(x, big.NewInt(int64(len(frac))))
	switch {
	case strings.Trim(digits, "0") == "":
		return 0, nil
	case x.Cmp(big.NewInt(40)) > 0:
		return 0, ErrRange // at least 10^41
	case x.Cmp(big.NewInt(-int64(len(digits))-1)) < 0:
		return 0, ErrNotInteger // between 0 and 1 exclusive
	}
	r, ok := new(big.Rat).SetString(intPart + frac + "e" + x.String())
	if !ok {
		t.Fatalf("reference cannot read %q", s)
	}
	if !r.IsInt() {
		return 0, ErrNotInteger
	}
	if strings.HasPrefix(s, "-") {
		r.Neg(r)
	}
	if !r.Num().IsInt64() {
		return 0, ErrRange
	}
	return r.Num().Int64(), nil
}

// FuzzParseInteger compares ParseInteger with an exact reference
// (referenceInteger), for exponents of any length.
func FuzzParseInteger(f *testing.F) {
	for _, s := range []string{"0", "-0", "7", "7.0", "70e-1", "0.7E1", "7.5", "9007199254740991", "9223372036854775807",
		"9223372036854775808", "-9223372036854775808", "1e19", "1e18", "0.000", "100e-2", "01", "1.", "-", "1e400", "12345678901234567890e-1",
		"1" + strings.Repeat("0", 2000) + "e-20000", "1" + strings.Repeat("0", 2000) + "e-2000", "0.00001e99999999999999999999"} {
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
		want, wantErr := referenceInteger(t, s)
		if wantErr != nil {
			if !errors.Is(err, wantErr) {
				t.Fatalf("ParseInteger(%q) = %d, %v; want %v", s, got, err, wantErr)
			}
			return
		}
		if err != nil || got != want {
			t.Fatalf("ParseInteger(%q) = %d, %v; want %d", s, got, err, want)
		}
	})
}
