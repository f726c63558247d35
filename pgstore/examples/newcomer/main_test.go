package main

import (
	"context"
	"log/slog"
	"net"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/Papercusp/chat-protocol-go/examples/newcomer/service"
	"github.com/Papercusp/chat-protocol-go/internal/testkit/newcomertest"
	"github.com/Papercusp/chat-protocol-go/pgstore/internal/pgtestdb"
)

// TestNewcomerServiceOnPostgreSQL drives the service on the PostgreSQL
// stores as on memory.
func TestNewcomerServiceOnPostgreSQL(t *testing.T) {
	dsn := pgtestdb.Fresh(t)
	s, closeStores, err := postgres(t.Context(), dsn)
	require.NoError(t, err)
	defer closeStores()
	newcomertest.Drive(t, s, func(ctx context.Context, ln net.Listener) error {
		return service.Serve(ctx, ln, s, slog.New(slog.NewTextHandler(t.Output(), nil)))
	})
}
