package uistream

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"slices"

	"github.com/go-json-experiment/json/jsontext"

	chatprotocol "github.com/Papercusp/chat-protocol-go"
	"github.com/Papercusp/chat-protocol-go/cards"
	"github.com/Papercusp/chat-protocol-go/interactions"
	"github.com/Papercusp/chat-protocol-go/internal/bridge"
	"github.com/Papercusp/chat-protocol-go/internal/reqbody"
	"github.com/Papercusp/chat-protocol-go/refusal"
	"github.com/Papercusp/chat-protocol-go/replay"
	"github.com/Papercusp/chat-protocol-go/serve"
)

// HeaderName and HeaderValue are the header every stream of the bridge
// carries, by which the ai package's transports recognise the protocol.
const (
	HeaderName  = "x-vercel-ai-ui-message-stream"
	HeaderValue = "v1"
)

// Request is a POST's body as DefaultChatTransport sends it
// (docs/contract.md section 18.1).
type Request struct {
	// ChatID is the body's id, the chat; the bridge takes it for the
	// conversation id of the chat's cards.
	ChatID string
	// Trigger is submit-message or regenerate-message.
	Trigger string
	// MessageID is the optional messageId: the message to replace or
	// regenerate.
	MessageID string
	// Messages is the messages array as sent: the client's history, which
	// grants nothing (section 13.2); [message] for a body that carried its
	// last message only, as {id, message}.
	Messages json.RawMessage
	// Answer is the card answer the body carried under "answer", already
	// landed through the Resolver; nil when it carried none.
	Answer *Answer
	// Body is the whole body, for members a host's transport adds.
	Body json.RawMessage
	// Continues is the id of the assistant message the POST continues:
	// the last of Messages when it is an assistant message and the trigger
	// submit-message, "" otherwise. Under [CardsInPlace] and [CardsTools]
	// the stream's start chunk names it instead of the turn's message id.
	Continues string
	// ToolAnswers are, under [CardsTools], the card answers of the tool
	// parts of the last assistant message in Messages (approval responses,
	// tool outputs), landed through the Resolver; nil when none.
	ToolAnswers []Answer

	replies []cardReply // the card replies ToolAnswers lands
	user    bool        // the last message is a user message
}

// repeatOnly reports whether req answers cards, every answer a repeat of
// one stored before, and brings no user message: it starts no turn
// (docs/contract.md section 18.1).
func (req *Request) repeatOnly() bool {
	if req.user || (req.Answer == nil && len(req.ToolAnswers) == 0) {
		return false
	}
	if req.Answer != nil && !req.Answer.Repeated {
		return false
	}
	for _, a := range req.ToolAnswers {
		if !a.Repeated {
			return false
		}
	}
	return true
}

// Answer is a card answer a POST carried, as the Resolver stored it.
type Answer struct {
	// SubmissionID is the body's answer.submissionId, the idempotency key
	// of the submission.
	SubmissionID string
	// Response is the answer.response, read with
	// [chatprotocol.ParseCardResponse].
	Response cards.CardResponse
	// Result is the Resolver's, also for a repeated submission
	// ([refusal.ErrDuplicateAnswer]: the record stored before).
	Result interactions.Result
	// Repeated is true when this very submission was stored before
	// ([refusal.ErrDuplicateAnswer]): a POST of repeats only starts no turn.
	Repeated bool
}

// HandlerOptions configures a Handler. StartTurn and ActiveTurn are
// required.
type HandlerOptions struct {
	// StartTurn starts the turn a POST asks for, with the caller the host
	// reads from r, and returns its key; the stream then serves the turn
	// from its first frame ([StartTurnOf] returns the turn of a user
	// message sent again). It refuses with an error of code turn-not-found
	// or unauthorized (answered 404 turn-not-found alike), invalid-input
	// (400), turn-running (409), or any other error (503).
	StartTurn func(ctx context.Context, r *http.Request, req *Request) (replay.Key, error)
	// ActiveTurn returns the chat's running turn for a resume or a stop;
	// ok false when it has none. A denial (turn-not-found, unauthorized)
	// is answered as a chat without a running turn.
	ActiveTurn func(ctx context.Context, r *http.Request, chatID string) (key replay.Key, ok bool, err error)
	// Cancel cancels key's turn for a stop (sections 13.1 and 18.1): POST
	// {api}/{chatId}/stop, the request of the ai documentation's recipe
	// for stopping a resumable stream, or DELETE {api}/{chatId}/stream;
	// never for a client that goes away, which resumes. turn's
	// CancelHandler.Cancel, the cancel endpoint's own, is such a hook. A
	// denial (turn-not-found, unauthorized) or a turn no longer running
	// (turn-not-running) is answered as nothing to stop. nil refuses stops
	// with 405.
	Cancel func(ctx context.Context, r *http.Request, key replay.Key) error
	// Resolver and Caller land a POST's card answer: the caller from the
	// host's session, never from the body. Nil refuses answers (400). When
	// set, Caller is asked first for every POST, before its body is read:
	// an error is answered 401 unauthenticated (section 18.3).
	Resolver *interactions.Resolver
	Caller   func(r *http.Request) (interactions.Caller, error)
	// MessageID is the assistant message id of a turn's start chunk; nil
	// means the turn id.
	MessageID func(key replay.Key) string
	// Cards is how cards go out and their answers come back: [CardsData]
	// (the zero value), [CardsInPlace] or [CardsTools] (section 18.1).
	Cards CardMode
	// FinishReason adds finishReason to the finish chunk, which ai 5.0.0's
	// strict schema refuses: the turn's stop reason (its lifecycle's, else
	// its last step's) mapped to the values of ai ("stop", "length",
	// "tool-calls", "content-filter", "other"; section 18.1).
	FinishReason bool
	// Registry names the registered events the host's turns carry
	// (docs/contract.md section 6.5): with [chatprotocol.WithReasoning]
	// the bridge streams reasoning as reasoning parts, with
	// [chatprotocol.WithSources] sources as source-url parts. nil: none.
	// Its product types are passed over, as without it.
	Registry *chatprotocol.Registry
	// BodyLimits bound a POST's body.
	serve.BodyLimits
	// Options are the serving options every stream of the module shares
	// ([serve.Options]); a heartbeat is an SSE comment and Retry is only
	// the Retry-After of a 503 (the protocol has no retry line).
	serve.Options
}

// Handler serves turns of a replay window as AI SDK UI message streams
// (docs/contract.md section 18.1): POST {api} starts a turn through
// [HandlerOptions.StartTurn] and streams it, GET {api}/{chatId}/stream resumes the
// chat's running turn from its first chunk (204 when none), POST
// {api}/{chatId}/stop and DELETE {api}/{chatId}/stream cancel it
// ([Handler.ServeStop]). Mount it with Register. Every stream's
// chunks are transcoded once per frame for all its readers. Safe for
// concurrent use; make one with [NewHandler].
type Handler struct {
	engine *serve.Engine
	opts   HandlerOptions
	header http.Header // the protocol's header on every stream
}

// NewHandler returns a Handler serving turns from window. It fails when
// window, opts, StartTurn or ActiveTurn is nil, or only one of Resolver
// and Caller is set.
func NewHandler(window replay.Window, opts *HandlerOptions) (*Handler, error) {
	switch {
	case opts == nil || opts.StartTurn == nil || opts.ActiveTurn == nil:
		return nil, errors.New("uistream: NewHandler needs HandlerOptions.StartTurn and HandlerOptions.ActiveTurn")
	case (opts.Resolver == nil) != (opts.Caller == nil):
		return nil, errors.New("uistream: HandlerOptions.Resolver and HandlerOptions.Caller go together")
	}
	engine, err := serve.NewEngine(window, &opts.Options)
	if err != nil {
		return nil, err
	}
	h := &Handler{engine: engine, opts: *opts, header: http.Header{HeaderName: {HeaderValue}}}
	if h.opts.MessageID == nil {
		h.opts.MessageID = func(key replay.Key) string { return key.TurnID }
	}
	return h, nil
}

// Register mounts the Handler's endpoints on mux under api (such as
// "/api/chat"): POST api, GET (and HEAD) and DELETE api/{chatId}/stream,
// POST api/{chatId}/stop. Its patterns carry no method, so that every
// other method gets the JSON 405 of docs/contract.md section 12.5
// (method-not-allowed with Allow) rather than [http.ServeMux]'s plain
// text.
func (h *Handler) Register(mux *http.ServeMux, api string) {
	mux.HandleFunc(api, h.ServeStart)
	mux.HandleFunc(api+"/{chatId}/stream", h.serveStream)
	mux.HandleFunc(api+"/{chatId}/stop", h.ServeStop)
}

// serveStream answers api/{chatId}/stream: a resume or a stop, by method.
func (h *Handler) serveStream(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodDelete && h.opts.Cancel != nil {
		h.ServeStop(w, r)
		return
	}
	h.ServeResume(w, r) // its 405 names the methods of the stream
}

// methodOK reports whether r's method is one of allowed, or answers the
// JSON 405 with Allow (the methods of api/{chatId}/stream for stream).
func (h *Handler) methodOK(w http.ResponseWriter, r *http.Request, stream bool, allowed ...string) bool {
	if slices.Contains(allowed, r.Method) {
		return true
	}
	allow, message := "POST", "a turn is started with POST"
	if stream {
		allow, message = "GET, HEAD, DELETE", "a chat's turn is resumed with GET and stopped with DELETE"
		if h.opts.Cancel == nil {
			allow, message = "GET, HEAD", "a chat's turn is resumed with GET; it cannot be stopped here"
		}
	}
	w.Header().Set("Allow", allow)
	serve.Refuse(w, refusal.CodeMethodNotAllowed, message)
	return false
}

// Close aborts every stream being served, so that clients resume
// elsewhere, and answers later requests 503; register it with
// [http.Server.RegisterOnShutdown].
func (h *Handler) Close() { h.engine.Close() }

// Shutdown calls Close and waits until every stream has ended or ctx ends.
func (h *Handler) Shutdown(ctx context.Context) error { return h.engine.Shutdown(ctx) }

// ServeStart answers POST {api}: it reads the body, lands a card answer it
// carries, starts the turn and streams it; another method gets the JSON
// 405. See section 18.3 for the refusals.
func (h *Handler) ServeStart(w http.ResponseWriter, r *http.Request) {
	if !h.methodOK(w, r, false, http.MethodPost) {
		return
	}
	a := bridge.Answers{Resolver: h.opts.Resolver, Caller: h.opts.Caller}
	parse := func(body []byte) (*Request, error) { return parseRequest(body, h.opts.Cards == CardsTools) }
	key, req, ok := bridge.Start(h.engine, w, r, h.opts.BodyLimits, a.Authenticate, parse,
		func(req *Request) bool { return h.land(w, r, &a, req) },
		func(ctx context.Context, req *Request) (replay.Key, error) { return h.opts.StartTurn(ctx, r, req) })
	if ok {
		h.serve(w, r, key, false, req)
	}
}

// land lands the card answers req carries, the answer member's and the
// tool parts', or answers the request and reports false: with a refusal,
// or, when every answer is a repeat and no user message comes with them,
// with the stream that closes their cards and starts no turn.
func (h *Handler) land(w http.ResponseWriter, r *http.Request, a *bridge.Answers, req *Request) bool {
	if req.Answer != nil && !h.answer(w, r, a, req) {
		return false
	}
	if len(req.replies) > 0 && !h.landReplies(w, r, a, req, req.replies) {
		return false
	}
	if !req.repeatOnly() {
		return true
	}
	h.writeRepeat(w, r, req)
	return false
}

// ServeResume answers GET (or HEAD) {api}/{chatId}/stream: the chat's
// running turn from its first chunk, or 204 (no running turn, an unknown
// chat, a caller without rights, an ended turn); another method gets the
// JSON 405.
func (h *Handler) ServeResume(w http.ResponseWriter, r *http.Request) {
	if !h.methodOK(w, r, true, http.MethodGet, http.MethodHead) {
		return
	}
	if key, ok := h.active(w, r, noContent); ok {
		h.serve(w, r, key, true, nil)
	}
}

// ServeStop answers a stop of the request's chat ({chatId}) and cancels
// its running turn through [HandlerOptions.Cancel] (docs/contract.md
// section 18.1). POST {api}/{chatId}/stop is the request of the ai
// documentation's recipe for stopping a resumable stream: sent as
// application/json (or without a body and with X-Requested-With, as the
// cancel endpoint takes it), its body empty or {"activeStreamId"?,
// "assistantMessage"?}, read strictly; an activeStreamId other than the
// running turn's id is a stale stop, which stops nothing; the assistant
// message is passed over (the turn's frames are its record). It answers
// 200 {"success":true}, also when there was nothing to stop. DELETE
// answers 204 so. Refusals: 415 for what a cross-site page could send (a
// POST without Content-Type and without X-Requested-With included), 413
// and 400 for the body, 503 when the hooks fail, and 405 for another
// method, or for any without Cancel.
func (h *Handler) ServeStop(w http.ResponseWriter, r *http.Request) {
	if h.opts.Cancel == nil || (r.Method != http.MethodPost && r.Method != http.MethodDelete) {
		allow, message := "POST, DELETE", "a chat's turn is stopped with POST"
		if h.opts.Cancel == nil {
			allow, message = "", "a chat's turn cannot be stopped here"
		}
		w.Header().Set("Allow", allow)
		serve.Refuse(w, refusal.CodeMethodNotAllowed, message)
		return
	}
	done, stale := noContent, ""
	if r.Method == http.MethodPost {
		done = stopped
		if !reqbody.SameSite(r.Header, reqbody.RequestedWith) {
			serve.Refuse(w, refusal.CodeUnsupportedMediaType, "a stop is sent as application/json, or without a body and with X-Requested-With")
			return
		}
		body, err := reqbody.Read(w, r, reqbody.Limits{MaxBytes: h.opts.MaxBodyBytes, Timeout: h.opts.BodyTimeout})
		if err != nil {
			bridge.RefuseBody(w, err)
			return
		}
		if stale, err = parseStop(body); err != nil {
			serve.Refuse(w, refusal.CodeInvalidInput, err.Error())
			return
		}
	}
	key, ok := h.active(w, r, done)
	if !ok {
		return
	}
	if stale != "" && stale != key.TurnID {
		done(w) // a stop of an earlier stream: a newer turn runs
		return
	}
	ctx, cancel := h.engine.Bounded(r.Context())
	err := h.opts.Cancel(ctx, r, key)
	cancel()
	if err != nil && !bridge.Denied(err) && refusal.CodeOf(err) != refusal.CodeTurnNotRunning {
		bridge.RefuseHook(h.engine, w, r, "Cancel", err)
		return
	}
	done(w)
}

// noContent answers 204: a resume or a DELETE with nothing to answer.
func noContent(w http.ResponseWriter) { w.WriteHeader(http.StatusNoContent) }

// stopped answers a POST stop as the recipe's endpoint does: 200
// {"success":true}.
func stopped(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write([]byte(`{"success":true}` + "\n"))
}

// parseStop reads a POST stop's body strictly (reqbody.Unmarshal): empty,
// or {"activeStreamId"?: string|null, "assistantMessage"?: object} and any
// other member; it returns the activeStreamId, "" when absent or null.
func parseStop(body []byte) (string, error) {
	if len(bytes.TrimSpace(body)) == 0 {
		return "", nil
	}
	var in struct {
		ActiveStreamID   *string        `json:"activeStreamId"`
		AssistantMessage jsontext.Value `json:"assistantMessage"`
	}
	if err := reqbody.Unmarshal(body, &in); err != nil {
		return "", errors.New("the body is not the stop request's JSON object")
	}
	if m := in.AssistantMessage; len(m) > 0 && m[0] != '{' && string(m) != "null" {
		return "", errors.New("the body's assistantMessage is not a message object")
	}
	if in.ActiveStreamID == nil {
		return "", nil
	}
	return *in.ActiveStreamID, nil
}

// active returns the running turn of the request's chat, or answers the
// request (none when it has none, 503) and reports false.
func (h *Handler) active(w http.ResponseWriter, r *http.Request, none func(http.ResponseWriter)) (replay.Key, bool) {
	if h.engine.Closed() {
		h.engine.Unavailable(w, "the server is shutting down; retry later")
		return replay.Key{}, false
	}
	chatID := r.PathValue("chatId")
	if !bridge.ValidID(chatID) {
		none(w) // no chat can have that id
		return replay.Key{}, false
	}
	ctx, cancel := h.engine.Bounded(r.Context())
	key, ok, err := h.opts.ActiveTurn(ctx, r, chatID)
	cancel()
	switch {
	case err != nil && !bridge.Denied(err):
		bridge.RefuseHook(h.engine, w, r, "ActiveTurn", err)
		return replay.Key{}, false
	case err != nil || !ok:
		none(w) // a denial looks like no running turn
		return replay.Key{}, false
	}
	return key, true
}

// serve streams key's turn from its first chunk, for req's POST (nil for
// a resume): under its start, the chunks that close the cards req
// answered in the client's message (closing).
func (h *Handler) serve(w http.ResponseWriter, r *http.Request, key replay.Key, resume bool, req *Request) {
	id := h.continues(req)
	if id == "" {
		id = h.opts.MessageID(key)
	}
	prologue := bridge.End(bridge.Str(bridge.Begin(nil, "start"), "messageId", id))
	h.engine.Serve(w, r, &serve.Stream{
		Key:      key,
		Resume:   resume,
		NewCodec: h.newCodec,
		Header:   h.header,
		Prologue: h.closing(r, prologue, req, true),
		Epilogue: []byte(doneChunk),
	})
}

// continues is the id of the message req's stream continues: req's
// Continues under CardsInPlace and CardsTools, "" otherwise.
func (h *Handler) continues(req *Request) string {
	if req == nil || h.opts.Cards == CardsData {
		return ""
	}
	return req.Continues
}

// doneChunk is the chunk that ends every stream.
const doneChunk = "data: [DONE]\n\n"

// newCodec returns the Codec of one turn's stream.
func (h *Handler) newCodec() serve.Codec {
	c := newCodec(h.opts.FinishReason, h.opts.Cards)
	c.registered(h.opts.Registry)
	return c
}

// answer lands req.Answer through a, or answers the request and reports
// false.
func (h *Handler) answer(w http.ResponseWriter, r *http.Request, a *bridge.Answers, req *Request) bool {
	keys := []interactions.Key{{Conversation: req.ChatID, CorrelationID: req.Answer.Response.CorrelationID}}
	subs := []interactions.Submission{{ID: req.Answer.SubmissionID, Response: req.Answer.Response}}
	res, ok := bridge.Land(h.engine, w, r, a, keys, subs)
	if ok {
		req.Answer.Result, req.Answer.Repeated = res[0], repeated(res[0])
	}
	return ok
}

// parseRequest reads a POST's body strictly (reqbody.Unmarshal): {id,
// messages, trigger, messageId?, answer?: {submissionId, response}} and
// any other member, or, from a client that sends its last message only
// (the ai package's prepareSendMessagesRequest), {id, message, trigger?}
// read as messages [message], trigger submit-message by default; with
// replies, also the card replies of the messages' tool parts
// (readMessages).
func parseRequest(body []byte, replies bool) (*Request, error) {
	var in struct {
		ID        *string        `json:"id"`
		Messages  jsontext.Value `json:"messages"`
		Message   jsontext.Value `json:"message"`
		Trigger   string         `json:"trigger"`
		MessageID string         `json:"messageId"`
		Answer    *struct {
			SubmissionID string         `json:"submissionId"`
			Response     jsontext.Value `json:"response"`
		} `json:"answer"`
	}
	if err := reqbody.Unmarshal(body, &in); err != nil {
		return nil, errors.New("the body is not the chat request's JSON object")
	}
	if len(in.Message) > 0 {
		if len(in.Messages) > 0 || in.Message[0] != '{' {
			return nil, errors.New("the body's message is not one message object, or comes with messages")
		}
		in.Messages = jsontext.Value("[" + string(in.Message) + "]")
		if in.Trigger == "" {
			in.Trigger = "submit-message"
		}
	}
	switch {
	case in.ID == nil || !bridge.ValidID(*in.ID):
		return nil, errors.New("the body's id is missing or not a chat id")
	case len(in.Messages) == 0 || in.Messages[0] != '[':
		return nil, errors.New("the body's messages is not an array")
	case in.Trigger != "submit-message" && in.Trigger != "regenerate-message":
		return nil, errors.New("the body's trigger is neither submit-message nor regenerate-message")
	}
	req := &Request{ChatID: *in.ID, Trigger: in.Trigger, MessageID: in.MessageID, Messages: json.RawMessage(in.Messages), Body: body}
	continues, user, rs, err := readMessages(in.Messages, replies)
	if err != nil {
		return nil, err
	}
	req.user, req.replies = user, rs
	if in.Trigger == "submit-message" {
		req.Continues = continues
	}
	if in.Answer != nil {
		resp, err := chatprotocol.ParseCardResponse(in.Answer.Response)
		if err != nil || !bridge.ValidID(in.Answer.SubmissionID) {
			return nil, errors.New("the body's answer is not {submissionId, response} with a card response")
		}
		req.Answer = &Answer{SubmissionID: in.Answer.SubmissionID, Response: resp}
	}
	return req, nil
}
