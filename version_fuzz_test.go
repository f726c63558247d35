package chatprotocol

import (
	"math/big"
	"regexp"
	"strings"
	"testing"

	"github.com/Papercusp/chat-protocol-go/refusal"

	"github.com/go-json-experiment/json/jsontext"
)

// shortExponent matches a JSON number whose exponent math/big can expand.
var shortExponent = regexp.MustCompile(`^-?[0-9]+(\.[0-9]+)?([eE][+-]?[0-9]{1,4})?$`)

// FuzzNegotiateChatVersion checks NegotiateChatVersion against the rule of
// docs/contract.md section 1 read from a reference: the text, without JSON
// whitespace around it, is one JSON number whose exact value (math/big) is
// 0 or 1. Anything else is refused with unsupported-version; it never
// panics.
func FuzzNegotiateChatVersion(f *testing.F) {
	for _, s := range []string{"0", "1", "1.0", "1e0", "-0", "0.0", " 1", "\t1\n", `"1"`, "true", "null", "01", "2", "-1", "0.5",
		"1.0000000000000001", "10e-1", "0.1e1", "1e-0", "1E+0", "1" + strings.Repeat("0", 400) + "e-400", "\ufeff1", "1 1", "[1]", "Infinity", "0x1", "+1", ".1e1", "1."} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		got, err := NegotiateChatVersion(in)
		if err != nil && refusal.CodeOf(err) != refusal.CodeUnsupportedVersion {
			t.Fatalf("NegotiateChatVersion(%q): %v, not unsupported-version", in, err)
		}
		v := strings.Trim(string(in), " \t\r\n")
		isNumber := v != "" && (v[0] == '-' || v[0] >= '0' && v[0] <= '9') && jsontext.Value(v).IsValid()
		if !isNumber {
			if err == nil {
				t.Fatalf("NegotiateChatVersion(%q) = %v; not one JSON number", in, got)
			}
			return
		}
		if !shortExponent.MatchString(v) {
			return
		}
		r, ok := new(big.Rat).SetString(v)
		if !ok {
			t.Fatalf("reference cannot read %q", v)
		}
		switch {
		case r.Cmp(big.NewRat(0, 1)) == 0:
			if err != nil || got != ChatVersionLegacy0 {
				t.Fatalf("NegotiateChatVersion(%q) = %v, %v; want 0", in, got, err)
			}
		case r.Cmp(big.NewRat(1, 1)) == 0:
			if err != nil || got != ChatVersion1 {
				t.Fatalf("NegotiateChatVersion(%q) = %v, %v; want 1", in, got, err)
			}
		default:
			if err == nil {
				t.Fatalf("NegotiateChatVersion(%q) = %v; its value is %s", in, got, r.RatString())
			}
		}
	})
}
