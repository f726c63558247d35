package httpmodel

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/Papercusp/chat-protocol-go/agent"
	"github.com/Papercusp/chat-protocol-go/ingest"
)

// DefaultMaxTokens is the output token limit of a step when
// [Options.MaxTokens] is 0; Anthropic requires one on every request.
const DefaultMaxTokens = 4096

// maxErrorBody bounds what Step reads of a provider's error answer, in bytes.
const maxErrorBody = 64 << 10

// Options configures a [Model].
type Options struct {
	// BaseURL is the API's root, without the version path:
	// "https://api.openai.com" or "https://api.anthropic.com" (or a
	// loopback server's URL). Required.
	BaseURL string
	// APIKey is sent as the provider expects it: Authorization Bearer
	// for OpenAI, x-api-key for Anthropic. "" sends none.
	APIKey string
	// Model is the model asked for. Required.
	Model string
	// MaxTokens is the output token limit of one step: 0 means
	// [DefaultMaxTokens] for Anthropic and no limit sent for OpenAI.
	MaxTokens int
	// Client sends the requests; nil means [http.DefaultClient].
	Client *http.Client
	// Header, when set, adds its values to every request (an
	// organization, a beta flag).
	Header http.Header
	// Read configures the reading of each step's stream; nil means the
	// defaults. Its RequestModel is set to Model.
	Read *ingest.Options
}

// Model is an [agent.Model] over one provider's HTTP API. It is safe for
// concurrent use; make one with [New].
type Model struct {
	kind ingest.Kind
	opts Options
	url  string
}

// New returns the Model of kind with opts. It fails for a kind that is
// not one of [ingest.Kinds], and without a BaseURL or a Model.
func New(kind ingest.Kind, opts *Options) (*Model, error) {
	if opts == nil || opts.BaseURL == "" || opts.Model == "" {
		return nil, errors.New("httpmodel: BaseURL and Model are required")
	}
	path, ok := paths[kind]
	if !ok {
		return nil, fmt.Errorf("httpmodel: unknown kind %q", kind)
	}
	m := &Model{kind: kind, opts: *opts, url: strings.TrimSuffix(opts.BaseURL, "/") + path}
	if m.opts.Client == nil {
		m.opts.Client = http.DefaultClient
	}
	return m, nil
}

// paths are the streaming endpoints of each kind, under BaseURL.
var paths = map[ingest.Kind]string{
	ingest.OpenAIChat:        "/v1/chat/completions",
	ingest.OpenAIResponses:   "/v1/responses",
	ingest.AnthropicMessages: "/v1/messages",
}

// Body returns the JSON request body of one step of req for kind and
// model: what [Model.Step] posts (docs/contract.md section 19.3). maxTokens
// 0 means [DefaultMaxTokens] for Anthropic and none for OpenAI.
func Body(kind ingest.Kind, model string, maxTokens int, req *agent.Request) ([]byte, error) {
	switch kind {
	case ingest.OpenAIChat:
		return chatBody(model, maxTokens, req)
	case ingest.OpenAIResponses:
		return responsesBody(model, maxTokens, req)
	case ingest.AnthropicMessages:
		if maxTokens == 0 {
			maxTokens = DefaultMaxTokens
		}
		return anthropicBody(model, maxTokens, req)
	}
	return nil, fmt.Errorf("httpmodel: unknown kind %q", kind)
}

// Step posts req's step and drives sink with the streamed answer
// ([agent.Model]). An HTTP error status fails the step through the provider's
// error mapping ([ingest.Mapper.ProviderError]); a transport error is a cut
// stream. It returns an error only for sink's, ctx's and a request it
// could not write.
func (m *Model) Step(ctx context.Context, req *agent.Request, sink ingest.Sink) (agent.Reply, error) {
	body, err := Body(m.kind, m.opts.Model, m.opts.MaxTokens, req)
	if err != nil {
		return agent.Reply{}, err
	}
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, m.url, bytes.NewReader(body))
	if err != nil {
		return agent.Reply{}, err
	}
	m.header(hreq.Header)
	ropts := ingest.Options{}
	if m.opts.Read != nil {
		ropts = *m.opts.Read
	}
	ropts.RequestModel = m.opts.Model
	resp, err := m.opts.Client.Do(hreq)
	if err != nil {
		if ctx.Err() != nil {
			return agent.Reply{}, ctx.Err()
		}
		mp, merr := ingest.NewMapper(m.kind, sink, &ropts)
		if merr != nil {
			return agent.Reply{}, merr
		}
		if err := mp.End(ctx, err); err != nil {
			return agent.Reply{}, err
		}
		return agent.Reply{}, nil
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
		mp, err := ingest.NewMapper(m.kind, sink, &ropts)
		if err != nil {
			return agent.Reply{}, err
		}
		return agent.Reply{}, mp.ProviderError(ctx, resp.StatusCode, msg)
	}
	err = ingest.Read(ctx, m.kind, resp.Body, sink, &ropts)
	if errors.Is(err, ingest.ErrCut) {
		err = nil // the step failed with provider-stream-cut; the sink has it
	}
	return agent.Reply{}, err
}

// header sets the provider's authentication, content and version headers.
func (m *Model) header(h http.Header) {
	h.Set("Content-Type", "application/json")
	h.Set("Accept", "text/event-stream")
	switch m.kind {
	case ingest.AnthropicMessages:
		h.Set("anthropic-version", "2023-06-01")
		if m.opts.APIKey != "" {
			h.Set("x-api-key", m.opts.APIKey)
		}
	default:
		if m.opts.APIKey != "" {
			h.Set("Authorization", "Bearer "+m.opts.APIKey)
		}
	}
	for k, vs := range m.opts.Header {
		for _, v := range vs {
			h.Add(k, v)
		}
	}
}
