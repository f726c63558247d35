package pgstore

import (
	"context"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestMigrationsAreEmbeddedInOrder(t *testing.T) {
	ms := Migrations()
	require.NotEmpty(t, ms)
	for i, m := range ms {
		assert.Equal(t, i+1, m.Version, "versions are 1, 2, … without gaps")
		assert.NotEmpty(t, m.Name)
		assert.Regexp(t, `(?m)^(CREATE|ALTER) `, m.SQL, "a migration changes the schema")
	}
	assert.Equal(t, ms[len(ms)-1].Version, LatestVersion())
}

// TestMigrateConcurrentAndIdempotent: workers starting at once all migrate
// one empty schema; each migration is applied once.
func TestMigrateConcurrentAndIdempotent(t *testing.T) {
	schema := freshSchema(t) // already migrated once
	pool := newPool(t, poolOpts{searchPath: schema})
	ctx := t.Context()
	_, err := pool.Exec(ctx, "DROP TABLE pgstore_conversation_turns, pgstore_conversations, pgstore_replay_frames, pgstore_replay_turns, pgstore_card_transitions, pgstore_cards, pgstore_effects, pgstore_turns, pgstore_schema_migrations")
	require.NoError(t, err)
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range errs {
		wg.Go(func() { errs[i] = Migrate(ctx, newPool(t, poolOpts{searchPath: schema})) })
	}
	wg.Wait()
	for _, err := range errs {
		require.NoError(t, err)
	}
	require.NoError(t, Migrate(ctx, pool), "migrating a current schema again does nothing")
	var n, latest int
	require.NoError(t, pool.QueryRow(ctx, "SELECT count(*), max(version) FROM pgstore_schema_migrations").Scan(&n, &latest))
	assert.Equal(t, len(Migrations()), n, "each migration recorded once")
	assert.Equal(t, LatestVersion(), latest)
}

func TestMigrateRefusesANewerSchema(t *testing.T) {
	schema := freshSchema(t)
	pool := newPool(t, poolOpts{searchPath: schema})
	ctx := context.WithoutCancel(t.Context())
	_, err := pool.Exec(ctx, "INSERT INTO pgstore_schema_migrations (version, name) VALUES ($1, 'from-the-future')", LatestVersion()+1)
	require.NoError(t, err)
	assert.ErrorIs(t, Migrate(ctx, pool), ErrSchemaTooNew)
}
