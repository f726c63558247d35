package pgstore

import (
	"bytes"
	"context"
	"errors"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/Papercusp/chat-protocol-go/conversation"
	"github.com/Papercusp/chat-protocol-go/refusal"
)

// ConversationStore is the [conversation.Store] of a host over PostgreSQL
// (docs/contract.md section 20.1): conversations in pgstore_conversations,
// their turns in pgstore_conversation_turns, each with its start's request
// key, unique per conversation (see Migrate). Each write is one autocommit
// statement; a start takes the conversation's row lock, so of concurrent
// starts exactly one finds no running turn; History is one statement, so
// one snapshot and one round trip.
//
// All its methods are safe for concurrent use, by any number of goroutines
// and processes sharing the database, on the primary only. It keeps no
// state besides its pool and settings.
type ConversationStore struct {
	pool *pgxpool.Pool
	set  settings
}

var _ conversation.Store = (*ConversationStore)(nil)

// NewConversationStore returns a [ConversationStore] over pool, whose
// database must have been migrated (Migrate). opts may be nil; its
// Retries apply. It returns an error for a nil pool or invalid options.
func NewConversationStore(pool *pgxpool.Pool, opts *Options) (*ConversationStore, error) {
	if pool == nil {
		return nil, errors.New("pgstore: nil pool")
	}
	set, err := newSettings(opts)
	if err != nil {
		return nil, err
	}
	return &ConversationStore{pool: pool, set: set}, nil
}

// write runs one autocommit write statement, retrying serialization
// failures; an error before it was sent is checkpoint-write-failed.
func (s *ConversationStore) write(ctx context.Context, what string, run func(conn *pgx.Conn) error) error {
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return writeFailed("no connection", err)
	}
	defer conn.Release()
	err = s.set.retry(ctx, func() error {
		if err := sendable(ctx, conn.Conn()); err != nil {
			return err
		}
		return run(conn.Conn())
	})
	return commitOutcome(what, err)
}

// read runs one read statement, retrying serialization failures; a
// failure is store-unavailable.
func (s *ConversationStore) read(ctx context.Context, run func() error) error {
	err := s.set.retry(ctx, run)
	if err != nil && refusal.CodeOf(err) == "" {
		return refusal.Wrap(refusal.CodeStoreUnavailable, "", "pgstore: conversation read failed", err)
	}
	return err
}

const sqlCreateConversation = `
INSERT INTO pgstore_conversations (conversation_id, principal, tenant) VALUES ($1, $2, $3)
ON CONFLICT DO NOTHING RETURNING 1`

// Create implements [conversation.Store].
func (s *ConversationStore) Create(ctx context.Context, id string, owner conversation.Principal) (conversation.Conversation, error) {
	if id == "" {
		id = conversation.NewID()
	}
	if err := conversation.CheckConversation(id); err != nil {
		return conversation.Conversation{}, err
	}
	if err := conversation.CheckOwner(owner); err != nil {
		return conversation.Conversation{}, err
	}
	created := false
	err := s.write(ctx, "conversation create", func(conn *pgx.Conn) error {
		var one int
		err := conn.QueryRow(ctx, sqlCreateConversation, id, owner.ID, owner.Tenant).Scan(&one)
		created = err == nil
		if errors.Is(err, pgx.ErrNoRows) {
			return nil
		}
		return err
	})
	if err != nil {
		return conversation.Conversation{}, err
	}
	if !created {
		return conversation.Conversation{}, refused(refusal.CodeConversationExists, "the conversation id is taken")
	}
	return conversation.Conversation{ID: id, Owner: owner}, nil
}

const sqlGetConversation = `
SELECT principal, tenant, turns, coalesce(running_turn, '') FROM pgstore_conversations WHERE conversation_id = $1`

// Get implements [conversation.Store].
func (s *ConversationStore) Get(ctx context.Context, id string) (conversation.Conversation, error) {
	if err := conversation.CheckConversation(id); err != nil {
		return conversation.Conversation{}, err
	}
	c := conversation.Conversation{ID: id}
	err := s.read(ctx, func() error {
		err := s.pool.QueryRow(ctx, sqlGetConversation, id).Scan(&c.Owner.ID, &c.Owner.Tenant, &c.Turns, &c.Running)
		if errors.Is(err, pgx.ErrNoRows) {
			return errNoConversation()
		}
		return err
	})
	return c, err
}

// errNoConversation is the refusal for an unknown conversation.
func errNoConversation() error {
	return refused(refusal.CodeConversationNotFound, "no such conversation")
}

// sqlConversationStartTurn reads the turn of the start's request key
// ($4, "" for none), or else moves the conversation from no running turn
// to the new one and inserts the turn with its key, in one statement; its
// second column tells a refusal apart: no conversation (false), or a
// running turn.
const sqlConversationStartTurn = `
WITH seen AS (
	SELECT turn_id, position, user_text, state FROM pgstore_conversation_turns
	WHERE conversation_id = $1 AND request_key = NULLIF($4, '')
), c AS (
	UPDATE pgstore_conversations SET turns = turns + 1, running_turn = $2
	WHERE conversation_id = $1 AND running_turn IS NULL AND NOT EXISTS (SELECT 1 FROM seen)
	RETURNING turns
), t AS (
	INSERT INTO pgstore_conversation_turns (conversation_id, position, turn_id, user_text, request_key)
	SELECT $1, turns, $2, $3, NULLIF($4, '') FROM c
	RETURNING position
)
SELECT (SELECT position FROM t), EXISTS (SELECT 1 FROM pgstore_conversations WHERE conversation_id = $1),
	seen.turn_id, seen.position, seen.user_text, seen.state
FROM (SELECT 1) AS one LEFT JOIN seen ON true`

// sqlConversationKeyTurn reads the turn of a request key.
const sqlConversationKeyTurn = `
SELECT turn_id, position, user_text, state FROM pgstore_conversation_turns
WHERE conversation_id = $1 AND request_key = $2`

// constraintRequestKey is the unique index of a conversation's request
// keys (migration 8), which a unique_violation names.
const constraintRequestKey = "pgstore_conversation_turns_request_key"

// StartTurn implements [conversation.Store]: one statement, which returns
// the turn of start's key when the conversation has one, and otherwise
// waits for the row lock of a concurrent start and then finds its running
// turn (Read Committed re-evaluates the condition; Serializable rolls back
// with 40001, retried, and then finds it). A keyed start that finds a
// running turn, or that collides with a concurrent start of its key (the
// key's unique constraint), reads the key's turn again in a statement of
// its own, whose snapshot sees that start committed.
func (s *ConversationStore) StartTurn(ctx context.Context, id string, start conversation.TurnStart) (conversation.Turn, bool, error) {
	if err := conversation.CheckConversation(id); err != nil {
		return conversation.Turn{}, false, err
	}
	if err := conversation.CheckTurnStart(start); err != nil {
		return conversation.Turn{}, false, err
	}
	t := conversation.Turn{ID: conversation.NewID(), UserText: start.UserText, Key: start.Key}
	var (
		position, seenPosition *int32
		exists, collided       bool
		seenID, seenText       *string
		seenState              []byte
	)
	err := s.write(ctx, "turn start", func(conn *pgx.Conn) error {
		err := conn.QueryRow(ctx, sqlConversationStartTurn, id, t.ID, start.UserText, start.Key).
			Scan(&position, &exists, &seenID, &seenPosition, &seenText, &seenState)
		if pe := pgError(err); uniqueViolation(err) && pe.ConstraintName == constraintRequestKey {
			collided, exists = true, true
			return nil
		}
		return err
	})
	switch {
	case err != nil:
		return conversation.Turn{}, false, err
	case position != nil:
		t.Position = int(*position)
		return t, true, nil
	case seenID != nil:
		return conversation.Turn{ID: *seenID, Position: int(*seenPosition), UserText: *seenText, Key: start.Key, State: seenState}, false, nil
	case !exists:
		return conversation.Turn{}, false, errNoConversation()
	case start.Key != "":
		seen, ok, err := s.keyTurn(ctx, id, start.Key)
		if err != nil || ok {
			return seen, false, err
		}
		if collided {
			return conversation.Turn{}, false, refused(refusal.CodeStoreUnavailable, "the turn of the start's key could not be read")
		}
	}
	return conversation.Turn{}, false, refused(refusal.CodeTurnRunning, "a turn of the conversation is running")
}

// keyTurn reads the turn of conversation id started with key; ok is false
// when there is none.
func (s *ConversationStore) keyTurn(ctx context.Context, id, key string) (t conversation.Turn, ok bool, err error) {
	t.Key = key
	err = s.read(ctx, func() error {
		var position int32
		err := s.pool.QueryRow(ctx, sqlConversationKeyTurn, id, key).Scan(&t.ID, &position, &t.UserText, &t.State)
		t.Position, ok = int(position), err == nil
		if errors.Is(err, pgx.ErrNoRows) {
			return nil
		}
		return err
	})
	if err != nil || !ok {
		return conversation.Turn{}, false, err
	}
	return t, true, nil
}

// sqlConversationEndTurn stores the state of a turn without one and clears the running
// turn when it is this one; it returns the stored state, NULL for an
// unknown turn.
const sqlConversationEndTurn = `
WITH t AS (
	UPDATE pgstore_conversation_turns SET state = $3
	WHERE conversation_id = $1 AND turn_id = $2 AND state IS NULL
	RETURNING state
), c AS (
	UPDATE pgstore_conversations SET running_turn = NULL
	WHERE conversation_id = $1 AND running_turn = $2 AND EXISTS (SELECT 1 FROM t)
	RETURNING 1
)
SELECT coalesce((SELECT state FROM t),
	(SELECT state FROM pgstore_conversation_turns WHERE conversation_id = $1 AND turn_id = $2)),
	EXISTS (SELECT 1 FROM pgstore_conversations WHERE conversation_id = $1)`

// EndTurn implements [conversation.Store]: one statement.
func (s *ConversationStore) EndTurn(ctx context.Context, id, turnID string, state []byte) error {
	if err := conversation.CheckTurn(id, turnID); err != nil {
		return err
	}
	if state == nil {
		return refused(refusal.CodeInvalidInput, "an ended turn has a state")
	}
	var (
		stored []byte
		exists bool
	)
	err := s.write(ctx, "turn end", func(conn *pgx.Conn) error {
		return conn.QueryRow(ctx, sqlConversationEndTurn, id, turnID, state).Scan(&stored, &exists)
	})
	switch {
	case err != nil:
		return err
	case !exists:
		return errNoConversation()
	case stored == nil || !bytes.Equal(stored, state):
		return refused(refusal.CodeTurnNotRunning, "the turn is not running")
	}
	return nil
}

const sqlConversationRunning = `
SELECT t.turn_id, t.position, t.user_text, coalesce(t.request_key, '')
FROM pgstore_conversations c
LEFT JOIN pgstore_conversation_turns t ON t.conversation_id = c.conversation_id AND t.turn_id = c.running_turn
WHERE c.conversation_id = $1`

// Running implements [conversation.Store]: one statement.
func (s *ConversationStore) Running(ctx context.Context, id string) (conversation.Turn, bool, error) {
	if err := conversation.CheckConversation(id); err != nil {
		return conversation.Turn{}, false, err
	}
	var (
		turnID, text, key *string
		position          *int32
	)
	err := s.read(ctx, func() error {
		err := s.pool.QueryRow(ctx, sqlConversationRunning, id).Scan(&turnID, &position, &text, &key)
		if errors.Is(err, pgx.ErrNoRows) {
			return errNoConversation()
		}
		return err
	})
	if err != nil || turnID == nil {
		return conversation.Turn{}, false, err
	}
	return conversation.Turn{ID: *turnID, Position: int(*position), UserText: *text, Key: *key}, true, nil
}

const sqlConversationTurn = `
SELECT c.principal, c.tenant, c.turns, coalesce(c.running_turn, ''), t.position, t.user_text, t.state, coalesce(t.request_key, '')
FROM pgstore_conversations c
LEFT JOIN pgstore_conversation_turns t ON t.conversation_id = c.conversation_id AND t.turn_id = $2
WHERE c.conversation_id = $1`

// Turn implements [conversation.Store]: one statement.
func (s *ConversationStore) Turn(ctx context.Context, id, turnID string) (conversation.Conversation, conversation.Turn, error) {
	if err := conversation.CheckTurn(id, turnID); err != nil {
		return conversation.Conversation{}, conversation.Turn{}, err
	}
	c := conversation.Conversation{ID: id}
	t := conversation.Turn{ID: turnID}
	var (
		position *int32
		text     *string
	)
	err := s.read(ctx, func() error {
		err := s.pool.QueryRow(ctx, sqlConversationTurn, id, turnID).Scan(&c.Owner.ID, &c.Owner.Tenant, &c.Turns, &c.Running, &position, &text, &t.State, &t.Key)
		if errors.Is(err, pgx.ErrNoRows) {
			return errNoConversation()
		}
		return err
	})
	switch {
	case err != nil:
		return conversation.Conversation{}, conversation.Turn{}, err
	case position == nil:
		return c, conversation.Turn{}, refused(refusal.CodeTurnNotFound, "no such turn")
	}
	t.Position, t.UserText = int(*position), *text
	return c, t, nil
}

const sqlConversationHistory = `
SELECT c.principal, c.tenant, c.turns, coalesce(c.running_turn, ''), t.position, t.turn_id, t.user_text, t.state, t.request_key
FROM pgstore_conversations c
LEFT JOIN pgstore_conversation_turns t ON t.conversation_id = c.conversation_id
WHERE c.conversation_id = $1
ORDER BY t.position`

// History implements [conversation.Store]: one statement, one round trip.
func (s *ConversationStore) History(ctx context.Context, id string) (conversation.History, error) {
	if err := conversation.CheckConversation(id); err != nil {
		return conversation.History{}, err
	}
	var h conversation.History
	err := s.read(ctx, func() error {
		h = conversation.History{Conversation: conversation.Conversation{ID: id}}
		rows, err := s.pool.Query(ctx, sqlConversationHistory, id)
		if err != nil {
			return err
		}
		defer rows.Close()
		c := &h.Conversation
		found := false
		for rows.Next() {
			var (
				position          *int32
				turnID, text, key *string
				state             []byte
			)
			if err := rows.Scan(&c.Owner.ID, &c.Owner.Tenant, &c.Turns, &c.Running, &position, &turnID, &text, &state, &key); err != nil {
				return err
			}
			found = true
			if position != nil {
				t := conversation.Turn{ID: *turnID, Position: int(*position), UserText: *text, State: state}
				if key != nil {
					t.Key = *key
				}
				h.Turns = append(h.Turns, t)
			}
		}
		if err := rows.Err(); err != nil {
			return err
		}
		if !found {
			return errNoConversation()
		}
		return nil
	})
	return h, err
}
