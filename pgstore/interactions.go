package pgstore

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/Papercusp/chat-protocol-go/cards"
	"github.com/Papercusp/chat-protocol-go/interactions"
)

// AuthorityFunc reads a caller's current authority from the host's own
// authorization tables, inside the store's transaction tx, so that current
// authority is fenced together with the card (docs/contract.md sections
// 13.2 and 13.6). conversation is the key's conversation. It must lock the
// rows it relies on against change for the rest of tx (SELECT ... FOR
// SHARE), at every isolation level, so that a concurrent revocation waits
// for the answer's commit. It returns the zero [interactions.Authority] for
// an unknown caller, and an error only when the read failed; it must not
// commit, roll back or retain tx.
type AuthorityFunc func(ctx context.Context, tx pgx.Tx, caller interactions.Caller, conversation string) (interactions.Authority, error)

// InteractionStore is the [interactions.Store] of a host over PostgreSQL
// (package interactions; docs/contract.md section 13.2): card records in
// pgstore_cards, workflow transitions in the outbox pgstore_card_transitions
// (see [Migrate]), and the caller's authority read by the host's
// [AuthorityFunc] in the same transaction (docs/contract.md section 13.6).
//
// Its methods are safe for concurrent use, by any number of goroutines and
// processes sharing the database, on the primary only.
type InteractionStore struct {
	pool      *pgxpool.Pool
	authority AuthorityFunc
	set       settings
}

var _ interactions.Store = (*InteractionStore)(nil)

// NewInteractionStore returns an [InteractionStore] over pool, whose database
// must have been migrated (Migrate), reading authority with authority. opts
// may be nil. It returns an error for a nil pool or authority, or invalid
// options.
func NewInteractionStore(pool *pgxpool.Pool, authority AuthorityFunc, opts *Options) (*InteractionStore, error) {
	if pool == nil || authority == nil {
		return nil, errors.New("pgstore: NewInteractionStore needs a pool and an AuthorityFunc")
	}
	set, err := newSettings(opts)
	if err != nil {
		return nil, err
	}
	return &InteractionStore{pool: pool, authority: authority, set: set}, nil
}

const cardColumns = `version, revision, status, scope_conversation, scope_principal, scope_tenant,
	scope_customer, scope_public_owner, spec, schema_id, schema_revision, created_at, expires_at, closed_at,
	answer_submission_id, answer_action, answer_value, answer_digest, reason, superseded_by`

const sqlSelectCard = `SELECT ` + cardColumns + ` FROM pgstore_cards WHERE conversation_id = $1 AND correlation_id = $2`

// readCard reads the card under key in tx; lock adds FOR UPDATE. It returns
// nil for a missing card.
func readCard(ctx context.Context, tx pgx.Tx, key interactions.Key, lock bool) (*interactions.Record, error) {
	q := sqlSelectCard
	if lock {
		q += " FOR UPDATE"
	}
	var (
		rec                       = interactions.Record{Key: key}
		spec                      []byte
		subID, action, digest     *string
		value                     []byte
		status                    string
		scopeConv, p, t, c, owner string
	)
	err := tx.QueryRow(ctx, q, key.Conversation, key.CorrelationID).Scan(
		&rec.Version, &rec.Revision, &status, &scopeConv, &p, &t, &c, &owner, &spec,
		&rec.Schema.ID, &rec.Schema.Revision, &rec.CreatedAt, &rec.ExpiresAt, &rec.ClosedAt,
		&subID, &action, &value, &digest, &rec.Reason, &rec.SupersededBy)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	rec.Status = interactions.Status(status)
	rec.Scope = interactions.Scope{Conversation: scopeConv, Caller: interactions.Caller{Principal: p, Tenant: t, Customer: c, PublicOwner: owner}}
	if err := json.Unmarshal(spec, &rec.Spec); err != nil {
		return nil, err
	}
	if subID != nil {
		rec.Answer = &interactions.Answer{SubmissionID: *subID, Value: value}
		if action != nil {
			rec.Answer.Action = cards.CardAction(*action)
		}
		if digest != nil {
			rec.Answer.Digest = *digest
		}
	}
	return &rec, nil
}

// current reads the card and the caller's authority in tx.
func (s *InteractionStore) current(ctx context.Context, tx pgx.Tx, key interactions.Key, caller *interactions.Caller, lock bool) (interactions.Current, error) {
	rec, err := readCard(ctx, tx, key, lock)
	if err != nil {
		return interactions.Current{}, err
	}
	cur := interactions.Current{Record: rec}
	if caller != nil {
		if cur.Authority, err = s.authority(ctx, tx, *caller, key.Conversation); err != nil {
			return interactions.Current{}, err
		}
	}
	return cur, nil
}

// Read implements [interactions.Store]: in one short transaction at the
// store's isolation level, a plain SELECT of the card (no lock for update)
// and the caller's authority through the [AuthorityFunc]; it writes nothing
// and rolls back. A missing card is a nil Record.
func (s *InteractionStore) Read(ctx context.Context, key interactions.Key, caller *interactions.Caller) (interactions.Current, error) {
	var cur interactions.Current
	err := s.set.retry(ctx, func() error {
		tx, err := s.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: s.set.isolation})
		if err != nil {
			return err
		}
		defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()
		cur, err = s.current(ctx, tx, key, caller, false)
		return err
	})
	return cur, err
}

// Transact implements [interactions.Store]. In one transaction at the
// store's isolation level it locks the card row (SELECT ... FOR UPDATE),
// reads the caller's authority through the [AuthorityFunc] (which locks the
// authorization rows FOR SHARE), invokes fn exactly once, checks the change
// and writes it: an INSERT for a new card (revision 1) or an UPDATE ...
// WHERE revision = stored, plus the transition into the outbox and, for a
// close, a NOTIFY on [CardChannel], then COMMIT.
//
// A serialization failure or deadlock before fn ran retries the
// transaction; after fn ran, nothing is retried. Errors: fn's error,
// wrapped ([errors.Is] holds), with nothing written; code
// checkpoint-write-failed when nothing was committed (the transaction
// failed before or at COMMIT, a racing insert of the same new card won, or
// the change is invalid: another key, a revision that is not the stored
// one plus one, a transition without a terminal record or the reverse); and
// code needs-reconciliation when the COMMIT's acknowledgement was lost.
func (s *InteractionStore) Transact(ctx context.Context, key interactions.Key, caller *interactions.Caller, fn interactions.TxFunc) error {
	var (
		tx  pgx.Tx
		cur interactions.Current
	)
	// Begin, lock and read; retried until fn runs.
	err := s.set.retry(ctx, func() error {
		var err error
		if tx, err = s.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: s.set.isolation}); err != nil {
			return err
		}
		if cur, err = s.current(ctx, tx, key, caller, true); err != nil {
			_ = tx.Rollback(context.WithoutCancel(ctx))
		}
		return err
	})
	if err != nil {
		return writeFailed("reading the card", err)
	}
	rollback := func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }
	defer rollback()       // also if fn panics; after COMMIT it does nothing
	change, err := fn(cur) // exactly once: nothing below runs it again
	if err != nil {
		rollback()
		return err
	}
	if err := change.Check(key, cur.Record); err != nil {
		rollback()
		return err
	}
	if change.Next == nil {
		rollback()
		return nil
	}
	if err := writeCard(ctx, tx, cur.Record, change); err != nil {
		rollback()
		if uniqueViolation(err) {
			return writeFailed("a card was stored under this key meanwhile", err)
		}
		return writeFailed("writing the card", err)
	}
	if err := sendable(ctx, tx.Conn()); err != nil {
		rollback()
		return err
	}
	return commitOutcome("card write", tx.Commit(ctx))
}

const sqlInsertCard = `INSERT INTO pgstore_cards (conversation_id, correlation_id, ` + cardColumns + `)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22)`

const sqlUpdateCard = `UPDATE pgstore_cards SET (` + cardColumns + `) =
	($3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22)
WHERE conversation_id = $1 AND correlation_id = $2 AND revision = $23`

const sqlInsertTransition = `INSERT INTO pgstore_card_transitions
	(conversation_id, correlation_id, revision, status, at, transition) VALUES ($1, $2, $3, $4, $5, $6)`

// writeCard writes the checked change in tx: the record, by INSERT or by
// UPDATE guarded by the stored revision, and its transition, in one round
// trip.
func writeCard(ctx context.Context, tx pgx.Tx, cur *interactions.Record, ch interactions.Change) error {
	next := ch.Next
	spec, err := json.Marshal(next.Spec)
	if err != nil {
		return err
	}
	args := []any{next.Key.Conversation, next.Key.CorrelationID, next.Version, next.Revision, string(next.Status),
		next.Scope.Conversation, next.Scope.Principal, next.Scope.Tenant, next.Scope.Customer, next.Scope.PublicOwner,
		spec, next.Schema.ID, next.Schema.Revision, next.CreatedAt, next.ExpiresAt, next.ClosedAt}
	if a := next.Answer; a != nil {
		var value []byte
		if len(a.Value) > 0 {
			value = a.Value
		}
		args = append(args, a.SubmissionID, string(a.Action), value, a.Digest)
	} else {
		args = append(args, nil, nil, nil, nil)
	}
	args = append(args, next.Reason, next.SupersededBy)
	var b pgx.Batch
	if cur == nil {
		b.Queue(sqlInsertCard, args...)
	} else {
		b.Queue(sqlUpdateCard, append(args, cur.Revision)...)
	}
	if tr := ch.Transition; tr != nil {
		doc, err := json.Marshal(tr)
		if err != nil {
			return err
		}
		b.Queue(sqlInsertTransition, tr.Key.Conversation, tr.Key.CorrelationID, tr.Revision, string(tr.Status), tr.At, doc)
		b.Queue(sqlNotifyCard, cardPayload(next.Key)) // delivered at the commit (CardChannel)
	}
	res := tx.SendBatch(ctx, &b)
	tag, err := res.Exec()
	if err == nil && tag.RowsAffected() != 1 {
		err = errors.New("pgstore: the card's revision moved under the row lock")
	}
	for i := 1; err == nil && i < b.Len(); i++ {
		_, err = res.Exec()
	}
	if cerr := res.Close(); err == nil {
		err = cerr
	}
	return err
}
