package conversation

import (
	"bytes"
	"context"
	"slices"
	"sync"

	"github.com/Papercusp/chat-protocol-go/refusal"
)

// MemoryStore is a [Store] in one process's memory, the lightweight
// profile (docs/contract.md sections 11.7 and 20.1): every promise of
// [Store] holds within the process, nothing survives it, and the turn ids
// it allocates ([NewID]) never repeat one of an earlier process. It keeps
// every conversation until the process ends. Make one with
// [NewMemoryStore]; it is safe for concurrent use.
type MemoryStore struct {
	mu    sync.Mutex
	convs map[string]*memoryConversation
}

// memoryConversation is one stored conversation: its record, its turns in
// order, each turn's index by id, and by the request key of its start.
type memoryConversation struct {
	rec   Conversation
	turns []Turn
	index map[string]int
	keys  map[string]int
}

var _ Store = (*MemoryStore)(nil)

// NewMemoryStore returns an empty [MemoryStore].
func NewMemoryStore() *MemoryStore {
	return &MemoryStore{convs: map[string]*memoryConversation{}}
}

// errNotFound is the refusal for an unknown conversation.
func errNotFound() error {
	return refusal.New(refusal.CodeConversationNotFound, "", "conversation: no such conversation")
}

// Create implements [Store].
func (s *MemoryStore) Create(_ context.Context, id string, owner Principal) (Conversation, error) {
	if id == "" {
		id = NewID()
	}
	if err := CheckConversation(id); err != nil {
		return Conversation{}, err
	}
	if err := CheckOwner(owner); err != nil {
		return Conversation{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.convs[id] != nil {
		return Conversation{}, refusal.New(refusal.CodeConversationExists, "", "conversation: the id is taken")
	}
	c := &memoryConversation{rec: Conversation{ID: id, Owner: owner}, index: map[string]int{}, keys: map[string]int{}}
	s.convs[id] = c
	return c.rec, nil
}

// find returns the conversation of id; s.mu is held.
func (s *MemoryStore) find(id string) (*memoryConversation, error) {
	if err := CheckConversation(id); err != nil {
		return nil, err
	}
	c := s.convs[id]
	if c == nil {
		return nil, errNotFound()
	}
	return c, nil
}

// Get implements [Store].
func (s *MemoryStore) Get(_ context.Context, id string) (Conversation, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, err := s.find(id)
	if err != nil {
		return Conversation{}, err
	}
	return c.rec, nil
}

// StartTurn implements [Store].
func (s *MemoryStore) StartTurn(_ context.Context, id string, start TurnStart) (Turn, bool, error) {
	if err := CheckTurnStart(start); err != nil {
		return Turn{}, false, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	c, err := s.find(id)
	if err != nil {
		return Turn{}, false, err
	}
	if i, ok := c.keys[start.Key]; ok && start.Key != "" {
		t := c.turns[i]
		t.State = bytes.Clone(t.State)
		return t, false, nil
	}
	if c.rec.Running != "" {
		return Turn{}, false, errRunning()
	}
	t := Turn{ID: NewID(), Position: len(c.turns) + 1, UserText: start.UserText, Key: start.Key}
	c.index[t.ID] = len(c.turns)
	if t.Key != "" {
		c.keys[t.Key] = len(c.turns)
	}
	c.turns = append(c.turns, t)
	c.rec.Turns, c.rec.Running = len(c.turns), t.ID
	return t, true, nil
}

// errRunning is the refusal of a second running turn.
func errRunning() error {
	return refusal.New(refusal.CodeTurnRunning, "", "conversation: a turn of the conversation is running")
}

// EndTurn implements [Store].
func (s *MemoryStore) EndTurn(_ context.Context, id, turnID string, state []byte) error {
	if err := CheckTurn(id, turnID); err != nil {
		return err
	}
	if state == nil {
		return refusal.New(refusal.CodeInvalidInput, "", "conversation: an ended turn has a state")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	c, err := s.find(id)
	if err != nil {
		return err
	}
	i, ok := c.index[turnID]
	switch {
	case !ok:
		return errNotRunning()
	case c.turns[i].Ended():
		if bytes.Equal(c.turns[i].State, state) {
			return nil
		}
		return errNotRunning()
	}
	c.turns[i].State = bytes.Clone(state)
	if c.rec.Running == turnID {
		c.rec.Running = ""
	}
	return nil
}

// errNotRunning is the refusal to end a turn that is not running.
func errNotRunning() error {
	return refusal.New(refusal.CodeTurnNotRunning, "", "conversation: the turn is not running")
}

// Running implements [Store].
func (s *MemoryStore) Running(_ context.Context, id string) (Turn, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, err := s.find(id)
	if err != nil || c.rec.Running == "" {
		return Turn{}, false, err
	}
	return c.turns[c.index[c.rec.Running]], true, nil
}

// Turn implements [Store].
func (s *MemoryStore) Turn(_ context.Context, id, turnID string) (Conversation, Turn, error) {
	if err := CheckTurn(id, turnID); err != nil {
		return Conversation{}, Turn{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	c, err := s.find(id)
	if err != nil {
		return Conversation{}, Turn{}, err
	}
	i, ok := c.index[turnID]
	if !ok {
		return c.rec, Turn{}, refusal.New(refusal.CodeTurnNotFound, "", "conversation: no such turn")
	}
	t := c.turns[i]
	t.State = bytes.Clone(t.State)
	return c.rec, t, nil
}

// History implements [Store].
func (s *MemoryStore) History(_ context.Context, id string) (History, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, err := s.find(id)
	if err != nil {
		return History{}, err
	}
	turns := slices.Clone(c.turns)
	for i := range turns {
		turns[i].State = bytes.Clone(turns[i].State)
	}
	return History{Conversation: c.rec, Turns: turns}, nil
}
