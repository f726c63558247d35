package interactionstest

import (
	"time"

	"github.com/Papercusp/chat-protocol-go/internal/kit/fakeclock"
)

// Clock is a fake clock for [interactions.Options.Clock] (pass its Now): it
// stands still until Advance moves it, so expiry is driven by the test. It
// is safe for concurrent use.
type Clock = fakeclock.Clock

// NewClock returns a Clock reading start.
func NewClock(start time.Time) *Clock { return fakeclock.New(start) }
