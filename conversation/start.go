package conversation

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"time"

	chatprotocol "github.com/Papercusp/chat-protocol-go"
	"github.com/Papercusp/chat-protocol-go/internal/reqbody"
	"github.com/Papercusp/chat-protocol-go/refusal"
	"github.com/Papercusp/chat-protocol-go/replay"
)

// StartRequest is the body of a start: {"text"}, the user's message.
type StartRequest struct {
	Text string `json:"text"`
}

// StartHandlerOptions configures [NewStartHandler]; Run is required.
type StartHandlerOptions struct {
	// Run starts the turn's producer for the turn the store just recorded
	// as running (the host's model loop, under its own context, never
	// r's): it returns once the producer is launched. An error ends the
	// turn failed in the store and is answered 503.
	Run func(ctx context.Context, r *http.Request, c Conversation, t Turn) error
	// Conversation names the conversation of a request; nil means the
	// path wildcard {conversation}.
	Conversation func(r *http.Request) string
	// MaxBodyBytes bounds the body, in bytes; 0 means 64 KiB.
	MaxBodyBytes int64
	// BodyTimeout bounds the reading of the body; 0 means 10 s, negative
	// none.
	BodyTimeout time.Duration
	// Logger receives each refusal with its cause; nil means none.
	Logger *slog.Logger
}

// StartHandler is the version-1 endpoint that starts a turn of a
// conversation (docs/contract.md section 20.4); make one with
// [NewStartHandler]. It is safe for concurrent use.
type StartHandler struct {
	gate *Gate
	opts StartHandlerOptions
	body reqbody.Limits
}

// NewStartHandler returns the [StartHandler] of g, mounted on a pattern
// naming the conversation, without a method:
//
//	mux.Handle("/conversations/{conversation}/turns", h)
//
// A start is a POST of {"text"} as application/json (section 12.6): the
// caller from g's Access, before the body is read (none: 401
// unauthenticated); the body read strictly (400 invalid-input, 413
// frame-too-large); [ActionStart] allowed on the conversation (an unknown
// conversation and a denial alike: 404 turn-not-found); [Store.StartTurn]
// (409 turn-running); then Run. It answers 201 with
// {"conversationId","turnId","position"}. An Idempotency-Key header is the
// start's request key ([TurnStart], at most [MaxIDBytes]; a key no store
// can hold is 400 invalid-input): the same key again answers 200 with the
// turn it started, and Run is not called; with a [Settling] store, 410
// stale-cursor (with the bounds) when that turn ended and the window
// holds nothing of it. It returns an error when g, its
// Store or Access, or opts.Run is nil.
func NewStartHandler(g *Gate, opts *StartHandlerOptions) (*StartHandler, error) {
	if g == nil || g.Store == nil || g.Access == nil || opts == nil || opts.Run == nil {
		return nil, errors.New("conversation: NewStartHandler needs a Gate with a Store and an Access, and StartHandlerOptions.Run")
	}
	h := &StartHandler{gate: g, opts: *opts, body: reqbody.Limits{MaxBytes: opts.MaxBodyBytes, Timeout: opts.BodyTimeout}}
	if h.body.MaxBytes == 0 {
		h.body.MaxBytes = 64 << 10
	}
	if h.opts.Conversation == nil {
		h.opts.Conversation = func(r *http.Request) string { return r.PathValue("conversation") }
	}
	if h.opts.Logger == nil {
		h.opts.Logger = slog.New(slog.DiscardHandler)
	}
	return h, nil
}

// startAnswer is a start's 201 body.
type startAnswer struct {
	ConversationID string `json:"conversationId"`
	TurnID         string `json:"turnId"`
	Position       int    `json:"position"`
}

// ServeHTTP answers one request: a start, or a refusal.
func (h *StartHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		h.refuse(w, r, refusal.New(refusal.CodeMethodNotAllowed, "", "a turn is started with POST"))
		return
	}
	ctx := r.Context()
	caller, err := h.gate.Access.Caller(r)
	if err != nil {
		h.refuse(w, r, refusal.Wrap(refusal.CodeUnauthenticated, "", "no session", err))
		return
	}
	if !reqbody.SameSite(r.Header) {
		h.refuse(w, r, refusal.New(refusal.CodeUnsupportedMediaType, "", "not a same-site request"))
		return
	}
	body, err := reqbody.Read(w, r, h.body)
	var req StartRequest
	if err == nil {
		err = reqbody.Unmarshal(body, &req)
	}
	if err != nil {
		h.refuse(w, r, err)
		return
	}
	start := TurnStart{UserText: req.Text, Key: r.Header.Get("Idempotency-Key")}
	c, t, started, err := h.gate.StartTurn(ctx, caller, h.opts.Conversation(r), start, false)
	if err != nil {
		h.refuse(w, r, err)
		return
	}
	status := http.StatusOK
	if started {
		if err := h.opts.Run(ctx, r, c, t); err != nil {
			h.refuse(w, r, NotStarted(ctx, h.gate.Store, c.ID, t.ID, err))
			return
		}
		status = http.StatusCreated
	}
	out, _ := json.Marshal(startAnswer{ConversationID: c.ID, TurnID: t.ID, Position: t.Position}) // strings and an int always encode
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write(out)
}

// NotStarted ends, in store, a turn whose producer did not start, with the
// reduced state of a turn that started and failed with the reason "the
// turn could not start", so that the conversation has no running turn
// that nothing runs. It returns a store-unavailable refusal wrapping
// cause and any error of the end, for the caller to answer.
func NotStarted(ctx context.Context, store Store, conversationID, turnID string, cause error) error {
	if err := store.EndTurn(context.WithoutCancel(ctx), conversationID, turnID, notStarted(conversationID, turnID)); err != nil {
		cause = errors.Join(cause, err)
	}
	return refusal.Wrap(refusal.CodeStoreUnavailable, "", "the turn could not start", cause)
}

// notStarted is the reduced state of a turn whose producer did not start:
// started, then failed with the reason "the turn could not start".
func notStarted(conversationID, turnID string) []byte {
	s := chatprotocol.NewChatStateV1(conversationID)
	for i, ev := range []chatprotocol.Event{
		&chatprotocol.LifecycleEvent{Status: chatprotocol.LifecycleStarted},
		&chatprotocol.LifecycleEvent{Status: chatprotocol.LifecycleFailed, Reason: "the turn could not start"},
	} {
		seq := int64(i + 1)
		_ = s.Apply(chatprotocol.ChatEventEnvelope{ConversationID: conversationID, TurnID: turnID,
			EventID: turnID + ":" + string(rune('0'+seq)), Seq: seq, At: time.Now().UTC().Format("2006-01-02T15:04:05.000Z"), Event: ev})
	}
	t, _ := s.Turn(turnID)
	b, _ := t.MarshalJSON()
	return b
}

// refuse answers err with its code's status and the endpoint's words.
func (h *StartHandler) refuse(w http.ResponseWriter, r *http.Request, err error) {
	code := refusal.CodeOf(err)
	msg := map[refusal.Code]string{
		refusal.CodeMethodNotAllowed:     "a turn is started with POST",
		refusal.CodeUnauthenticated:      "no session",
		refusal.CodeUnsupportedMediaType: "a start is sent as application/json",
		refusal.CodeFrameTooLarge:        "the body is over its limit",
		refusal.CodeUnreadableBody:       "the body could not be read",
		refusal.CodeInvalidInput:         "the body is not a start's JSON",
		refusal.CodeTurnNotFound:         "no such turn",
		refusal.CodeTurnRunning:          "a turn of the conversation is running",
		refusal.CodeStaleCursor:          "the window no longer holds the turn; read the conversation's history",
	}[code]
	if msg == "" {
		code, msg = refusal.CodeStoreUnavailable, "the turn could not start; repeat the request"
		w.Header().Set("Retry-After", "1")
	}
	status := refusal.HTTPStatus(code)
	level := slog.LevelDebug
	if status >= 500 {
		level = slog.LevelError
	}
	h.opts.Logger.Log(r.Context(), level, "turn start refused", "status", status, "code", code, "err", err)
	body := refusal.Body{Code: code, Message: msg}
	if code == refusal.CodeInvalidInput {
		body.Path = refusalPath(err)
	}
	if ce, ok := errors.AsType[*replay.CursorError](err); ok && code == refusal.CodeStaleCursor {
		body.Lower, body.Latest = &ce.Bounds.Lower, &ce.Bounds.Latest
	}
	refusal.WriteHTTP(w, status, body)
}

// refusalPath is the JSON pointer err carries, or "".
func refusalPath(err error) string {
	if re, ok := errors.AsType[*refusal.Error](err); ok {
		return re.Path
	}
	return ""
}
