// Package decimal reads the unsigned decimal integers of the wire formats
// the module reads by hand: an SSE retry field (sse) and a provider's JSON
// integers (ingest), so that the digit loop and its overflow rule are
// written once.
package decimal

// Parse returns the value of v, ASCII digits only, and whether v is one no
// larger than max (max >= 0): at least one digit, no sign, no other byte;
// leading zeros are read. It never overflows, whatever v's length.
func Parse(v []byte, max int64) (int64, bool) {
	if len(v) == 0 {
		return 0, false
	}
	var n int64
	for _, c := range v {
		if c < '0' || c > '9' {
			return 0, false
		}
		d := int64(c - '0')
		if n > max/10 || n*10 > max-d {
			return 0, false
		}
		n = n*10 + d
	}
	return n, true
}
