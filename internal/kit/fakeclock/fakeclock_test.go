package fakeclock

import (
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	_ "github.com/Papercusp/chat-protocol-go/internal/testkit/golden" // accepts go test ./... -update
)

func TestClockMovesOnlyWhenTold(t *testing.T) {
	start := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	c := New(start)
	assert.Equal(t, start, c.Now())
	assert.Equal(t, start, c.Now())
	c.Advance(90 * time.Second)
	assert.Equal(t, start.Add(90*time.Second), c.Now())
	c.Advance(-30 * time.Second)
	assert.Equal(t, start.Add(time.Minute), c.Now())

	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() { c.Advance(time.Second); _ = c.Now() })
	}
	wg.Wait()
	assert.Equal(t, start.Add(68*time.Second), c.Now())
}
