package pgstore

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"flag"
	"fmt"
	"net/url"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"
)

// The tests run against a real server (.ci/postgres; CHATPROTOCOL_PG_DSN),
// each run of the binary in a fresh database, and prove the designs of
// docs/contract.md sections 11.8, 13.4, 13.6 and 13.7:
//
//   - recoverytest.TestStore and interactionstest.TestStore at read
//     committed and serializable (kits_test.go), with recoverytest's
//     failpoints injected before each write and, after it, by a proxy that
//     cuts the connection once the server committed (internal/lossyproxy);
//   - concurrency races: a cancellation racing admission, duplicate
//     workers, racing answers (-pgstore.iterations, -pgstore.goroutines);
//   - lost acknowledgements on the wire (TestLostAcks, -pgstore.lostacks);
//   - worker processes killed with SIGKILL at every named failpoint and at
//     random moments (TestKill9, -pgstore.kills);
//   - cancellation across processes (TestCrossInstanceCancel,
//     -pgstore.cancels), and recovery at every pool size (pool_test.go);
//   - replaytest.TestWindow and the window across instances
//     (window_test.go, window_instances_test.go);
//   - BenchmarkTurnRecovery against a bare INSERT, BenchmarkWindowAppend and
//     BenchmarkWindowDeliveryLatency (-pgstore.latency).

// dsnEnv names the variable that points the tests at a PostgreSQL server.
// .ci/run always sets it (.ci/postgres start); a developer without a
// server leaves it unset and the database tests skip, loudly.
const dsnEnv = "CHATPROTOCOL_PG_DSN"

// The test database: created fresh for this run of this test binary, so
// that runs never interfere, and dropped at the end.
var (
	testDSN   string // the DSN of the fresh database
	setupErr  error  // set when CHATPROTOCOL_PG_DSN is set but unusable
	dsnIsSet  bool
	adminDSN  string
	testDB    string
	flagIters = flag.Int("pgstore.iterations", 1000, "iterations per goroutine of each concurrency scenario")
	flagGors  = flag.Int("pgstore.goroutines", 16, "goroutines of each concurrency scenario")
	flagKills = flag.Int("pgstore.kills", 50, "SIGKILLs of worker processes in TestKill9 (at least the named failpoints)")
	flagAcks  = flag.Int("pgstore.lostacks", 100, "acknowledgements TestLostAcks loses on the wire")
	// flagCancels is how many cross-instance cancellations
	// TestCrossInstanceCancel measures with the listener up (a quarter as
	// many with its connection cut, and with the canceller killed).
	flagCancels = flag.Int("pgstore.cancels", 40, "cancellations TestCrossInstanceCancel measures")
	// flagTurnKills is how many producer processes TestTurnAcrossInstances
	// kills with SIGKILL mid-turn, on a schedule drawn from flagSeed.
	flagTurnKills = flag.Int("pgstore.turnkills", 16, "SIGKILLs of producer processes in TestTurnAcrossInstances")
	flagSeed      = flag.Uint64("pgstore.seed", 0, "seed of TestTurnAcrossInstances's kill schedule; 0: from the clock")
)

func TestMain(m *testing.M) {
	if os.Getenv(workerEnv) != "" {
		os.Exit(workerMain())
	}
	if os.Getenv(abortRoleEnv) != "" {
		os.Exit(abortMain())
	}
	flag.Parse()
	adminDSN = os.Getenv(dsnEnv)
	dsnIsSet = adminDSN != ""
	if !dsnIsSet {
		fmt.Fprintf(os.Stderr, "\n*** pgstore: %s is not set: every PostgreSQL test SKIPS. "+
			"Run `.ci/postgres start` and export its DSN to run them (CI always does). ***\n\n", dsnEnv)
	} else {
		setupErr = createTestDB()
		if setupErr != nil {
			fmt.Fprintf(os.Stderr, "pgstore: %s is set but unusable: %v\n", dsnEnv, setupErr)
		}
	}
	code := m.Run()
	if dsnIsSet && setupErr == nil {
		if err := dropTestDB(); err != nil {
			fmt.Fprintf(os.Stderr, "pgstore: dropping %s: %v\n", testDB, err)
			code = max(code, 1)
		}
	}
	os.Exit(code)
}

// createTestDB creates and migrates a database of its own for this run.
func createTestDB() error {
	return withAdmin(func(ctx context.Context, conn *pgx.Conn) error {
		return createDB(ctx, conn)
	})
}

func createDB(ctx context.Context, conn *pgx.Conn) error {
	var b [6]byte
	_, _ = rand.Read(b[:])
	testDB = "pgstore_test_" + hex.EncodeToString(b[:])
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+testDB); err != nil {
		return err
	}
	u, err := url.Parse(adminDSN)
	if err != nil {
		return err
	}
	u.Path = "/" + testDB
	testDSN = u.String()
	pool, err := pgxpool.New(ctx, testDSN)
	if err != nil {
		return err
	}
	defer pool.Close()
	return Migrate(ctx, pool)
}

func dropTestDB() error {
	return withAdmin(func(ctx context.Context, conn *pgx.Conn) error {
		_, err := conn.Exec(ctx, "DROP DATABASE IF EXISTS "+testDB+" WITH (FORCE)")
		return err
	})
}

// withAdmin runs fn on a connection to the server's admin database.
func withAdmin(fn func(ctx context.Context, conn *pgx.Conn) error) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, adminDSN)
	if err != nil {
		return err
	}
	defer func() { _ = conn.Close(ctx) }()
	return fn(ctx, conn)
}

// needDB skips t when no server is configured and fails it when the
// configured one is unusable: under .ci/run a database test never skips.
func needDB(t testing.TB) {
	t.Helper()
	if !dsnIsSet {
		t.Skipf("SKIPPED: %s is not set; run .ci/postgres start and export its DSN", dsnEnv)
	}
	if setupErr != nil {
		t.Fatalf("%s is set but the test database could not be prepared: %v", dsnEnv, setupErr)
	}
}

// poolOpts configures a test pool.
type poolOpts struct {
	iso        pgx.TxIsoLevel // session default isolation; "" is the server's
	addr       string         // host:port to connect through (a proxy); "" is direct
	searchPath string         // schema to use; "" is public
	maxConns   int32
	tracer     pgx.QueryTracer
}

// newPool opens a pool on the test database, closed when t ends.
func newPool(t testing.TB, o poolOpts) *pgxpool.Pool {
	t.Helper()
	needDB(t)
	pool, err := openPool(t.Context(), o)
	require.NoError(t, err)
	t.Cleanup(pool.Close)
	return pool
}

func openPool(ctx context.Context, o poolOpts) (*pgxpool.Pool, error) {
	cfg, err := pgxpool.ParseConfig(testDSN)
	if err != nil {
		return nil, err
	}
	if o.iso != "" {
		cfg.ConnConfig.RuntimeParams["default_transaction_isolation"] = string(o.iso)
	}
	if o.searchPath != "" {
		cfg.ConnConfig.RuntimeParams["search_path"] = o.searchPath
	}
	if o.addr != "" {
		host, port, err := splitHostPort(o.addr)
		if err != nil {
			return nil, err
		}
		cfg.ConnConfig.Host, cfg.ConnConfig.Port = host, port
		cfg.ConnConfig.Fallbacks = nil
	}
	if o.maxConns > 0 {
		cfg.MaxConns = o.maxConns
	}
	if o.tracer != nil {
		cfg.ConnConfig.Tracer = o.tracer
	}
	// No liveness ping on acquire: tests count statements and the proxy
	// cuts writes only; a dead connection shows up as the next
	// statement's error, which the store classifies.
	cfg.ShouldPing = func(context.Context, pgxpool.ShouldPingParams) bool { return false }
	return pgxpool.NewWithConfig(ctx, cfg)
}

// isolations are the two levels every fence is proven under.
var isolations = []pgx.TxIsoLevel{pgx.ReadCommitted, pgx.Serializable}

func isoName(iso pgx.TxIsoLevel) string {
	if iso == pgx.Serializable {
		return "serializable"
	}
	return "read-committed"
}
