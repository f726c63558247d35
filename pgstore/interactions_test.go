package pgstore

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/Papercusp/chat-protocol-go/interactions"
	"github.com/Papercusp/chat-protocol-go/interactions/interactionstest"
)

// The host's own authorization tables, as a test host keeps them: a party
// per identity (principal, public owner) with its current tenant, customer
// and status, and its conversation memberships.
const hostSchema = `
CREATE TABLE host_parties (
	principal    text    NOT NULL,
	public_owner text    NOT NULL,
	tenant       text    NOT NULL,
	customer     text    NOT NULL,
	active       boolean NOT NULL,
	PRIMARY KEY (principal, public_owner)
);
CREATE TABLE host_members (
	principal    text NOT NULL,
	public_owner text NOT NULL,
	conversation text NOT NULL,
	PRIMARY KEY (principal, public_owner, conversation)
);`

// hostAuthority is the test host's AuthorityFunc: it reads the caller's
// party and membership FOR SHARE, so that a revocation waits for the
// transaction that relies on them.
func hostAuthority(ctx context.Context, tx pgx.Tx, c interactions.Caller, conversation string) (interactions.Authority, error) {
	var a interactions.Authority
	var tenant, customer string
	err := tx.QueryRow(ctx, `SELECT tenant, customer, active FROM host_parties
		WHERE principal = $1 AND public_owner = $2 FOR SHARE`, c.Principal, c.PublicOwner).Scan(&tenant, &customer, &a.Active)
	if err == pgx.ErrNoRows {
		return interactions.Authority{}, nil
	}
	if err != nil {
		return interactions.Authority{}, err
	}
	a.Scope.Caller = interactions.Caller{Principal: c.Principal, Tenant: tenant, Customer: customer, PublicOwner: c.PublicOwner}
	var member bool
	err = tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM host_members
		WHERE principal = $1 AND public_owner = $2 AND conversation = $3 FOR SHARE)`,
		c.Principal, c.PublicOwner, conversation).Scan(&member)
	if err != nil {
		return interactions.Authority{}, err
	}
	if member {
		a.Scope.Conversation = conversation
	}
	return a, nil
}

// hostGrant and hostRevoke write the test host's authorization tables.
func hostGrant(ctx context.Context, pool *pgxpool.Pool, c interactions.Caller, conversation string) error {
	_, err := pool.Exec(ctx, `
		WITH p AS (
			INSERT INTO host_parties (principal, public_owner, tenant, customer, active) VALUES ($1, $2, $3, $4, true)
			ON CONFLICT (principal, public_owner) DO UPDATE SET tenant = $3, customer = $4, active = true
		)
		INSERT INTO host_members (principal, public_owner, conversation) VALUES ($1, $2, $5) ON CONFLICT DO NOTHING`,
		c.Principal, c.PublicOwner, c.Tenant, c.Customer, conversation)
	return err
}

func hostRevoke(ctx context.Context, pool *pgxpool.Pool, c interactions.Caller, conversation string) error {
	_, err := pool.Exec(ctx, `DELETE FROM host_members WHERE principal = $1 AND public_owner = $2 AND conversation = $3`,
		c.Principal, c.PublicOwner, conversation)
	return err
}

// freshSchema creates an empty, migrated schema with the host's tables and
// returns its name; it is dropped when t ends.
func freshSchema(t testing.TB) string {
	t.Helper()
	needDB(t)
	c := &closers{}
	t.Cleanup(c.close)
	schema, err := createSchema(context.WithoutCancel(t.Context()), c)
	require.NoError(t, err)
	return schema
}

// cardFixture is a card database over a fresh schema at
// isolation iso; addr, when set, routes the workers through a proxy.
type cardFixture struct {
	t      testing.TB
	iso    pgx.TxIsoLevel
	schema string
	addr   string
	admin  *pgxpool.Pool
}

func newCardFixture(t testing.TB, iso pgx.TxIsoLevel, addr string) *cardFixture {
	schema := freshSchema(t)
	return &cardFixture{t: t, iso: iso, schema: schema, addr: addr, admin: newPool(t, poolOpts{searchPath: schema})}
}

// open returns a fresh worker's store: a pool of its own.
func (f *cardFixture) open() *InteractionStore {
	pool := newPool(f.t, poolOpts{iso: f.iso, searchPath: f.schema, addr: f.addr})
	st, err := NewInteractionStore(pool, hostAuthority, &Options{Isolation: f.iso})
	require.NoError(f.t, err)
	return st
}

func (f *cardFixture) transitions(key interactions.Key) []interactions.Transition {
	trs, err := readTransitions(context.WithoutCancel(f.t.Context()), f.admin, key)
	require.NoError(f.t, err)
	return trs
}

// TestInteractionStoreConformance runs interactionstest.TestStore against
// the real server at both isolation levels, each check on a fresh schema.
func TestInteractionStoreConformance(t *testing.T) {
	needDB(t)
	for _, iso := range isolations {
		t.Run(isoName(iso), func(t *testing.T) {
			interactionstest.TestStore(t, interactionstest.Config{NewSubject: cardSubject(iso)})
		})
	}
}
