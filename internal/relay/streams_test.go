package relay_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Papercusp/chat-protocol-go/internal/relay"
)

func TestStreamsShutdownWaitsForTheStreamsBegun(t *testing.T) {
	s := relay.NewStreams()
	require.True(t, s.Begin())
	require.True(t, s.Begin())
	assert.False(t, s.Closed())
	assert.NoError(t, s.Closing().Err())

	short, cancel := context.WithTimeout(t.Context(), 20*time.Millisecond)
	defer cancel()
	assert.ErrorIs(t, s.Shutdown(short), context.DeadlineExceeded, "two streams are still running")
	assert.True(t, s.Closed())
	assert.ErrorIs(t, s.Closing().Err(), context.Canceled)
	assert.False(t, s.Begin(), "no stream begins once closing")

	done := make(chan error, 1)
	go func() { done <- s.Shutdown(t.Context()) }()
	s.End()
	select {
	case err := <-done:
		t.Fatalf("Shutdown returned %v with a stream still running", err)
	case <-time.After(20 * time.Millisecond):
	}
	s.End()
	select {
	case err := <-done:
		assert.NoError(t, err)
	case <-time.After(5 * time.Second):
		t.Fatal("Shutdown did not return once the last stream ended")
	}
	assert.NoError(t, s.Shutdown(t.Context()), "a second Shutdown with no stream returns at once")
}
