// Package pgtestdb gives the example servers' tests a database of their
// own on the PostgreSQL server of CHATPROTOCOL_PG_DSN.
package pgtestdb

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"os"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// DSNEnv points the tests at a PostgreSQL server, as for the pgstore tests.
const DSNEnv = "CHATPROTOCOL_PG_DSN"

// Fresh creates a database of the test's own on the server of
// CHATPROTOCOL_PG_DSN, dropped when the test ends, and returns its DSN.
// Without the variable the test skips.
func Fresh(t *testing.T) string {
	t.Helper()
	admin := os.Getenv(DSNEnv)
	if admin == "" {
		t.Skipf("SKIPPED: %s is not set (run .ci/postgres start and export its DSN)", DSNEnv)
	}
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, admin)
	require.NoError(t, err, "%s is set but unusable", DSNEnv)
	var b [6]byte
	_, _ = rand.Read(b[:])
	name := "example_" + hex.EncodeToString(b[:])
	_, err = conn.Exec(ctx, "CREATE DATABASE "+name)
	require.NoError(t, err)
	t.Cleanup(func() {
		_, err := conn.Exec(context.Background(), "DROP DATABASE "+name+" WITH (FORCE)")
		assert.NoError(t, err)
		conn.Close(context.Background())
	})
	u, err := url.Parse(admin)
	require.NoError(t, err)
	u.Path = "/" + name
	return u.String()
}
