package conversation

import "context"

// Store keeps conversations (docs/contract.md section 20.1). Every method
// takes ctx first, refuses ids it cannot hold with invalid-input before it
// reads or writes, and is safe for concurrent use, from many goroutines and,
// for a shared store, many processes. A write reports a failure it knows
// left nothing written as checkpoint-write-failed and one whose
// acknowledgement was lost as needs-reconciliation, never as success.
// Package conversationtest checks an implementation.
type Store interface {
	// Create stores a new conversation owned by owner, under id, or under
	// a fresh [NewID] when id is "", and returns its record. An id already
	// stored is conversation-exists.
	Create(ctx context.Context, id string, owner Principal) (Conversation, error)
	// Get returns the conversation's record, its running turn included;
	// an unknown id is conversation-not-found.
	Get(ctx context.Context, id string) (Conversation, error)
	// StartTurn allocates a turn id ([NewID]: unique, never reused),
	// appends the turn with start's user's text and key and records it as
	// the running turn, atomically, so that a resume or a stop on any
	// instance finds it; started is true. A start whose Key names a turn
	// of the conversation started with that Key returns that turn,
	// running or ended, with started false, and writes nothing; of
	// concurrent starts with one Key exactly one starts and the others
	// get its turn. Otherwise a conversation that has a running turn is
	// refused turn-running and nothing is written; of concurrent starts
	// exactly one wins.
	StartTurn(ctx context.Context, id string, start TurnStart) (turn Turn, started bool, err error)
	// EndTurn stores the turn's reduced state (the JSON form the root
	// package's TurnState writes, kept byte for byte) and
	// clears the running turn. Ending a turn whose state is stored with the
	// same bytes is nil (a retry after a lost acknowledgement); an unknown
	// turn, or one ended with other bytes, is turn-not-running. state must
	// not be nil.
	EndTurn(ctx context.Context, id, turnID string, state []byte) error
	// Running returns the conversation's running turn; ok is false when it
	// has none. An unknown id is conversation-not-found.
	Running(ctx context.Context, id string) (turn Turn, ok bool, err error)
	// Turn returns the conversation's record and one of its turns, read
	// together; an unknown conversation is conversation-not-found, an
	// unknown turn of it turn-not-found.
	Turn(ctx context.Context, id, turnID string) (Conversation, Turn, error)
	// History returns the conversation and its turns in order, from one
	// snapshot (on PostgreSQL, one statement); an unknown id is
	// conversation-not-found.
	History(ctx context.Context, id string) (History, error)
}
