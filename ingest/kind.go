package ingest

import "fmt"

// Kind names a provider stream format (docs/contract.md section 17).
type Kind string

// The three provider streams.
const (
	// OpenAIChat is the OpenAI Chat Completions stream: chat.completion.chunk
	// objects, one per data line, ended by the DONE sentinel data line.
	OpenAIChat Kind = "openai-chat"
	// OpenAIResponses is the OpenAI Responses stream: response.* events.
	OpenAIResponses Kind = "openai-responses"
	// AnthropicMessages is the Anthropic Messages stream: message_start,
	// content_block_* … message_stop.
	AnthropicMessages Kind = "anthropic-messages"
)

// Kinds returns the three kinds in the order of docs/contract.md section 17;
// the slice is new on each call.
func Kinds() []Kind { return []Kind{OpenAIChat, OpenAIResponses, AnthropicMessages} }

// ParseKind returns the Kind named s, or an error naming the three.
func ParseKind(s string) (Kind, error) {
	for _, k := range Kinds() {
		if string(k) == s {
			return k, nil
		}
	}
	return "", fmt.Errorf("ingest: unknown provider stream %q (want openai-chat, openai-responses or anthropic-messages)", s)
}

// provider is the default provider name of k.
func (k Kind) provider() string {
	if k == AnthropicMessages {
		return "anthropic"
	}
	return "openai"
}
