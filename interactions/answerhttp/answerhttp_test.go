package answerhttp_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	chatprotocol "github.com/Papercusp/chat-protocol-go"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/Papercusp/chat-protocol-go/cards"
	"github.com/Papercusp/chat-protocol-go/interactions"
	"github.com/Papercusp/chat-protocol-go/interactions/answerhttp"
	"github.com/Papercusp/chat-protocol-go/interactions/interactionstest"
	"github.com/Papercusp/chat-protocol-go/interactions/jsonschema"
	_ "github.com/Papercusp/chat-protocol-go/internal/testkit/golden" // accepts go test ./... -update
	"github.com/Papercusp/chat-protocol-go/internal/testkit/slowbody"
	"github.com/Papercusp/chat-protocol-go/refusal"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var (
	alice   = interactions.Caller{Principal: "alice", Tenant: "t1"}
	bob     = interactions.Caller{Principal: "bob", Tenant: "t1"}
	carol   = interactions.Caller{Principal: "carol", Tenant: "t1"} // granted nothing
	callers = map[string]interactions.Caller{"alice": alice, "bob": bob, "carol": carol}
	cardKey = interactions.Key{Conversation: "conv-1", CorrelationID: "card-1"}
	radioV1 = interactions.SchemaRef{ID: "radio-ab", Revision: 1}
	radioV2 = interactions.SchemaRef{ID: "radio-ab", Revision: 2}
	epoch   = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
)

// pgError is what a PostgreSQL driver's error reads like: store text that
// must never reach a client.
const pgError = `ERROR: permission denied for table cards_secret_audit (SQLSTATE 42501)`

// tamperStore wraps a Store: read, when set, replaces what Read returns.
type tamperStore struct {
	interactions.Store
	read func(interactions.Current, error) (interactions.Current, error)
}

func (s *tamperStore) Read(ctx context.Context, key interactions.Key, caller *interactions.Caller) (interactions.Current, error) {
	cur, err := s.Store.Read(ctx, key, caller)
	if s.read != nil {
		return s.read(cur, err)
	}
	return cur, err
}

// env is one fake database, a resolver over it and the handler under a
// mux, with alice's radio card conv-1/card-1 open at revision 1.
type env struct {
	t        *testing.T
	db       *interactionstest.DB
	clock    *interactionstest.Clock
	schemas  *jsonschema.Registry
	store    *interactionstest.Store
	tamper   *tamperStore
	res      *interactions.Resolver
	mux      *http.ServeMux
	logs     bytes.Buffer
	validate func() // runs while a value is validated, outside any transaction
}

func newEnv(t *testing.T, opts *answerhttp.HandlerOptions) *env {
	t.Helper()
	e := &env{t: t, db: interactionstest.NewDB(), clock: interactionstest.NewClock(epoch), schemas: jsonschema.NewRegistry()}
	require.NoError(t, e.schemas.Register(radioV1, []byte(`{"type":"object","properties":{"optionId":{"enum":["a","b"]}},"required":["optionId"]}`)))
	require.NoError(t, e.schemas.Register(radioV2, []byte(`{"type":"object","properties":{"optionId":{"enum":["a","b","c"]}},"required":["optionId"]}`)))
	e.db.Grant(alice, "conv-1")
	e.db.Grant(bob, "conv-1")
	e.store = e.db.Open(nil)
	e.tamper = &tamperStore{Store: e.store}
	validator := interactions.ValidatorFunc(func(ctx context.Context, ref interactions.SchemaRef, v json.RawMessage) error {
		if e.validate != nil {
			e.validate()
		}
		return e.schemas.Validate(ctx, ref, v)
	})
	var err error
	e.res, err = interactions.New(e.tamper, validator, &interactions.Options{CardRules: chatprotocol.ValidateCardSpec, Clock: e.clock.Now, MaxValueBytes: 256})
	require.NoError(t, err)
	e.open("card-1")

	o := answerhttp.HandlerOptions{}
	if opts != nil {
		o = *opts
	}
	if o.Caller == nil {
		o.Caller = func(r *http.Request) (interactions.Caller, error) {
			name, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
			if c, known := callers[name]; ok && known {
				return c, nil
			}
			return interactions.Caller{}, errors.New("session lookup: " + pgError)
		}
	}
	o.Logger = slog.New(slog.NewTextHandler(&e.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	h, err := answerhttp.NewHandler(e.res, &o)
	require.NoError(t, err)
	e.mux = http.NewServeMux()
	e.mux.Handle("/conversations/{conversation}/cards/{card}/answer", h)
	return e
}

// open opens alice's card id in conv-1, with a one-minute timeout, that
// allows a decline.
func (e *env) open(id string) {
	e.t.Helper()
	_, err := e.res.Open(context.Background(), interactions.NewCard{
		Key: interactions.Key{Conversation: "conv-1", CorrelationID: id}, Answerer: alice,
		Spec:   cards.CardSpec{Prompt: "Ship it?", AllowDecline: true, TimeoutMs: time.Minute.Milliseconds()},
		Schema: radioV1})
	require.NoError(e.t, err)
}

// request is one HTTP request to the handler.
type request struct {
	method string // "" is POST
	ctype  string // the Content-Type; "" is none
	who    string // the bearer; "" is alice
	key    string // the Idempotency-Key; "" is k-1, "-" is none
	card   string // "" is card-1
	body   string // "" is a submit of option a for card-1
	reader io.Reader
}

func (e *env) do(rq request) (int, http.Header, refusal.Body, string) {
	e.t.Helper()
	method, who, key, card, body := rq.method, rq.who, rq.key, rq.card, rq.body
	if method == "" {
		method = http.MethodPost
	}
	if who == "" {
		who = "alice"
	}
	if key == "" {
		key = "k-1"
	}
	if card == "" {
		card = "card-1"
	}
	if body == "" {
		body = `{"action":"submit","correlationId":"` + card + `","value":{"optionId":"a"}}`
	}
	var rd io.Reader = strings.NewReader(body)
	if rq.reader != nil {
		rd = rq.reader
	}
	req := httptest.NewRequest(method, "/conversations/conv-1/cards/"+card+"/answer", rd)
	req.Header.Set("Authorization", "Bearer "+who)
	if key != "-" {
		req.Header.Set("Idempotency-Key", key)
	}
	if rq.ctype != "" {
		req.Header.Set("Content-Type", rq.ctype)
	}
	rec := slowbody.Answer(e.t, e.mux, req) // within a deadline, whatever the body
	var reply refusal.Body
	require.NoError(e.t, json.Unmarshal(rec.Body.Bytes(), &reply), "%s", rec.Body.String())
	return rec.Code, rec.Header(), reply, rec.Body.String()
}

// brokenBody is a request body whose client went away mid-upload.
type brokenBody struct{ sent bool }

func (b *brokenBody) Read(p []byte) (int, error) {
	if !b.sent {
		b.sent = true
		return copy(p, `{"action":"submit","corr`), nil
	}
	return 0, io.ErrUnexpectedEOF
}

// Every code a request can end with, the resolver's refusals each
// provoked for real: its status and body, and never the error's own text.
func TestEveryCode(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		code    refusal.Code
		setup   func(e *env) request
		status  int
		path    string
		keyword string
		record  *interactions.Status // the record's status in the reply, when one is expected
	}{
		{"", func(e *env) request { return request{} }, 200, "", "", ptr(interactions.StatusAnswered)},
		{refusal.CodeDuplicateAnswer, func(e *env) request {
			e.do(request{})
			return request{}
		}, 200, "", "", ptr(interactions.StatusAnswered)},
		{refusal.CodeInvalidCard, func(e *env) request {
			return request{body: `{"ACTION":"submit","correlationId":"card-1","value":{"optionId":"a"}}`}
		}, 400, "/ACTION", "", nil},
		{refusal.CodeInvalidIdempotencyKey, func(e *env) request { return request{key: "-", ctype: "application/json"} }, 400, "", "", nil},
		{refusal.CodeUnreadableBody, func(e *env) request { return request{reader: &brokenBody{}} }, 400, "", "", nil},
		{refusal.CodeUnauthenticated, func(e *env) request { return request{who: "mallory"} }, 401, "", "", nil},
		{refusal.CodeUnauthorized, func(e *env) request { return request{who: "carol"} }, 403, "", "", nil},
		{refusal.CodeCardNotFound, func(e *env) request { return request{who: "bob"} }, 404, "", "", nil},
		{refusal.CodeMethodNotAllowed, func(e *env) request { return request{method: http.MethodPut} }, 405, "", "", nil},
		{refusal.CodeUnsupportedMediaType, func(e *env) request { return request{ctype: "text/plain;charset=UTF-8"} }, 415, "", "", nil},
		{refusal.CodeIdempotencyKeyReused, func(e *env) request {
			e.do(request{})
			return request{body: `{"action":"submit","correlationId":"card-1","value":{"optionId":"b"}}`}
		}, 422, "", "", nil},
		{refusal.CodeAlreadyAnswered, func(e *env) request {
			e.do(request{key: "k-0"})
			return request{}
		}, 409, "", "", nil},
		{refusal.CodeAnswerExpired, func(e *env) request {
			e.clock.Advance(time.Minute)
			return request{}
		}, 409, "", "", nil},
		{refusal.CodeCardCancelled, func(e *env) request {
			_, err := e.res.Cancel(ctx, cardKey, "turn cancelled")
			require.NoError(t, err)
			return request{}
		}, 409, "", "", nil},
		{refusal.CodeCardSuperseded, func(e *env) request {
			e.open("card-2")
			_, err := e.res.Supersede(ctx, cardKey, "card-2")
			require.NoError(t, err)
			return request{}
		}, 409, "", "", nil},
		{refusal.CodeStaleRevision, func(e *env) request {
			e.validate = func() {
				e.validate = nil
				_, err := e.res.Revise(ctx, cardKey, cards.CardSpec{Prompt: "Ship it now?", TimeoutMs: 60000}, radioV1)
				require.NoError(t, err)
			}
			return request{}
		}, 409, "", "", nil},
		{refusal.CodeSchemaMismatch, func(e *env) request {
			e.validate = func() {
				e.validate = nil
				_, err := e.res.Revise(ctx, cardKey, cards.CardSpec{Prompt: "Ship it?", TimeoutMs: 60000}, radioV2)
				require.NoError(t, err)
			}
			return request{}
		}, 409, "", "", nil},
		{refusal.CodeFrameTooLarge, func(e *env) request {
			return request{body: `{"action":"submit","correlationId":"card-1","value":{"optionId":"` + strings.Repeat("a", answerhttp.DefaultMaxBodyBytes) + `"}}`}
		}, 413, "", "", nil},
		{refusal.CodeInvalidInput, func(e *env) request {
			return request{body: `{"action":"submit","correlationId":"card-1","value":{"optionId":"a\u0000"}}`}
		}, 400, "/value", "", nil},
		{refusal.CodeInvalidAnswer, func(e *env) request {
			return request{body: `{"action":"submit","correlationId":"card-1","value":{"optionId":"z"}}`}
		}, 422, "/value/optionId", "enum", nil},
		{refusal.CodeUnknownSchema, func(e *env) request {
			_, err := e.res.Revise(ctx, cardKey, cards.CardSpec{Prompt: "Ship it?"}, interactions.SchemaRef{ID: "unregistered", Revision: 1})
			require.NoError(t, err)
			return request{}
		}, 500, "", "", nil},
		{refusal.CodeUnsupportedVersion, func(e *env) request {
			e.tamper.read = func(cur interactions.Current, err error) (interactions.Current, error) {
				rec := *cur.Record
				rec.Version = 2
				cur.Record = &rec
				return cur, err
			}
			return request{}
		}, 500, "/version", "", nil},
		{refusal.CodeNeedsReconciliation, func(e *env) request {
			e.store.Inject(interactionstest.Failpoint{Op: interactionstest.OpTransact, Fault: interactionstest.FaultLostAckNotCommitted})
			return request{}
		}, 503, "", "", nil},
		{refusal.CodeStoreUnavailable, func(e *env) request {
			e.tamper.read = func(interactions.Current, error) (interactions.Current, error) {
				return interactions.Current{}, errors.New(pgError)
			}
			return request{}
		}, 503, "", "", nil},
		{refusal.CodeCheckpointWriteFailed, func(e *env) request {
			e.store.Inject(interactionstest.Failpoint{Op: interactionstest.OpTransact, Fault: interactionstest.FaultRollback})
			return request{}
		}, 503, "", "", nil},
	}
	seen := map[refusal.Code]bool{}
	for _, c := range cases {
		seen[c.code] = true
		t.Run("code="+string(c.code), func(t *testing.T) {
			e := newEnv(t, nil)
			status, header, reply, raw := e.do(c.setup(e))
			assert.Equal(t, c.status, status)
			if c.code != "" {
				assert.Equal(t, refusal.HTTPStatus(c.code), status, "the one table's status")
			}
			assert.Equal(t, "application/json", header.Get("Content-Type"))
			assert.Equal(t, "no-store", header.Get("Cache-Control"))
			assert.Equal(t, "nosniff", header.Get("X-Content-Type-Options"))
			assert.Equal(t, strconv.Itoa(len(raw)), header.Get("Content-Length"))
			assert.Equal(t, c.code, reply.Code)
			assert.Equal(t, c.path, reply.Path)
			assert.Equal(t, c.keyword, reply.Keyword)
			assert.NotEmpty(t, reply.Message)
			if c.record != nil {
				assert.Equal(t, string(*c.record), reply.Status)
				assert.Equal(t, int64(2), reply.Revision)
			} else {
				assert.Empty(t, reply.Status)
				assert.Zero(t, reply.Revision)
			}
			// Fragments of the errors' own texts: the store's, the
			// resolver's, the validator's and the session hook's.
			for _, leak := range []string{"SQLSTATE", "permission denied", "interactionstest", "session lookup",
				"reading the card", "nothing was written", "acknowledgement lost", "rolled back", "is not version 1",
				"after validation", "no schema registered", "does not match the card's schema", "no current authorization",
				"value \"z\"", "must be one of"} {
				assert.NotContains(t, raw, leak, "the body carries no error text")
			}
		})
	}

	// Every refusal code of the module is either provoked above or one the
	// handler, the resolver's Answer and the body's parser never return: a
	// new code fails here until it is provoked or listed. The resolver
	// returns no error without a code, so internal is not provoked here
	// (refusal.BodyOf's test has it).
	notAnswerCodes := map[refusal.Code]bool{
		refusal.CodeUnsupportedEvent: true, refusal.CodeInvalidEnvelope: true, refusal.CodeInvalidEvent: true,
		refusal.CodeMissingCallID: true, refusal.CodeUnknownResultStatus: true, refusal.CodeForeignFrame: true,
		refusal.CodeSequenceGap: true, refusal.CodeSequenceReordered: true, refusal.CodeUnknownCall: true,
		refusal.CodeTurnTerminated: true, refusal.CodeUnsupportedCapability: true, refusal.CodeStaleCursor: true,
		refusal.CodeCursorAhead: true, refusal.CodeTurnNotRunning: true, refusal.CodeClaimConflict: true,
		refusal.CodeAdmissionUnavailable: true, refusal.CodeUnknownEffect: true, refusal.CodeInvalidTurn: true,
		refusal.CodeInvalidFrame: true, refusal.CodeCardExists: true, refusal.CodeNotExpired: true,
		refusal.CodeInvalidCursor: true, refusal.CodeTurnNotFound: true, refusal.CodeInternal: true,
		refusal.CodeTurnRunning: true, refusal.CodeConversationNotFound: true, refusal.CodeConversationExists: true,
	}
	for _, code := range refusal.Codes() {
		assert.True(t, seen[code] != notAnswerCodes[code], "%s: provoked by a case above, or listed as not an answer's", code)
	}
}

// The resolver's own frame-too-large (a value over its MaxValueBytes) is
// 413 with the value's path, like a body over the handler's limit.
func TestValueOverTheResolversLimit(t *testing.T) {
	e := newEnv(t, nil)
	status, _, reply, _ := e.do(request{body: `{"action":"submit","correlationId":"card-1","value":{"optionId":"` + strings.Repeat("a", 300) + `"}}`})
	assert.Equal(t, http.StatusRequestEntityTooLarge, status)
	assert.Equal(t, refusal.CodeFrameTooLarge, reply.Code)
	assert.Equal(t, "/value", reply.Path)
}

// A refusal of the submission itself keeps its path: an answer naming
// another card than the request's.
func TestSubmissionRefusalKeepsItsPath(t *testing.T) {
	e := newEnv(t, nil)
	e.open("card-2")
	status, _, reply, _ := e.do(request{body: `{"action":"submit","correlationId":"card-2","value":{"optionId":"a"}}`})
	assert.Equal(t, http.StatusUnprocessableEntity, status)
	assert.Equal(t, refusal.CodeInvalidAnswer, reply.Code)
	assert.Equal(t, "/correlationId", reply.Path)
	assert.Empty(t, reply.Keyword, "no schema rule refused it")
}

// The whole error, the store's text included, goes to the host's logger
// and nowhere else.
func TestStoreTextGoesToTheLogOnly(t *testing.T) {
	e := newEnv(t, nil)
	e.tamper.read = func(interactions.Current, error) (interactions.Current, error) {
		return interactions.Current{}, errors.New(pgError)
	}
	status, _, reply, raw := e.do(request{})
	assert.Equal(t, http.StatusServiceUnavailable, status)
	assert.Equal(t, refusal.CodeStoreUnavailable, reply.Code)
	assert.NotContains(t, raw, "SQLSTATE")
	assert.Contains(t, e.logs.String(), "SQLSTATE 42501")
	assert.Contains(t, e.logs.String(), "level=ERROR")
}

// A retry after a lost acknowledgement, with the same Idempotency-Key,
// finds the stored answer; a reconciled answer says so.
func TestRetryAfterLostAcknowledgement(t *testing.T) {
	e := newEnv(t, nil)
	e.store.Inject(interactionstest.Failpoint{Op: interactionstest.OpTransact, Fault: interactionstest.FaultLostAckCommitted})
	status, _, reply, _ := e.do(request{})
	assert.Equal(t, http.StatusOK, status)
	assert.Equal(t, refusal.Code(""), reply.Code)
	assert.True(t, reply.Reconciled)
	assert.Equal(t, string(interactions.StatusAnswered), reply.Status)
	status, _, reply, _ = e.do(request{})
	assert.Equal(t, http.StatusOK, status)
	assert.Equal(t, refusal.CodeDuplicateAnswer, reply.Code)
	assert.False(t, reply.Reconciled)
}

// The Options: Key and MaxBodyBytes replace the defaults, and NewHandler
// refuses what it cannot serve.
func TestOptions(t *testing.T) {
	e := newEnv(t, nil)
	asAlice := func(*http.Request) (interactions.Caller, error) { return alice, nil }
	h, err := answerhttp.NewHandler(e.res, &answerhttp.HandlerOptions{Caller: asAlice, MaxBodyBytes: 48,
		Key: func(r *http.Request) (interactions.Key, error) {
			card := r.URL.Query().Get("card")
			if card == "" {
				return interactions.Key{}, errors.New("no card in the query")
			}
			return interactions.Key{Conversation: "conv-1", CorrelationID: card}, nil
		}})
	require.NoError(t, err)
	post := func(target, body string) (int, refusal.Body) {
		req := httptest.NewRequest(http.MethodPost, target, strings.NewReader(body))
		req.Header.Set("Idempotency-Key", "k-1")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		var reply refusal.Body
		require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &reply))
		return rec.Code, reply
	}
	status, reply := post("/answer", `{"action":"decline","correlationId":"card-1"}`)
	assert.Equal(t, http.StatusNotFound, status, "the Key hook's error")
	assert.Equal(t, refusal.CodeCardNotFound, reply.Code)
	status, reply = post("/answer?card=card-1", `{"action":"submit","correlationId":"card-1","value":{"optionId":"a"}}`)
	assert.Equal(t, http.StatusRequestEntityTooLarge, status, "69 bytes, over 48")
	assert.Equal(t, refusal.CodeFrameTooLarge, reply.Code)
	status, reply = post("/answer?card=card-1", `{"action":"decline","correlationId":"card-1"}`)
	assert.Equal(t, http.StatusOK, status, "45 bytes")
	assert.Equal(t, string(interactions.StatusDeclined), reply.Status)

	for _, bad := range []*answerhttp.HandlerOptions{nil, {}, {Caller: asAlice, MaxBodyBytes: -1}} {
		_, err := answerhttp.NewHandler(e.res, bad)
		assert.Error(t, err)
	}
	_, err = answerhttp.NewHandler(nil, &answerhttp.HandlerOptions{Caller: asAlice})
	assert.Error(t, err)
}

func ptr[T any](v T) *T { return &v }
