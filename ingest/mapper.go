package ingest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	neturl "net/url"
	"unicode/utf8"
	"unsafe"

	chatprotocol "github.com/Papercusp/chat-protocol-go"
	"github.com/Papercusp/chat-protocol-go/observe"
	"github.com/Papercusp/chat-protocol-go/refusal"
)

// maxInputDepth is the deepest tool input an envelope holds: the envelope
// and its event take two of the 64 levels of docs/contract.md section 5.2.
const maxInputDepth = chatprotocol.DefaultMaxDepth - 2

// Mapper maps one provider stream onto a Sink, one provider event at a time
// (docs/contract.md section 17). Read drives one over a raw body; the SDK
// bindings drive one with the raw JSON of the SDK's events, so both map a
// stream the same way. A Mapper is for one turn and is not safe for
// concurrent use; make one with [NewMapper].
type Mapper struct {
	kind Kind
	sink Sink
	opts Options
	p    views

	provider          string
	model, responseID string
	provenanced       bool
	emitted           bool // a delta or a tool call reached the sink
	done              bool
	tokens            tokens

	calls    calls           // the turn's tool calls (see calls.go)
	held     *toolCall       // Anthropic: a tool_use block ended with input not whole, until the stop reason
	refusal  []byte          // the refusal the model streamed
	over     *refusal.Error  // a buffer passed Options.MaxBufferedBytes (see buffer.go)
	filtered bool            // the provider's content filter stopped the answer
	reason   string          // the provider's stop reason
	finished bool            // Chat: choice 0's finish reason came
	sources  map[string]bool // the URLs sent as sources
}

// NewMapper returns the Mapper of one turn's stream of kind, driving sink.
// opts may be nil. It fails only for a kind that is not one of Kinds.
func NewMapper(kind Kind, sink Sink, opts *Options) (*Mapper, error) {
	if _, err := ParseKind(string(kind)); err != nil {
		return nil, err
	}
	m := &Mapper{kind: kind, sink: sink, tokens: noTokens}
	if opts != nil {
		m.opts = *opts
	}
	m.provider = m.opts.Provider
	if m.provider == "" {
		m.provider = kind.provider()
	}
	return m, nil
}

// Done reports whether the turn has ended: the Sink got Complete or Fail.
// Events after that are ignored.
func (m *Mapper) Done() bool { return m.done }

// Emitted reports whether a delta or a tool call reached the Sink, after
// which no failure of the turn is retryable (see Retryable).
func (m *Mapper) Emitted() bool { return m.emitted }

// Event maps one event of the stream: data is the data of one SSE frame
// (a JSON object, or DONE sentinel in a Chat stream), which Event reads and does
// not keep. A frame that is not the provider's JSON fails the turn with
// [CodeInvalidStream]. It returns the Sink's or the Reasoning hook's
// error, or, after failing the turn with [CodeInvalidStream], the
// [*refusal.Error] of code frame-too-large of a tool call's arguments or a
// refusal text past [Options.MaxBufferedBytes].
func (m *Mapper) Event(ctx context.Context, data []byte) error {
	if m.done || len(bytes.TrimSpace(data)) == 0 {
		return nil
	}
	var err error
	switch m.kind {
	case OpenAIChat:
		err = m.chatEvent(ctx, data)
	case OpenAIResponses:
		err = m.respEvent(ctx, data)
	default:
		err = m.anthEvent(ctx, data)
	}
	if err == nil && !m.done && m.p.err != nil {
		err = m.Malformed(ctx)
	}
	if err == nil && m.over != nil {
		err = m.overflow(ctx)
	}
	return err
}

// Events is an SDK's stream of decoded events, as the official OpenAI and
// Anthropic Go SDKs' ssestream.Stream is: Next advances to the next event,
// which Current returns; each event keeps the JSON it was decoded from.
type Events[E interface{ RawJSON() string }] interface {
	Next() bool
	Current() E
}

// MapEvents maps the events of stream with m, each once onEvent (nil: none)
// has seen it, until the turn or the stream ends; m reads each event's raw
// JSON in place, during the call (see [Mapper.Event]). It returns
// [Mapper.Event]'s error. When the turn has not ended ([Mapper.Done]) the stream did,
// and the caller ends the turn with the error the stream ended with
// ([Mapper.ProviderError] for the SDK's own errors, else [Mapper.EndWith]).
func MapEvents[E interface{ RawJSON() string }](ctx context.Context, m *Mapper, stream Events[E], onEvent func(E)) error {
	for !m.Done() && stream.Next() {
		ev := stream.Current()
		if onEvent != nil {
			onEvent(ev)
		}
		raw := ev.RawJSON()
		if err := m.Event(ctx, unsafe.Slice(unsafe.StringData(raw), len(raw))); err != nil {
			return err
		}
	}
	return nil
}

// Malformed fails the turn with [CodeInvalidStream]: a frame of the stream is
// not the provider's JSON (an SDK reports it as its decoding error). It
// returns only the Sink's error.
func (m *Mapper) Malformed(ctx context.Context) error {
	if m.done {
		return nil
	}
	return m.fail(ctx, CodeInvalidStream, "a frame of the provider's stream is not its JSON")
}

// ProviderError maps an error the transport reported instead of an event:
// an HTTP error status before the stream (status) or an error the SDK
// surfaced from inside it (status 0 or 200), with the provider's error JSON
// (body, nil when there is none) in any of the providers' shapes:
// {"error":{…}}, {"type":"error","error":{…}} or the bare error object.
// The turn fails with the code of docs/contract.md section 17.
func (m *Mapper) ProviderError(ctx context.Context, status int, body []byte) error {
	if m.done {
		return nil
	}
	var typ, code, msg string
	if m.p.openFrame(body) {
		typ, code, msg = m.readError(0)
	}
	m.p.err = nil
	return m.providerFail(ctx, typ, code, msg, status)
}

// End tells the Mapper the stream has ended: cause is nil when it ended
// cleanly between frames, else what cut it (the body ended inside a frame,
// or its reading failed). A turn the provider had not ended fails with
// [CodeStreamCut]. A Chat stream ends at its finish reason (docs/contract.md
// section 17.4): once it came, the turn completes whatever cut what
// follows it (usage, DONE sentinel, which the SDKs hide). End returns only the
// Sink's error.
func (m *Mapper) End(ctx context.Context, cause error) error {
	if m.done {
		return nil
	}
	if m.held != nil {
		if err := m.sendHeld(ctx, false); err != nil || m.done {
			return err
		}
	}
	if m.kind == OpenAIChat && m.finished {
		return m.finish(ctx)
	}
	return m.fail(ctx, CodeStreamCut, msgCut)
}

// EndWith ends the turn at the end of a stream of events an SDK decoded:
// err is the error the stream ended with, once the SDK's own provider
// errors went to ProviderError. A nil err is a clean end (see End); a JSON
// syntax or type error ([json.SyntaxError], [json.UnmarshalTypeError]) says
// a frame was not the provider's JSON and fails the turn as Malformed does;
// any other error cut the stream, and EndWith ends the turn as End does and
// returns err wrapping [ErrCut]. When ctx is done it returns ctx's error
// without ending the turn. Otherwise it returns only the Sink's error.
func (m *Mapper) EndWith(ctx context.Context, err error) error {
	var syntaxErr *json.SyntaxError
	var typeErr *json.UnmarshalTypeError
	switch {
	case err == nil:
		return m.End(ctx, nil)
	case ctx.Err() != nil:
		return ctx.Err()
	case errors.As(err, &syntaxErr), errors.As(err, &typeErr):
		return m.Malformed(ctx)
	}
	return m.cut(ctx, fmt.Errorf("%w: %w", ErrCut, err))
}

// cut ends the turn for a stream cut as err, which wraps ErrCut, says; it
// returns err, or the Sink's error.
func (m *Mapper) cut(ctx context.Context, err error) error {
	if serr := m.End(ctx, err); serr != nil {
		return serr
	}
	return err
}

// msgCut is the message of every cut stream, whatever cut it, so that a
// raw body and an SDK's view of it (which hides DONE sentinel and a cut inside a
// frame) fail alike.
const msgCut = "the provider's stream ended before the provider ended the turn"

// noteProvenance records the model and response id the stream gives (JSON
// strings, as views), keeping the first non-empty ones.
func (m *Mapper) noteProvenance(model, id []byte) {
	if m.model == "" {
		m.model = m.p.str(model)
	}
	if m.responseID == "" {
		m.responseID = m.p.str(id)
	}
}

// provenance sends the turn's provenance once, before anything else.
func (m *Mapper) provenance(ctx context.Context) error {
	if m.provenanced {
		return nil
	}
	m.provenanced = true
	return m.sink.Provenance(ctx, m.provider, m.model, m.responseID)
}

// delta sends text, when it is not empty.
func (m *Mapper) delta(ctx context.Context, text []byte) error {
	if len(text) == 0 {
		return nil
	}
	if err := m.provenance(ctx); err != nil {
		return err
	}
	m.emitted = true
	return m.sink.Delta(ctx, string(text))
}

// reasoning hands text to the Reasoning hook, if any, then, with
// Options.StreamReasoning, to a ReasoningSink (after the provenance): it
// then reached the stream, as a delta does.
func (m *Mapper) reasoning(ctx context.Context, text []byte) error {
	if len(text) == 0 {
		return nil
	}
	if m.opts.Reasoning != nil {
		if err := m.opts.Reasoning(ctx, string(text)); err != nil {
			return err
		}
	}
	rs, ok := m.sink.(ReasoningSink)
	if !m.opts.StreamReasoning || !ok {
		return nil
	}
	if err := m.provenance(ctx); err != nil {
		return err
	}
	m.emitted = true
	return rs.Reasoning(ctx, string(text))
}

// maxSources bounds the distinct pages one response sends as sources;
// past it, further pages are dropped.
const maxSources = 1 << 10

// source sends, with Options.StreamSources, the page url (a JSON string's
// view) titled title to a SourceSink: once per URL of the response, an
// absolute http or https URL only.
func (m *Mapper) source(ctx context.Context, url, title []byte) error {
	ss, ok := m.sink.(SourceSink)
	if !m.opts.StreamSources || !ok {
		return nil
	}
	u := m.p.str(url)
	if !webURL(u) || m.sources[u] || len(m.sources) >= maxSources {
		return nil
	}
	if m.sources == nil {
		m.sources = make(map[string]bool)
	}
	m.sources[u] = true
	if err := m.provenance(ctx); err != nil {
		return err
	}
	m.emitted = true
	return ss.Source(ctx, chatprotocol.WebSource{URL: u, Title: m.p.str(title)})
}

// webURL reports whether u is an absolute http or https URL with a host.
func webURL(u string) bool {
	v, err := neturl.Parse(u)
	return err == nil && (v.Scheme == "https" || v.Scheme == "http") && v.Host != "" && utf8.ValidString(u)
}

// finish ends the turn the provider ended (docs/contract.md section 17):
// failed when its content filter stopped the answer or the model refused,
// else completed with its stop reason, after the tool calls not sent yet;
// failed, returning the refusal, when a buffer passed its bound.
func (m *Mapper) finish(ctx context.Context) error {
	switch {
	case m.over != nil:
		return m.overflow(ctx)
	case m.filtered:
		return m.fail(ctx, CodeContentFilter, "the provider's content filter stopped the answer")
	case len(m.refusal) > 0:
		return m.fail(ctx, CodeRefusal, string(m.refusal))
	}
	if err := m.sendCalls(ctx); err != nil || m.done {
		return err
	}
	return m.complete(ctx, m.reason)
}

// complete ends the turn normally with reason.
func (m *Mapper) complete(ctx context.Context, reason string) error {
	if err := m.end(ctx); err != nil {
		return err
	}
	m.observe(ctx, chatprotocol.LifecycleCompleted)
	return m.sink.Complete(ctx, reason)
}

// fail ends the turn with code, retryable by the rule of Retryable.
func (m *Mapper) fail(ctx context.Context, code chatprotocol.ErrorCode, message string) error {
	if err := m.end(ctx); err != nil {
		return err
	}
	m.observe(ctx, chatprotocol.LifecycleFailed)
	return m.sink.Fail(ctx, code, message, Retryable(code, m.emitted))
}

// end marks the turn done and sends provenance and usage.
func (m *Mapper) end(ctx context.Context) error {
	m.done = true
	if err := m.provenance(ctx); err != nil {
		return err
	}
	if total, ok := m.tokens.total(m.kind); ok {
		return m.sink.Usage(ctx, chatprotocol.Usage{TotalTokens: &total})
	}
	return nil
}

// observe reports the model response to the Observer, if any.
func (m *Mapper) observe(ctx context.Context, status chatprotocol.LifecycleStatus) {
	if m.opts.Observer == nil {
		return
	}
	in, out := m.tokens.inputOutput(m.kind)
	m.opts.Observer.Observe(ctx, observe.Event{
		Kind: observe.ModelResponse, Conversation: m.opts.Conversation, Turn: m.opts.Turn, Status: string(status),
		Provider: m.provider, RequestModel: m.opts.RequestModel, ResponseModel: m.model, ResponseID: m.responseID,
		InputTokens: in, OutputTokens: out,
	})
}

// readError reads the error object open at level l: its type, code and
// message, from a nested "error" object when there is one. A "type" of
// "error" is the event's type, not the error's.
func (m *Mapper) readError(l int) (typ, code, msg string) {
	var nested []byte
	for m.p.more(l) {
		switch string(m.p.name(l)) {
		case "type":
			if v := m.p.value(l); !m.p.is(v, "error") {
				typ = m.p.str(v)
			}
		case "code":
			code = m.p.str(m.p.value(l))
		case "message":
			msg = m.p.str(m.p.value(l))
		case "error":
			nested = m.p.value(l)
		default:
			m.p.skip(l)
		}
	}
	if m.p.open(l+1, nested, '{') {
		t, c, s := m.readError(l + 1)
		if t != "" {
			typ = t
		}
		if c != "" {
			code = c
		}
		if s != "" {
			msg = s
		}
	}
	return typ, code, msg
}

// providerFail fails the turn for a provider error of type typ and code
// (either may be ""), HTTP status (0 when none), with the provider's
// message.
func (m *Mapper) providerFail(ctx context.Context, typ, code, msg string, status int) error {
	c := classify(typ, code, status)
	label := code
	if label == "" {
		label = typ
	}
	switch {
	case label != "" && msg != "":
		msg = label + ": " + msg
	case label != "":
		msg = label
	case msg == "":
		msg = "the provider reported an error"
	}
	return m.fail(ctx, c, msg)
}

// classify gives the code of a provider error: by its code, then its type,
// then the HTTP status (docs/contract.md section 17).
func classify(typ, code string, status int) chatprotocol.ErrorCode {
	for _, s := range [2]string{code, typ} {
		switch s {
		case "overloaded_error", "overloaded", "server_overloaded", "engine_overloaded", "service_unavailable":
			return CodeOverloaded
		case "rate_limit_error", "rate_limit_exceeded", "requests", "tokens":
			return CodeRateLimited
		case "timeout_error", "timeout", "request_timeout":
			return CodeTimeout
		case "api_error", "server_error", "internal_error", "internal_server_error":
			return CodeServerError
		case "insufficient_quota", "invalid_request_error", "authentication_error", "permission_error",
			"not_found_error", "billing_error", "request_too_large", "invalid_api_key", "invalid_prompt",
			"context_length_exceeded":
			return CodeError
		}
	}
	switch status {
	case 408, 504:
		return CodeTimeout
	case 429:
		return CodeRateLimited
	case 500, 502:
		return CodeServerError
	case 503, 529:
		return CodeOverloaded
	}
	return CodeError
}

// tokens are a provider's token counts, -1 when not sent; final once the
// provider sent its final count.
type tokens struct {
	input, output, cacheWrite, cacheRead, sum int64
	final                                     bool
}

var noTokens = tokens{input: -1, output: -1, cacheWrite: -1, cacheRead: -1, sum: -1}

// total is the turn's total (docs/contract.md section 17): the provider's
// total when it sent one, else input plus output; for Anthropic input,
// cache creation, cache read and output. ok is false before the final count.
func (t *tokens) total(k Kind) (int64, bool) {
	if !t.final {
		return 0, false
	}
	if k == AnthropicMessages {
		if t.input < 0 || t.output < 0 {
			return 0, false
		}
		return t.input + max(t.cacheWrite, 0) + max(t.cacheRead, 0) + t.output, true
	}
	if t.sum >= 0 {
		return t.sum, true
	}
	if t.input < 0 || t.output < 0 {
		return 0, false
	}
	return t.input + t.output, true
}

// inputOutput gives the input tokens (cached ones included, as the
// OpenTelemetry GenAI conventions count them) and the output tokens, -1
// for unknown.
func (t *tokens) inputOutput(k Kind) (in, out int64) {
	if !t.final {
		return -1, -1
	}
	in = t.input
	if k == AnthropicMessages && in >= 0 {
		in += max(t.cacheWrite, 0) + max(t.cacheRead, 0)
	}
	return in, t.output
}

// usage names the token counts of a provider's usage object: input,
// output, total, cache creation and cache read, "" for a count the
// provider does not send.
type usage [5]string

// counts reads the usage object open at level l: the members names lists
// are counted into the token counts, each as it comes (see count); other
// members are skipped.
func (m *Mapper) counts(l int, names *usage) {
	p, t := &m.p, &m.tokens
	dst := [...]*int64{&t.input, &t.output, &t.sum, &t.cacheWrite, &t.cacheRead}
	for p.more(l) {
		if i := lookup(names[:], p.name(l)); i >= 0 {
			count(dst[i], p.value(l))
		} else {
			p.skip(l)
		}
	}
}

// response reads obj at level l, a message or response object as
// Anthropic's message_start and the Responses events carry one: its id and
// model name the turn's provenance, and each usage object is counted with
// names, as the provider's final counts when final says so. Any other
// member goes to other, which reads or skips it; nil skips it.
func (m *Mapper) response(l int, obj []byte, names *usage, final bool, other func(name []byte)) {
	p := &m.p
	if !p.open(l, obj, '{') {
		return
	}
	var id, model []byte
	for p.more(l) {
		switch name := p.name(l); string(name) {
		case "id":
			id = p.value(l)
		case "model":
			model = p.value(l)
		case "usage":
			if p.open(l+1, p.value(l), '{') {
				if final {
					m.tokens.final = true
				}
				m.counts(l+1, names)
			}
		default:
			if other == nil {
				p.skip(l)
			} else {
				other(name)
			}
		}
	}
	m.noteProvenance(model, id)
}

// count reads a token count; v absent or null leaves *dst unchanged.
func count(dst *int64, v []byte) {
	if n, ok := integer(v); ok {
		*dst = n
	}
}
