package pgstore

import (
	"encoding/json"
	"testing"

	chatprotocol "github.com/Papercusp/chat-protocol-go"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Papercusp/chat-protocol-go/cards"
	"github.com/Papercusp/chat-protocol-go/interactions"
	"github.com/Papercusp/chat-protocol-go/recovery"
	"github.com/Papercusp/chat-protocol-go/refusal"
)

// Answer values are stored byte for byte: what the resolver validated and
// digested is what the store keeps, what Read returns and what the outbox
// carries (jsonb used to rewrite 1e400 as 401 digits and -0 as 0).
func TestAnswerValuesStoredAsSent(t *testing.T) {
	f := newCardFixture(t, pgx.ReadCommitted, "")
	ctx := t.Context()
	res, err := interactions.New(f.open(), acceptAll, &interactions.Options{CardRules: chatprotocol.ValidateCardSpec})
	require.NoError(t, err)
	person := interactions.Caller{Principal: "p-values"}
	key := interactions.Key{Conversation: "c-values", CorrelationID: "card-1"}
	require.NoError(t, hostGrant(ctx, f.admin, person, key.Conversation))
	_, err = res.Open(ctx, interactions.NewCard{Key: key, Answerer: person,
		Spec: cards.CardSpec{Prompt: "How much?"}, Schema: interactions.SchemaRef{ID: "any", Revision: 1}})
	require.NoError(t, err)

	value := `{"big":1e400,"neg":-0,"frac":1.50,"text":"\u00e9"}`
	got, err := res.Answer(ctx, person, key, interactions.Submission{ID: "s-1", Response: cards.CardResponse{
		Action: cards.CardActionSubmit, CorrelationID: key.CorrelationID, Value: json.RawMessage(value)}})
	require.NoError(t, err)
	sent := got.Record.Answer.Value
	require.Contains(t, string(sent), "1e400")
	require.Contains(t, string(sent), "-0")
	require.Contains(t, string(sent), "1.50")

	var stored []byte
	require.NoError(t, f.admin.QueryRow(ctx, `SELECT answer_value FROM pgstore_cards WHERE conversation_id = $1 AND correlation_id = $2`,
		key.Conversation, key.CorrelationID).Scan(&stored))
	assert.Equal(t, string(sent), string(stored), "the column holds the bytes validated and digested")
	view, err := res.Read(ctx, person, key)
	require.NoError(t, err)
	assert.Equal(t, string(sent), string(view.Record.Answer.Value), "Read returns them")
	trs := f.transitions(key)
	require.Len(t, trs, 1)
	require.NotNil(t, trs[0].Response)
	assert.Equal(t, string(sent), string(trs[0].Response.Value), "the workflow's outbox carries them")
}

// Ids with NUL or invalid UTF-8 never reach PostgreSQL (which would refuse
// them with SQLSTATE 22021 as a failed write): both components refuse them
// with invalid-input first.
func TestUnstorableIDsNeverReachTheServer(t *testing.T) {
	ctx := t.Context()
	st := newRecoveryStore(t, poolOpts{})
	rec := recovery.New(recovery.Host{Store: st, Authorizer: allowAll{}}, nil)
	for _, id := range []string{"nul\x00id", "bad\xffutf8"} {
		_, err := rec.Start(ctx, "host", recovery.TurnRef{Conversation: id, Turn: "t"}, []string{"e"})
		assert.ErrorIs(t, err, refusal.ErrInvalidInput, "%q", id)
		_, err = rec.Start(ctx, "host", recovery.TurnRef{Conversation: "c-ids", Turn: "t"}, []string{id})
		assert.ErrorIs(t, err, refusal.ErrInvalidInput, "%q", id)
	}
	f := newCardFixture(t, pgx.ReadCommitted, "")
	res, err := interactions.New(f.open(), acceptAll, &interactions.Options{CardRules: chatprotocol.ValidateCardSpec})
	require.NoError(t, err)
	_, err = res.Open(ctx, interactions.NewCard{Key: interactions.Key{Conversation: "c", CorrelationID: "x\x00"},
		Answerer: interactions.Caller{Principal: "p"}, Spec: cards.CardSpec{Prompt: "?"}, Schema: interactions.SchemaRef{ID: "any", Revision: 1}})
	assert.ErrorIs(t, err, refusal.ErrInvalidInput)
}
