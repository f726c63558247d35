package decimal

import (
	"math"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"

	_ "github.com/Papercusp/chat-protocol-go/internal/testkit/golden" // accepts go test ./... -update
)

func TestParse(t *testing.T) {
	for _, c := range []struct {
		v    string
		max  int64
		want int64
		ok   bool
	}{
		{"0", 10, 0, true},
		{"7", 10, 7, true},
		{"10", 10, 10, true},
		{"11", 10, 0, false},
		{"000000000000000000000000000042", 42, 42, true}, // leading zeros, any number
		{"9223372036854775807", math.MaxInt64, math.MaxInt64, true},
		{"9223372036854775808", math.MaxInt64, 0, false}, // one past: no overflow
		{"99999999999999999999999", math.MaxInt64, 0, false},
		{"5", 3, 0, false},
		{"3", 3, 3, true},
		{"", 10, 0, false},
		{"-1", 10, 0, false},
		{"+1", 10, 0, false},
		{"1.0", 10, 0, false},
		{"1e2", 1000, 0, false},
		{" 1", 10, 0, false},
	} {
		n, ok := Parse([]byte(c.v), c.max)
		assert.Equal(t, c.ok, ok, "%q at most %d", c.v, c.max)
		assert.Equal(t, c.want, n, "%q at most %d", c.v, c.max)
	}
}

// FuzzParse: Parse agrees with strconv on every input of digits only.
func FuzzParse(f *testing.F) {
	f.Add("123", int64(1000))
	f.Add("9223372036854775808", int64(math.MaxInt64))
	f.Fuzz(func(t *testing.T, v string, max int64) {
		if max < 0 {
			max = -(max + 1)
		}
		n, ok := Parse([]byte(v), max)
		digits := v != ""
		for i := 0; i < len(v); i++ {
			digits = digits && v[i] >= '0' && v[i] <= '9'
		}
		u, err := strconv.ParseUint(v, 10, 64)
		want := digits && err == nil && u <= uint64(max)
		if ok != want || (ok && uint64(n) != u) {
			t.Fatalf("Parse(%q, %d) = %d, %v; strconv says %d, %v", v, max, n, ok, u, err)
		}
	})
}
