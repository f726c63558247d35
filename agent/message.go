package agent

import "encoding/json"

// Role says who a [Message] is from (docs/contract.md section 19.1).
type Role string

// The three roles of a conversation.
const (
	// RoleUser is a person's message: its Text.
	RoleUser Role = "user"
	// RoleAssistant is one model step: its Text, the Calls it asked for,
	// and the Reasoning its provider needs back.
	RoleAssistant Role = "assistant"
	// RoleTool carries the Results of the calls of the assistant message
	// before it, one per call, in the calls' order.
	RoleTool Role = "tool"
)

// Message is one message of a conversation as a model reads it
// (docs/contract.md section 19.1): a user's text, one model step, or the
// results of that step's tool calls. Members a role does not use are zero.
type Message struct {
	Role Role
	// Text is a user's text or a step's text (its deltas joined).
	Text string
	// Calls are the tool calls an assistant step asked for, in order.
	Calls []Call
	// Results answer the calls of the assistant message before a tool
	// message, one per call, in the same order.
	Results []Result
	// Reasoning is what an assistant step's provider needs back on the
	// next request (signed thinking, reasoning items); it never reaches
	// the stream's text.
	Reasoning []Reasoning
}

// Call is a tool call a model asked for: the provider's call id, the tool's
// name and its JSON input (nil: none).
type Call struct {
	ID    string
	Name  string
	Input json.RawMessage
}

// Result is a tool call's outcome as the model reads it: the call's id and
// the tool's name, its JSON output (nil: none), and IsError when the tool
// failed or was refused (an unknown tool, a declined approval), Output then
// saying why.
type Result struct {
	CallID  string
	Name    string
	Output  json.RawMessage
	IsError bool
}

// Reasoning is one piece of a step's reasoning as its provider sent it, kept
// to be passed back on the next request where the provider's API requires
// it (docs/contract.md section 19.3). Which members are set depends on the
// provider: Text and Signature for an Anthropic thinking block, Redacted
// for a redacted one, Item (the output item, exactly as received) for an
// OpenAI Responses reasoning item.
type Reasoning struct {
	Text      string
	Signature string
	Redacted  string
	Item      json.RawMessage
}
