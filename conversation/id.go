package conversation

import (
	"crypto/rand"
	"encoding/hex"
	"strconv"
	"time"
)

// NewID returns a fresh conversation or turn id: the current Unix time in
// milliseconds, base 36, a dash and 16 random hex digits (at most 26
// bytes). Ids from a restarted process, or from another instance, never
// repeat one: the random part alone makes a collision among 2^32 ids
// about one in four billion, and the time part orders ids by start.
func NewID() string {
	var b [8]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
	id := strconv.AppendInt(make([]byte, 0, 26), time.Now().UnixMilli(), 36)
	id = append(id, '-')
	return string(hex.AppendEncode(id, b[:]))
}
