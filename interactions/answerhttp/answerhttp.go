// Package answerhttp serves a person's answer to a card over HTTP: an
// http.Handler over an interactions.Resolver (docs/contract.md sections 3
// and 13) that reads the request as strictly as the wire contract reads a
// frame and answers every outcome with one status and one JSON body.
//
// It is a package of its own because it reads the body with
// chatprotocol.ParseCardResponse, and interactions imports neither the
// root package nor its validator.
//
// # The request
//
// Mount the handler under a POST pattern with the conversation and card in
// the path (the default Options.Key reads them):
//
//	mux.Handle("POST /conversations/{conversation}/cards/{card}/answer", h)
//
// The caller comes from Options.Caller (the host's session lookup, never
// the body); the submission id from the Idempotency-Key header (1 to
// interactions.MaxIDBytes bytes; a retry repeats it); the body, at most
// Options.MaxBodyBytes, is one CardResponse read with
// chatprotocol.ParseCardResponse.
//
// # The response
//
// Every response is a Reply as JSON (Content-Type application/json), with
// the status StatusOf gives its code:
//
//	200 ""                        the answer was stored (status, revision; reconciled after a lost acknowledgement)
//	200 duplicate-answer          this submission was already stored (status, revision)
//	400 invalid-card              the body is not one strict CardResponse (path)
//	400 invalid-idempotency-key   no Idempotency-Key header, or one over 256 bytes
//	400 invalid-input             an id, key or value no store can hold (a NUL, invalid UTF-8, U+0000 in a string)
//	400 unreadable-body           the body could not be read (the client went away, a broken upload)
//	401 unauthenticated           Options.Caller returned an error
//	403 unauthorized              the caller has no current authority
//	404 card-not-found            no such card, or not the caller's (Options.Key failing too)
//	405 method-not-allowed        not a POST
//	409 already-answered, answer-expired, card-cancelled, card-superseded,
//	    stale-revision, schema-mismatch
//	413 frame-too-large           the body or the value is over its limit
//	422 invalid-answer            the submission or its value is refused (path; keyword for a schema rule)
//	500 unknown-schema, unsupported-version, internal (an error without a code)
//	503 needs-reconciliation, store-unavailable, checkpoint-write-failed:
//	    the client may repeat the request with the same Idempotency-Key
//
// # Security considerations
//
// A refusal's Message and its cause wrap the store's own error text (a
// PostgreSQL message included), so the handler never writes either: a
// Reply carries only the code, the JSON pointer of the refusal, the
// failing schema keyword, and a message the handler chose for the code.
// Options.Logger receives the whole error. Authority comes only from
// Options.Caller and the store.
package answerhttp

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"

	chatprotocol "github.com/Papercusp/chat-protocol-go"
	"github.com/Papercusp/chat-protocol-go/interactions"
	"github.com/Papercusp/chat-protocol-go/refusal"
)

// DefaultMaxBodyBytes is the default of Options.MaxBodyBytes: 64 KiB.
const DefaultMaxBodyBytes = 64 << 10

// The codes of a Reply that are the handler's own, not refusal codes: the
// request was turned away before the Resolver saw it.
const (
	// CodeInvalidIdempotencyKey: the Idempotency-Key header is missing,
	// empty or over interactions.MaxIDBytes (400).
	CodeInvalidIdempotencyKey = "invalid-idempotency-key"
	// CodeUnreadableBody: reading the body failed before its end, other
	// than by going over the limit (400).
	CodeUnreadableBody = "unreadable-body"
	// CodeUnauthenticated: Options.Caller returned an error (401).
	CodeUnauthenticated = "unauthenticated"
	// CodeMethodNotAllowed: a method other than POST (405).
	CodeMethodNotAllowed = "method-not-allowed"
	// CodeInternal: the Resolver returned an error without a code (500).
	CodeInternal = "internal"
)

// Options configures a handler; Caller is required.
type Options struct {
	// Caller returns the caller the host authenticated for the request,
	// from its own session (a cookie, a bearer token), never from the body.
	// An error is answered 401 unauthenticated and logged, never shown.
	Caller func(*http.Request) (interactions.Caller, error)
	// Key returns the card the request answers; nil means
	// r.PathValue("conversation") and r.PathValue("card"). An error is
	// answered 404 card-not-found.
	Key func(*http.Request) (interactions.Key, error)
	// MaxBodyBytes bounds the body, in bytes; 0 means DefaultMaxBodyBytes
	// (64 KiB). A longer body is answered 413 frame-too-large.
	MaxBodyBytes int64
	// Logger receives every refusal and error with its full text, at level
	// Error for a 5xx status and Debug otherwise; nil means no logging.
	Logger *slog.Logger
}

// Reply is the JSON body of every response of the handler. Code is ""
// only for a stored answer; Path is the refusal's JSON pointer into the
// body (such as "/value/optionId"), when it has one; Keyword is the JSON
// Schema keyword that refused the value ("enum", "required" …), when the
// Validator's error names one (an error in its chain with a Keyword()
// string method, as interactions/jsonschema's has); Message is the
// handler's own words for the code, never the error's text. Status,
// Revision and Reconciled describe the card's record after a stored answer
// or a duplicate-answer.
type Reply struct {
	Code       string              `json:"code"`
	Path       string              `json:"path,omitzero"`
	Keyword    string              `json:"keyword,omitzero"`
	Message    string              `json:"message,omitzero"`
	Status     interactions.Status `json:"status,omitzero"`
	Revision   int64               `json:"revision,omitzero"`
	Reconciled bool                `json:"reconciled,omitzero"`
}

// handler is the http.Handler NewHandler returns.
type handler struct {
	res     *interactions.Resolver
	caller  func(*http.Request) (interactions.Caller, error)
	key     func(*http.Request) (interactions.Key, error)
	maxBody int64
	log     *slog.Logger
}

// NewHandler returns the http.Handler that answers cards through res, as
// the package documentation describes. It is safe for concurrent use. It
// returns an error (not a refusal) when res or opts.Caller is nil or
// MaxBodyBytes is negative.
func NewHandler(res *interactions.Resolver, opts *Options) (http.Handler, error) {
	if res == nil || opts == nil || opts.Caller == nil {
		return nil, errors.New("answerhttp: NewHandler needs a Resolver and Options.Caller")
	}
	if opts.MaxBodyBytes < 0 {
		return nil, errors.New("answerhttp: negative MaxBodyBytes")
	}
	h := &handler{res: res, caller: opts.Caller, key: opts.Key, maxBody: opts.MaxBodyBytes, log: opts.Logger}
	if h.key == nil {
		h.key = pathKey
	}
	if h.maxBody == 0 {
		h.maxBody = DefaultMaxBodyBytes
	}
	if h.log == nil {
		h.log = slog.New(slog.DiscardHandler)
	}
	return h, nil
}

// pathKey is the default Options.Key.
func pathKey(r *http.Request) (interactions.Key, error) {
	return interactions.Key{Conversation: r.PathValue("conversation"), CorrelationID: r.PathValue("card")}, nil
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		h.reply(w, r, Reply{Code: CodeMethodNotAllowed}, nil)
		return
	}
	caller, err := h.caller(r)
	if err != nil {
		h.reply(w, r, Reply{Code: CodeUnauthenticated}, err)
		return
	}
	id := r.Header.Get("Idempotency-Key")
	if id == "" || len(id) > interactions.MaxIDBytes {
		h.reply(w, r, Reply{Code: CodeInvalidIdempotencyKey}, nil)
		return
	}
	key, err := h.key(r)
	if err != nil {
		h.refused(w, r, interactions.Result{}, &refusal.Error{Code: refusal.CodeCardNotFound, Err: err})
		return
	}
	data, err := io.ReadAll(http.MaxBytesReader(w, r.Body, h.maxBody))
	if err != nil {
		if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
			h.refused(w, r, interactions.Result{}, &refusal.Error{Code: refusal.CodeFrameTooLarge, Err: err})
			return
		}
		h.reply(w, r, Reply{Code: CodeUnreadableBody}, err)
		return
	}
	resp, err := chatprotocol.ParseCardResponse(data)
	if err != nil {
		h.refused(w, r, interactions.Result{}, err)
		return
	}
	out, err := h.res.Answer(r.Context(), caller, key, interactions.Submission{ID: id, Response: resp})
	h.refused(w, r, out, err)
}

// refused answers the outcome of a submission: a stored answer (err nil)
// or a refusal, by its code.
func (h *handler) refused(w http.ResponseWriter, r *http.Request, out interactions.Result, err error) {
	code := refusal.CodeOf(err)
	reply := Reply{Code: string(code)}
	switch {
	case err != nil && code == "":
		reply.Code = CodeInternal
	case err != nil:
		reply.Path = firstPath(err)
		if code == refusal.CodeInvalidAnswer {
			if k, ok := errors.AsType[keyworder](err); ok {
				reply.Keyword = k.Keyword()
			}
		}
	}
	if out.Record.Version != 0 { // set with a stored answer and with duplicate-answer
		reply.Status, reply.Revision, reply.Reconciled = out.Record.Status, out.Record.Revision, out.Reconciled
	}
	h.reply(w, r, reply, err)
}

// keyworder is an error that names the schema keyword that refused a
// value.
type keyworder interface {
	error
	Keyword() string
}

// firstPath is the Path of the first *refusal.Error in err's chain; for a
// list of violations (chatprotocol.CardViolations), that of the first.
func firstPath(err error) string {
	if e, ok := errors.AsType[*refusal.Error](err); ok {
		return e.Path
	}
	return ""
}

// reply writes one response: the status of the reply's code, the reply
// with the handler's message for the code, and a log record of err.
func (h *handler) reply(w http.ResponseWriter, r *http.Request, reply Reply, err error) {
	status := StatusOf(reply.Code)
	reply.Message = outcomes[refusal.Code(reply.Code)].message
	level := slog.LevelDebug
	if status >= 500 {
		level = slog.LevelError
	}
	h.log.Log(r.Context(), level, "card answer", "status", status, "code", reply.Code, "path", reply.Path, "err", err)
	body, merr := json.Marshal(reply)
	if merr != nil { // a Reply always marshals; say so rather than write half a body
		body = fmt.Appendf(nil, `{"code":%q}`, CodeInternal)
		status = http.StatusInternalServerError
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	_, _ = w.Write(append(body, '\n'))
}

// StatusOf returns the HTTP status of a Reply's code, the table of the
// package documentation: a refusal code the Resolver or the body's parser
// returns, one of the handler's own codes, or "" (200). Any other code is
// 500.
func StatusOf(code string) int {
	if o, ok := outcomes[refusal.Code(code)]; ok {
		return o.status
	}
	return http.StatusInternalServerError
}

// outcome is the status of a code and the handler's own words for it, the
// only text a Reply carries.
type outcome struct {
	status  int
	message string
}

// outcomes is the one mapping from code to status and message: the
// handler's own codes, then the refusal codes, each in status order. It is
// never written.
var outcomes = map[refusal.Code]outcome{
	CodeInvalidIdempotencyKey: {http.StatusBadRequest, "the Idempotency-Key header is required, 1 to 256 bytes"},
	CodeUnreadableBody:        {http.StatusBadRequest, "the request body could not be read"},
	CodeUnauthenticated:       {http.StatusUnauthorized, "the request is not authenticated"},
	CodeMethodNotAllowed:      {http.StatusMethodNotAllowed, "an answer is sent with POST"},
	CodeInternal:              {http.StatusInternalServerError, "the answer could not be processed"},

	"":                                {http.StatusOK, "the answer was stored"},
	refusal.CodeDuplicateAnswer:       {http.StatusOK, "this submission was already stored"},
	refusal.CodeInvalidCard:           {http.StatusBadRequest, "the body is not one card response"},
	refusal.CodeInvalidInput:          {http.StatusBadRequest, "the request holds text no store can hold (a NUL character, invalid UTF-8, U+0000 in a string)"},
	refusal.CodeUnauthorized:          {http.StatusForbidden, "the caller may not answer this card"},
	refusal.CodeCardNotFound:          {http.StatusNotFound, "no such card"},
	refusal.CodeAlreadyAnswered:       {http.StatusConflict, "the card was already answered"},
	refusal.CodeAnswerExpired:         {http.StatusConflict, "the card's deadline has passed"},
	refusal.CodeCardCancelled:         {http.StatusConflict, "the card was cancelled"},
	refusal.CodeCardSuperseded:        {http.StatusConflict, "the card was replaced by another card"},
	refusal.CodeStaleRevision:         {http.StatusConflict, "the card changed since it was shown"},
	refusal.CodeSchemaMismatch:        {http.StatusConflict, "the card's schema changed since the answer was checked"},
	refusal.CodeFrameTooLarge:         {http.StatusRequestEntityTooLarge, "the answer is too large"},
	refusal.CodeInvalidAnswer:         {http.StatusUnprocessableEntity, "the answer is not acceptable for this card"},
	refusal.CodeUnknownSchema:         {http.StatusInternalServerError, "the card's schema is not available"},
	refusal.CodeUnsupportedVersion:    {http.StatusInternalServerError, "the card is stored in a version this server does not read"},
	refusal.CodeNeedsReconciliation:   {http.StatusServiceUnavailable, "the outcome is unknown; repeat the request with the same Idempotency-Key"},
	refusal.CodeStoreUnavailable:      {http.StatusServiceUnavailable, "the card store is unavailable; repeat the request with the same Idempotency-Key"},
	refusal.CodeCheckpointWriteFailed: {http.StatusServiceUnavailable, "the answer was not stored; repeat the request with the same Idempotency-Key"},
}
