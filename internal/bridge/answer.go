package bridge

import (
	"context"
	"errors"
	"net/http"

	"github.com/Papercusp/chat-protocol-go/interactions"
	"github.com/Papercusp/chat-protocol-go/internal/mediatype"
	"github.com/Papercusp/chat-protocol-go/refusal"
	"github.com/Papercusp/chat-protocol-go/replay"
	"github.com/Papercusp/chat-protocol-go/serve"
)

// Answers lands card answers a bridge's request carried through a
// Resolver, with the caller from the host's session, never from the body
// (docs/contract.md sections 13.2 and 18).
type Answers struct {
	Resolver *interactions.Resolver
	Caller   func(r *http.Request) (interactions.Caller, error)
}

// Land lands each submission on its card, in order, and returns the
// Resolver's results, a repeated submission's ([refusal.ErrDuplicateAnswer])
// included; on a refusal it answers w (the status of [refusal.HTTPStatus],
// 401 for a Caller error, 400 when a has no Resolver) and reports false,
// the submissions before the refused one landed. The caller checks the
// whole request first (docs/contract.md section 18.2).
func Land(e *serve.Engine, w http.ResponseWriter, r *http.Request, a Answers, keys []interactions.Key, subs []interactions.Submission) ([]interactions.Result, bool) {
	if a.Resolver == nil {
		serve.Refuse(w, refusal.CodeInvalidInput, "this endpoint takes no card answers")
		return nil, false
	}
	caller, err := a.Caller(r)
	if err != nil {
		serve.Refuse(w, refusal.CodeUnauthenticated, "no session")
		return nil, false
	}
	ctx, cancel := e.Bounded(r.Context())
	defer cancel()
	results := make([]interactions.Result, len(subs))
	for i, sub := range subs {
		res, err := a.Resolver.Answer(ctx, caller, keys[i], sub)
		if err != nil && !errors.Is(err, refusal.ErrDuplicateAnswer) {
			code := refusal.CodeOf(err)
			if code == "" {
				code = refusal.CodeStoreUnavailable
			}
			serve.Refuse(w, code, "the card answer was refused")
			return nil, false
		}
		results[i] = res
	}
	return results, true
}

// Start is a bridge's POST up to its stream (docs/contract.md section
// 18.3): it checks the body is sent as application/json, reads it within
// limit, parses it, lands the answers it carries with land (which answers
// the request and reports false on a refusal), and starts the turn with
// start, bounded by the window timeout. It returns the turn's key and the
// parsed request, or answers the request and reports false: 503 when
// closing, 415 for a Content-Type other than JSON or none, 413 or 400 for
// the body, a hook's error as [RefuseHook] answers it.
func Start[T any](e *serve.Engine, w http.ResponseWriter, r *http.Request, limit int64, parse func([]byte) (T, error),
	land func(T) bool, start func(context.Context, T) (replay.Key, error)) (replay.Key, T, bool) {
	var req T
	if e.Closed() {
		e.Unavailable(w, msgUnavailable)
		return replay.Key{}, req, false
	}
	if mediatype.Of(r.Header) != mediatype.ApplicationJSON { // none included: no simple cross-site request gets through
		serve.Refuse(w, refusal.CodeUnsupportedMediaType, "the body is sent as application/json")
		return replay.Key{}, req, false
	}
	body, err := ReadBody(r, limit)
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
