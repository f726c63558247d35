package openaisdk

import (
	"context"

	"github.com/openai/openai-go/v3"

	"github.com/Papercusp/chat-protocol-go/agent"
	"github.com/Papercusp/chat-protocol-go/ingest"
	"github.com/Papercusp/chat-protocol-go/internal/modelstep"
)

// ChatModel is an [agent.Model] on the Chat Completions API of the official
// SDK (docs/contract.md section 19.3): each step sends [ChatParams] of the
// request with Params as base, streams the answer with
// client.Chat.Completions.NewStreaming and reads it with [ReadChat] into
// the step's sink. Its replies carry no reasoning, since Chat Completions
// takes none back. Step returns an error only when the sink returned one
// (that error) or ctx ended; a provider's failure is the sink's Fail.
type ChatModel struct {
	// Client is the SDK's client: its base URL, key, retries.
	Client *openai.Client
	// Params holds the model and the settings of every request; its
	// StreamOptions.IncludeUsage, when unset, is set (the step's usage).
	Params openai.ChatCompletionNewParams
	// Options are the reader's; nil means the defaults. Their
	// RequestModel defaults to Params.Model.
	Options *Options[openai.ChatCompletionChunk]
}

// Step streams one step of req into sink.
func (m *ChatModel) Step(ctx context.Context, req *agent.Request, sink ingest.Sink) (agent.Reply, error) {
	params := ChatParams(req, m.Params)
	if !params.StreamOptions.IncludeUsage.Valid() {
		params.StreamOptions.IncludeUsage = openai.Bool(true)
	}
	opts := readerOptions(m.Options, params.Model)
	guard := modelstep.Guard(sink)
	stream := m.Client.Chat.Completions.NewStreaming(ctx, params)
	err := ReadChat(ctx, stream, guard, opts)
	stream.Close()
	return agent.Reply{}, guard.Result(ctx, err)
}

// readerOptions is a copy of opts (nil: the defaults) with RequestModel
// model when unset.
func readerOptions[T any](opts *Options[T], model string) *Options[T] {
	var o Options[T]
	if opts != nil {
		o = *opts
	}
	if o.RequestModel == "" {
		o.RequestModel = model
	}
	return &o
}
