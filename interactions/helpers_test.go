package interactions_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	chatprotocol "github.com/Papercusp/chat-protocol-go"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/Papercusp/chat-protocol-go/cards"
	"github.com/Papercusp/chat-protocol-go/interactions"
	"github.com/Papercusp/chat-protocol-go/interactions/interactionstest"
	"github.com/Papercusp/chat-protocol-go/interactions/jsonschema"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// The cast of the tests: alice owns conv-1; the others differ from her in
// one member each.
var (
	alice       = interactions.Caller{Principal: "alice", Tenant: "t1", Customer: "c1"}
	bob         = interactions.Caller{Principal: "bob", Tenant: "t1", Customer: "c1"}
	aliceT2     = interactions.Caller{Principal: "alice", Tenant: "t2", Customer: "c1"}
	aliceC2     = interactions.Caller{Principal: "alice", Tenant: "t1", Customer: "c2"}
	visitor     = interactions.Caller{PublicOwner: "visitor-9"}
	conv        = "conv-1"
	otherConv   = "conv-2"
	cardKey     = interactions.Key{Conversation: conv, CorrelationID: "card-1"}
	radioV1     = interactions.SchemaRef{ID: "radio-ab", Revision: 1}
	radioV2     = interactions.SchemaRef{ID: "radio-ab", Revision: 2}
	epoch       = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	cardTimeout = time.Minute
)

// radioSpec is a radio card whose answers are {"optionId": ...}.
func radioSpec(allowDecline bool) cards.CardSpec {
	return cards.CardSpec{Prompt: "Ship it?", AllowDecline: allowDecline, TimeoutMs: cardTimeout.Milliseconds()}
}

// env is one fake database with a clock, a schema registry and a first
// worker; worker() adds fresh ones.
type env struct {
	t       *testing.T
	db      *interactionstest.DB
	clock   *interactionstest.Clock
	schemas *jsonschema.Registry
	store   *interactionstest.Store
	res     *interactions.Resolver
	// beforeValidate, when set, runs when a submit's value is about to be
	// validated, outside any transaction (a slow validator's window).
	beforeValidate func()
}

func newEnv(t *testing.T) *env {
	t.Helper()
	e := &env{t: t, db: interactionstest.NewDB(), clock: interactionstest.NewClock(epoch), schemas: jsonschema.NewRegistry()}
	require.NoError(t, e.schemas.Register(radioV1, []byte(`{"type":"object","properties":{"optionId":{"enum":["a","b"]}},"required":["optionId"],"additionalProperties":false}`)))
	require.NoError(t, e.schemas.Register(radioV2, []byte(`{"type":"object","properties":{"optionId":{"enum":["a","b","c"]}},"required":["optionId"],"additionalProperties":false}`)))
	e.db.Grant(alice, conv)
	e.db.Grant(bob, conv)
	e.store, e.res = e.worker()
	_, err := e.res.Open(context.Background(), interactions.NewCard{Key: cardKey, Answerer: alice, Spec: radioSpec(true), Schema: radioV1})
	require.NoError(t, err)
	return e
}

// worker returns a fresh worker over the same database: a new Store
// connection and a new Resolver.
func (e *env) worker() (*interactionstest.Store, *interactions.Resolver) {
	e.t.Helper()
	st := e.db.Open(nil)
	validator := interactions.ValidatorFunc(func(ctx context.Context, ref interactions.SchemaRef, v json.RawMessage) error {
		if e.beforeValidate != nil {
			e.beforeValidate()
		}
		return e.schemas.Validate(ctx, ref, v)
	})
	res, err := interactions.New(st, validator, &interactions.Options{CardRules: chatprotocol.ValidateCardSpec, Clock: e.clock.Now})
	require.NoError(e.t, err)
	return st, res
}

// submit is a submission choosing option for cardKey.
func submit(id, option string) interactions.Submission {
	return interactions.Submission{ID: id, Response: cards.CardResponse{
		Action: cards.CardActionSubmit, CorrelationID: cardKey.CorrelationID,
		Value: json.RawMessage(`{"optionId":"` + option + `"}`),
	}}
}

// respond is a submission with an action and no value for cardKey.
func respond(id string, action cards.CardAction) interactions.Submission {
	return interactions.Submission{ID: id, Response: cards.CardResponse{Action: action, CorrelationID: cardKey.CorrelationID}}
}

// stored returns the committed record under cardKey.
func (e *env) stored() interactions.Record {
	e.t.Helper()
	h := e.db.History(cardKey)
	require.NotEmpty(e.t, h)
	return h[len(h)-1]
}
