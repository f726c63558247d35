package bridge

import (
	"context"
	"errors"
	"net/http"

	"github.com/Papercusp/chat-protocol-go/interactions"
	"github.com/Papercusp/chat-protocol-go/internal/reqbody"
	"github.com/Papercusp/chat-protocol-go/refusal"
	"github.com/Papercusp/chat-protocol-go/replay"
	"github.com/Papercusp/chat-protocol-go/serve"
)

// Answers lands card answers a bridge's request carried through a
// Resolver, with the caller from the host's session, never from the body
// (docs/contract.md sections 13.2 and 18). One request's Answers keeps the
// caller Authenticate found, for Land.
type Answers struct {
	Resolver *interactions.Resolver
	Caller   func(r *http.Request) (interactions.Caller, error)
	caller   *interactions.Caller
}

// Authenticate asks Caller, when a has one, for r's caller, before any
// byte of the body is read (docs/contract.md section 18.3): it answers
// w 401 unauthenticated and reports false when Caller fails, and keeps
// the caller for Land otherwise. It is Start's pre-check.
func (a *Answers) Authenticate(w http.ResponseWriter, r *http.Request) bool {
	if a.Caller == nil {
		return true
	}
	caller, err := a.Caller(r)
	if err != nil {
		serve.Refuse(w, refusal.CodeUnauthenticated, "no session")
		return false
	}
	a.caller = &caller
	return true
}

// Land lands each submission on its card, in order, and returns the
// Resolver's results, a repeated submission's ([refusal.ErrDuplicateAnswer])
// included; on a refusal it answers w (the status of [refusal.HTTPStatus],
// 401 for a Caller error, 400 when a has no Resolver) and reports false,
// the submissions before the refused one landed. The caller is the one
// Authenticate kept, else Caller's. The caller checks the whole request
// first (docs/contract.md section 18.2).
func Land(e *serve.Engine, w http.ResponseWriter, r *http.Request, a *Answers, keys []interactions.Key, subs []interactions.Submission) ([]interactions.Result, bool) {
	caller, ok := a.session(w, r)
	if !ok {
		return nil, false
	}
	ctx, cancel := e.Bounded(r.Context())
	defer cancel()
	results := make([]interactions.Result, len(subs))
	for i, sub := range subs {
		res, err := a.Resolver.Answer(ctx, caller, keys[i], sub)
		if err != nil && !errors.Is(err, refusal.ErrDuplicateAnswer) {
			refuseAnswer(w, err)
			return nil, false
		}
		results[i] = res
	}
	return results, true
}

// Read reads each card under keys for the caller Authenticate kept (else
// Caller's), as [interactions.Resolver.Read] does: the card is returned only
// to the caller it is bound to. On a refusal it answers w as Land does
// (card-not-found for a missing or foreign card alike) and reports false.
// A bridge reads the cards that answers in a request's messages name, to
// learn their kind, before it lands them (docs/contract.md section 18.1).
func Read(e *serve.Engine, w http.ResponseWriter, r *http.Request, a *Answers, keys []interactions.Key) ([]interactions.View, bool) {
	caller, ok := a.session(w, r)
	if !ok {
		return nil, false
	}
	ctx, cancel := e.Bounded(r.Context())
	defer cancel()
	views := make([]interactions.View, len(keys))
	for i, key := range keys {
		view, err := a.Resolver.Read(ctx, caller, key)
		if err != nil {
			refuseAnswer(w, err)
			return nil, false
		}
		views[i] = view
	}
	return views, true
}

// session returns the caller Authenticate kept, else Caller's, or answers
// w (400 without a Resolver, 401 for a Caller error) and reports false.
func (a *Answers) session(w http.ResponseWriter, r *http.Request) (interactions.Caller, bool) {
	if a.Resolver == nil || a.Caller == nil {
		serve.Refuse(w, refusal.CodeInvalidInput, "this endpoint takes no card answers")
		return interactions.Caller{}, false
	}
	if a.caller == nil && !a.Authenticate(w, r) {
		return interactions.Caller{}, false
	}
	return *a.caller, true
}

// refuseAnswer answers a Resolver's refusal with its code (the status of
// [refusal.HTTPStatus]), store-unavailable for an error without one.
func refuseAnswer(w http.ResponseWriter, err error) {
	code := refusal.CodeOf(err)
	if code == "" {
		code = refusal.CodeStoreUnavailable
	}
	serve.Refuse(w, code, "the card answer was refused")
}

// Start is a bridge's POST up to its stream (docs/contract.md section
// 18.3): it runs pre, when set (which answers the request and reports
// false on a refusal: [Answers.Authenticate]), before any byte of the body
// is read; checks the body is sent as application/json
// ([reqbody.SameSite]); reads it within limits ([reqbody.Read]), parses it, lands the answers it carries with
// land (which answers the request and reports false on a refusal), and
// starts the turn with start, bounded by the window timeout. It returns
// the turn's key and the parsed request, or answers the request and
// reports false: 503 when closing, pre's answer, 415 for a Content-Type
// other than JSON or none, 413 or 400 for the body, a hook's error as
// [RefuseHook] answers it.
func Start[T any](e *serve.Engine, w http.ResponseWriter, r *http.Request, limits serve.BodyLimits, pre func(http.ResponseWriter, *http.Request) bool,
	parse func([]byte) (T, error), land func(T) bool, start func(context.Context, T) (replay.Key, error)) (replay.Key, T, bool) {
	var req T
	if e.Closed() {
		e.Unavailable(w, msgUnavailable)
		return replay.Key{}, req, false
	}
	if pre != nil && !pre(w, r) {
		return replay.Key{}, req, false
	}
	if !reqbody.SameSite(r.Header) { // none included: no simple cross-site request gets through
		serve.Refuse(w, refusal.CodeUnsupportedMediaType, "the body is sent as application/json")
		return replay.Key{}, req, false
	}
	body, err := reqbody.Read(w, r, reqbody.Limits{MaxBytes: limits.MaxBodyBytes, Timeout: limits.BodyTimeout})
	if err != nil {
		RefuseBody(w, err)
		return replay.Key{}, req, false
	}
	if req, err = parse(body); err != nil {
		serve.Refuse(w, refusal.CodeInvalidInput, err.Error())
		return replay.Key{}, req, false
	}
	if !land(req) {
		return replay.Key{}, req, false
	}
	ctx, cancel := e.Bounded(r.Context())
	key, err := start(ctx, req)
	cancel()
	if err != nil {
		RefuseHook(e, w, r, "start", err)
		return replay.Key{}, req, false
	}
	return key, req, true
}
