package pgstore

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/Papercusp/chat-protocol-go/conversation"
)

// benchTurnState is a reduced turn of about 300 bytes.
func benchTurnState(i int) []byte {
	return fmt.Appendf(nil, `{"turnId":"t-%d","status":"completed","lastSeq":12,"text":%q,"toolCalls":[{"callId":"c1","name":"search","input":{"q":"x"},"status":"ok","output":[1,2,3]}],"results":[],"provenance":[]}`,
		i, strings.Repeat("an answer ", 15))
}

// BenchmarkConversationHistory loads a 1,000-turn conversation's history
// through ConversationStore.History, against the bare SELECT of the same
// turn rows (docs/contract.md section 20.1; the target is at most twice
// the bare SELECT).
func BenchmarkConversationHistory(b *testing.B) {
	pool := newPool(b, poolOpts{maxConns: 4})
	s, err := NewConversationStore(pool, nil)
	require.NoError(b, err)
	ctx := b.Context()
	c, err := s.Create(ctx, "", conversation.Principal{ID: "u"})
	require.NoError(b, err)
	for i := range 1000 {
		t, _, err := s.StartTurn(ctx, c.ID, conversation.TurnStart{UserText: fmt.Sprintf("question %d, a little longer than a word", i)})
		require.NoError(b, err)
		require.NoError(b, s.EndTurn(ctx, c.ID, t.ID, benchTurnState(i)))
	}
	b.Run("History", func(b *testing.B) {
		for b.Loop() {
			h, err := s.History(ctx, c.ID)
			if err != nil || len(h.Turns) != 1000 {
				b.Fatal(len(h.Turns), err)
			}
		}
	})
	b.Run("BareSelect", func(b *testing.B) {
		for b.Loop() {
			rows, err := pool.Query(ctx, `SELECT position, turn_id, user_text, state FROM pgstore_conversation_turns WHERE conversation_id = $1 ORDER BY position`, c.ID)
			if err != nil {
				b.Fatal(err)
			}
			n := 0
			for rows.Next() {
				var (
					position int32
					id, text string
					state    []byte
				)
				if err := rows.Scan(&position, &id, &text, &state); err != nil {
					b.Fatal(err)
				}
				n++
			}
			if rows.Err() != nil || n != 1000 {
				b.Fatal(n, rows.Err())
			}
		}
	})
}

// BenchmarkConversationStartTurn starts a turn in a conversation without a
// running one, against a bare INSERT of a turn row (the target is at most
// 1.3 times the bare INSERT).
func BenchmarkConversationStartTurn(b *testing.B) {
	pool := newPool(b, poolOpts{maxConns: 4})
	s, err := NewConversationStore(pool, nil)
	require.NoError(b, err)
	ctx := b.Context()
	_, err = pool.Exec(ctx, `CREATE TABLE IF NOT EXISTS bench_bare_turns (conversation_id text NOT NULL, position integer NOT NULL, turn_id text NOT NULL, user_text text NOT NULL, state bytea, PRIMARY KEY (conversation_id, position))`)
	require.NoError(b, err)
	b.Run("StartTurn", func(b *testing.B) {
		ids := make([]string, 0, 1024)
		for b.Loop() {
			if len(ids) == 0 {
				b.StopTimer()
				for range 1024 {
					c, err := s.Create(ctx, "", conversation.Principal{ID: "u"})
					require.NoError(b, err)
					ids = append(ids, c.ID)
				}
				b.StartTimer()
			}
			if _, _, err := s.StartTurn(ctx, ids[len(ids)-1], conversation.TurnStart{UserText: "a question"}); err != nil {
				b.Fatal(err)
			}
			ids = ids[:len(ids)-1]
		}
	})
	b.Run("BareInsert", func(b *testing.B) {
		conv := conversation.NewID()
		i := 0
		for b.Loop() {
			i++
			if _, err := pool.Exec(ctx, `INSERT INTO bench_bare_turns (conversation_id, position, turn_id, user_text) VALUES ($1, $2, $3, $4)`, conv, i, conversation.NewID(), "a question"); err != nil {
				b.Fatal(err)
			}
		}
	})
}
