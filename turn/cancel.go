package turn

import (
	"context"
	"errors"
	"log/slog"
	"net/http"

	"github.com/Papercusp/chat-protocol-go/internal/reqbody"
	"github.com/Papercusp/chat-protocol-go/recovery"
	"github.com/Papercusp/chat-protocol-go/refusal"
	"github.com/Papercusp/chat-protocol-go/replay"
)

// CancelHandlerOptions configures [NewCancelHandler]. The endpoint asks
// recovery's Authorizer for [recovery.ActionCancel], through
// [recovery.TurnRecovery.Cancel]; for a turn that is not running, also
// for [recovery.ActionRead], through [recovery.TurnRecovery.Load], to tell
// an ended turn (409) from an unknown one (404).
type CancelHandlerOptions struct {
	// Caller returns the principal of the request, from the host's own
	// session (never from the body): the caller recovery's Authorizer
	// checks. An error is answered as an unknown turn. Required.
	Caller func(r *http.Request) (string, error)
	// Key names the turn a request cancels; nil means the path wildcards
	// {conversation} and {turn}. An error is answered as an unknown turn.
	Key func(r *http.Request) (recovery.TurnRef, error)
	// Logger receives each refusal with its cause; nil means none.
	Logger *slog.Logger
}

// CancelHandler is the endpoint that cancels a running turn for an
// authorized caller (docs/contract.md section 16.4); make one with
// [NewCancelHandler]. It is safe for concurrent use.
type CancelHandler struct {
	rec    *recovery.TurnRecovery
	caller func(*http.Request) (string, error)
	key    func(*http.Request) (recovery.TurnRef, error)
	log    *slog.Logger
}

// NewCancelHandler returns the [CancelHandler] of rec, mounted on a pattern
// naming the turn:
//
//	mux.Handle("/conversations/{conversation}/turns/{turn}/cancel", h) // any method: a wrong one gets the JSON 405
//
// A cancel is a POST that no cross-site form can send (section 12.6): with
// Content-Type application/json, or without a Content-Type and with the
// header X-Requested-With (any value). It calls
// [recovery.TurnRecovery.Cancel], which commits the cancellation, then
// the abort hook ([Runs.Abort]): the turn's Context ends and its
// Producer's End writes lifecycle cancelled. The answers: 202 when the
// turn is cancelled, also again; 404 turn-not-found for an unknown turn, a
// caller without a session or without the right to cancel it; 409
// turn-not-running after the turn completed or failed, changing nothing;
// 405 for another method; 415 unsupported-media-type for a request a
// cross-site page could send; 503 store-unavailable,
// checkpoint-write-failed or needs-reconciliation (repeat the request).
// Refusals carry {"code","message"}. A client that goes away is never a
// cancel. It asks recovery's Authorizer for cancel, and for read of a turn
// that is not running ([CancelHandlerOptions]). It returns an error when
// rec or opts.Caller is nil.
func NewCancelHandler(rec *recovery.TurnRecovery, opts *CancelHandlerOptions) (*CancelHandler, error) {
	if rec == nil || opts == nil || opts.Caller == nil {
		return nil, errors.New("turn: NewCancelHandler needs a TurnRecovery and CancelHandlerOptions.Caller")
	}
	h := &CancelHandler{rec: rec, caller: opts.Caller, key: opts.Key, log: opts.Logger}
	if h.key == nil {
		h.key = func(r *http.Request) (recovery.TurnRef, error) {
			return recovery.TurnRef{Conversation: r.PathValue("conversation"), Turn: r.PathValue("turn")}, nil
		}
	}
	if h.log == nil {
		h.log = slog.New(slog.DiscardHandler)
	}
	return h, nil
}

// ServeHTTP answers one request: a cancel, or a refusal.
func (h *CancelHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		refusal.WriteHTTP(w, http.StatusMethodNotAllowed, refusal.Body{Code: refusal.CodeMethodNotAllowed, Message: "a turn is cancelled with POST"})
		return
	}
	ctx := r.Context()
	caller, err := h.caller(r)
	if err != nil {
		h.refuse(w, r, refusal.Wrap(refusal.CodeTurnNotFound, "", "no session", err))
		return
	}
	if !reqbody.SameSite(r.Header, reqbody.RequestedWith) {
		h.refuse(w, r, refusal.New(refusal.CodeUnsupportedMediaType, "", "not a same-site request"))
		return
	}
	turn, err := h.key(r)
	if err != nil {
		h.refuse(w, r, refusal.Wrap(refusal.CodeTurnNotFound, "", "no turn", err))
		return
	}
	err = h.rec.Cancel(ctx, caller, turn)
	if errors.Is(err, refusal.ErrTurnNotRunning) {
		// Never started (unknown), or ended: Load tells, for this caller.
		switch rec, lerr := h.rec.Load(ctx, caller, turn); {
		case lerr == nil && rec.Status.Terminal():
		case lerr == nil, errors.Is(lerr, refusal.ErrTurnNotRunning), errors.Is(lerr, refusal.ErrUnauthorized):
			err = refusal.Wrap(refusal.CodeTurnNotFound, "", "no such turn", err)
		default:
			err = lerr // the store failed: not an answer about the turn
		}
	}
	if err != nil {
		h.refuse(w, r, err)
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusAccepted)
}

// Cancel cancels key's turn for the caller the endpoint's Caller reads
// from r, through [recovery.TurnRecovery.Cancel] as ServeHTTP does (the
// commit, then the abort hook), without reading r's body or checking its
// Content-Type, which the endpoint that calls it checks: it is the Cancel
// hook of the front-end bridges, packages uistream and agui
// (docs/contract.md sections 16.4 and 18). Errors: turn-not-found when
// Caller fails; recovery's refusals (unauthorized for a caller without
// the right to cancel; turn-not-running for a turn that is not running,
// ended or unknown); the store's.
func (h *CancelHandler) Cancel(ctx context.Context, r *http.Request, key replay.Key) error {
	caller, err := h.caller(r)
	if err != nil {
		return refusal.Wrap(refusal.CodeTurnNotFound, "", "no session", err)
	}
	return h.rec.Cancel(ctx, caller, recovery.TurnRef{Conversation: key.ConversationID, Turn: key.TurnID})
}

// refuse answers err by its code, logging the cause.
func (h *CancelHandler) refuse(w http.ResponseWriter, r *http.Request, err error) {
	status, code, msg := http.StatusServiceUnavailable, refusal.CodeStoreUnavailable, "the cancellation could not be stored; repeat the request"
	switch c := refusal.CodeOf(err); c {
	case refusal.CodeTurnNotFound, refusal.CodeUnauthorized, refusal.CodeInvalidTurn, refusal.CodeInvalidInput:
		status, code, msg = http.StatusNotFound, refusal.CodeTurnNotFound, "no such turn"
	case refusal.CodeTurnNotRunning:
		status, code, msg = http.StatusConflict, c, "the turn has ended; nothing was changed"
	case refusal.CodeUnsupportedMediaType:
		status, code, msg = http.StatusUnsupportedMediaType, c, "a cancel is sent as application/json, or with an X-Requested-With header"
	case refusal.CodeNeedsReconciliation, refusal.CodeCheckpointWriteFailed:
		code = c
	}
	if status == http.StatusServiceUnavailable {
		w.Header().Set("Retry-After", "1")
	}
	level := slog.LevelDebug
	if status >= 500 {
		level = slog.LevelError
	}
	h.log.Log(r.Context(), level, "turn cancel refused", "status", status, "code", code, "err", err)
	refusal.WriteHTTP(w, status, refusal.Body{Code: code, Message: msg})
}
