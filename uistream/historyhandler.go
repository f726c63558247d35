package uistream

import (
	"errors"
	"log/slog"
	"net/http"

	"github.com/Papercusp/chat-protocol-go/conversation"
	"github.com/Papercusp/chat-protocol-go/refusal"
	"github.com/Papercusp/chat-protocol-go/serve"
)

// HistoryHandlerOptions configures [NewHistoryHandler]; the zero value is
// ready.
type HistoryHandlerOptions struct {
	// ChatID names the chat of a request; nil means the path wildcard
	// {chatId}.
	ChatID func(r *http.Request) string
	// Logger receives each store failure; nil means none.
	Logger *slog.Logger
}

// HistoryHandler answers a chat's history as the ai package's UIMessage[]
// ([HistoryMessages]), what a page gives useChat as its initial messages
// (docs/contract.md section 20.3); make one with [NewHistoryHandler]. It
// is safe for concurrent use.
type HistoryHandler struct {
	gate *conversation.Gate
	opts HistoryHandlerOptions
}

// NewHistoryHandler returns the [HistoryHandler] of g, mounted on a
// pattern naming the chat, without a method:
//
//	mux.Handle("/api/chat/{chatId}/messages", h)
//
// A GET (or HEAD) asks g for [conversation.ActionRead] on the chat
// ([conversation.Gate.ReadHistory]) and answers 200 with the UIMessage[]
// JSON, Cache-Control: no-store; no session, an unknown chat and a caller
// the rule refuses alike are 404 turn-not-found, the same status, headers
// and body; a store failure is 503 store-unavailable; another method is
// 405 method-not-allowed with Allow: GET, HEAD. It returns an error when
// g, its Store or its Access is nil.
func NewHistoryHandler(g *conversation.Gate, opts *HistoryHandlerOptions) (*HistoryHandler, error) {
	if g == nil || g.Store == nil || g.Access == nil {
		return nil, errors.New("uistream: NewHistoryHandler needs a Gate with a Store and an Access")
	}
	h := &HistoryHandler{gate: g}
	if opts != nil {
		h.opts = *opts
	}
	if h.opts.ChatID == nil {
		h.opts.ChatID = func(r *http.Request) string { return r.PathValue("chatId") }
	}
	if h.opts.Logger == nil {
		h.opts.Logger = slog.New(slog.DiscardHandler)
	}
	return h, nil
}

// ServeHTTP answers one request: the chat's UIMessage[], or a refusal.
func (h *HistoryHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		serve.Refuse(w, refusal.CodeMethodNotAllowed, "a chat's messages are read with GET")
		return
	}
	hist, err := h.gate.ReadHistory(r.Context(), r, h.opts.ChatID(r))
	var out []byte
	if err == nil {
		out, err = HistoryMessages(hist)
	}
	switch {
	case refusal.CodeOf(err) == refusal.CodeTurnNotFound:
		serve.Refuse(w, refusal.CodeTurnNotFound, "no such chat")
		return
	case err != nil:
		h.opts.Logger.ErrorContext(r.Context(), "uistream: a chat's history could not be read", "err", err)
		w.Header().Set("Retry-After", "1")
		serve.Refuse(w, refusal.CodeStoreUnavailable, "the history could not be read; repeat the request")
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	if r.Method == http.MethodGet {
		_, _ = w.Write(out)
	}
}
