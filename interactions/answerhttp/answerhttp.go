// Package answerhttp serves a person's answer to a card over HTTP: an
// [http.Handler] over an [interactions.Resolver] (docs/contract.md sections 3
// and 13) that reads the request as strictly as the wire contract reads a
// frame and answers every outcome with one status and one JSON body.
//
// It is a package of its own because it reads the body with
// [chatprotocol.ParseCardResponse], and interactions imports neither the
// root package nor its validator.
//
// # The request
//
// Mount the handler under a pattern without a method, with the conversation
// and card in the path (the default [HandlerOptions.Key] reads them):
//
//	mux.Handle("/conversations/{conversation}/cards/{card}/answer", h)
//
// so that a method other than POST gets the JSON 405 below. Under a
// "POST /…" pattern, [http.ServeMux] answers other methods itself, in plain
// text, before the handler runs.
//
// The caller comes from [HandlerOptions.Caller] (the host's session
// lookup, never the body); the submission id from the Idempotency-Key
// header (1 to [interactions.MaxIDBytes] bytes; a retry repeats it); the
// body, at most [HandlerOptions.MaxBodyBytes] read within
// [HandlerOptions.BodyTimeout], is one CardResponse read with
// [chatprotocol.ParseCardResponse], in which no object holds two names
// that differ only by case. A body is JSON: a Content-Type other than
// application/json (parameters allowed, a charset only if utf-8, any case)
// is refused; a request without a Content-Type is read as JSON when it
// carries an Idempotency-Key, which takes a CORS preflight (the bridges,
// which have none, refuse it: docs/contract.md sections 12.6 and 18.3).
//
// # The response
//
// Every response is a [refusal.Body] written by [refusal.WriteHTTP]: 200 with
// code "" for a stored answer (with the record's status and revision, and
// reconciled after a lost acknowledgement), otherwise the status
// [refusal.HTTPStatus] gives its code (docs/contract.md section 12.5):
// duplicate-answer (200, with the stored record), method-not-allowed (405,
// with Allow: POST), unauthenticated (401), unsupported-media-type (415),
// invalid-idempotency-key, unreadable-body, invalid-card (with the path),
// invalid-input, card-not-found, frame-too-large, and every refusal of
// Resolver.Answer: invalid-answer (with the path and, for a schema rule,
// the keyword of an error in its chain with a Keyword() string method, as
// interactions/jsonschema's has), idempotency-key-reused (this Idempotency-Key already
// answered the card with another body), already-answered and the other
// late answers, unauthorized, the store's 503s (the client may repeat the
// request with the same Idempotency-Key), and internal for an error
// without a code. A request without a Content-Type and without an
// Idempotency-Key is unsupported-media-type.
//
// # Security considerations
//
// A refusal's Message and its cause wrap the store's own error text (a
// PostgreSQL message included), so the handler never writes either: a
// body carries only the code, the JSON pointer of the refusal, the
// failing schema keyword, and a message the handler chose for the code.
// [HandlerOptions.Logger] receives the whole error. Authority comes only
// from [HandlerOptions.Caller] and the store. A cross-site page cannot
// post an answer without a CORS preflight: an HTML form always sends a
// form Content-Type, refused here, and the Idempotency-Key header is not
// one a simple request may carry. A body that another reader would read
// otherwise (a duplicated name, a name in another case) is refused, and a
// client that sends its body slowly holds the handler at most
// [HandlerOptions.BodyTimeout].
package answerhttp

import (
	"errors"
	"log/slog"
	"net/http"
	"time"

	chatprotocol "github.com/Papercusp/chat-protocol-go"
	"github.com/Papercusp/chat-protocol-go/interactions"
	"github.com/Papercusp/chat-protocol-go/internal/reqbody"
	"github.com/Papercusp/chat-protocol-go/refusal"
)

// DefaultMaxBodyBytes is the default of [HandlerOptions.MaxBodyBytes]: 64
// KiB.
const DefaultMaxBodyBytes = 64 << 10

// HandlerOptions configures a [Handler]; Caller is required. The handler
// asks no recovery Authorizer: who may answer a card is the card's
// binding, checked by [interactions.Resolver.Answer] against the store
// (docs/contract.md section 13.2).
type HandlerOptions struct {
	// Caller returns the caller the host authenticated for the request,
	// from its own session (a cookie, a bearer token), never from the body.
	// An error is answered 401 unauthenticated and logged, never shown. It
	// is asked before anything else of the request is read.
	Caller func(*http.Request) (interactions.Caller, error)
	// Key returns the card the request answers; nil means
	// r.PathValue("conversation") and r.PathValue("card"). An error is
	// answered 404 card-not-found.
	Key func(*http.Request) (interactions.Key, error)
	// MaxBodyBytes bounds the body, in bytes; 0 means [DefaultMaxBodyBytes]
	// (64 KiB). A longer body is answered 413 frame-too-large.
	MaxBodyBytes int64
	// BodyTimeout bounds the reading of the body, from its start; 0 means
	// 10 s, negative none. A body not read in time is answered 400
	// unreadable-body.
	BodyTimeout time.Duration
	// Logger receives every refusal and error with its full text, at level
	// Error for a 5xx status and Debug otherwise; nil means no logging.
	Logger *slog.Logger
}

// Handler answers cards through a Resolver, as the package documentation
// describes; make one with [NewHandler]. It is safe for concurrent use.
type Handler struct {
	res    *interactions.Resolver
	caller func(*http.Request) (interactions.Caller, error)
	key    func(*http.Request) (interactions.Key, error)
	body   reqbody.Limits
	log    *slog.Logger
}

// NewHandler returns the Handler that answers cards through res. It
// returns an error (not a refusal) when res or opts.Caller is nil or
// MaxBodyBytes is negative.
func NewHandler(res *interactions.Resolver, opts *HandlerOptions) (*Handler, error) {
	if res == nil || opts == nil || opts.Caller == nil {
		return nil, errors.New("answerhttp: NewHandler needs a Resolver and HandlerOptions.Caller")
	}
	if opts.MaxBodyBytes < 0 {
		return nil, errors.New("answerhttp: negative MaxBodyBytes")
	}
	h := &Handler{res: res, caller: opts.Caller, key: opts.Key, log: opts.Logger,
		body: reqbody.Limits{MaxBytes: opts.MaxBodyBytes, Timeout: opts.BodyTimeout}}
	if h.key == nil {
		h.key = pathKey
	}
	if h.body.MaxBytes == 0 {
		h.body.MaxBytes = DefaultMaxBodyBytes
	}
	if h.log == nil {
		h.log = slog.New(slog.DiscardHandler)
	}
	return h, nil
}

// pathKey is the default HandlerOptions.Key.
func pathKey(r *http.Request) (interactions.Key, error) {
	return interactions.Key{Conversation: r.PathValue("conversation"), CorrelationID: r.PathValue("card")}, nil
}

// ServeHTTP answers one request: a POST of an answer, or the JSON 405.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		h.refuse(w, r, refusal.CodeMethodNotAllowed, nil)
		return
	}
	caller, err := h.caller(r)
	if err != nil {
		h.refuse(w, r, refusal.CodeUnauthenticated, err)
		return
	}
	if !reqbody.SameSite(r.Header, "Idempotency-Key") { // none is read as JSON with the key (docs/contract.md section 12.6)
		h.refuse(w, r, refusal.CodeUnsupportedMediaType, nil)
		return
	}
	id := r.Header.Get("Idempotency-Key")
	if id == "" || len(id) > interactions.MaxIDBytes {
		h.refuse(w, r, refusal.CodeInvalidIdempotencyKey, nil)
		return
	}
	key, err := h.key(r)
	if err != nil {
		h.refuse(w, r, refusal.CodeCardNotFound, err)
		return
	}
	data, err := reqbody.Read(w, r, h.body)
	if err != nil {
		h.refuse(w, r, refusal.CodeOf(err), err) // frame-too-large or unreadable-body
		return
	}
	resp, err := chatprotocol.ParseCardResponse(data)
	if err == nil {
		err = caseVariants(data)
	}
	if err != nil {
		h.answered(w, r, interactions.Result{}, err)
		return
	}
	out, err := h.res.Answer(r.Context(), caller, key, interactions.Submission{ID: id, Response: resp})
	h.answered(w, r, out, err)
}

// caseVariants refuses, as invalid-card at the name's pointer, a card
// response (which ParseCardResponse read) holding an object with two names
// that differ only by case, among members it passes over.
func caseVariants(data []byte) error {
	err := reqbody.CheckNames(data)
	if e, ok := errors.AsType[*refusal.Error](err); ok {
		return refusal.Wrap(refusal.CodeInvalidCard, e.Path, "member name differs from another name of the object only by case", err)
	}
	return err
}

// refuse answers a request turned away before the Resolver saw it, with
// code; err, the cause, goes to the log only.
func (h *Handler) refuse(w http.ResponseWriter, r *http.Request, code refusal.Code, err error) {
	h.reply(w, r, refusal.HTTPStatus(code), refusal.Body{Code: code}, err)
}

// answered answers the outcome of a submission: a stored answer (err nil,
// 200) or a refusal, by its code.
func (h *Handler) answered(w http.ResponseWriter, r *http.Request, out interactions.Result, err error) {
	body := refusal.BodyOf(err)
	status := http.StatusOK
	if err != nil {
		status = refusal.HTTPStatus(body.Code)
	}
	if body.Code == refusal.CodeInvalidAnswer {
		if k, ok := errors.AsType[keyworder](err); ok {
			body.Keyword = k.Keyword()
		}
	}
	if out.Record.Version != 0 { // set with a stored answer and with duplicate-answer
		body.Status, body.Revision, body.Reconciled = string(out.Record.Status), out.Record.Revision, out.Reconciled
	}
	h.reply(w, r, status, body, err)
}

// keyworder is an error that names the schema keyword that refused a
// value.
type keyworder interface {
	error
	Keyword() string
}

// reply writes one response: status, body with the handler's message for
// its code, and a log record of err.
func (h *Handler) reply(w http.ResponseWriter, r *http.Request, status int, body refusal.Body, err error) {
	body.Message = message(body.Code)
	level := slog.LevelDebug
	if status >= 500 {
		level = slog.LevelError
	}
	h.log.Log(r.Context(), level, "card answer", "status", status, "code", body.Code, "path", body.Path, "err", err)
	_ = refusal.WriteHTTP(w, status, body) // a client gone away: nothing more to tell it
}

// message is the handler's own words for a code, the only text a body
// carries.
func message(code refusal.Code) string {
	switch code {
	case "":
		return "the answer was stored"
	case refusal.CodeDuplicateAnswer:
		return "this submission was already stored"
	case refusal.CodeMethodNotAllowed:
		return "an answer is sent with POST"
	case refusal.CodeUnauthenticated:
		return "the request is not authenticated"
	case refusal.CodeUnsupportedMediaType:
		return "the body is sent as application/json"
	case refusal.CodeInvalidIdempotencyKey:
		return "the Idempotency-Key header is required, 1 to 256 bytes"
	case refusal.CodeUnreadableBody:
		return "the request body could not be read"
	case refusal.CodeInvalidCard:
		return "the body is not one card response"
	case refusal.CodeInvalidInput:
		return "the request holds text no store can hold (a NUL character, invalid UTF-8, U+0000 in a string)"
	case refusal.CodeUnauthorized:
		return "the caller may not answer this card"
	case refusal.CodeCardNotFound:
		return "no such card"
	case refusal.CodeIdempotencyKeyReused:
		return "this Idempotency-Key already answered the card with another body"
	case refusal.CodeAlreadyAnswered:
		return "the card was already answered"
	case refusal.CodeAnswerExpired:
		return "the card's deadline has passed"
	case refusal.CodeCardCancelled:
		return "the card was cancelled"
	case refusal.CodeCardSuperseded:
		return "the card was replaced by another card"
	case refusal.CodeStaleRevision:
		return "the card changed since it was shown"
	case refusal.CodeSchemaMismatch:
		return "the card's schema changed since the answer was checked"
	case refusal.CodeFrameTooLarge:
		return "the answer is too large"
	case refusal.CodeInvalidAnswer:
		return "the answer is not acceptable for this card"
	case refusal.CodeUnknownSchema:
		return "the card's schema is not available"
	case refusal.CodeUnsupportedVersion:
		return "the card is stored in a version this server does not read"
	case refusal.CodeNeedsReconciliation:
		return "the outcome is unknown; repeat the request with the same Idempotency-Key"
	case refusal.CodeStoreUnavailable:
		return "the card store is unavailable; repeat the request with the same Idempotency-Key"
	case refusal.CodeCheckpointWriteFailed:
		return "the answer was not stored; repeat the request with the same Idempotency-Key"
	}
	return "the answer could not be processed"
}
