package benchcpu

import (
	"testing"

	_ "github.com/Papercusp/chat-protocol-go/internal/testkit/golden" // accepts go test ./... -update

	"github.com/stretchr/testify/assert"
)

func TestProcessCPUAdvances(t *testing.T) {
	before, ok := processCPU()
	if !ok {
		t.Skip("CPU time not measured on this system")
	}
	x := 0
	for i := range 50_000_000 {
		x ^= i
	}
	after, _ := processCPU()
	assert.Greater(t, after, before, "spinning uses CPU time (%d)", x)
}
