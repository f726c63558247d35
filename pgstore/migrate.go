package pgstore

import (
	"context"
	"embed"
	"fmt"
	"io/fs"
	"slices"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// Migration is one versioned step of the schema, embedded in the package:
// migrations/NNNN_name.sql.
type Migration struct {
	Version int
	Name    string
	SQL     string
}

// Migrations returns the embedded migrations in version order. The slice is
// new on each call.
func Migrations() []Migration {
	entries, err := fs.ReadDir(migrationFiles, "migrations")
	if err != nil {
		return nil // the directory is embedded: it always exists
	}
	var ms []Migration
	for _, e := range entries {
		num, name, ok := strings.Cut(strings.TrimSuffix(e.Name(), ".sql"), "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil {
			continue
		}
		b, err := migrationFiles.ReadFile("migrations/" + e.Name())
		if err != nil {
			continue
		}
		ms = append(ms, Migration{Version: v, Name: name, SQL: string(b)})
	}
	slices.SortFunc(ms, func(a, b Migration) int { return a.Version - b.Version })
	return ms
}

// LatestVersion is the version of the newest embedded migration.
func LatestVersion() int {
	ms := Migrations()
	if len(ms) == 0 {
		return 0
	}
	return ms[len(ms)-1].Version
}

// migrateLockKey is the advisory lock that serializes concurrent Migrate
// calls (two workers starting at once).
const migrateLockKey = int64(0x7067_7374_6d69_6772) // "pgstmigr"

// ErrSchemaTooNew is returned by Migrate when the database has a migration
// this package does not know: a newer pgstore wrote it, and an older one
// must not run against that schema (it fails closed).
var ErrSchemaTooNew = fmt.Errorf("pgstore: the database schema is newer than this pgstore")

// Migrate brings the database of pool to [LatestVersion]: it creates the
// table pgstore_schema_migrations if missing and applies, in one
// transaction, every embedded migration not yet recorded there, so that a
// failure leaves the schema as it was. Concurrent calls from many processes
// are safe: they serialize on a transaction-scoped advisory lock and the
// later ones find nothing to do. It returns [ErrSchemaTooNew] (wrapped) when
// the database records a version above [LatestVersion], and the database's
// error otherwise. Run it on the primary, with a role that may create
// tables.
func Migrate(ctx context.Context, pool *pgxpool.Pool) error {
	return pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", migrateLockKey); err != nil {
			return fmt.Errorf("pgstore: migrate: lock: %w", err)
		}
		_, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS pgstore_schema_migrations (
			version    integer     PRIMARY KEY,
			name       text        NOT NULL,
			applied_at timestamptz NOT NULL DEFAULT now())`)
		if err != nil {
			return fmt.Errorf("pgstore: migrate: %w", err)
		}
		var current int
		if err := tx.QueryRow(ctx, "SELECT coalesce(max(version), 0) FROM pgstore_schema_migrations").Scan(&current); err != nil {
			return fmt.Errorf("pgstore: migrate: %w", err)
		}
		if latest := LatestVersion(); current > latest {
			return fmt.Errorf("%w: database at version %d, this package knows %d", ErrSchemaTooNew, current, latest)
		}
		for _, m := range Migrations() {
			if m.Version <= current {
				continue
			}
			if _, err := tx.Exec(ctx, m.SQL); err != nil {
				return fmt.Errorf("pgstore: migration %d (%s): %w", m.Version, m.Name, err)
			}
			if _, err := tx.Exec(ctx, "INSERT INTO pgstore_schema_migrations (version, name) VALUES ($1, $2)", m.Version, m.Name); err != nil {
				return fmt.Errorf("pgstore: migration %d (%s): %w", m.Version, m.Name, err)
			}
		}
		return nil
	})
}
