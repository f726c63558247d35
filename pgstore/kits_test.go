package pgstore

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/Papercusp/chat-protocol-go/interactions"
	"github.com/Papercusp/chat-protocol-go/interactions/interactionstest"
	"github.com/Papercusp/chat-protocol-go/pgstore/internal/lossyproxy"
	"github.com/Papercusp/chat-protocol-go/recovery"
	"github.com/Papercusp/chat-protocol-go/recovery/recoverytest"
	"github.com/Papercusp/chat-protocol-go/replay/replaytest"
)

// closers is what one subject of a conformance kit holds on the test
// database (pools, a proxy, a schema), released in reverse order by close:
// a kit hands its constructor a context, not a *testing.T, and calls the
// subject's Close when its check ends. It is safe for concurrent use.
type closers struct {
	mu sync.Mutex
	fs []func()
}

func (c *closers) add(f func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.fs = append(c.fs, f)
}

func (c *closers) close() {
	c.mu.Lock()
	fs := c.fs
	c.fs = nil
	c.mu.Unlock()
	for i := len(fs) - 1; i >= 0; i-- {
		fs[i]()
	}
}

// pool opens a pool on the test database that close closes.
func (c *closers) pool(ctx context.Context, o poolOpts) (*pgxpool.Pool, error) {
	pool, err := openPool(ctx, o)
	if err != nil {
		return nil, err
	}
	c.add(pool.Close)
	return pool, nil
}

// windowSubject returns replaytest's constructor of windows with opts at
// session isolation iso, each on a pool of its own, as newTestWindow
// makes them: the periodic catch-up read is off unless opts sets it.
func windowSubject(iso pgx.TxIsoLevel, opts WindowOptions) func(ctx context.Context) (replaytest.Subject, error) {
	return func(ctx context.Context) (replaytest.Subject, error) {
		c := &closers{}
		pool, err := c.pool(ctx, poolOpts{iso: iso, maxConns: 8})
		if err != nil {
			return replaytest.Subject{}, err
		}
		o := opts
		if o.CatchUpInterval == 0 {
			o.CatchUpInterval = -1
		}
		w, err := NewWindow(pool, &o)
		if err != nil {
			c.close()
			return replaytest.Subject{}, err
		}
		c.add(w.Close)
		return replaytest.Subject{Window: w, Close: c.close}, nil
	}
}

// retainingSubject returns replaytest's constructor of windows that keep
// maxFrames frames per turn.
func retainingSubject(iso pgx.TxIsoLevel) func(ctx context.Context, maxFrames int) (replaytest.Subject, error) {
	return func(ctx context.Context, maxFrames int) (replaytest.Subject, error) {
		return windowSubject(iso, WindowOptions{MaxFrames: maxFrames})(ctx)
	}
}

// recoverySubject returns recoverytest's constructor of RecoveryStores at
// isolation iso: the store under test talks through a lossy proxy, which
// its failpoints cut after a commit; Reopen opens a direct pool.
func recoverySubject(iso pgx.TxIsoLevel) func(ctx context.Context) (recoverytest.Subject, error) {
	return func(ctx context.Context) (recoverytest.Subject, error) {
		c := &closers{}
		open := func(o poolOpts) (*RecoveryStore, error) {
			pool, err := c.pool(ctx, o)
			if err != nil {
				return nil, err
			}
			return NewRecoveryStore(pool, &Options{Isolation: o.iso})
		}
		cfg, err := pgx.ParseConfig(testDSN)
		if err != nil {
			return recoverytest.Subject{}, err
		}
		proxy, err := lossyproxy.Start(cfg.Host + ":" + itoa(int(cfg.Port)))
		if err != nil {
			return recoverytest.Subject{}, err
		}
		c.add(func() { _ = proxy.Close() })
		st, err := open(poolOpts{iso: iso, addr: proxy.Addr()})
		if err != nil {
			c.close()
			return recoverytest.Subject{}, err
		}
		a := &armer{proxy: proxy, armed: map[recoverytest.Site]recoverytest.Mode{}}
		st.faults = a.fault
		return recoverytest.Subject{
			Store:  st,
			Reopen: func() (recovery.Store, error) { return open(poolOpts{iso: iso}) },
			Arm:    a.arm,
			Close:  c.close,
		}, nil
	}
}

// createSchema creates an empty, migrated schema with the host's tables,
// which close drops, and returns its name.
func createSchema(ctx context.Context, c *closers) (string, error) {
	var b [5]byte
	_, _ = rand.Read(b[:])
	schema := "s_" + hex.EncodeToString(b[:])
	admin, err := c.pool(ctx, poolOpts{})
	if err != nil {
		return "", err
	}
	if _, err := admin.Exec(ctx, "CREATE SCHEMA "+schema); err != nil {
		return "", err
	}
	c.add(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_, _ = admin.Exec(ctx, "DROP SCHEMA "+schema+" CASCADE")
	})
	pool, err := c.pool(ctx, poolOpts{searchPath: schema})
	if err != nil {
		return "", err
	}
	if err := Migrate(ctx, pool); err != nil {
		return "", err
	}
	_, err = pool.Exec(ctx, hostSchema)
	return schema, err
}

// readTransitions returns the transitions stored for key, oldest first.
func readTransitions(ctx context.Context, pool *pgxpool.Pool, key interactions.Key) ([]interactions.Transition, error) {
	rows, err := pool.Query(ctx, `SELECT transition FROM pgstore_card_transitions
		WHERE conversation_id = $1 AND correlation_id = $2 ORDER BY id`, key.Conversation, key.CorrelationID)
	if err != nil {
		return nil, err
	}
	docs, err := pgx.CollectRows(rows, pgx.RowTo[[]byte])
	if err != nil {
		return nil, err
	}
	out := make([]interactions.Transition, len(docs))
	for i, d := range docs {
		if err := json.Unmarshal(d, &out[i]); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// cardSubject returns interactionstest's constructor of InteractionStores
// at isolation iso, each subject on a fresh schema, each worker on a pool
// of its own.
func cardSubject(iso pgx.TxIsoLevel) func(ctx context.Context) (interactionstest.Subject, error) {
	return func(ctx context.Context) (interactionstest.Subject, error) {
		c := &closers{}
		schema, err := createSchema(ctx, c)
		var admin *pgxpool.Pool
		if err == nil {
			admin, err = c.pool(ctx, poolOpts{searchPath: schema})
		}
		if err != nil {
			c.close()
			return interactionstest.Subject{}, err
		}
		return interactionstest.Subject{
			Open: func() (interactions.Store, error) {
				pool, err := c.pool(ctx, poolOpts{iso: iso, searchPath: schema})
				if err != nil {
					return nil, err
				}
				return NewInteractionStore(pool, hostAuthority, &Options{Isolation: iso})
			},
			Grant: func(ctx context.Context, cl interactions.Caller, conversation string) error {
				return hostGrant(ctx, admin, cl, conversation)
			},
			Revoke: func(ctx context.Context, cl interactions.Caller, conversation string) error {
				return hostRevoke(ctx, admin, cl, conversation)
			},
			Transitions: func(ctx context.Context, key interactions.Key) ([]interactions.Transition, error) {
				return readTransitions(ctx, admin, key)
			},
			Close: c.close,
		}, nil
	}
}
